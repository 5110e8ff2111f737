// Package sinktest holds test helpers shared by the sink packages: driving
// a sink through the real decoder over the sample database's rows.
package sinktest

import (
	"context"
	"errors"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/sinks"
)

// ExportTable is one extract of rows [0, rows) of tb into s, as the
// engine runs it: Open with info, the rows through StreamTable, Publish
// (and Abort when Publish fails, before the test fails).
func ExportTable(t testing.TB, s sinks.Sink, info sinks.ExtractInfo, tb *sampledb.Table, rows int64, nbc bool) sinks.Stats {
	t.Helper()
	ctx := context.Background()
	if err := s.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	StreamTable(t, tb, s, rows, nbc)
	st, err := s.Publish(ctx)
	if err != nil {
		_ = s.Abort(ctx)
		t.Fatal(err)
	}
	return st
}

// StreamTable sends rows [0, rows) of tb through the real decoder
// (decode.Stream over pre-encoded COLMETADATA and ROW or NBCROW tokens, fed
// in blocks of 256 rows as a session would refill its buffer) into sink.
func StreamTable(t testing.TB, tb *sampledb.Table, sink decode.CellSink, rows int64, nbc bool) {
	t.Helper()
	st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
	if err := st.SetSink(sink); err != nil {
		t.Fatal(err)
	}
	var pending []byte
	feed := func(b []byte) {
		pending = append(pending, b...)
		for len(pending) > 0 {
			n, _, err := st.Next(pending)
			pending = pending[n:]
			if errors.Is(err, decode.ErrNeedMore) {
				break
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
		}
		pending = append([]byte(nil), pending...)
	}
	feed(decode.AppendColMetadata(nil, tb.Columns))
	var buf []byte
	const chunk = 256
	for from := int64(0); from < rows; from += chunk {
		buf = tb.AppendRows(buf[:0], from, min(from+chunk, rows), nbc)
		feed(buf)
	}
	feed(decode.Done{Token: decode.TokenDone, Status: decode.DoneCount, RowCount: uint64(rows)}.Append(nil))
	if len(pending) != 0 {
		t.Fatalf("%d bytes left undecoded", len(pending))
	}
}
