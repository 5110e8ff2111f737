package decode_test

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// walkKinds classifies poc48's columns for the bound walkers below: 1 for a
// 1-byte length prefix (INTN), 2 for a 2-byte one (VARCHAR).
func walkKinds(tb testing.TB, table string) []byte {
	t, _ := benchDB.Table("dbo", table)
	kinds := make([]byte, len(t.Columns))
	for i, c := range t.Columns {
		switch c.Type.Type {
		case decode.TypeIntN:
			kinds[i] = 1
		case decode.TypeBigVarChar:
			kinds[i] = 2
		default:
			tb.Fatalf("column %d: type %#x not in the bound walker", i, c.Type.Type)
		}
	}
	return kinds
}

// walkBranchy finds every cell of every row with no validation beyond
// bounds and no delivery: the least any length-prefixed parser must do. It
// branches on the INTN length so that the CPU can speculate past the
// length load when lengths repeat.
func walkBranchy(buf []byte, kinds []byte) (rows int, sum uint64) {
	p := 0
	for p < len(buf) && buf[p] == decode.TokenRow {
		p++
		for _, k := range kinds {
			if k == 1 {
				if buf[p] == 4 {
					sum += uint64(binary.LittleEndian.Uint32(buf[p+1:]))
					p += 5
				} else {
					p++
				}
			} else {
				l := int(binary.LittleEndian.Uint16(buf[p:]))
				if l == 0xFFFF { // NULL
					l = 0
				}
				sum += uint64(l)
				p += 2 + l
			}
		}
		rows++
	}
	return rows, sum
}

// walkChained is the same walk with the next position computed from the
// length byte, no branch: a chain of dependent loads.
func walkChained(buf []byte, kinds []byte) (rows int, sum uint64) {
	p := 0
	for p < len(buf) && buf[p] == decode.TokenRow {
		p++
		for _, k := range kinds {
			if k == 1 {
				p += 1 + int(buf[p])
			} else {
				l := int(binary.LittleEndian.Uint16(buf[p:]))
				p += 2 + l
				if l == 0xFFFF {
					p -= l
				}
			}
		}
		rows++
	}
	return rows, uint64(p)
}

// BenchmarkWalkBound is the lower bound of the decode/memmove ratio: a
// walker that only finds poc48's cells (no checks, no sink, no NULL
// bitmaps), interleaved with memmove of the same bytes on one thread in
// thread CPU time. Whatever a real decoder does costs at least this.
//
//	go test ./decode/ -run '^$' -bench WalkBound -benchtime 200x
func BenchmarkWalkBound(b *testing.B) {
	_, rows, _ := buildShape(b, benchShape{table: "poc48", rows: 4096})
	kinds := walkKinds(b, "poc48")
	nrows, _ := walkBranchy(rows, kinds)
	if r2, _ := walkChained(rows, kinds); r2 != nrows || nrows != 4096 {
		b.Fatalf("walkers disagree: %d, %d rows", nrows, r2)
	}
	for _, w := range []struct {
		name string
		f    func([]byte, []byte) (int, uint64)
	}{{"branchy", walkBranchy}, {"chained", walkChained}} {
		b.Run(w.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			dst := make([]byte, len(rows))
			var sink uint64
			dec, mov := abbaVsMemmove(b, rows, dst, func() {
				_, s := w.f(rows, kinds)
				sink += s
			})
			n := float64(2 * b.N * nrows)
			b.ReportMetric(float64(dec)/n, "cpu-ns/row")
			b.ReportMetric(float64(mov)/n, "memmove-cpu-ns/row")
			if sink == 0 {
				b.Fatal("walker summed nothing")
			}
		})
	}
}
