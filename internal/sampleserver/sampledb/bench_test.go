package sampledb

import (
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/cputime"
)

// cpuTime is the process's user+system CPU time: on a shared machine it is
// a steadier measure than wall time (the benchmark runs one goroutine).
func cpuTime() time.Duration { return cputime.Process() }

// BenchmarkAppendRows measures the pre-encoded path per shape, 1024 rows
// per AppendRows call into a reused buffer. Reports rows/s and MB/s of wire
// bytes (b.SetBytes) by wall time, and CPU ns/row and CPU rows/s by process
// CPU time (steadier when other processes share the cores).
//
//	go test ./internal/sampleserver/sampledb/ -run '^$' -bench AppendRows -benchtime 200x
func BenchmarkAppendRows(b *testing.B) {
	db := New(Config{Seed: 1, Rows: map[string]int64{"poc48": 1 << 40, "odbc5": 1 << 40, "wide601": 1 << 40,
		"lob": 1 << 40, "lob_nvarchar": 1 << 40, "temporal": 1 << 40, "lineitem": 1 << 40}})
	for _, c := range []struct {
		name  string
		nbc   bool
		batch int64
	}{
		{"poc48", false, 1024}, {"poc48", true, 1024}, {"odbc5", false, 1024}, {"wide601", false, 64},
		{"lob", false, 256}, {"lob_nvarchar", false, 4}, {"temporal", false, 1024}, {"lineitem", false, 1024},
	} {
		name := c.name
		if c.nbc {
			name += "/nbc"
		}
		b.Run(name, func(b *testing.B) {
			tb, _ := db.Table("dbo", c.name)
			buf := tb.AppendRows(nil, 0, c.batch, c.nbc)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			var row int64
			for b.Loop() {
				buf = tb.AppendRows(buf[:0], row, row+c.batch, c.nbc)
				row += c.batch
			}
			rows := float64(b.N) * float64(c.batch)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/rows, "cpu-ns/row")
				b.ReportMetric(rows/cpu.Seconds(), "cpu-rows/s")
			}
		})
	}
}
