//go:build cgo

package e2e

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
	csvsink "github.com/tdsextract/tdsextract/sinks/csv"
	"github.com/tdsextract/tdsextract/sinks/parquet"
)

// readmeRecipe returns the SQL block that follows "<!-- recipe: name -->"
// in the README, so that what the README tells users is what is tested.
func readmeRecipe(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- recipe: " + regexp.QuoteMeta(name) + " -->\\s*```sql\\n(.*?)```")
	m := re.FindSubmatch(b)
	if m == nil {
		t.Fatalf("README.md has no %q recipe", name)
	}
	return string(m[1])
}

// The README's DuckDB recipes read a CSV and a Parquet export of
// type_matrix with every value as the source holds it: decimals and money
// exact, the empty string apart from NULL, GUIDs, binary, vectors and the
// 100 ns digit of time(7) kept; and DuckDB without the recipe does lose
// them, as the README says.
func TestDuckDBReadsExportsExactly(t *testing.T) {
	e := startEnv(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "csv", "type_matrix.csv")
	pqPath := filepath.Join(dir, "parquet", "type_matrix.parquet")
	pq := parquet.Factory()
	// The sink's defaults (MICROS timestamps) are what the recipe reads.
	pqOpts := map[string]any{"path": filepath.Join(dir, "parquet") + string(filepath.Separator)}
	reg, err := sinks.NewRegistry(csvsink.Factory(), pq)
	if err != nil {
		t.Fatal(err)
	}
	job := &engine.JobConfig{
		Name:   "duckdb",
		Source: engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "2m"},
		Extracts: []engine.ExtractConfig{{Table: "dbo.type_matrix", Name: "type_matrix", Verify: "count", Sinks: []engine.SinkConfig{
			{Type: "csv", Options: map[string]any{"path": filepath.Join(dir, "csv") + string(filepath.Separator)}},
			{Type: "parquet", Options: pqOpts},
		}}},
	}
	if _, err := (&engine.Runner{Registry: reg}).Run(context.Background(), job); err != nil {
		t.Fatalf("export: %v", err)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database for every statement
	paths := strings.NewReplacer("'out/csv/type_matrix.csv'", "'"+csvPath+"'", "'out/parquet/type_matrix.parquet'", "'"+pqPath+"'")
	for _, r := range []string{"duckdb-csv", "duckdb-parquet"} {
		if _, err := db.Exec(paths.Replace(readmeRecipe(t, r))); err != nil {
			t.Fatalf("recipe %s: %v", r, err)
		}
	}

	tab, ok := e.db.Table("dbo", "type_matrix")
	if !ok {
		t.Fatal("no type_matrix")
	}
	raw := readCSVText(t, csvPath)
	for _, table := range []string{"type_matrix", "type_matrix_pq"} {
		checkAgainstSource(t, db, table, tab, raw)
	}
	checkTypes(t, db)

	// Temporal columns DuckDB holds alike from both files.
	for _, c := range []string{"c_date", "c_time_0", "c_time_3", "c_datetime", "c_smalldatetime", "c_datetime2_0", "c_datetime2_3", "c_geography", "c_geometry", "c_hierarchyid", "c_sql_variant", "c_xml"} {
		var n int
		q := fmt.Sprintf("SELECT count(*) FROM type_matrix c JOIN type_matrix_pq p USING (id) WHERE c.%[1]s IS DISTINCT FROM p.%[1]s", c)
		if err := db.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows differ between the CSV and the Parquet reading (%v)", c, n, err)
		}
	}
	// The original local time of a datetimeoffset, from Parquet's UTC
	// instant and offset column, is the CSV's text without the offset, to
	// the microsecond MICROS holds.
	var off int
	q0 := `SELECT count(*) FROM type_matrix_pq p JOIN type_matrix c USING (id)
		WHERE (p.c_datetimeoffset_7_local IS NULL) <> (c.c_datetimeoffset_7 IS NULL)
		   OR abs(epoch_us(p.c_datetimeoffset_7_local) - epoch_us(left(c.c_datetimeoffset_7, -6)::TIMESTAMP)) > 1`
	if err := db.QueryRow(q0).Scan(&off); err != nil || off != 0 {
		t.Errorf("the README's local time of a datetimeoffset differs from the CSV's in %d rows (%v)", off, err)
	}

	// Without the recipe DuckDB does lose them.
	var nulls int
	var moneyType string
	q := fmt.Sprintf("SELECT count(*) FILTER (WHERE c_varchar_50 IS NULL), any_value(typeof(c_money)) FROM read_csv('%s')", csvPath)
	if err := db.QueryRow(q).Scan(&nulls, &moneyType); err != nil {
		t.Fatal(err)
	}
	srcNulls := 0
	var row []any
	for i := int64(0); i < tab.Rows; i++ {
		if row = tab.Row(i, row); row[colIndex(t, tab, "c_varchar_50")] == nil {
			srcNulls++
		}
	}
	if nulls <= srcNulls || moneyType != "DOUBLE" {
		t.Errorf("plain read_csv: %d NULLs in c_varchar_50 (source %d), money as %s: the README's warning no longer holds", nulls, srcNulls, moneyType)
	}
}

