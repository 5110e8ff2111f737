package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// eventsJob starts a sample server whose dbo.events has 50 rows and writes
// a job exporting it incrementally on ts to CSV under dir/out, with the
// job-level YAML job and the extract-level YAML extract added.
func eventsJob(t *testing.T, name, job, extract string) (*tdsserver.Server, string, string) {
	t.Helper()
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.events": 50}})
	srv := startSampleServer(t, tdsserver.Config{DB: db})
	dir := t.TempDir()
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	if extract != "" {
		extract = "\n    " + extract
	}
	path := writeFile(t, dir, "inc.yaml", fmt.Sprintf(`name: %s
state_dir: %s/state
source:
  connection: "sqlserver://sa@%s?database=sample&encrypt=disable"
  password_env: TEST_PW
%s
extracts:
  - table: dbo.events
    incremental: {column: ts, overlap: 0s}%s
    sinks: [{type: csv, options: {path: %s/out/}}]
`, name, dir, srv.Addr(), job, extract, dir))
	return srv, dir, path
}

// run job.yaml twice with rows added in between: the second run exports
// only those, its summary and output say which window and which file;
// --backfill re-exports a range without touching the state, and a bad
// range is a usage error.
func TestRunIncrementalAndBackfill(t *testing.T) {
	srv, dir, job := eventsJob(t, "inc", "", "")
	run := func(args ...string) (engine.Summary, string) {
		t.Helper()
		sum := filepath.Join(dir, "summary.json")
		code, out, errOut := runCLI(t, append([]string{"run", "--summary-json", sum, job}, args...)...)
		var s engine.Summary
		b, _ := os.ReadFile(sum)
		if code != 0 || json.Unmarshal(b, &s) != nil {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		return s, out
	}
	s, _ := run()
	if s.Extracts[0].Rows != 50 {
		t.Fatalf("first run: %d rows", s.Extracts[0].Rows)
	}
	if _, err := srv.Insert("dbo", "events", []string{"kind"}, [][]any{{"a"}, {"b"}}); err != nil {
		t.Fatal(err)
	}
	s, out := run()
	e := s.Extracts[0]
	if e.Rows != 2 || e.Incremental == nil || !e.Incremental.Committed ||
		e.Incremental.Window != "(2026-01-01 00:00:49.0000000, 2026-01-01 00:00:49.0000002]" {
		t.Fatalf("second run: %d rows, %+v\n%s", e.Rows, e.Incremental, out)
	}
	if len(e.Sinks) != 1 || !strings.HasSuffix(e.Sinks[0].Files[0], "events.run-000002.csv") {
		t.Fatalf("second run's files: %+v", e.Sinks)
	}
	if !strings.Contains(out, "ts in (2026-01-01 00:00:49.0000000, 2026-01-01 00:00:49.0000002], state saved to") {
		t.Errorf("summary does not show the window and the state:\n%s", out)
	}
	state := filepath.Join(dir, "state", "events.watermark.json")
	before, _ := os.ReadFile(state)
	s, _ = run("--backfill", "2026-01-01 00:00:10..2026-01-01 00:00:20")
	if s.Extracts[0].Rows != 10 || !s.Extracts[0].Incremental.Backfill {
		t.Fatalf("backfill: %+v", s.Extracts[0])
	}
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Fatalf("backfill changed the state:\n%s\n%s", before, after)
	}
	// inspect shows the window a run ANDs in and where the state is.
	code, out, errOut := runCLI(t, "inspect", job)
	if code != 0 || !strings.Contains(out, "[ts] > @wm_lo AND [ts] <= @wm_hi") || !strings.Contains(out, "watermark 2026-01-01 00:00:49.0000002 after 2 runs") {
		t.Fatalf("inspect: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "run", job, "--backfill", "2026-01-01")
	if code != exitConfig || !strings.Contains(errOut, "FROM..TO") {
		t.Fatalf("bad --backfill: exit %d: %s", code, errOut)
	}
}

// incrementalIDs reads the first column (id) of every CSV file under dir.
func incrementalIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CSV files in %s: %v", dir, err)
	}
	ids := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		for _, l := range lines[1:] {
			id, _, _ := strings.Cut(l, ",")
			ids[id]++
		}
	}
	return ids
}

// onceEach fails unless ids holds exactly 1..n, each once.
func onceEach(t *testing.T, ids map[string]int, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if c := ids[fmt.Sprint(i)]; c != 1 {
			t.Errorf("id %d exported %d times", i, c)
		}
	}
	if len(ids) != n {
		t.Errorf("%d distinct ids exported, want %d", len(ids), n)
	}
}

