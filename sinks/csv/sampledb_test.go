package csv

import (
	"bytes"
	stdcsv "encoding/csv"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

var update = flag.Bool("update", false, "rewrite the golden CSV files under testdata/sampledb from the sink's output")

// goldenRows are the rows of each sample table the golden files hold: every
// row of the type matrix and of the code page tables (their edge values),
// enough rows of the others to meet NULLs, empty strings, quotes, line
// breaks and the extremes their generators produce, few of the wide and
// large-value tables.
var goldenRows = map[string]int64{
	"dbo.type_matrix": 40, "dbo.text_cp1251": 64, "dbo.text_cp1252": 64, "dbo.text_cp932": 64, "dbo.text_utf8": 64,
	"dbo.poc48": 60, "dbo.odbc5": 60, "dbo.lineitem": 60, "dbo.temporal": 100, "dbo.wide601": 6,
	"dbo.lob": 4, "dbo.lob_nvarchar": 1,
	"sales.customers": 40, "sales.orders": 40, "sales.order_lines": 40, "sales.products": 40,
	"warehouse.sites": 40 /* all 12 */, "warehouse.stock": 40, "warehouse.movements": 40,
	"dbo.events": 40, "dbo.readings": 40, "dbo.devices": 40,
	"finance.invoices": 40 /* all 40 */, "finance.ledger": 40,
}

// TestCSVSampleDBGolden writes sample tables through the decoder into the
// sink, in both dialects, and compares the files byte for byte with the
// checked-in golden files: the expected text is not computed by the
// formatting code under test. The golden files were generated once with
// -update and reviewed by hand against the sample database's generator
// definitions and against SQL Server's own text forms (datetime with 3
// digits, smalldatetime with none, money with 4, GUIDs in their canonical
// form); internal/e2e compares the same sink's output with go-mssqldb's
// reading of the sample server.
func TestCSVSampleDBGolden(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 11})
	seen := 0
	for _, tb := range db.Tables() {
		if tb.Catalog {
			continue
		}
		rows, ok := goldenRows[tb.FullName()]
		rows = min(rows, tb.Rows)
		if !ok {
			t.Errorf("%s: a sample table without golden rows; add it to goldenRows", tb.FullName())
			continue
		}
		seen++
		for _, dialect := range []string{"rfc4180", "postgres"} {
			t.Run(tb.FullName()+"/"+dialect, func(t *testing.T) {
				dir := t.TempDir()
				st := sinktest.ExportTable(t, newSink(t, Config{Path: dir, Dialect: dialect}), sinks.ExtractInfo{Name: tb.Name}, tb, rows, dialect == "postgres")
				if st.Rows != rows || len(st.Files) != 1 {
					t.Fatalf("stats %+v for %d rows", st, rows)
				}
				got := readAll(t, st.Files[0])
				golden := filepath.Join("testdata", "sampledb", tb.FullName()+"."+dialect+".csv")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from %s: %s", golden, firstDiff(got, want))
				}
				// The golden text is itself well-formed CSV with one record
				// per row and the header.
				recs := goldenRecords(t, tb.FullName(), dialect)
				if int64(len(recs)) != rows+1 || len(recs[0]) != len(tb.Columns) || recs[0][0] != tb.Columns[0].Name {
					t.Fatalf("%s: %d records for %d rows", golden, len(recs), rows)
				}
			})
		}
	}
	if seen != len(goldenRows) {
		t.Errorf("goldenRows names %d tables, the sample database has %d", len(goldenRows), seen)
	}
}

// goldenRecords reads a golden file with encoding/csv.
func goldenRecords(t testing.TB, table, dialect string) [][]string {
	t.Helper()
	path := filepath.Join("testdata", "sampledb", table+"."+dialect+".csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	recs, err := stdcsv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			for j := 0; j < min(len(gl), len(wl)); j++ {
				if gl[j] != wl[j] {
					from := max(j-40, 0)
					return "line " + itoa(i+1) + ", byte " + itoa(j+1) + ": got ..." + clip(gl[from:]) + " want ..." + clip(wl[from:])
				}
			}
			return "line " + itoa(i+1) + ": got " + clip(gl) + " want " + clip(wl)
		}
	}
	return "same lines, different bytes"
}

func clip(s string) string {
	if len(s) > 100 {
		return `"` + s[:100] + `"...`
	}
	return `"` + s + `"`
}
