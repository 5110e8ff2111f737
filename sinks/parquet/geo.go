package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// GeoParquet. A geography or geometry column that reaches the sink in
// SQL Server's own serialization (selected raw: `convert: raw` on a table
// extract, or a query naming the column) is written as ISO WKB, the
// encoding GeoParquet 1.1 asks for, and the file's "geo" key-value
// metadata names it, with the geometry types its values have and the CRS
// of its SRID, so GeoPandas, GDAL and DuckDB's spatial extension read the
// column as geometries. (The engine's default for table extracts selects
// STAsBinary(), which sends WKB without the SRID: that column is plain
// varbinary to the sink.)
//
// SQL Server's serialization (MS-SSCLRT, GEOGRAPHY and GEOMETRY
// structures): SRID (int32), version (1 or 2), flags (Z, M, valid, single
// point, single line segment, larger than a hemisphere), then either the
// one point or two points of the single forms, or the points, their Z and
// M values, the figures (an attribute and the index of the figure's first
// point) and the shapes (parent shape, first figure, OGC type); version 2
// adds segments, which only curves use. A geography point is stored
// latitude first; WKB is x (longitude) first.
//
// Supported: Point, LineString, Polygon, MultiPoint, MultiLineString,
// MultiPolygon and GeometryCollection, 2-D or with Z, empty or not. M
// values are dropped (GeoParquet 1.1 has no M). Curves (CircularString,
// CompoundCurve, CurvePolygon) and FullGlobe have no WKB form GeoParquet
// allows: such a value fails the run naming column and row, and says to
// select [col].STCurveToLine() instead.

const (
	clrHasZ        = 0x01
	clrHasM        = 0x02
	clrSinglePoint = 0x08
	clrSingleLine  = 0x10

	ogcPoint              = 1
	ogcLineString         = 2
	ogcPolygon            = 3
	ogcMultiPoint         = 4
	ogcMultiLineString    = 5
	ogcMultiPolygon       = 6
	ogcGeometryCollection = 7
)

var geoTypeNames = [...]string{"", "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon", "GeometryCollection"}

type clrFigure struct {
	attr  uint8
	point int32
}

type clrShape struct {
	parent, figure int32
	typ            uint8
}

// clrGeo is one parsed value; its slices are reused from value to value.
type clrGeo struct {
	srid    int32
	hasZ    bool
	xs, ys  []float64 // WKB order: x (longitude), y (latitude)
	zs      []float64
	figures []clrFigure
	shapes  []clrShape
}

// errShort is a value that ends inside a structure its header announced.
var errShort = errors.New("truncated value")

var errCurve = errors.New("curved geometries (CircularString, CompoundCurve, CurvePolygon) and FullGlobe have no WKB form in GeoParquet 1.1; select [col].STCurveToLine() to export them as lines")

