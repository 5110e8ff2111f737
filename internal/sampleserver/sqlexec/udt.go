package sqlexec

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// Methods of the CLR types (geography, geometry, hierarchyid) that the
// engine's default conversions call: [col].STAsBinary() (WKB, 2-D as SQL
// Server returns it), [col].STAsText() / [col].ToString() (WKT, with Z and M
// when present), hierarchyid's ToString() and GetLevel().

func methodOK(t *decode.TypeInfo, name string) bool {
	switch t.Kind() {
	case decode.KindGeography, decode.KindGeometry:
		switch name {
		case "STASBINARY", "STASTEXT", "TOSTRING", "STSRID", "STNUMPOINTS":
			return true
		}
	case decode.KindHierarchyID:
		switch name {
		case "TOSTRING", "GETLEVEL":
			return true
		}
	}
	return false
}

func (sc *scope) evalMethod(x *funcExpr, e *env) (any, error) {
	row := e.rows[x.Recv.src]
	if row == nil {
		return nil, nil
	}
	v := row[x.Recv.col]
	if v == nil {
		return nil, nil
	}
	b, ok := v.([]byte)
	if !ok {
		return nil, nil
	}
	t := &sc.srcs[x.Recv.src].t.Columns[x.Recv.col].Type
	if t.Kind() == decode.KindHierarchyID {
		labels, err := decodeHierarchyID(b)
		if err != nil {
			return nil, newError(6522, 16, 2, x.Line, "A .NET Framework error occurred during execution of user-defined routine or aggregate \"hierarchyid\": %s", err.Error())
		}
		if x.Name == "GETLEVEL" {
			return int64(len(labels)), nil
		}
		return hierarchyText(labels), nil
	}
	g, err := parseSpatial(b, t.Kind() == decode.KindGeography)
	if err != nil {
		return nil, newError(6522, 16, 1, x.Line, "A .NET Framework error occurred during execution of user-defined routine or aggregate \"%s\": %s", t.UDTName, err.Error())
	}
	switch x.Name {
	case "STASBINARY":
		return g.wkb(), nil
	case "STSRID":
		return int64(g.srid), nil
	case "STNUMPOINTS":
		return int64(len(g.xs)), nil
	}
	return g.wkt(), nil
}

// Spatial serialization (MS-SSCLRT 2.1, "GEOGRAPHY and GEOMETRY structures").

type spatialError string

func (e spatialError) Error() string { return string(e) }

const (
	spHasZ        = 0x01
	spHasM        = 0x02
	spValid       = 0x04
	spSinglePoint = 0x08
	spSingleLine  = 0x10
)

type spShape struct {
	parent int32
	figure int32
	kind   byte // OpenGIS type: 1 Point .. 7 GeometryCollection
}

type spatial struct {
	srid      int32
	geography bool
	xs, ys    []float64 // x = longitude for geography
	zs, ms    []float64
	figOff    []int32
	shapes    []spShape
}

// maxSpatialPoints bounds the work one value can cause.
const maxSpatialPoints = 1 << 20

func parseSpatial(b []byte, geography bool) (*spatial, error) {
	if len(b) < 6 {
		return nil, spatialError("spatial value too short")
	}
	g := &spatial{srid: int32(binary.LittleEndian.Uint32(b)), geography: geography}
	version, props := b[4], b[5]
	if version != 1 && version != 2 {
		return nil, spatialError("unsupported spatial serialization version " + strconv.Itoa(int(version)))
	}
	p := b[6:]
	f64 := func() (float64, bool) {
		if len(p) < 8 {
			return 0, false
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(p))
		p = p[8:]
		return v, true
	}
	u32 := func() (uint32, bool) {
		if len(p) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(p)
		p = p[4:]
		return v, true
	}
	short := spatialError("truncated spatial value")
	npoints := uint32(0)
	switch {
	case props&spSinglePoint != 0:
		npoints = 1
	case props&spSingleLine != 0:
		npoints = 2
	default:
		n, ok := u32()
		if !ok {
			return nil, short
		}
		npoints = n
	}
	if npoints > maxSpatialPoints || int(npoints)*16 > len(p) {
		return nil, short
	}
	for i := uint32(0); i < npoints; i++ {
		a, _ := f64()
		c, _ := f64()
		if geography {
			// Geography stores latitude then longitude.
			a, c = c, a
		}
		g.xs = append(g.xs, a)
		g.ys = append(g.ys, c)
	}
	// coords reads one more coordinate (Z or M) of every point.
	coords := func() ([]float64, bool) {
		var vs []float64
		for range npoints {
			v, ok := f64()
			if !ok {
				return nil, false
			}
			vs = append(vs, v)
		}
		return vs, true
	}
	var ok bool
	if props&spHasZ != 0 {
		if g.zs, ok = coords(); !ok {
			return nil, short
		}
	}
	if props&spHasM != 0 {
		if g.ms, ok = coords(); !ok {
			return nil, short
		}
	}
	if props&(spSinglePoint|spSingleLine) != 0 {
		g.figOff = []int32{0}
		kind := byte(1)
		if props&spSingleLine != 0 {
			kind = 2
		}
		g.shapes = []spShape{{parent: -1, figure: 0, kind: kind}}
		return g, nil
	}
	nfig, ok := u32()
	if !ok || nfig > maxSpatialPoints || int(nfig)*5 > len(p) {
		return nil, short
	}
	for i := uint32(0); i < nfig; i++ {
		// attribute byte, then the figure's first point offset
		off := int32(binary.LittleEndian.Uint32(p[1:]))
		p = p[5:]
		if off < 0 || uint32(off) > npoints {
			return nil, spatialError("bad figure offset")
		}
		g.figOff = append(g.figOff, off)
	}
	nshape, ok := u32()
	if !ok || nshape > maxSpatialPoints || int(nshape)*9 > len(p) {
		return nil, short
	}
	for i := uint32(0); i < nshape; i++ {
		s := spShape{
			parent: int32(binary.LittleEndian.Uint32(p)),
			figure: int32(binary.LittleEndian.Uint32(p[4:])),
			kind:   p[8],
		}
		p = p[9:]
		if s.kind < 1 || s.kind > 7 {
			return nil, spatialError("unsupported shape type " + strconv.Itoa(int(s.kind)) + " (curves)")
		}
		if s.parent >= int32(i) || s.parent < -1 || s.figure < -1 || s.figure >= int32(nfig) {
			return nil, spatialError("bad shape")
		}
		g.shapes = append(g.shapes, s)
	}
	return g, nil
}

