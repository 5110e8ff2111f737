package parquet

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// GeoParquet. A geography or geometry column that reaches the sink in
// SQL Server's own serialization is written as ISO WKB, the encoding
// GeoParquet 1.1 asks for, and the file's "geo" key-value metadata names
// it, with the geometry types its values have and the CRS of its SRID, so
// GeoPandas, GDAL and DuckDB's spatial extension read the column as
// geometries. The sink's factory declares ReadsSpatial, so a table extract
// whose sinks are all Parquet selects such columns as stored; so does a
// query naming the column. (Beside a sink that wants STAsBinary(), WKB
// without the SRID, the column is plain varbinary to this sink.)
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

// geoTarget is inspect's mapping of a geography or geometry column that
// arrives serialized.
const geoTarget = "BYTE_ARRAY WKB (GeoParquet 1.1: the file's geo metadata gives the geometry types and the CRS of the SRID: " +
	"none for 4326 (OGC:CRS84), PROJJSON for the EPSG codes the sink defines, null (unknown) for SRID 0 and others; M values dropped)"

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
	// mixed: the file's values have more than one SRID. GeoParquet has
	// one CRS per column, so the column says "crs": null (unknown)
	// rather than the run failing on valid data; the WKB is the same.
	mixed bool
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
		b.WriteString(crsMember(c))
		if c.geography {
			b.WriteString(`,"edges":"spherical"`)
		}
		b.WriteByte('}')
	}
	b.WriteString("}}")
	return b.String()
}

// crsMember is the "crs" member of column c's metadata (see The CRS of a
// column below), with its leading comma; "" for none.
func crsMember(c geoColumn) string {
	if c.mixed {
		return `,"crs":null` // several SRIDs: no one CRS is right
	}
	srid := c.srid
	if !c.sridSeen {
		if !c.geography {
			return `,"crs":null` // no value: geometry has no default SRID
		}
		srid = 4326 // SQL Server's default for geography
	}
	if srid == 4326 {
		return "" // OGC:CRS84, the default: WGS 84 as the WKB holds it
	}
	if j := epsgCRS(srid); j != "" {
		return `,"crs":` + j
	}
	return `,"crs":null` // SRID 0, or an SRID the sink does not define
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
		gc.mixed = true
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

// The CRS of a column. GeoParquet 1.1 says a column's "crs" is a PROJJSON
// object; absent, it is OGC:CRS84 (WGS 84, longitude then latitude); null,
// unknown. Its axis order is never the CRS's: WKB holds x (easting,
// longitude) then y, whatever order the CRS definition lists its axes in.
// So SRID 4326 is written as no crs: EPSG:4326 is WGS 84 latitude first,
// CRS84 the same datum longitude first, and by that rule the two describe
// the same WKB; the default is what every reader understands.
//
// For another SRID the sink writes a complete PROJJSON definition when it
// knows the CRS (epsgCRS), built from its EPSG parameters. PROJJSON's
// schema requires a geodetic CRS's name and datum and a projected CRS's
// name, base CRS, conversion and coordinate system, so an object holding
// only the EPSG code is not PROJJSON, and readers that build the CRS from
// it (GeoPandas through pyproj) fail on the whole file. For an SRID the
// sink does not know, crs is therefore null, the spec's "unknown", which
// every reader accepts; inspect's mapping says so. Geodetic datums are
// written as EPSG defined them before it grouped the realizations of WGS 84
// and ETRS89 into ensembles: the id names the CRS exactly, and an
// ensemble's member list changes from one EPSG release to the next.

type pjEllipsoid struct {
	Name       string  `json:"name"`
	SemiMajor  float64 `json:"semi_major_axis"`
	InverseFla float64 `json:"inverse_flattening"`
	ID         *pjID   `json:"id,omitempty"`
}

type pjID struct {
	Authority string `json:"authority"`
	Code      int    `json:"code"`
}

type pjDatum struct {
	Type      string      `json:"type"`
	Name      string      `json:"name"`
	Ellipsoid pjEllipsoid `json:"ellipsoid"`
	ID        *pjID       `json:"id,omitempty"`
}

type pjAxis struct {
	Name         string `json:"name"`
	Abbreviation string `json:"abbreviation"`
	Direction    string `json:"direction"`
	Unit         string `json:"unit"`
}

type pjCS struct {
	Subtype string   `json:"subtype"`
	Axis    []pjAxis `json:"axis"`
}

type pjMethod struct {
	Name string `json:"name"`
	ID   *pjID  `json:"id,omitempty"`
}

type pjParam struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	ID    *pjID   `json:"id,omitempty"`
}

