package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// TestSoakRandomFaults runs a partitioned export SOAK_RUNS times (5 by
// default; `make soak` runs 100), each with a fault injected at a random
// row of every result set (the connection dropped, a malformed row, a
// stall longer than the request deadline), then again on a healthy
// server: every time, the resumed output equals an uninterrupted run's,
// row for row and by the checksum of every value.
func TestSoakRandomFaults(t *testing.T) {
	runs := 5
	if s := os.Getenv("SOAK_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SOAK_RUNS=%q", s)
		}
		runs = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SOAK_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	srv, src := partitionServer(t, tdsserver.Faults{})
	base := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "xdg"))
	r := &Runner{Registry: csvRegistry(t), Sleep: func(context.Context, time.Duration) error { return nil }}
	job := func(dir string, count int) *JobConfig {
		return &JobConfig{Name: "soak", Source: src, Parallel: 4, StateDir: dir + "/state", Manifest: dir + "/manifest.json",
			Retry: RetryConfig{Attempts: 2, Initial: "1ms", Max: "2ms"},
			Extracts: []ExtractConfig{{Table: "dbo.poc48", Partition: map[string]any{"column": "id", "count": count}, Timeout: "2s",
				Sinks: []SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/out/"}}}}}}
	}
	ref := filepath.Join(base, "ref")
	if _, err := r.Run(context.Background(), job(ref, 4)); err != nil {
		t.Fatal(err)
	}
	want := readManifest(t, ref+"/manifest.json")
	wantRows := sinktest.CSVDataLines(t, want.Files()...)
	failedRuns := 0
	for i := range runs {
		var f tdsserver.Faults
		row := 1 + rng.Int64N(1500) // poc48 has 6000 rows: parts of 1000 to 2000
		switch rng.IntN(3) {
		case 0:
			f = tdsserver.Faults{CloseAfterRows: row}
		case 1:
			f = tdsserver.Faults{MalformedAtRow: row}
		case 2:
			f = tdsserver.Faults{StallAfterRows: row, Stall: 3 * time.Second} // past the 2s deadline
		}
		f.Table = "poc48"
		count := 3 + rng.IntN(4)
		dir := filepath.Join(base, strconv.Itoa(i))
		if err := srv.SetFaults(f); err != nil {
			t.Fatal(err)
		}
		_, err := r.Run(context.Background(), job(dir, count))
		if err != nil {
			failedRuns++
			if _, serr := os.Stat(dir + "/manifest.json"); serr == nil {
				t.Fatalf("run %d (%+v): failed with a manifest: %v", i, f, err)
			}
		}
		if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run(context.Background(), job(dir, count)); err != nil {
			t.Fatalf("run %d (%+v, %d parts): resumed run: %v", i, f, count, err)
		}
		got := readManifest(t, dir+"/manifest.json")
		if got.Extracts[0].Checksum != want.Extracts[0].Checksum || got.Extracts[0].Rows != want.Extracts[0].Rows {
			t.Fatalf("run %d (%+v, %d parts): %+v, want %+v", i, f, count, got.Extracts[0], want.Extracts[0])
		}
		if rows := sinktest.CSVDataLines(t, got.Files()...); !slices.Equal(rows, wantRows) {
			t.Fatalf("run %d (%+v, %d parts): the output differs from an uninterrupted run's", i, f, count)
		}
	}
	if failedRuns == 0 {
		t.Errorf("no run of %d failed: the faults did not fire", runs)
	}
}

// The checksum allocates nothing per row.
func TestChecksumNoAllocsPerRow(t *testing.T) {
	var c Checksum
	_ = c.Columns(nil, nil)
	text := []byte("some text value")
	allocs := testing.AllocsPerRun(1000, func() {
		c.Int(0, 42)
		c.Null(1)
		c.Bytes(2, text)
		c.BeginValue(3, int64(len(text)))
		c.Write(3, text)
		c.EndValue(3)
		c.DateTime(4, decode.DateTime{Days: 1, Ticks: 2})
		c.GUID(5, decode.GUID{1})
		_ = c.EndRow()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per row", allocs)
	}
	// Row order does not matter; a row twice does.
	var a, b Checksum
	row := func(c *Checksum, v int64) { c.Int(0, v); c.Bytes(1, text); _ = c.EndRow() }
	row(&a, 1)
	row(&a, 2)
	row(&b, 2)
	row(&b, 1)
	if a.Sum != b.Sum {
		t.Error("the checksum depends on row order")
	}
	row(&b, 1)
	if a.Sum == b.Sum {
		t.Error("a repeated row leaves the checksum unchanged")
	}
}
