package partition

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// ciKey is a value of dbo.codes as its collation (SQL_Latin1_General_CP1_CI_AS
// on the sample server) compares it, for checking bounds in the tests:
// case folded, trailing blanks dropped.
func ciKey(s string) string { return strings.ToLower(strings.TrimRight(s, " ")) }

// TestPlanStringKeys plans dbo.codes, clustered on a varchar key whose
// every value comes in four spellings its case-insensitive collation
// holds equal ('kiwi-7', 'KIWI-7', 'Kiwi-7', 'kiwi-7  '), on that key, on
// a nullable nvarchar column, on an nvarchar label and on the same keys
// under a case-sensitive and a binary collation, from every key and
// through TABLESAMPLE, and reads each part: every row is in exactly one
// part and no part is empty. The bounds increase under each column's own
// collation and go out in its type and collation. A plan ordered by the client (bytes put
// 'Banana' before 'apple') or cut at every m-th row of the sorted sample
// without grouping ('none' and 'NONE' as two bounds) fails here: the
// first gives ranges that overlap on the server, the second empty ones.
func TestPlanStringKeys(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 21, Rows: map[string]int64{"dbo.codes": 3000}})
	c := connectDB(t, db)
	for _, tc := range []struct {
		spec  Spec
		parts int
	}{
		{Spec{Auto: true, Count: 4}, 4},
		{Spec{Auto: true, Count: 16, Boundaries: BoundariesMinMax}, 15}, // sampled all the same; 'none' holds two quantiles
		{Spec{Column: "ncode", Count: 5}, 6},                            // nullable: + IS NULL
		{Spec{Column: "label", Count: 3}, 3},
		{Spec{Auto: true, Count: 8, SampleRows: 500}, 8}, // TABLESAMPLE
		{Spec{Column: "ncode", Count: 6, SampleRows: 700}, 7},
		{Spec{Auto: true, Count: 3000}, -1},            // more parts than values: one per value
		{Spec{Auto: true, Count: 4, SampleRows: 1}, 1}, // a sample of 1 row in 3000 picks no run: no cut
		// The same keys under a case-sensitive and a binary collation,
		// where the spellings are four values.
		{Spec{Column: "cscode", Count: 7}, 7},
		{Spec{Column: "bcode", Count: 7}, 7},
		{Spec{Column: "cscode", Count: 2000}, -1},
		{Spec{Column: "bcode", Count: 9, SampleRows: 600}, 9},
	} {
		planCovers(t, c, "dbo.codes", tc.spec, tc.parts)
	}
	// The bounds strictly increase under the collation, and are typed
	// as their column.
	ctx := context.Background()
	tmo := session.TimeoutOf(time.Minute)
	tbl, err := catalog.LoadTable(ctx, c, "dbo", "codes", tmo)
	if err != nil {
		t.Fatal(err)
	}
	ci := func(a, b string) int { return strings.Compare(ciKey(a), ciKey(b)) }
	cs := func(a, b string) int { // case folded, then lower case first
		if c := ci(a, b); c != 0 {
			return c
		}
		return -strings.Compare(strings.TrimRight(a, " "), strings.TrimRight(b, " "))
	}
	bin := func(a, b string) int { return strings.Compare(strings.TrimRight(a, " "), strings.TrimRight(b, " ")) }
	for _, tc := range []struct {
		col  string
		wire byte
		size uint32
		coll decode.Collation
		cmp  func(a, b string) int
	}{
		{"code", decode.TypeBigVarChar, 24, sampledb.CollSQLLatin1, ci},
		{"ncode", decode.TypeNVarChar, 48, sampledb.CollSQLLatin1, ci},
		{"cscode", decode.TypeBigVarChar, 24, sampledb.CollLatin1CS, cs},
		{"bcode", decode.TypeNVarChar, 48, sampledb.CollLatin1BIN2, bin},
	} {
		parts, err := Plan(ctx, c, tbl, Spec{Column: tc.col, Count: 40}, tmo)
		if err != nil {
			t.Fatal(err)
		}
		var prev string
		for i, p := range parts {
			if p.Lo == nil {
				continue
			}
			if i > 1 && tc.cmp(prev, *p.Lo.Text) >= 0 {
				t.Errorf("%s: bound %q after %q", tc.col, *p.Lo.Text, prev)
			}
			prev = *p.Lo.Text
			prm := p.Lo.Param(ParamLo)
			if prm.Type.Type != tc.wire || prm.Type.Size != tc.size || prm.Type.Collation != tc.coll || prm.Value != *p.Lo.Text {
				t.Fatalf("%s: parameter %+v of bound %q", tc.col, prm, *p.Lo.Text)
			}
		}
		if len(parts) < 30 {
			t.Errorf("%s: %d parts of 40", tc.col, len(parts))
		}
	}
	// Bound text in display and JSON.
	s := "it's"
	b := Bound{Type: "nvarchar(24)", Text: &s, Collation: &sampledb.CollSQLLatin1}
	if b.String() != "N'it''s'" {
		t.Errorf("String: %s", b)
	}
	js, _ := json.Marshal(b)
	var back Bound
	if err := json.Unmarshal(js, &back); err != nil || *back.Text != s || *back.Collation != sampledb.CollSQLLatin1 {
		t.Errorf("round trip %s: %+v %v", js, back, err)
	}
}

