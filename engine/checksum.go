package engine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tdsextract/tdsextract/decode"
)

// Checksum is a CellSink that fingerprints every value of a result set,
// for the job manifest: a reader (or a test) can tell that two exports
// hold the same rows without comparing files, whatever their format.
//
// Each row's values are hashed in column order (FNV-1a over a tag per
// value kind and the value's bytes as decoded, so NULL, "" and 0 differ);
// the row hashes are mixed (the splitmix64 finaliser) and added modulo
// 2^64. The sum does not depend on row order, which a SELECT without
// ORDER BY does not fix, and, unlike an XOR, a row written twice changes
// it. The checksums of the parts of a table add up to the checksum of the
// whole table. Nothing is allocated per row.
type Checksum struct {
	decode.Nop
	// row is the current row's FNV-1a state XOR the offset basis, so the
	// zero value is a fresh row.
	row uint64
	Sum uint64
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (c *Checksum) byte1(b byte) {
	c.row = ((c.row^fnvOffset^uint64(b))*fnvPrime ^ fnvOffset)
}

func (c *Checksum) u64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	for _, x := range b {
		c.byte1(x)
	}
}

func (c *Checksum) tag(col int, kind byte) {
	c.u64(uint64(col))
	c.byte1(kind)
}

// Columns takes every column as values.
func (c *Checksum) Columns(cols []decode.Column, modes []decode.Mode) error {
	c.row = 0
	return nil
}

func (c *Checksum) Null(col int) { c.tag(col, 'N') }
func (c *Checksum) Bool(col int, v bool) {
	c.tag(col, 'B')
	if v {
		c.byte1(1)
	} else {
		c.byte1(0)
	}
}
func (c *Checksum) Int(col int, v int64)          { c.tag(col, 'I'); c.u64(uint64(v)) }
func (c *Checksum) Float32(col int, v float32)    { c.tag(col, 'f'); c.u64(uint64(math.Float32bits(v))) }
func (c *Checksum) Float64(col int, v float64)    { c.tag(col, 'F'); c.u64(math.Float64bits(v)) }
func (c *Checksum) Money(col int, v int64)        { c.tag(col, 'M'); c.u64(uint64(v)) }
func (c *Checksum) Date(col int, days int32)      { c.tag(col, 'D'); c.u64(uint64(days)) }
func (c *Checksum) Time(col int, ticks int64)     { c.tag(col, 'T'); c.u64(uint64(ticks)) }
func (c *Checksum) Variant(int, *decode.TypeInfo) {}
func (c *Checksum) Decimal(col int, v decode.Decimal) {
	c.tag(col, 'X')
	c.u64(v.Lo)
	c.u64(v.Hi)
	if v.Neg && (v.Lo != 0 || v.Hi != 0) {
		c.byte1(1)
	}
	c.byte1(v.Scale)
}
func (c *Checksum) DateTime(col int, v decode.DateTime) {
	c.tag(col, 'S')
	c.u64(uint64(v.Days))
	c.u64(uint64(v.Ticks))
}
func (c *Checksum) DateTimeOffset(col int, v decode.DateTimeOffset) {
	c.tag(col, 'O')
	c.u64(uint64(v.UTC.Days))
	c.u64(uint64(v.UTC.Ticks))
	c.u64(uint64(v.OffsetMin))
}
func (c *Checksum) GUID(col int, v decode.GUID) {
	c.tag(col, 'G')
	for _, b := range v {
		c.byte1(b)
	}
}
func (c *Checksum) BeginValue(col int, size int64) { c.tag(col, 'V') }
func (c *Checksum) Write(col int, p []byte) {
	for _, b := range p {
		c.byte1(b)
	}
}

// Bytes is the fast path for a complete value.
func (c *Checksum) Bytes(col int, p []byte) {
	c.tag(col, 'V')
	c.Write(col, p)
}

// EndRow adds the row's mixed hash to the sum.
func (c *Checksum) EndRow() error {
	z := c.row ^ fnvOffset + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	c.Sum += z ^ (z >> 31)
	c.row = 0
	return nil
}

// String is the checksum as the manifest writes it.
func (c *Checksum) String() string { return FormatChecksum(c.Sum) }

// FormatChecksum writes a checksum sum as the manifest does.
func FormatChecksum(sum uint64) string { return fmt.Sprintf("rowsum64:%016x", sum) }
