package e2e

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// csvCell is one field: its text, or NULL (by default an unquoted empty
// field is NULL and a quoted "" the empty string; with a null token, the
// token unquoted is NULL).
type csvCell struct {
	text   string
	isNull bool
}

// dialect is one set of csv sink options and the rules they imply.
type dialect struct {
	name    string
	options map[string]any
	pg      bool   // postgres dialect: \x hex bytea, {..} vectors
	binary  string // hex, hex_prefixed, base64
	bool10  bool   // 1/0 instead of true/false
	null    string // the NULL token
	comma   rune
}

var dialects = []dialect{
	{name: "rfc4180", options: map[string]any{}, binary: "hex", comma: ','},
	{name: "postgres", options: map[string]any{"dialect": "postgres"}, pg: true, binary: "hex_prefixed", comma: ','},
	// Every other option that changes the text, at once.
	{name: "options", options: map[string]any{"delimiter": ";", "null": `\N`, "line_ending": "crlf",
		"bool_format": "1_0", "binary_format": "base64"}, binary: "base64", bool10: true, null: `\N`, comma: ';'},
}

// readCSV parses a CSV file with encoding/csv and recovers, from the
// reader's field positions, whether each field was quoted.
func readCSV(t testing.TB, path string, ncols int, d dialect) (header []string, rows [][]csvCell) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lineStart := []int{0, 0} // 1-based line numbers
	for i, b := range data {
		if b == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = ncols
	r.Comma = d.comma
	header, err = r.Read()
	if err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: encoding/csv: %v", path, err)
		}
		row := make([]csvCell, len(rec))
		for i, f := range rec {
			line, col := r.FieldPos(i)
			off := lineStart[line] + col - 1
			quoted := off < len(data) && data[off] == '"'
			row[i] = csvCell{text: f, isNull: !quoted && f == d.null}
		}
		rows = append(rows, row)
	}
	return header, rows
}

// expected is go-mssqldb's reading of one table formatted by the CSV rules.
type expected struct {
	cols  []string
	cells [][]csvCell
}

// expectTable reads the engine's SELECT of tb with go-mssqldb and formats
// every value for the dialect (pg: the postgres dialect).
func expectTable(t testing.TB, e *env, tb *sampledb.Table, d dialect) expected {
	t.Helper()
	db := e.mssqlDB(t)
	cols, rows := mssqlRows(t, db, selectFor(t, tb))
	if len(cols) != len(tb.Columns) {
		t.Fatalf("%s: go-mssqldb sees %d columns, sampledb declares %d", tb.FullName(), len(cols), len(tb.Columns))
	}
	out := expected{cols: cols}
	var src []any
	for i, r := range rows {
		cells := make([]csvCell, len(r))
		for c, v := range r {
			ti := &tb.Columns[c].Type
			var vti *decode.TypeInfo
			if ti.Kind() == decode.KindVariant {
				src = tb.Row(int64(i), src)
				if vr, ok := src[c].(decode.Variant); ok {
					vti = &vr.Type
				}
			}
			if utf8Varchar(ti) {
				v = utf8Workaround(t, tb, cols, r, c, i)
			}
			text, null, err := expectCell(v, ti, vti, d)
			if err != nil {
				t.Fatalf("%s.%s row %d: %v", tb.FullName(), cols[c], i+1, err)
			}
			cells[c] = csvCell{text: text, isNull: null}
		}
		out.cells = append(out.cells, cells)
	}
	return out
}

// utf8Varchar reports a char/varchar/text column in a UTF-8 collation.
func utf8Varchar(ti *decode.TypeInfo) bool {
	k := ti.Kind()
	return k.HasCollation() && !k.IsUnicode() && ti.Collation.UTF8()
}

