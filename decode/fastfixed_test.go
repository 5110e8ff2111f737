package decode

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// The row loop's inlined int, decimal, date and datetime cases must decode exactly what
// the general path decodes, and reject exactly what it rejects at the same
// offset, however the stream is split.
func TestStreamFixedFastPaths(t *testing.T) {
	dec := func(prec, scale uint8, size uint32) Column {
		return Column{Name: "d", Type: TypeInfo{Type: TypeDecimalN, Size: size, Precision: prec, Scale: scale}}
	}
	cols := []Column{
		{Name: "i4", Type: TypeInfo{Type: TypeInt4}},
		{Name: "i8", Type: TypeInfo{Type: TypeInt8}},
		dec(4, 2, 5), dec(9, 0, 5), dec(10, 2, 9), dec(19, 4, 9), dec(9, 3, 17),
		{Name: "dt", Type: TypeInfo{Type: TypeDateN}},
		{Name: "ts", Type: TypeInfo{Type: TypeDateTime}},
	}
	meta := AppendColMetadata(nil, cols)
	// a decimal cell: length, sign byte, magnitude of n bytes
	cell := func(l int, sign byte, mag uint64) []byte {
		if l == 0 {
			return []byte{0}
		}
		b := []byte{byte(l), sign}
		b = binary.LittleEndian.AppendUint64(b, mag)
		for len(b) < 1+l {
			b = append(b, 0)
		}
		return b[:1+l]
	}
	date := func(l int, days uint32) []byte {
		return append([]byte{byte(l)}, binary.LittleEndian.AppendUint32(nil, days)[:l]...)
	}
	dtm := func(days int32, ticks uint32) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(days)), ticks)
	}
	i4 := func(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	i8 := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	row := func(cells ...[]byte) []byte {
		b := []byte{TokenRow}
		for _, c := range cells {
			b = append(b, c...)
		}
		return b
	}
	good := [][]byte{
		row(i4(0), i8(0), cell(5, 1, 0), cell(5, 1, 0), cell(9, 1, 0), cell(9, 1, 0), cell(5, 1, 0), date(3, 0), dtm(0, 0)),
		row(i4(-1), i8(-1), cell(5, 0, 9999), cell(5, 0, 999999999), cell(9, 0, 9999999999), cell(9, 0, 9999999999999999999), cell(5, 0, 999999999), date(0, 0), dtm(-53690, 0)),
		row(i4(1<<31-1), i8(1<<63-1), cell(5, 0, 0), cell(0, 0, 0), cell(9, 0, 0), cell(0, 0, 0), cell(9, 1, 12345), date(3, 3652058), dtm(2958463, 300*86400-1)),
		row(i4(-1<<31), i8(-1<<63), cell(0, 0, 0), cell(5, 1, 1), cell(5, 1, 77), cell(5, 0, 4294967295), cell(13, 1, 5), date(3, 738000), dtm(45000, 1)),
		row(i4(7), i8(7), cell(5, 1, 7), cell(5, 1, 7), cell(9, 1, 7), cell(9, 1, 1e19-1), cell(5, 1, 7), date(3, 1), dtm(-1, 2)),
	}
	bad := [][]byte{
		// a 64-bit magnitude above 10^19-1 at precision 19
		row(i4(7), i8(7), cell(5, 1, 7), cell(5, 1, 7), cell(9, 1, 7), cell(9, 1, 1e19), cell(5, 1, 7), date(3, 1), dtm(-1, 2)),
		row(i4(0), i8(0), cell(5, 1, 10000), cell(5, 1, 0), cell(9, 1, 0), cell(9, 1, 0), cell(5, 1, 0), date(3, 5), dtm(12, 25919999)),
		row(i4(0), i8(0), cell(5, 2, 1), cell(5, 1, 0), cell(9, 1, 0), cell(9, 1, 0), cell(5, 1, 0), date(3, 0), dtm(0, 0)),
		row(i4(0), i8(0), cell(9, 1, 1), cell(5, 1, 0), cell(9, 1, 0), cell(9, 1, 0), cell(5, 1, 0), date(3, 3652058), dtm(-53690, 0)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1000000000), cell(9, 1, 0), cell(9, 1, 0), cell(5, 1, 0), date(3, 0), dtm(2958463, 300*86400-1)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 10000000000), cell(9, 1, 0), cell(5, 1, 0), date(3, 738000), dtm(45000, 1)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 3, 1), cell(5, 1, 0), date(3, 1), dtm(-1, 2)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 0, 1), cell(17, 1, 1e9), date(3, 5), dtm(12, 25919999)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(3, 0, 1), cell(5, 1, 0), date(3, 0), dtm(0, 0)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 0, 1), cell(5, 1, 0), date(3, 3652059), dtm(-53690, 0)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 0, 1), cell(5, 1, 0), date(2, 5), dtm(2958463, 300*86400-1)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 0, 1), cell(5, 1, 0), date(3, 5), dtm(-53691, 0)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 0, 1), cell(5, 1, 0), date(3, 5), dtm(2958464, 0)),
		row(i4(0), i8(0), cell(5, 1, 1), cell(5, 1, 1), cell(9, 1, 1), cell(9, 0, 1), cell(5, 1, 0), date(3, 5), dtm(0, 300*86400)),
	}
	var all []byte
	for _, r := range good {
		all = append(all, r...)
	}
	streams := [][]byte{append(append([]byte{}, meta...), all...)}
	for _, r := range bad {
		streams = append(streams, append(append(append([]byte{}, meta...), all...), r...))
	}
	// the result, the rows the sink was given (up to an error, the cells
	// delivered before it) and the error
	decodeAll := func(fast bool, payload []byte, piece int) (streamResult, [][]any, error) {
		planFastPaths = fast
		defer func() { planFastPaths = true }()
		c := &Capture{}
		res, err := feedStreamErr(StreamOptions{}, payload, piece, c)
		return res, append(c.Rows, append([]any(nil), c.cur...)), err
	}
	for i, payload := range streams {
		want, wantRows, wantErr := decodeAll(false, payload, len(payload)+1)
		if (i == 0) != (wantErr == nil) {
			t.Fatalf("stream %d: general path error %v", i, wantErr)
		}
		if i == 0 && (len(want.sets) != 1 || len(want.sets[0]) != len(good)) {
			t.Fatalf("stream %d: %d result sets", i, len(want.sets))
		}
		for _, piece := range []int{len(payload) + 1, 1, 3, 7, 11} {
			got, gotRows, err := decodeAll(true, payload, piece)
			if !sameErr(err, wantErr) {
				t.Fatalf("stream %d, piece %d: error %v, want %v", i, piece, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotRows, wantRows) {
				t.Fatalf("stream %d, piece %d:\n got %v %v\nwant %v %v", i, piece, got, gotRows, want, wantRows)
			}
		}
	}
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	var pa, pb *ProtocolError
	if !errors.As(a, &pa) || !errors.As(b, &pb) {
		return false
	}
	return *pa == *pb
}