// parse reads a serialized geography (latitude first) or geometry value.
func (g *clrGeo) parse(b []byte, geography bool) error {
	if len(b) < 6 {
		return errShort
	}
	g.srid = int32(binary.LittleEndian.Uint32(b))
	ver, flags := b[4], b[5]
	if ver != 1 && ver != 2 {
		return fmt.Errorf("serialization version %d (want 1 or 2)", ver)
	}
	g.hasZ = flags&clrHasZ != 0
	hasM := flags&clrHasM != 0
	p := b[6:]
	g.xs, g.ys, g.zs = g.xs[:0], g.ys[:0], g.zs[:0]
	g.figures, g.shapes = g.figures[:0], g.shapes[:0]
	u32 := func() (int, bool) {
		if len(p) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(p)
		p = p[4:]
		return int(v), v <= math.MaxInt32
	}
	var n int
	switch {
	case flags&clrSinglePoint != 0:
		n = 1
		g.figures = append(g.figures, clrFigure{attr: 1})
		g.shapes = append(g.shapes, clrShape{parent: -1, typ: ogcPoint})
	case flags&clrSingleLine != 0:
		n = 2
		g.figures = append(g.figures, clrFigure{attr: 1})
		g.shapes = append(g.shapes, clrShape{parent: -1, typ: ogcLineString})
	default:
		var ok bool
		if n, ok = u32(); !ok {
			return errShort
		}
	}
	per := 16
	if g.hasZ {
		per += 8
	}
	if hasM {
		per += 8
	}
	if n > len(p)/per {
		return errShort
	}
	for i := range n {
		a := math.Float64frombits(binary.LittleEndian.Uint64(p[16*i:]))
		c := math.Float64frombits(binary.LittleEndian.Uint64(p[16*i+8:]))
		if geography {
			a, c = c, a
		}
		g.xs, g.ys = append(g.xs, a), append(g.ys, c)
	}
	p = p[16*n:]
	if g.hasZ {
		for i := range n {
			g.zs = append(g.zs, math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:])))
		}
		p = p[8*n:]
	}
	if hasM {
		p = p[8*n:]
	}
	if flags&(clrSinglePoint|clrSingleLine) != 0 {
		return nil
	}
	nf, ok := u32()
	if !ok || nf > len(p)/5 {
		return errShort
	}
	for i := range nf {
		f := clrFigure{attr: p[5*i], point: int32(binary.LittleEndian.Uint32(p[5*i+1:]))}
		if ver == 2 && f.attr >= 2 { // arc, composite curve
			return errCurve
		}
		if f.point < 0 || int(f.point) > n || (i > 0 && f.point < g.figures[i-1].point) {
			return fmt.Errorf("figure %d: point offset %d out of order or range", i, f.point)
		}
		g.figures = append(g.figures, f)
	}
	p = p[5*nf:]
	ns, ok := u32()
	if !ok || ns > len(p)/9 {
		return errShort
	}
	for i := range ns {
		s := clrShape{parent: int32(binary.LittleEndian.Uint32(p[9*i:])), figure: int32(binary.LittleEndian.Uint32(p[9*i+4:])), typ: p[9*i+8]}
		if s.typ > ogcGeometryCollection {
			return errCurve
		}
		if s.typ < ogcPoint {
			return fmt.Errorf("shape %d: unknown type %d", i, s.typ)
		}
		if s.parent >= int32(i) || s.parent < -1 || (i > 0) != (s.parent >= 0) || s.figure < -1 || int(s.figure) > nf {
			return fmt.Errorf("shape %d: parent %d or figure %d out of range", i, s.parent, s.figure)
		}
		g.shapes = append(g.shapes, s)
	}
	p = p[9*ns:]
	if ver == 2 && len(p) >= 4 && binary.LittleEndian.Uint32(p) > 0 {
		return errCurve
	}
	if len(g.shapes) == 0 {
		return errors.New("no shape")
	}
	return nil
}

// figures returns the figure range [f0, f1) of shape i (empty: f0 == f1).
func (g *clrGeo) figureRange(i int) (int, int) {
	f0 := int(g.shapes[i].figure)
	if f0 < 0 {
		return 0, 0
	}
	f1 := len(g.figures)
	for k := i + 1; k < len(g.shapes); k++ {
		if g.shapes[k].figure >= 0 {
			f1 = int(g.shapes[k].figure)
			break
		}
	}
	return f0, max(f0, f1)
}

// pointRange returns the point range [p0, p1) of figure f.
func (g *clrGeo) pointRange(f int) (int, int) {
	p1 := len(g.xs)
	if f+1 < len(g.figures) {
		p1 = int(g.figures[f+1].point)
	}
	return int(g.figures[f].point), p1
}

func (g *clrGeo) appendPoint(dst []byte, i int) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(g.xs[i]))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(g.ys[i]))
	if g.hasZ {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(g.zs[i]))
	}
	return dst
}

func (g *clrGeo) appendPoints(dst []byte, f int) []byte {
	p0, p1 := g.pointRange(f)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p1-p0))
	for i := p0; i < p1; i++ {
		dst = g.appendPoint(dst, i)
	}
	return dst
}

