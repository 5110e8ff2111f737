package csv

import (
	"testing"

	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// BenchmarkCSVSink decodes pre-encoded TDS rows (sampledb) with
// decode.Stream straight into the CSV sink writing a real file.
//
//	go test ./sinks/csv/ -run '^$' -bench CSVSink -benchtime 20x
func BenchmarkCSVSink(b *testing.B) {
	db := sinktest.BenchDB()
	for _, comp := range []string{"none", "zstd", "gzip"} {
		for _, sh := range sinktest.BenchShapes {
			b.Run(sh.Name+"/"+comp, func(b *testing.B) {
				tb, _ := db.Table("dbo", sh.Name)
				s, err := New(Config{Path: b.TempDir(), Compression: comp})
				if err != nil {
					b.Fatal(err)
				}
				sinktest.BenchSink(b, s, tb, sh.Block, nil) // one block warms up the buffers and the compressor
			})
		}
	}
}
