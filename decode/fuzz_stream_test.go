package decode

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"
)

// fuzzCap is the residency cap of the fuzz targets: small, so that the
// "never buffer more than the cap" property is exercised.
const fuzzCap = 4096

// fuzzSeeds are positive streams: the MS-TDS §4 examples and streams of
// every type.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, name := range []string{"4.7-sqlbatch-response", "4.9-rpc-response", "4.15-sparse-column-select", "4.4-login-response", "4.18-sessionstate"} {
		if _, err := os.Stat(filepath.Join("testdata", "spec", name+".hex")); err != nil {
			continue
		}
		_, payload := wireOnePacket(f, wireSpec(f, name))
		seeds = append(seeds, payload)
	}
	for _, chunk := range []int{3, 8000} {
		p, _, _ := allTypesStream(f, chunk, chunk == 3)
		seeds = append(seeds, p)
	}
	return seeds
}

// FuzzStream feeds arbitrary bytes through a Stream, whole and in pieces.
// Properties: no panic; every error is ErrNeedMore at the end of input, a
// *ProtocolError or ErrTooLarge; the sink protocol is never violated; text
// is valid UTF-8; the buffer never has to grow beyond the residency cap
// (plus one read); and decoding in pieces gives what decoding whole gives.
func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(byte(7), s)
		f.Add(byte(0), s)
	}
	f.Fuzz(func(t *testing.T, ctl byte, data []byte) {
		opts := StreamOptions{ResidencyCap: fuzzCap, MaxValueSize: 1 << 20,
			RequestedFeatures: []byte{FeatureUTF8Support, FeatureJSONSupport}, ColumnEncryption: ctl&0x80 != 0}
		piece := int(ctl&0x3F) + 1
		// Whole: the four-call value sequence. In pieces: either a sink
		// that declines Reserve, or one that takes the BytesSink fast
		// path, so the fast path must agree with the general one.
		whole, errWhole := fuzzFeed(t, opts, data, len(data)+1, false, false)
		parts, errParts := fuzzFeed(t, opts, data, piece, ctl&0x40 != 0, ctl&0x40 == 0)
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("whole err %v, pieces of %d err %v", errWhole, piece, errParts)
		}
		if errWhole == nil && !reflect.DeepEqual(floatBits(whole), floatBits(parts)) {
			t.Fatalf("pieces of %d differ", piece)
		}
	})
}

// fuzzFeed decodes data like feedStreamErr and checks the invariants.
func fuzzFeed(t *testing.T, opts StreamOptions, data []byte, piece int, decline, fast bool) (streamResult, error) {
	var res streamResult
	c := &Capture{DeclineReserve: decline}
	s := NewStream(opts)
	if fast {
		s.SetSink(fuzzBytesSink{c})
	} else {
		s.SetSink(c)
	}
	var buf []byte
	rest := data
	for steps := 0; ; steps++ {
		if steps > 4*len(data)+16 {
			t.Fatal("no progress")
		}
		n, ev, err := s.Next(buf)
		if n < 0 || n > len(buf) {
			t.Fatalf("Next consumed %d of %d", n, len(buf))
		}
		buf = buf[:copy(buf, buf[n:])]
		if c.Err != nil {
			t.Fatalf("sink protocol violated: %v", c.Err)
		}
		if err == ErrNeedMore {
			if n == 0 && len(buf) > fuzzCap+piece {
				t.Fatalf("decoder wants more than the cap: %d bytes resident", len(buf))
			}
			if len(rest) == 0 {
				return res, nil
			}
			k := min(piece, len(rest))
			buf, rest = append(buf, rest[:k]...), rest[k:]
			continue
		}
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ProtocolError", err, err)
			}
			if pe.Offset < 0 || pe.Offset > int64(len(data)) {
				t.Fatalf("error offset %d outside the input of %d bytes", pe.Offset, len(data))
			}
			return res, err
		}
		if ev == EventRow {
			row := c.Rows[len(c.Rows)-1]
			for i, v := range row {
				if s, ok := v.(string); ok && !utf8.ValidString(s) {
					t.Fatalf("column %d: invalid UTF-8 %q", i, s)
				}
			}
			res.sets = append(res.sets, [][]any{row})
		}
		res.events = append(res.events, eventLine(s, ev))
	}
}

