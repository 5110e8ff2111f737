package e2e

import (
	"bytes"
	"context"
	encsv "encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/csv"
	"github.com/tdsextract/tdsextract/sinks/parquet"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// incEnv is a sample server whose dbo.events starts with rows rows, and
// an incremental job on it writing CSV and Parquet under dir.
type incEnv struct {
	*env
	dir, state string
	reg        *sinks.Registry
}

func startIncEnv(t *testing.T, rows int64, cfg sampledb.Config) *incEnv {
	t.Helper()
	cfg.Seed, cfg.Rows = 1, map[string]int64{"dbo.events": rows}
	db := sampledb.New(cfg)
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	reg, err := sinks.NewRegistry(csv.Factory(), parquet.Factory(), postgres.Factory())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &incEnv{env: &env{db: db, srv: srv}, dir: dir, state: filepath.Join(dir, "state"), reg: reg}
}

// job is an incremental export of dbo.events on column to CSV and
// Parquet (or the sinks given).
func (e *incEnv) job(column, overlap string, sinksList ...engine.SinkConfig) *engine.JobConfig {
	if sinksList == nil {
		sinksList = []engine.SinkConfig{
			{Type: "parquet", Options: map[string]any{"path": filepath.Join(e.dir, "pq") + "/"}},
			{Type: "csv", Options: map[string]any{"path": filepath.Join(e.dir, "csv") + "/"}},
		}
	}
	return &engine.JobConfig{
		Name:     "inc",
		StateDir: e.state,
		Source:   engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "1m"},
		Extracts: []engine.ExtractConfig{{Table: "dbo.events", Verify: "count",
			Incremental: &engine.IncrementalConfig{Column: column, Overlap: overlap}, Sinks: sinksList}},
	}
}

func (e *incEnv) run(t *testing.T, job *engine.JobConfig, bf *incremental.Range) (*engine.Summary, error) {
	t.Helper()
	r := &engine.Runner{Registry: e.reg, Backfill: bf}
	return r.Run(context.Background(), job)
}

// insertAt adds events with the given ts values (100 ns ticks after
// base); nil ts takes the table's default.
func (e *incEnv) insertAt(t *testing.T, base decode.DateTime, ticks ...int64) {
	t.Helper()
	rows := make([][]any, len(ticks))
	for i, tk := range ticks {
		dt := base
		dt.Ticks += tk
		rows[i] = []any{dt, "late"}
	}
	if _, err := e.db.Insert("dbo", "events", []string{"ts", "kind"}, rows); err != nil {
		t.Fatal(err)
	}
}

// csvIDs reads the id column of every CSV file of the export.
func csvIDs(t *testing.T, dir string) map[string][]int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "csv", "*.csv"))
	out := map[string][]int64{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := encsv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(recs) == 0 || recs[0][0] != "id" {
			t.Fatalf("%s: no header", f)
		}
		for _, r := range recs[1:] {
			n, err := strconv.ParseInt(r[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], n)
		}
	}
	return out
}

// parquetIDs reads the id column of every Parquet file with arrow-go.
func parquetIDs(t *testing.T, dir string) map[string][]int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "pq", "*.parquet"))
	out := map[string][]int64{}
	for _, f := range files {
		rdr, err := file.OpenParquetFile(f, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, chunk := range tbl.Column(0).Data().Chunks() {
			a := chunk.(*array.Int32)
			for i := 0; i < a.Len(); i++ {
				ids = append(ids, int64(a.Value(i)))
			}
		}
		out[filepath.Base(f)] = ids
		tbl.Release()
		rdr.Close()
	}
	return out
}

