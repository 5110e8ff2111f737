package sqlexec

import (
	"reflect"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// TestExpressions evaluates scalar expressions as SQL Server does,
// including three-valued logic and conversions.
func TestExpressions(t *testing.T) {
	s := NewSession(sampleDB())
	dec := func(text string) decode.Decimal {
		d, err := parseDecimalLiteral(text)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cases := []struct {
		expr string
		want any
	}{
		{"-(3)", int64(-3)},
		{"-(1.5)", dec("-1.5")},
		{"-(2e0)", float64(-2)},
		{"~5", int64(-6)},
		{"2 + 3 * 4 - 10 / 3", int64(11)},
		{"(2 + 3) * 4", int64(20)},
		{"7 & 3 | 8 ^ 1", int64(10)},
		{"1.5 + 2", dec("3.5")},
		{"1.25 * 2", dec("2.50")},
		{"1 + 2e0", float64(3)},
		{"'5' + 1", int64(6)},
		{"CASE WHEN NULL = NULL THEN 1 ELSE 0 END", int64(0)},
		{"CASE WHEN NULL IS NULL THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 1 IN (2, NULL) THEN 1 WHEN 1 NOT IN (2, NULL) THEN 2 ELSE 3 END", int64(3)},
		{"CASE WHEN NOT (NULL = 1) THEN 1 ELSE 0 END", int64(0)},
		{"CASE WHEN 1 = 1 OR NULL = 1 THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 1 = 2 AND NULL = 1 THEN 1 ELSE 0 END", int64(0)},
		{"CASE WHEN 5 BETWEEN 1 AND 10 AND 5 NOT BETWEEN 6 AND 7 THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 'abc' = 'ABC  ' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 'b' > 'A' THEN 1 ELSE 0 END", int64(1)},
		{"CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END", "two"},
		{"CASE WHEN 'abcdef' LIKE 'a%d_f' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 'abc' LIKE '[a-c]b[^x]' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN '10%' LIKE '10!%' ESCAPE '!' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 'abc ' LIKE 'abc' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN 'x' NOT LIKE '%y%' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN CAST('2024-01-02' AS date) < '2024-01-03' THEN 1 ELSE 0 END", int64(1)},
		{"CASE WHEN CAST(1 AS money) = 1.0 THEN 1 ELSE 0 END", int64(1)},
		{"CAST(1.5 AS double precision)", float64(1.5)},
		{"CAST(1.5 AS float(10))", float32(1.5)},
		{"CAST('abc' AS national character varying(2))", "ab"},
		{"CAST('abc' AS char varying)", "abc"},
		{"CAST(12.345 AS dec(4,1))", dec("12.3")},
		{"NULLIF(1, 1)", nil},
		{"NULLIF(1, 2)", int64(1)},
		{"ABS(-4)", int64(4)},
		{"LEFT('abcdef', 2) + RIGHT('abcdef', 2)", "abef"},
		{"LTRIM('  a ') + '|' + RTRIM(' b  ') + '|'", "a | b|"},
		{"CHARINDEX('c', 'abcabc', 4)", int64(6)},
		{"CONCAT('a', NULL, 1)", "a1"},
		{"QUOTENAME('a]b')", "[a]]b]"},
		{"ISNUMERIC('12.5')", int64(1)},
		{"DATALENGTH(N'ab')", int64(4)},
		{"IIF(1 > 2, 'y', 'n')", "n"},
		{"CONVERT(varchar(30), CAST('2024-02-29 13:14:00' AS datetime))", "Feb 29 2024  1:14PM"},
		{"CONVERT(varchar(30), CAST('2024-02-29 13:14:15.123' AS datetime2(3)), 121)", "2024-02-29 13:14:15.123"},
		{"CONVERT(varchar(30), CAST('2024-02-29 13:14:15' AS datetime2(0)), 120)", "2024-02-29 13:14:15"},
		{"CONVERT(varchar(10), CAST('2024-02-29' AS date), 112)", "20240229"},
		{"CONVERT(varchar(20), 0x0aff, 1)", "0x0AFF"},
		{"CONVERT(varchar(20), CAST(12.345 AS money))", "12.35"},
		{"CAST(CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier) AS varchar(36))", "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
		{"CAST(2.5 AS int)", int64(2)},
		{"CAST('1' AS bit)", true},
		{"CAST(1.239 AS decimal(5,2))", dec("1.24")},
		{"CAST(3 AS float)", float64(3)},
		{"CAST(3 AS real)", float32(3)},
		{"CAST('12:30' AS time(0))", decode.Time(45000 * 10_000_000)},
		{"CAST('abc' AS char(5))", "abc  "},
		{"CAST('abcdef' AS varchar(3))", "abc"},
		{"CAST(258 AS varbinary(4))", []byte{0, 0, 1, 2}},
		{"SUBSTRING(0x010203, 2, 5)", []byte{2, 3}},
	}
	for _, c := range cases {
		d := query(t, s, "SELECT "+c.expr)
		got := d.rows[0][0]
		if !reflect.DeepEqual(got, c.want) {
			if wd, ok := c.want.(decode.Decimal); ok {
				if gd, ok := got.(decode.Decimal); ok && decToRat(wd).Cmp(decToRat(gd)) == 0 {
					continue
				}
			}
			t.Errorf("%s = %#v, want %#v", c.expr, got, c.want)
		}
	}
	// Runtime errors with their numbers.
	for expr, num := range map[string]int32{
		"9223372036854775807 + 1": 8115, "1 % 0": 8134, "1.0 / 0": 8134, "'a' - 1": 245, "-CAST('x' AS int)": 245,
		"CAST(99999 AS smallint)": 8115, "CAST(1e300 AS decimal(5,0))": 8115, "CAST('zz' AS uniqueidentifier)": 8169,
		"CAST('1.2.3' AS decimal(5,1))": 8114, "SUBSTRING('a', 1, -1)": 537, "LEFT('a', -1)": 536, "0x01 + 1": 402,
	} {
		_, err := s.Exec("SELECT "+expr, nil)
		if err == nil {
			rs := mustExec(t, s, "SELECT "+expr)
			_, _, _ = rs[0].Rows.AppendRows(nil, 1, false)
			if es, ok := rs[0].Rows.(ErrSource); ok {
				err = es.Err()
			}
		}
		if errNumber(err) != num {
			t.Errorf("%s: %v, want error %d", expr, err, num)
		}
	}
}

func TestLikeIsLinear(t *testing.T) {
	// A pattern made to backtrack exponentially in a naive matcher.
	s := make([]byte, 3000)
	for i := range s {
		s[i] = 'a'
	}
	p := "%a%a%a%a%a%a%a%a%a%a%a%a%a%a%b"
	if likeMatch(string(s), p, -1) {
		t.Fatal("matched")
	}
}
