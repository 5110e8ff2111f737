package decode

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// Capture is a CellSink that records result sets as rows of generic values:
// nil (NULL), bool, int64, float32, float64, Decimal, Money, Date, Time,
// DateTime, DateTimeOffset, GUID, string (char, nchar, text, ntext, xml, json),
// []byte (binary, varbinary, image, timestamp, UDT, and every ModeRaw value),
// []float32 (vector) and Variant (sql_variant). It is the generic value path
// of tests and tools; it is fed by the same decoder as every other sink, so
// the two paths cannot drift apart. It allocates per value.
//
// Capture also checks the CellSink call protocol and records the first
// violation in Err: one call per non-skipped column per row, parts only
// inside BeginValue/EndValue, Commit within the reserved length.
type Capture struct {
	// Modes, if set, are the modes Capture asks for in Columns (by column).
	Modes []Mode
	// DeclineReserve makes Reserve return nil, so values arrive through Write.
	DeclineReserve bool

	Cols []Column // columns of the current result set
	Rows [][]any  // rows of the current result set
	Sets int      // result sets seen (Columns calls)
	Err  error    // first protocol violation seen

	modes    []Mode
	cur      []any
	seen     []bool
	buf      []byte
	inValue  int // column + 1 of the open variable-length value, 0 if none
	reserved int // length of the open reservation, -1 if none
	variant  *TypeInfo
	vtype    TypeInfo
}

var _ CellSink = (*Capture)(nil)

func (c *Capture) violation(msg string) {
	if c.Err == nil {
		c.Err = errors.New("decode: Capture: " + msg)
	}
}

// Columns starts a result set.
func (c *Capture) Columns(cols []Column, modes []Mode) error {
	c.Cols = append([]Column(nil), cols...)
	c.Rows = nil
	c.Sets++
	for i := range modes {
		if i < len(c.Modes) {
			modes[i] = c.Modes[i]
		}
	}
	c.modes = append(c.modes[:0], modes...)
	c.cur = make([]any, len(cols))
	c.seen = make([]bool, len(cols))
	c.inValue, c.reserved, c.variant = 0, -1, nil
	return nil
}

// grow sizes the row for col when no Columns call came first (DecodeCell).
func (c *Capture) grow(col int) {
	for col >= 0 && col >= len(c.cur) && c.Sets == 0 {
		c.cur = append(c.cur, nil)
		c.seen = append(c.seen, false)
		c.modes = append(c.modes, ModeValue)
	}
}

func (c *Capture) set(col int, v any) {
	c.grow(col)
	if col < 0 || col >= len(c.cur) {
		c.violation("column " + strconv.Itoa(col) + " out of range")
		return
	}
	if c.inValue != 0 {
		c.violation("typed call inside a variable-length value")
	}
	if c.seen[col] {
		c.violation("column " + strconv.Itoa(col) + " delivered twice")
	}
	if c.modes[col] == ModeSkip {
		c.violation("value for skipped column " + strconv.Itoa(col))
	}
	c.seen[col] = true
	if c.variant != nil {
		if v == nil {
			c.violation("NULL as a sql_variant base value")
		}
		v = Variant{Type: *c.variant, Value: v}
		c.variant = nil
	}
	c.cur[col] = v
}

func (c *Capture) Null(col int)                             { c.set(col, nil) }
func (c *Capture) Bool(col int, v bool)                     { c.set(col, v) }
func (c *Capture) Int(col int, v int64)                     { c.set(col, v) }
func (c *Capture) Float32(col int, v float32)               { c.set(col, v) }
func (c *Capture) Float64(col int, v float64)               { c.set(col, v) }
func (c *Capture) Decimal(col int, v Decimal)               { c.set(col, v) }
func (c *Capture) Money(col int, v int64)                   { c.set(col, Money(v)) }
func (c *Capture) Date(col int, days int32)                 { c.set(col, Date(days)) }
func (c *Capture) Time(col int, ticks int64)                { c.set(col, Time(ticks)) }
func (c *Capture) DateTime(col int, v DateTime)             { c.set(col, v) }
func (c *Capture) DateTimeOffset(col int, v DateTimeOffset) { c.set(col, v) }
func (c *Capture) GUID(col int, v GUID)                     { c.set(col, v) }

// Variant records the base type of the sql_variant value that follows.
func (c *Capture) Variant(col int, ti *TypeInfo) {
	if c.variant != nil {
		c.violation("two Variant calls in a row")
	}
	c.vtype = *ti
	c.variant = &c.vtype
}

func (c *Capture) BeginValue(col int, size int64) {
	if c.inValue != 0 {
		c.violation("BeginValue inside a value")
	}
	if size < -1 {
		c.violation("negative size")
	}
	c.inValue = col + 1
	c.buf = c.buf[:0]
}

func (c *Capture) Reserve(col int, n int) []byte {
	if c.inValue != col+1 {
		c.violation("Reserve outside its value")
	}
	if c.DeclineReserve {
		return nil
	}
	if n < 0 {
		c.violation("negative reservation")
		return nil
	}
	if cap(c.buf)-len(c.buf) < n {
		nb := make([]byte, len(c.buf), 2*cap(c.buf)+n)
		copy(nb, c.buf)
		c.buf = nb
	}
	c.reserved = n
	return c.buf[len(c.buf) : len(c.buf)+n]
}

func (c *Capture) Commit(col int, n int) {
	if c.inValue != col+1 || c.reserved < 0 {
		c.violation("Commit without Reserve")
		return
	}
	if n < 0 || n > c.reserved {
		c.violation("Commit beyond the reservation")
		n = 0
	}
	c.buf = c.buf[:len(c.buf)+n]
	c.reserved = -1
}

func (c *Capture) Write(col int, p []byte) {
	if c.inValue != col+1 {
		c.violation("Write outside its value")
	}
	c.buf = append(c.buf, p...)
}

func (c *Capture) EndValue(col int) {
	if c.inValue != col+1 {
		c.violation("EndValue without BeginValue")
	}
	c.inValue = 0
	var ti *TypeInfo
	raw := col < len(c.modes) && c.modes[col] == ModeRaw
	if c.variant != nil {
		ti = c.variant
	} else if col < len(c.Cols) {
		ti = &c.Cols[col].Type
	}
	var v any
	switch {
	case raw || ti == nil:
		v = append([]byte{}, c.buf...)
	default:
		switch ti.Type {
		case TypeChar, TypeVarChar, TypeBigChar, TypeBigVarChar, TypeNChar, TypeNVarChar,
			TypeText, TypeNText, TypeXML, TypeJSON:
			v = string(c.buf)
		case TypeVector:
			f := make([]float32, len(c.buf)/4)
			for i := range f {
				f[i] = math.Float32frombits(binary.LittleEndian.Uint32(c.buf[4*i:]))
			}
			v = f
		default:
			v = append([]byte{}, c.buf...)
		}
	}
	c.set(col, v)
}

// EndRow appends the row to Rows.
func (c *Capture) EndRow() error {
	if c.inValue != 0 {
		c.violation("EndRow inside a value")
	}
	for i, ok := range c.seen {
		if !ok && c.modes[i] != ModeSkip {
			c.violation("column " + strconv.Itoa(i) + " not delivered")
		}
		c.seen[i] = false
	}
	c.Rows = append(c.Rows, c.cur)
	c.cur = make([]any, len(c.Cols))
	return nil
}
