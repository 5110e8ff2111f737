package sinktest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/cputime"
)

// Feed decodes p, whole tokens, through st into its sink.
func Feed(t testing.TB, st *decode.Stream, p []byte) {
	t.Helper()
	for len(p) > 0 {
		n, _, err := st.Next(p)
		if err != nil && !errors.Is(err, decode.ErrNeedMore) {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("decoder made no progress")
		}
		p = p[n:]
	}
}

// CPUTime is the process's user+system CPU time: on a shared machine it is
// a steadier measure than wall time, and it counts the encoder goroutines.
func CPUTime() time.Duration { return cputime.Process() }

// ReportRate reports rows/s and, measured from cpu0 (a CPUTime),
// cpu-ns/row.
func ReportRate(b *testing.B, rows float64, cpu0 time.Duration) {
	b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
	if cpu := CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/rows, "cpu-ns/row")
	}
}

// DirEntries lists the names in dir, sorted.
func DirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Files lists the path of every file under dir, at any depth, in
// lexical order; none when dir does not exist.
func Files(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// CSVDataLines reads the CSV files, each with a header line, and returns
// their data lines, sorted: the rows of a split export, in an order that
// does not depend on how the parts were cut.
func CSVDataLines(t testing.TB, files ...string) []string {
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
