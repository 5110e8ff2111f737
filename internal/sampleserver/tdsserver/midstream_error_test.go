package tdsserver_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// A conversion error part way through a result reaches the client as an
// ERROR (245, as SQL Server sends) after the rows before it, never as a
// silently short result.
func TestMidStreamErrorReported(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	db, err := sql.Open("sqlserver", mssqlDSN(s, testUser, testPassword, map[string]string{"encrypt": "disable"}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT id, CAST(CASE WHEN id < 100 THEN '1' ELSE 'x' END AS int) AS v FROM dbo.poc48")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	err = rows.Err()
	rows.Close()
	if err == nil || !strings.Contains(err.Error(), "Conversion failed") {
		t.Fatalf("after %d rows: err = %v, want the conversion error", n, err)
	}
	if n != 99 {
		t.Fatalf("got %d rows before the error, want 99", n)
	}
}
