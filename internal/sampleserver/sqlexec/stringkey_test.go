package sqlexec

import (
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// TestStringKeyCollation runs the statements that split dbo.codes on its
// varchar key against the comparison rules of its collation
// (SQL_Latin1_General_CP1_CI_AS): the grouped, ordered sample has one row
// per value equal under the collation, in the collation's order, and a
// range bound written in any of a value's spellings selects the same rows.
func TestStringKeyCollation(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 4, Rows: map[string]int64{"dbo.codes": 2000}})
	s := NewSession(db)
	groups := query(t, s, "SELECT [code], COUNT_BIG(*) FROM [dbo].[codes] TABLESAMPLE (400 ROWS) REPEATABLE (20240) WHERE [code] IS NOT NULL GROUP BY [code] ORDER BY [code]")
	if len(groups.rows) < 20 {
		t.Fatalf("%d groups", len(groups.rows))
	}
	var total int64
	for i, r := range groups.rows {
		total += r[1].(int64)
		if i == 0 {
			continue
		}
		prev, cur := strings.ToLower(strings.TrimRight(groups.rows[i-1][0].(string), " ")), strings.ToLower(strings.TrimRight(r[0].(string), " "))
		if prev >= cur {
			t.Fatalf("groups %q, %q: not strictly increasing under the collation", groups.rows[i-1][0], r[0])
		}
	}
	if total%64 != 0 {
		t.Errorf("a sample of %d rows: not whole runs", total)
	}
	count := func(sql string, params ...Param) int64 {
		t.Helper()
		return query(t, s, sql, params...).rows[0][0].(int64)
	}
	all := count("SELECT COUNT_BIG(*) FROM dbo.codes")
	for _, stem := range []string{"grape-120", "none", "kiwi-7"} {
		var got []int64
		for v := range sampledb.CodeVariants {
			b := sampledb.CodeVariant(stem, v)
			lo := count("SELECT COUNT_BIG(*) FROM dbo.codes WHERE code < @hi", Param{Name: "@hi", Value: b, Type: varcharType(24)})
			hi := count("SELECT COUNT_BIG(*) FROM dbo.codes WHERE code >= @lo", Param{Name: "@lo", Value: b, Type: varcharType(24)})
			if lo+hi != all {
				t.Errorf("bound %q: %d below and %d from it, of %d", b, lo, hi, all)
			}
			got = append(got, lo)
		}
		for _, n := range got {
			if n != got[0] {
				t.Errorf("%s: the spellings of one value cut at %v rows", stem, got)
			}
		}
	}
	none := count("SELECT COUNT_BIG(*) FROM dbo.codes WHERE code = 'NONE'")
	if none < 50 || none%sampledb.CodeVariants != 0 {
		t.Errorf("%d rows equal to 'NONE'", none)
	}
	// Under Latin1_General_CS_AS and Latin1_General_BIN2 the spellings
	// are four values, trailing blanks still ignored ('none  ' = 'none').
	for _, c := range []struct {
		col  string
		rule textRule
	}{{"cscode", ruleCase}, {"bcode", ruleBinary}} {
		if n := count("SELECT COUNT_BIG(*) FROM dbo.codes WHERE " + c.col + " = 'NONE'"); n != none/4 {
			t.Errorf("%s: %d rows equal to 'NONE', want %d", c.col, n, none/4)
		}
		if n := count("SELECT COUNT_BIG(*) FROM dbo.codes WHERE " + c.col + " = 'none'"); n != none/2 {
			t.Errorf("%s: %d rows equal to 'none', want %d", c.col, n, none/2)
		}
		rows := query(t, s, "SELECT "+c.col+", COUNT_BIG(*) FROM dbo.codes GROUP BY "+c.col+" ORDER BY "+c.col).rows
		var n int64
		for i, r := range rows {
			n += r[1].(int64)
			if i > 0 && compareTextRule(rows[i-1][0].(string), r[0].(string), c.rule) >= 0 {
				t.Fatalf("%s: groups %q, %q out of order", c.col, rows[i-1][0], r[0])
			}
		}
		if n != all || int64(len(rows)) <= int64(len(groups.rows)) {
			t.Errorf("%s: %d groups of %d rows", c.col, len(rows), n)
		}
	}
	// The case-sensitive order puts lower case first; the binary one
	// upper case; neither is the other's.
	for _, c := range []struct{ a, b string }{{"apple", "APPLE"}, {"apple", "Banana"}, {"APPLE", "applf"}} {
		if compareTextRule(c.a, c.b, ruleCase) >= 0 {
			t.Errorf("CS: %q >= %q", c.a, c.b)
		}
	}
	if compareTextRule("APPLE", "apple", ruleBinary) >= 0 || compareTextRule("Banana", "apple", ruleBinary) >= 0 || compareTextRule("a  ", "a", ruleBinary) != 0 {
		t.Error("BIN2 order")
	}
}

func varcharType(n uint32) decode.TypeInfo {
	return decode.TypeInfo{Type: decode.TypeBigVarChar, Size: n, Collation: sampledb.CollSQLLatin1}
}
