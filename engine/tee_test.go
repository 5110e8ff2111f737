package engine

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
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
