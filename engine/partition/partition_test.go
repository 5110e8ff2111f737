package partition

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

func TestCuts(t *testing.T) {
	for _, c := range []struct {
		lo, hi uint64
		n      int
		want   int
	}{
		{0, 100, 4, 3}, {0, 2, 8, 2}, {5, 5, 8, 0}, {0, math.MaxUint64, 8, 7}, {10, 11, 3, 1}, {0, 100, 1, 0},
	} {
		got := cuts(c.lo, c.hi, c.n)
		if len(got) != c.want {
			t.Errorf("cuts(%d, %d, %d) = %v, want %d cuts", c.lo, c.hi, c.n, got, c.want)
		}
		for i, v := range got {
			if v <= c.lo || v > c.hi || (i > 0 && v <= got[i-1]) {
				t.Errorf("cuts(%d, %d, %d) = %v: not strictly increasing inside (lo, hi]", c.lo, c.hi, c.n, got)
			}
		}
	}
	// Even spans: 0..100 in 4 is 25, 50, 75.
	if got := cuts(0, 100, 4); got[0] != 25 || got[1] != 50 || got[2] != 75 {
		t.Errorf("cuts(0, 100, 4) = %v", got)
	}
}

func TestSplitKinds(t *testing.T) {
	intCol := &catalog.Column{Name: "id", BaseType: "bigint"}
	b, err := Split(intCol, int64(math.MinInt64), int64(math.MaxInt64), 4)
	if err != nil || len(b) != 3 || b[1].Int != -1 && b[1].Int != 0 {
		t.Fatalf("bigint full range: %v %v", b, err)
	}
	dateCol := &catalog.Column{Name: "d", BaseType: "date"}
	b, err = Split(dateCol, decode.Date(730000), decode.Date(730100), 2)
	if err != nil || len(b) != 1 || b[0].Int != 730050 {
		t.Fatalf("date: %v %v", b, err)
	}
	if p := b[0].Param("@x"); p.Value != decode.Date(730050) || p.Type.Type != decode.TypeDateN {
		t.Fatalf("date param %#v", p)
	}
	dtCol := &catalog.Column{Name: "ts", BaseType: "datetime2", Scale: 7}
	b, err = Split(dtCol, decode.DateTime{Days: 1, Ticks: 0}, decode.DateTime{Days: 3, Ticks: 0}, 2)
	if err != nil || len(b) != 1 || dateTimeOf(b[0].Int) != (decode.DateTime{Days: 2}) {
		t.Fatalf("datetime2: %v %v", b, err)
	}
	g := &catalog.Column{Name: "u", BaseType: "uniqueidentifier"}
	lo, _ := decode.GUIDFromString("00000000-0000-0000-0000-000000000000")
	hi, _ := decode.GUIDFromString("ffffffff-ffff-ffff-ffff-ffffffffffff")
	b, err = Split(g, lo, hi, 4)
	if err != nil || len(b) != 3 {
		t.Fatalf("guid: %v %v", b, err)
	}
	// The cuts lie in the last group and the fourth, the most significant
	// 8 bytes in SQL Server's order: 25%, 50%, 75% of their span.
	for i, want := range []string{"00000000-0000-0000-ffff-3fffffffffff", "00000000-0000-0000-ffff-7fffffffffff", "00000000-0000-0000-ffff-bfffffffffff"} {
		if got := b[i].GUID.String(); got != want {
			t.Errorf("guid cut %d = %s, want about %s", i, got, want)
		}
		if i > 0 && decode.CompareGUID(*b[i-1].GUID, *b[i].GUID) >= 0 {
			t.Errorf("guid cuts not increasing in SQL Server's order: %s, %s", b[i-1].GUID, b[i].GUID)
		}
	}
	// decimal(p,0) up to 18 digits: cut on its integers, bounds as bigint;
	// a scale, or 19 digits and more, is cut at sampled values
	// (ordered.go), never between MIN and MAX.
	decCol := &catalog.Column{Name: "n", BaseType: "decimal", Precision: 12}
	b, err = Split(decCol, decode.Decimal{Lo: 100, Neg: true, Precision: 12}, decode.Decimal{Lo: 300, Precision: 12}, 4)
	if err != nil || len(b) != 3 || b[0].Int != 0 || b[1].Int != 100 || b[2].Int != 200 || b[0].Type != "bigint" {
		t.Fatalf("decimal(12,0): %v %v", b, err)
	}
	if p := b[1].Param("@x"); p.Value != int64(100) || p.Type.Type != decode.TypeIntN {
		t.Fatalf("decimal(12,0) param %#v", p)
	}
	for _, c := range []*catalog.Column{{Name: "n", BaseType: "decimal", Precision: 12, Scale: 2}, {Name: "n", BaseType: "numeric", Precision: 19},
		{Name: "n", BaseType: "varchar", MaxLength: 20}, {Name: "n", BaseType: "nchar", MaxLength: 20}} {
		if _, err := KeyColumn(&catalog.Table{Schema: "s", Name: "t", Columns: []catalog.Column{*c}}, Spec{Column: "n"}); err != nil {
			t.Errorf("%s key: %v", c.SQLType(), err)
		}
		if _, err := Split(c, "a", "z", 2); err == nil {
			t.Errorf("%s key cut between MIN and MAX", c.SQLType())
		}
	}
	for _, c := range []*catalog.Column{{Name: "n", BaseType: "varchar", MaxLength: -1}, {Name: "n", BaseType: "varbinary", MaxLength: 16}, {Name: "n", BaseType: "float"}} {
		if _, err := KeyColumn(&catalog.Table{Schema: "s", Name: "t", Columns: []catalog.Column{*c}}, Spec{Column: "n"}); err == nil {
			t.Errorf("%s key accepted", c.SQLType())
		}
	}
	if _, err := Split(&catalog.Column{Name: "f", BaseType: "float"}, 1.0, 2.0, 2); err == nil {
		t.Fatal("float key split")
	}
	if b, err := Split(intCol, nil, nil, 4); err != nil || b != nil {
		t.Fatalf("empty: %v %v", b, err)
	}
}

