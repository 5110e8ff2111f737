package decode_test

import (
	"reflect"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// lendCapture is a Capture that lends the decoder (decode.LendSink) a
// small []uint64 for every integer and decimal column, replaces those
// slices every few rows (as a sink starting a new batch does) and
// withdraws some of them part way. At the end of each row it turns what
// arrived in a slot, written by the decoder or appended by its own Int and
// Decimal calls, back into the Capture call it stands for, so that the
// rows can be compared with a plain Capture's.
type lendCapture struct {
	decode.Capture
	slots  []*[]uint64
	start  []int  // per column: the slot's length when the row began
	called []bool // per column: the row's value came through a call
	rows   int
	lent   int // values the decoder stored with no call
	bad    string
}

func (c *lendCapture) Lend(slots []*[]uint64) {
	c.slots = slots
	c.start = make([]int, len(slots))
	c.called = make([]bool, len(slots))
	for i := range c.Cols {
		switch c.Cols[i].Type.Kind() {
		case decode.KindTinyInt, decode.KindSmallInt, decode.KindInt, decode.KindBigInt, decode.KindDecimal:
			v := make([]uint64, 0, 2)
			slots[i] = &v
		}
	}
}

func (c *lendCapture) Int(col int, v int64) {
	if c.slots != nil && c.slots[col] != nil {
		*c.slots[col] = append(*c.slots[col], uint64(v))
		c.called[col] = true
		return
	}
	c.Capture.Int(col, v)
}

func (c *lendCapture) Decimal(col int, v decode.Decimal) {
	if c.slots != nil && c.slots[col] != nil && v.Hi == 0 && v.Lo <= 1<<63-1 {
		x := int64(v.Lo)
		if v.Neg {
			x = -x
		}
		*c.slots[col] = append(*c.slots[col], uint64(x))
		c.called[col] = true
		return
	}
	c.Capture.Decimal(col, v)
}

func (c *lendCapture) EndRow() error {
	for i, p := range c.slots {
		if p == nil {
			continue
		}
		switch n := len(*p) - c.start[i]; n {
		case 0: // NULL, or a value that came through the Capture
		case 1:
			if !c.called[i] {
				c.lent++
			}
			u := (*p)[len(*p)-1]
			if ti := &c.Cols[i].Type; ti.Kind() == decode.KindDecimal {
				x := int64(u)
				d := decode.Decimal{Lo: uint64(x), Scale: ti.Scale, Precision: ti.Precision}
				if x < 0 {
					d.Lo, d.Neg = uint64(-x), true
				}
				c.Capture.Decimal(i, d)
			} else {
				c.Capture.Int(i, int64(u))
			}
		default:
			c.bad = "more than one value in a slot for a row"
		}
		c.called[i] = false
	}
	c.rows++
	for i, p := range c.slots {
		switch {
		case p == nil:
		case c.rows == 7 && i%2 == 1:
			c.slots[i] = nil // withdrawn: the calls carry the rest
		case c.rows%3 == 0:
			v := make([]uint64, 0, 1+c.rows%4) // a new batch
			c.slots[i] = &v
		}
		if c.slots[i] != nil {
			c.start[i] = len(*c.slots[i])
		}
	}
	return c.Capture.EndRow()
}

// What the decoder stores in lent memory must be exactly what the calls
// deliver, for every sample table (all integer widths, NULLs, negative
// decimals, decimals of precision 19 and beyond, which are never lent),
// ROW and NBCROW, with slots full, replaced and withdrawn mid-stream.
func TestLendSinkParity(t *testing.T) {
	lentAny := false
	for _, tb := range benchDB.Tables() {
		n := min(tb.Rows, 64)
		meta := decode.AppendColMetadata(nil, tb.Columns)
		for _, nbc := range []bool{false, true} {
			rows := tb.AppendRows(nil, 0, n, nbc)
			want := &decode.Capture{}
			got := &lendCapture{}
			for _, sink := range []decode.CellSink{want, got} {
				s := newBenchStream(t, meta, sink)
				if k := decodeRows(t, s, rows); int64(k) != n {
					t.Fatalf("%s: %d rows, want %d", tb.Name, k, n)
				}
			}
			if want.Err != nil || got.Err != nil || got.bad != "" {
				t.Fatalf("%s nbc=%v: sink contract violated: %v / %v %v", tb.Name, nbc, want.Err, got.Err, got.bad)
			}
			if !reflect.DeepEqual(want.Rows, got.Rows) {
				for r := range want.Rows {
					if !reflect.DeepEqual(want.Rows[r], got.Rows[r]) {
						t.Fatalf("%s nbc=%v row %d: lent %v, called %v", tb.Name, nbc, r, got.Rows[r], want.Rows[r])
					}
				}
				t.Fatalf("%s nbc=%v: rows differ", tb.Name, nbc)
			}
			lentAny = lentAny || got.lent > 0
			if tb.Schema+"."+tb.Name == "sales.order_lines" && got.lent == 0 {
				t.Fatalf("%s: the decoder never wrote into lent memory", tb.Name)
			}
		}
	}
	if !lentAny {
		t.Fatal("no value was ever stored in lent memory")
	}
}

// A sink switched in the middle of a row (as a session does to drain a
// cancelled response) gets the rest of the row and everything after
// through its own calls: nothing more is written into the memory the
// first sink lent.
func TestSetSinkWithdrawsLentMemory(t *testing.T) {
	tb, _ := benchDB.Table("sales", "order_lines")
	meta := decode.AppendColMetadata(nil, tb.Columns)
	rows := tb.AppendRows(nil, 0, 10, false)
	first := &lendCapture{}
	s := newBenchStream(t, meta, first)
	// the first row whole, then the second up to its fourth byte
	k, ev, err := s.Next(rows)
	if err != nil || ev != decode.EventRow {
		t.Fatalf("first row: %v %v", ev, err)
	}
	c, _, err := s.Next(rows[k : k+4])
	if err != decode.ErrNeedMore || c == 0 {
		t.Fatalf("partial row: %d bytes, %v", c, err)
	}
	k += c // the cells decoded so far went to the first sink
	held := make([]int, len(first.slots))
	for i, p := range first.slots {
		if p != nil {
			held[i] = len(*p)
		}
	}
	second := &decode.Capture{}
	if err := s.SetSink(second); err != nil {
		t.Fatal(err)
	}
	second.Columns(tb.Columns, make([]decode.Mode, len(tb.Columns)))
	if got := decodeRows(t, s, rows[k:]); got != 9 {
		t.Fatalf("%d rows after the switch, want 9", got)
	}
	for i, p := range first.slots {
		if p != nil && len(*p) != held[i] {
			t.Errorf("column %d: %d values written into the first sink's memory after the switch", i, len(*p)-held[i])
		}
	}
	if len(second.Rows) != 9 {
		t.Fatalf("the second sink got %d rows, want 9", len(second.Rows))
	}
}