// utf8Workaround: go-mssqldb v1.11.2 ignores the UTF-8 flag of a collation
// and decodes UTF-8 varchar bytes with the LCID's code page (cp1252 for
// Latin1_General_100_CI_AS_SC_UTF8), mapping bytes cp1252 leaves undefined
// to U+FFFD, so its reading cannot be turned back into the text. The only
// such table is text_utf8, whose rows hold one string in every column: the
// expected value is go-mssqldb's reading of the row's nvarchar column "n",
// after checking that go-mssqldb's cp1252 reading of this column is exactly
// the cp1252 decoding of that string's UTF-8 bytes (so the server sent the
// UTF-8 bytes unchanged).
func utf8Workaround(t testing.TB, tb *sampledb.Table, cols []string, row []any, c, i int) any {
	t.Helper()
	n := slices.Index(cols, "n")
	if n < 0 || tb.Columns[n].Type.Kind() != decode.KindNVarChar {
		t.Fatalf("%s.%s: UTF-8 varchar column without an nvarchar column n to compare with", tb.FullName(), cols[c])
	}
	want, _ := row[n].(string)
	if row[c] == nil || row[n] == nil {
		if (row[c] == nil) != (row[n] == nil) {
			t.Errorf("%s row %d: go-mssqldb reads %s %v but n %v", tb.FullName(), i+1, cols[c], row[c], row[n])
		}
		return row[c]
	}
	moj, err := charmap.Windows1252.NewDecoder().String(want)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := row[c].(string); got != moj {
		t.Errorf("%s.%s row %d: go-mssqldb reads %q, the cp1252 reading of the UTF-8 bytes of %q is %q",
			tb.FullName(), cols[c], i+1, got, want, moj)
	}
	return want
}

func show(c csvCell) string {
	if c.isNull {
		return "NULL"
	}
	s := fmt.Sprintf("%q", c.text)
	if len(s) > 120 {
		s = s[:100] + fmt.Sprintf("...(%d bytes)", len(c.text))
	}
	return s
}

// TestCSVEqualsGoMssqldb: the CSV of every sample table equals go-mssqldb's
// reading of the same table, cell by cell, after formatting both by the
// documented rules.
func TestCSVEqualsGoMssqldb(t *testing.T) {
	e := startEnv(t)
	for _, d := range dialects {
		dir := t.TempDir()
		sums := e.exportAll(t, dir, d.options)
		for _, tb := range e.db.Tables() {
			t.Run(d.name+"/"+tb.FullName(), func(t *testing.T) {
				sum := sums[tb.FullName()]
				if want := selectFor(t, tb); sum.SQL != want {
					t.Errorf("engine ran %q, BuildSelect gives %q", sum.SQL, want)
				}
				if sum.Rows != tb.Rows {
					t.Errorf("engine exported %d rows, the table has %d", sum.Rows, tb.Rows)
				}
				file := sum.Sinks[0].Files[0]
				if filepath.Dir(file) != filepath.Clean(dir) {
					t.Errorf("file %s is not in %s", file, dir)
				}
				exp := expectTable(t, e, tb, d)
				if int64(len(exp.cells)) != tb.Rows {
					t.Errorf("go-mssqldb read %d rows, the table has %d", len(exp.cells), tb.Rows)
				}
				header, got := readCSV(t, file, len(tb.Columns), d)
				compareTable(t, tb, exp, header, got)
			})
		}
	}
}

// compareTable reports every differing cell (at most a few per column).
func compareTable(t *testing.T, tb *sampledb.Table, exp expected, header []string, got [][]csvCell) {
	t.Helper()
	for c, name := range exp.cols {
		if header[c] != name {
			t.Errorf("header column %d is %q, go-mssqldb says %q", c+1, header[c], name)
		}
	}
	if len(got) != len(exp.cells) {
		t.Errorf("CSV has %d rows, go-mssqldb read %d", len(got), len(exp.cells))
	}
	n := min(len(got), len(exp.cells))
	perCol := make([]int, len(exp.cols))
	for i := 0; i < n; i++ {
		for c := range exp.cols {
			g, w := got[i][c], exp.cells[i][c]
			if g.isNull == w.isNull && (g.isNull || g.text == w.text) {
				continue
			}
			perCol[c]++
			if perCol[c] <= 3 {
				t.Errorf("%s column %s (%s) row %d: CSV %s, go-mssqldb %s",
					tb.FullName(), exp.cols[c], tb.SQLType(c), i+1, show(g), show(w))
			}
		}
	}
	for c, k := range perCol {
		if k > 3 {
			t.Errorf("%s column %s: %d differing cells in all", tb.FullName(), exp.cols[c], k)
		}
	}
}