// appendWKB appends shape i and its children as ISO WKB (little-endian;
// type + 1000 with Z) and returns the types met as a geoTypes mask.
func (g *clrGeo) appendWKB(dst []byte, i int) ([]byte, uint16) {
	s := g.shapes[i]
	typ := uint32(s.typ)
	mask := uint16(1) << s.typ
	if g.hasZ {
		typ += 1000
		mask <<= 8
	}
	dst = append(dst, 1)
	dst = binary.LittleEndian.AppendUint32(dst, typ)
	f0, f1 := g.figureRange(i)
	switch s.typ {
	case ogcPoint:
		if f1 > f0 {
			if p0, p1 := g.pointRange(f0); p1 > p0 {
				return g.appendPoint(dst, p0), mask
			}
		}
		nan := math.Float64bits(math.NaN()) // WKB's empty point
		for range 2 + btoi(g.hasZ) {
			dst = binary.LittleEndian.AppendUint64(dst, nan)
		}
	case ogcLineString:
		if f1 == f0 {
			return binary.LittleEndian.AppendUint32(dst, 0), mask
		}
		dst = g.appendPoints(dst, f0)
	case ogcPolygon:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(f1-f0))
		for f := f0; f < f1; f++ {
			dst = g.appendPoints(dst, f)
		}
	default: // multi and collections: the child shapes
		n := 0
		for k := i + 1; k < len(g.shapes); k++ {
			if int(g.shapes[k].parent) == i {
				n++
			}
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		for k := i + 1; k < len(g.shapes); k++ {
			if int(g.shapes[k].parent) == i {
				// the types of members are not the value's type: only
				// the outermost shape's is listed
				dst, _ = g.appendWKB(dst, k)
			}
		}
	}
	return dst, mask
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// geoColumn is what a file's "geo" metadata says of one column.
type geoColumn struct {
	name      string
	geography bool
	types     uint16 // bit t: OGC type t 2-D; bit 8+t: with Z
	srid      int32
	sridSeen  bool
}

// geoMetadata is the GeoParquet 1.1 "geo" key-value metadata of a file's
// geometry columns (the first is the primary column).
func geoMetadata(cols []geoColumn) string {
	var b strings.Builder
	b.WriteString(`{"version":"1.1.0","primary_column":`)
	b.WriteString(strconv.Quote(cols[0].name))
	b.WriteString(`,"columns":{`)
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(c.name))
		b.WriteString(`:{"encoding":"WKB","geometry_types":[`)
		var names []string
		for z := range 2 {
			for t := ogcPoint; t <= ogcGeometryCollection; t++ {
				if c.types&(1<<(8*z+t)) != 0 {
					names = append(names, geoTypeNames[t]+[...]string{"", " Z"}[z])
				}
			}
		}
		slices.Sort(names)
		for k, n := range names {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(n))
		}
		b.WriteByte(']')
		srid := c.srid
		if !c.sridSeen && c.geography {
			srid = 4326 // SQL Server's default for geography
		}
		switch {
		case c.geography && srid == 4326:
			// no crs: GeoParquet's default, OGC:CRS84, is WGS 84 with
			// longitude first, which is what the WKB holds
		case srid > 0 && c.sridSeen || c.geography:
			fmt.Fprintf(&b, `,"crs":{"id":{"authority":"EPSG","code":%d}}`, srid)
		default:
			b.WriteString(`,"crs":null`) // SRID 0: no CRS known
		}
		if c.geography {
			b.WriteString(`,"edges":"spherical"`)
		}
		b.WriteByte('}')
	}
	b.WriteString("}}")
	return b.String()
}

// toWKB replaces the value just written to c's arena (from s.vstart) by
// its WKB, and notes its SRID and type; false when it failed the run.
func (s *Sink) toWKB(col int, c *colBuf) bool {
	gc := &s.geo[col]
	g := &s.clr
	if err := g.parse(c.arena[s.vstart:], gc.geography); err != nil {
		s.fail(fmt.Errorf("parquet: column %q, row %d: %s value: %w", c.name, s.rows+1, decode.SQLTypeName(&s.cols[col]), err))
		return false
	}
	if !gc.sridSeen {
		gc.srid, gc.sridSeen = g.srid, true
	} else if g.srid != gc.srid {
		s.fail(fmt.Errorf("parquet: column %q, row %d: SRID %d after SRID %d; GeoParquet has one CRS per column (select one SRID per extract, or [col].STAsBinary() for plain WKB)", c.name, s.rows+1, g.srid, gc.srid))
		return false
	}
	var mask uint16
	s.wkb, mask = g.appendWKB(s.wkb[:0], 0)
	c.geoTypes |= mask
	s.fill.bytes += int64(len(s.wkb) - (len(c.arena) - s.vstart))
	c.arena = append(c.arena[:s.vstart], s.wkb...)
	return true
}

// setGeoMetadata sets the current file's "geo" metadata: its geometry
// columns in file order, each with the types of the values in this file.
func (s *Sink) setGeoMetadata() {
	var cols []geoColumn
	for i := range s.geo {
		if s.plans[i].kind != kGeo || s.plans[i].leaf < 0 {
			continue
		}
		c := s.geo[i]
		if s.fileGeo != nil {
			c.types = s.fileGeo[i]
		}
		cols = append(cols, c)
	}
	clear(s.fileGeo)
	if len(cols) > 0 {
		s.w.SetKeyValueMetadata("geo", geoMetadata(cols))
	}
}
