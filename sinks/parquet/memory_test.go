//go:build linux

package parquet

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// TestParquetMemoryBound streams many lineitem rows through the decoder
// into the sink with the default options and checks the process's peak RSS
// against the documented bound. Opt-in (it writes a large file):
//
//	PARQUET_MEMTEST_ROWS=10000000 go test ./sinks/parquet/ -run MemoryBound -v -count=1
func TestParquetMemoryBound(t *testing.T) {
	n, _ := strconv.ParseInt(os.Getenv("PARQUET_MEMTEST_ROWS"), 10, 64)
	if n <= 0 {
		t.Skip("opt-in: set PARQUET_MEMTEST_ROWS (e.g. 10000000)")
	}
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"lineitem": n}})
	tb, _ := db.Table("dbo", "lineitem")
	s, err := New(Config{Path: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = s.Open(ctx, sinks.ExtractInfo{Name: "lineitem"})
	st := decode.NewStream(decode.StreamOptions{})
	_ = st.SetSink(s)
	run := func(p []byte) { sinktest.Feed(t, st, p) }
	run(decode.AppendColMetadata(nil, tb.Columns))
	var buf []byte
	for from := int64(0); from < n; from += 4096 {
		buf = tb.AppendRows(buf[:0], from, min(from+4096, n), false)
		run(buf)
	}
	stats, err := s.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	rss := int64(ru.Maxrss) << 10
	c := s.Config()
	// (parallel+1) batches of ~1.125 × row_group_bytes, the compressed row
	// groups in flight (≤ their size), page buffers, plus 96 MiB for the
	// Go runtime, the test binary and the decoder.
	bound := int64(c.Parallel+1)*c.RowGroupBytes*9/8 + int64(c.Parallel)*c.RowGroupBytes + 96<<20
	t.Logf("%d rows, %d bytes written, %d row groups, peak RSS %d MiB, bound %d MiB (parallel %d, row_group_bytes %d MiB)",
		stats.Rows, stats.Bytes, s.groups, rss>>20, bound>>20, c.Parallel, c.RowGroupBytes>>20)
	if rss > bound {
		t.Fatalf("peak RSS %d MiB exceeds the documented bound %d MiB", rss>>20, bound>>20)
	}
}