// figures returns the figure index range [lo, hi) of shape k.
func (g *spatial) figures(k int) (int, int) {
	s := g.shapes[k]
	if s.figure < 0 {
		return 0, 0
	}
	hi := len(g.figOff)
	for j := k + 1; j < len(g.shapes); j++ {
		if g.shapes[j].figure >= 0 {
			hi = int(g.shapes[j].figure)
			break
		}
	}
	if hi < int(s.figure) {
		hi = int(s.figure)
	}
	return int(s.figure), hi
}

// points returns the point index range of figure f.
func (g *spatial) points(f int) (int, int) {
	lo := int(g.figOff[f])
	hi := len(g.xs)
	if f+1 < len(g.figOff) {
		hi = int(g.figOff[f+1])
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func (g *spatial) children(k int) []int {
	var out []int
	for j := k + 1; j < len(g.shapes); j++ {
		if int(g.shapes[j].parent) == k {
			out = append(out, j)
		}
	}
	return out
}

// wkb is the OGC Well-Known Binary of the value (little-endian, 2-D).
func (g *spatial) wkb() []byte {
	if len(g.shapes) == 0 {
		return appendWKBHeader(nil, 7, 0) // empty collection
	}
	return g.appendWKB(nil, 0, 0)
}

func appendWKBHeader(dst []byte, kind uint32, n int) []byte {
	dst = append(dst, 1)
	dst = binary.LittleEndian.AppendUint32(dst, kind)
	if kind != 1 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	return dst
}

func (g *spatial) appendPoint(dst []byte, i int) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(g.xs[i]))
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(g.ys[i]))
}

func (g *spatial) appendWKB(dst []byte, k, depth int) []byte {
	s := g.shapes[k]
	flo, fhi := g.figures(k)
	switch s.kind {
	case 1:
		dst = append(dst, 1)
		dst = binary.LittleEndian.AppendUint32(dst, 1)
		if flo == fhi {
			nan := math.Float64bits(math.NaN())
			dst = binary.LittleEndian.AppendUint64(dst, nan)
			return binary.LittleEndian.AppendUint64(dst, nan)
		}
		lo, _ := g.points(flo)
		return g.appendPoint(dst, lo)
	case 2:
		if flo == fhi {
			return appendWKBHeader(dst, 2, 0)
		}
		lo, hi := g.points(flo)
		dst = appendWKBHeader(dst, 2, hi-lo)
		for i := lo; i < hi; i++ {
			dst = g.appendPoint(dst, i)
		}
		return dst
	case 3:
		dst = appendWKBHeader(dst, 3, fhi-flo)
		for f := flo; f < fhi; f++ {
			lo, hi := g.points(f)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(hi-lo))
			for i := lo; i < hi; i++ {
				dst = g.appendPoint(dst, i)
			}
		}
		return dst
	}
	kids := g.children(k)
	dst = appendWKBHeader(dst, uint32(s.kind), len(kids))
	if depth > 64 {
		return dst
	}
	for _, c := range kids {
		dst = g.appendWKB(dst, c, depth+1)
	}
	return dst
}

// wkt is the text SQL Server's ToString()/STAsText() returns.
func (g *spatial) wkt() string {
	if len(g.shapes) == 0 {
		return "GEOMETRYCOLLECTION EMPTY"
	}
	var b strings.Builder
	g.appendWKT(&b, 0, 0)
	return b.String()
}

