package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// nopTee is a tee to two sinks that keep nothing, set up for n columns.
func nopTee(tb testing.TB, n int) decode.CellSink {
	tee := Tee(decode.Nop{}, decode.Nop{})
	if err := tee.Columns(make([]decode.Column, n), make([]decode.Mode, n)); err != nil {
		tb.Fatal(err)
	}
	return tee
}

// BenchmarkTeeCells fans rows of fixed-width cells out to two sinks that
// keep nothing: the tee's own cost per cell (ns/op is per row of eight).
func BenchmarkTeeCells(b *testing.B) {
	tee := nopTee(b, 8)
	dec := decode.Decimal{Lo: 12345, Scale: 2, Precision: 10}
	dt := decode.DateTime{Days: 738000, Ticks: 123456789}
	var g decode.GUID
	b.ReportAllocs()
	for i := range b.N {
		v := int64(i)
		tee.Int(0, v)
		tee.Float64(1, float64(v))
		tee.Date(2, int32(v))
		tee.DateTime(3, dt)
		tee.Decimal(4, dec)
		tee.Bool(5, v&1 == 0)
		tee.GUID(6, g)
		tee.Money(7, v)
		if err := tee.EndRow(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTeeCellsAllocate holds the fan-out of fixed-width cells to no heap
// allocation per cell.
func TestTeeCellsAllocate(t *testing.T) {
	tee := nopTee(t, 3)
	allocs := testing.AllocsPerRun(100, func() {
		tee.Int(0, 1)
		tee.DateTimeOffset(1, decode.DateTimeOffset{OffsetMin: 60})
		tee.Decimal(2, decode.Decimal{Lo: 1})
		_ = tee.EndRow()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per row, want 0", allocs)
	}
}

// textRec records every variable-length value it receives, as text keyed
// by row and column; NULLs too.
type textRec struct {
	decode.Nop
	row  int
	cur  []byte
	vals []string
}

func (r *textRec) Null(col int)                { r.vals = append(r.vals, fmt.Sprintf("%d/%d NULL", r.row, col)) }
func (r *textRec) BeginValue(col int, _ int64) { r.cur = r.cur[:0] }
func (r *textRec) Write(col int, p []byte)     { r.cur = append(r.cur, p...) }
func (r *textRec) EndValue(col int)            { r.add(col, r.cur) }
func (r *textRec) Bytes(col int, p []byte)     { r.add(col, p) }
func (r *textRec) EndRow() error               { r.row++; return nil }
func (r *textRec) add(col int, p []byte) {
	r.vals = append(r.vals, fmt.Sprintf("%d/%d %q", r.row, col, p))
}
func (r *textRec) Reserve(col int, n int) []byte { return nil }

// textRec16 is a textRec that takes whole UTF-16 values, as the Parquet
// sink does.
type textRec16 struct {
	textRec
	calls int
}

func (r *textRec16) UTF16(col int, p []byte) {
	r.calls++
	buf := make([]byte, decode.MaxUTF16ToUTF8(len(p)))
	r.add(col, buf[:decode.UTF16ToUTF8(buf, p)])
}

// TestTeeUTF16 holds a tee to a sink that takes whole UTF-16 values and
// one that does not to delivering each exactly the text it gets alone, on
// the type matrix's nchar/nvarchar edge values (supplementary characters,
// padding, empty strings, NULLs).
func TestTeeUTF16(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1})
	tb, ok := db.Table("dbo", "type_matrix")
	if !ok {
		t.Fatal("no dbo.type_matrix")
	}
	alone := &textRec{}
	sinktest.StreamTable(t, tb, alone, tb.Rows, false)
	alone16 := &textRec16{}
	sinktest.StreamTable(t, tb, alone16, tb.Rows, false)
	if alone16.calls == 0 {
		t.Fatal("the decoder made no UTF16 call: the table has no resident UTF-16 text")
	}
	if !slices.Equal(alone16.vals, alone.vals) {
		t.Fatal("a UTF16 sink alone records other text than the sequence gives")
	}
	for _, order := range []string{"utf16 first", "utf16 second"} {
		plain, fast := &textRec{}, &textRec16{}
		sinks := []decode.CellSink{fast, plain}
		if order == "utf16 second" {
			sinks = []decode.CellSink{plain, fast}
		}
		tee := Tee(sinks...)
		if _, ok := tee.(decode.UTF16Sink); !ok {
			t.Fatalf("%s: the tee does not take UTF-16 values", order)
		}
		sinktest.StreamTable(t, tb, tee, tb.Rows, false)
		if fast.calls != alone16.calls {
			t.Errorf("%s: %d UTF16 calls through the tee, %d alone", order, fast.calls, alone16.calls)
		}
		if !slices.Equal(fast.vals, alone.vals) || !slices.Equal(plain.vals, alone.vals) {
			t.Errorf("%s: text through the tee differs from the text alone", order)
		}
	}
	if _, ok := Tee(&textRec{}, &textRec{}).(decode.UTF16Sink); ok {
		t.Error("a tee of sinks without the fast path offers it")
	}
}