// An incremental extract split into key ranges and over processes: plan
// fixes the window (rows inserted after it, 100 ns later, are not in it,
// and planning again shows the same window), each run --unit share
// exports that window, the share that finishes the run writes the
// manifest and then the watermark, commit again changes nothing, and
// the next run, partitioned in one process, exports exactly the rows
// inserted since: every row once over both runs.
func TestPartitionedIncrementalAcrossProcesses(t *testing.T) {
	srv, dir, job := eventsJob(t, "incparts", "", "partition: {column: id, count: 3}")
	cli := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, args...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out
	}
	state := filepath.Join(dir, "state", "events.watermark.json")
	const window1 = "ts in (-inf, 2026-01-01 00:00:49.0000000], fixed for this run"
	if out := cli(0, "plan", job, "--run-id", "r1"); !strings.Contains(out, window1) || !strings.Contains(out, "3 units") {
		t.Fatalf("plan:\n%s", out)
	}
	insert := func(n int) {
		t.Helper()
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = []any{"late"}
		}
		if _, err := srv.Insert("dbo", "events", []string{"kind"}, rows); err != nil {
			t.Fatal(err)
		}
	}
	insert(2) // ts 49.0000001 and .0000002: after the window
	if out := cli(0, "plan", job, "--run-id", "r1"); !strings.Contains(out, window1) {
		t.Fatalf("second plan does not reuse the window:\n%s", out)
	}
	if out := cli(0, "run", job, "--run-id", "r1", "--unit", "0/2"); !strings.Contains(out, "state saved when the run is committed") {
		t.Errorf("first share's summary:\n%s", out)
	}
	if _, err := os.Stat(state); err == nil {
		t.Fatal("a share of an unfinished run saved the watermark")
	}
	insert(1)
	if out := cli(0, "run", job, "--run-id", "r1", "--unit", "1/2"); !strings.Contains(out, "state saved to "+state) || !strings.Contains(out, "manifest ") {
		t.Errorf("the share that completes the run:\n%s", out)
	}
	saved, _ := os.ReadFile(state)
	if !strings.Contains(string(saved), `"watermark": "2026-01-01 00:00:49.0000000"`) || !strings.Contains(string(saved), `"runs": 1`) {
		t.Fatalf("state after the run:\n%s", saved)
	}
	cli(0, "commit", job, "--run-id", "r1")
	if again, _ := os.ReadFile(state); string(again) != string(saved) {
		t.Errorf("commit of a committed run changed the state:\n%s\n%s", saved, again)
	}
	onceEach(t, incrementalIDs(t, filepath.Join(dir, "out")), 50)

	out := cli(0, "run", job)
	if !strings.Contains(out, "ts in (2026-01-01 00:00:49.0000000, 2026-01-01 00:00:49.0000003], state saved to") {
		t.Errorf("second run:\n%s", out)
	}
	onceEach(t, incrementalIDs(t, filepath.Join(dir, "out")), 53)
}

// A unit of a partitioned incremental run that fails leaves the watermark
// where it was; the run resumed exports the failed part in the same
// window (not a newer one), then saves the watermark: every row once.
func TestIncrementalFailedUnitKeepsWatermark(t *testing.T) {
	srv, dir, job := eventsJob(t, "incfail", "retry: {attempts: 1}", `partition: {predicates: ["id <= 60", "id > 60"]}`)
	if code, out, errOut := runCLI(t, "run", job); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	state := filepath.Join(dir, "state", "events.watermark.json")
	before, _ := os.ReadFile(state)
	rows := make([][]any, 30)
	for i := range rows {
		rows[i] = []any{"new"}
	}
	if _, err := srv.Insert("dbo", "events", []string{"kind"}, rows); err != nil {
		t.Fatal(err)
	}
	// ids 51..80: 10 in the first part, 20 in the second, which breaks.
	if err := srv.SetFaults(tdsserver.Faults{MalformedAtRow: 15, Table: "events"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "run", job)
	if code == 0 || !strings.Contains(out, "FAILED") {
		t.Fatalf("run with a failing part: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Fatalf("a failed unit moved the watermark:\n%s\n%s", before, after)
	}
	if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	// Rows inserted now are after the run's window: the next run's.
	if _, err := srv.Insert("dbo", "events", []string{"kind"}, [][]any{{"later"}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "run", job)
	if code != 0 || !strings.Contains(out, "finished by an earlier run") ||
		!strings.Contains(out, "ts in (2026-01-01 00:00:49.0000000, 2026-01-01 00:00:49.0000030], state saved to") {
		t.Fatalf("resumed run: exit %d\n%s%s", code, out, errOut)
	}
	onceEach(t, incrementalIDs(t, filepath.Join(dir, "out")), 80)
	if code, out, errOut = runCLI(t, "run", job); code != 0 || !strings.Contains(out, "(2026-01-01 00:00:49.0000030, 2026-01-01 00:00:49.0000031]") {
		t.Fatalf("next run: exit %d\n%s%s", code, out, errOut)
	}
	onceEach(t, incrementalIDs(t, filepath.Join(dir, "out")), 81)
}
