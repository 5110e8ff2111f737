package e2e

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// pgType is the PostgreSQL type a column maps to by default. Types with
// 7 fraction digits go to the 6-digit types (PostgreSQL rounds the 7th
// digit on input: the aggregates below reproduce that rounding).
func pgType(ti *decode.TypeInfo) string {
	k, scale := kindOf(ti)
	switch k {
	case kBool:
		return "boolean"
	case kInt:
		switch ti.Kind() {
		case decode.KindTinyInt, decode.KindSmallInt:
			return "smallint"
		case decode.KindInt:
			return "integer"
		}
		return "bigint"
	case kReal:
		return "real"
	case kFloat:
		return "double precision"
	case kDecimal:
		return fmt.Sprintf("numeric(%d,%d)", ti.Precision, ti.Scale)
	case kMoney:
		if ti.Kind() == decode.KindSmallMoney {
			return "numeric(10,4)"
		}
		return "numeric(19,4)"
	case kDate:
		return "date"
	case kTime:
		return fmt.Sprintf("time(%d)", min(scale, 6))
	case kDateTime:
		return fmt.Sprintf("timestamp(%d)", min(scale, 6))
	case kDTO:
		return fmt.Sprintf("timestamptz(%d)", min(scale, 6))
	case kGUID:
		return "uuid"
	case kBinary:
		return "bytea"
	case kVector:
		return "real[]"
	case kJSON:
		return "jsonb"
	case kXML:
		return "xml"
	case kVariant:
		return "text"
	}
	// bytes, or UTF-16 units, are at least as many as characters
	if d := decode.DeclOf(ti, 0); d.Kind.HasLength() && !d.Max {
		return fmt.Sprintf("varchar(%d)", max(d.Length, 1))
	}
	return "text"
}

func pgIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// aggregate is one aggregate of one column: the SQL expression, the value
// computed in Go (nil: NULL) and how to compare (nil: as text).
type aggregate struct {
	col, name string
	expr      string
	want      *string
	equal     func(got, want string) bool
	// For md5 aggregates: the per-row expression and values, to name the
	// first differing row when the digests differ.
	rowExpr string
	rowWant []*string
}

func strp(s string) *string { return &s }