type pjConversion struct {
	Name       string    `json:"name"`
	Method     pjMethod  `json:"method"`
	Parameters []pjParam `json:"parameters"`
	ID         *pjID     `json:"id,omitempty"`
}

type pjCRS struct {
	Schema           string        `json:"$schema,omitempty"`
	Type             string        `json:"type"`
	Name             string        `json:"name"`
	Datum            *pjDatum      `json:"datum,omitempty"`
	BaseCRS          *pjCRS        `json:"base_crs,omitempty"`
	Conversion       *pjConversion `json:"conversion,omitempty"`
	CoordinateSystem pjCS          `json:"coordinate_system"`
	ID               *pjID         `json:"id,omitempty"`
}

func epsg(code int) *pjID { return &pjID{"EPSG", code} }

var (
	ellWGS84 = pjEllipsoid{"WGS 84", 6378137, 298.257223563, epsg(7030)}
	ellGRS80 = pjEllipsoid{"GRS 1980", 6378137, 298.257222101, epsg(7019)}
	ellAiry  = pjEllipsoid{"Airy 1830", 6377563.396, 299.3249646, epsg(7001)}

	// EPSG coordinate systems 6422 (latitude, longitude in degrees), 4400
	// (easting, northing in metres: E, N), 4499 (the same as X, Y) and
	// 4500 (northing first).
	csLatLon = pjCS{"ellipsoidal", []pjAxis{{"Geodetic latitude", "Lat", "north", "degree"}, {"Geodetic longitude", "Lon", "east", "degree"}}}
	csEN     = pjCS{"Cartesian", []pjAxis{{"Easting", "E", "east", "metre"}, {"Northing", "N", "north", "metre"}}}
	csXY     = pjCS{"Cartesian", []pjAxis{{"Easting", "X", "east", "metre"}, {"Northing", "Y", "north", "metre"}}}
	csNE     = pjCS{"Cartesian", []pjAxis{{"Northing", "N", "north", "metre"}, {"Easting", "E", "east", "metre"}}}
)

// geographicCRS are the geographic 2-D CRSs the sink defines, by EPSG
// code: SQL Server's geography SRIDs in common use and the bases of the
// projected CRSs below.
var geographicCRS = map[int]struct {
	name, datum string
	datumCode   int
	ell         pjEllipsoid
}{
	4326: {"WGS 84", "World Geodetic System 1984", 6326, ellWGS84},
	4269: {"NAD83", "North American Datum 1983", 6269, ellGRS80},
	4258: {"ETRS89", "European Terrestrial Reference System 1989", 6258, ellGRS80},
	4277: {"OSGB36", "Ordnance Survey of Great Britain 1936", 6277, ellAiry},
	4171: {"RGF93 v1", "Reseau Geodesique Francais 1993 v1", 6171, ellGRS80},
	4167: {"NZGD2000", "New Zealand Geodetic Datum 2000", 6167, ellGRS80},
}

func geographic(code int) (*pjCRS, bool) {
	g, ok := geographicCRS[code]
	if !ok {
		return nil, false
	}
	return &pjCRS{Type: "GeographicCRS", Name: g.name, Datum: &pjDatum{"GeodeticReferenceFrame", g.datum, g.ell, epsg(g.datumCode)},
		CoordinateSystem: csLatLon, ID: epsg(code)}, true
}

func deg(name string, code int, v float64) pjParam   { return pjParam{name, v, "degree", epsg(code)} }
func metre(name string, code int, v float64) pjParam { return pjParam{name, v, "metre", epsg(code)} }

// transverseMercator is EPSG method 9807 with its five parameters.
func transverseMercator(name string, code int, lat0, lon0, k, fe, fn float64) *pjConversion {
	return &pjConversion{name, pjMethod{"Transverse Mercator", epsg(9807)}, []pjParam{
		deg("Latitude of natural origin", 8801, lat0), deg("Longitude of natural origin", 8802, lon0),
		{"Scale factor at natural origin", k, "unity", epsg(8805)},
		metre("False easting", 8806, fe), metre("False northing", 8807, fn),
	}, epsg(code)}
}

