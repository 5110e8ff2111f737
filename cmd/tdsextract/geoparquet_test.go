//go:build cgo

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/duckdbtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// pointWKB is the ISO WKB of a spatial value in SQL Server's single-point
// serialization (SRID, version, flags 0x0C, two float64, latitude first
// for geography), written here from the format rather than by the sink;
// ok is false for any other shape.
func pointWKB(v []byte, geography bool) (wkb []byte, srid int32, ok bool) {
	if len(v) != 22 || v[5]&0x08 == 0 || v[5]&0x03 != 0 {
		return nil, 0, false
	}
	x, y := v[6:14], v[14:22]
	if geography {
		x, y = y, x
	}
	wkb = append([]byte{1}, binary.LittleEndian.AppendUint32(nil, 1)...)
	return append(append(wkb, x...), y...), int32(binary.LittleEndian.Uint32(v)), true
}

// A default export of a table with geography and geometry columns to
// Parquet writes GeoParquet: the columns are selected as stored, every
// value is the WKB of the source value (byte for byte, and the WKB the
// server's own STAsBinary() gives, which a CSV export carries), and the
// file's geo metadata names the columns with their types and the CRS of
// their SRID, so DuckDB reads them as GEOMETRY in that CRS.
func TestExportGeoParquetByDefault(t *testing.T) {
	srv := startServer(t, nil)
	dir := t.TempDir()
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	src := fmt.Sprintf("sqlserver://sa@%s?database=sample&encrypt=disable", srv.Addr())
	for _, to := range []string{"parquet", "csv"} {
		code, out, errOut := runCLI(t, "--log-level", "warn", "export", "--source", src, "--password-env", "TEST_PW",
			"--table", "dbo.type_matrix", "--to", to, "--out", filepath.Join(dir, to))
		if code != 0 {
			t.Fatalf("export --to %s: code %d\n%s\n%s", to, code, out, errOut)
		}
	}
	pq := filepath.Join(dir, "parquet", "type_matrix.parquet")

	// The server's STAsBinary() of every value, from the CSV export (hex).
	f, err := os.Open(filepath.Join(dir, "csv", "type_matrix.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv: %d records, %v", len(recs), err)
	}
	serverWKB := map[string]map[int64][]byte{}
	for _, name := range []string{"c_geography", "c_geometry"} {
		col := -1
		for i, h := range recs[0] {
			if h == name {
				col = i
			}
		}
		if col < 0 {
			t.Fatalf("csv has no %s", name)
		}
		serverWKB[name] = map[int64][]byte{}
		for _, r := range recs[1:] {
			id, _ := strconv.ParseInt(r[0], 10, 64)
			if r[col] == "" {
				continue
			}
			b, err := hex.DecodeString(strings.TrimPrefix(r[col], "0x"))
			if err != nil {
				t.Fatalf("csv %s row %d: %v", name, id, err)
			}
			serverWKB[name][id] = b
		}
	}

	db, err := duckdbtest.Open(1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var geoType, geomType string
	if err := db.QueryRow("SELECT typeof(c_geography), typeof(c_geometry) FROM read_parquet(?) LIMIT 1", pq).Scan(&geoType, &geomType); err != nil {
		t.Fatal(err)
	}
	// DuckDB reads GeoParquet columns as GEOMETRY: no crs is OGC:CRS84,
	// crs null no CRS.
	if geoType != "GEOMETRY('OGC:CRS84')" || geomType != "GEOMETRY" {
		t.Errorf("DuckDB reads c_geography as %s, c_geometry as %s; want GEOMETRY('OGC:CRS84') and GEOMETRY", geoType, geomType)
	}
	geomText := map[string]map[int64]string{}
	for _, name := range []string{"c_geography", "c_geometry"} {
		geomText[name] = map[int64]string{}
		rows, err := db.Query(fmt.Sprintf("SELECT id, ST_AsText(%s) FROM read_parquet(?) WHERE %[1]s IS NOT NULL", name), pq)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var wkt string
			if err := rows.Scan(&id, &wkt); err != nil {
				t.Fatal(err)
			}
			geomText[name][id] = wkt
		}
		rows.Close()
	}
	// The stored bytes, as a reader that ignores the metadata sees them.
	if _, err := db.Exec("SET enable_geoparquet_conversion = false"); err != nil {
		t.Fatal(err)
	}
	got := map[int64][2][]byte{}
	rows, err := db.Query("SELECT id, c_geography, c_geometry FROM read_parquet(?)", pq)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var g, m []byte
		if err := rows.Scan(&id, &g, &m); err != nil {
			t.Fatal(err)
		}
		got[id] = [2][]byte{g, m}
	}
	rows.Close()

	tab, ok := sampledb.New(sampledb.Config{Seed: 1}).Table("dbo", "type_matrix")
	if !ok {
		t.Fatal("no type_matrix")
	}
	if int64(len(got)) != tab.Rows {
		t.Fatalf("parquet has %d rows, the source %d", len(got), tab.Rows)
	}
	srids := map[string]map[int32]bool{"c_geography": {}, "c_geometry": {}}
	values, nulls := 0, 0
	var row []any
	for i := int64(0); i < tab.Rows; i++ {
		row = tab.Row(i, row)
		id := row[0].(int64)
		for k, name := range []string{"c_geography", "c_geometry"} {
			v := row[tab.ColumnIndex(name)]
			out := got[id][k]
			if v == nil {
				nulls++
				if out != nil {
					t.Errorf("row %d %s: NULL exported as %x", id, name, out)
				}
				continue
			}
			values++
			want, srid, ok := pointWKB(v.([]byte), k == 0)
			if !ok {
				t.Fatalf("row %d %s: source value %x is not a point, which this test's expectation covers", id, name, v)
			}
			srids[name][srid] = true
			if !bytes.Equal(out, want) || !bytes.Equal(out, serverWKB[name][id]) {
				t.Errorf("row %d %s: parquet %x, want %x (the server's STAsBinary %x)", id, name, out, want, serverWKB[name][id])
			}
			x := math.Float64frombits(binary.LittleEndian.Uint64(want[5:]))
			y := math.Float64frombits(binary.LittleEndian.Uint64(want[13:]))
			if w := fmt.Sprintf("POINT (%v %v)", x, y); geomText[name][id] != w {
				t.Errorf("row %d %s: DuckDB reads %q, want %q", id, name, geomText[name][id], w)
			}
		}
	}
	if values == 0 || nulls == 0 {
		t.Fatalf("%d values and %d NULLs compared: the sample should have both", values, nulls)
	}
	if fmt.Sprint(srids) != "map[c_geography:map[4326:true] c_geometry:map[0:true]]" {
		t.Fatalf("source SRIDs %v: the metadata expectations below are for 4326 and 0", srids)
	}

	var geo string
	if err := db.QueryRow("SELECT decode(value) FROM parquet_kv_metadata(?) WHERE decode(key) = 'geo'", pq).Scan(&geo); err != nil {
		t.Fatalf("geo metadata: %v", err)
	}
	var meta struct {
		Version       string `json:"version"`
		PrimaryColumn string `json:"primary_column"`
		Columns       map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(geo), &meta); err != nil {
		t.Fatalf("geo metadata %s: %v", geo, err)
	}
	g, m := meta.Columns["c_geography"], meta.Columns["c_geometry"]
	_, gCRS := g["crs"]
	if meta.Version != "1.1.0" || meta.PrimaryColumn != "c_geography" || len(meta.Columns) != 2 ||
		string(g["encoding"]) != `"WKB"` || string(g["geometry_types"]) != `["Point"]` || gCRS || string(g["edges"]) != `"spherical"` ||
		string(m["encoding"]) != `"WKB"` || string(m["geometry_types"]) != `["Point"]` || string(m["crs"]) != "null" || m["edges"] != nil {
		t.Fatalf("geo metadata %s", geo)
	}
}
