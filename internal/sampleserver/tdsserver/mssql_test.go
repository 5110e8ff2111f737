package tdsserver_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// go-mssqldb (an independent TDS client) against the server.

func mssqlDSN(s *tdsserver.Server, user, password string, params map[string]string) string {
	q := url.Values{}
	q.Set("database", "sample")
	q.Set("dial timeout", "10")
	for k, v := range params {
		q.Set(k, v)
	}
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, password), Host: s.Addr(), RawQuery: q.Encode()}
	return u.String()
}

func openMSSQL(t testing.TB, s *tdsserver.Server, params map[string]string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", mssqlDSN(s, testUser, testPassword, params))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mssqlConn is one connection of an unencrypted go-mssqldb pool to s, for
// tests that must run their next query on the same session.
func mssqlConn(t testing.TB, s *tdsserver.Server) *sql.Conn {
	t.Helper()
	conn, err := openMSSQL(t, s, map[string]string{"encrypt": "disable"}).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func writeCA(t *testing.T, s *tdsserver.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := s.WriteCA(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMSSQLEncryptionModes(t *testing.T) {
	db := newDB()
	cases := []struct {
		server tdsserver.Encryption
		client string // go-mssqldb encrypt=
		verify bool   // verify the certificate against the written CA
		fail   bool
	}{
		{tdsserver.EncryptOff, "disable", false, false}, // NOT_SUP: no TLS at all
		{tdsserver.EncryptOff, "false", true, false},    // OFF: TLS for LOGIN7 only
		{tdsserver.EncryptOff, "true", true, false},     // full TLS, verified
		{tdsserver.EncryptOn, "false", true, false},
		{tdsserver.EncryptRequired, "true", true, false},
		{tdsserver.EncryptRequired, "disable", false, true},
		{tdsserver.EncryptNotSup, "disable", false, false},
		{tdsserver.EncryptNotSup, "true", true, true},
		{tdsserver.EncryptStrict, "strict", true, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("server=%s/client=%s", tc.server, tc.client), func(t *testing.T) {
			s := startServer(t, tdsserver.Config{DB: db, Encryption: tc.server})
			params := map[string]string{"encrypt": tc.client}
			if tc.verify {
				params["certificate"] = writeCA(t, s)
				params["hostNameInCertificate"] = "localhost"
			}
			conn := openMSSQL(t, s, params)
			var n int64
			err := conn.QueryRow("SELECT COUNT_BIG(*) FROM dbo.poc48").Scan(&n)
			if tc.fail {
				if err == nil {
					t.Fatal("connection succeeded, want a failure")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != testRows["dbo.poc48"] {
				t.Fatalf("COUNT_BIG(*) = %d, want %d", n, testRows["dbo.poc48"])
			}
			if st := s.Stats(); st.Logins < 1 || st.Queries < 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestMSSQLVerifyFailsWithoutCA(t *testing.T) {
	s := startServer(t, tdsserver.Config{Encryption: tdsserver.EncryptRequired})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "true"})
	if err := conn.Ping(); err == nil {
		t.Fatal("TLS with an untrusted CA succeeded")
	}
}

func TestMSSQLWrongPassword(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	for _, up := range [][2]string{{testUser, "wrong"}, {"nobody", testPassword}} {
		db, err := sql.Open("sqlserver", mssqlDSN(s, up[0], up[1], map[string]string{"encrypt": "disable"}))
		if err != nil {
			t.Fatal(err)
		}
		err = db.Ping()
		db.Close()
		var me mssql.Error
		if !errors.As(err, &me) {
			t.Fatalf("user %q: got %v, want an mssql.Error", up[0], err)
		}
		if me.Number != 18456 || me.Class != 14 || !strings.HasSuffix(me.Message, fmt.Sprintf("Login failed for user '%s'.", up[0])) {
			t.Fatalf("user %q: got error %d class %d %q", up[0], me.Number, me.Class, me.Message)
		}
	}
	if st := s.Stats(); st.LoginFailures != 2 || st.Logins != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// expectedTable is the table as go-mssqldb must see it: without
// JSONSUPPORT/VECTORSUPPORT (go-mssqldb requests neither) json and vector
// columns arrive as text.
func expectedTable(t *sampledb.Table) *sampledb.Table {
	return t.Downgrade(false, false)
}

// readAll runs query and compares every cell with rows [from, to) of want.
// It reports the first mismatches cell by cell when detail is set; otherwise
// it compares checksums over all cells.
func readAndCompare(t *testing.T, conn *sql.DB, query string, want *sampledb.Table, from, to int64, detail bool, args ...any) {
	t.Helper()
	rows, err := conn.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	compareRows(t, rows, want, from, to, detail)
	if rows.NextResultSet() {
		t.Fatalf("%s: unexpected second result set", query)
	}
}

func compareRows(t *testing.T, rows *sql.Rows, want *sampledb.Table, from, to int64, detail bool) {
	t.Helper()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != len(want.Columns) {
		t.Fatalf("%s: %d columns, want %d", want.Name, len(cols), len(want.Columns))
	}
	for i, c := range cols {
		if !strings.EqualFold(c, want.Columns[i].Name) {
			t.Fatalf("%s: column %d is %q, want %q", want.Name, i, c, want.Columns[i].Name)
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	gotSum, wantSum := newChecksum(), newChecksum()
	var exp []any
	i := from
	mismatches := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if i >= to {
			i++
			continue
		}
		exp = want.Row(i, exp[:0])
		for c := range vals {
			g, w := canonMSSQL(vals[c], exp[c]), canonExpected(exp[c], &want.Columns[c].Type)
			if isUTF8Char(&want.Columns[c].Type) {
				// go-mssqldb decodes char/varchar by the collation's LCID
				// and ignores the UTF-8 flag (it does not negotiate
				// UTF8_SUPPORT), so it cannot read these cells; SQL Server
				// sends them verbatim all the same. FreeTDS checks them
				// (TestFreeTDSUTF8).
				g, w = "utf8 char", "utf8 char"
			}
			gotSum.add(g)
			wantSum.add(w)
			if detail && g != w && mismatches < 20 {
				mismatches++
				t.Errorf("%s row %d column %s (%T): got %.200q, want %.200q", want.Name, i, want.Columns[c].Name, vals[c], g, w)
			}
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", want.Name, err)
	}
	if i != to {
		t.Fatalf("%s: %d rows, want %d", want.Name, i-from, to-from)
	}
	if gotSum.String() != wantSum.String() {
		t.Fatalf("%s: checksum over all cells %s, want %s", want.Name, gotSum, wantSum)
	}
}

func isUTF8Char(ti *decode.TypeInfo) bool {
	switch ti.Type {
	case decode.TypeBigChar, decode.TypeBigVarChar, decode.TypeChar, decode.TypeVarChar, decode.TypeText:
		return ti.Collation.UTF8()
	}
	return false
}

func TestMSSQLTypeMatrix(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	tm, ok := newDB().Table("dbo", "type_matrix")
	if !ok {
		t.Fatal("no type_matrix")
	}
	want := expectedTable(tm)
	readAndCompare(t, conn, "SELECT * FROM dbo.type_matrix", want, 0, want.Rows, true)
}

func TestMSSQLEveryTable(t *testing.T) {
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db, MaxPacketSize: 16384})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable", "packet size": "16384"})
	n := 0
	for _, tb := range db.Tables() {
		if tb.Catalog {
			continue
		}
		n++
		t.Run(tb.Schema+"."+tb.Name, func(t *testing.T) {
			want := expectedTable(tb)
			readAndCompare(t, conn, "SELECT "+joinNames(want.Columns)+" FROM "+quoteName(tb), want, 0, want.Rows, want.Rows < 100)
		})
	}
	if n < 10 {
		t.Fatalf("only %d tables", n)
	}
}

func TestMSSQLParameters(t *testing.T) {
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	tb, _ := db.Table("dbo", "odbc5")
	// go-mssqldb sends this as RPC sp_executesql with typed parameters.
	readAndCompare(t, conn, "SELECT * FROM dbo.odbc5 WHERE id >= @lo AND id < @hi ORDER BY id", tb, 100, 350, true,
		sql.Named("lo", 101), sql.Named("hi", int64(351)))
	// The same statement again (go-mssqldb does not prepare; the server
	// sees a second sp_executesql).
	readAndCompare(t, conn, "SELECT * FROM dbo.odbc5 WHERE id >= @lo AND id < @hi ORDER BY id", tb, 0, 10, true,
		sql.Named("lo", 1), sql.Named("hi", 11))
	var name sql.NullString
	if err := conn.QueryRow("SELECT name FROM dbo.odbc5 WHERE id = @p1", 7).Scan(&name); err != nil {
		t.Fatal(err)
	}
	exp := tb.Row(6, nil)
	if canonExpected(exp[2], nil) != canonMSSQL(nullStr(name), exp[2]) {
		t.Fatalf("name of id 7: got %v, want %v", name, exp[2])
	}
}

func nullStr(s sql.NullString) any {
	if !s.Valid {
		return nil
	}
	return s.String
}

func TestMSSQLSeveralResultSets(t *testing.T) {
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	odbc5, _ := db.Table("dbo", "odbc5")
	products, _ := db.Table("sales", "products")
	rows, err := conn.Query("SELECT TOP (5) * FROM dbo.odbc5 ORDER BY id; SELECT TOP (3) * FROM sales.products ORDER BY product_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	compareRows(t, rows, odbc5, 0, 5, true)
	if !rows.NextResultSet() {
		t.Fatal("no second result set")
	}
	compareRows(t, rows, products, 0, 3, true)
	if rows.NextResultSet() {
		t.Fatal("a third result set")
	}
}

func TestMSSQLSyntaxError(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	_, err := conn.Exec("SELECT * FROM")
	var me mssql.Error
	if !errors.As(err, &me) || (me.Number != 102 && me.Number != 156) || me.Class != 15 {
		t.Fatalf("got %v, want syntax error 102 or 156", err)
	}
	// As on SQL Server, a batch starting with an unknown word is an EXEC.
	_, err = conn.Exec("SELEC 1")
	if !errors.As(err, &me) || me.Number != 2812 {
		t.Fatalf("got %v, want error 2812", err)
	}
	_, err = conn.Exec("SELECT * FROM dbo.nosuchtable")
	if !errors.As(err, &me) || me.Number != 208 {
		t.Fatalf("got %v, want error 208", err)
	}
	// The connection pool still works.
	var n int64
	if err := conn.QueryRow("SELECT COUNT_BIG(*) FROM sales.products").Scan(&n); err != nil || n != testRows["sales.products"] {
		t.Fatalf("after errors: %d, %v", n, err)
	}
}

// TestMSSQLCancel cancels a large result mid-stream: go-mssqldb sends
// ATTENTION, the server must stop and answer DONE(ATTN), and the same
// connection must then run another query.
func TestMSSQLCancel(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 42, Rows: map[string]int64{"dbo.poc48": 50_000_000}})
	s := startServer(t, tdsserver.Config{DB: db})
	conn := mssqlConn(t, s)
	ctx := context.Background()
	qctx, cancel := context.WithCancel(ctx)
	rows, err := conn.QueryContext(qctx, "SELECT * FROM dbo.poc48")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
		if n == 1000 {
			cancel()
		}
	}
	rows.Close()
	cancel()
	if n >= 50_000_000 {
		t.Fatal("the query was not cancelled")
	}
	// go-mssqldb may send a second attention when it closes the rows.
	if got := s.Stats().Attentions; got < 1 {
		t.Fatalf("server saw %d attentions, want at least 1", got)
	}
	var count int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT_BIG(*) FROM sales.products").Scan(&count); err != nil {
		t.Fatalf("query after cancel: %v", err)
	}
	if count != testRows["sales.products"] && count != sampledb.DefaultRows["sales.products"] {
		t.Fatalf("count after cancel = %d", count)
	}
	if rows := s.Stats().RowsSent; rows >= 50_000_000 {
		t.Fatalf("server sent %d rows", rows)
	}
}

func TestMSSQLAccessToken(t *testing.T) {
	s := startServer(t, tdsserver.Config{AccessTokens: map[string]string{"token-of-alice": "alice"}})
	dsn := "sqlserver://" + s.Addr() + "?database=sample&encrypt=disable"
	for _, tc := range []struct {
		token string
		ok    bool
	}{{"token-of-alice", true}, {"forged", false}} {
		connector, err := mssql.NewAccessTokenConnector(dsn, func() (string, error) { return tc.token, nil })
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(connector)
		var n int64
		err = db.QueryRow("SELECT COUNT_BIG(*) FROM sales.products").Scan(&n)
		db.Close()
		if tc.ok && (err != nil || n != testRows["sales.products"]) {
			t.Fatalf("token %q: %d, %v", tc.token, n, err)
		}
		var me mssql.Error
		if !tc.ok && (!errors.As(err, &me) || me.Number != 18456) {
			t.Fatalf("token %q: got %v, want login error 18456", tc.token, err)
		}
	}
}

// TestMSSQLRouting: go-mssqldb follows the gateway's routing ENVCHANGE to
// the second server.
func TestMSSQLRouting(t *testing.T) {
	target := startServer(t, tdsserver.Config{})
	gw := startServer(t, tdsserver.Config{RouteTo: target.Addr()})
	conn := openMSSQL(t, gw, map[string]string{"encrypt": "disable"})
	var n int64
	if err := conn.QueryRow("SELECT COUNT_BIG(*) FROM sales.products").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if g, tg := gw.Stats(), target.Stats(); g.Queries != 0 || tg.Queries != 1 || g.Logins < 1 || tg.Logins < 1 {
		t.Fatalf("gateway %+v, target %+v", g, tg)
	}
}

// TestMSSQLTransaction: go-mssqldb's BeginTx/Commit/Rollback travel as
// transaction-manager requests (packet type 0x0E).
func TestMSSQLTransaction(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	for _, commit := range []bool{true, false} {
		tx, err := conn.Begin()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := tx.QueryRow("SELECT @@TRANCOUNT").Scan(&n); err != nil || n != 1 {
			t.Fatalf("@@TRANCOUNT in a transaction: %d, %v", n, err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestServerCloseWithActiveStream: Close ends a connection in the middle
// of a large result and waits for every goroutine.
func TestServerCloseWithActiveStream(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 42, Rows: map[string]int64{"dbo.poc48": 50_000_000}})
	s, err := tdsserver.Start(tdsserver.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	rows, err := conn.Query("SELECT * FROM dbo.poc48")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10 && rows.Next(); i++ {
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if rows.Err() == nil {
		t.Fatal("the result ended cleanly after Close")
	}
	rows.Close()
}

// TestMSSQLCertFiles serves a certificate read from PEM files.
func TestMSSQLCertFiles(t *testing.T) {
	certFile, keyFile, err := tdsserver.WriteSelfSigned(t.TempDir(), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, tdsserver.Config{Encryption: tdsserver.EncryptRequired, CertFile: certFile, KeyFile: keyFile})
	if !bytes.Equal(s.CACertPEM(), certPEM) {
		t.Fatal("CACertPEM is not the certificate file's")
	}
	conn := openMSSQL(t, s, map[string]string{"encrypt": "true", "certificate": certFile, "hostNameInCertificate": "localhost"})
	if err := conn.Ping(); err != nil {
		t.Fatal(err)
	}
}
