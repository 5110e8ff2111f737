package csv

import (
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// streamTable sends rows [0, rows) of tb through the real decoder into sink.
func streamTable(t testing.TB, tb *sampledb.Table, sink decode.CellSink, rows int64, nbc bool) {
	t.Helper()
	sinktest.StreamTable(t, tb, sink, rows, nbc)
}

// textOf renders a generic value by the documented CSV rules.
func textOf(ti *decode.TypeInfo, v any, pg bool) string {
	if t, ok := sinktest.ScalarText(ti, v); ok {
		return t
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.ReplaceAll(x, "\r\n", "\n") // encoding/csv reads \r\n in a field as \n
	case []byte:
		if pg {
			return `\x` + hex.EncodeToString(x)
		}
		return hex.EncodeToString(x)
	case []float32:
		var parts []string
		for _, f := range x {
			parts = append(parts, string(decode.AppendFloat32Text(nil, f)))
		}
		if pg {
			return "{" + strings.Join(parts, ",") + "}"
		}
		return "[" + strings.Join(parts, ",") + "]"
	case decode.Variant:
		return textOf(&x.Type, x.Value, pg)
	}
	return fmt.Sprintf("?%T", v)
}

// TestCSVSampleDB writes sample tables through the decoder into the sink
// and compares encoding/csv's reading with the tables' generic rows.
func TestCSVSampleDB(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 11, Rows: map[string]int64{
		"dbo.poc48": 2000, "dbo.wide601": 200, "dbo.lob": 30, "dbo.lob_nvarchar": 20, "dbo.lineitem": 2000, "dbo.temporal": 2000,
		"sales.order_lines": 2000,
	}})
	for _, tb := range db.Tables() {
		if tb.Catalog || tb.Rows > 20000 {
			continue
		}
		for _, dialect := range []string{"rfc4180", "postgres"} {
			t.Run(tb.FullName()+"/"+dialect, func(t *testing.T) {
				dir := t.TempDir()
				s, err := New(Config{Path: dir, Dialect: dialect})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				_ = s.Open(ctx, sinks.ExtractInfo{Name: tb.Name})
				streamTable(t, tb, s, tb.Rows, dialect == "postgres")
				st, err := s.Publish(ctx)
				if err != nil {
					t.Fatal(err)
				}
				r := stdcsv.NewReader(bytes.NewReader(readAll(t, st.Files[0])))
				recs, err := r.ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(recs)) != tb.Rows+1 || st.Rows != tb.Rows {
					t.Fatalf("%d records for %d rows", len(recs), tb.Rows)
				}
				for i, c := range tb.Columns {
					if recs[0][i] != c.Name {
						t.Fatalf("header %d: %q", i, recs[0][i])
					}
				}
				var row []any
				bad := 0
				for i := int64(0); i < tb.Rows && bad < 10; i++ {
					row = tb.Row(i, row)
					for c := range tb.Columns {
						want := textOf(&tb.Columns[c].Type, row[c], dialect == "postgres")
						if got := recs[i+1][c]; got != want {
							if len(got) > 80 {
								got = got[:80] + "..."
							}
							if len(want) > 80 {
								want = want[:80] + "..."
							}
							t.Errorf("row %d %s: got %q want %q", i, tb.Columns[c].Name, got, want)
							bad++
						}
					}
				}
			})
		}
	}
}
