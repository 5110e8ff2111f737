package sqlexec

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

func table(t *testing.T, schema, name string) *sampledb.Table {
	t.Helper()
	tb, ok := sampleDB().Table(schema, name)
	if !ok {
		t.Fatalf("no table %s.%s", schema, name)
	}
	return tb
}

// wantRows checks decoded rows against the table's generated rows idx,
// projected on cols (nil = all columns).
func wantRows(t *testing.T, label string, got [][]any, tb *sampledb.Table, idx []int64, cols []int) {
	t.Helper()
	if len(got) != len(idx) {
		t.Fatalf("%s: %d rows, want %d", label, len(got), len(idx))
	}
	for k, i := range idx {
		row := tb.Row(i, nil)
		want := row
		if cols != nil {
			want = make([]any, len(cols))
			for j, c := range cols {
				want[j] = row[c]
			}
		}
		if !reflect.DeepEqual(got[k], want) {
			t.Fatalf("%s: row %d (table row %d) =\n%v\nwant\n%v", label, k, i, got[k], want)
		}
	}
}

func span(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestSelectKeyRanges(t *testing.T) {
	s := NewSession(sampleDB())
	poc := table(t, "dbo", "poc48")
	n := poc.Rows
	cases := []struct {
		sql    string
		params []Param
		idx    []int64
	}{
		// A key range over a two-billion-row table reads only its rows.
		{"SELECT * FROM dbo.poc48 WHERE id >= 1999999990", nil, span(n-11, n)},
		{"SELECT * FROM [dbo].[poc48] WHERE [id] > 1999999990 AND [id] <= 1999999995", nil, span(n-10, n-5)},
		{"SELECT * FROM poc48 WHERE id BETWEEN 1000000 AND 1000004", nil, span(999999, 1000004)},
		{"SELECT * FROM poc48 WHERE id = 123456789", nil, []int64{123456788}},
		{"SELECT * FROM poc48 WHERE 123456789 = id", nil, []int64{123456788}},
		{"SELECT * FROM poc48 WHERE 5 >= id", nil, span(0, 5)},
		{"SELECT * FROM poc48 WHERE id < 3", nil, span(0, 2)},
		{"SELECT * FROM poc48 WHERE id > 2.5 AND id < 6.5", nil, span(2, 6)},
		{"SELECT * FROM poc48 WHERE id = 2.5", nil, nil},
		{"SELECT * FROM poc48 WHERE id = NULL", nil, nil},
		{"SELECT * FROM poc48 WHERE id > 10 AND id < 5", nil, nil},
		{"SELECT * FROM poc48 WHERE id >= @lo AND id < @hi", []Param{{Name: "@lo", Value: int64(1500000000)}, {Name: "hi", Value: int64(1500000004)}}, span(1499999999, 1500000003)},
		{"SELECT * FROM poc48 WHERE id IN (7, 3, 1999999999, NULL)", nil, []int64{2, 6, n - 2}},
		{"SELECT TOP (3) * FROM poc48 WHERE id > 1000", nil, span(1000, 1003)},
		{"SELECT TOP 4 * FROM poc48 ORDER BY id DESC", nil, []int64{n - 1, n - 2, n - 3, n - 4}},
		{"SELECT TOP 2 * FROM poc48 WHERE id < 100 ORDER BY [id] DESC", nil, []int64{98, 97}},
		{"SELECT TOP 0 * FROM poc48", nil, nil},
		{"SELECT TOP 3 * FROM poc48 ORDER BY id DESC, i02", nil, []int64{n - 1, n - 2, n - 3}},
		{"SELECT * FROM poc48 ORDER BY id OFFSET 10 ROWS FETCH NEXT 3 ROWS ONLY", nil, span(10, 13)},
		{"SELECT * FROM poc48 ORDER BY id DESC OFFSET 2 ROWS FETCH FIRST 2 ROWS ONLY", nil, []int64{n - 3, n - 4}},
		{"SELECT * FROM poc48 WHERE id <= 100 AND id % 2 = 0 ORDER BY id OFFSET 3 ROWS FETCH NEXT 2 ROWS ONLY", nil, []int64{7, 9}},
		{"SELECT * FROM poc48 WHERE id > 1999999990 ORDER BY id OFFSET @p1 ROWS", []Param{{Name: "p1", Value: int64(7)}}, span(n-3, n)},
		{"SELECT TOP (@n) * FROM poc48 WHERE id >= 42 ORDER BY id ASC", []Param{{Name: "n", Value: int64(2)}}, span(41, 43)},
		{"SELECT * FROM sample.dbo.poc48 WHERE (id >= 10 AND id <= 12) OR id = 20", nil, []int64{9, 10, 11, 19}},
		{"SELECT * FROM poc48 WHERE NOT (id > 3)", nil, span(0, 3)},
	}
	for _, c := range cases {
		for _, nbc := range []bool{false, true} {
			rs := mustExec(t, s, c.sql, c.params...)
			if len(rs) != 1 {
				t.Fatalf("%s: %d results", c.sql, len(rs))
			}
			d := drain(t, rs[0], 3, nbc)
			wantRows(t, c.sql, d.rows, poc, c.idx, nil)
			if rs[0].Table != "dbo.poc48" {
				t.Errorf("%s: Table = %q", c.sql, rs[0].Table)
			}
		}
	}
}

func TestSelectFastPathBytes(t *testing.T) {
	// SELECT * over a key range is served by the table's pre-encoded rows:
	// the bytes are exactly Table.AppendRows.
	s := NewSession(sampleDB())
	tb := table(t, "dbo", "odbc5")
	rs := mustExec(t, s, "SELECT * FROM dbo.odbc5 WHERE id > 100 AND id <= 1100")
	if _, ok := rs[0].Rows.(*fastSource); !ok {
		t.Fatalf("row source is %T, want the fast path", rs[0].Rows)
	}
	if rs[0].RowCount != 1000 {
		t.Errorf("RowCount = %d, want 1000", rs[0].RowCount)
	}
	var got []byte
	for {
		var done bool
		got, _, done = rs[0].Rows.AppendRows(got, 64, true)
		if done {
			break
		}
	}
	want := tb.AppendRows(nil, 100, 1100, true)
	if !bytes.Equal(got, want) {
		t.Fatalf("fast path bytes differ from Table.AppendRows")
	}
}

func TestSelectProjectionAndFilters(t *testing.T) {
	s := NewSession(sampleDB())
	tb := table(t, "dbo", "odbc5")
	// Expected rows by filtering Row(i) directly.
	filter := func(lo, hi int64, keep func(r []any) bool) []int64 {
		var out []int64
		for i := lo; i < hi; i++ {
			if keep(tb.Row(i, nil)) {
				out = append(out, i)
			}
		}
		return out
	}
	cases := []struct {
		sql  string
		idx  []int64
		cols []int
	}{
		{"SELECT score, id FROM dbo.odbc5 WHERE id <= 500 AND score > 0", filter(0, 500, func(r []any) bool { return r[4] != nil && r[4].(float64) > 0 }), []int{4, 0}},
		{"SELECT o.name, o.label FROM dbo.odbc5 AS o WHERE o.id < 300 AND o.label IS NULL", filter(0, 299, func(r []any) bool { return r[3] == nil }), []int{2, 3}},
		{"SELECT id, big FROM odbc5 WHERE id <= 2000 AND big BETWEEN 0 AND 4000000000000000000", filter(0, 2000, func(r []any) bool {
			b, ok := r[1].(int64)
			return ok && b >= 0 && b <= 4000000000000000000
		}), []int{0, 1}},
		{"SELECT id FROM odbc5 WHERE id < 1000 AND (name LIKE 'final%' OR label IN (N'Straße', N'日本語テキスト'))", filter(0, 999, func(r []any) bool {
			l, _ := r[3].(string)
			n, _ := r[2].(string)
			return strings.HasPrefix(strings.ToLower(n), "final") || l == "Straße" || l == "日本語テキスト"
		}), []int{0}},
		{"SELECT TOP 7 id, name FROM odbc5 WHERE id > 0 ORDER BY id DESC", span(tb.Rows-7, tb.Rows), []int{0, 2}},
		{"SELECT * FROM odbc5 WHERE id <= 50 AND id % 7 = 0", filter(0, 50, func(r []any) bool { return r[0].(int64)%7 == 0 }), nil},
	}
	for _, c := range cases {
		d := query(t, s, c.sql)
		idx := c.idx
		if strings.Contains(c.sql, "DESC") {
			idx = make([]int64, len(c.idx))
			for i := range c.idx {
				idx[i] = c.idx[len(c.idx)-1-i]
			}
		}
		wantRows(t, c.sql, d.rows, tb, idx, c.cols)
	}
}

func TestSelectOrderByNonKey(t *testing.T) {
	s := NewSession(sampleDB())
	d := query(t, s, "SELECT TOP 20 customer_id, last_name FROM sales.customers ORDER BY last_name DESC, customer_id")
	if len(d.rows) != 20 {
		t.Fatalf("%d rows", len(d.rows))
	}
	for i := 1; i < len(d.rows); i++ {
		a, b := d.rows[i-1], d.rows[i]
		c := compareText(a[1].(string), b[1].(string))
		if c < 0 || (c == 0 && a[0].(int64) > b[0].(int64)) {
			t.Fatalf("rows %d,%d out of order: %v %v", i-1, i, a, b)
		}
	}
	all := query(t, s, "SELECT name FROM sys.tables ORDER BY name")
	page := query(t, s, "SELECT name FROM sys.tables ORDER BY name OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY")
	if !reflect.DeepEqual(page.rows, all.rows[1:3]) {
		t.Errorf("OFFSET/FETCH page %v, want %v", page.rows, all.rows[1:3])
	}
	// A sort over a huge table is refused, not attempted.
	_, err := s.Exec("SELECT * FROM poc48 ORDER BY i02", nil)
	if errNumber(err) != 50000 {
		t.Fatalf("sort of 2e9 rows: %v, want the scan-limit error", err)
	}
}

func TestAggregates(t *testing.T) {
	s := NewSession(sampleDB())
	poc := table(t, "dbo", "poc48")
	prod := table(t, "sales", "products")
	var minP, maxP decode.Decimal
	var sumStock, nonNull int64
	for i := int64(0); i < prod.Rows; i++ {
		r := prod.Row(i, nil)
		p := r[4].(decode.Decimal)
		if i == 0 || decToRat(p).Cmp(decToRat(minP)) < 0 {
			minP = p
		}
		if i == 0 || decToRat(p).Cmp(decToRat(maxP)) > 0 {
			maxP = p
		}
		if r[5] != nil {
			sumStock += r[5].(int64)
			nonNull++
		}
	}
	cases := []struct {
		sql  string
		want []any
	}{
		{"SELECT COUNT_BIG(*) FROM dbo.poc48", []any{poc.Rows}},
		{"SELECT COUNT(*) FROM poc48 WHERE id > 1000 AND id <= 2000", []any{int64(1000)}},
		{"SELECT COUNT_BIG(*) FROM [sample].[dbo].[poc48] WHERE [id] BETWEEN 10 AND 19", []any{int64(10)}},
		{"SELECT MIN(id), MAX(id) FROM poc48", []any{int64(1), poc.Rows}},
		{"SELECT MAX(id) FROM poc48 WHERE id < 77", []any{int64(76)}},
		{"SELECT MIN(id) FROM poc48 WHERE id > 3000000000", []any{nil}},
		{"SELECT MIN(price), MAX(price) FROM sales.products", []any{minP, maxP}},
		{"SELECT COUNT(in_stock), SUM(in_stock) FROM sales.products", []any{nonNull, sumStock}},
		{"SELECT COUNT(*) FROM sales.products WHERE price > 0", []any{prod.Rows}},
		{"SELECT COUNT(*) AS n FROM sales.products WHERE 1 = 0", []any{int64(0)}},
	}
	for _, c := range cases {
		d := query(t, s, c.sql)
		if len(d.rows) != 1 {
			t.Fatalf("%s: %d rows", c.sql, len(d.rows))
		}
		got := d.rows[0]
		for i := range c.want {
			w, g := c.want[i], got[i]
			if wd, ok := w.(decode.Decimal); ok {
				gd, ok := g.(decode.Decimal)
				if !ok || decToRat(wd).Cmp(decToRat(gd)) != 0 {
					t.Errorf("%s: column %d = %v, want %v", c.sql, i, g, w)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: column %d = %#v, want %#v", c.sql, i, g, w)
			}
		}
	}
	// COUNT(*) result type is int, COUNT_BIG bigint.
	d := query(t, s, "SELECT COUNT(*), COUNT_BIG(*) FROM sales.products")
	if d.cols[0].Type.Size != 4 || d.cols[1].Type.Size != 8 {
		t.Errorf("COUNT/COUNT_BIG sizes %d/%d, want 4/8", d.cols[0].Type.Size, d.cols[1].Type.Size)
	}
	// GROUP BY over a small table.
	g := query(t, s, "SELECT category, COUNT(*) FROM sales.products GROUP BY category ORDER BY category")
	total := int64(0)
	for _, r := range g.rows {
		total += r[1].(int64)
	}
	if total != prod.Rows || len(g.rows) < 2 {
		t.Errorf("GROUP BY: %d groups totalling %d, want %d rows", len(g.rows), total, prod.Rows)
	}
}

func TestScalarSelects(t *testing.T) {
	s := NewSession(sampleDB())
	cases := []struct {
		sql  string
		want any
	}{
		{"SELECT 1", int64(1)},
		{"select @@spid spid", int64(51)},
		{"SELECT DB_NAME()", "sample"},
		{"SELECT 'a' + 'b'", "ab"},
		{"SELECT N'x' + CAST(12 AS varchar(10))", "x12"},
		{"SELECT 7 / 2, 7 % 4", int64(3)},
		{"SELECT CASE WHEN 1 = 2 THEN 'no' ELSE 'yes' END", "yes"},
		{"SELECT ISNULL(NULL, 5)", int64(5)},
		{"SELECT COALESCE(NULL, NULL, 'z')", "z"},
		{"SELECT LEN('abc  ')", int64(3)},
		{"SELECT SUBSTRING('abcdef', 2, 3)", "bcd"},
		{"SELECT UPPER('abc')", "ABC"},
		{"SELECT REPLACE('a.b.c', '.', '_')", "a_b_c"},
		{"SELECT CONVERT(varchar(30), CAST('2024-02-29 13:14:15.1234567' AS datetime2), 126)", "2024-02-29T13:14:15.1234567"},
		{"SELECT CONVERT(varchar(30), CAST('2024-02-29 13:14:15' AS datetime2), 126)", "2024-02-29T13:14:15"},
		{"SELECT CONVERT(varchar(30), CAST('2024-02-29 13:14:15.5' AS datetime), 126)", "2024-02-29T13:14:15.500"},
		{"SELECT CONVERT(varchar(35), CAST('2024-02-29 13:14:15.25 +02:00' AS datetimeoffset(2)), 127)", "2024-02-29T11:14:15.25Z"},
		{"SELECT CONVERT(varchar(30), CAST('13:14:15.1234' AS time), 114)", "13:14:15:123"},
		{"SELECT CONVERT(varchar(30), CAST('2024-02-29' AS date), 126)", "2024-02-29"},
		{"SELECT CAST(9223372036854775807 AS numeric(20))", decode.Decimal{Lo: 9223372036854775807, Precision: 20}},
		{"SELECT @@TRANCOUNT", int64(0)},
		{"SELECT OBJECT_ID('sales.customers')", int64(table(t, "sales", "customers").ObjectID)},
		{"SELECT COLUMNPROPERTY(OBJECT_ID('[sales].[customers]'), 'customer_id', 'IsIdentity')", int64(1)},
		{"SELECT COLUMNPROPERTY(OBJECT_ID('sales.customers'), 'email', 'IsIdentity')", int64(0)},
		{"SELECT SCHEMA_NAME(5)", "sales"},
		{"SELECT 'Привет'", "??????"},
		{"SELECT CAST(N'Zoë 日本' AS varchar(10))", "Zoë ??"},
	}
	for _, c := range cases {
		d := query(t, s, c.sql)
		if len(d.rows) != 1 {
			t.Fatalf("%s: %d rows", c.sql, len(d.rows))
		}
		if !reflect.DeepEqual(d.rows[0][0], c.want) {
			t.Errorf("%s = %#v, want %#v", c.sql, d.rows[0][0], c.want)
		}
	}
	v := query(t, s, "SELECT SERVERPROPERTY('ProductVersion')")
	if vv, ok := v.rows[0][0].(decode.Variant); !ok || vv.Value != ProductVersion {
		t.Errorf("SERVERPROPERTY = %#v", v.rows[0][0])
	}
	ver := query(t, s, "SELECT @@VERSION")
	if !strings.HasPrefix(ver.rows[0][0].(string), "Microsoft SQL Server") {
		t.Errorf("@@VERSION = %q", ver.rows[0][0])
	}
}

func TestPgloaderConversions(t *testing.T) {
	// The per-table query pgloader sends: ISO 8601 text for date/time
	// types, numeric(20) for bigint.
	s := NewSession(sampleDB())
	tb := table(t, "dbo", "temporal")
	d := query(t, s, "SELECT [id], convert(varchar(30), [ts], 126), convert(varchar(35), [tso], 127), [amount] FROM [dbo].[temporal] WHERE id <= 200;")
	if len(d.rows) != 200 {
		t.Fatalf("%d rows", len(d.rows))
	}
	for i, r := range d.rows {
		row := tb.Row(int64(i), nil)
		if row[1] != nil {
			want, _ := isoText(row[1], &tb.Columns[1].Type, 126)
			if r[1] != want || !strings.Contains(want, "T") {
				t.Fatalf("row %d ts = %v, want %v", i, r[1], want)
			}
		} else if r[1] != nil {
			t.Fatalf("row %d ts = %v, want NULL", i, r[1])
		}
		if row[2] != nil {
			dto := row[2].(decode.DateTimeOffset)
			want := isoDateTime(dto.UTC, 7) + "Z"
			if r[2] != want {
				t.Fatalf("row %d tso = %v, want %v", i, r[2], want)
			}
		}
	}
	if d.cols[1].Type.Type != decode.TypeBigVarChar || d.cols[1].Type.Size != 30 {
		t.Errorf("convert column type %+v, want varchar(30)", d.cols[1].Type)
	}
	b := query(t, s, "SELECT cast([big] as numeric(20)) FROM dbo.odbc5 WHERE id <= 10")
	odbc := table(t, "dbo", "odbc5")
	for i, r := range b.rows {
		want := odbc.Row(int64(i), nil)[1].(int64)
		got := r[0].(decode.Decimal)
		if decToBig(got).Int64() != want || got.Precision != 20 || got.Scale != 0 {
			t.Fatalf("row %d: %v, want %d as numeric(20)", i, got, want)
		}
	}
	tm := query(t, s, "SELECT convert(varchar(30), c_time_7, 114), convert(varchar(30), c_date, 126), convert(varchar(30), c_datetime, 126) FROM dbo.type_matrix")
	if len(tm.rows) != int(table(t, "dbo", "type_matrix").Rows) {
		t.Fatalf("type_matrix: %d rows", len(tm.rows))
	}
	for _, r := range tm.rows {
		if s, ok := r[0].(string); ok && (len(s) != 12 || s[8] != ':') {
			t.Fatalf("style 114 text %q", s)
		}
	}
}

func TestSpatialAndHierarchyMethods(t *testing.T) {
	s := NewSession(sampleDB())
	tb := table(t, "dbo", "type_matrix")
	d := query(t, s, "SELECT [c_geography].STAsBinary(), [c_geometry].STAsBinary(), [c_geography].ToString(), [c_hierarchyid].ToString(), c_hierarchyid FROM dbo.type_matrix")
	if d.cols[0].Type.Type != decode.TypeBigVarBinary || d.cols[0].Type.Size != decode.MaxVarLen {
		t.Errorf("STAsBinary type %+v, want varbinary(max)", d.cols[0].Type)
	}
	if d.cols[3].Type.Type != decode.TypeNVarChar || d.cols[3].Type.Size != 8000 {
		t.Errorf("hierarchyid ToString type %+v, want nvarchar(4000)", d.cols[3].Type)
	}
	// geography::Point(47.651, -122.349, 4326): WKB is (long, lat).
	wantWKB := []byte{1, 1, 0, 0, 0}
	wantWKB = appendF64(wantWKB, -122.349)
	wantWKB = appendF64(wantWKB, 47.651)
	paths := map[string]bool{}
	for i, r := range d.rows {
		row := tb.Row(int64(i), nil)
		if row[tb.ColumnIndex("c_geography")] == nil {
			if r[0] != nil || r[2] != nil {
				t.Fatalf("row %d: NULL geography gave %v %v", i, r[0], r[2])
			}
		} else {
			if !bytes.Equal(r[0].([]byte), wantWKB) {
				t.Fatalf("row %d: geography WKB %x, want %x", i, r[0], wantWKB)
			}
			if r[2] != "POINT (-122.349 47.651)" {
				t.Fatalf("row %d: geography text %q", i, r[2])
			}
		}
		if h, ok := r[3].(string); ok {
			paths[h] = true
			raw := r[4].([]byte)
			if want, ok := sampledb.HierarchyIDs[h]; !ok || !bytes.Equal(want, raw) {
				t.Fatalf("row %d: hierarchyid %x shown as %q", i, raw, h)
			}
		}
	}
	if !paths["/"] || len(paths) < 3 {
		t.Errorf("hierarchyid paths seen: %v", paths)
	}
	for path, raw := range sampledb.HierarchyIDs {
		levels, err := decodeHierarchyID(raw)
		if err != nil || hierarchyText(levels) != path {
			t.Errorf("hierarchyid %x = %q, %v; want %q", raw, hierarchyText(levels), err, path)
		}
	}
	// Wider labels, from SQL Server's encoding of /16/, /17/, /98/ and /1.1/.
	for path, raw := range map[string][]byte{"/16/": {0xC1, 0x10}, "/17/": {0xC1, 0x30}, "/98/": {0xE0, 0x25, 0x40}, "/1.1/": {0x62, 0xC0}, "/0/": {0x48}, "/4/": {0x84}, "/15/": {0xBE}} {
		levels, err := decodeHierarchyID(raw)
		if err != nil || hierarchyText(levels) != path {
			t.Errorf("hierarchyid %x = %q, %v; want %q", raw, hierarchyText(levels), err, path)
		}
	}
	// A method on a non-CLR column is error 258; on a missing column 4121.
	if _, err := s.Exec("SELECT c_int.ToString() FROM dbo.type_matrix", nil); errNumber(err) != 258 {
		t.Errorf("method on int: %v", err)
	}
	if _, err := s.Exec("SELECT nope.STAsBinary() FROM dbo.type_matrix", nil); errNumber(err) != 4121 {
		t.Errorf("method on missing column: %v", err)
	}
}

func TestSpatialCollections(t *testing.T) {
	// geometry::STGeomFromText('MULTIPOINT((1 2), (3 4))', 0) serialised by
	// hand: 2 points, 2 figures, 3 shapes (MultiPoint and its two points).
	var b []byte
	b = append(b, 0, 0, 0, 0, 1, 0x04)
	b = append(b, 2, 0, 0, 0)
	for _, v := range []float64{1, 2, 3, 4} {
		b = appendF64(b, v)
	}
	b = append(b, 2, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0)
	b = append(b, 3, 0, 0, 0)
	b = append(b, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 4)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	b = append(b, 0, 0, 0, 0, 1, 0, 0, 0, 1)
	g, err := parseSpatial(b, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.wkt(); got != "MULTIPOINT ((1 2), (3 4))" {
		t.Errorf("wkt = %q", got)
	}
	want := []byte{1, 4, 0, 0, 0, 2, 0, 0, 0, 1, 1, 0, 0, 0}
	want = appendF64(appendF64(want, 1), 2)
	want = append(want, 1, 1, 0, 0, 0)
	want = appendF64(appendF64(want, 3), 4)
	if !bytes.Equal(g.wkb(), want) {
		t.Errorf("wkb = %x\nwant  %x", g.wkb(), want)
	}
	// Truncations never panic.
	for i := range b {
		_, _ = parseSpatial(b[:i], false)
	}
}

func appendF64(dst []byte, v float64) []byte {
	var tmp [8]byte
	bits := mathFloat64bits(v)
	for i := 0; i < 8; i++ {
		tmp[i] = byte(bits >> (8 * i))
	}
	return append(dst, tmp[:]...)
}

func TestCatalogViews(t *testing.T) {
	s := NewSession(sampleDB())
	db := sampleDB()
	d := query(t, s, "SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME")
	if len(d.rows) != len(db.Tables()) {
		t.Fatalf("%d tables listed, want %d", len(d.rows), len(db.Tables()))
	}
	c := query(t, s, "SELECT COUNT(*) FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'wide601'")
	if c.rows[0][0] != int64(601) {
		t.Errorf("wide601 has %v columns in INFORMATION_SCHEMA.COLUMNS", c.rows[0][0])
	}
	k := query(t, s, "SELECT c.name FROM sys.columns c JOIN sys.tables t ON t.object_id = c.object_id WHERE t.name = 'orders' AND SCHEMA_NAME(t.schema_id) = 'sales' ORDER BY c.column_id")
	ord := table(t, "sales", "orders")
	if len(k.rows) != len(ord.Columns) {
		t.Fatalf("sys.columns for sales.orders: %d rows", len(k.rows))
	}
	for i, r := range k.rows {
		if r[0] != ord.Columns[i].Name {
			t.Errorf("column %d = %v, want %s", i, r[0], ord.Columns[i].Name)
		}
	}
	for _, q := range []string{"sys.schemas", "sys.tables", "sys.columns", "sys.types", "sys.indexes", "sys.index_columns",
		"sys.identity_columns", "sys.default_constraints", "sys.foreign_keys", "sys.foreign_key_columns", "sys.partitions",
		"INFORMATION_SCHEMA.KEY_COLUMN_USAGE", "INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS"} {
		d := query(t, s, "SELECT * FROM "+q)
		if len(d.rows) == 0 {
			t.Errorf("%s is empty", q)
		}
	}
}

func TestPgloaderCatalogQueries(t *testing.T) {
	s := NewSession(sampleDB())
	rs := mustExec(t, s, pgloaderSetup)
	if len(rs) != 1 || len(rs[0].EnvChanges) != 1 || rs[0].EnvChanges[0].NewValue != "sample" {
		t.Fatalf("setup batch results: %+v", rs)
	}
	if !s.Options["ARITHABORT"] || s.Options["NUMERIC_ROUNDABORT"] || !s.Options["QUOTED_IDENTIFIER"] {
		t.Errorf("options not recorded: %v", s.Options)
	}
	cols := query(t, s, pgloaderColumnsQuery)
	if len(cols.cols) != 14 {
		t.Fatalf("columns query: %d result columns, want the 14 of its select list", len(cols.cols))
	}
	total := 0
	for _, tb := range sampleDB().Tables() {
		total += len(tb.Columns)
	}
	if len(cols.rows) != total {
		t.Fatalf("columns query: %d rows, want %d", len(cols.rows), total)
	}
	// Ordered by schema, table, ordinal; identity, defaults and lengths as the catalog says.
	found := map[string][]any{}
	for i, r := range cols.rows {
		if i > 0 {
			p := cols.rows[i-1]
			if c := compareText(p[0].(string)+"\x00"+p[1].(string), r[0].(string)+"\x00"+r[1].(string)); c > 0 {
				t.Fatalf("rows %d,%d out of order", i-1, i)
			}
		}
		found[r[0].(string)+"."+r[1].(string)+"."+r[2].(string)] = r
	}
	cust := found["sales.customers.customer_id"]
	if cust == nil || cust[6] != int64(1) || cust[3] != "int" || cust[5] != "NO" {
		t.Errorf("sales.customers.customer_id row: %v", cust)
	}
	email := found["sales.customers.email"]
	if email == nil || email[6] != int64(0) || email[7] != int64(120) || email[13] != "SQL_Latin1_General_CP1_CI_AS" {
		t.Errorf("sales.customers.email row: %v", email)
	}
	// Every default is unwrapped from its parentheses the way the CASE says.
	for name, r := range found {
		tb := table(t, strings.Split(name, ".")[0], strings.Split(name, ".")[1])
		def, ok := tb.Defaults[strings.Split(name, ".")[2]]
		if !ok {
			if r[4] != nil {
				t.Errorf("%s: default %v, want NULL", name, r[4])
			}
			continue
		}
		want := pgDefault(def)
		if r[4] != want {
			t.Errorf("%s: default %q gives %v, want %q", name, def, r[4], want)
		}
	}

	idx := query(t, s, pgloaderIndexesQuery)
	if len(idx.cols) != 7 {
		t.Fatalf("indexes query: %d columns", len(idx.cols))
	}
	want := 0
	for _, tb := range sampleDB().Tables() {
		for _, ix := range tb.Indexes {
			want += len(ix.Columns) + len(ix.Included)
		}
	}
	if len(idx.rows) != want {
		t.Errorf("indexes query: %d rows, want %d", len(idx.rows), want)
	}
	pk := 0
	for _, r := range idx.rows {
		if r[5] == true {
			pk++
		}
	}
	if pk == 0 {
		t.Errorf("no primary key columns in the index list")
	}

	fk := query(t, s, pgloaderFKeysQuery)
	wantFK := 0
	for _, tb := range sampleDB().Tables() {
		for _, f := range tb.ForeignKeys {
			wantFK += len(f.Columns)
		}
	}
	if len(fk.cols) != 9 || len(fk.rows) != wantFK || wantFK == 0 {
		t.Fatalf("fkeys query: %d columns, %d rows; want 9 and %d", len(fk.cols), len(fk.rows), wantFK)
	}
	for _, r := range fk.rows {
		tb := table(t, r[1].(string), r[2].(string))
		ok := false
		for _, f := range tb.ForeignKeys {
			if f.Name == r[0] && f.RefTable == r[5] && strings.EqualFold(f.RefSchema, r[4].(string)) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("fkey row %v does not match the schema", r)
		}
	}

	// The per-table data query, as pgloader writes it.
	data := query(t, s, "SELECT [customer_id], [first_name], [email], convert(varchar(30), [created_at], 126), [is_active] FROM [sales].[customers];")
	if int64(len(data.rows)) != table(t, "sales", "customers").Rows {
		t.Errorf("customers: %d rows", len(data.rows))
	}
}

// pgDefault is what pgloader's CASE makes of a stored default text.
func pgDefault(def string) string {
	inner := def
	switch {
	case strings.HasPrefix(def, "((") && strings.HasSuffix(def, "))"):
		inner = def[2 : len(def)-2]
	case strings.HasPrefix(def, "(") && strings.HasSuffix(def, ")"):
		inner = def[1 : len(def)-1]
	default:
		return def
	}
	switch {
	case inner == "newid()":
		return "GENERATE_UUID"
	case inner == "getdate()":
		return "CURRENT_TIMESTAMP"
	case len(inner) >= 2 && inner[0] == '\'' && inner[len(inner)-1] == '\'':
		return inner[1 : len(inner)-1]
	}
	return inner
}

func TestSetUseFMTOnly(t *testing.T) {
	s := NewSession(sampleDB())
	// freebcp queryout: textsize, then FMTONLY pairs, then the query.
	rs := mustExec(t, s, "set textsize 4096 ")
	if len(rs) != 0 || s.TextSize != 4096 {
		t.Fatalf("set textsize: %v results, TextSize %d", len(rs), s.TextSize)
	}
	q := "SELECT id, name, score FROM dbo.odbc5 WHERE id <= 3"
	for range 2 {
		rs = mustExec(t, s, "SET FMTONLY ON "+q+" SET FMTONLY OFF")
		if len(rs) != 1 || rs[0].Rows != nil || len(rs[0].Columns) != 3 || rs[0].Columns[1].Name != "name" {
			t.Fatalf("FMTONLY: %+v", rs)
		}
	}
	if s.FMTOnly {
		t.Fatal("FMTONLY still on")
	}
	d := query(t, s, q)
	if len(d.rows) != 3 {
		t.Fatalf("after FMTONLY: %d rows", len(d.rows))
	}
	// TEXTSIZE truncates (max) values.
	lob := table(t, "dbo", "lob")
	s.TextSize = 10
	d = query(t, s, "SELECT id, b01 FROM dbo.lob WHERE id <= 20")
	for i, r := range d.rows {
		full := lob.Row(int64(i), nil)[1]
		if full == nil {
			continue
		}
		fb := full.([]byte)
		want := fb
		if len(want) > 10 {
			want = want[:10]
		}
		if !bytes.Equal(r[1].([]byte), want) {
			t.Fatalf("row %d: %x, want %x", i, r[1], want)
		}
	}
	mustExec(t, s, "SET TEXTSIZE 0")
	if s.TextSize != 0 {
		t.Errorf("SET TEXTSIZE 0 left %d", s.TextSize)
	}
	// USE: database change and message; unknown database 911.
	rs = mustExec(t, s, "USE master")
	if len(rs) != 1 || rs[0].EnvChanges[0] != (EnvChange{Type: EnvDatabase, NewValue: "master", OldValue: "sample"}) || rs[0].Infos[0].Number != 5701 {
		t.Fatalf("USE master: %+v", rs)
	}
	if _, err := s.Exec("SELECT * FROM dbo.odbc5", nil); errNumber(err) != 208 {
		t.Errorf("user table from master: %v", err)
	}
	if _, err := s.Exec("SELECT TOP 1 * FROM sample.dbo.odbc5", nil); err != nil {
		t.Errorf("three-part name from master: %v", err)
	}
	if _, err := s.Exec("USE nosuchdb", nil); errNumber(err) != 911 {
		t.Errorf("USE nosuchdb: %v", err)
	}
	mustExec(t, s, "USE [SAMPLE]")
	if s.Database != "sample" {
		t.Errorf("Database = %q", s.Database)
	}
}

func TestErrors(t *testing.T) {
	s := NewSession(sampleDB())
	cases := []struct {
		sql string
		num int32
		msg string
	}{
		{"SELECT * FROM dbo.nosuch", 208, "Invalid object name 'dbo.nosuch'."},
		{"SELECT * FROM nosuchdb.dbo.t", 911, ""},
		{"SELECT nosuch FROM dbo.odbc5", 207, "Invalid column name 'nosuch'."},
		{"SELECT x.id FROM dbo.odbc5", 4104, "The multi-part identifier \"x.id\" could not be bound."},
		{"SELECT id FROM dbo.odbc5 a, dbo.poc48 b", 209, "Ambiguous column name 'id'."},
		{"SELECT *", 263, ""},
		{"SELECT @nope", 137, "Must declare the scalar variable \"@nope\"."},
		{"SELECT @@NOPE", 137, ""},
		{"SELECT NOSUCHFUNC(1)", 195, ""},
		{"EXEC sp_nosuch", 2812, "Could not find stored procedure 'sp_nosuch'."},
		{"nosuchproc", 2812, ""},
		{"INSERT INTO dbo.odbc5 VALUES (1)", 3906, ""},
		{"SELECT * INTO #t FROM dbo.odbc5", 3906, "Failed to update database \"sample\" because the database is read-only."},
		{"SELECT id, COUNT(*) FROM dbo.odbc5", 8120, ""},
		{"SELECT category, COUNT(*) + MAX(price) * price FROM sales.products GROUP BY category", 8120, "Column 'products.price' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause."},
		{"SELECT id FROM dbo.odbc5 WHERE COUNT(*) > 1", 147, ""},
		{"SELECT TOP (-1) * FROM dbo.odbc5", 1014, ""},
		{"SELECT 1/0", 8134, ""},
		{"SELECT CAST('abc' AS int)", 245, "Conversion failed when converting the varchar value 'abc' to data type int."},
		{"SELECT CAST(300 AS tinyint)", 8115, ""},
		{"SELECT CAST('x' AS date)", 241, ""},
		{"SELECT CAST(1 AS nosuchtype)", 243, ""},
		{"SELECT CAST(1 AS text)", 243, "Type text is not a defined system type."},
		{"SELECT CAST(1 AS int(4))", 2716, "Column, parameter, or variable #1: Cannot specify a column width on data type int."},
		{"SELECT CAST('a' AS char(max))", 2716, ""},
		{"SELECT CAST(1 AS decimal(39))", 1002, "Line 1: Specified column precision 39 is greater than the maximum precision of 38."},
		{"SELECT CAST(1 AS numeric(5, 6))", 192, "The scale must be less than or equal to the precision."},
		{"SELECT CAST(GETDATE() AS time(8))", 1002, "Line 1: Specified column precision 8 is greater than the maximum precision of 7."},
		{"SELECT CAST('a' AS varchar(9000))", 131, "The size (9000) given to the type 'varchar' exceeds the maximum allowed for any data type (8000)."},
		{"SELECT CAST('a' AS nvarchar(4001))", 131, "The size (4001) given to the type 'nvarchar' exceeds the maximum allowed for any data type (4000)."},
		{"SELECT id FROM dbo.odbc5 ORDER BY 9", 108, ""},
		{"COMMIT", 3902, ""},
		{"SELECT COUNT(*) FROM dbo.poc48 WHERE i02 > 0", 50000, ""},
	}
	for _, c := range cases {
		_, err := s.Exec(c.sql, nil)
		var e *Error
		if got := errNumber(err); got != c.num {
			t.Errorf("%s: %v, want error %d", c.sql, err, c.num)
			continue
		}
		e = err.(*Error)
		if c.msg != "" && e.Message != c.msg {
			t.Errorf("%s: message %q, want %q", c.sql, e.Message, c.msg)
		}
		if e.Class < 11 {
			t.Errorf("%s: class %d is not an error class", c.sql, e.Class)
		}
	}
	// A failing statement stops the batch; earlier results are kept.
	rs, err := s.Exec("SELECT 1; SELECT * FROM nosuch; SELECT 2", nil)
	if errNumber(err) != 208 || len(rs) != 1 {
		t.Errorf("batch with failing statement: %d results, %v", len(rs), err)
	}
}

func TestPreparedStatements(t *testing.T) {
	s := NewSession(sampleDB())
	h := s.Prepare("SELECT * FROM dbo.poc48 WHERE id = @P1 OR id = @P2", "@P1 int,@P2 int")
	if h == 0 {
		t.Fatal("handle 0")
	}
	h2 := s.Prepare("SELECT 1", "")
	if h2 == h {
		t.Fatal("handles not distinct")
	}
	rs, err := s.Execute(h, []Param{{Value: int64(5)}, {Value: int64(9)}})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "prepared", drain(t, rs[0], 10, true).rows, table(t, "dbo", "poc48"), []int64{4, 8}, nil)
	s.Unprepare(h)
	if _, err := s.Execute(h, nil); errNumber(err) != 8179 {
		t.Errorf("execute after unprepare: %v", err)
	}
	// sp_executesql written in a batch.
	rs = mustExec(t, s, "EXEC sp_executesql N'SELECT id FROM dbo.odbc5 WHERE id BETWEEN @a AND @b', N'@a int, @b int', @a = 3, @b = 5")
	if d := drain(t, rs[0], 10, false); len(d.rows) != 3 || d.rows[0][0] != int64(3) {
		t.Errorf("sp_executesql rows: %v", d.rows)
	}
	if names := declNames("@P1 decimal(10, 2), @P2 nvarchar(max),@p3 int"); fmt.Sprint(names) != "[P1 P2 p3]" {
		t.Errorf("declNames = %v", names)
	}
}

func TestRowSourceBoundedWork(t *testing.T) {
	// A filter that matches nothing over a huge range returns control after
	// a bounded number of rows instead of scanning to the end.
	s := NewSession(sampleDB())
	rs := mustExec(t, s, "SELECT id FROM dbo.poc48 WHERE i02 = 12345 AND i03 = 67890")
	out, n, done := rs[0].Rows.AppendRows(nil, 100, false)
	if n != 0 || done || len(out) != 0 {
		t.Fatalf("n=%d done=%v len=%d, want an empty, unfinished chunk", n, done, len(out))
	}
}

func TestJoinsAndDistinct(t *testing.T) {
	s := NewSession(sampleDB())
	ol := table(t, "sales", "order_lines")
	d := query(t, s, `SELECT o.order_id, COUNT(*) AS lines
		FROM sales.orders o INNER JOIN sales.order_lines l ON l.order_id = o.order_id
		WHERE o.order_id <= 20 GROUP BY o.order_id ORDER BY o.order_id`)
	want := map[int64]int64{}
	oi := ol.ColumnIndex("order_id")
	for i := int64(0); i < ol.Rows; i++ {
		id := ol.Row(i, nil)[oi].(int64)
		if id <= 20 {
			want[id]++
		}
	}
	if len(d.rows) != len(want) {
		t.Fatalf("%d groups, want %d", len(d.rows), len(want))
	}
	for _, r := range d.rows {
		if want[r[0].(int64)] != r[1].(int64) {
			t.Errorf("order %v: %v lines, want %d", r[0], r[1], want[r[0].(int64)])
		}
	}
	dd := query(t, s, "SELECT DISTINCT country FROM sales.customers ORDER BY country")
	seen := map[string]bool{}
	for _, r := range dd.rows {
		k := fmt.Sprint(r[0])
		if seen[k] {
			t.Errorf("duplicate %v", r[0])
		}
		seen[k] = true
	}
	lj := query(t, s, "SELECT t.name, c.name FROM sys.tables t LEFT JOIN sys.columns c ON c.object_id = t.object_id AND c.name = 'customer_id' ORDER BY t.name")
	matched := 0
	for _, r := range lj.rows {
		if r[1] != nil {
			matched++
		}
	}
	if len(lj.rows) != len(sampleDB().Tables()) || matched < 2 {
		t.Errorf("left join: %d rows, %d matched", len(lj.rows), matched)
	}
}

func TestClientSetupBatches(t *testing.T) {
	s := NewSession(sampleDB())
	// tedious's login batch.
	rs := mustExec(t, s, `set textsize 2147483647
set quoted_identifier on
set arithabort off
set numeric_roundabort off
set ansi_warnings on
set ansi_padding on
set ansi_nulls on
set concat_null_yields_null on
set cursor_close_on_commit off
set implicit_transactions off
set language us_english
set dateformat mdy
set datefirst 7
set transaction isolation level read committed`)
	if len(rs) != 0 || s.TextSize != 0 || s.Options["ARITHABORT"] || !s.Options["ANSI_NULLS"] {
		t.Fatalf("tedious setup: %d results, TextSize %d, options %v", len(rs), s.TextSize, s.Options)
	}
	// The older pgloader column query: ORDER BY names of the select list,
	// OBJECT_ID of an unqualified name (NULL outside dbo).
	d := query(t, s, `select c.table_schema, c.table_name, c.column_name,
		COLUMNPROPERTY(object_id(c.table_name), c.column_name, 'IsIdentity')
		from information_schema.columns c join information_schema.tables t
		on c.table_schema = t.table_schema and c.table_name = t.table_name
		where c.table_catalog = 'sample' and t.table_type = 'BASE TABLE'
		order by table_schema, table_name, ordinal_position`)
	if len(d.rows) == 0 || d.rows[0][0] != "dbo" {
		t.Fatalf("old column query: %d rows, first %v", len(d.rows), d.rows)
	}
	for _, r := range d.rows {
		if r[0] == "sales" && r[3] != nil {
			t.Fatalf("OBJECT_ID of an unqualified sales table resolved: %v", r)
		}
	}
}

// The finance views answer SELECT with the rows the database computed for
// them, and a WHERE on a view filters them as on a table.
func TestFinanceViews(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 42})
	s := NewSession(db)
	n := 0
	for _, v := range db.Views() {
		if v.Schema != "finance" {
			continue
		}
		n++
		d := query(t, s, "SELECT * FROM finance."+v.Name)
		if int64(len(d.rows)) != v.Rows || v.Rows == 0 {
			t.Fatalf("%s: %d rows, want %d", v.Name, len(d.rows), v.Rows)
		}
		var want []any
		for i, got := range d.rows {
			want = v.Row(int64(i), want[:0])
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s row %d: %v, want %v", v.Name, i, got, want)
			}
		}
	}
	if n != 6 {
		t.Errorf("%d finance views, want 6", n)
	}
	d := query(t, s, "SELECT customer, total FROM finance.customer_totals WHERE invoices > 6")
	all := query(t, s, "SELECT customer, total, invoices FROM finance.customer_totals")
	k := 0
	for _, r := range all.rows {
		if r[2].(int64) > 6 {
			if k >= len(d.rows) || !reflect.DeepEqual(d.rows[k], r[:2]) {
				t.Fatalf("filtered rows %v, from %v", d.rows, all.rows)
			}
			k++
		}
	}
	if k != len(d.rows) {
		t.Errorf("filtered %d rows, want %d", len(d.rows), k)
	}
}
