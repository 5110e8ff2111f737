package parquet

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/cputime"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// BenchmarkParquetExtract times whole extracts as the bench harness's
// parquet mode does: a fresh sink with its defaults, the source's row
// count passed as the engine passes it, every row decoded from
// pre-encoded TDS into the sink and the file published (to tmpfs when
// there is one). Fixed per-file costs (encoding trials, writer setup,
// first-batch growth, the footer) count here, unlike in
// BenchmarkParquetSink's steady state.
//
//	go test ./sinks/parquet/ -run '^$' -bench Extract -cpu 2 -benchtime 20x
//
// decode-only/<shape> is the floor of each: the decoder alone. dec-ns/row
// is the CPU time of the goroutine that decodes and calls the sink (the
// benchmark's, locked to its thread while it feeds the rows), which bounds
// an extract when the encoders keep up.
func BenchmarkParquetExtract(b *testing.B) {
	const rows = 200000
	shapes := []string{"sales.order_lines", "sales.orders", "dbo.lineitem", "dbo.temporal"}
	over := map[string]int64{}
	for _, sh := range shapes {
		over[sh] = rows
	}
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: over})
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = b.TempDir()
	}
	for _, sh := range shapes {
		schema, name, _ := strings.Cut(sh, ".")
		tb, ok := db.Table(schema, name)
		if !ok {
			b.Fatalf("no table %s", sh)
		}
		wire := decode.AppendColMetadata(nil, tb.Columns)
		wire = tb.AppendRows(wire, 0, rows, false)
		// the floor: the same rows decoded into decode.Nop, which keeps
		// nothing (its Reserve declines, so strings arrive as Writes)
		b.Run("decode-only/"+sh, func(b *testing.B) {
			b.SetBytes(int64(len(wire)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
				if err := st.SetSink(decode.Nop{}); err != nil {
					b.Fatal(err)
				}
				sinktest.Feed(b, st, wire)
			}
			b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(sh, func(b *testing.B) {
			tmp, err := os.MkdirTemp(dir, "tdsx-extract-bench-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(tmp)
			ctx := context.Background()
			b.SetBytes(int64(len(wire)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := sinktest.CPUTime()
			ms := make([]float64, 0, b.N)
			var dec time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				cfg, err := ParseConfig(map[string]any{"path": tmp + "/out.parquet", "if_exists": "replace"})
				if err != nil {
					b.Fatal(err)
				}
				s, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Open(ctx, sinks.ExtractInfo{Name: tb.Name, EstimatedRows: rows}); err != nil {
					b.Fatal(err)
				}
				st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
				if err := st.SetSink(s); err != nil {
					b.Fatal(err)
				}
				runtime.LockOSThread()
				d0, _ := cputime.Thread()
				sinktest.Feed(b, st, wire)
				d1, _ := cputime.Thread()
				runtime.UnlockOSThread()
				dec += d1 - d0
				if _, err := s.Publish(ctx); err != nil {
					b.Fatal(err)
				}
				ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
			}
			b.StopTimer()
			sinktest.ReportRate(b, float64(b.N)*rows, cpu0)
			// on a shared machine the fastest and the median extract say
			// more than the mean
			slices.Sort(ms)
			b.ReportMetric(ms[0], "min-ms")
			b.ReportMetric(ms[len(ms)/2], "med-ms")
			if dec > 0 {
				b.ReportMetric(float64(dec.Nanoseconds())/(float64(b.N)*rows), "dec-ns/row")
			}
		})
	}
}
