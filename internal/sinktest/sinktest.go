// Package sinktest holds test helpers shared by the sink packages: driving
// a sink through the real decoder over the sample database's rows.
package sinktest

import (
	"errors"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// StreamTable sends rows [0, rows) of tb through the real decoder
// (decode.Stream over pre-encoded COLMETADATA and ROW or NBCROW tokens, fed
// in blocks of 256 rows as a session would refill its buffer) into sink.
func StreamTable(t testing.TB, tb *sampledb.Table, sink decode.CellSink, rows int64, nbc bool) {
	t.Helper()
	st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20})
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