// exactlyOnce checks that the files together hold ids 1..n, each once.
func exactlyOnce(t *testing.T, what string, files map[string][]int64, n int64) {
	t.Helper()
	var all []int64
	for _, ids := range files {
		all = append(all, ids...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	if int64(len(all)) != n {
		t.Fatalf("%s: %d rows in %v, want ids 1..%d once each", what, len(all), files, n)
	}
	for i, id := range all {
		if id != int64(i+1) {
			t.Fatalf("%s: id %d where %d was expected (missing or twice): %v", what, id, i+1, files)
		}
	}
}

func wantRows(t *testing.T, sum *engine.Summary, err error, rows int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := sum.Extracts[0].Rows; got != rows {
		t.Fatalf("run exported %d rows (window %s), want %d", got, sum.Extracts[0].Incremental.Window, rows)
	}
	if in := sum.Extracts[0].Incremental; in == nil || !in.Committed {
		t.Fatalf("state not committed: %+v", in)
	}
}

// Rows added between runs, through the Go API and through T-SQL INSERT
// over TDS, are exported exactly once across the runs, in CSV and
// Parquet; rows 100 ns apart straddling a run are neither lost nor
// repeated; a run whose last sink fails to publish leaves the watermark
// where it was, and its rerun exports the same rows.
func TestIncrementalExactlyOnce(t *testing.T) {
	for _, column := range []string{"ts", "id", "rv"} {
		t.Run(column, func(t *testing.T) {
			e := startIncEnv(t, 20, sampledb.Config{})
			job := e.job(column, "")
			base := sampledb.EventsBase
			base.Ticks += 20 * 10_000_000 // just after the 20 generated rows
			sum, err := e.run(t, job, nil)
			wantRows(t, sum, err, 20)

			// Two rows 100 ns apart, a run, then the next 100 ns.
			e.insertAt(t, base, 1, 2)
			sum, err = e.run(t, job, nil)
			wantRows(t, sum, err, 2)
			e.insertAt(t, base, 3)
			sum, err = e.run(t, job, nil)
			wantRows(t, sum, err, 1)

			// T-SQL INSERT over TDS, as any client would send it.
			db := e.mssqlDB(t)
			if _, err := db.Exec("INSERT INTO dbo.events (ts, kind, amount) VALUES (@p1, N'tsql', 12.50), (@p1, N'tsql', NULL)",
				"2026-01-01T00:00:20.0000004"); err != nil {
				t.Fatal(err)
			}
			// The CSV sink cannot publish (a directory holds its file's
			// name): the Parquet file of the run is published, the run
			// fails, and the watermark does not move.
			blocker := filepath.Join(e.dir, "csv", "events.run-000004.csv")
			if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(filepath.Join(e.state, "events.watermark.json"))
			sum, err = e.run(t, job, nil)
			if err == nil || sum.OK {
				t.Fatal("run with a failing sink publish succeeded")
			}
			if in := sum.Extracts[0].Incremental; in == nil || in.Committed {
				t.Fatalf("failed run committed its state: %+v", in)
			}
			after, _ := os.ReadFile(filepath.Join(e.state, "events.watermark.json"))
			if !bytes.Equal(before, after) {
				t.Fatalf("failed run changed the state file:\n%s\n->\n%s", before, after)
			}
			if err := os.RemoveAll(blocker); err != nil {
				t.Fatal(err)
			}
			sum, err = e.run(t, job, nil)
			wantRows(t, sum, err, 2)
			sum, err = e.run(t, job, nil)
			wantRows(t, sum, err, 0)

			exactlyOnce(t, "csv", csvIDs(t, e.dir), 25)
			exactlyOnce(t, "parquet", parquetIDs(t, e.dir), 25)
			var st incremental.State
			b, _ := os.ReadFile(filepath.Join(e.state, "events.watermark.json"))
			if err := json.Unmarshal(b, &st); err != nil || st.Runs != 5 || st.Watermark == nil {
				t.Fatalf("state %s (%v), want 5 runs", b, err)
			}
			if column == "ts" && *st.Watermark != "2026-01-01 00:00:20.0000004" {
				t.Fatalf("ts watermark %q, want the last row's ts to the 100 ns", *st.Watermark)
			}

			// A backfill re-exports a range and leaves the state alone.
			from, to := map[string][2]string{
				"id": {"3", "8"},
				"ts": {"2026-01-01 00:00:02", "2026-01-01 00:00:07"},
				"rv": {"0x7D2", "0x7D7"},
			}[column][0], map[string][2]string{
				"id": {"3", "8"},
				"ts": {"2026-01-01 00:00:02", "2026-01-01 00:00:07"},
				"rv": {"0x7D2", "0x7D7"},
			}[column][1]
			sum, err = e.run(t, job, &incremental.Range{From: from, To: to})
			if err != nil || sum.Extracts[0].Rows != 5 || !sum.Extracts[0].Incremental.Backfill {
				t.Fatalf("backfill %s..%s: %v, %+v", from, to, err, sum.Extracts[0])
			}
			again, _ := os.ReadFile(filepath.Join(e.state, "events.watermark.json"))
			if !bytes.Equal(b, again) {
				t.Fatal("a backfill changed the state file")
			}
			var bfIDs []int64
			for f, ids := range csvIDs(t, e.dir) {
				if strings.Contains(f, ".backfill-") {
					bfIDs = append(bfIDs, ids...)
				}
			}
			if len(bfIDs) != 5 || bfIDs[0] != 3 || bfIDs[4] != 7 {
				t.Fatalf("backfill exported ids %v, want 3..7", bfIDs)
			}
		})
	}
}

// With an overlap, each run starts that far below the last watermark:
// rows in the overlap come again (de-duplicated downstream), none is lost.
func TestIncrementalOverlap(t *testing.T) {
	e := startIncEnv(t, 10, sampledb.Config{})
	job := e.job("id", "3")
	sum, err := e.run(t, job, nil)
	wantRows(t, sum, err, 10)
	e.insertAt(t, sampledb.EventsBase, 1, 2)
	sum, err = e.run(t, job, nil)
	wantRows(t, sum, err, 5) // ids 8..12: 3 again, 2 new
	if w := sum.Extracts[0].Incremental.Window; w != "(7, 12]" {
		t.Fatalf("window %s, want (7, 12]", w)
	}
}

// PostgreSQL append: three runs into one table hold every row once.
func TestIncrementalPostgresAppend(t *testing.T) {
	url := pgtest.Start(t)
	e := startIncEnv(t, 15, sampledb.Config{})
	job := e.job("rv", "", engine.SinkConfig{Type: "postgres", Options: map[string]any{"connection": url, "mode": "append", "table": "events_inc"}})
	base := sampledb.EventsBase
	base.Ticks += 15 * 10_000_000
	sum, err := e.run(t, job, nil)
	wantRows(t, sum, err, 15)
	e.insertAt(t, base, 1, 2, 3)
	sum, err = e.run(t, job, nil)
	wantRows(t, sum, err, 3)
	e.insertAt(t, base, 4)
	sum, err = e.run(t, job, nil)
	wantRows(t, sum, err, 1)
	pg := pgcheck.Connect(t, url)
	var n, distinct, maxID int64
	if err := pg.QueryRow(context.Background(), "SELECT count(*), count(DISTINCT id), max(id) FROM events_inc").Scan(&n, &distinct, &maxID); err != nil {
		t.Fatal(err)
	}
	if n != 19 || distinct != 19 || maxID != 19 {
		t.Fatalf("postgres holds %d rows, %d distinct ids, max %d; want 19 each", n, distinct, maxID)
	}
}

// consistency: snapshot runs the unit in one SNAPSHOT transaction; a
// database with snapshot isolation off fails with a message that says
// what to change, before anything is written.
func TestConsistencySnapshot(t *testing.T) {
	e := startIncEnv(t, 10, sampledb.Config{})
	job := e.job("id", "")
	job.Extracts[0].Consistency = "snapshot"
	sum, err := e.run(t, job, nil)
	wantRows(t, sum, err, 10)

	// A full export verified by count, with a row added after the count
	// and before the SELECT: under READ COMMITTED the two disagree and
	// nothing is published; in one snapshot they agree.
	for _, snap := range []bool{false, true} {
		full := e.job("id", "")
		full.Extracts[0].Incremental = nil
		if snap {
			full.Extracts[0].Consistency = "snapshot"
		}
		r := &engine.Runner{Registry: e.reg, Progress: insertOnStart{t, e}}
		sum, err := r.Run(context.Background(), full)
		switch {
		case snap && err != nil:
			t.Fatalf("snapshot: %v", err)
		case !snap && (err == nil || !strings.Contains(err.Error(), "verify")):
			t.Fatalf("read committed with a row added mid-run: %v, want a verify failure", err)
		case snap && sum.Extracts[0].Rows != sum.Extracts[0].SourceRows:
			t.Fatalf("snapshot: %d rows, counted %d", sum.Extracts[0].Rows, sum.Extracts[0].SourceRows)
		}
	}

	off := startIncEnv(t, 10, sampledb.Config{NoSnapshot: true})
	job = off.job("id", "")
	job.Extracts[0].Consistency = "snapshot"
	sum, err = off.run(t, job, nil)
	if err == nil || !strings.Contains(err.Error(), "3952") || !strings.Contains(err.Error(), "ALLOW_SNAPSHOT_ISOLATION ON") {
		t.Fatalf("snapshot on a database without snapshot isolation: %v", err)
	}
	// No output; the state directory may hold the run's checkpoints (the
	// units it planned, none finished), which a resumed run reads.
	files, _ := filepath.Glob(filepath.Join(off.dir, "*", "*"))
	var outputs []string
	for _, f := range files {
		if !strings.HasPrefix(f, off.state+string(filepath.Separator)) {
			outputs = append(outputs, f)
		}
	}
	if len(outputs) != 0 {
		t.Fatalf("files written: %v", outputs)
	}
	if done, _ := filepath.Glob(filepath.Join(off.state, "units", "*")); len(done) != 0 {
		t.Fatalf("a failed run recorded finished units: %v", done)
	}
	if _, err := os.Stat(filepath.Join(off.state, "events.watermark.json")); err == nil {
		t.Fatal("state written by a failed run")
	}
	_ = sum
}

// insertOnStart inserts a row when the extract's sinks open: after the
// run read its high watermark, before its SELECT runs.
type insertOnStart struct {
	t *testing.T
	e *incEnv
}

func (p insertOnStart) Start(string, int64, time.Time) {
	p.e.insertAt(p.t, sampledb.EventsBase, 99*10_000_000)
}
func (insertOnStart) Update(string, int64, int64)                 {}
func (insertOnStart) Finish(string, int64, int64, float64, error) {}

// A row committed while a run goes on, after it fixed its window, is left
// for the next run: the run is bounded by the high watermark it read at
// its start, so no row committed during a run is skipped.
func TestIncrementalRowDuringRun(t *testing.T) {
	for _, column := range []string{"id", "ts", "rv"} {
		t.Run(column, func(t *testing.T) {
			e := startIncEnv(t, 10, sampledb.Config{})
			job := e.job(column, "")
			r := &engine.Runner{Registry: e.reg, Progress: insertOnStart{t, e}}
			sum, err := r.Run(context.Background(), job)
			wantRows(t, sum, err, 10)
			sum, err = e.run(t, job, nil)
			wantRows(t, sum, err, 1)
			exactlyOnce(t, "csv", csvIDs(t, e.dir), 11)
		})
	}
}

// A run that loses its connection mid-stream publishes nothing and keeps
// the state; the next run exports the same window, every row once.
func TestIncrementalConnectionLostKeepsState(t *testing.T) {
	e := startIncEnv(t, 30, sampledb.Config{})
	job := e.job("id", "")
	sum, err := e.run(t, job, nil)
	wantRows(t, sum, err, 30)
	e.insertAt(t, sampledb.EventsBase, 1, 2, 3, 4, 5)
	if err := e.srv.SetFaults(tdsserver.Faults{CloseAfterRows: 2, Table: "dbo.events"}); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(e.state, "events.watermark.json")
	before, _ := os.ReadFile(state)
	sum, err = e.run(t, job, nil)
	if err == nil || sum.Extracts[0].Incremental == nil || sum.Extracts[0].Incremental.Committed {
		t.Fatalf("run with a dropped connection: %v, %+v", err, sum.Extracts[0].Incremental)
	}
	if after, _ := os.ReadFile(state); !bytes.Equal(before, after) {
		t.Fatal("a failed run moved the state")
	}
	if err := e.srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	sum, err = e.run(t, job, nil)
	wantRows(t, sum, err, 5)
	exactlyOnce(t, "csv", csvIDs(t, e.dir), 35)
	exactlyOnce(t, "parquet", parquetIDs(t, e.dir), 35)
}

// Why the window's bounds are typed as the column: rows 100 ns apart,
// bounded by a datetime2(7) parameter, split exactly; the same bound as a
// datetime parameter is rounded to 1/300 s on the wire and selects rows
// the window already holds.
func TestDatetimeParameterWouldRound(t *testing.T) {
	e := startIncEnv(t, 0, sampledb.Config{})
	e.insertAt(t, sampledb.EventsBase, 1, 2, 3)
	cfg, err := session.ParseConnString(e.connString())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := session.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bound := sampledb.EventsBase
	bound.Ticks += 2
	count := func(ti decode.TypeInfo) int64 {
		var c decode.Capture
		_, err := conn.Query(context.Background(), session.Query{SQL: "SELECT COUNT_BIG(*) FROM dbo.events WHERE ts > @lo",
			Params: []session.Param{{Name: "lo", Value: bound, Type: &ti}}}, &c)
		if err != nil {
			t.Fatal(err)
		}
		return c.Rows[0][0].(int64)
	}
	if n := count(decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}); n != 1 {
		t.Fatalf("ts > datetime2(7) bound: %d rows, want 1", n)
	}
	if n := count(decode.TypeInfo{Type: decode.TypeDateTimeN, Size: 8}); n != 3 {
		t.Fatalf("ts > datetime bound: %d rows; the bound rounds to the second's start, so all 3 rows were expected", n)
	}
}

// Rows inserted without pause while runs follow one another (during the
// high-watermark read, the count, the SELECT) are each exported by
// exactly one run.
func TestIncrementalUnderConcurrentInserts(t *testing.T) {
	for _, column := range []string{"ts", "rv", "id"} {
		t.Run(column, func(t *testing.T) {
			e := startIncEnv(t, 100, sampledb.Config{})
			job := e.job(column, "", engine.SinkConfig{Type: "csv", Options: map[string]any{"path": filepath.Join(e.dir, "csv") + "/"}})
			stop, done := make(chan struct{}), make(chan int64)
			go func() {
				var n int64
				for {
					select {
					case <-stop:
						done <- n
						return
					default:
					}
					if _, err := e.db.Insert("dbo", "events", []string{"kind"}, [][]any{{"c"}, {"c"}}); err != nil {
						t.Error(err)
					}
					n += 2
					time.Sleep(50 * time.Microsecond)
				}
			}()
			for range 8 {
				if _, err := e.run(t, job, nil); err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			added := <-done
			if _, err := e.run(t, job, nil); err != nil {
				t.Fatal(err)
			}
			files := csvIDs(t, e.dir)
			if len(files) < 9 {
				t.Fatalf("%d output files, want one per run", len(files))
			}
			t.Logf("%d rows added during %d runs", added, len(files))
			exactlyOnce(t, "csv", files, 100+added)
		})
	}
}
