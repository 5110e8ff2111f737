package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// startSample serves the seed-1 sample database, rows rows per table
// named, on a loopback port; the caller closes it.
func startSample(t *testing.T, rows map[string]int64) *tdsserver.Server {
	t.Helper()
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Rows: rows}), Encryption: tdsserver.EncryptNotSup})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// haveTool reports whether an outside tool a leg runs is on PATH; in CI it
// must be, so a missing one fails the test there instead of narrowing it.
func haveTool(t *testing.T, name string) bool {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s missing in CI", name)
		}
		return false
	}
	return true
}

// The harness itself must not rot: run every shape in both modes on small
// tables (3 reps: parity, not timing); runShape fails on any checksum
// mismatch between legs.
func TestHarnessChecksumParity(t *testing.T) {
	rows := map[string]int64{}
	for s := range shapeRows {
		rows["dbo."+s] = 300
	}
	rows["dbo.lob"] = 50
	for s := range tableShapes {
		rows[s] = 300
	}
	srv := startSample(t, rows)
	defer srv.Close()
	haveBCP := haveTool(t, "freebcp")
	// the parquet mode: tdsextract's Parquet sink and DuckDB's writer must
	// write files that DuckDB reads back as the same rows
	for _, shape := range []string{"lineitem", "temporal", "sales.orders"} {
		rs, err := runParquet(srv.Addr(), shape, 3, nil)
		if err != nil {
			t.Fatalf("%s/parquet: %v", shape, err)
		}
		if len(rs) != 4 || rs[0].Rows != rows[tableOf(shape)] || rs[0].FileBytes == 0 || rs[1].FileBytes == 0 {
			t.Fatalf("%s/parquet: %+v", shape, rs)
		}
	}
	for _, shape := range []string{"poc48", "odbc5", "wide601", "lob", "temporal", "lineitem"} {
		for _, mode := range []string{"memory", "loopback"} {
			rs, err := runShape(srv.Addr(), shape, mode, 3, haveBCP)
			if err != nil {
				t.Fatalf("%s/%s: %v", shape, mode, err)
			}
			if rs[0].Leg != "tdsextract" || rs[0].Rows != rows["dbo."+shape] {
				t.Fatalf("%s/%s: %+v", shape, mode, rs[0])
			}
			if rs[0].AllocsPerRow == nil {
				t.Fatalf("%s/%s: no allocation figure", shape, mode)
			}
		}
	}
}

// The PostgreSQL suite must not rot either: every shape in both modes on
// small tables against a throwaway PostgreSQL; runPGShape fails on any
// checksum mismatch between the legs' tables.
func TestPostgresSuiteParity(t *testing.T) {
	url := pgtest.Start(t)
	rows := map[string]int64{}
	for _, s := range []string{"poc48", "odbc5", "temporal", "lineitem"} {
		rows["dbo."+s] = 200
	}
	srv := startSample(t, rows)
	defer srv.Close()
	havePGL := haveTool(t, "pgloader")
	for _, shape := range []string{"odbc5", "temporal"} {
		for _, mode := range []string{"memory", "loopback"} {
			rs, err := runPGShape(srv.Addr(), shape, mode, 3, url, havePGL && mode == "loopback" && shape == "odbc5")
			if err != nil {
				t.Fatalf("%s/%s: %v", shape, mode, err)
			}
			if rs[0].Leg != "tdsextract" || rs[0].Rows != 200 || len(rs) < 4 {
				t.Fatalf("%s/%s: %+v", shape, mode, rs[0])
			}
		}
	}
}

