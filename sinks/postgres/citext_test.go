package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// Loading into citext columns, and a domain over citext, of a table made
// beforehand: the extension's type has an OID of its own in every
// database (here it lives in a schema outside the search path), and the
// sink writes it as text in binary COPY. Values read back equal; the
// column's case-insensitive unique key refuses a value differing in case.
func TestAppendCitext(t *testing.T) {
	conn, url := pgConn(t)
	ctx := context.Background()
	exec(t, conn, "CREATE SCHEMA IF NOT EXISTS ext")
	exec(t, conn, "CREATE EXTENSION IF NOT EXISTS citext SCHEMA ext")
	var schema string
	if err := conn.QueryRow(ctx, "SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'citext'").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	exec(t, conn, "DROP TABLE IF EXISTS ci_keys; DROP DOMAIN IF EXISTS ci_code")
	exec(t, conn, "CREATE DOMAIN ci_code AS "+schema+".citext CHECK (length(VALUE) <= 8)")
	exec(t, conn, "CREATE TABLE ci_keys (id integer, name "+schema+".citext UNIQUE, code ci_code)")
	cols := []decode.Column{col("id", tiInt), col("name", tiNVar), col("code", decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 8})}
	rows := [][]sinktest.Cell{
		{i64(1), str("abc"), str("X1")},
		{i64(2), str("Ünïcödé ß"), str("y2")},
		{i64(3), str(""), null()},
	}
	if _, err := loadCells(t, newSink(t, url, map[string]any{"table": "ci_keys", "mode": "append"}), sinks.ExtractInfo{Name: "ci"}, cols, rows, 2); err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	r, err := conn.Query(ctx, "SELECT id, name::text || '|' || COALESCE(code::text, 'NULL') FROM ci_keys")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var v string
		if err := r.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		got[id] = v
	}
	if got[1] != "abc|X1" || got[2] != "Ünïcödé ß|y2" || got[3] != "|NULL" || len(got) != 3 {
		t.Errorf("read back %v", got)
	}
	// citext's operators live in its schema: named, as it is not on the path
	if n := count(t, conn, "SELECT count(*) FROM ci_keys WHERE name OPERATOR("+schema+".=) 'ABC' AND code OPERATOR("+schema+".=) 'x1'"); n != 1 {
		t.Errorf("citext comparison: %d rows", n)
	}
	_, err = loadCells(t, newSink(t, url, map[string]any{"table": "ci_keys", "mode": "append"}), sinks.ExtractInfo{Name: "ci"}, cols, [][]sinktest.Cell{{i64(4), str("ABC"), null()}}, 1)
	if err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("'ABC' after 'abc': %v, want a duplicate key", err)
	}
}