// aggregatesFor builds the aggregates of column c from the expected
// (postgres-dialect) texts of its cells.
func aggregatesFor(ti *decode.TypeInfo, name string, cells []csvCell) ([]aggregate, error) {
	q := pgIdent(name)
	var vals []string
	for _, cl := range cells {
		if !cl.isNull {
			vals = append(vals, cl.text)
		}
	}
	aggs := []aggregate{{col: name, name: "count", expr: "count(" + q + ")::text", want: strp(strconv.Itoa(len(vals)))}}
	add := func(n, expr string, want *string, eq func(g, w string) bool) {
		aggs = append(aggs, aggregate{col: name, name: n, expr: expr, want: want, equal: eq})
	}
	// sumMinMax adds sum/min/max of exact numbers given as scaled integers.
	sumMinMax := func(expr string, nums []*big.Int, scale int) {
		var sum, lo, hi *big.Int
		for _, n := range nums {
			if sum == nil {
				sum, lo, hi = new(big.Int), n, n
			}
			sum.Add(sum, n)
			if n.Cmp(lo) < 0 {
				lo = n
			}
			if n.Cmp(hi) > 0 {
				hi = n
			}
		}
		f := func(x *big.Int) *string {
			if x == nil {
				return nil
			}
			return strp(scaledText(x, scale))
		}
		add("sum", "sum("+expr+")::text", f(sum), nil)
		add("min", "min("+expr+")::text", f(lo), nil)
		add("max", "max("+expr+")::text", f(hi), nil)
	}
	md5Of := func(parts []string) *string {
		if len(parts) == 0 {
			return nil
		}
		h := md5.Sum([]byte(strings.Join(parts, ",")))
		return strp(hex.EncodeToString(h[:]))
	}
	// addMD5 adds md5(string_agg(rowExpr, ',')) over the non-NULL rows;
	// perRow gives the Go text of each non-NULL cell.
	addMD5 := func(n, rowExpr string, perRow func(v string) (string, error)) error {
		var parts []string
		rowWant := make([]*string, len(cells))
		for i, cl := range cells {
			if cl.isNull {
				continue
			}
			p, err := perRow(cl.text)
			if err != nil {
				return err
			}
			parts = append(parts, p)
			rowWant[i] = strp(p)
		}
		aggs = append(aggs, aggregate{col: name, name: n, expr: "md5(string_agg(" + rowExpr + ", ',' ORDER BY _row))",
			want: md5Of(parts), rowExpr: rowExpr, rowWant: rowWant})
		return nil
	}
	k, scale := kindOf(ti)
	switch k {
	case kInt, kDecimal, kMoney:
		var nums []*big.Int
		for _, v := range vals {
			n, err := scaledInt(v, scale)
			if err != nil {
				return nil, err
			}
			nums = append(nums, n)
		}
		sumMinMax(q, nums, scale)
	case kBool:
		n := 0
		for _, v := range vals {
			if v == "true" {
				n++
			}
		}
		add("count_true", "(count(*) FILTER (WHERE "+q+"))::text", strp(strconv.Itoa(n)), nil)
	case kReal, kFloat:
		real := k == kReal
		var lo, hi *string
		bits := 64
		send := "float8send"
		if real {
			bits, send = 32, "float4send"
		}
		for _, v := range vals {
			f, err := strconv.ParseFloat(v, bits)
			if err != nil {
				return nil, err
			}
			if lo == nil || f < mustFloat(*lo) {
				lo = strp(v)
			}
			if hi == nil || f > mustFloat(*hi) {
				hi = strp(v)
			}
		}
		eq := func(g, w string) bool {
			a, err1 := strconv.ParseFloat(g, bits)
			b, err2 := strconv.ParseFloat(w, bits)
			return err1 == nil && err2 == nil && a == b
		}
		add("min", "min("+q+")::text", lo, eq)
		add("max", "max("+q+")::text", hi, eq)
		if err := addMD5("md5_bits", "encode("+send+"("+q+"), 'hex')", func(v string) (string, error) { return floatBitsHex(v, real) }); err != nil {
			return nil, err
		}
	case kDate, kTime, kDateTime, kDTO:
		var nums []*big.Int
		for _, v := range vals {
			us, err := pgMicros(v, k)
			if err != nil {
				return nil, err
			}
			nums = append(nums, big.NewInt(us))
		}
		sumMinMax("(extract(epoch FROM "+q+")*1000000)::numeric(38,0)", nums, 0)
	case kJSON:
		if err := addMD5("md5_text", q+"::text", jsonbText); err != nil {
			return nil, err
		}
	case kVector:
		err := addMD5("md5_bits", "CASE WHEN "+q+" IS NOT NULL THEN array_to_string(ARRAY(SELECT encode(float4send(x), 'hex') FROM unnest("+q+") WITH ORDINALITY AS u(x, n) ORDER BY n), ':') END",
			func(v string) (string, error) {
				if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
					return "", fmt.Errorf("vector %q is not an array literal", v)
				}
				var hs []string
				for _, e := range strings.Split(v[1:len(v)-1], ",") {
					h, err := floatBitsHex(e, true)
					if err != nil {
						return "", err
					}
					hs = append(hs, h)
				}
				return strings.Join(hs, ":"), nil
			})
		if err != nil {
			return nil, err
		}
	default: // text, varchar, xml, uuid, bytea, sql_variant as text, hierarchyid
		if err := addMD5("md5_text", q+"::text", func(v string) (string, error) { return v, nil }); err != nil {
			return nil, err
		}
	}
	return aggs, nil
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// scaledInt parses exact decimal text into its integer times 10^scale.
func scaledInt(s string, scale int) (*big.Int, error) {
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) != scale {
		return nil, fmt.Errorf("%q does not have %d fraction digits", s, scale)
	}
	n, ok := new(big.Int).SetString(ip+fp, 10)
	if !ok {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return n, nil
}

// scaledText is the text PostgreSQL's numeric output gives for n/10^scale
// (every digit of the scale, a leading 0 before the point).
func scaledText(n *big.Int, scale int) string {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	return new(big.Rat).SetFrac(n, den).FloatString(scale)
}

