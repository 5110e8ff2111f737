package engine

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
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

// dataLines reads every CSV file under dir, without headers, sorted.
func dataLines(t *testing.T, files ...string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		out = append(out, lines[1:]...)
	}
	slices.Sort(out)
	return out
}

// TestPartitionedExportEqualsWhole: a table split on a nullable datetime2
// column into 3 ranges and an IS NULL part, run 2 at a time, writes one CSV
// per part whose rows together are exactly those of the unpartitioned
// export: none lost (the NULL keys included), none twice.
func TestPartitionedExportEqualsWhole(t *testing.T) {
	_, src := partitionServer(t, tdsserver.Faults{})
	dir := t.TempDir()
	r := &Runner{Registry: csvRegistry(t)}
	whole := ExtractConfig{Table: "dbo.temporal", Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/whole/"}}}}
	sum, err := r.Run(context.Background(), &JobConfig{Name: "w", Source: src, Extracts: []ExtractConfig{whole}})
	if err != nil {
		t.Fatal(err)
	}
	want := dataLines(t, sum.Extracts[0].Sinks[0].Files...)

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
	if got := dataLines(t, files...); !slices.Equal(got, want) {
		t.Fatalf("partitioned export has %d rows, the whole %d, and they differ", len(got), len(want))
	}
}
