// Package pgcheck reads a table back from PostgreSQL with pgx (its own
// binary decoders: an independent reader of what a sink wrote) and compares
// it value by value with the generic values of the source rows, as
// decode's generic value path and the sample database give them. It is a
// test helper shared by the postgres sink's tests and the end-to-end tests.
package pgcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// Column is one column of the table read back: which source column it
// holds and whether it is a companion ("offset": a datetimeoffset's offset
// in minutes, "type": a sql_variant's base type).
type Column struct {
	Name      string
	Source    int
	Companion string
}

// Compare reads every row of table (ORDER BY order, or physical order when
// empty: a table freshly filled by one COPY comes back in COPY order) and
// compares each value with want(i), the generic source values of row i of
// cols. It reports at most 20 differences and returns the rows read.
func Compare(t testing.TB, ctx context.Context, conn *pgx.Conn, table, order string, tcols []Column, cols []decode.Column, rows int64, want func(i int64, dst []any) []any) int64 {
	t.Helper()
	names := make([]string, len(tcols))
	for i, c := range tcols {
		names[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	q := "SELECT " + strings.Join(names, ", ") + " FROM " + table
	if order != "" {
		q += " ORDER BY " + order
	}
	rs, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("pgcheck: %s: %v", q, err)
	}
	defer rs.Close()
	var i int64
	bad := 0
	var src []any
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatalf("pgcheck: row %d: %v", i+1, err)
		}
		if i < rows {
			src = want(i, src[:0])
			for k, c := range tcols {
				ci := &cols[c.Source]
				if msg := check(ci, c.Companion, src[c.Source], vals[k]); msg != "" {
					t.Errorf("%s row %d column %s (%s): %s", table, i+1, c.Name, decode.SQLTypeName(ci), msg)
					if bad++; bad >= 20 {
						t.FailNow()
					}
				}
			}
		}
		i++
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("pgcheck: %s: %v", table, err)
	}
	if i != rows {
		t.Errorf("%s: read back %d rows, want %d", table, i, rows)
	}
	return i
}

func show(v any) string {
	s := fmt.Sprintf("%T %v", v, v)
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// check compares one PostgreSQL value (as pgx decodes it) with the source
// value; "" when equal.
func check(c *decode.Column, companion string, want, got any) string {
	diff := func() string { return "got " + show(got) + ", want " + show(want) }
	if want == nil {
		if got != nil {
			return diff()
		}
		return ""
	}
	if got == nil {
		return "got NULL, want " + show(want)
	}
	switch companion {
	case "offset":
		o, ok := want.(decode.DateTimeOffset)
		if g, ok2 := asInt(got); !ok || !ok2 || g != int64(o.OffsetMin) {
			return diff()
		}
		return ""
	case "type":
		v, ok := want.(decode.Variant)
		if !ok || got != decode.TypeDecl(&v.Type, 0) {
			return diff()
		}
		return ""
	}
	switch w := want.(type) {
	case bool:
		if g, ok := got.(bool); !ok || g != w {
			return diff()
		}
	case int64:
		if g, ok := asInt(got); !ok || g != w {
			return diff()
		}
	case float32:
		if g, ok := got.(float32); !ok || math.Float32bits(g) != math.Float32bits(w) {
			return diff()
		}
	case float64:
		if g, ok := got.(float64); !ok || math.Float64bits(g) != math.Float64bits(w) {
			return diff()
		}
	case decode.Decimal:
		if !numericEquals(got, w) {
			return diff()
		}
	case decode.Money:
		if !numericEquals(got, decode.Decimal{Lo: absU(int64(w)), Neg: w < 0, Scale: 4}) {
			return diff()
		}
	case decode.Date:
		y, m, d := decode.CivilFromDate(int32(w))
		g, ok := got.(time.Time)
		if !ok || g.Year() != y || int(g.Month()) != m || g.Day() != d {
			return diff()
		}
	case decode.Time:
		g, ok := got.(pgtype.Time)
		if !ok || g.Microseconds != int64(w)/10 {
			return diff()
		}
	case decode.DateTime:
		ticks := w.Ticks / 10 * 10 // PostgreSQL keeps microseconds: truncated
		if c.Kind() == decode.KindDateTime {
			ticks = (w.Ticks + 5000) / 10000 * 10000 // datetime as SQL Server shows it
		}
		g, ok := got.(time.Time)
		wt := decode.DateTime{Days: w.Days, Ticks: ticks}.Time()
		if !ok || !g.Equal(wt) {
			return diff() + fmt.Sprintf(" (expected %s)", wt.Format(time.RFC3339Nano))
		}
	case decode.DateTimeOffset:
		g, ok := got.(time.Time)
		wt := decode.DateTime{Days: w.UTC.Days, Ticks: w.UTC.Ticks / 10 * 10}.Time()
		if !ok || !g.Equal(wt) {
			return diff()
		}
	case decode.GUID:
		if g, ok := got.([16]byte); !ok || g != w {
			return diff()
		}
	case string:
		if c.Kind() == decode.KindJSON {
			var a, b any
			gs, err := json.Marshal(got)
			if err != nil || json.Unmarshal(gs, &a) != nil || json.Unmarshal([]byte(w), &b) != nil || !reflect.DeepEqual(a, b) {
				return diff()
			}
			return ""
		}
		if b, ok := got.([]byte); ok { // pgx reads xml as bytes
			got = string(b)
		}
		if g, ok := got.(string); !ok || g != w {
			return diff()
		}
	case []byte:
		if g, ok := got.([]byte); !ok || string(g) != string(w) {
			return diff()
		}
	case []float32:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return diff()
		}
		for k := range w {
			if f, ok := g[k].(float32); !ok || math.Float32bits(f) != math.Float32bits(w[k]) {
				return diff()
			}
		}
	case decode.Variant:
		txt, ok := sinktest.ScalarText(&w.Type, w.Value)
		if !ok {
			switch x := w.Value.(type) {
			case string:
				txt = x
			case []byte:
				txt = fmt.Sprintf("%x", x)
			default:
				return "unexpected variant value " + show(w.Value)
			}
		}
		if got != txt {
			return diff() + " (as text " + txt + ")"
		}
	default:
		return "no comparison for " + show(want)
	}
	return ""
}

func absU(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// numericEquals compares pgx's numeric (Int × 10^Exp) with an exact decimal.
func numericEquals(got any, w decode.Decimal) bool {
	n, ok := got.(pgtype.Numeric)
	if !ok || !n.Valid || n.NaN || n.InfinityModifier != 0 {
		return false
	}
	mag := new(big.Int).Lsh(new(big.Int).SetUint64(w.Hi), 64)
	mag.Or(mag, new(big.Int).SetUint64(w.Lo))
	if w.Neg {
		mag.Neg(mag)
	}
	// got = Int × 10^Exp, want = mag × 10^-Scale: compare Int × 10^(Exp+Scale) with mag.
	a := new(big.Int).Set(n.Int)
	b := mag
	e := int64(n.Exp) + int64(w.Scale)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(absI(e)), nil)
	if e >= 0 {
		a.Mul(a, p)
	} else {
		b = new(big.Int).Mul(b, p)
	}
	return a.Cmp(b) == 0
}

func absI(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Connect opens a connection to url for the test, closed when it ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// Counts checks that each table of want holds its number of rows.
func Counts(t testing.TB, conn *pgx.Conn, want map[string]int64) {
	t.Helper()
	for table, rows := range want {
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != rows {
			t.Errorf("%s: %d rows, %v (want %d)", table, n, err, rows)
		}
	}
}
