package tdsserver_test

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// TestPgloaderSales migrates the sales schema from the server into a
// throwaway PostgreSQL with pgloader (which reads SQL Server through
// FreeTDS DB-Library and sends its own catalog queries), then compares row
// counts and column sums with the generated data.
func TestPgloaderSales(t *testing.T) {
	needBinary(t, "pgloader", "psql")
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	pg := pgtest.Start(t)
	pgURL := strings.Split(pg, "?")[0]

	dir := t.TempDir()
	cmd := fmt.Sprintf(`LOAD DATABASE
  FROM mssql://%s:%s@127.0.0.1:%d/sample
  INTO %s
  WITH include drop, create tables, create indexes, reset sequences, foreign keys
  INCLUDING ONLY TABLE NAMES LIKE 'customers', 'products', 'orders', 'order_lines' IN SCHEMA 'sales';
`, testUser, testPassword, s.Port(), pgURL)
	load := filepath.Join(dir, "sales.load")
	if err := os.WriteFile(load, []byte(cmd), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(freetdsEnv(t, s, "off"), "TMPDIR="+dir)
	out, err := run(t, env, "", "pgloader", "--no-ssl-cert-verification", "--root-dir", filepath.Join(dir, "pgl"), load)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pgloader output:\n%s", truncateOut(out))

	for _, name := range []string{"customers", "products", "orders", "order_lines"} {
		tb, _ := db.Table("sales", name)
		// Row count and, for every numeric column, the exact sum.
		var sel []string
		var cols []int
		for c := range tb.Columns {
			switch tb.Columns[c].Type.Type {
			case decode.TypeIntN, decode.TypeInt4, decode.TypeInt8, decode.TypeInt2, decode.TypeInt1,
				decode.TypeDecimalN, decode.TypeNumericN, decode.TypeMoneyN, decode.TypeMoney:
				sel = append(sel, fmt.Sprintf("coalesce(sum(%q),0)::text", tb.Columns[c].Name))
				cols = append(cols, c)
			}
		}
		q := fmt.Sprintf("SELECT count(*)::text%s FROM sales.%s", prefixComma(sel), name)
		got, err := run(t, os.Environ(), "", "psql", pg, "-At", "-F", "|", "-c", q)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprint(tb.Rows)}
		want = append(want, expectedSums(tb, cols)...)
		if g, w := strings.TrimSpace(got), strings.Join(want, "|"); !sameNumbers(g, w) {
			t.Errorf("sales.%s: count and sums %s, want %s", name, g, w)
		}
	}
}

func prefixComma(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
}

// expectedSums sums columns cols of tb exactly.
func expectedSums(tb *sampledb.Table, cols []int) []string {
	sums := make([]*big.Rat, len(cols))
	for i := range sums {
		sums[i] = new(big.Rat)
	}
	var r []any
	for i := range tb.Rows {
		r = tb.Row(i, r)
		for k, c := range cols {
			if r[c] == nil {
				continue
			}
			v, ok := new(big.Rat).SetString(strings.TrimPrefix(canonExpected(r[c], &tb.Columns[c].Type), "D"))
			if ok {
				sums[k].Add(sums[k], v)
			}
		}
	}
	out := make([]string, len(cols))
	for i, s := range sums {
		out[i] = s.RatString()
	}
	return out
}

// sameNumbers compares "|"-separated numbers exactly (as rationals).
func sameNumbers(a, b string) bool {
	x, y := strings.Split(a, "|"), strings.Split(b, "|")
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		p, ok1 := new(big.Rat).SetString(x[i])
		q, ok2 := new(big.Rat).SetString(y[i])
		if !ok1 || !ok2 || p.Cmp(q) != 0 {
			return false
		}
	}
	return true
}