// pgMicros is what PostgreSQL stores for a date/time text, as microseconds
// since 1970-01-01 00:00 UTC. PostgreSQL parses the fraction
// as a double and rounds it to microseconds with rint (half to even): 7
// digits become 6 exactly that way.
func pgMicros(s string, k kind) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("date/time text %q", s) }
	var dateS, clockS, offS string
	switch k {
	case kDate:
		dateS = s
	case kTime:
		clockS = s
	default:
		var ok bool
		dateS, clockS, ok = strings.Cut(s, " ")
		if !ok {
			return bad()
		}
		if k == kDTO {
			if len(clockS) < 6 {
				return bad()
			}
			clockS, offS = clockS[:len(clockS)-6], clockS[len(clockS)-6:]
		}
	}
	var days int64
	if dateS != "" {
		d, err := time.Parse("2006-01-02", dateS)
		if err != nil {
			return bad()
		}
		days = d.Unix() / 86400
		if k == kDate {
			return days * 86400 * 1_000_000, nil
		}
	}
	var h, m, sec int64
	var frac string
	main, f, _ := strings.Cut(clockS, ".")
	if _, err := fmt.Sscanf(main, "%d:%d:%d", &h, &m, &sec); err != nil {
		return bad()
	}
	frac = f
	var us int64
	if frac != "" {
		x, err := strconv.ParseFloat("0."+frac, 64)
		if err != nil {
			return bad()
		}
		us = int64(math.RoundToEven(x * 1e6))
	}
	total := ((days*86400+h*3600+m*60+sec)*1_000_000 + us)
	if offS != "" {
		sign := int64(1)
		if offS[0] == '-' {
			sign = -1
		}
		var oh, om int64
		if _, err := fmt.Sscanf(offS[1:], "%d:%d", &oh, &om); err != nil {
			return bad()
		}
		total -= sign * (oh*3600 + om*60) * 1_000_000
	}
	return total, nil
}

// jsonbText is PostgreSQL's jsonb output of a JSON text: object keys
// sorted by length then bytes (duplicates: the last wins), ", " and ": "
// separators, strings escaped as escape_json does. Numbers are kept as
// written (jsonb keeps a numeric's digits); exponent forms are refused
// because their numeric output would need numeric formatting.
func jsonbText(s string) (string, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("json %q: %v", s, err)
	}
	var sb strings.Builder
	var write func(v any) error
	write = func(v any) error {
		switch x := v.(type) {
		case nil:
			sb.WriteString("null")
		case bool:
			sb.WriteString(strconv.FormatBool(x))
		case json.Number:
			if strings.ContainsAny(string(x), "eE") {
				return fmt.Errorf("json number %s: exponent form not supported by this check", x)
			}
			sb.WriteString(string(x))
		case string:
			escapeJSON(&sb, x)
		case []any:
			sb.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					sb.WriteString(", ")
				}
				if err := write(e); err != nil {
					return err
				}
			}
			sb.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				if len(keys[i]) != len(keys[j]) {
					return len(keys[i]) < len(keys[j])
				}
				return keys[i] < keys[j]
			})
			sb.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					sb.WriteString(", ")
				}
				escapeJSON(&sb, k)
				sb.WriteString(": ")
				if err := write(x[k]); err != nil {
					return err
				}
			}
			sb.WriteByte('}')
		}
		return nil
	}
	err := write(v)
	return sb.String(), err
}

func escapeJSON(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(sb, `\u%04x`, r)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
}

// TestCSVLoadsIntoPostgres: the postgres-dialect CSV of every sample table
// loads into PostgreSQL 15 with COPY ... CSV into the default mapping's types
// with identical values: row counts and per-column aggregates (count; sum,
// min and max of numbers and of date/times as epoch microseconds; md5 of
// the ordered text of text, uuid, bytea, xml, jsonb; md5 of the IEEE bits
// of floats and real[] elements) equal those computed in Go from
// go-mssqldb's reading of the table.
func TestCSVLoadsIntoPostgres(t *testing.T) {
	url := pgtest.Start(t)
	ctx := context.Background()
	pg := pgcheck.Connect(t, url)
	var version string
	if err := pg.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s", version)
	if !strings.HasPrefix(version, "15") && os.Getenv("CI") != "" {
		t.Errorf("CI must test against PostgreSQL 15, got %s", version)
	}

	e := startEnv(t)
	dir := t.TempDir()
	sums := e.exportAll(t, dir, map[string]any{"dialect": "postgres"})
	for _, tb := range e.db.Tables() {
		t.Run(tb.FullName(), func(t *testing.T) {
			loadAndCompare(t, ctx, pg, e, tb, sums[tb.FullName()].Sinks[0].Files[0])
		})
	}
}

