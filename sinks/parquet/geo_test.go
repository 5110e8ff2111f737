package parquet

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// clrValue builds a value in SQL Server's spatial serialization (MS-SSCLRT)
// from points, figures and shapes, as SQL Server lays them out; points are
// given x, y (longitude, latitude) and stored latitude first for geography.
type clrValue struct {
	srid      int32
	geography bool
	version   byte
	pts       [][]float64 // x, y[, z]
	figs      []clrFigure
	shapes    []clrShape
	segments  int // version 2: segments (curves)
}

func (v clrValue) bytes() []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(v.srid))
	ver := v.version
	if ver == 0 {
		ver = 1
	}
	flags := byte(0x04) // valid
	z := len(v.pts) > 0 && len(v.pts[0]) == 3
	if z {
		flags |= clrHasZ
	}
	single := len(v.pts) == 1 && len(v.shapes) == 1 && v.shapes[0].typ == ogcPoint
	if single {
		flags |= clrSinglePoint
	}
	b = append(b, ver, flags)
	if !single {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v.pts)))
	}
	for _, p := range v.pts {
		a, c := p[0], p[1]
		if v.geography {
			a, c = c, a
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c))
	}
	if z {
		for _, p := range v.pts {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p[2]))
		}
	}
	if single {
		return b
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v.figs)))
	for _, f := range v.figs {
		b = append(b, f.attr)
		b = binary.LittleEndian.AppendUint32(b, uint32(f.point))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v.shapes)))
	for _, s := range v.shapes {
		b = binary.LittleEndian.AppendUint32(b, uint32(s.parent))
		b = binary.LittleEndian.AppendUint32(b, uint32(s.figure))
		b = append(b, s.typ)
	}
	if ver == 2 {
		b = binary.LittleEndian.AppendUint32(b, uint32(v.segments))
		for range v.segments {
			b = append(b, 2)
		}
	}
	return b
}