// utm is UTM zone z (1..60) of the northern or southern hemisphere: EPSG
// conversions 16001..16060 and 16101..16160.
func utm(z int, south bool) *pjConversion {
	name, code, fn := fmt.Sprintf("UTM zone %dN", z), 16000+z, 0.0
	if south {
		name, code, fn = fmt.Sprintf("UTM zone %dS", z), 16100+z, 10000000
	}
	return transverseMercator(name, code, 0, float64(6*z-183), 0.9996, 500000, fn)
}

// projected returns the projected CRSs the sink defines: Web Mercator
// (3857), the British (27700), French (2154) and New Zealand (2193)
// national grids, and UTM on WGS 84 (32601..32660 north, 32701..32760
// south), NAD83 (26901..26923) and ETRS89 (25828..25838).
func projected(code int) (name string, base int, conv *pjConversion, cs pjCS, ok bool) {
	switch {
	case code == 3857:
		return "WGS 84 / Pseudo-Mercator", 4326, &pjConversion{"Popular Visualisation Pseudo-Mercator", pjMethod{"Popular Visualisation Pseudo Mercator", epsg(1024)}, []pjParam{
			deg("Latitude of natural origin", 8801, 0), deg("Longitude of natural origin", 8802, 0),
			metre("False easting", 8806, 0), metre("False northing", 8807, 0),
		}, epsg(3856)}, csXY, true
	case code == 27700:
		return "OSGB36 / British National Grid", 4277, transverseMercator("British National Grid", 19916, 49, -2, 0.9996012717, 400000, -100000), csEN, true
	case code == 2154:
		return "RGF93 v1 / Lambert-93", 4171, &pjConversion{"Lambert-93", pjMethod{"Lambert Conic Conformal (2SP)", epsg(9802)}, []pjParam{
			deg("Latitude of false origin", 8821, 46.5), deg("Longitude of false origin", 8822, 3),
			deg("Latitude of 1st standard parallel", 8823, 49), deg("Latitude of 2nd standard parallel", 8824, 44),
			metre("Easting at false origin", 8826, 700000), metre("Northing at false origin", 8827, 6600000),
		}, epsg(18085)}, csXY, true
	case code == 2193:
		return "NZGD2000 / New Zealand Transverse Mercator 2000", 4167, transverseMercator("New Zealand Transverse Mercator 2000", 19971, 0, 173, 0.9996, 1600000, 10000000), csNE, true
	case code >= 32601 && code <= 32660:
		return fmt.Sprintf("WGS 84 / UTM zone %dN", code-32600), 4326, utm(code-32600, false), csEN, true
	case code >= 32701 && code <= 32760:
		return fmt.Sprintf("WGS 84 / UTM zone %dS", code-32700), 4326, utm(code-32700, true), csEN, true
	case code >= 26901 && code <= 26923:
		return fmt.Sprintf("NAD83 / UTM zone %dN", code-26900), 4269, utm(code-26900, false), csEN, true
	case code >= 25828 && code <= 25838:
		return fmt.Sprintf("ETRS89 / UTM zone %dN", code-25800), 4258, utm(code-25800, false), csEN, true
	}
	return "", 0, nil, pjCS{}, false
}

// epsgCRS is the PROJJSON of the CRS with EPSG code srid, or "" when the
// sink does not define it.
func epsgCRS(srid int32) string {
	code := int(srid)
	crs, ok := geographic(code)
	if !ok {
		name, base, conv, cs, known := projected(code)
		if !known {
			return ""
		}
		b, _ := geographic(base)
		b.ID = epsg(base)
		crs = &pjCRS{Type: "ProjectedCRS", Name: name, BaseCRS: b, Conversion: conv, CoordinateSystem: cs, ID: epsg(code)}
	}
	crs.Schema = "https://proj.org/schemas/v0.7/projjson.schema.json"
	j, err := json.Marshal(crs)
	if err != nil {
		panic(err) // plain structs of strings and numbers
	}
	return string(j)
}
