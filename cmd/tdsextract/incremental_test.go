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

// run job.yaml twice with rows added in between: the second run exports
// only those, its summary and output say which window and which file;
// --backfill re-exports a range without touching the state, and a bad
// range is a usage error.
func TestRunIncrementalAndBackfill(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.events": 50}})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	job := writeFile(t, dir, "inc.yaml", fmt.Sprintf(`name: inc
state_dir: %s/state
source:
  connection: "sqlserver://sa@%s?database=sample&encrypt=disable"
  password_env: TEST_PW
extracts:
  - table: dbo.events
    incremental: {column: ts, overlap: 0s}
    sinks: [{type: csv, options: {path: %s/out/}}]
`, dir, srv.Addr(), dir))
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