// wkbText renders ISO WKB (either byte order) as WKT, independently of the
// sink's writer.
func wkbText(b []byte) (string, error) {
	var rd func() (string, error)
	pos := 0
	need := func(n int) error {
		if pos+n > len(b) {
			return fmt.Errorf("WKB truncated at %d", pos)
		}
		return nil
	}
	rd = func() (string, error) {
		if err := need(5); err != nil {
			return "", err
		}
		var bo binary.ByteOrder = binary.LittleEndian
		if b[pos] == 0 {
			bo = binary.BigEndian
		}
		typ := bo.Uint32(b[pos+1:])
		pos += 5
		dims, zs := 2, ""
		if typ > 1000 {
			typ -= 1000
			dims, zs = 3, " Z"
		}
		u32 := func() (int, error) {
			if err := need(4); err != nil {
				return 0, err
			}
			n := int(bo.Uint32(b[pos:]))
			pos += 4
			return n, nil
		}
		point := func() (string, error) {
			if err := need(8 * dims); err != nil {
				return "", err
			}
			var cs []string
			for k := range dims {
				cs = append(cs, strconv.FormatFloat(math.Float64frombits(bo.Uint64(b[pos+8*k:])), 'g', -1, 64))
			}
			pos += 8 * dims
			return strings.Join(cs, " "), nil
		}
		points := func() (string, error) {
			n, err := u32()
			if err != nil {
				return "", err
			}
			var ps []string
			for range n {
				p, err := point()
				if err != nil {
					return "", err
				}
				ps = append(ps, p)
			}
			if n == 0 {
				return "EMPTY", nil
			}
			return "(" + strings.Join(ps, ", ") + ")", nil
		}
		names := map[uint32]string{1: "POINT", 2: "LINESTRING", 3: "POLYGON", 4: "MULTIPOINT", 5: "MULTILINESTRING", 6: "MULTIPOLYGON", 7: "GEOMETRYCOLLECTION"}
		name, ok := names[typ]
		if !ok {
			return "", fmt.Errorf("WKB type %d", typ)
		}
		name += zs
		switch typ {
		case 1:
			p, err := point()
			if strings.Contains(p, "NaN") {
				return name + " EMPTY", err
			}
			return name + " (" + p + ")", err
		case 2:
			p, err := points()
			return name + " " + p, err
		case 3:
			n, err := u32()
			var rings []string
			for range n {
				r, err := points()
				if err != nil {
					return "", err
				}
				rings = append(rings, r)
			}
			if n == 0 {
				return name + " EMPTY", err
			}
			return name + " (" + strings.Join(rings, ", ") + ")", err
		}
		n, err := u32()
		var parts []string
		for range n {
			p, err := rd()
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return name + " (" + strings.Join(parts, ", ") + ")", err
	}
	s, err := rd()
	if err == nil && pos != len(b) {
		err = fmt.Errorf("%d bytes after the WKB", len(b)-pos)
	}
	return s, err
}

// geoCases are values SQL Server serializes, and their WKT.
var geoCases = []struct {
	v   clrValue
	wkt string
}{
	{clrValue{pts: [][]float64{{-122.349, 47.651}}, shapes: []clrShape{{-1, 0, ogcPoint}}}, "POINT (-122.349 47.651)"},
	{clrValue{pts: [][]float64{{1, 2}, {3, 4}, {5, 6}}, figs: []clrFigure{{1, 0}}, shapes: []clrShape{{-1, 0, ogcLineString}}}, "LINESTRING (1 2, 3 4, 5 6)"},
	{clrValue{pts: [][]float64{{0, 0}, {10, 0}, {10, 10}, {0, 0}, {2, 2}, {3, 2}, {3, 3}, {2, 2}},
		figs: []clrFigure{{2, 0}, {0, 4}}, shapes: []clrShape{{-1, 0, ogcPolygon}}},
		"POLYGON ((0 0, 10 0, 10 10, 0 0), (2 2, 3 2, 3 3, 2 2))"},
	{clrValue{pts: [][]float64{{0, 0}, {1, 0}, {1, 1}, {0, 0}, {5, 5}, {6, 5}, {6, 6}, {5, 5}},
		figs: []clrFigure{{2, 0}, {2, 4}}, shapes: []clrShape{{-1, 0, ogcMultiPolygon}, {0, 0, ogcPolygon}, {0, 1, ogcPolygon}}},
		"MULTIPOLYGON (POLYGON ((0 0, 1 0, 1 1, 0 0)), POLYGON ((5 5, 6 5, 6 6, 5 5)))"},
	{clrValue{pts: [][]float64{{7, 8}, {1, 1}, {2, 2}},
		figs: []clrFigure{{1, 0}, {1, 1}}, shapes: []clrShape{{-1, 0, ogcGeometryCollection}, {0, 0, ogcPoint}, {0, 1, ogcLineString}, {0, -1, ogcPolygon}}},
		"GEOMETRYCOLLECTION (POINT (7 8), LINESTRING (1 1, 2 2), POLYGON EMPTY)"},
	{clrValue{pts: [][]float64{{1, 2}, {3, 4}}, figs: []clrFigure{{1, 0}, {1, 1}}, shapes: []clrShape{{-1, 0, ogcMultiPoint}, {0, 0, ogcPoint}, {0, 1, ogcPoint}}},
		"MULTIPOINT (POINT (1 2), POINT (3 4))"},
	{clrValue{pts: [][]float64{{1, 2, 3}}, shapes: []clrShape{{-1, 0, ogcPoint}}}, "POINT Z (1 2 3)"},
	{clrValue{shapes: []clrShape{{-1, -1, ogcPoint}}}, "POINT EMPTY"},
}

// TestParquetGeoParquet writes geography and geometry columns in SQL
// Server's serialization and reads them back: arrow-go's values are WKB
// that an independent reader renders as the expected WKT, and the file's
// "geo" metadata, as DuckDB's parquet_kv_metadata reads it, is GeoParquet
// 1.1 with the types present and the CRS of the SRID.
func TestParquetGeoParquet(t *testing.T) {
	cols := []decode.Column{
		ncol("g", decode.TypeInfo{Type: decode.TypeUDT, UDTName: "geography"}),
		ncol("m", decode.TypeInfo{Type: decode.TypeUDT, UDTName: "geometry"}),
		ncol("id", decode.TypeInfo{Type: decode.TypeInt4}),
	}
	var rows [][]cell
	for i, gc := range geoCases {
		g := gc.v
		g.geography, g.srid = true, 4326
		m := gc.v
		m.srid = 2193
		rows = append(rows, []cell{{Kind: 'x', X: g.bytes()}, {Kind: 'x', X: m.bytes()}, {Kind: 'i', I: int64(i)}})
	}
	rows = append(rows, []cell{{Kind: 'n'}, {Kind: 'n'}, {Kind: 'i', I: -1}})
	st := writeTable(t, Config{Path: t.TempDir() + "/"}, cols, rows)

	res := readBack(t, st.Files[0])
	for i, r := range res.rows {
		if i == len(geoCases) {
			if r[0] != "NULL" || r[1] != "NULL" {
				t.Errorf("NULL row: %v", r)
			}
			continue
		}
		for k := range 2 {
			raw, err := hexBytes(r[k])
			if err != nil {
				t.Fatalf("row %d column %d: %v", i, k, err)
			}
			got, err := wkbText(raw)
			if err != nil || got != geoCases[i].wkt {
				t.Errorf("row %d column %d: WKB reads as %q (%v), want %q", i, k, got, err, geoCases[i].wkt)
			}
		}
	}

	rdr, err := file.OpenParquetFile(st.Files[0], false)
	if err != nil {
		t.Fatal(err)
	}
	kv := rdr.MetaData().KeyValueMetadata().FindValue("geo")
	rdr.Close()
	duck := openDuckDB(t)
	var fromDuck string
	if err := duck.QueryRow("SELECT decode(value) FROM parquet_kv_metadata(" + sqlQuoteTest(st.Files[0]) + ") WHERE decode(key) = 'geo'").Scan(&fromDuck); err != nil {
		t.Fatalf("duckdb parquet_kv_metadata: %v", err)
	}
	var gType, mType string
	if err := duck.QueryRow("SELECT typeof(g), typeof(m) FROM read_parquet("+sqlQuoteTest(st.Files[0])+") LIMIT 1").Scan(&gType, &mType); err != nil {
		t.Fatal(err)
	}
	// DuckDB reads both as geometries, in the CRS the metadata gives.
	if gType != "GEOMETRY('OGC:CRS84')" || mType != "GEOMETRY('"+epsgCRS(2193)+"')" {
		t.Errorf("DuckDB reads g as %s, m as %s", gType, mType)
	}
	if kv == nil || *kv != fromDuck {
		t.Fatalf("geo metadata: arrow-go %v, DuckDB %q", kv, fromDuck)
	}
	var meta struct {
		Version       string `json:"version"`
		PrimaryColumn string `json:"primary_column"`
		Columns       map[string]struct {
			Encoding      string          `json:"encoding"`
			GeometryTypes []string        `json:"geometry_types"`
			CRS           json.RawMessage `json:"crs"`
			Edges         string          `json:"edges"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(fromDuck), &meta); err != nil {
		t.Fatalf("geo metadata %q: %v", fromDuck, err)
	}
	types := `["GeometryCollection","LineString","MultiPoint","MultiPolygon","Point","Point Z","Polygon"]`
	g, m := meta.Columns["g"], meta.Columns["m"]
	gt, _ := json.Marshal(g.GeometryTypes)
	mt, _ := json.Marshal(m.GeometryTypes)
	if meta.Version != "1.1.0" || meta.PrimaryColumn != "g" || len(meta.Columns) != 2 ||
		g.Encoding != "WKB" || string(gt) != types || g.CRS != nil || g.Edges != "spherical" ||
		m.Encoding != "WKB" || string(mt) != types || m.Edges != "" {
		t.Fatalf("geo metadata %s", fromDuck)
	}
	var crs struct {
		Type, Name string
		ID         struct {
			Authority string
			Code      int
		}
	}
	if err := json.Unmarshal(m.CRS, &crs); err != nil || crs.Type != "ProjectedCRS" || crs.Name != "NZGD2000 / New Zealand Transverse Mercator 2000" || crs.ID.Authority != "EPSG" || crs.ID.Code != 2193 {
		t.Fatalf("crs of SRID 2193: %s (%v)", m.CRS, err)
	}
}

// TestParquetGeoRefused: a curve and a broken value fail the run naming
// column and row; nothing is published.
func TestParquetGeoRefused(t *testing.T) {
	cols := []decode.Column{ncol("g", decode.TypeInfo{Type: decode.TypeUDT, UDTName: "geometry"})}
	point := clrValue{srid: 4326, pts: [][]float64{{1, 2}}, shapes: []clrShape{{-1, 0, ogcPoint}}}
	other := point
	other.srid = 3857
	arc := clrValue{version: 2, pts: [][]float64{{0, 0}, {1, 1}, {2, 0}}, figs: []clrFigure{{2, 0}}, shapes: []clrShape{{-1, 0, 8}}}
	for _, tc := range []struct {
		name string
		v    []byte
		want string
	}{
		{"curve", arc.bytes(), "STCurveToLine()"},
		{"truncated", point.bytes()[:10], "truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := New(Config{Path: dir + "/"})
			if err != nil {
				t.Fatal(err)
			}
			rows := [][]cell{{{Kind: 'x', X: point.bytes()}}, {{Kind: 'x', X: tc.v}}}
			err = runCells(t, s, cols, rows)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `column "g", row 2`) {
				t.Fatalf("error %v, want one naming the column, row 2 and %q", err, tc.want)
			}
			if ents := sinktest.DirEntries(t, dir); len(ents) != 0 {
				t.Fatalf("left %v", ents)
			}
		})
	}
}

func hexBytes(s string) ([]byte, error) {
	h, ok := strings.CutPrefix(s, "bin:")
	if !ok {
		return nil, fmt.Errorf("not a BYTE_ARRAY value: %q", s)
	}
	return hex.DecodeString(h)
}

func sqlQuoteTest(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// runCells runs rows through s and publishes; the first error, after
// which the sink is aborted.
func runCells(t *testing.T, s *Sink, cols []decode.Column, rows [][]cell) error {
	ctx := context.Background()
	if err := s.Open(ctx, sinks.ExtractInfo{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	err := s.Columns(cols, make([]decode.Mode, len(cols)))
	for _, r := range rows {
		if err != nil {
			break
		}
		for i := range r {
			drive(s, i, &r[i])
		}
		err = s.EndRow()
	}
	if err == nil {
		_, err = s.Publish(ctx)
	}
	if err != nil {
		_ = s.Abort(ctx)
	}
	return err
}

// definedSRIDs are the EPSG codes epsgCRS defines, read off its result.
func definedSRIDs() []int32 {
	var codes []int32
	for c := int32(0); c < 40000; c++ {
		if epsgCRS(c) != "" {
			codes = append(codes, c)
		}
	}
	return codes
}

// checkProjJSON checks v (a decoded PROJJSON object of the given schema
// definition) against the members PROJJSON's schema (v0.7) requires and
// allows for the definitions the sink writes, recursively.
func checkProjJSON(t *testing.T, where, def string, v any) {
	t.Helper()
	o, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: %s is %T, not an object", where, def, v)
		return
	}
	rules := map[string]struct{ required, allowed string }{
		"geodetic_crs":      {"name datum", "$schema type coordinate_system id"},
		"projected_crs":     {"name base_crs conversion coordinate_system", "$schema type id"},
		"datum":             {"name ellipsoid", "type id"},
		"ellipsoid":         {"name semi_major_axis inverse_flattening", "id"},
		"coordinate_system": {"subtype axis", ""},
		"axis":              {"name abbreviation direction", "unit"},
		"conversion":        {"name method", "parameters id"},
		"method":            {"name", "id"},
		"parameter_value":   {"name value", "unit id"},
		"id":                {"authority code", ""},
	}[def]
	for _, k := range strings.Fields(rules.required) {
		if _, ok := o[k]; !ok {
			t.Errorf("%s: %s lacks the required %q", where, def, k)
		}
	}
	for k, x := range o {
		if !strings.Contains(" "+rules.required+" "+rules.allowed+" ", " "+k+" ") {
			t.Errorf("%s: %s has %q, which the schema does not allow", where, def, k)
		}
		sub := map[string]string{"datum": "datum", "ellipsoid": "ellipsoid", "coordinate_system": "coordinate_system",
			"conversion": "conversion", "method": "method", "id": "id", "base_crs": "geodetic_crs"}[k]
		switch {
		case sub != "":
			checkProjJSON(t, where+"."+k, sub, x)
		case k == "axis" || k == "parameters":
			items, _ := x.([]any)
			if len(items) == 0 {
				t.Errorf("%s: %s.%s is empty", where, def, k)
			}
			for i, it := range items {
				checkProjJSON(t, fmt.Sprintf("%s.%s[%d]", where, k, i), map[string]string{"axis": "axis", "parameters": "parameter_value"}[k], it)
			}
		case k == "unit":
			if u, _ := x.(string); u != "metre" && u != "degree" && u != "unity" {
				t.Errorf("%s: unit %v", where, x)
			}
		}
	}
	if def == "geodetic_crs" || def == "projected_crs" {
		want := map[string]string{"geodetic_crs": "GeographicCRS", "projected_crs": "ProjectedCRS"}[def]
		if o["type"] != want && !(def == "geodetic_crs" && o["type"] == nil) {
			t.Errorf("%s: type %v, want %s", where, o["type"], want)
		}
	}
}

// TestParquetGeoCRS: every CRS the sink defines is PROJJSON as its schema
// has it, identified by its own EPSG code, with the EPSG parameters of a
// sample of them as published; SRID 4326 is GeoParquet's default (no
// crs), and SRID 0 or one the sink does not define is null (unknown).
func TestParquetGeoCRS(t *testing.T) {
	codes := definedSRIDs()
	if len(codes) != 164 {
		t.Errorf("%d CRSs defined, want 164 (10 named, 60+60 WGS 84 UTM, 23 NAD83 UTM, 11 ETRS89 UTM)", len(codes))
	}
	type crsDoc struct {
		Type, Name string
		ID         struct {
			Authority string
			Code      int32
		}
		Conversion struct {
			Name       string
			Parameters []struct {
				Name  string
				Value float64
			}
		}
		BaseCRS struct {
			Name  string
			Datum struct{ Name string }
		} `json:"base_crs"`
		CoordinateSystem struct {
			Axis []struct{ Abbreviation string }
		} `json:"coordinate_system"`
	}
	docs := map[int32]crsDoc{}
	for _, c := range codes {
		j := epsgCRS(c)
		var v map[string]any
		if err := json.Unmarshal([]byte(j), &v); err != nil {
			t.Fatalf("SRID %d: %v", c, err)
		}
		def := "geodetic_crs"
		if v["type"] == "ProjectedCRS" {
			def = "projected_crs"
		}
		checkProjJSON(t, strconv.Itoa(int(c)), def, v)
		var d crsDoc
		if err := json.Unmarshal([]byte(j), &d); err != nil || d.ID.Authority != "EPSG" || d.ID.Code != c {
			t.Errorf("SRID %d: id %+v (%v)", c, d.ID, err)
		}
		docs[c] = d
	}
	// EPSG's published parameters: name, base datum, the axis
	// abbreviations in order, and the conversion's parameters in order.
	for c, w := range map[int32]struct {
		name, datum, axes string
		params            []float64
	}{
		4326:  {"WGS 84", "", "Lat Lon", nil},
		4269:  {"NAD83", "", "Lat Lon", nil},
		3857:  {"WGS 84 / Pseudo-Mercator", "World Geodetic System 1984", "X Y", []float64{0, 0, 0, 0}},
		27700: {"OSGB36 / British National Grid", "Ordnance Survey of Great Britain 1936", "E N", []float64{49, -2, 0.9996012717, 400000, -100000}},
		2154:  {"RGF93 v1 / Lambert-93", "Reseau Geodesique Francais 1993 v1", "X Y", []float64{46.5, 3, 49, 44, 700000, 6600000}},
		2193:  {"NZGD2000 / New Zealand Transverse Mercator 2000", "New Zealand Geodetic Datum 2000", "N E", []float64{0, 173, 0.9996, 1600000, 10000000}},
		32601: {"WGS 84 / UTM zone 1N", "World Geodetic System 1984", "E N", []float64{0, -177, 0.9996, 500000, 0}},
		32632: {"WGS 84 / UTM zone 32N", "World Geodetic System 1984", "E N", []float64{0, 9, 0.9996, 500000, 0}},
		32760: {"WGS 84 / UTM zone 60S", "World Geodetic System 1984", "E N", []float64{0, 177, 0.9996, 500000, 10000000}},
		26910: {"NAD83 / UTM zone 10N", "North American Datum 1983", "E N", []float64{0, -123, 0.9996, 500000, 0}},
		25832: {"ETRS89 / UTM zone 32N", "European Terrestrial Reference System 1989", "E N", []float64{0, 9, 0.9996, 500000, 0}},
	} {
		d := docs[c]
		var axes []string
		for _, a := range d.CoordinateSystem.Axis {
			axes = append(axes, a.Abbreviation)
		}
		var params []float64
		for _, p := range d.Conversion.Parameters {
			params = append(params, p.Value)
		}
		if d.Name != w.name || d.BaseCRS.Datum.Name != w.datum || strings.Join(axes, " ") != w.axes || fmt.Sprint(params) != fmt.Sprint(w.params) {
			t.Errorf("SRID %d: %+v", c, d)
		}
	}

	for _, tc := range []struct {
		c    geoColumn
		want string
	}{
		{geoColumn{geography: true, srid: 4326, sridSeen: true}, ""},
		{geoColumn{geography: true}, ""}, // no value: SQL Server's default SRID
		{geoColumn{srid: 4326, sridSeen: true}, ""},
		{geoColumn{srid: 0, sridSeen: true}, `,"crs":null`},
		{geoColumn{geography: true, srid: 4326, sridSeen: true, mixed: true}, `,"crs":null`},
		{geoColumn{}, `,"crs":null`},
		{geoColumn{srid: 3035, sridSeen: true}, `,"crs":null`}, // an EPSG code the sink does not define
		{geoColumn{geography: true, srid: 4258, sridSeen: true}, `,"crs":` + epsgCRS(4258)},
	} {
		if got := crsMember(tc.c); got != tc.want {
			t.Errorf("%+v: crs member %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestParquetGeoCRSProj has PROJ itself read the definitions where its
// projinfo is installed: each must parse and be identified, at 100 %, as
// the EPSG CRS of its code. Without projinfo the schema rules and EPSG
// parameters above are the check.
func TestParquetGeoCRSProj(t *testing.T) {
	projinfo, err := exec.LookPath("projinfo")
	if err != nil {
		t.Skip("projinfo (PROJ) is not installed")
	}
	// every CRS that is not UTM, and the first and last zone of each UTM
	// range (their zones differ only in the number)
	for _, c := range []int32{4326, 4269, 4258, 4277, 4171, 4167, 3857, 27700, 2154, 2193, 32601, 32660, 32701, 32760, 26901, 26923, 25828, 25838} {
		if epsgCRS(c) == "" {
			t.Fatalf("SRID %d is not defined", c)
		}
		out, err := exec.Command(projinfo, "--identify", "-o", "PROJ", epsgCRS(c)).CombinedOutput()
		if want := fmt.Sprintf("EPSG:%d: 100 %%", c); err != nil || !strings.Contains(string(out), want) {
			t.Errorf("SRID %d: projinfo says (%v):\n%s", c, err, out)
		}
	}
}

// A column whose values carry two SRIDs is written, every value's WKB as
// it is, with "crs": null: GeoParquet has one CRS per column.
func TestParquetGeoMixedSRID(t *testing.T) {
	cols := []decode.Column{ncol("g", decode.TypeInfo{Type: decode.TypeUDT, UDTName: "geometry"})}
	point := clrValue{srid: 4326, pts: [][]float64{{1, 2}}, shapes: []clrShape{{-1, 0, ogcPoint}}}
	other := clrValue{srid: 3857, pts: [][]float64{{3, 4}}, shapes: []clrShape{{-1, 0, ogcPoint}}}
	st := writeTable(t, Config{Path: t.TempDir() + "/"}, cols, [][]cell{{{Kind: 'x', X: point.bytes()}}, {{Kind: 'x', X: other.bytes()}}})
	res := readBack(t, st.Files[0])
	for i, want := range []string{"POINT (1 2)", "POINT (3 4)"} {
		raw, err := hexBytes(res.rows[i][0])
		if err != nil {
			t.Fatal(err)
		}
		if got, err := wkbText(raw); err != nil || got != want {
			t.Errorf("row %d: %q (%v), want %q", i, got, err, want)
		}
	}
	rdr, err := file.OpenParquetFile(st.Files[0], false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata().FindValue("geo")
	var meta struct {
		Columns map[string]map[string]json.RawMessage `json:"columns"`
	}
	if kv == nil || json.Unmarshal([]byte(*kv), &meta) != nil {
		t.Fatalf("geo metadata %v", kv)
	}
	if crs, ok := meta.Columns["g"]["crs"]; !ok || string(crs) != "null" {
		t.Errorf("crs of a column with SRIDs 4326 and 3857: %s (present %v), want null", crs, ok)
	}
}