func TestRangesNullPartAndJSON(t *testing.T) {
	c := &catalog.Column{Name: "k", BaseType: "int", Nullable: true}
	parts := Ranges(c, []Bound{{Type: "int", Int: 10}, {Type: "int", Int: 20}})
	want := []string{"[k] < @tdsx_hi", "[k] >= @tdsx_lo AND [k] < @tdsx_hi", "[k] >= @tdsx_lo", "[k] IS NULL"}
	if len(parts) != len(want) {
		t.Fatalf("%d parts: %v", len(parts), parts)
	}
	for i, p := range parts {
		if p.Where != want[i] {
			t.Errorf("part %d: %q, want %q", i, p.Where, want[i])
		}
	}
	if s := parts[1].String(); s != "[k] >= 10 AND [k] < 20" {
		t.Errorf("String: %q", s)
	}
	js, _ := json.Marshal(parts)
	var back []Part
	if err := json.Unmarshal(js, &back); err != nil || len(back) != 4 || back[1].Lo.Int != 10 || back[1].Hi.Int != 20 {
		t.Fatalf("round trip %s: %v %v", js, back, err)
	}
}

var testDB = sampledb.New(sampledb.Config{Seed: 11, Rows: map[string]int64{"dbo.poc48": 5000, "dbo.temporal": 3000, "dbo.lineitem": 3000}})

func connect(t *testing.T) *session.Conn { return connectDB(t, testDB) }

