package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// TestPartitionedExportStringKey exports dbo.codes, clustered on a varchar
// key whose values come in spellings its case-insensitive collation holds
// equal ('kiwi-7', 'KIWI-7', 'Kiwi-7', 'kiwi-7  ') and with one value in
// an eighth of the rows, whole and partitioned: on the clustered key
// (every key read), and on a nullable nvarchar column through TABLESAMPLE.
// The parts' rows together are exactly the whole export's, none twice (the
// rows differ in their id), their checksums add up to the whole table's,
// and each part's count verifies against the source.
func TestPartitionedExportStringKey(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 31, Rows: map[string]int64{"dbo.codes": 5000}})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	t.Setenv("ENGINE_TEST_PW", tdsserver.DefaultPassword)
	src := SourceConfig{Connection: secret.Secret("sqlserver://sa@" + srv.Addr() + "?database=sample&encrypt=disable"), PasswordEnv: "ENGINE_TEST_PW", Timeout: "1m"}
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	r := &Runner{Registry: csvRegistry(t)}
	whole := ExtractConfig{Table: "dbo.codes", Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/whole/"}}}}
	sum, err := r.Run(context.Background(), &JobConfig{Name: "w", Source: src, Extracts: []ExtractConfig{whole}, Manifest: dir + "/whole.manifest.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := sinktest.CSVDataLines(t, sum.Extracts[0].Sinks[0].Files...)
	wholeSum := sum.Extracts[0].Checksum
	if len(want) != 5000 || wholeSum == "" {
		t.Fatalf("whole export: %d rows, checksum %q", len(want), wholeSum)
	}
	for i, tc := range []struct {
		partition map[string]any
		units     int
	}{
		{map[string]any{"auto": true, "count": 6}, 6},
		{map[string]any{"column": "ncode", "count": 5, "boundaries": "sample", "sample_rows": 900}, 6},
	} {
		parted := ExtractConfig{Table: "dbo.codes", Parallel: 3, Verify: "count", Partition: tc.partition,
			Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": fmt.Sprintf("%s/parts%d/{extract}-{part}.csv", dir, i)}}}}
		sum, err := r.Run(context.Background(), &JobConfig{Name: fmt.Sprintf("p%d", i), Source: src, Parallel: 3, Extracts: []ExtractConfig{parted}})
		if err != nil {
			t.Fatal(err)
		}
		es := sum.Extracts[0]
		if len(es.Units) != tc.units || es.Rows != int64(len(want)) {
			t.Fatalf("%v: %d units, %d rows; want %d units, %d rows", tc.partition, len(es.Units), es.Rows, tc.units, len(want))
		}
		var files, ranges []string
		for k, u := range es.Units {
			if len(u.Sinks) != 1 || len(u.Sinks[0].Files) != 1 || u.Range == "" || u.Verified != "count" || u.Rows == 0 {
				t.Fatalf("%v: unit %d: %+v", tc.partition, k, u)
			}
			files = append(files, u.Sinks[0].Files[0])
			ranges = append(ranges, fmt.Sprintf("%s: %d rows", u.Range, u.Rows))
		}
		got := sinktest.CSVDataLines(t, files...)
		if len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("%v: a row in two parts", tc.partition)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v: partitioned export has %d rows, the whole %d, and they differ", tc.partition, len(got), len(want))
		}
		if es.Checksum != wholeSum {
			t.Errorf("%v: parts' checksum %s, whole table's %s", tc.partition, es.Checksum, wholeSum)
		}
		t.Logf("%v:\n%s", tc.partition, strings.Join(ranges, "\n"))
	}
}
