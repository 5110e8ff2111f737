package parquet

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/duckdbtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/sinks"
)

// The interop tests write every sample table through the real decoder
// into the sink with its default options, read each file back with two
// independent Parquet readers (apache/arrow-go and DuckDB) and compare
// every value with the sample database's generic rows. Both sides are
// brought to one canonical text by code of this file alone (Go's time
// and math/big packages, hex), never by the sink's own conversions:
//
//	NULL; true/false; integers in decimal; f32:/f64: IEEE bits in hex;
//	dec:<unscaled>e<scale>; date:YYYY-MM-DD; time:<ns since midnight>;
//	ts:YYYY-MM-DDThh:mm:ss.fffffffff (UTC for datetimeoffset); uuid:
//	canonical form; s:<text>; x:<hex>; [f32:...,...] for vectors.

// outCol is one column of the file: a source column's value, or its
// companion (datetimeoffset's offset minutes, sql_variant's base type).
type outCol struct {
	src  int
	part uint8
}

func fileColumns(plans []colPlan) []outCol {
	var out []outCol
	for i, p := range plans {
		out = append(out, outCol{i, partValue})
		if p.offset {
			out = append(out, outCol{i, partOffset})
		}
		if p.vtype {
			out = append(out, outCol{i, partType})
		}
	}
	return out
}

var day0 = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

func tsCanon(t time.Time) string { return "ts:" + t.UTC().Format("2006-01-02T15:04:05.000000000") }

// dateTimeOf is a (days since 0001-01-01, 100 ns ticks) pair as a time.
func dateTimeOf(days int32, ticks int64) time.Time {
	return day0.AddDate(0, 0, int(days)).Add(time.Duration(ticks) * 100)
}

func guidCanon(b []byte) string {
	h := hex.EncodeToString(b)
	return "uuid:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func bigCanon(v *big.Int, scale int) string { return fmt.Sprintf("dec:%se%d", v.String(), scale) }

// want is the canonical text of source value v of column c (plan p) as the
// documented mapping stores it, computed independently of the sink.
func want(p colPlan, c *decode.Column, part uint8, v any) string {
	if v == nil {
		return "NULL"
	}
	switch part {
	case partOffset:
		return strconv.Itoa(int(v.(decode.DateTimeOffset).OffsetMin))
	case partType:
		vr := v.(decode.Variant)
		return "s:" + decode.SQLTypeName(&decode.Column{Type: vr.Type})
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return fmt.Sprintf("f32:%08x", math.Float32bits(x))
	case float64:
		return fmt.Sprintf("f64:%016x", math.Float64bits(x))
	case decode.Decimal:
		m := new(big.Int).Lsh(new(big.Int).SetUint64(x.Hi), 64)
		m.Or(m, new(big.Int).SetUint64(x.Lo))
		if x.Neg {
			m.Neg(m)
		}
		return bigCanon(m, int(c.Type.Scale))
	case decode.Money:
		return bigCanon(big.NewInt(int64(x)), 4)
	case decode.Date:
		return "date:" + day0.AddDate(0, 0, int(x)).Format("2006-01-02")
	case decode.Time:
		ns := int64(x) * 100
		if p.kind == kTimeMicros {
			ns = ns / 1000 * 1000
		}
		return "time:" + strconv.FormatInt(ns, 10)
	case decode.DateTime:
		t := dateTimeOf(x.Days, x.Ticks)
		if p.kind == kTSMillis { // rounded to the millisecond, as SQL Server shows it
			return tsCanon(t.Round(time.Millisecond))
		}
		return tsCanon(t.Truncate(time.Microsecond))
	case decode.DateTimeOffset:
		return tsCanon(dateTimeOf(x.UTC.Days, x.UTC.Ticks).Truncate(time.Microsecond))
	case decode.GUID:
		return guidCanon(x[:])
	case string:
		return "s:" + x
	case []byte:
		if p.kind == kGeo {
			return sampleGeoWKT(x)
		}
		if p.kind == kFixedBytes {
			b := make([]byte, p.fixedLen)
			copy(b, x)
			x = b
		}
		return "x:" + hex.EncodeToString(x)
	case []float32:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = fmt.Sprintf("f32:%08x", math.Float32bits(f))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case decode.Variant:
		return "s:" + variantText(&x.Type, x.Value)
	}
	return fmt.Sprintf("?%T", v)
}

// arrowCanon is the canonical text of value i of an arrow-go array.
func arrowCanon(a arrow.Array, i int, p colPlan) string {
	if a.IsNull(i) {
		return "NULL"
	}
	switch a := a.(type) {
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Uint8:
		return strconv.Itoa(int(a.Value(i)))
	case *array.Int16:
		return strconv.Itoa(int(a.Value(i)))
	case *array.Int32:
		return strconv.Itoa(int(a.Value(i)))
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		return fmt.Sprintf("f32:%08x", math.Float32bits(a.Value(i)))
	case *array.Float64:
		return fmt.Sprintf("f64:%016x", math.Float64bits(a.Value(i)))
	case *array.Decimal128:
		return bigCanon(a.Value(i).BigInt(), int(a.DataType().(*arrow.Decimal128Type).Scale))
	case *array.Decimal256:
		return bigCanon(a.Value(i).BigInt(), int(a.DataType().(*arrow.Decimal256Type).Scale))
	case *array.Date32:
		return "date:" + time.Unix(int64(a.Value(i))*86400, 0).UTC().Format("2006-01-02")
	case *array.Time64:
		v := int64(a.Value(i))
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Microsecond {
			v *= 1000
		}
		return "time:" + strconv.FormatInt(v, 10)
	case *array.Timestamp:
		v := int64(a.Value(i))
		var t time.Time
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Millisecond:
			t = time.UnixMilli(v)
		case arrow.Microsecond:
			t = time.UnixMicro(v)
		default:
			t = time.Unix(0, v)
		}
		return tsCanon(t)
	case *array.FixedSizeBinary:
		if p.kind == kUUID {
			return guidCanon(a.Value(i))
		}
		return "x:" + hex.EncodeToString(a.Value(i))
	case *array.String:
		return "s:" + a.Value(i)
	case *array.Binary:
		if p.kind == kString { // json: arrow-go reads the JSON type as bytes
			return "s:" + string(a.Value(i))
		}
		if p.kind == kGeo {
			return geoCanon(a.Value(i))
		}
		return "x:" + hex.EncodeToString(a.Value(i))
	case *array.List:
		start, end := a.ValueOffsets(i)
		parts := []string{}
		for k := start; k < end; k++ {
			parts = append(parts, arrowCanon(a.ListValues(), int(k), p))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case array.ExtensionArray:
		return arrowCanon(a.Storage(), i, p)
	}
	return fmt.Sprintf("?%T", a)
}

// readArrow reads a file with arrow-go: canonical text per row and column.
func readArrow(t testing.TB, path string, plans []colPlan, cols []outCol) [][]string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("arrow-go open: %v", err)
	}
	defer rdr.Close()
	tbl := arrowTable(t, rdr)
	defer tbl.Release()
	if int(tbl.NumCols()) != len(cols) {
		t.Fatalf("arrow-go: %d columns, want %d", tbl.NumCols(), len(cols))
	}
	rows := make([][]string, tbl.NumRows())
	for ci := range cols {
		r := 0
		for _, chunk := range tbl.Column(ci).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				rows[r] = append(rows[r], arrowCanon(chunk, i, plans[cols[ci].src]))
				r++
			}
		}
	}
	return rows
}