// clockNanos is "hh:mm:ss[.fffffff]" as nanoseconds past midnight, -1 when
// it is not that.
func clockNanos(s string) int64 {
	hms, frac, _ := strings.Cut(s, ".")
	t, err := time.Parse("15:04:05", hms)
	if err != nil || len(frac) > 9 {
		return -1
	}
	ns := int64(t.Hour())*3600e9 + int64(t.Minute())*60e9 + int64(t.Second())*1e9
	if frac != "" {
		f, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil {
			return -1
		}
		ns += f
	}
	return ns
}

// readCSVText returns each row's fields by column name, keyed by id.
func readCSVText(t *testing.T, path string) map[int]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]map[string]string{}
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, name := range recs[0] {
			m[name] = r[i]
		}
		id, _ := strconv.Atoi(m["id"])
		out[id] = m
	}
	return out
}

func colIndex(t *testing.T, tab *sampledb.Table, name string) int {
	t.Helper()
	for i, c := range tab.Columns {
		if c.Name == name {
			return i
		}
	}
	t.Fatalf("no column %s", name)
	return -1
}

// sourceText is how the check below writes a source value for comparison
// with DuckDB's text of the column ("" and ok=false for NULL); ok=false
// with a non-nil value means the column is not compared with the source
// here (spatial: exported as STAsBinary() WKB, not the stored bytes).
func sourceText(name string, v any) (string, bool) {
	if v == nil {
		return "", false
	}
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), true
	case bool:
		return strconv.FormatBool(x), true
	case decode.Decimal:
		return x.String(), true
	case decode.Money:
		return string(decode.AppendMoneyText(nil, int64(x))), true
	case decode.GUID:
		return x.String(), true
	case string:
		return x, true
	case []byte:
		if name == "c_geography" || name == "c_geometry" || name == "c_hierarchyid" {
			return "", false
		}
		return hex.EncodeToString(x), true
	}
	return "", false
}

