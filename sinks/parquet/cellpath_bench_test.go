package parquet

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/cputime"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// BenchmarkParquetCellPath times the decoding goroutine's per-row work
// alone: pre-encoded rows decoded into a sink whose fill batch is emptied
// after each block instead of encoded, so nothing else runs and no
// column grows (one thread: no streaming jobs, no early trials). It is
// the part of BenchmarkParquetExtract that bounds a narrow table with two
// threads, free of the encoders' noise. dec-ns/row is the goroutine's
// thread CPU time, steadier than ns/row on a shared machine.
//
//	go test ./sinks/parquet/ -run '^$' -bench CellPath -cpu 1 -count 10
func BenchmarkParquetCellPath(b *testing.B) {
	const rows = 50000
	shapes := []string{"sales.order_lines", "sales.orders", "dbo.lineitem"}
	over := map[string]int64{}
	for _, sh := range shapes {
		over[sh] = rows
	}
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: over})
	for _, sh := range shapes {
		tb, ok := db.Table(splitName(sh))
		if !ok {
			b.Fatalf("no table %s", sh)
		}
		wire := decode.AppendColMetadata(nil, tb.Columns)
		wire = tb.AppendRows(wire, 0, rows, false)
		b.Run(sh, func(b *testing.B) {
			s, err := New(Config{Path: b.TempDir() + "/out.parquet"})
			if err != nil {
				b.Fatal(err)
			}
			s.threads, s.chunk = 1, math.MaxInt64
			if err := s.Open(context.Background(), sinks.ExtractInfo{Name: tb.Name}); err != nil {
				b.Fatal(err)
			}
			feed := func() {
				st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
				if err := st.SetSink(s); err != nil {
					b.Fatal(err)
				}
				sinktest.Feed(b, st, wire)
				if s.groups != 0 {
					b.Fatal("a row group was handed off")
				}
				s.fill.reset()
				s.fileRows = 0
			}
			feed() // the columns grow to their size once
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			th0, _ := cputime.Thread()
			for i := 0; i < b.N; i++ {
				feed()
			}
			th1, _ := cputime.Thread()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*rows), "ns/row")
			if th1 > th0 {
				b.ReportMetric(float64((th1-th0).Nanoseconds())/(float64(b.N)*rows), "dec-ns/row")
			}
		})
	}
}

func splitName(sh string) (schema, name string) {
	for i := range sh {
		if sh[i] == '.' {
			return sh[:i], sh[i+1:]
		}
	}
	return "dbo", sh
}
