package main

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampledb"
)

// cellCounter counts the cells a discardSink is given.
type cellCounter struct {
	*discardSink
	cells int
}

func (c *cellCounter) Null(int)                    { c.cells++ }
func (c *cellCounter) Int(int, int64)              { c.cells++ }
func (c *cellCounter) Float64(int, float64)        { c.cells++ }
func (c *cellCounter) Bytes(int, []byte)           { c.cells++ }
func (c *cellCounter) BeginValue(int, int64)       { c.cells++ }
func (c *cellCounter) Decimal(int, decode.Decimal) { c.cells++ }

// The walk leg must deliver no value at all and the discard leg every one,
// or the breakdown would misstate what each costs.
func TestBreakdownSinks(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1})
	tb, _ := db.Table("dbo", "odbc5")
	const n = 500
	buf := decode.AppendColMetadata(nil, tb.Columns)
	buf = tb.AppendRows(buf, 0, n, false)
	for _, skip := range []bool{true, false} {
		c := &cellCounter{discardSink: &discardSink{skip: skip}}
		s := decode.NewStream(decode.StreamOptions{})
		s.SetSink(c)
		for b := buf; len(b) > 0; {
			k, _, err := s.Next(b)
			if err != nil {
				t.Fatal(err)
			}
			b = b[k:]
		}
		want := 0
		if !skip {
			want = n * len(tb.Columns)
		}
		if c.rows != n || c.cells != want {
			t.Errorf("skip=%v: %d rows, %d cells; want %d rows, %d cells", skip, c.rows, c.cells, n, want)
		}
	}
}
