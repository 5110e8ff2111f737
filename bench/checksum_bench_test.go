package main

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// BenchmarkSumSink decodes in-memory shapes into the tdsextract leg's
// checksum sink: the harness's per-row cost of decode plus checksum,
// without the engine.
//
//	go test ./bench -run '^$' -bench SumSink -benchtime 20x
func BenchmarkSumSink(b *testing.B) {
	db := sampledb.New(sampledb.Config{Seed: 1})
	for _, name := range []string{"poc48", "odbc5", "temporal", "lineitem"} {
		t, _ := db.Table("dbo", name)
		n := min(t.Rows, 4096)
		meta := decode.AppendColMetadata(nil, t.Columns)
		rows := t.AppendRows(nil, 0, n, false)
		b.Run(name, func(b *testing.B) {
			sink := &sumSink{}
			s := decode.NewStream(decode.StreamOptions{})
			s.SetSink(sink)
			if _, _, err := s.Next(meta); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(rows)))
			b.ReportAllocs()
			for b.Loop() {
				for buf := rows; len(buf) > 0; {
					k, _, err := s.Next(buf)
					if err != nil {
						b.Fatal(err)
					}
					buf = buf[k:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
		})
	}
}