// duckCanon is the canonical text of a value DuckDB's Go driver scanned.
func duckCanon(v any, p colPlan) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		return strconv.FormatBool(x)
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		if p.kind == kTimeNanos { // epoch_ns of a TIME_NS (see readDuckDB)
			return fmt.Sprint("time:", x)
		}
		return fmt.Sprint(x)
	case float32:
		return fmt.Sprintf("f32:%08x", math.Float32bits(x))
	case float64:
		return fmt.Sprintf("f64:%016x", math.Float64bits(x))
	case time.Time:
		switch p.kind {
		case kDate:
			return "date:" + x.Format("2006-01-02")
		case kTimeNanos, kTimeMicros:
			h, m, s := x.Clock()
			return "time:" + strconv.FormatInt((int64(h)*3600+int64(m)*60+int64(s))*1e9+int64(x.Nanosecond()), 10)
		}
		return tsCanon(x)
	case string:
		return "s:" + x
	case []byte:
		if p.kind == kUUID {
			return guidCanon(x)
		}
		if p.kind == kString {
			return "s:" + string(x)
		}
		if p.kind == kGeo {
			return geoCanon(x)
		}
		return "x:" + hex.EncodeToString(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = duckCanon(e, p)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	// DuckDB's own types, seen by their shape (the driver is imported only
	// where cgo is, in internal/duckdbtest): Decimal{Width, Scale, Value}
	// and UUID [16]byte.
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Struct && rv.FieldByName("Scale").IsValid() && rv.FieldByName("Value").IsValid():
		if b, ok := rv.FieldByName("Value").Interface().(*big.Int); ok {
			return bigCanon(b, int(rv.FieldByName("Scale").Uint()))
		}
	case rv.Kind() == reflect.Array && rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8:
		b := make([]byte, 16)
		reflect.Copy(reflect.ValueOf(b), rv)
		return guidCanon(b)
	}
	return fmt.Sprintf("?%T", v)
}

