package csv

import (
	"context"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// BenchmarkCSVSink decodes pre-encoded TDS rows (sampledb) with
// decode.Stream straight into the CSV sink writing a real file.
//
//	go test ./sinks/csv/ -run '^$' -bench CSVSink -benchtime 20x
func BenchmarkCSVSink(b *testing.B) {
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"poc48": 1 << 40, "wide601": 1 << 40, "lob": 1 << 40, "lineitem": 1 << 40}})
	for _, comp := range []string{"none", "zstd", "gzip"} {
		for _, sh := range []struct {
			name  string
			block int64
		}{{"poc48", 16384}, {"wide601", 256}, {"lob", 256}, {"lineitem", 16384}} {
			b.Run(sh.name+"/"+comp, func(b *testing.B) {
				tb, _ := db.Table("dbo", sh.name)
				buf := tb.AppendRows(nil, 0, sh.block, false)
				s, err := New(Config{Path: b.TempDir(), Compression: comp})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				_ = s.Open(ctx, sinks.ExtractInfo{Name: sh.name})
				st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20})
				_ = st.SetSink(s)
				run := func(p []byte) { sinktest.Feed(b, st, p) }
				run(decode.AppendColMetadata(nil, tb.Columns))
				run(buf) // warm up buffers and the compressor
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := sinktest.CPUTime()
				for i := 0; i < b.N; i++ {
					run(buf)
				}
				if _, err := s.Publish(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				sinktest.ReportRate(b, float64(b.N)*float64(sh.block), cpu0)
			})
		}
	}
}
