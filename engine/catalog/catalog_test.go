package catalog

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

func TestSplitTableName(t *testing.T) {
	for in, want := range map[string][2]string{
		"orders": {"dbo", "orders"}, "sales.orders": {"sales", "orders"},
		"[my schema].[odd]]name]": {"my schema", "odd]name"}, "[x].y": {"x", "y"},
	} {
		s, tb, err := SplitTableName(in)
		if err != nil || s != want[0] || tb != want[1] {
			t.Errorf("%q: %q %q %v, want %v", in, s, tb, err, want)
		}
	}
	for _, bad := range []string{"", "a.b.c", "a;drop", "[unterminated", "a."} {
		if _, _, err := SplitTableName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFilter(t *testing.T) {
	f := Filter{Include: []string{"sales.*", "dbo.order?", "[odd.schema].[x*]", "LINE*"}, Exclude: []string{"*.order_lines"}}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		schema, table string
		want          bool
	}{
		{"sales", "orders", true}, {"SALES", "Customers", true}, {"sales", "order_lines", false},
		{"dbo", "orders", true}, {"dbo", "order", false}, {"dbo", "orderss", false},
		{"odd.schema", "x*", true}, {"odd.schema", "xy", false}, // brackets are literal
		{"dbo", "lineitem", true}, {"other", "LineItem", true}, // no schema: any schema
		{"warehouse", "stock", false},
	} {
		if got := f.Match(c.schema, c.table); got != c.want {
			t.Errorf("%s.%s: %v, want %v", c.schema, c.table, got, c.want)
		}
	}
	if !(Filter{}).Match("any", "thing") {
		t.Error("an empty filter must select everything")
	}
	for _, bad := range []string{"", "a.b.c", "sales.", "[unterminated", "sa[les].x", ".x"} {
		if err := (Filter{Include: []string{bad}}).Validate(); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
	if s, tb, ok := (Filter{Include: []string{"[sales].[orders]"}}).exact(); !ok || s != "sales" || tb != "orders" {
		t.Errorf("exact: %q %q %v", s, tb, ok)
	}
	for _, f := range []Filter{{Include: []string{"sales.o*"}}, {Include: []string{"orders"}}, {Include: []string{"a.b", "c.d"}}} {
		if _, _, ok := f.exact(); ok {
			t.Errorf("%v is not one exact table", f.Include)
		}
	}
	for p, s := range map[string]string{"a*b": "axxb", "*": "", "?é": "xé", "a%b": "a%b", `a\b`: `a\b`} {
		if !glob(p, s) {
			t.Errorf("glob %q does not match %q", p, s)
		}
	}
	for p, s := range map[string]string{"a*b": "axxc", "?": "", "a?": "a", "ab": "a"} {
		if glob(p, s) {
			t.Errorf("glob %q matches %q", p, s)
		}
	}
}

func TestStripParens(t *testing.T) {
	for in, want := range map[string]string{
		"((0))": "0", "(getdate())": "getdate()", "(N'new')": "N'new'", "(N'(x')": "N'(x'", "('a'')b')": "'a'')b'",
		"(a)+(b)": "(a)+(b)", "((a)+(b))": "(a)+(b)", "([x)])": "[x)]", "(NEXT VALUE FOR [s].[q])": "NEXT VALUE FOR [s].[q]",
		"": "", "()": "",
	} {
		if got := StripParens(in); got != want {
			t.Errorf("StripParens(%q) = %q, want %q", in, got, want)
		}
	}
}

// row is a result row as decode.Capture gives it.
func row(v ...any) []any { return v }

// serverRows are detail results for one table as SQL Server 2022 returns
// them for
//
//	CREATE TABLE app.invoice (
//	  id numeric(38,0) IDENTITY(1,1) NOT NULL,      -- past int64 already
//	  ref app.Code NOT NULL,                        -- alias type over varchar(12)
//	  area geography NULL,
//	  total AS (qty*price), qty int, price money,
//	  CONSTRAINT PK_invoice PRIMARY KEY NONCLUSTERED (id),
//	  CONSTRAINT UQ_invoice_ref UNIQUE CLUSTERED (ref DESC, qty),
//	  CONSTRAINT FK_invoice_b FOREIGN KEY (qty, ref) REFERENCES app.b (q, r) ON DELETE SET NULL,
//	  CONSTRAINT CK_qty CHECK (qty > 0))
//	CREATE INDEX IX_f ON app.invoice (price) INCLUDE (area, total) WHERE qty > 0  -- disabled later
//
// with index columns listed in index_column_id order, which is not the key
// order of UQ_invoice_ref.
func serverRows() [][][]any {
	idVariant := func(d decode.Decimal) decode.Variant {
		return decode.Variant{Type: decode.TypeInfo{Type: decode.TypeNumericN, Precision: 38}, Value: d}
	}
	return [][][]any{
		{ // sys.columns
			row(int64(77), int64(1), "id", "numeric", "numeric", int64(17), int64(38), int64(0), nil, false, true, false),
			row(int64(77), int64(2), "ref", "Code", "varchar", int64(12), int64(0), int64(0), "Latin1_General_CS_AS", false, false, false),
			row(int64(77), int64(3), "area", "geography", nil, int64(-1), int64(0), int64(0), nil, true, false, false),
			row(int64(77), int64(5), "total", "money", "money", int64(8), int64(19), int64(4), nil, true, false, true),
			row(int64(77), int64(6), "qty", "int", "int", int64(4), int64(10), int64(0), nil, true, false, false),
			row(int64(77), int64(7), "price", "money", "money", int64(8), int64(19), int64(4), nil, true, false, false),
			row(int64(99), int64(1), "other_table", "int", "int", int64(4), int64(10), int64(0), nil, true, false, false),
		},
		{ // sys.identity_columns: last value 2^64+5
			row(int64(77), int64(1), idVariant(decode.Decimal{Lo: 1, Precision: 38}), idVariant(decode.Decimal{Lo: 1, Precision: 38}),
				idVariant(decode.Decimal{Lo: 5, Hi: 1, Precision: 38})),
		},
		{row(int64(77), int64(5), "([qty]*[price])", false)}, // sys.computed_columns
		{row(int64(77), int64(7), "DF_price", "((0.0))")},    // sys.default_constraints
		{ // sys.indexes
			row(int64(77), int64(1), "UQ_invoice_ref", int64(1), true, false, true, false, nil),
			row(int64(77), int64(2), "PK_invoice", int64(2), true, true, false, false, nil),
			row(int64(77), int64(3), "IX_f", int64(2), false, false, false, true, "([qty]>(0))"),
		},
		{ // sys.index_columns
			row(int64(77), int64(1), int64(1), int64(6), int64(2), false, false),
			row(int64(77), int64(1), int64(2), int64(2), int64(1), true, false),
			row(int64(77), int64(2), int64(1), int64(1), int64(1), false, false),
			row(int64(77), int64(3), int64(1), int64(7), int64(1), false, false),
			row(int64(77), int64(3), int64(2), int64(3), int64(0), false, true),
			row(int64(77), int64(3), int64(3), int64(5), int64(0), false, true),
		},
		{ // sys.key_constraints
			row(int64(77), "UQ_invoice_ref", "UQ", int64(1)),
			row(int64(77), "PK_invoice", "PK", int64(2)),
		},
		{row(int64(501), int64(77), "FK_invoice_b", "app", "b", int64(2), int64(0), false, true)}, // sys.foreign_keys
		{ // sys.foreign_key_columns
			row(int64(501), int64(1), int64(77), int64(6), "q"),
			row(int64(501), int64(2), int64(77), int64(2), "r"),
		},
		{row(int64(77), int64(0), "CK_qty", "([qty]>(0))", false, false)}, // sys.check_constraints
		{row(int64(77), decode.Decimal{Lo: 1234})},                        // sys.partitions (SUM as numeric)
	}
}

func TestAttachServerRows(t *testing.T) {
	tb := &Table{ObjectID: 77, Schema: "app", Name: "invoice", RowCount: -1}
	if err := attach([]*Table{tb}, serverRows()); err != nil {
		t.Fatal(err)
	}
	if len(tb.Columns) != 6 || tb.Column("other_table") != nil {
		t.Fatalf("columns %+v", tb.Columns)
	}
	id := tb.Column("id")
	want, _ := new(big.Int).SetString("18446744073709551621", 10)
	if id.Identity == nil || id.Identity.Last.Cmp(want) != 0 || id.Identity.Seed.Int64() != 1 || id.SQLType() != "numeric(38,0)" {
		t.Errorf("id %+v identity %+v", id, id.Identity)
	}
	if ref := tb.Column("ref"); ref.SQLType() != "Code" || ref.BaseType != "varchar" || ref.Kind() != decode.KindVarChar || ref.Nullable {
		t.Errorf("ref %+v", ref)
	}
	if area := tb.Column("area"); area.BaseType != "geography" || area.Kind() != decode.KindGeography || DefaultConversion(area) != "[area].STAsBinary()" {
		t.Errorf("area %+v", area)
	}
	if c := tb.Column("total"); c.Computed == nil || c.Computed.Definition != "([qty]*[price])" || c.ID != 5 {
		t.Errorf("total %+v", c)
	}
	if d := tb.Column("price").Default; d == nil || d.Expr() != "0.0" {
		t.Errorf("price default %+v", d)
	}
	if tb.PrimaryKey == nil || tb.PrimaryKey.Clustered || fmt.Sprint(tb.PrimaryKey.Columns) != "[id]" {
		t.Errorf("pk %+v", tb.PrimaryKey)
	}
	if len(tb.Uniques) != 1 || fmt.Sprint(tb.Uniques[0].Columns) != "[ref qty]" || !tb.Uniques[0].Clustered {
		t.Errorf("uniques %+v", tb.Uniques)
	}
	if k := tb.ClusteredKey(); fmt.Sprint(k) != "[{ref true} {qty false}]" {
		t.Errorf("clustered key %v", k)
	}
	ix := tb.Indexes[2]
	if ix.Name != "IX_f" || !ix.Disabled || ix.Filter != "([qty]>(0))" || fmt.Sprint(ix.Include) != "[area total]" || len(ix.Keys) != 1 {
		t.Errorf("IX_f %+v", ix)
	}
	if len(tb.ForeignKeys) != 1 {
		t.Fatalf("fks %+v", tb.ForeignKeys)
	}
	fk := tb.ForeignKeys[0]
	if fmt.Sprint(fk.Columns, fk.RefColumns) != "[qty ref] [q r]" || fk.OnDelete != SetNull || fk.OnUpdate != NoAction ||
		!fk.NotTrusted || fk.OnDelete.String() != "SET NULL" {
		t.Errorf("fk %+v", fk)
	}
	if len(tb.Checks) != 1 || tb.Checks[0].Column != "" || tb.RowCount != 1234 {
		t.Errorf("checks %+v rows %d", tb.Checks, tb.RowCount)
	}

	// A value of the wrong type is an error naming the view, never a panic.
	bad := serverRows()
	bad[4][0][1] = "one"
	if err := attach([]*Table{{ObjectID: 77}}, bad); err == nil || !strings.Contains(err.Error(), "sys.indexes") {
		t.Errorf("bad index id: %v", err)
	}
	short := serverRows()
	short[0][0] = short[0][0][:3]
	if err := attach([]*Table{{ObjectID: 77}}, short); err == nil || !strings.Contains(err.Error(), "sys.columns") {
		t.Errorf("short row: %v", err)
	}
	if err := attach(nil, serverRows()[:3]); err == nil {
		t.Error("missing result sets accepted")
	}
}

func TestProject(t *testing.T) {
	tb := &Table{Schema: "dbo", Name: "t", Columns: []Column{
		{Name: "id", BaseType: "int"}, {Name: "geo", BaseType: "geography"}, {Name: "node", BaseType: "hierarchyid"},
		{Name: "shape", BaseType: "geometry"}, {Name: "valid_from", BaseType: "datetime2", Hidden: true},
	}}
	p, err := Project(tb, nil, []Override{{Column: "SHAPE", Expr: "[shape].STAsText()"}}, Reads{})
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT [id], [geo].STAsBinary() AS [geo], [node].ToString() AS [node], [shape].STAsText() AS [shape] FROM [dbo].[t] WHERE id > 5"
	if got := p.SQL("id > 5"); got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	if !p.Items[1].Converted || p.Items[3].Converted {
		t.Errorf("converted flags %+v", p.Items)
	}
	if got := p.DescribeSQL(); !strings.HasPrefix(got, "SELECT TOP (0) [id], [geo].STAsBinary() AS [geo]") || strings.Contains(got, "WHERE") {
		t.Errorf("describe: %s", got)
	}
	p, _ = Project(tb, []string{"node", "id", "valid_from"}, []Override{{Column: "node", Expr: "raw"}}, Reads{})
	if got := p.SQL(""); got != "SELECT [node], [id], [valid_from] FROM [dbo].[t]" {
		t.Fatalf("columns + raw + hidden by name: %s", got)
	}
	// Sinks that read spatial values serialized get geography and geometry
	// as stored; hierarchyid keeps its conversion and an override still wins.
	p, _ = Project(tb, nil, []Override{{Column: "shape", Expr: "[shape].STAsText()"}}, Reads{Spatial: true})
	if got := p.SQL(""); got != "SELECT [id], [geo], [node].ToString() AS [node], [shape].STAsText() AS [shape] FROM [dbo].[t]" {
		t.Fatalf("spatial read raw: %s", got)
	}
	if p.Items[1].Converted || p.Items[1].Expr != "" {
		t.Errorf("raw geography item %+v", p.Items[1])
	}
	var uc *UnknownColumnError
	if _, err := Project(tb, []string{"nope"}, nil, Reads{}); !errors.As(err, &uc) || uc.Field != "columns" {
		t.Fatalf("unknown column: %v", err)
	}
	if _, err := Project(tb, nil, []Override{{Column: "nope", Expr: "1"}}, Reads{}); !errors.As(err, &uc) || uc.Field != "convert" {
		t.Fatalf("unknown override: %v", err)
	}
	if got := CountSQL("s", "t]x", "a = 1"); got != "SELECT COUNT_BIG(*) FROM [s].[t]]x] WHERE a = 1" {
		t.Errorf("count: %s", got)
	}
}

func TestColumnSQLType(t *testing.T) {
	for want, c := range map[string]Column{
		"nvarchar(50)":   {TypeName: "nvarchar", BaseType: "nvarchar", MaxLength: 100},
		"varbinary(max)": {TypeName: "varbinary", BaseType: "varbinary", MaxLength: -1},
		"datetime2(3)":   {TypeName: "datetime2", BaseType: "datetime2", Scale: 3},
		"decimal(12,2)":  {TypeName: "decimal", BaseType: "decimal", Precision: 12, Scale: 2},
		"vector(3)":      {TypeName: "vector", BaseType: "vector", MaxLength: 20},
		"sysname":        {TypeName: "sysname", BaseType: "nvarchar", MaxLength: 256},
		"int":            {TypeName: "int", BaseType: "int"},
	} {
		if got := c.SQLType(); got != want {
			t.Errorf("%+v: %s, want %s", c, got, want)
		}
	}
}
