package sqlexec

import (
	"fmt"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// TestTableSample checks TABLESAMPLE's grammar and its sample: about the
// fraction asked for, in whole runs of rows, the same rows for the same
// REPEATABLE seed and other rows for another seed, before WHERE, and the
// errors SQL Server gives for sizes and seeds out of range.
func TestTableSample(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"dbo.temporal": 64000}})
	s := NewSession(db)
	ids := func(sql string, params ...Param) []int64 {
		t.Helper()
		var out []int64
		for _, r := range query(t, s, sql, params...).rows {
			out = append(out, r[0].(int64))
		}
		return out
	}
	count := func(sql string) int64 {
		t.Helper()
		return query(t, s, sql).rows[0][0].(int64)
	}
	a := ids("SELECT id FROM dbo.temporal TABLESAMPLE (10 PERCENT) REPEATABLE (7)")
	if n := len(a); n < 4000 || n > 9000 {
		t.Errorf("10 PERCENT of 64000 rows gave %d", n)
	}
	if len(a)%samplePageRows != 0 {
		t.Errorf("%d rows: not whole runs of %d", len(a), samplePageRows)
	}
	for i := 1; i < len(a); i++ {
		if a[i] <= a[i-1] {
			t.Fatalf("sample not in key order at %d", i)
		}
	}
	b := ids("select id from temporal as t tablesample system (10 percent) repeatable (7) with (nolock)")
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("the same seed gave other rows")
	}
	c := ids("SELECT id FROM dbo.temporal TABLESAMPLE (10 PERCENT) REPEATABLE (8)")
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("another seed gave the same rows")
	}
	p := ids("SELECT id FROM dbo.temporal TABLESAMPLE (@n ROWS) REPEATABLE (@s)", Param{Name: "n", Value: int64(6400)}, Param{Name: "s", Value: int64(7)})
	if fmt.Sprint(a) != fmt.Sprint(p) {
		t.Error("6400 ROWS of 64000 is not 10 PERCENT with the same seed")
	}
	// WHERE filters the sample; aggregates count it.
	w := ids("SELECT id FROM dbo.temporal TABLESAMPLE (10 PERCENT) REPEATABLE (7) WHERE id > 32000")
	want := 0
	for _, id := range a {
		if id > 32000 {
			want++
		}
	}
	if len(w) != want {
		t.Errorf("WHERE over the sample: %d rows, want %d", len(w), want)
	}
	if n := count("SELECT COUNT_BIG(*) FROM dbo.temporal TABLESAMPLE (10 PERCENT) REPEATABLE (7)"); n != int64(len(a)) {
		t.Errorf("COUNT_BIG over the sample %d, want %d", n, len(a))
	}
	if n := count("SELECT COUNT_BIG(ts) FROM dbo.temporal TABLESAMPLE (10 PERCENT) REPEATABLE (7) WHERE ts IS NOT NULL"); n <= 0 || n >= int64(len(a)) {
		t.Errorf("COUNT_BIG(ts) over the sample %d of %d", n, len(a))
	}
	if n := len(ids("SELECT id FROM dbo.temporal TABLESAMPLE (0 PERCENT)")); n != 0 {
		t.Errorf("0 PERCENT gave %d rows", n)
	}
	if n := len(ids("SELECT id FROM dbo.temporal TABLESAMPLE (100 PERCENT)")); n != 64000 {
		t.Errorf("100 PERCENT gave %d rows", n)
	}
	if n := len(ids("SELECT id FROM dbo.temporal TABLESAMPLE (1000000 ROWS)")); n != 64000 {
		t.Errorf("more ROWS than the table gave %d rows", n)
	}
	for _, e := range []struct {
		sql string
		num int32
	}{
		{"SELECT id FROM dbo.temporal TABLESAMPLE (101 PERCENT)", 476},
		{"SELECT id FROM dbo.temporal TABLESAMPLE (-1 PERCENT)", 476},
		{"SELECT id FROM dbo.temporal TABLESAMPLE (0 ROWS)", 477},
		{"SELECT id FROM dbo.temporal TABLESAMPLE (10 ROWS) REPEATABLE (0)", 477},
		{"SELECT id FROM dbo.temporal TABLESAMPLE (10 PERCENT", 102},
		{"SELECT id FROM dbo.temporal TABLESAMPLE 10 PERCENT", 102},
		{"SELECT id FROM dbo.temporal TABLESAMPLE (id PERCENT)", 102},
		{"SELECT name FROM sys.tables TABLESAMPLE (10 PERCENT)", 494},
		{"SELECT a.id FROM dbo.temporal a JOIN dbo.temporal b TABLESAMPLE (5 PERCENT) ON a.id = b.id", 50000},
	} {
		if _, err := s.Exec(e.sql, nil); errNumber(err) != e.num {
			t.Errorf("%s: %v, want error %d", e.sql, err, e.num)
		}
	}
}
