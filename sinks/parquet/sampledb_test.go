package parquet

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

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

// expect renders a generic value (sampledb's Row, independent of the sink
// path) the way arrowStr renders what arrow-go read, for the column's
// documented Parquet mapping.
func expect(p colPlan, c *decode.Column, v any) string {
	if v == nil {
		return "NULL"
	}
	switch p.kind {
	case kBool:
		return strconv.FormatBool(v.(bool))
	case kInt32, kInt64:
		n := v.(int64)
		switch {
		case strings.Contains(p.target, "INT(8"):
			return "u8:" + strconv.FormatInt(n, 10)
		case strings.Contains(p.target, "INT(16"):
			return "i16:" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	case kFloat:
		return "f32:" + strconv.FormatFloat(float64(v.(float32)), 'g', -1, 32)
	case kDouble:
		return strconv.FormatFloat(v.(float64), 'g', -1, 64)
	case kDecInt32, kDecInt64, kDecFixed:
		d := v.(decode.Decimal)
		return fmt.Sprintf("dec(%d,%d):%s", c.Type.Precision, c.Type.Scale, d.String())
	case kMoneyFixed:
		return "dec(19,4):" + string(decode.AppendMoneyText(nil, int64(v.(decode.Money))))
	case kMoneyInt64:
		return "dec(10,4):" + string(decode.AppendMoneyText(nil, int64(v.(decode.Money))))
	case kDate:
		return "date:" + string(decode.AppendDateText(nil, int32(v.(decode.Date))))
	case kTimeNanos:
		return fmt.Sprintf("time(ns):%d", int64(v.(decode.Time))*100)
	case kTimeMicros:
		return fmt.Sprintf("time(us):%d", int64(v.(decode.Time))/10)
	case kTSNanos:
		return fmt.Sprintf("ts(ns,):%d", v.(decode.DateTime).Time().UnixNano())
	case kTSMicros:
		return fmt.Sprintf("ts(us,):%d", v.(decode.DateTime).Time().Truncate(time.Microsecond).UnixMicro())
	case kTSMillis:
		return fmt.Sprintf("ts(ms,):%d", v.(decode.DateTime).Time().Round(time.Millisecond).UnixMilli())
	case kDTONanos:
		return fmt.Sprintf("ts(ns,UTC):%d", v.(decode.DateTimeOffset).UTC.Time().UnixNano())
	case kDTOMicros:
		return fmt.Sprintf("ts(us,UTC):%d", v.(decode.DateTimeOffset).UTC.Time().Truncate(time.Microsecond).UnixMicro())
	case kUUID:
		g := v.(decode.GUID)
		return "fixed:" + hex.EncodeToString(g[:])
	case kString:
		if c.Kind() == decode.KindJSON {
			return "bin:" + hex.EncodeToString([]byte(v.(string)))
		}
		return v.(string)
	case kBytes:
		return "bin:" + hex.EncodeToString(v.([]byte))
	case kFixedBytes:
		b := make([]byte, p.fixedLen)
		copy(b, v.([]byte))
		return "fixed:" + hex.EncodeToString(b)
	case kVector:
		var parts []string
		for _, f := range v.([]float32) {
			parts = append(parts, "f32:"+strconv.FormatFloat(float64(f), 'g', -1, 32))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case kVariant:
		vr := v.(decode.Variant)
		return variantText(&vr.Type, vr.Value)
	}
	return fmt.Sprintf("?%T", v)
}

func variantText(ti *decode.TypeInfo, v any) string {
	if t, ok := sinktest.ScalarText(ti, v); ok {
		return t
	}
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return hex.EncodeToString(x)
	}
	return fmt.Sprintf("?%T", v)
}

// TestParquetSampleDB writes sample tables through the decoder into the
// sink and compares arrow-go's reading with the tables' generic rows.
func TestParquetSampleDB(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 7, Rows: map[string]int64{
		"dbo.poc48": 3000, "dbo.wide601": 300, "dbo.lob": 40, "dbo.lineitem": 3000, "dbo.temporal": 3000,
		"sales.order_lines": 3000,
	}})
	tables := []struct{ schema, name string }{
		{"dbo", "type_matrix"}, {"dbo", "poc48"}, {"dbo", "wide601"}, {"dbo", "lob"}, {"dbo", "lineitem"},
		{"dbo", "temporal"}, {"sales", "customers"}, {"sales", "orders"}, {"sales", "order_lines"},
		{"dbo", "text_cp1252"}, {"dbo", "text_cp932"},
	}
	for _, tc := range tables {
		t.Run(tc.schema+"."+tc.name, func(t *testing.T) {
			tb, ok := db.Table(tc.schema, tc.name)
			if !ok {
				t.Skipf("sampledb has no %s.%s", tc.schema, tc.name)
			}
			dir := t.TempDir()
			s, err := New(Config{Path: dir, RowGroupRows: 1000, Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_ = s.Open(ctx, sinks.ExtractInfo{Name: tc.name})
			streamTable(t, tb, s, tb.Rows, false)
			st, err := s.Publish(ctx)
			if err != nil {
				_ = s.Abort(ctx)
				t.Fatal(err)
			}
			res := readBack(t, st.Files[0])
			if int64(len(res.rows)) != tb.Rows || st.Rows != tb.Rows {
				t.Fatalf("read %d rows, stats %d, table %d", len(res.rows), st.Rows, tb.Rows)
			}
			// result column index per source column (companions shift them)
			idx := make([]int, len(tb.Columns))
			k := 0
			for i := range tb.Columns {
				idx[i] = k
				if res.names[k] != tb.Columns[i].Name {
					t.Fatalf("column %d: name %q want %q", i, res.names[k], tb.Columns[i].Name)
				}
				k++
				if s.plans[i].offset || s.plans[i].vtype {
					k++
				}
			}
			var row []any
			bad := 0
			for r := int64(0); r < tb.Rows && bad < 10; r++ {
				row = tb.Row(r, row)
				for i := range tb.Columns {
					want := expect(s.plans[i], &tb.Columns[i], row[i])
					if got := res.rows[r][idx[i]]; got != want {
						if len(got) > 100 {
							got = got[:100] + "..."
						}
						if len(want) > 100 {
							want = want[:100] + "..."
						}
						t.Errorf("row %d %s (%s): got %q want %q", r, tb.Columns[i].Name, s.plans[i].target, got, want)
						bad++
					}
					if s.plans[i].vtype {
						want := "NULL"
						if row[i] != nil {
							vr := row[i].(decode.Variant)
							want = decode.SQLTypeName(&decode.Column{Type: vr.Type})
						}
						if got := res.rows[r][idx[i]+1]; got != want {
							t.Errorf("row %d %s type: got %q want %q", r, tb.Columns[i].Name, got, want)
							bad++
						}
					}
					if s.plans[i].offset {
						want := "NULL"
						if row[i] != nil {
							want = "i16:" + strconv.Itoa(int(row[i].(decode.DateTimeOffset).OffsetMin))
						}
						if got := res.rows[r][idx[i]+1]; got != want {
							t.Errorf("row %d %s offset: got %q want %q", r, tb.Columns[i].Name, got, want)
							bad++
						}
					}
				}
			}
		})
	}
}
