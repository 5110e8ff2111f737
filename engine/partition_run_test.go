package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/csv"
)

// partitionServer serves a small sample database for the partitioning
// tests and returns a job source for it.
func partitionServer(t *testing.T, faults tdsserver.Faults) (*tdsserver.Server, SourceConfig) {
	t.Helper()
	db := sampledb.New(sampledb.Config{Seed: 5, Rows: map[string]int64{"dbo.temporal": 4000, "dbo.poc48": 6000}})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Faults: faults, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	t.Setenv("ENGINE_TEST_PW", tdsserver.DefaultPassword)
	return srv, SourceConfig{Connection: secret.Secret("sqlserver://sa@" + srv.Addr() + "?database=sample&encrypt=disable"), PasswordEnv: "ENGINE_TEST_PW", Timeout: "1m"}
}

func csvRegistry(t *testing.T) *sinks.Registry {
	t.Helper()
	reg, err := sinks.NewRegistry(csv.Factory())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestPartitionedExportEqualsWhole: a table split on a nullable datetime2
// column into 3 ranges and an IS NULL part, run 2 at a time, writes one CSV
// per part whose rows together are exactly those of the unpartitioned
// export: none lost (the NULL keys included), none twice.
func TestPartitionedExportEqualsWhole(t *testing.T) {
	_, src := partitionServer(t, tdsserver.Faults{})
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	r := &Runner{Registry: csvRegistry(t)}
	whole := ExtractConfig{Table: "dbo.temporal", Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/whole/"}}}}
	sum, err := r.Run(context.Background(), &JobConfig{Name: "w", Source: src, Extracts: []ExtractConfig{whole}, Manifest: dir + "/whole.manifest.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := sinktest.CSVDataLines(t, sum.Extracts[0].Sinks[0].Files...)
	wholeSum := sum.Extracts[0].Checksum
	if wholeSum == "" || sum.Manifest != dir+"/whole.manifest.json" {
		t.Fatalf("checksum %q, manifest %q", wholeSum, sum.Manifest)
	}

	parted := ExtractConfig{Table: "dbo.temporal", Parallel: 2, Verify: "count",
		Partition: map[string]any{"column": "ts", "count": 3},
		Sinks:     []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/parts/{extract}-{part}.csv"}}}}
	sum, err = r.Run(context.Background(), &JobConfig{Name: "p", Source: src, Parallel: 4, Extracts: []ExtractConfig{parted}})
	if err != nil {
		t.Fatal(err)
	}
	es := sum.Extracts[0]
	if len(es.Units) != 4 || es.Rows != int64(len(want)) {
		t.Fatalf("%d units, %d rows; want 4 units, %d rows", len(es.Units), es.Rows, len(want))
	}
	var files []string
	for i, u := range es.Units {
		if len(u.Sinks) != 1 || len(u.Sinks[0].Files) != 1 || u.Range == "" || u.Verified != "count" {
			t.Fatalf("unit %d: %+v", i, u)
		}
		files = append(files, u.Sinks[0].Files[0])
	}
	if filepath.Base(files[3]) != "temporal-0004.csv" || !strings.Contains(es.Units[3].Range, "IS NULL") {
		t.Errorf("last part %s, range %q", files[3], es.Units[3].Range)
	}
	if got := sinktest.CSVDataLines(t, files...); !slices.Equal(got, want) {
		t.Fatalf("partitioned export has %d rows, the whole %d, and they differ", len(got), len(want))
	}
	// The parts' checksums add up to the whole table's, and the manifest,
	// written by default into the state directory, says so.
	if es.Checksum != wholeSum {
		t.Errorf("parts' checksum %s, whole table's %s", es.Checksum, wholeSum)
	}
	m := readManifest(t, sum.Manifest)
	if !m.Complete || len(m.Units) != 4 || m.Extracts[0].Checksum != wholeSum || m.Extracts[0].Rows != int64(len(want)) || len(m.Extracts[0].Files) != 4 {
		t.Errorf("manifest %+v", m)
	}
}

func readManifest(t *testing.T, path string) Manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRetryThenResume: with the server dropping the connection after 500
// rows of every result set, each unit larger than that is retried (on a
// fresh connection, after a backoff the summary reports) and still fails,
// the run fails without a manifest, and the units that finished are
// checkpointed. Run again once the server is healthy, only the missing
// units run; the outputs and the manifest's checksum then equal an
// uninterrupted run's.
func TestRetryThenResume(t *testing.T) {
	srv, src := partitionServer(t, tdsserver.Faults{CloseAfterRows: 500, Table: "temporal"})
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	var delays []time.Duration
	r := &Runner{Registry: csvRegistry(t), Sleep: func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil }}
	job := func() *JobConfig {
		return &JobConfig{Name: "r", Source: src, Parallel: 2, Retry: RetryConfig{Attempts: 2, Initial: "10ms", Max: "40ms"},
			StateDir: dir + "/st", Manifest: dir + "/out/manifest.json",
			Extracts: []ExtractConfig{{Table: "dbo.temporal", Partition: map[string]any{"column": "ts", "count": 6},
				Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/out/"}}}}}}
	}
	sum, err := r.Run(context.Background(), job())
	if err == nil {
		t.Fatal("run with a failing server succeeded")
	}
	var je *JobError
	if !errors.As(err, &je) || !je.Transient() {
		t.Errorf("failure not reported as transient: %v", err)
	}
	es := sum.Extracts[0]
	failedUnits, retried := 0, 0
	for _, u := range es.Units {
		if u.Error != "" {
			failedUnits++
			if u.Attempts != 2 || len(u.Retries) != 1 {
				t.Errorf("unit %s: %d attempts, retries %v", u.Unit, u.Attempts, u.Retries)
			}
		}
		retried += len(u.Retries)
	}
	if failedUnits == 0 || failedUnits == len(es.Units) || len(es.Retries) != retried || len(delays) != retried {
		t.Fatalf("%d of %d units failed, %d retries in the extract summary, %d slept", failedUnits, len(es.Units), len(es.Retries), len(delays))
	}
	for _, d := range delays {
		if d <= 0 || d > 10*time.Millisecond {
			t.Errorf("first retry delay %s, want within (0, 10ms]", d)
		}
	}
	if _, err := os.Stat(dir + "/out/manifest.json"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed run left a manifest: %v", err)
	}

	if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	sent := srv.Stats().RowsSent
	sum, err = r.Run(context.Background(), job())
	if err != nil {
		t.Fatal(err)
	}
	resumed, ran := 0, 0
	for _, u := range sum.Extracts[0].Units {
		if u.Resumed {
			resumed++
		} else {
			ran++
		}
	}
	if resumed != len(es.Units)-failedUnits || ran != failedUnits {
		t.Errorf("rerun: %d resumed, %d ran; want %d and %d", resumed, ran, len(es.Units)-failedUnits, failedUnits)
	}
	var finished int64
	for _, u := range es.Units {
		if u.Error == "" {
			finished += u.Rows
		}
	}
	// The rows of the finished units are not read again (the catalog's
	// few rows aside).
	if n := srv.Stats().RowsSent - sent; n > 4000-finished+200 {
		t.Errorf("rerun read %d rows; the missing units hold %d", n, 4000-finished)
	}

	// The same export, uninterrupted, in a state directory of its own.
	whole := job()
	whole.StateDir, whole.Manifest = dir+"/st2", dir+"/out2/manifest.json"
	whole.Extracts[0].Sinks[0].Options["path"] = dir + "/out2/"
	if _, err := r.Run(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	a, b := readManifest(t, dir+"/out/manifest.json"), readManifest(t, dir+"/out2/manifest.json")
	if a.Extracts[0].Checksum != b.Extracts[0].Checksum || a.Extracts[0].Rows != b.Extracts[0].Rows || a.Extracts[0].Rows != 4000 {
		t.Errorf("resumed run %+v, uninterrupted %+v", a.Extracts[0], b.Extracts[0])
	}
	var fa, fb []string
	for _, u := range a.Units {
		fa = append(fa, u.Files...)
	}
	for _, u := range b.Units {
		fb = append(fb, u.Files...)
	}
	if got, want := sinktest.CSVDataLines(t, fa...), sinktest.CSVDataLines(t, fb...); !slices.Equal(got, want) || len(got) != 4000 {
		t.Errorf("resumed output has %d rows, uninterrupted %d; equal %v", len(got), len(want), slices.Equal(got, want))
	}

	// The next run starts afresh, and its first act is to withdraw the
	// finished run's manifest: when it fails, no manifest vouches for
	// outputs it may have replaced in part.
	if err := srv.SetFaults(tdsserver.Faults{CloseAfterRows: 500, Table: "temporal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), job()); err == nil {
		t.Fatal("the failing next run succeeded")
	}
	if _, err := os.Stat(dir + "/out/manifest.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous run's manifest survived a failed new run: %v", err)
	}
}

// progressLog records progress events.
type progressLog struct {
	mu     sync.Mutex
	events []string
}

func (p *progressLog) add(format string, args ...any) {
	p.mu.Lock()
	p.events = append(p.events, fmt.Sprintf(format, args...))
	p.mu.Unlock()
}

func (p *progressLog) Start(ex string, _ int64, _ time.Time) { p.add("start %s", ex) }
func (p *progressLog) Update(string, int64, int64)           {}
func (p *progressLog) Finish(ex string, rows, _ int64, _ float64, err error) {
	p.add("finish %s %d %v", ex, rows, err == nil)
}
func (p *progressLog) Retry(ex string, attempt int, _ error, _ time.Duration) {
	p.add("retry %s %d", ex, attempt)
}

// A unit that fails transiently and succeeds on its second attempt is
// started once, reported retried once, and finished once with every row.
func TestRetriedUnitReportedOnce(t *testing.T) {
	srv, src := partitionServer(t, tdsserver.Faults{CloseAfterRows: 500, Table: "temporal"})
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	prog := &progressLog{}
	r := &Runner{Registry: csvRegistry(t), Progress: prog, Sleep: func(context.Context, time.Duration) error {
		return srv.SetFaults(tdsserver.Faults{}) // healthy for the next attempt
	}}
	job := &JobConfig{Name: "p", Source: src, Retry: RetryConfig{Attempts: 3, Initial: "1ms", Max: "2ms"},
		Extracts: []ExtractConfig{{Table: "dbo.temporal", Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/out/"}}}}}}
	sum, err := r.Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"start temporal", "retry temporal 1", "finish temporal 4000 true"}
	if !slices.Equal(prog.events, want) || sum.Extracts[0].Attempts != 2 {
		t.Errorf("events %q, want %q; %d attempts", prog.events, want, sum.Extracts[0].Attempts)
	}
}

// A request timeout is retried like a lost connection: the unit's second
// attempt, on a server that no longer stalls, exports every row, and the
// summary lists the timed-out attempt.
func TestRequestTimeoutIsRetried(t *testing.T) {
	srv, src := partitionServer(t, tdsserver.Faults{StallAfterRows: 100, Stall: 10 * time.Second, Table: "temporal"})
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	r := &Runner{Registry: csvRegistry(t), Sleep: func(context.Context, time.Duration) error { return srv.SetFaults(tdsserver.Faults{}) }}
	job := &JobConfig{Name: "p", Source: src, Retry: RetryConfig{Attempts: 2, Initial: "1ms", Max: "2ms"},
		Extracts: []ExtractConfig{{Table: "dbo.temporal", Timeout: "300ms", Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/out/"}}}}}}
	sum, err := r.Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	e := sum.Extracts[0]
	if e.Rows != 4000 || e.Attempts != 2 || len(e.Retries) != 1 || !strings.Contains(e.Retries[0].Error, "request timeout") {
		t.Errorf("%d rows, %d attempts, retries %+v", e.Rows, e.Attempts, e.Retries)
	}
}
