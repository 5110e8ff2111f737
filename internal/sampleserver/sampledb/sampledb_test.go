package sampledb

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// small returns a database with reduced row counts for quick tests.
func small(seed int64) *DB {
	return New(Config{Seed: seed, Rows: map[string]int64{"poc48": 3000, "odbc5": 3000, "wide601": 200, "lob": 300,
		"lob_nvarchar": 12, "temporal": 3000, "lineitem": 3000}})
}

// encodeGeneric encodes rows [from,to) of t from Row(i) with decode's
// generic encoder.
func encodeGeneric(t *testing.T, tb *Table, from, to int64, nbc bool, o decode.EncodeOptions) []byte {
	t.Helper()
	out, err := tb.encodeRows(nil, from, to, nbc, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSampleRowsAgree checks, for every fast table, that the pre-encoded
// rows equal decode's independent generic encoding of Row(i), for ROW and
// NBCROW tokens.
func TestSampleRowsAgree(t *testing.T) {
	db := small(42)
	for _, tb := range db.Tables() {
		if !tb.Fast() {
			continue
		}
		for _, nbc := range []bool{false, true} {
			n := min(tb.Rows, 400)
			if tb.Name == "lob_nvarchar" {
				// Pool entries alternate known and unknown PLP lengths: check row by row.
				known, unknown := 0, 0
				for i := range n {
					got := tb.AppendRows(nil, i, i+1, nbc)
					a := encodeGeneric(t, tb, i, i+1, nbc, decode.EncodeOptions{PLPChunk: 8000})
					b := encodeGeneric(t, tb, i, i+1, nbc, decode.EncodeOptions{PLPChunk: 8000, UnknownPLPLength: true})
					switch {
					case bytes.Equal(got, a):
						known++
					case bytes.Equal(got, b):
						unknown++
					default:
						t.Fatalf("lob_nvarchar row %d (nbc=%v): fast and generic encodings differ", i, nbc)
					}
				}
				if known == 0 || unknown == 0 {
					t.Errorf("lob_nvarchar: %d known-length and %d unknown-length rows; want both", known, unknown)
				}
				continue
			}
			got := tb.AppendRows(nil, 0, n, nbc)
			want := encodeGeneric(t, tb, 0, n, nbc, decode.EncodeOptions{})
			if !bytes.Equal(got, want) {
				// Find the first differing row for the message.
				for i := range n {
					g := tb.AppendRows(nil, i, i+1, nbc)
					w := encodeGeneric(t, tb, i, i+1, nbc, decode.EncodeOptions{})
					if !bytes.Equal(g, w) {
						t.Fatalf("%s row %d nbc=%v:\n fast    %x\n generic %x\n values %v", tb.FullName(), i, nbc, g, w, tb.Row(i, nil))
					}
				}
				t.Fatalf("%s: encodings differ", tb.FullName())
			}
		}
	}
}

// TestSampleGenericTablesEncode encodes every row of every generic table
// and catalog view (the server path), in both token forms.
func TestSampleGenericTablesEncode(t *testing.T) {
	db := New(Config{Seed: 1})
	tables := append(append([]*Table(nil), db.Tables()...), db.Catalogs()...)
	tm, _ := db.Table("dbo", "type_matrix")
	tables = append(tables, tm.Downgrade(false, false), tm.Downgrade(true, false), tm.Downgrade(false, true))
	for _, tb := range tables {
		if tb.Fast() {
			continue
		}
		for _, nbc := range []bool{false, true} {
			got := tb.AppendRows(nil, 0, tb.Rows, nbc)
			want := encodeGeneric(t, tb, 0, tb.Rows, nbc, decode.EncodeOptions{})
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: AppendRows differs from AppendRow(Row(i))", tb.FullName())
			}
			if tb.Rows > 0 && len(got) == 0 {
				t.Fatalf("%s: no bytes", tb.FullName())
			}
		}
	}
}

func digest(db *DB) [32]byte {
	h := sha256.New()
	for _, tb := range db.Tables() {
		n := min(tb.Rows, 300)
		h.Write(tb.AppendRows(nil, 0, n, false))
		h.Write(tb.AppendRows(nil, tb.Rows-n, tb.Rows, true))
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func TestSampleDeterminism(t *testing.T) {
	a, b, c := digest(small(7)), digest(small(7)), digest(small(8))
	if a != b {
		t.Fatal("same seed gave different bytes")
	}
	if a == c {
		t.Fatal("different seeds gave the same bytes")
	}
	// Per table, different seeds differ (except the fixed edge rows).
	d7, d8 := small(7), small(8)
	for _, tb := range d7.Tables() {
		if tb.Rows < 10 || tb.Name == "type_matrix" {
			continue
		}
		tb8, _ := d8.Table(tb.Schema, tb.Name)
		if bytes.Equal(tb.AppendRows(nil, 0, 50, false), tb8.AppendRows(nil, 0, 50, false)) {
			t.Errorf("%s: seeds 7 and 8 give the same rows", tb.FullName())
		}
	}
	// A range equals the concatenation of its parts, whatever the split.
	tb, _ := d7.Table("dbo", "poc48")
	whole := tb.AppendRows(nil, 100, 400, true)
	var parts []byte
	for i := int64(100); i < 400; i += 37 {
		parts = tb.AppendRows(parts, i, min(i+37, 400), true)
	}
	if !bytes.Equal(whole, parts) {
		t.Fatal("AppendRows over a range differs from the concatenation of sub-ranges")
	}
}

// TestSampleHugeRowCounts checks that row counts in the billions cost
// nothing and far rows are generated directly.
func TestSampleHugeRowCounts(t *testing.T) {
	db := New(Config{Seed: 3, Rows: map[string]int64{"dbo.poc48": 5_000_000_000, "lineitem": 6_000_000_000,
		"sales.orders": 3_000_000_000, "sales.order_lines": 12_000_000_000}})
	tb, _ := db.Table("dbo", "POC48")
	if tb.Rows != 5_000_000_000 {
		t.Fatalf("rows %d", tb.Rows)
	}
	row := tb.Row(4_999_999_999, nil)
	if row[0] != int64(5_000_000_000) || tb.SQLType(0) != "bigint" {
		t.Fatalf("poc48 last id %v (%s); the key must become bigint", row[0], tb.SQLType(0))
	}
	if small, _ := New(Config{}).Table("dbo", "poc48"); small.SQLType(0) != "int" {
		t.Fatal("poc48 id must be int by default")
	}
	if len(tb.AppendRows(nil, 4_999_999_990, 6_000_000_000, false)) == 0 {
		t.Fatal("no far rows")
	}
	li, _ := db.Table("dbo", "lineitem")
	k := li.KeyValue(5_999_999_999)
	if r, ok := li.RowForKey(k); !ok || li.KeyValue(r) != k || (r > 0 && li.KeyValue(r-1) == k) {
		t.Fatalf("lineitem key %d -> row %d %v", k, r, ok)
	}
	ol, _ := db.Table("sales", "order_lines")
	if ol.SQLType(0) != "bigint" || ol.SQLType(1) != "bigint" || ol.SQLType(2) != "int" {
		t.Fatalf("order_lines key types %s %s %s", ol.SQLType(0), ol.SQLType(1), ol.SQLType(2))
	}
	vals := ol.Row(11_999_999_999, nil)
	if vals[1] != int64(3_000_000_000) {
		t.Fatalf("last order line belongs to order %v, want the last order", vals[1])
	}
}

func TestSampleKeyMapping(t *testing.T) {
	db := small(5)
	for _, tb := range db.Tables() {
		kc := tb.KeyColumn()
		if kc < 0 {
			continue
		}
		var vals []any
		prev := int64(-1 << 62)
		for i := range min(tb.Rows, 2000) {
			vals = tb.Row(i, vals)
			k := tb.KeyValue(i)
			if vals[kc] != k {
				t.Fatalf("%s row %d: key column %v, KeyValue %d", tb.FullName(), i, vals[kc], k)
			}
			if k < prev {
				t.Fatalf("%s row %d: key %d decreases from %d", tb.FullName(), i, k, prev)
			}
			if k != prev {
				if r, ok := tb.RowForKey(k); !ok || r != i {
					t.Fatalf("%s: RowForKey(%d) = %d,%v; want %d", tb.FullName(), k, r, ok, i)
				}
				// Keys between prev and k map to no row and lower-bound to i.
				for g := prev + 1; g < k && g > prev && g-prev < 40; g++ {
					if _, ok := tb.RowForKey(g); ok {
						t.Fatalf("%s: key %d should not exist", tb.FullName(), g)
					}
					if lb := tb.LowerBound(g); lb != i {
						t.Fatalf("%s: LowerBound(%d) = %d, want %d", tb.FullName(), g, lb, i)
					}
				}
			}
			prev = k
		}
		if lb := tb.LowerBound(1 << 62); lb != tb.Rows {
			t.Fatalf("%s: LowerBound(huge) = %d", tb.FullName(), lb)
		}
		if lb := tb.LowerBound(-5); lb != 0 {
			t.Fatalf("%s: LowerBound(-5) = %d", tb.FullName(), lb)
		}
	}
	li, _ := db.Table("dbo", "lineitem")
	// Line numbers restart at 1 for every order and count 1..7.
	var vals []any
	lines := map[int64]int64{}
	for i := range li.Rows {
		vals = li.Row(i, vals)
		ok, ln := vals[0].(int64), vals[3].(int64)
		if ln != lines[ok]+1 {
			t.Fatalf("lineitem row %d: order %d line %d after %d", i, ok, ln, lines[ok])
		}
		lines[ok] = ln
	}
	for ok, n := range lines {
		if n < 1 || n > 7 {
			t.Fatalf("order %d has %d lines", ok, n)
		}
	}
}

func TestSampleCatalogConsistency(t *testing.T) {
	db := New(Config{Seed: 9})
	for _, tb := range db.Tables() {
		for _, fk := range tb.ForeignKeys {
			ref, ok := db.Table(fk.RefSchema, fk.RefTable)
			if !ok {
				t.Fatalf("%s.%s references missing table %s.%s", tb.FullName(), fk.Name, fk.RefSchema, fk.RefTable)
			}
			if _, ok := keyIndex(ref, fk.RefColumns); !ok {
				t.Fatalf("%s: references %v, which is neither the primary key %v nor a unique constraint of %s", fk.Name, fk.RefColumns, ref.Key, ref.FullName())
			}
			for _, c := range fk.Columns {
				if tb.ColumnIndex(c) < 0 {
					t.Fatalf("%s: no column %s", fk.Name, c)
				}
			}
		}
		for _, ix := range tb.Indexes {
			for _, c := range append(append([]string(nil), ix.Columns...), ix.Included...) {
				if tb.ColumnIndex(c) < 0 {
					t.Fatalf("%s index %s: no column %s", tb.FullName(), ix.Name, c)
				}
			}
		}
		for c := range tb.Defaults {
			if tb.ColumnIndex(c) < 0 {
				t.Fatalf("%s default on missing column %s", tb.FullName(), c)
			}
		}
		for k := range tb.Columns {
			if tb.SQLType(k) == "" {
				t.Fatalf("%s column %d has no SQL type", tb.FullName(), k)
			}
		}
	}
	// Every view can be looked up, case-insensitively.
	for _, name := range []string{"INFORMATION_SCHEMA.TABLES", "information_schema.columns", "INFORMATION_SCHEMA.KEY_COLUMN_USAGE",
		"INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS", "sys.schemas", "sys.tables", "sys.columns", "sys.types", "sys.indexes",
		"sys.index_columns", "sys.identity_columns", "sys.default_constraints", "sys.foreign_keys", "sys.foreign_key_columns",
		"sys.partitions", "SYS.OBJECTS"} {
		s, n, _ := strings.Cut(name, ".")
		if _, ok := db.Catalog(s, n); !ok {
			t.Fatalf("no catalog view %s", name)
		}
	}
	// INFORMATION_SCHEMA.COLUMNS lists every column of every table, in order.
	cols, _ := db.Catalog("INFORMATION_SCHEMA", "COLUMNS")
	n := 0
	for _, tb := range append(db.Tables(), db.Views()...) {
		n += len(tb.Columns)
	}
	if cols.Rows != int64(n) {
		t.Fatalf("INFORMATION_SCHEMA.COLUMNS has %d rows, want %d", cols.Rows, n)
	}
	// Every referential constraint's unique constraint exists as a PRIMARY
	// KEY or UNIQUE constraint.
	rc, _ := db.Catalog("INFORMATION_SCHEMA", "REFERENTIAL_CONSTRAINTS")
	tc, _ := db.Catalog("INFORMATION_SCHEMA", "TABLE_CONSTRAINTS")
	pks := map[string]bool{}
	var row []any
	for i := range tc.Rows {
		row = tc.Row(i, row)
		if row[6] == "PRIMARY KEY" || row[6] == "UNIQUE" {
			pks[row[1].(string)+"."+row[2].(string)] = true
		}
	}
	nfk := 0
	for _, tb := range db.Tables() {
		nfk += len(tb.ForeignKeys)
	}
	if rc.Rows != int64(nfk) || nfk != 6 {
		t.Fatalf("%d referential constraints for %d foreign keys, want 6", rc.Rows, nfk)
	}
	for i := range rc.Rows {
		row = rc.Row(i, row)
		if !pks[row[4].(string)+"."+row[5].(string)] {
			t.Fatalf("referential constraint %v points at no primary key or unique constraint", row)
		}
	}
	// sys.foreign_key_columns point at existing object and column ids.
	fkc, _ := db.Catalog("sys", "foreign_key_columns")
	syscols, _ := db.Catalog("sys", "columns")
	colIDs := map[[2]int64]bool{}
	for i := range syscols.Rows {
		row = syscols.Row(i, row)
		colIDs[[2]int64{row[0].(int64), row[2].(int64)}] = true
	}
	for i := range fkc.Rows {
		row = fkc.Row(i, row)
		if !colIDs[[2]int64{row[2].(int64), row[3].(int64)}] || !colIDs[[2]int64{row[4].(int64), row[5].(int64)}] {
			t.Fatalf("sys.foreign_key_columns row %v points at a missing column", row)
		}
	}
}

// TestSampleReferentialIntegrity checks the sales data itself: every
// foreign key value exists, and orders.total is the sum of its lines, at
// hand-picked counts and at those SalesRows scales to.
func TestSampleReferentialIntegrity(t *testing.T) {
	for name, rows := range map[string]map[string]int64{
		"hand-picked":     {"sales.orders": 700, "sales.order_lines": 2900, "sales.customers": 90, "sales.products": 33},
		"SalesRows(300)":  SalesRows(300),
		"SalesRows(4321)": SalesRows(4321),
		"SalesRows(7)":    SalesRows(7),
	} {
		t.Run(name, func(t *testing.T) { checkSalesIntegrity(t, New(Config{Seed: 11, Rows: rows})) })
	}
	if got := SalesRows(10_000_000); got["sales.orders"] != 2_500_000 || got["sales.customers"] != 500_000 || got["sales.products"] != 100_000 {
		t.Errorf("SalesRows(10M) = %v, want the default proportions", got)
	}
}

func checkSalesIntegrity(t *testing.T, db *DB) {
	cu, _ := db.Table("sales", "customers")
	pr, _ := db.Table("sales", "products")
	or, _ := db.Table("sales", "orders")
	ol, _ := db.Table("sales", "order_lines")
	var row []any
	totals := map[int64]int64{}
	price := map[int64]int64{}
	for i := range pr.Rows {
		row = pr.Row(i, row)
		price[row[0].(int64)] = int64(row[4].(decode.Decimal).Lo)
	}
	prevOrder := int64(0)
	for i := range ol.Rows {
		row = ol.Row(i, row)
		o, p := row[1].(int64), row[2].(int64)
		if _, ok := or.RowForKey(o); !ok {
			t.Fatalf("line %d: order %d missing", i, o)
		}
		if _, ok := pr.RowForKey(p); !ok {
			t.Fatalf("line %d: product %d missing", i, p)
		}
		if o < prevOrder {
			t.Fatalf("line %d: lines not grouped by order", i)
		}
		prevOrder = o
		if got := int64(row[4].(decode.Decimal).Lo); got != price[p] {
			t.Fatalf("line %d: unit price %d, product price %d", i, got, price[p])
		}
		totals[o] += row[3].(int64) * price[p]
	}
	emails := map[string]bool{}
	for i := range cu.Rows {
		row = cu.Row(i, row)
		e := row[3].(string)
		if emails[e] {
			t.Fatalf("duplicate email %s", e)
		}
		emails[e] = true
	}
	for i := range or.Rows {
		row = or.Row(i, row)
		if _, ok := cu.RowForKey(row[1].(int64)); !ok {
			t.Fatalf("order %d: customer %v missing", i, row[1])
		}
		if got := int64(row[5].(decode.Decimal).Lo); got != totals[row[0].(int64)] {
			t.Fatalf("order %v: total %d, lines sum to %d", row[0], got, totals[row[0].(int64)])
		}
		if totals[row[0].(int64)] == 0 {
			t.Fatalf("order %v has no lines", row[0])
		}
	}
}

func TestSampleTypeMatrix(t *testing.T) {
	db := New(Config{Seed: 1})
	tm, ok := db.Table("dbo", "type_matrix")
	if !ok {
		t.Fatal("no type_matrix")
	}
	want := []string{"tinyint", "smallint", "int", "bigint", "bit", "real", "float", "money", "smallmoney", "datetime",
		"smalldatetime", "decimal(38,0)", "decimal(38,38)", "decimal(18,4)", "numeric(9,2)", "uniqueidentifier", "date",
		"time(0)", "time(3)", "time(7)", "datetime2(0)", "datetime2(3)", "datetime2(7)", "datetimeoffset(0)",
		"datetimeoffset(7)", "char(10)", "varchar(50)", "varchar(max)", "nchar(10)", "nvarchar(50)", "nvarchar(max)",
		"binary(8)", "varbinary(50)", "varbinary(max)", "text", "ntext", "image", "xml", "geography", "geometry",
		"hierarchyid", "sql_variant", "timestamp", "json", "vector(3)"}
	have := map[string]bool{}
	for k := range tm.Columns {
		have[tm.SQLType(k)] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("type_matrix lacks a %s column", w)
		}
	}
	// The NULL row is NULL everywhere but the key and the rowversion.
	row := tm.Row(tmNull, nil)
	for k, v := range row {
		name := tm.Columns[k].Name
		if (v == nil) != (name != "id" && name != "c_rowversion") {
			t.Errorf("NULL row: %s = %v", name, v)
		}
	}
	// Every non-NULL value of every row is non-nil elsewhere, and variants cycle types.
	variants := map[byte]bool{}
	vc := tm.ColumnIndex("c_sql_variant")
	for i := range tm.Rows {
		row = tm.Row(i, row)
		if v, ok := row[vc].(decode.Variant); ok {
			variants[v.Type.Type] = true
		}
	}
	if len(variants) < 15 {
		t.Errorf("sql_variant covers %d base types", len(variants))
	}
	if tm.Features[tm.ColumnIndex("c_json")] != "JSONSUPPORT" || tm.Features[tm.ColumnIndex("c_vector_3")] != "VECTORSUPPORT" {
		t.Errorf("features %v", tm.Features)
	}
	// Downgrade.
	if tm.Downgrade(true, true) != tm {
		t.Error("Downgrade(true,true) must return the table itself")
	}
	d := tm.Downgrade(false, false)
	if d != tm.Downgrade(false, false) {
		t.Error("Downgrade is not cached")
	}
	jc, vcol := d.ColumnIndex("c_json"), d.ColumnIndex("c_vector_3")
	if d.SQLType(jc) != "nvarchar(max)" || d.SQLType(vcol) != "varchar(max)" {
		t.Errorf("downgraded types %s %s", d.SQLType(jc), d.SQLType(vcol))
	}
	row = d.Row(tmMax, row)
	if s, _ := row[vcol].(string); s != "[3.4028235e+038,1.0000000e+000,1.4012985e-045]" {
		t.Errorf("vector text %q", s)
	}
	if _, ok := tm.Row(tmMax, nil)[vcol].([]float32); !ok {
		t.Error("the original table changed")
	}
}

func TestSampleTextTables(t *testing.T) {
	db := New(Config{Seed: 1})
	for name, coll := range map[string]decode.Collation{"text_cp1252": CollLatin1, "text_cp1251": CollCyrillic,
		"text_cp932": CollJapanese, "text_utf8": CollUTF8} {
		tb, ok := db.Table("", name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		if tb.Columns[1].Type.Collation != coll {
			t.Errorf("%s: collation %+v", name, tb.Columns[1].Type.Collation)
		}
		row := tb.Row(0, nil)
		if row[1] != row[2] {
			t.Errorf("%s: varchar %q and nvarchar %q differ", name, row[1], row[2])
		}
		// The varchar bytes are the code page's, not UTF-8 (except the UTF-8 table).
		b := tb.AppendRows(nil, 0, 1, false)
		s := row[1].(string)
		if coll.UTF8() != bytes.Contains(b, []byte(s)) {
			t.Errorf("%s: UTF-8 bytes of %q present=%v", name, s, bytes.Contains(b, []byte(s)))
		}
	}
}

func TestSampleAllocs(t *testing.T) {
	db := small(1)
	for _, name := range []string{"poc48", "odbc5", "wide601", "lob", "temporal", "lineitem"} {
		tb, _ := db.Table("dbo", name)
		buf := tb.AppendRows(nil, 0, 64, true)
		allocs := testing.AllocsPerRun(20, func() {
			buf = tb.AppendRows(buf[:0], 0, 64, false)
			buf = tb.AppendRows(buf[:0], 0, 64, true)
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per AppendRows call", name, allocs)
		}
	}
}

// TestSampleConcurrent generates from several goroutines at once (the
// server serves many connections from one DB) and checks the bytes.
func TestSampleConcurrent(t *testing.T) {
	db := small(2)
	names := []string{"poc48", "wide601", "lineitem", "type_matrix", "temporal", "text_cp932"}
	want := map[string][]byte{}
	for _, n := range names {
		tb, _ := db.Table("dbo", n)
		want[n] = tb.AppendRows(nil, 0, 40, true)
	}
	errs := make(chan error, 4*len(names))
	for g := range 4 {
		for _, n := range names {
			go func() {
				tb, _ := db.Table("dbo", n)
				if _, ok := db.Catalog("sys", "columns"); !ok {
					errs <- fmt.Errorf("no sys.columns")
					return
				}
				tb.Downgrade(g%2 == 0, false)
				if !bytes.Equal(tb.AppendRows(nil, 0, 40, true), want[n]) {
					errs <- fmt.Errorf("%s: concurrent bytes differ", n)
					return
				}
				errs <- nil
			}()
		}
	}
	for range 4 * len(names) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestSampleEmptyParents(t *testing.T) {
	db := New(Config{Rows: map[string]int64{"sales.customers": 0, "sales.products": 0}})
	for _, n := range []string{"orders", "order_lines"} {
		if tb, _ := db.Table("sales", n); tb.Rows != 0 {
			t.Errorf("sales.%s has %d rows without parents", n, tb.Rows)
		}
	}
	db = New(Config{Scale: 0.01})
	if tb, _ := db.Table("dbo", "poc48"); tb.Rows != 1000 {
		t.Errorf("Scale 0.01: poc48 has %d rows", tb.Rows)
	}
	if tb, _ := db.Table("dbo", "type_matrix"); tb.Rows != tmRows {
		t.Errorf("type_matrix scaled to %d rows", tb.Rows)
	}
}

// TestSampleNullRates checks that nullable shape columns do hold some NULLs
// (and keys none), so decoders' NULL paths are exercised.
func TestSampleNullRates(t *testing.T) {
	db := New(Config{Seed: 6, Rows: map[string]int64{"poc48": 2000, "odbc5": 2000, "wide601": 2000, "lob": 2000, "temporal": 2000}})
	for _, name := range []string{"poc48", "odbc5", "wide601", "lob", "temporal"} {
		tb, _ := db.Table("dbo", name)
		nulls := make([]int, len(tb.Columns))
		var row []any
		n := min(tb.Rows, 2000)
		for i := range n {
			row = tb.Row(i, row)
			for c, v := range row {
				if v == nil {
					nulls[c]++
				}
			}
		}
		for c := range tb.Columns {
			isKey := c == tb.KeyColumn()
			if isKey && nulls[c] != 0 {
				t.Errorf("%s.%s: key has NULLs", name, tb.Columns[c].Name)
			}
			if !isKey && tb.Columns[c].Nullable() && (nulls[c] == 0 || nulls[c] > int(n)/4) {
				t.Errorf("%s.%s: %d NULLs in %d rows", name, tb.Columns[c].Name, nulls[c], n)
			}
		}
	}
}

func TestSampleVectorText(t *testing.T) {
	for _, c := range []struct {
		in   []float32
		want string
	}{
		{[]float32{1, 2, 3}, "[1.0000000e+000,2.0000000e+000,3.0000000e+000]"},
		{[]float32{-0.25, 0, 1e-10}, "[-2.5000000e-001,0.0000000e+000,1.0000000e-010]"},
	} {
		if got := VectorText(c.in); got != c.want {
			t.Errorf("VectorText(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Row overrides for tables that do not exist (or whose rows are fixed)
// are errors that list the tables, not silently ignored.
func TestConfigValidateRows(t *testing.T) {
	for _, rows := range []map[string]int64{nil, {"poc48": 5}, {"DBO.Poc48": 5, "sales.orders": 0}} {
		c := Config{Rows: rows}
		if err := c.Validate(); err != nil {
			t.Errorf("%v: %v", rows, err)
		}
	}
	for rows, want := range map[string]string{
		"nosuch":      `"nosuch": no such table`,
		"orders":      "did you mean sales.orders?",
		"type_matrix": "fixed by its content",
		"x.poc48":     `"x.poc48": no such table`,
	} {
		c := Config{Rows: map[string]int64{rows: 5}}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dbo.poc48") {
			t.Errorf("%s: %v, want %q and the list of tables", rows, err, want)
		}
	}
	c := Config{Rows: map[string]int64{"poc48": -1}}
	if err := c.Validate(); err == nil {
		t.Error("a negative row count was accepted")
	}
	if got := len(TableNames()); got != len(DefaultRows) {
		t.Errorf("TableNames: %d names for %d tables", got, len(DefaultRows))
	}
}
