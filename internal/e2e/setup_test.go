package e2e

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/csv"
)

const (
	user     = "sa"
	password = "Sample-Passw0rd"
)

// e2eRows keeps every table small (the whole package runs in well under a
// minute on a shared machine) while still spanning many TDS packets, the
// PLP chunking of the (max) columns and every edge row of type_matrix.
// Tables not listed (type_matrix, the text_* tables) keep their default
// counts: type_matrix is fixed by its content, text_* hold 64 rows.
var e2eRows = map[string]int64{
	"dbo.poc48":         3000,
	"dbo.odbc5":         3000,
	"dbo.wide601":       60,
	"dbo.lob":           40,
	"dbo.lob_nvarchar":  6,
	"dbo.temporal":      3000,
	"dbo.lineitem":      3000,
	"sales.customers":   300,
	"sales.products":    60,
	"sales.orders":      500,
	"sales.order_lines": 2000,
}

// env is one sample database served over TDS.
type env struct {
	db  *sampledb.DB
	srv *tdsserver.Server
}

func startEnv(t testing.TB) *env {
	t.Helper()
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: e2eRows})
	srv, err := tdsserver.Start(tdsserver.Config{
		Addr:   "127.0.0.1:0",
		DB:     db,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("tdsserver.Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &env{db: db, srv: srv}
}

// connString is the engine's URL-form connection string for the server.
func (e *env) connString() string {
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, password), Host: e.srv.Addr(),
		RawQuery: "database=sample&encrypt=disable"}
	return u.String()
}

// mssqlDB opens go-mssqldb on the same server.
func (e *env) mssqlDB(t testing.TB) *sql.DB {
	t.Helper()
	q := url.Values{}
	q.Set("database", "sample")
	q.Set("encrypt", "disable")
	q.Set("dial timeout", "10")
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(user, password), Host: e.srv.Addr(), RawQuery: q.Encode()}
	connector, err := mssql.NewConnector(u.String())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// exportAll runs one job exporting every table of the sample database to
// one csv sink with the given options, into dir; it returns the summary
// (per-extract SQL and the file of each table, by table full name).
func (e *env) exportAll(t testing.TB, dir string, options map[string]any) map[string]engine.ExtractSummary {
	t.Helper()
	opts := map[string]any{"path": dir + string(filepath.Separator)}
	for k, v := range options {
		opts[k] = v
	}
	job := &engine.JobConfig{
		Name:     "e2e",
		Source:   engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "2m"},
		Sinks:    []engine.SinkConfig{{Type: "csv", Options: opts}},
		Parallel: 2,
	}
	for _, tb := range e.db.Tables() {
		job.Extracts = append(job.Extracts, engine.ExtractConfig{Table: tb.FullName(), Verify: "count"})
	}
	reg, err := sinks.NewRegistry(csv.Factory())
	if err != nil {
		t.Fatal(err)
	}
	r := &engine.Runner{Registry: reg}
	sum, err := r.Run(context.Background(), job)
	if err != nil {
		t.Fatalf("engine run: %v", err)
	}
	out := map[string]engine.ExtractSummary{}
	for i, ex := range sum.Extracts {
		name := job.Extracts[i].Table
		if len(ex.Sinks) != 1 || len(ex.Sinks[0].Files) != 1 {
			t.Fatalf("%s: want one csv file, got %+v", name, ex.Sinks)
		}
		out[name] = ex
	}
	return out
}

// mssqlRows reads the query with go-mssqldb, every column scanned into any.
func mssqlRows(t testing.TB, db *sql.DB, query string) (cols []string, rows [][]any) {
	t.Helper()
	rs, err := db.Query(query)
	if err != nil {
		t.Fatalf("go-mssqldb: %s: %v", query, err)
	}
	defer rs.Close()
	cols, err = rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatalf("go-mssqldb scan: %v", err)
		}
		rows = append(rows, vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("go-mssqldb: %s: %v", query, err)
	}
	return cols, rows
}

// selectFor is the SELECT the engine must write for a table, spelled out
// here from the sample's own column types: every column in table order,
// the spatial types through STAsBinary() and hierarchyid through
// ToString().
func selectFor(t testing.TB, tb *sampledb.Table) string {
	t.Helper()
	q := func(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }
	var items []string
	for i := range tb.Columns {
		c := q(tb.Columns[i].Name)
		switch tb.Columns[i].Kind() {
		case decode.KindGeography, decode.KindGeometry:
			c += ".STAsBinary() AS " + c
		case decode.KindHierarchyID:
			c += ".ToString() AS " + c
		}
		items = append(items, c)
	}
	return "SELECT " + strings.Join(items, ", ") + " FROM " + q(tb.Schema) + "." + q(tb.Name)
}
