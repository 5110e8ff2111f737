package parquet

import (
	"context"
	"errors"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// TestParquetStreamedRowGroups writes tables whose row groups are encoded
// in jobs while they fill (small row groups so that several jobs run per
// group, files split by max_rows in the middle of a group's stream) and
// reads every value back through arrow-go; the same rows written with
// streaming off (one thread) must give the same values.
func TestParquetStreamedRowGroups(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	db := sampledb.New(sampledb.Config{Seed: 5, Rows: map[string]int64{"lineitem": 30000, "temporal": 30000, "lob": 400}})
	for _, name := range []string{"lineitem", "temporal", "lob", "type_matrix"} {
		t.Run(name, func(t *testing.T) {
			tb, _ := db.Table("dbo", name)
			for _, threads := range []int{2, 1} {
				runtime.GOMAXPROCS(threads)
				s, err := New(Config{Path: t.TempDir() + "/", RowGroupBytes: 2 << 20, MaxRows: 25000})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				_ = s.Open(ctx, sinks.ExtractInfo{Name: name})
				streamTable(t, tb, s, tb.Rows, false)
				st, err := s.Publish(ctx)
				if err != nil {
					_ = s.Abort(ctx)
					t.Fatal(err)
				}
				if threads == 2 && s.jobs == 0 && name != "type_matrix" {
					t.Fatalf("%d rows in row groups of 2 MiB: no job streamed", tb.Rows)
				}
				if threads == 1 && s.jobs != 0 {
					t.Fatalf("one thread: %d jobs streamed", s.jobs)
				}
				cols := fileColumns(s.plans)
				var got [][]string
				for _, f := range st.Files {
					got = append(got, readArrow(t, f, s.plans, cols)...)
				}
				if int64(len(got)) != tb.Rows {
					t.Fatalf("threads %d: read %d rows, want %d", threads, len(got), tb.Rows)
				}
				var row []any
				bad := 0
				for r := range got {
					row = tb.Row(int64(r), row)
					for k, oc := range cols {
						if w := want(s.plans[oc.src], &tb.Columns[oc.src], oc.part, row[oc.src]); got[r][k] != w && bad < 10 {
							bad++
							t.Errorf("threads %d row %d column %s: got %.80q want %.80q", threads, r, decode.SQLTypeName(&tb.Columns[oc.src]), got[r][k], w)
						}
					}
				}
			}
		})
	}
}

// TestParquetStreamAbort aborts a run while a job may be running.
func TestParquetStreamAbort(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	db := sampledb.New(sampledb.Config{Seed: 5, Rows: map[string]int64{"lineitem": 20000}})
	tb, _ := db.Table("dbo", "lineitem")
	dir := t.TempDir()
	s, err := New(Config{Path: dir + "/", RowGroupBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = s.Open(ctx, sinks.ExtractInfo{Name: "lineitem"})
	streamTable(t, tb, s, tb.Rows, false)
	if s.jobs == 0 {
		t.Fatal("no job streamed")
	}
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if ents := sinktest.DirEntries(t, dir); len(ents) != 0 {
		t.Fatalf("abort left %v", ents)
	}
}

// TestParquetStreamOpenFails: the first job of a batch opens the file
// while the decoder goes on; when it cannot, the run fails with the
// file's error (not a crash, not a second attempt) and Abort cleans up.
func TestParquetStreamOpenFails(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	db := sampledb.New(sampledb.Config{Seed: 5, Rows: map[string]int64{"lineitem": 20000}})
	tb, _ := db.Table("dbo", "lineitem")
	dir := t.TempDir() + "/out"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Path: dir + "/", RowGroupBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Open(ctx, sinks.ExtractInfo{Name: "lineitem"}); err != nil {
		t.Fatal(err)
	}
	// the file cannot be created now: its directory is a regular file
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20})
	if err := st.SetSink(s); err != nil {
		t.Fatal(err)
	}
	buf := decode.AppendColMetadata(nil, tb.Columns)
	buf = tb.AppendRows(buf, 0, tb.Rows, false)
	var runErr error
	for len(buf) > 0 && runErr == nil {
		n, _, err := st.Next(buf)
		buf = buf[n:]
		runErr = err
	}
	if s.jobs == 0 {
		t.Fatal("no job streamed")
	}
	if _, err := s.Publish(ctx); err == nil || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("Publish: %v (decoding: %v), want the directory's error", err, runErr)
	}
	if s.fileNo != 1 {
		t.Fatalf("%d files attempted, want 1", s.fileNo)
	}
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
}
