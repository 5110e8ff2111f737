package decode_test

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// The BytesSink fast path (sink.go) must deliver exactly what the
// BeginValue sequence delivers. bytesCapture turns each Bytes call back
// into that sequence on a Capture, so the two decodes can be compared
// value by value, for every sample table (every type, code-page text,
// NULLs), ROW and NBCROW, in ModeValue and ModeRaw.
type bytesCapture struct {
	decode.Capture
	calls, calls16 int
}

// UTF16 does the same for the UTF16Sink fast path, converting with
// UTF16ToUTF8 into reserved memory as a sink does.
func (c *bytesCapture) UTF16(col int, p []byte) {
	c.calls16++
	c.Capture.BeginValue(col, int64(len(p)))
	n := decode.MaxUTF16ToUTF8(len(p))
	if dst := c.Capture.Reserve(col, n); len(dst) >= n {
		c.Capture.Commit(col, decode.UTF16ToUTF8(dst, p))
	} else {
		dst = make([]byte, n)
		c.Capture.Write(col, dst[:decode.UTF16ToUTF8(dst, p)])
	}
	c.Capture.EndValue(col)
}

func (c *bytesCapture) Bytes(col int, p []byte) {
	c.calls++
	c.Capture.BeginValue(col, int64(len(p)))
	if len(p) > 0 {
		c.Capture.Write(col, p)
	}
	c.Capture.EndValue(col)
}

func TestBytesSinkParity(t *testing.T) {
	for _, tb := range benchDB.Tables() {
		n := min(tb.Rows, 64)
		meta := decode.AppendColMetadata(nil, tb.Columns)
		for _, nbc := range []bool{false, true} {
			rows := tb.AppendRows(nil, 0, n, nbc)
			for _, raw := range []bool{false, true} {
				var modes []decode.Mode
				if raw {
					modes = make([]decode.Mode, len(tb.Columns))
					for i := range modes {
						modes[i] = decode.ModeRaw
					}
				}
				want := &decode.Capture{Modes: modes}
				got := &bytesCapture{Capture: decode.Capture{Modes: modes}}
				for _, sink := range []decode.CellSink{want, got} {
					s := newBenchStream(t, meta, sink)
					if k := decodeRows(t, s, rows); int64(k) != n {
						t.Fatalf("%s: %d rows, want %d", tb.Name, k, n)
					}
				}
				if want.Err != nil || got.Err != nil {
					t.Fatalf("%s nbc=%v raw=%v: sink contract violated: %v / %v", tb.Name, nbc, raw, want.Err, got.Err)
				}
				if !reflect.DeepEqual(want.Rows, got.Rows) {
					t.Fatalf("%s nbc=%v raw=%v: BytesSink rows differ from the BeginValue path", tb.Name, nbc, raw)
				}
				if tb.Name == "poc48" && got.calls == 0 {
					t.Fatalf("poc48: the BytesSink fast path was never taken")
				}
				if tb.Name == "type_matrix" && !raw && got.calls16 == 0 {
					t.Fatalf("type_matrix: the UTF16Sink fast path was never taken")
				}
			}
		}
	}
}

// The fast path through DecodeCell (RPC parameters, RETURNVALUE) too.
func TestBytesSinkDecodeCell(t *testing.T) {
	ti := decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 100}
	src := decode.AppendUShortBytes(nil, []byte{1, 2, 3})
	var c bytesCapture
	c.Columns([]decode.Column{{Name: "b", Type: ti}}, make([]decode.Mode, 1))
	if _, err := decode.DecodeCell(src, &ti, 0, &c); err != nil {
		t.Fatal(err)
	}
	c.EndRow()
	if c.calls != 1 || !reflect.DeepEqual(c.Rows, [][]any{{[]byte{1, 2, 3}}}) {
		t.Fatalf("calls %d rows %v", c.calls, c.Rows)
	}
}

// fastColSink is colSink with the BytesSink fast path: one call per
// resident varchar/varbinary value instead of four. slowColSink is the
// same sink without it (both embed colSink the same way, so the method
// wrappers cost the same on both legs).
type fastColSink struct{ colSink }

func (s *fastColSink) Bytes(col int, p []byte) {
	c := &s.cols[col]
	c.data = append(c.data, p...)
	s.bytes += len(p)
	r := s.row & (sinkBatch - 1)
	c.offs[r+1] = int32(len(c.data))
	c.valid[r>>6] |= 1 << (r & 63)
}

type slowColSink struct{ colSink }

// BenchmarkSinkAB measures the optional fast paths of sink.go, each
// against the sink without it, A B B A interleaved on one locked thread in
// thread CPU time: bytes is the BeginValue sequence (A, slowColSink)
// against BytesSink (B, fastColSink). It reports the median and spread of the
// per-pair ratio B/A (below 1: the fast path pays) and checks that both
// legs computed the same checksum.
//
//	go test ./decode/ -run '^$' -bench 'SinkAB' -benchtime 40x
func BenchmarkSinkAB(b *testing.B) {
	type sinkPair struct {
		name string
		a, b func() (decode.CellSink, *colSink)
	}
	slow := func() (decode.CellSink, *colSink) { s := &slowColSink{}; return s, &s.colSink }
	fast := func() (decode.CellSink, *colSink) { s := &fastColSink{}; return s, &s.colSink }
	for _, pair := range []sinkPair{{"bytes", slow, fast}} {
		for _, shape := range benchShapes {
			meta, rows, _ := buildShape(b, shape)
			b.Run(pair.name+"/"+shape.name(), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				sinkA, sa := pair.a()
				sinkB, sb := pair.b()
				a := newBenchStream(b, meta, sinkA)
				bs := newBenchStream(b, meta, sinkB)
				decodeRows(b, a, rows)
				decodeRows(b, bs, rows)
				abbaCPU(b, func() { decodeRows(b, a, rows) }, func() { decodeRows(b, bs, rows) })
				sa.flush()
				sb.flush()
				if sa.sum != sb.sum || sa.rows != sb.rows {
					b.Fatalf("checksums differ: %x vs %x", sa.sum, sb.sum)
				}
			})
		}
	}
}
