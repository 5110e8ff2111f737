package sinktest

import (
	"encoding/binary"
	"math"

	"github.com/tdsextract/tdsextract/decode"
)

// Cell is one value to drive into a sink as the decoder would; Kind says
// which field holds it: 'n' NULL, 'b' bool, 'i' int, 'f' float64, 'r'
// float32 (in F), 'd' decimal, 'm' money (in I), 'D' date (days in I), 't'
// time (ticks in I), 'T' datetime, 'o' datetimeoffset, 'g' GUID, 's' text,
// 'x' bytes, 'v' vector, 'V' sql_variant (VTI and Inner).
type Cell struct {
	Kind  byte
	B     bool
	I     int64
	F     float64
	Dec   decode.Decimal
	DT    decode.DateTime
	DTO   decode.DateTimeOffset
	G     decode.GUID
	S     string
	X     []byte
	Vec   []float32
	VTI   decode.TypeInfo
	Inner *Cell
	// Raw is the wire-side bytes of a variable-length value, set by Drive.
	Raw []byte
}

// Drive delivers c to s as column col, as the decoder would. A
// variable-length value is split into parts (at least one) that alternate
// between Reserve/Commit, asking for three times the part as a transcoding
// decoder does, and a borrowed Write; a sink that declines Reserve gets
// Write.
func Drive(s decode.CellSink, col int, c *Cell, parts int) {
	switch c.Kind {
	case 'n':
		s.Null(col)
	case 'b':
		s.Bool(col, c.B)
	case 'i':
		s.Int(col, c.I)
	case 'f':
		s.Float64(col, c.F)
	case 'r':
		s.Float32(col, float32(c.F))
	case 'd':
		s.Decimal(col, c.Dec)
	case 'm':
		s.Money(col, c.I)
	case 'D':
		s.Date(col, int32(c.I))
	case 't':
		s.Time(col, c.I)
	case 'T':
		s.DateTime(col, c.DT)
	case 'o':
		s.DateTimeOffset(col, c.DTO)
	case 'g':
		s.GUID(col, c.G)
	case 's', 'x', 'v':
		p := c.Raw
		switch {
		case p != nil:
		case c.Kind == 's':
			p = []byte(c.S)
		case c.Kind == 'x':
			p = c.X
		default:
			for _, f := range c.Vec {
				p = binary.LittleEndian.AppendUint32(p, math.Float32bits(f))
			}
		}
		c.Raw = p
		s.BeginValue(col, int64(len(p)))
		parts = max(parts, 1)
		step := (len(p) + parts - 1) / parts
		for i := 0; i < len(p); i += step {
			part := p[i:min(i+step, len(p))]
			if (i/step)%2 == 1 {
				s.Write(col, part)
				continue
			}
			dst := s.Reserve(col, len(part)*3)
			if dst == nil {
				s.Write(col, part)
				continue
			}
			copy(dst, part)
			s.Commit(col, len(part))
		}
		s.EndValue(col)
	case 'V':
		s.Variant(col, &c.VTI)
		Drive(s, col, c.Inner, parts)
	}
}