// readDuckDB reads a file with DuckDB: canonical text per row and column.
func readDuckDB(t testing.TB, db *sql.DB, path string, plans []colPlan, cols []outCol) [][]string {
	t.Helper()
	src := "read_parquet('" + strings.ReplaceAll(path, "'", "''") + "')"
	// DuckDB reads TIME NANOS as TIME_NS, exactly, but its Go driver
	// cannot scan that type: take its nanoseconds since midnight. JSON is
	// read as its text.
	var sel []string
	desc, err := db.Query("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM " + src + ")")
	if err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	for desc.Next() {
		var name, typ string
		if err := desc.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		q := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		switch typ {
		case "TIME_NS":
			q = "epoch_ns(" + q + ")"
		case "JSON": // the driver would parse it; compare the text
			q = "CAST(" + q + " AS VARCHAR)"
		}
		sel = append(sel, q)
	}
	desc.Close()
	rs, err := db.Query("SELECT " + strings.Join(sel, ", ") + " FROM " + src)
	if err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	defer rs.Close()
	names, _ := rs.Columns()
	if len(names) != len(cols) {
		t.Fatalf("duckdb: %d columns, want %d", len(names), len(cols))
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var rows [][]string
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatalf("duckdb scan: %v", err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = duckCanon(v, plans[cols[i].src])
		}
		rows = append(rows, row)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("duckdb: %v", err)
	}
	return rows
}

func openDuckDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := duckdbtest.Open(1)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("DuckDB unavailable (%v); the arrow-go half still runs", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestParquetSampleDB exports every sample table with the default
// options (0001-01-01 and 9999-12-31 23:59:59.9999999 included) and
// checks every value through arrow-go and DuckDB.
func TestParquetSampleDB(t *testing.T) {
	rows := map[string]int64{}
	for name, n := range sampledb.DefaultRows {
		rows[name] = min(n, 3000)
	}
	rows["dbo.wide601"], rows["dbo.lob"], rows["dbo.lob_nvarchar"] = 300, 100, 20
	db := sampledb.New(sampledb.Config{Seed: 7, Rows: rows})
	duck := openDuckDB(t)
	names := make([]string, 0, len(rows))
	for name := range rows {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, full := range names {
		schema, name, _ := strings.Cut(full, ".")
		t.Run(full, func(t *testing.T) {
			tb, ok := db.Table(schema, name)
			if !ok {
				t.Fatalf("sampledb has no %s", full)
			}
			cfg, err := ParseConfig(map[string]any{"path": t.TempDir() + "/", "row_group_rows": 1000})
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_ = s.Open(ctx, sinks.ExtractInfo{Name: name})
			streamTable(t, tb, s, tb.Rows, false)
			st, err := s.Publish(ctx)
			if err != nil {
				_ = s.Abort(ctx)
				t.Fatal(err)
			}
			if st.Rows != tb.Rows {
				t.Fatalf("stats %d rows, table %d", st.Rows, tb.Rows)
			}
			cols := fileColumns(s.plans)
			var exp [][]string
			var row []any
			for r := int64(0); r < tb.Rows; r++ {
				row = tb.Row(r, row)
				e := make([]string, len(cols))
				for k, oc := range cols {
					e[k] = want(s.plans[oc.src], &tb.Columns[oc.src], oc.part, row[oc.src])
				}
				exp = append(exp, e)
			}
			for _, rd := range []struct {
				name string
				rows [][]string
			}{
				{"arrow-go", readArrow(t, st.Files[0], s.plans, cols)},
				{"duckdb", readDuckDB(t, duck, st.Files[0], s.plans, cols)},
			} {
				if len(rd.rows) != len(exp) {
					t.Fatalf("%s read %d rows, want %d", rd.name, len(rd.rows), len(exp))
				}
				bad := 0
				for r := range exp {
					for k := range cols {
						if got, w := rd.rows[r][k], exp[r][k]; got != w && bad < 10 {
							bad++
							c := &tb.Columns[cols[k].src]
							t.Errorf("%s row %d column %d %s (%s, %s): got %.120q want %.120q", rd.name, r, k, c.Name, decode.SQLTypeName(c), s.plans[cols[k].src].target, got, w)
						}
					}
				}
			}
		})
	}
}

// geoCanon is a WKB value as WKT, read by the tests' own WKB reader.
func geoCanon(b []byte) string {
	w, err := wkbText(b)
	if err != nil {
		return "bad WKB: " + err.Error()
	}
	return "g:" + w
}

// sampleGeoWKT is the WKT of a sample database spatial value (its points,
// as sampledb documents them).
func sampleGeoWKT(b []byte) string {
	switch {
	case bytes.Equal(b, sampledb.GeographyPoint):
		return "g:POINT (-122.349 47.651)"
	case bytes.Equal(b, sampledb.GeometryPoint):
		return "g:POINT (1 2)"
	}
	return "unknown sample spatial value " + hex.EncodeToString(b)
}
