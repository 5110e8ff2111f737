package plugins

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/sinks"
)

// nopPlugin takes batches and does nothing with them: the host's side
// of the boundary alone.
type nopPlugin struct{ rows int64 }

func (n *nopPlugin) Open(context.Context, OpenRequest) error { return nil }
func (n *nopPlugin) WriteBatch(_ context.Context, rec arrow.RecordBatch) error {
	n.rows += rec.NumRows()
	return nil
}
func (n *nopPlugin) Publish(context.Context) (Stats, error) { return Stats{Rows: n.rows}, nil }
func (n *nopPlugin) Abort(context.Context) error            { return nil }

// encodedTable is a table's COLMETADATA, rows and DONE as the server
// sends them, built once.
func encodedTable(b *testing.B, shape string, rows int64) []byte {
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo." + shape: rows}})
	tb, _ := db.Table("dbo", shape)
	out := decode.AppendColMetadata(nil, tb.Columns)
	out = tb.AppendRows(out, 0, rows, false)
	return decode.Done{Token: decode.TokenDone, Status: decode.DoneCount, RowCount: uint64(rows)}.Append(out)
}

func decodeAll(b *testing.B, stream []byte, sink decode.CellSink) {
	st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20})
	if err := st.SetSink(sink); err != nil {
		b.Fatal(err)
	}
	for p := stream; len(p) > 0; {
		n, _, err := st.Next(p)
		if err != nil && !errors.Is(err, decode.ErrNeedMore) {
			b.Fatal(err)
		}
		p = p[n:]
	}
}

// BenchmarkHostBatches is the host's cost of laying rows out as Arrow
// batches (in process, to a plugin that does nothing), per row, beside
// the decoder alone into a sink that keeps nothing (decode.Capture's
// discard mode is not used: nopCells takes every value).
func BenchmarkHostBatches(b *testing.B) {
	for _, shape := range []string{"poc48", "lineitem"} {
		stream := encodedTable(b, shape, 200000)
		b.Run(shape+"/arrow", func(b *testing.B) {
			f, _ := InProcess(Plugin{Name: "nop", New: func() Sink { return &nopPlugin{} }})
			b.SetBytes(int64(len(stream)))
			for i := 0; i < b.N; i++ {
				s, _ := f.New(nil)
				_ = s.Open(context.Background(), sinks.ExtractInfo{Name: shape})
				decodeAll(b, stream, s)
				if _, err := s.Publish(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200000, "ns/row")
		})
	}
}
