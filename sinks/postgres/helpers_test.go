package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// One PostgreSQL 15 for the whole test binary (pgtest.Shared).
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// pgConn is a pgx connection to the shared server, closed after the test.
func pgConn(t testing.TB) (*pgx.Conn, string) {
	t.Helper()
	url := pgtest.Shared(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn, url
}

func exec(t testing.TB, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// newSink builds a sink on url with options.
func newSink(t testing.TB, url string, options map[string]any) *Sink {
	t.Helper()
	o := map[string]any{"connection": url}
	for k, v := range options {
		o[k] = v
	}
	c, err := ParseConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadCells drives rows of cells into a new sink as the decoder would and
// publishes; parts > 1 splits variable-length values (Reserve/Commit and
// Write alternating).
func loadCells(t testing.TB, s *Sink, info sinks.ExtractInfo, cols []decode.Column, rows [][]sinktest.Cell, parts int) (sinks.Stats, error) {
	t.Helper()
	ctx := context.Background()
	if err := s.Open(ctx, info); err != nil {
		return sinks.Stats{}, err
	}
	modes := make([]decode.Mode, len(cols))
	if err := s.Columns(cols, modes); err != nil {
		_ = s.Abort(ctx)
		return sinks.Stats{}, err
	}
	for _, r := range rows {
		for c := range r {
			sinktest.Drive(s, c, &r[c], parts)
		}
		if err := s.EndRow(); err != nil {
			_ = s.Abort(ctx)
			return sinks.Stats{}, err
		}
	}
	st, err := s.Publish(ctx)
	if err != nil {
		_ = s.Abort(ctx)
	}
	return st, err
}

// checkColumns are the target columns of a sink for pgcheck.
func checkColumns(s *Sink) []pgcheck.Column {
	var out []pgcheck.Column
	for _, c := range s.Target().Columns {
		out = append(out, pgcheck.Column{Name: c.Name, Source: c.Source, Companion: c.Companion})
	}
	return out
}

func col(name string, ti decode.TypeInfo) decode.Column {
	return decode.Column{Name: name, Flags: decode.ColFlagNullable, Type: ti}
}

func count(t testing.TB, conn *pgx.Conn, q string) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// sampleTable is dbo.name of a sample database holding rows rows of it.
func sampleTable(t testing.TB, name string, rows int64) *sampledb.Table {
	t.Helper()
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{name: rows}})
	tb, ok := db.Table("dbo", name)
	if !ok {
		t.Fatalf("no table %s", name)
	}
	return tb
}
