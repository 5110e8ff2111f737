package parquet

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
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
		m.Encoding != "WKB" || string(mt) != types || string(m.CRS) != `{"id":{"authority":"EPSG","code":2193}}` || m.Edges != "" {
		t.Fatalf("geo metadata %s", fromDuck)
	}
}

// TestParquetGeoRefused: a curve, a second SRID in one column and a broken
// value fail the run naming column and row; nothing is published.
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
		{"srid", other.bytes(), "SRID 3857 after SRID 4326"},
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
