package decode_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// feedChunks decodes wire handed over in pieces of random size (as a
// network read would), returning the rows the EventRow events counted and
// how many events there were.
func feedChunks(t *testing.T, st *decode.Stream, wire []byte, rng *rand.Rand, maxChunk int) (rows, events int) {
	t.Helper()
	var buf []byte
	for len(wire) > 0 || len(buf) > 0 {
		n, ev, err := st.Next(buf)
		buf = buf[n:]
		switch {
		case errors.Is(err, decode.ErrNeedMore):
			if len(wire) == 0 {
				t.Fatalf("decoder wants more after the end (%d bytes left)", len(buf))
			}
			k := min(len(wire), 1+rng.IntN(maxChunk))
			buf = append(buf, wire[:k]...)
			wire = wire[k:]
		case err != nil:
			t.Fatal(err)
		case ev == decode.EventRow:
			if st.EventRows < 1 {
				t.Fatalf("EventRow with EventRows %d", st.EventRows)
			}
			rows += st.EventRows
			events++
		}
	}
	return rows, events
}

// With RowBatch, one Next call completes several rows; the sink must see
// exactly what it sees one row per call, and EventRows must add up to the
// rows, whether the bytes arrive whole or in pieces that split rows, null
// bitmaps and streamed values anywhere.
func TestRowBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tb := range benchDB.Tables() {
		n := min(tb.Rows, 200)
		for _, nbc := range []bool{false, true} {
			wire := decode.AppendColMetadata(nil, tb.Columns)
			wire = tb.AppendRows(wire, 0, n, nbc)
			wire = append(wire, decode.TokenDone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
			want := &decode.Capture{}
			st := decode.NewStream(decode.StreamOptions{})
			st.SetSink(want)
			if rows, _ := feedChunks(t, st, wire, rng, len(wire)); int64(rows) != n {
				t.Fatalf("%s: %d rows one at a time, want %d", tb.Name, rows, n)
			}
			for _, batch := range []int{2, 7, 1 << 20} {
				for _, chunk := range []int{len(wire), 97, 9} {
					got := &lendCapture{}
					st := decode.NewStream(decode.StreamOptions{RowBatch: batch})
					st.SetSink(got)
					rows, events := feedChunks(t, st, wire, rng, chunk)
					if int64(rows) != n || st.Rows != n {
						t.Fatalf("%s nbc=%v batch %d chunk %d: events counted %d rows, stream %d, want %d", tb.Name, nbc, batch, chunk, rows, st.Rows, n)
					}
					if chunk == len(wire) && n > 1 && events >= rows {
						t.Fatalf("%s batch %d, whole input: %d events for %d rows", tb.Name, batch, events, rows)
					}
					if want.Err != nil || got.Err != nil || got.bad != "" {
						t.Fatalf("%s: sink contract violated: %v / %v %s", tb.Name, want.Err, got.Err, got.bad)
					}
					if !reflect.DeepEqual(want.Rows, got.Rows) {
						t.Fatalf("%s nbc=%v batch %d chunk %d: rows differ from one row per call", tb.Name, nbc, batch, chunk)
					}
				}
			}
		}
	}
}
