package sinktest

import (
	"context"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/sinks"
)

// BenchShapes are the sample tables the sink benchmarks run, each with the
// rows one iteration decodes: fewer of the wide and LOB rows, so that an
// iteration of every shape moves a similar amount of data.
var BenchShapes = []struct {
	Name  string
	Block int64
}{
	{"poc48", 16384}, {"wide601", 256}, {"lob", 256}, {"lineitem", 16384},
}

// BenchDB is the sample database the sink benchmarks read: every table of
// BenchShapes, with no end to its rows.
func BenchDB() *sampledb.DB {
	rows := make(map[string]int64, len(BenchShapes))
	for _, sh := range BenchShapes {
		rows[sh.Name] = 1 << 40
	}
	return sampledb.New(sampledb.Config{Seed: 1, Rows: rows})
}

// BenchSink measures s in its steady state: it opens s, decodes tb's
// COLMETADATA and then, off the clock, calls warm with a function that
// decodes one block of block pre-encoded rows into s (one block when warm
// is nil: buffers and compressors reach their size), then times b.N
// blocks and the Publish. It reports bytes, allocations, rows/s and
// cpu-ns/row.
func BenchSink(b *testing.B, s sinks.Sink, tb *sampledb.Table, block int64, warm func(feed func())) {
	b.Helper()
	buf := tb.AppendRows(nil, 0, block, false)
	ctx := context.Background()
	if err := s.Open(ctx, sinks.ExtractInfo{Name: tb.Name}); err != nil {
		b.Fatal(err)
	}
	st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
	if err := st.SetSink(s); err != nil {
		b.Fatal(err)
	}
	Feed(b, st, decode.AppendColMetadata(nil, tb.Columns))
	feed := func() { Feed(b, st, buf) }
	if warm == nil {
		feed()
	} else {
		warm(feed)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := CPUTime()
	for i := 0; i < b.N; i++ {
		feed()
	}
	if _, err := s.Publish(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	ReportRate(b, float64(b.N)*float64(block), cpu0)
}