func loadAndCompare(t *testing.T, ctx context.Context, pg *pgx.Conn, e *env, tb *sampledb.Table, file string) {
	name := pgIdent(tb.FullName())
	var ddl, cols strings.Builder
	ddl.WriteString("CREATE TABLE " + name + " (_row bigserial")
	for i, c := range tb.Columns {
		ddl.WriteString(", " + pgIdent(c.Name) + " " + pgType(&tb.Columns[i].Type))
		if i > 0 {
			cols.WriteString(", ")
		}
		cols.WriteString(pgIdent(c.Name))
	}
	ddl.WriteString(")")
	if _, err := pg.Exec(ctx, ddl.String()); err != nil {
		t.Fatalf("%s: %v", ddl.String(), err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	copySQL := "COPY " + name + " (" + cols.String() + ") FROM STDIN WITH (FORMAT csv, HEADER true)"
	tag, err := pg.PgConn().CopyFrom(ctx, f, copySQL)
	if err != nil {
		t.Fatalf("%s: %v", copySQL, err)
	}
	if tag.RowsAffected() != tb.Rows {
		t.Errorf("COPY loaded %d rows, the table has %d", tag.RowsAffected(), tb.Rows)
	}

	exp := expectTable(t, e, tb, dialects[1])
	if int64(len(exp.cells)) != tb.Rows {
		t.Fatalf("go-mssqldb read %d rows, the table has %d", len(exp.cells), tb.Rows)
	}
	aggs := []aggregate{{name: "rows", expr: "count(*)::text", want: strp(strconv.FormatInt(tb.Rows, 10))}}
	for c := range tb.Columns {
		cells := make([]csvCell, len(exp.cells))
		for i := range exp.cells {
			cells[i] = exp.cells[i][c]
		}
		a, err := aggregatesFor(&tb.Columns[c].Type, tb.Columns[c].Name, cells)
		if err != nil {
			t.Fatalf("column %s: %v", tb.Columns[c].Name, err)
		}
		aggs = append(aggs, a...)
	}
	// One query per table; PostgreSQL allows 1664 target columns, wide601
	// needs fewer than that per batch of 400.
	for from := 0; from < len(aggs); from += 400 {
		batch := aggs[from:min(from+400, len(aggs))]
		exprs := make([]string, len(batch))
		for i, a := range batch {
			exprs[i] = a.expr
		}
		rows, err := pg.Query(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+name)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]*string, len(batch))
		ptrs := make([]any, len(batch))
		for i := range got {
			ptrs[i] = &got[i]
		}
		if !rows.Next() {
			t.Fatalf("aggregate query returned no row: %v", rows.Err())
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for i, a := range batch {
			g, w := got[i], a.want
			switch {
			case g == nil && w == nil:
				continue
			case g == nil || w == nil:
			case a.equal != nil && a.equal(*g, *w):
				continue
			case a.equal == nil && *g == *w:
				continue
			}
			t.Errorf("%s column %s (%s as %s) %s: PostgreSQL %s, Go from go-mssqldb %s",
				tb.FullName(), a.col, colType(tb, a.col), pgTypeOf(tb, a.col), a.name, deref(g), deref(w))
			if a.rowExpr != "" {
				firstRowDiff(t, ctx, pg, name, a)
			}
		}
	}
}

// firstRowDiff names the first row whose value differs for an md5 aggregate.
func firstRowDiff(t *testing.T, ctx context.Context, pg *pgx.Conn, table string, a aggregate) {
	t.Helper()
	rows, err := pg.Query(ctx, "SELECT ("+a.rowExpr+")::text FROM "+table+" ORDER BY _row")
	if err != nil {
		t.Errorf("per-row query: %v", err)
		return
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var g *string
		if err := rows.Scan(&g); err != nil {
			t.Errorf("per-row query: %v", err)
			return
		}
		if i < len(a.rowWant) && deref(g) != deref(a.rowWant[i]) {
			t.Errorf("  first differing row %d: PostgreSQL %s, Go %s", i+1, deref(g), deref(a.rowWant[i]))
			return
		}
		i++
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}

func colType(tb *sampledb.Table, col string) string {
	if i := tb.ColumnIndex(col); i >= 0 {
		return tb.SQLType(i)
	}
	return "-"
}

func pgTypeOf(tb *sampledb.Table, col string) string {
	if i := tb.ColumnIndex(col); i >= 0 {
		return pgType(&tb.Columns[i].Type)
	}
	return "-"
}