// The migrate suite must not rot: both legs on a small lineitem and on a
// small sales schema, each checked for every table's rows in its target.
func TestMigrateSuiteParity(t *testing.T) {
	if !haveTool(t, "pgloader") {
		t.Skip("skipping: pgloader not installed")
	}
	url := pgtest.Start(t)
	var served []map[string]int64
	addrFor := func(rows map[string]int64) (string, func()) {
		served = append(served, rows)
		srv := startSample(t, rows)
		return srv.Addr(), func() { _ = srv.Close() }
	}
	for _, tc := range []struct {
		shape  string
		tables int
		total  int64
	}{
		{"lineitem", 1, 300},
		{"sales", 4, 300 + 75 + 15 + 3}, // order_lines, orders, customers, products
	} {
		served = nil
		rs, err := runMigrateSuite(migrateTargetFor(tc.shape), []int64{300}, 2, url, addrFor, migrateLegs{pgloader: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.shape, err)
		}
		if len(rs) != 2 || rs[0].Leg != "tdsextract migrate" || rs[1].Leg != "pgloader" || rs[0].Reps != 1 || rs[0].RSSMedianMB <= 0 ||
			rs[0].TotalRows != tc.total || rs[1].TotalRows != tc.total {
			t.Fatalf("%s: %+v", tc.shape, rs)
		}
		if len(served) != 1 || len(served[0]) != tc.tables {
			t.Fatalf("%s: sample servers started with %v", tc.shape, served)
		}
		if md := migrateMarkdown(rs); !strings.Contains(md, tc.shape+", 300 rows: tdsextract's wall time is") {
			t.Errorf("%s: markdown:\n%s", tc.shape, md)
		}
	}
	// A baseline build beside this one (here the same build) and a variant
	// leg with other flags, without pgloader, on a server whose CPU time
	// the harness reads, configured for bulk loads.
	srv, err := pgtest.Launch("wal_level=minimal", "max_wal_senders=0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	bin, err := buildTdsextract()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := runMigrateSuite(migrateTargetFor("lineitem"), []int64{300}, 3, srv.URL, addrFor, migrateLegs{baseline: bin, variant: []string{"--split-rows", "0"}, pgDataDir: srv.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].Leg != "tdsextract migrate" || rs[1].Leg != "tdsextract migrate --split-rows 0" || rs[2].Leg != baselineLeg || len(rs[2].WallS) != 2 || rs[0].PGCPUMedianS <= 0 || rs[0].ClientCPUMedianS <= 0 {
		t.Fatalf("baseline run: %+v", rs)
	}
	if md := migrateMarkdown(rs); !strings.Contains(md, "this build's wall time is") || !strings.Contains(md, "PostgreSQL alone used") {
		t.Errorf("baseline markdown:\n%s", md)
	}
	cond := migrateConditions([]migrateTarget{migrateTargetFor("lineitem"), migrateTargetFor("sales")}, "abc1234", "1 2 3", srv.Settings)
	for _, want := range []string{"at abc1234,", "load average 1 2 3 before", "ran with fsync=off, synchronous_commit=off, full_page_writes=off, timezone=UTC, wal_level=minimal, max_wal_senders=0.", "WITH " + pgloaderWith, "- sales (tdsextract: `--include 'sales.*'`): `INCLUDING ONLY TABLE NAMES LIKE '%' IN SCHEMA 'sales'`"} {
		if !strings.Contains(cond, want) {
			t.Errorf("conditions lack %q:\n%s", want, cond)
		}
	}
}

// A target whose row counts the harness gets wrong must fail the run, not
// report a fast leg: checkRowCounts against a database holding fewer rows.
func TestMigrateRowCountCheck(t *testing.T) {
	url := pgtest.Start(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE SCHEMA s; CREATE TABLE s.a (x int); CREATE TABLE s.b (x int); INSERT INTO s.a SELECT generate_series(1, 5); INSERT INTO s.b VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := checkRowCounts(url, map[string]int64{"s.a": 5, "s.b": 1}); err != nil {
		t.Errorf("matching counts: %v", err)
	}
	err = checkRowCounts(url, map[string]int64{"s.a": 5, "s.b": 2})
	if err == nil || !strings.Contains(err.Error(), "s.b has 1 rows, want 2") {
		t.Errorf("a short table: %v", err)
	}
}
