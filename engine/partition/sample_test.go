package partition

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// spread is the largest part's row count over the smallest's, of the
// parts that are not the NULL part (the last, for a nullable key).
func spread(sizes []int, nullable bool) float64 {
	if nullable {
		sizes = sizes[:len(sizes)-1]
	}
	return float64(slices.Max(sizes)) / float64(max(1, slices.Min(sizes)))
}

// TestSampledPartsBalanced plans dbo.temporal's ts, whose values are one
// sixteenth spread over ten thousand years and the rest inside thirty:
// MIN/MAX cuts put nearly every row into one part, sampled quantiles give
// parts within a factor of 1.5 of each other through TABLESAMPLE (a
// sample of about a tenth), and within 1.05 when every key is read.
func TestSampledPartsBalanced(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 5, Rows: map[string]int64{"dbo.temporal": 200_000}})
	c := connectDB(t, db)
	ctx := context.Background()
	tmo := session.TimeoutOf(time.Minute)
	tbl, err := catalog.LoadTable(ctx, c, "dbo", "temporal", tmo)
	if err != nil {
		t.Fatal(err)
	}
	if sql := SampleSQL(tbl, tbl.Column("ts"), DefaultSampleRows(8)); !strings.Contains(sql, "TABLESAMPLE (20000 ROWS) REPEATABLE (") {
		t.Fatalf("a 200,000-row table is not sampled: %s", sql)
	}
	minmax := planCovers(t, c, "dbo.temporal", Spec{Column: "ts", Count: 8}, 9)
	if f := spread(minmax, true); f < 20 {
		t.Errorf("MIN/MAX parts %v within a factor of %.1f: the key is not skewed, the test shows nothing", minmax, f)
	}
	sampled := planCovers(t, c, "dbo.temporal", Spec{Column: "ts", Count: 8, Boundaries: BoundariesSample}, 9)
	if f := spread(sampled, true); f > 1.5 {
		t.Errorf("sampled parts %v: largest %.2f times the smallest, want at most 1.5", sampled, f)
	}
	exact := planCovers(t, c, "dbo.temporal", Spec{Column: "ts", Count: 8, Boundaries: BoundariesSample, SampleRows: MaxSampleRows}, 9)
	if f := spread(exact, true); f > 1.05 {
		t.Errorf("parts from every key %v: largest %.2f times the smallest, want at most 1.05", exact, f)
	}
	t.Logf("rows per part: minmax %v, sampled %v, every key %v", minmax, sampled, exact)
}

// TestSampledSmallAndConstantKeys plans a table of three rows into eight
// sampled parts (one per distinct key, plus NULL) and a key with a single
// value over five hundred rows (one part: every quantile collapses), an
// empty table and a key of only NULLs.
func TestSampledSmallAndConstantKeys(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 9, Rows: map[string]int64{
		"dbo.temporal": 3, "sales.customers": 1, "sales.orders": 500, "dbo.poc48": 0, "dbo.lob_nvarchar": 40}})
	c := connectDB(t, db)
	for _, s := range []Spec{{Column: "id", Count: 8, Boundaries: BoundariesSample}, {Auto: true, Count: 8, Boundaries: BoundariesSample, SampleRows: 2}} {
		if sizes := planCovers(t, c, "dbo.temporal", s, 3); sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 1 {
			t.Errorf("three rows %+v: parts %v", s, sizes)
		}
	}
	for _, s := range []Spec{{Column: "customer_id", Count: 8, Boundaries: BoundariesSample}, {Column: "customer_id", Count: 8, Boundaries: BoundariesSample, SampleRows: 100}} {
		if sizes := planCovers(t, c, "sales.orders", s, 1); sizes[0] != 500 {
			t.Errorf("one distinct value %+v: parts %v", s, sizes)
		}
	}
	planCovers(t, c, "dbo.poc48", Spec{Auto: true, Count: 8, Boundaries: BoundariesSample}, 1)
	// order_date is datetime, increasing with the order id.
	if sizes := planCovers(t, c, "sales.orders", Spec{Column: "order_date", Count: 4, Boundaries: BoundariesSample}, 4); spread(sizes, false) > 1.05 {
		t.Errorf("datetime key: parts %v", sizes)
	}
}