// FuzzColMetadata decodes arbitrary COLMETADATA bodies. Properties: no
// panic; errors are ErrNeedMore or *ProtocolError; a decoded token
// re-encodes to one that decodes to the same columns, and every column gets
// a plan or a plan error.
func FuzzColMetadata(f *testing.F) {
	cols := allTypesColumns()
	cols = append(cols, Column{Name: "t", Type: TypeInfo{Type: TypeNText, Size: 0x7FFFFFFF}, TableName: []string{"a", "b"}})
	f.Add(false, AppendColMetadata(nil, cols)[1:])
	f.Add(false, AppendColMetadata(nil, cols[:3])[1:])
	f.Add(true, ahex(`01 00 01 00 05 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 01 02 00 aa bb
		01 6b 00 01 00 70 00 01 61 00 00 00 00 00 01 08 a5 10 00 00 00 00 00 00 00 38 02 01 01 01 78 00`))
	f.Fuzz(func(t *testing.T, enc bool, data []byte) {
		var m ColMetadata
		n, err := m.Decode(data, enc)
		if err != nil {
			var pe *ProtocolError
			if err != ErrNeedMore && !errors.As(err, &pe) {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		if n < 0 || n > len(data) {
			t.Fatalf("consumed %d of %d", n, len(data))
		}
		for i := range m.Columns {
			var p colPlan
			if err := makePlan(&p, &m.Columns[i].Type, ModeValue, &textDecoder{}); err != nil {
				if _, ok := err.(planError); !ok {
					t.Fatalf("plan error %T", err)
				}
			}
		}
		if enc || len(m.Columns) == 0 {
			return
		}
		first := append([]Column(nil), m.Columns...)
		again := AppendColMetadata(nil, first)
		var m2 ColMetadata
		if _, err := m2.Decode(again[1:], false); err != nil {
			t.Fatalf("re-encoded COLMETADATA does not decode: %v", err)
		}
		third := AppendColMetadata(nil, m2.Columns)
		if string(third) != string(again) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// floatBits returns r with every float value replaced by its bit pattern,
// so that NaN (which reflect.DeepEqual never finds equal to itself)
// compares by bits.
func floatBits(r streamResult) streamResult {
	out := r
	out.sets = make([][][]any, len(r.sets))
	for i, set := range r.sets {
		out.sets[i] = make([][]any, len(set))
		for j, row := range set {
			nr := make([]any, len(row))
			for k, v := range row {
				switch x := v.(type) {
				case float64:
					nr[k] = math.Float64bits(x)
				case float32:
					nr[k] = math.Float32bits(x)
				case []float32:
					bits := make([]uint32, len(x))
					for n, f := range x {
						bits[n] = math.Float32bits(f)
					}
					nr[k] = bits
				case Variant:
					switch y := x.Value.(type) {
					case float64:
						x.Value = math.Float64bits(y)
					case float32:
						x.Value = math.Float32bits(y)
					}
					nr[k] = x
				default:
					nr[k] = v
				}
			}
			out.sets[i][j] = nr
		}
	}
	return out
}

// fuzzBytesSink is a Capture that takes the decoder's BytesSink and
// UTF16Sink fast paths.
type fuzzBytesSink struct{ *Capture }

func (f fuzzBytesSink) UTF16(col int, p []byte) {
	f.BeginValue(col, int64(len(p)))
	n := MaxUTF16ToUTF8(len(p))
	if dst := f.Reserve(col, n); len(dst) >= n {
		f.Commit(col, UTF16ToUTF8(dst, p))
	} else {
		dst = make([]byte, n)
		if m := UTF16ToUTF8(dst, p); m > 0 {
			f.Write(col, dst[:m])
		}
	}
	f.EndValue(col)
}

func (f fuzzBytesSink) Bytes(col int, p []byte) {
	f.BeginValue(col, int64(len(p)))
	f.Write(col, p)
	f.EndValue(col)
}
