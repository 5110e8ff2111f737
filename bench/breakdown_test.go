package main

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// cellCounter counts the cells a discardSink is given: one call per cell,
// whatever its type (a variable-length value counts at BeginValue or
// Bytes; a sql_variant's Variant call precedes its value's and is not a
// cell).
type cellCounter struct {
	*discardSink
	cells int
}

func (c *cellCounter) Null(int)                                  { c.cells++ }
func (c *cellCounter) Bool(int, bool)                            { c.cells++ }
func (c *cellCounter) Int(int, int64)                            { c.cells++ }
func (c *cellCounter) Float32(int, float32)                      { c.cells++ }
func (c *cellCounter) Float64(int, float64)                      { c.cells++ }
func (c *cellCounter) Decimal(int, decode.Decimal)               { c.cells++ }
func (c *cellCounter) Money(int, int64)                          { c.cells++ }
func (c *cellCounter) Date(int, int32)                           { c.cells++ }
func (c *cellCounter) Time(int, int64)                           { c.cells++ }
func (c *cellCounter) DateTime(int, decode.DateTime)             { c.cells++ }
func (c *cellCounter) DateTimeOffset(int, decode.DateTimeOffset) { c.cells++ }
func (c *cellCounter) GUID(int, decode.GUID)                     { c.cells++ }
func (c *cellCounter) BeginValue(int, int64)                     { c.cells++ }
func (c *cellCounter) Bytes(int, []byte)                         { c.cells++ }

// The walk leg must deliver no value at all and the discard leg every one,
// on every shape (PLP, temporal, decimal and GUID columns included), or the
// breakdown would misstate what each costs.
func TestBreakdownSinks(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1})
	for _, name := range []string{"poc48", "odbc5", "wide601", "lob", "temporal", "lineitem"} {
		tb, _ := db.Table("dbo", name)
		n := min(tb.Rows, 200)
		buf := decode.AppendColMetadata(nil, tb.Columns)
		buf = tb.AppendRows(buf, 0, n, false)
		for _, skip := range []bool{true, false} {
			c := &cellCounter{discardSink: &discardSink{skip: skip}}
			s := decode.NewStream(decode.StreamOptions{})
			s.SetSink(c)
			for b := buf; len(b) > 0; {
				k, _, err := s.Next(b)
				if err != nil {
					t.Fatal(name, err)
				}
				b = b[k:]
			}
			want := 0
			if !skip {
				want = int(n) * len(tb.Columns)
			}
			if c.rows != n || c.cells != want {
				t.Errorf("%s skip=%v: %d rows, %d cells; want %d rows, %d cells", name, skip, c.rows, c.cells, n, want)
			}
		}
	}
}