func TestQuantiles(t *testing.T) {
	col := &catalog.Column{Name: "k", BaseType: "int"}
	keys := func(vs ...int64) []SampleKey {
		var out []SampleKey
		for _, v := range vs {
			out = append(out, SampleKey{Hi: uint64(v) ^ signBit})
		}
		return out
	}
	ints := func(bs []Bound) []int64 {
		var out []int64
		for _, b := range bs {
			out = append(out, b.Int)
		}
		return out
	}
	for _, c := range []struct {
		keys []SampleKey
		n    int
		want []int64
	}{
		{keys(8, 1, 2, 3, 4, 5, 6, 7), 4, []int64{3, 5, 7}},
		{keys(5, 5, 5, 5, 5, 5), 4, nil},              // one value: no cut
		{keys(1, 5, 5, 5, 5, 5, 5, 9), 4, []int64{5}}, // duplicates collapse
		{keys(-3, 7), 8, []int64{7}},                  // fewer keys than parts
		{keys(-9, -9, -9, -9, 4), 2, nil},             // the median is the minimum
		{keys(1, 2, 3), 1, nil},                       // one part
		{nil, 8, nil},                                 // no keys
		{keys(-1<<63, 1<<63-1, 0, 0), 2, []int64{0}},  // the whole int64 range
	} {
		b, err := Quantiles(col, c.keys, c.n)
		if err != nil || !slices.Equal(ints(b), c.want) {
			t.Errorf("Quantiles(%d parts) = %v %v, want %v", c.n, ints(b), err, c.want)
		}
	}
	// uniqueidentifier bounds are the sampled values, all 16 bytes of them.
	g := &catalog.Column{Name: "u", BaseType: "uniqueidentifier"}
	var gk []SampleKey
	var want []decode.GUID
	for _, s := range []string{"6f9619ff-8b86-d011-b42d-00c04fc964ff", "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0001-000000000000", "ffffffff-0000-0000-0000-000000000000"} {
		v, _ := decode.GUIDFromString(s)
		ks := &keySample{kind: decode.KindUniqueIdentifier}
		ks.GUID(0, v)
		gk = append(gk, ks.cur)
		want = append(want, v)
	}
	slices.SortFunc(want, decode.CompareGUID)
	b, err := Quantiles(g, gk, 4)
	if err != nil || len(b) != 3 {
		t.Fatalf("guid quantiles %v %v", b, err)
	}
	for i := range b {
		if *b[i].GUID != want[i+1] {
			t.Errorf("guid bound %d = %s, want %s", i, b[i].GUID, want[i+1])
		}
	}
	if _, err := Quantiles(&catalog.Column{Name: "f", BaseType: "float"}, keys(1), 2); err == nil {
		t.Error("float key")
	}
}

func TestSamplingChoice(t *testing.T) {
	small := &catalog.Table{Name: "t", RowCount: AutoSampleMinRows - 1}
	large := &catalog.Table{Name: "t", RowCount: AutoSampleMinRows}
	for _, c := range []struct {
		t    *catalog.Table
		b    Boundaries
		want bool
	}{
		{small, "", false}, {large, "", false}, {large, BoundariesMinMax, false},
		{small, BoundariesSample, true}, {small, BoundariesAuto, false}, {large, BoundariesAuto, true},
	} {
		if got := sampling(c.t, Spec{Boundaries: c.b}); got != c.want {
			t.Errorf("%d rows, boundaries %q: sampling %v", c.t.RowCount, c.b, got)
		}
	}
	if DefaultSampleRows(8) != 20_000 || DefaultSampleRows(1000) != 200_000 || DefaultSampleRows(MaxCount) != MaxSampleRows {
		t.Error("DefaultSampleRows")
	}
}