var wktNames = [...]string{"", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"}

func fmtCoord(v float64) string { return strconv.FormatFloat(v, 'G', 15, 64) }

func (g *spatial) writePoint(b *strings.Builder, i int) {
	b.WriteString(fmtCoord(g.xs[i]))
	b.WriteByte(' ')
	b.WriteString(fmtCoord(g.ys[i]))
	if g.zs != nil || g.ms != nil {
		b.WriteByte(' ')
		if g.zs != nil && !math.IsNaN(g.zs[i]) {
			b.WriteString(fmtCoord(g.zs[i]))
		} else {
			b.WriteString("NULL")
		}
		if g.ms != nil {
			b.WriteByte(' ')
			b.WriteString(fmtCoord(g.ms[i]))
		}
	}
}

func (g *spatial) writeRing(b *strings.Builder, f int) {
	lo, hi := g.points(f)
	b.WriteByte('(')
	for i := lo; i < hi; i++ {
		if i > lo {
			b.WriteString(", ")
		}
		g.writePoint(b, i)
	}
	b.WriteByte(')')
}

// appendWKT writes shape k; tagged is false inside MULTI* lists.
func (g *spatial) appendWKT(b *strings.Builder, k, depth int) {
	s := g.shapes[k]
	b.WriteString(wktNames[s.kind])
	g.wktBody(b, k, depth)
}

func (g *spatial) wktBody(b *strings.Builder, k, depth int) {
	s := g.shapes[k]
	flo, fhi := g.figures(k)
	switch s.kind {
	case 1, 2, 3: // point, line string, polygon: figures, no child shapes
		if flo == fhi {
			b.WriteString(" EMPTY")
			return
		}
		if s.kind != 3 {
			b.WriteByte(' ')
			g.writeRing(b, flo)
			return
		}
		b.WriteString(" (")
		for f := flo; f < fhi; f++ {
			if f > flo {
				b.WriteString(", ")
			}
			g.writeRing(b, f)
		}
		b.WriteByte(')')
		return
	}
	kids := g.children(k)
	if len(kids) == 0 || depth > 64 {
		b.WriteString(" EMPTY")
		return
	}
	b.WriteString(" (")
	for j, c := range kids {
		if j > 0 {
			b.WriteString(", ")
		}
		if s.kind == 7 {
			g.appendWKT(b, c, depth+1)
			continue
		}
		// MULTI*: members without their type name.
		body := &strings.Builder{}
		g.wktBody(body, c, depth+1)
		b.WriteString(strings.TrimPrefix(body.String(), " "))
	}
	b.WriteByte(')')
}

// hierarchyid (ORDPATH bit patterns, as observed on SQL Server): each
// label is a prefix selecting a value range, value bits interleaved with
// fixed bits, and a final bit that is 1 for the last number of a level and
// 0 when the level continues with a dotted number (stored as value+1).
// Trailing zero bits pad to a byte. The ranges 0..1103 are supported.

type hidPattern struct {
	prefix string
	layout string // x = value bit, 0/1 = fixed bit
	base   int64
}

var hidPatterns = []hidPattern{
	{"01", "xx", 0},
	{"100", "xx", 4},
	{"101", "xxx", 8},
	{"110", "xx0x1xxx", 16},
	{"1110", "xxx0xxx0x1xxx", 80},
}

func decodeHierarchyID(b []byte) ([][]int64, error) {
	nbits := len(b) * 8
	bit := func(i int) byte { return b[i/8] >> (7 - uint(i%8)) & 1 }
	restZero := func(i int) bool {
		for ; i < nbits; i++ {
			if bit(i) != 0 {
				return false
			}
		}
		return true
	}
	var levels [][]int64
	var cur []int64
	pos := 0
	for !restZero(pos) {
		if len(levels) > 1000 {
			return nil, spatialError("hierarchyid too deep")
		}
		var pat *hidPattern
		for k := range hidPatterns {
			p := &hidPatterns[k]
			if pos+len(p.prefix) > nbits {
				continue
			}
			match := true
			for j := 0; j < len(p.prefix); j++ {
				if bit(pos+j) != p.prefix[j]-'0' {
					match = false
					break
				}
			}
			if match {
				pat = p
				break
			}
		}
		if pat == nil {
			return nil, spatialError("hierarchyid label outside the supported range 0..1103")
		}
		pos += len(pat.prefix)
		if pos+len(pat.layout)+1 > nbits {
			return nil, spatialError("truncated hierarchyid")
		}
		v := int64(0)
		for j := 0; j < len(pat.layout); j++ {
			c := pat.layout[j]
			bv := bit(pos + j)
			if c == 'x' {
				v = v<<1 | int64(bv)
			} else if bv != c-'0' {
				return nil, spatialError("malformed hierarchyid")
			}
		}
		pos += len(pat.layout)
		last := bit(pos) == 1
		pos++
		v += pat.base
		if !last {
			v--
			cur = append(cur, v)
			continue
		}
		cur = append(cur, v)
		levels = append(levels, cur)
		cur = nil
	}
	if cur != nil {
		return nil, spatialError("malformed hierarchyid")
	}
	return levels, nil
}

func hierarchyText(levels [][]int64) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, l := range levels {
		for j, v := range l {
			if j > 0 {
				b.WriteByte('.')
			}
			b.WriteString(strconv.FormatInt(v, 10))
		}
		b.WriteByte('/')
	}
	return b.String()
}