// TestPlanDecimalKeys plans decimal keys with a scale and one of 20
// digits, which are cut at server-sorted sampled values too.
func TestPlanDecimalKeys(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 23, Rows: map[string]int64{"dbo.temporal": 2000, "dbo.readings": 1500, "finance.ledger": 300}})
	c := connectDB(t, db)
	planCovers(t, c, "dbo.temporal", Spec{Column: "amount", Count: 6}, 7) // decimal(38,10), nullable
	planCovers(t, c, "dbo.temporal", Spec{Column: "amount", Count: 6, SampleRows: 400}, 7)
	planCovers(t, c, "dbo.readings", Spec{Column: "value", Count: 4}, 5)       // decimal(9,3), nullable
	sizes := planCovers(t, c, "finance.ledger", Spec{Auto: true, Count: 5}, 5) // numeric(20,0) identity
	if spread(sizes, false) > 1.05 {
		t.Errorf("numeric(20,0) identity: parts %v", sizes)
	}
	tbl, err := catalog.LoadTable(context.Background(), c, "finance", "ledger", session.TimeoutOf(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := Plan(context.Background(), c, tbl, Spec{Auto: true, Count: 2}, session.TimeoutOf(time.Minute))
	if err != nil || len(parts) != 2 {
		t.Fatalf("%v %v", parts, err)
	}
	p := parts[1].Lo.Param(ParamLo)
	if p.Type.Type != decode.TypeNumericN || p.Type.Precision != 20 || p.Type.Scale != 0 {
		t.Errorf("numeric(20,0) bound parameter %+v", p)
	}
	if got := parts[1].String(); got != "[entry_no] >= 151" {
		t.Errorf("ledger halves at %s", got)
	}
}

func TestGroupQuantiles(t *testing.T) {
	for _, c := range []struct {
		counts []int64
		n      int
		want   []int
	}{
		{[]int64{1, 1, 1, 1, 1, 1, 1, 1}, 4, []int{2, 4, 6}},
		{[]int64{8}, 4, nil},                  // one value
		{[]int64{1, 6, 1}, 4, []int{1}},       // a heavy value holds every quantile
		{[]int64{1, 2, 1}, 4, []int{1, 2}},    // and here two of three
		{[]int64{1, 1}, 8, []int{1}},          // fewer values than parts
		{[]int64{4, 1}, 2, nil},               // the median is in the first group
		{[]int64{1, 1, 1}, 1, nil},            // one part
		{nil, 8, nil},                         // no rows
		{[]int64{2, 2, 2, 2}, 2, []int{2}},    // exactly between groups
		{[]int64{3, 1, 1, 3}, 4, []int{2, 3}}, // positions 2, 4, 6: groups 0, 2, 3
	} {
		if got := GroupQuantiles(c.counts, c.n); !slices.Equal(got, c.want) {
			t.Errorf("GroupQuantiles(%v, %d) = %v, want %v", c.counts, c.n, got, c.want)
		}
	}
}

// A character bound goes out in its column's type, length and collation
// (the default parameter collation when a stored plan has none), a
// decimal one in its column's precision and scale.
func TestOrderedBoundParams(t *testing.T) {
	s := "ab        "
	for _, c := range []struct {
		typ  string
		coll *decode.Collation
		wire byte
		size uint32
		want decode.Collation
	}{
		{"char(10)", &sampledb.CollLatin1CS, decode.TypeBigChar, 10, sampledb.CollLatin1CS},
		{"nchar(10)", &sampledb.CollLatin1, decode.TypeNChar, 20, sampledb.CollLatin1},
		{"varchar(24)", nil, decode.TypeBigVarChar, 24, decode.DefaultParamCollation},
	} {
		p := Bound{Type: c.typ, Text: &s, Collation: c.coll}.Param(ParamHi)
		if p.Type.Type != c.wire || p.Type.Size != c.size || p.Type.Collation != c.want || p.Value != s {
			t.Errorf("%s: %+v", c.typ, p)
		}
	}
	d := decode.Decimal{Lo: 12345, Scale: 10, Precision: 38}
	p := Bound{Type: "decimal(38,10)", Decimal: &d}.Param(ParamLo)
	if p.Type.Type != decode.TypeDecimalN || p.Type.Precision != 38 || p.Type.Scale != 10 || p.Value != d {
		t.Errorf("decimal(38,10): %+v", p)
	}
	if got := (Bound{Type: "decimal(38,10)", Decimal: &d}).String(); got != "0.0000012345" {
		t.Errorf("decimal bound text %s", got)
	}
}

// Collecting the grouped sample allocates nothing per row beyond its
// buffers' growth.
func TestOrderedSampleAllocs(t *testing.T) {
	o := &orderedSample{kind: decode.KindVarChar}
	if err := o.Columns([]decode.Column{{Type: decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 24, Collation: sampledb.CollSQLLatin1}}, {Type: decode.TypeInfo{Type: decode.TypeIntN, Size: 8}}}, nil); err != nil {
		t.Fatal(err)
	}
	o.text, o.ends, o.counts = make([]byte, 0, 1<<16), make([]int, 0, 1<<12), make([]int64, 0, 1<<12)
	v := []byte("kiwi-1234")
	allocs := testing.AllocsPerRun(1000, func() {
		o.BeginValue(0, int64(len(v)))
		o.Write(0, v)
		o.EndValue(0)
		o.Int(1, 3)
		if err := o.EndRow(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per row", allocs)
	}
	if len(o.counts) < 1000 || string(o.text[:len(v)]) != "kiwi-1234" || o.ends[0] != len(v) {
		t.Errorf("collected %d rows, %q", len(o.counts), o.text[:len(v)])
	}
}

// A varchar key in a code page other than the database's keeps only its
// ASCII bounds (SQL Server converts a varchar parameter to the database's
// code page, which may change other characters); in the same code page
// under another collation, every bound.
func TestPlanVarcharOtherCodePage(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 13, Rows: map[string]int64{"dbo.text_cp1251": 600, "dbo.text_cp1252": 600}})
	c := connectDB(t, db)
	// Cyrillic_General_CI_AS (1251) in a SQL_Latin1_General_CP1_CI_AS
	// (1252) database: every sample string holds Cyrillic or other
	// characters beyond ASCII, so no bound is left: one part, and NULLs.
	planCovers(t, c, "dbo.text_cp1251", Spec{Column: "v", Count: 4}, 2)
	// Latin1_General_CI_AS is 1252 too: the bounds stay, non-ASCII ones
	// included.
	planCovers(t, c, "dbo.text_cp1252", Spec{Column: "v", Count: 4}, 5)
	ctx, tmo := context.Background(), session.TimeoutOf(time.Minute)
	tbl, err := catalog.LoadTable(ctx, c, "dbo", "text_cp1252", tmo)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := Plan(ctx, c, tbl, Spec{Column: "v", Count: 4}, tmo)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, p := range parts {
		if p.Hi != nil {
			texts = append(texts, *p.Hi.Text)
		}
	}
	if isASCII(strings.Join(texts, "")) {
		t.Errorf("cp1252 bounds %q: all ASCII, the test shows nothing", texts)
	}
	// nvarchar needs no conversion.
	planCovers(t, c, "dbo.text_cp1251", Spec{Column: "n", Count: 4}, 5)
}

func TestExactBounds(t *testing.T) {
	text := func(s string) Bound { return Bound{Type: "nvarchar(10)", Text: &s} }
	d := decode.Decimal{Lo: 1, Precision: 20}
	got := exactBounds([]Bound{text("a"), text("b\uFFFDc"), {Type: "numeric(20,0)", Decimal: &d}, text("d")})
	if len(got) != 3 || *got[0].Text != "a" || got[1].Decimal == nil || *got[2].Text != "d" {
		t.Errorf("%v", got)
	}
}

// A view has no pages to sample: a string or decimal column of one is
// refused with a pointer to predicates, before any query.
func TestOrderedKeyOfView(t *testing.T) {
	v := &catalog.Table{Schema: "finance", Name: "v", View: true, RowCount: -1,
		Columns: []catalog.Column{{Name: "memo", BaseType: "varchar", MaxLength: 40}, {Name: "amount", BaseType: "decimal", Precision: 12, Scale: 2}}}
	for _, col := range []string{"memo", "amount"} {
		_, err := Plan(context.Background(), nil, v, Spec{Column: col, Count: 4}, session.TimeoutOf(time.Minute))
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "predicates") {
			t.Errorf("%s: %v", col, err)
		}
	}
}