func connectDB(t *testing.T, db *sampledb.DB) *session.Conn {
	t.Helper()
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := session.Connect(context.Background(), session.Config{Host: "127.0.0.1", Port: srv.Port(),
		User: tdsserver.DefaultUser, Password: tdsserver.DefaultPassword, Database: "sample",
		Encrypt: session.EncryptDisable, ConnectTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestPlanCoversEveryRowOnce plans integer, datetime2, date and
// uniqueidentifier keys against the sample server, between MIN and MAX and
// at sampled quantiles, and reads each part with its parameters: every row
// of the table is in exactly one part, NULL keys included.
func TestPlanCoversEveryRowOnce(t *testing.T) {
	c := connect(t)
	for _, tc := range []struct {
		table string
		spec  Spec
		parts int // expected number of parts
	}{
		{"dbo.poc48", Spec{Auto: true, Count: 4}, 4},
		{"dbo.temporal", Spec{Column: "ts", Count: 3}, 4},  // nullable: + IS NULL
		{"dbo.temporal", Spec{Column: "uid", Count: 5}, 6}, // nullable uniqueidentifier
		{"dbo.lineitem", Spec{Column: "l_shipdate", Count: 3}, 3},
		{"dbo.temporal", Spec{Predicates: []string{"id < 1000", "id >= 1000"}}, 2},
		// Sampled: every key read (the table is within the sample size)...
		{"dbo.poc48", Spec{Auto: true, Count: 4, Boundaries: BoundariesSample}, 4},
		{"dbo.temporal", Spec{Column: "ts", Count: 8, Boundaries: BoundariesSample}, 9},
		{"dbo.temporal", Spec{Column: "uid", Count: 5, Boundaries: BoundariesSample}, 6},
		{"dbo.lineitem", Spec{Column: "l_shipdate", Count: 3, Boundaries: BoundariesSample}, 3},
		// ...and through TABLESAMPLE.
		{"dbo.temporal", Spec{Column: "ts", Count: 8, Boundaries: BoundariesSample, SampleRows: 600}, 9},
		{"dbo.temporal", Spec{Column: "uid", Count: 4, Boundaries: BoundariesSample, SampleRows: 600}, 5},
		{"dbo.poc48", Spec{Auto: true, Count: 6, Boundaries: BoundariesSample, SampleRows: 1000}, 6},
		{"dbo.lineitem", Spec{Column: "l_shipdate", Count: 4, Boundaries: BoundariesSample, SampleRows: 500}, 4},
	} {
		planCovers(t, c, tc.table, tc.spec, tc.parts)
	}
}

// planCovers plans table by spec, checks it has want parts (-1: any), that
// no part but the last is empty and that every row is in exactly one
// part, and returns each part's row count.
func planCovers(t *testing.T, c *session.Conn, table string, spec Spec, want int) []int {
	t.Helper()
	ctx := context.Background()
	tmo := session.TimeoutOf(time.Minute)
	s, n, _ := catalog.SplitTableName(table)
	tbl, err := catalog.LoadTable(ctx, c, s, n, tmo)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := Plan(ctx, c, tbl, spec, tmo)
	if err != nil {
		t.Fatalf("%s %+v: %v", table, spec, err)
	}
	if want >= 0 && len(parts) != want {
		t.Fatalf("%s %+v: %d parts, want %d: %v", table, spec, len(parts), want, parts)
	}
	// A row is told apart by its primary key, or its clustered key.
	var keys []string
	if pk := tbl.PrimaryKey; pk != nil {
		for _, k := range pk.Columns {
			keys = append(keys, catalog.QuoteIdent(k))
		}
	} else {
		for _, k := range tbl.ClusteredKey() {
			keys = append(keys, catalog.QuoteIdent(k.Column))
		}
	}
	seen := map[string]int{}
	sizes := make([]int, len(parts))
	for i, p := range parts {
		var cap decode.Capture
		sql := "SELECT " + strings.Join(keys, ", ") + " FROM " + tbl.QuotedName()
		if p.Where != "" {
			sql += " WHERE " + p.Where
		}
		if _, err := c.Query(ctx, session.Query{SQL: sql, Params: p.Params(), Timeout: tmo}, &cap); err != nil {
			t.Fatalf("%s part %d (%s): %v", table, i, p, err)
		}
		if len(cap.Rows) == 0 && spec.Predicates == nil && p.Where != "" && i < len(parts)-1 {
			t.Errorf("%s %+v: part %d (%s) is empty", table, spec, i, p)
		}
		sizes[i] = len(cap.Rows)
		for _, r := range cap.Rows {
			seen[fmt.Sprint(r...)]++
		}
	}
	total, err := catalog.Count(ctx, c, s, n, "", tmo)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(seen)) != total {
		t.Errorf("%s %+v: parts hold %d distinct rows, the table %d", table, spec, len(seen), total)
	}
	for k, v := range seen {
		if v != 1 {
			t.Fatalf("%s %+v: row %s is in %d parts", table, spec, k, v)
		}
	}
	return sizes
}