// checkAgainstSource compares every row of a DuckDB table read by a recipe
// with the source rows (sampledb), column by column.
func checkAgainstSource(t *testing.T, db *sql.DB, table string, tab *sampledb.Table, raw map[int]map[string]string) {
	t.Helper()
	var row []any
	for i := int64(0); i < tab.Rows; i++ {
		row = tab.Row(i, row)
		id := row[0].(int64)
		for c, col := range tab.Columns {
			name := col.Name
			v := row[c]
			var expr string
			switch x := v.(type) {
			case float32, float64:
				var got sql.NullFloat64
				if err := db.QueryRow(fmt.Sprintf("SELECT %s::DOUBLE FROM %s WHERE id = ?", name, table), id).Scan(&got); err != nil {
					t.Fatalf("%s.%s: %v", table, name, err)
				}
				want, _ := strconv.ParseFloat(fmt.Sprint(x), 64)
				if f32, ok := x.(float32); ok {
					want = float64(f32)
				}
				if !got.Valid || got.Float64 != want {
					t.Errorf("%s row %d %s: %v, want %v", table, id, name, got, want)
				}
				continue
			case []float32:
				var got sql.NullString
				q := fmt.Sprintf("SELECT array_to_string(list_transform(%s, x -> x::VARCHAR), ',') FROM %s WHERE id = ?", name, table)
				if err := db.QueryRow(q, id).Scan(&got); err != nil {
					t.Fatalf("%s.%s: %v", table, name, err)
				}
				parts := strings.Split(got.String, ",")
				okAll := got.Valid && len(parts) == len(x)
				for j := 0; okAll && j < len(x); j++ {
					f, err := strconv.ParseFloat(parts[j], 32)
					okAll = err == nil && float32(f) == x[j]
				}
				if !okAll {
					t.Errorf("%s row %d %s: %q, want %v", table, id, name, got.String, x)
				}
				continue
			case decode.Time:
				if name != "c_time_7" {
					continue // compared between the two readings
				}
				want := raw[int(id)][name]
				var got sql.NullString
				if err := db.QueryRow(fmt.Sprintf("SELECT %s::VARCHAR FROM %s WHERE id = ?", name, table), id).Scan(&got); err != nil {
					t.Fatalf("%s.%s: %v", table, name, err)
				}
				if table == "type_matrix" && clockNanos(got.String) != clockNanos(want) {
					t.Errorf("%s row %d %s: %q, want %q (the 100 ns digit)", table, id, name, got.String, want)
				}
				continue
			}
			want, compared := sourceText(name, v)
			if !compared && v != nil {
				continue
			}
			expr = name + "::VARCHAR"
			if _, bin := v.([]byte); bin {
				expr = "lower(hex(" + name + "))"
			}
			var got sql.NullString
			if err := db.QueryRow(fmt.Sprintf("SELECT %s FROM %s WHERE id = ?", expr, table), id).Scan(&got); err != nil {
				t.Fatalf("%s.%s: %v", table, name, err)
			}
			if v == nil {
				if got.Valid {
					t.Errorf("%s row %d %s: %q, want NULL", table, id, name, got.String)
				}
				continue
			}
			text := got.String
			switch v.(type) {
			case decode.Decimal, decode.Money:
				// DuckDB may write a DECIMAL below 1 without its leading 0 (".5").
				if strings.HasPrefix(text, "-.") || strings.HasPrefix(text, ".") {
					text = strings.Replace(text, ".", "0.", 1)
				}
			}
			if !got.Valid || text != want {
				t.Errorf("%s row %d %s: %v, want %q", table, id, name, got, want)
			}
		}
	}
}

// checkTypes: the CSV recipe gives DuckDB the types that hold the values.
func checkTypes(t *testing.T, db *sql.DB) {
	t.Helper()
	want := map[string]string{
		"c_tinyint": "UTINYINT", "c_money": "DECIMAL(19,4)", "c_smallmoney": "DECIMAL(10,4)",
		"c_decimal_38_0": "DECIMAL(38,0)", "c_decimal_38_38": "DECIMAL(38,38)", "c_numeric_9_2": "DECIMAL(9,2)",
		"c_uniqueidentifier": "UUID", "c_binary_8": "BLOB", "c_rowversion": "BLOB", "c_json": "JSON",
		"c_vector_3": "FLOAT[]", "c_time_7": "TIME_NS", "c_datetime2_7": "VARCHAR", "c_varchar_50": "VARCHAR",
	}
	for c, typ := range want {
		var got string
		if err := db.QueryRow(fmt.Sprintf("SELECT any_value(typeof(%s)) FROM type_matrix", c)).Scan(&got); err != nil || got != typ {
			t.Errorf("CSV recipe: %s is %s, want %s (%v)", c, got, typ, err)
		}
	}
}
