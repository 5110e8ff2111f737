package plugins

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// cellText renders one Arrow value as the tests compare it: the Arrow
// type's own terms (unscaled decimal, epoch counts), read with arrow-go's
// typed arrays, independent of how the host wrote them.
func cellText(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "NULL"
	}
	switch x := a.(type) {
	case *array.Boolean:
		return strconv.FormatBool(x.Value(i))
	case *array.Uint8:
		return "u8:" + strconv.Itoa(int(x.Value(i)))
	case *array.Int16:
		return "i16:" + strconv.Itoa(int(x.Value(i)))
	case *array.Int32:
		return "i32:" + strconv.Itoa(int(x.Value(i)))
	case *array.Int64:
		return "i64:" + strconv.FormatInt(x.Value(i), 10)
	case *array.Float32:
		return "f32:" + strconv.FormatFloat(float64(x.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return "f64:" + strconv.FormatFloat(x.Value(i), 'g', -1, 64)
	case *array.Decimal128:
		t := x.DataType().(*arrow.Decimal128Type)
		return fmt.Sprintf("dec(%d,%d):%s", t.Precision, t.Scale, x.Value(i).BigInt().String())
	case *array.Date32:
		return "date:" + strconv.Itoa(int(x.Value(i)))
	case *array.Time64:
		return "time(ns):" + strconv.FormatInt(int64(x.Value(i)), 10)
	case *array.Timestamp:
		t := x.DataType().(*arrow.TimestampType)
		return fmt.Sprintf("ts(%s,%s):%d", t.Unit, t.TimeZone, int64(x.Value(i)))
	case *array.String:
		// Value is a view of the batch's memory, valid only during
		// WriteBatch: keep a copy.
		return strings.Clone(x.Value(i))
	case *array.Binary:
		return "bin:" + hex.EncodeToString(x.Value(i))
	case *array.FixedSizeBinary:
		return "fixed:" + hex.EncodeToString(x.Value(i))
	case *array.FixedSizeList:
		vals := x.ListValues().(*array.Float32)
		n := int(x.DataType().(*arrow.FixedSizeListType).Len())
		var parts []string
		for k := i * n; k < (i+1)*n; k++ {
			parts = append(parts, strconv.FormatFloat(float64(vals.Value(k)), 'g', -1, 32))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("?%T", a)
}

// expectText renders a sample database value (the generic value path,
// independent of the sink) as cellText renders the Arrow value of its
// documented mapping; nanos is the timestamp_nanos option.
func expectText(c *decode.Column, v any, nanos bool) string {
	if v == nil {
		return "NULL"
	}
	k := c.Kind()
	unscaled := func(d decode.Decimal) string {
		n := new(big.Int).Lsh(new(big.Int).SetUint64(d.Hi), 64)
		n.Or(n, new(big.Int).SetUint64(d.Lo))
		if d.Neg {
			n.Neg(n)
		}
		return n.String()
	}
	ts := func(t time.Time, zone string) string {
		switch {
		case k == decode.KindDateTime || k == decode.KindSmallDateTime:
			return fmt.Sprintf("ts(ms,%s):%d", zone, t.Round(time.Millisecond).UnixMilli())
		case c.Type.Scale == 7 && nanos:
			return fmt.Sprintf("ts(ns,%s):%d", zone, t.UnixNano())
		}
		// UnixMicro floors: the 100 ns digit truncated, never rounded
		return fmt.Sprintf("ts(us,%s):%d", zone, t.UnixMicro())
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		switch k {
		case decode.KindTinyInt:
			return "u8:" + strconv.FormatInt(x, 10)
		case decode.KindSmallInt:
			return "i16:" + strconv.FormatInt(x, 10)
		case decode.KindInt:
			return "i32:" + strconv.FormatInt(x, 10)
		}
		return "i64:" + strconv.FormatInt(x, 10)
	case float32:
		return "f32:" + strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return "f64:" + strconv.FormatFloat(x, 'g', -1, 64)
	case decode.Decimal:
		return fmt.Sprintf("dec(%d,%d):%s", c.Type.Precision, c.Type.Scale, unscaled(x))
	case decode.Money:
		p := 19
		if k == decode.KindSmallMoney {
			p = 10
		}
		return fmt.Sprintf("dec(%d,4):%d", p, int64(x))
	case decode.Date:
		return "date:" + strconv.FormatInt(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(x)).Unix()/86400, 10)
	case decode.Time:
		return "time(ns):" + strconv.FormatInt(int64(x)*100, 10)
	case decode.DateTime:
		return ts(x.Time(), "")
	case decode.DateTimeOffset:
		return ts(x.UTC.Time(), "UTC")
	case decode.GUID:
		return "fixed:" + hex.EncodeToString(x[:])
	case string:
		return x
	case []byte:
		if k == decode.KindBinary || k == decode.KindRowVersion {
			b := make([]byte, max(int(c.Type.Size), 1))
			copy(b, x)
			return "fixed:" + hex.EncodeToString(b)
		}
		return "bin:" + hex.EncodeToString(x)
	case []float32:
		var parts []string
		for _, f := range x {
			parts = append(parts, strconv.FormatFloat(float64(f), 'g', -1, 32))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case decode.Variant:
		if t, ok := sinktest.ScalarText(&x.Type, x.Value); ok {
			return t
		}
		switch y := x.Value.(type) {
		case string:
			return y
		case []byte:
			return hex.EncodeToString(y)
		}
	}
	return fmt.Sprintf("?%T", v)
}

// collector is a plugin that keeps every value it receives as text.
type collector struct {
	mu      sync.Mutex
	schema  *arrow.Schema
	rows    [][]string
	batches int
	opts    map[string]any
	info    sinks.ExtractInfo
	publish bool
	aborted bool
}

func (c *collector) plugin() Plugin {
	return Plugin{Name: "collect", Description: "keeps values for tests",
		Options: sinks.Spec{{Name: "tag", Type: sinks.String, Default: "x", Doc: "a tag"}},
		New:     func() Sink { return c }}
}

func (c *collector) Open(_ context.Context, req OpenRequest) error {
	c.schema, c.opts, c.info = req.Schema, req.Options, req.Extract
	return nil
}

func (c *collector) WriteBatch(_ context.Context, rec arrow.RecordBatch) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches++
	for i := 0; i < int(rec.NumRows()); i++ {
		row := make([]string, rec.NumCols())
		for j := range row {
			row[j] = cellText(rec.Column(j), i)
		}
		c.rows = append(c.rows, row)
	}
	return nil
}

func (c *collector) Publish(context.Context) (Stats, error) {
	c.publish = true
	return Stats{Rows: int64(len(c.rows))}, nil
}

func (c *collector) Abort(context.Context) error { c.aborted = true; return nil }

// compareRows checks the collected rows against the table's generic rows.
func compareRows(t *testing.T, tb *sampledb.Table, schema *arrow.Schema, rows [][]string, nanos bool) {
	t.Helper()
	if int64(len(rows)) != tb.Rows {
		t.Fatalf("%d rows, want %d", len(rows), tb.Rows)
	}
	// field index per column: companions follow their column
	idx := make([]int, len(tb.Columns))
	k := 0
	for i := range tb.Columns {
		idx[i] = k
		if schema.Field(k).Name != tb.Columns[i].Name {
			t.Fatalf("field %d is %q, want %q", k, schema.Field(k).Name, tb.Columns[i].Name)
		}
		k++
		if k < schema.NumFields() && strings.HasPrefix(schema.Field(k).Name, tb.Columns[i].Name+"__") {
			k++
		}
	}
	if k != schema.NumFields() {
		t.Fatalf("%d fields for %d columns", schema.NumFields(), len(tb.Columns))
	}
	var row []any
	bad := 0
	for r := int64(0); r < tb.Rows && bad < 10; r++ {
		row = tb.Row(r, row)
		for i := range tb.Columns {
			c := &tb.Columns[i]
			got, want := rows[r][idx[i]], expectText(c, row[i], nanos)
			if got != want {
				t.Errorf("row %d %s (%s): got %.100q want %.100q", r, c.Name, decode.SQLTypeName(c), got, want)
				bad++
			}
			if idx[i]+1 < schema.NumFields() && schema.Field(idx[i]+1).Name == c.Name+"__offset_minutes" {
				want := "NULL"
				if row[i] != nil {
					want = "i16:" + strconv.Itoa(int(row[i].(decode.DateTimeOffset).OffsetMin))
				}
				if got := rows[r][idx[i]+1]; got != want {
					t.Errorf("row %d %s offset: got %q want %q", r, c.Name, got, want)
					bad++
				}
			}
			if idx[i]+1 < schema.NumFields() && schema.Field(idx[i]+1).Name == c.Name+"__type" {
				want := "NULL"
				if row[i] != nil {
					vr := row[i].(decode.Variant)
					want = decode.SQLTypeName(&decode.Column{Type: vr.Type})
				}
				if got := rows[r][idx[i]+1]; got != want {
					t.Errorf("row %d %s type: got %q want %q", r, c.Name, got, want)
					bad++
				}
			}
		}
	}
}

// testDB is the sample database at sizes the tests can afford.
func testDB() *sampledb.DB {
	return sampledb.New(sampledb.Config{Seed: 7, Rows: map[string]int64{
		"dbo.poc48": 3000, "dbo.wide601": 200, "dbo.lob": 60, "dbo.lineitem": 3000, "dbo.temporal": 3000,
		"dbo.odbc5": 3000, "sales.order_lines": 3000,
	}})
}

// TestInProcessSampleDB streams every sample table through the real
// decoder into the host sink of an in-process plugin, at batch sizes that
// force many batches and rows moved to the next batch, and compares what
// the plugin read with arrow-go against the tables' generic rows.
func TestInProcessSampleDB(t *testing.T) {
	db := testDB()
	moved := map[string]int64{}
	defer func() {
		// The small batches must have exercised rows that did not fit.
		if !t.Failed() && (moved["dbo.lineitem/bytes"] == 0 || moved["dbo.lob/bytes"] == 0) {
			t.Errorf("no row moved to the next batch: %v", moved)
		}
	}()
	for _, tb := range db.Tables() {
		for _, cfg := range []struct {
			name    string
			options map[string]any
		}{
			{"default", map[string]any{}},
			{"small", map[string]any{"batch_rows": 97, "batch_bytes": "64KiB"}},
			// bounded by bytes alone: varying lengths overflow data regions
			{"bytes", map[string]any{"batch_bytes": "64KiB"}},
		} {
			t.Run(tb.FullName()+"/"+cfg.name, func(t *testing.T) {
				switch tb.FullName() {
				case "dbo.wide601", "dbo.type_matrix", "dbo.lob_nvarchar":
					if cfg.name != "default" {
						// rows of up to 150 KiB (max-length values)
						cfg.options = map[string]any{"batch_bytes": "1MiB"}
						if cfg.name == "small" {
							cfg.options["batch_rows"] = 97
						}
					}
				}
				col := &collector{}
				f, err := InProcess(col.plugin())
				if err != nil {
					t.Fatal(err)
				}
				s, err := f.New(cfg.options)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.name == "bytes" {
					s.(*hostSink).slack = 0.25
				}
				st := sinktest.ExportTable(t, s, sinks.ExtractInfo{Name: tb.Name, Schema: tb.Schema, Table: tb.Name}, tb, tb.Rows, false)
				if st.Rows != tb.Rows || !col.publish || col.opts["tag"] != "x" {
					t.Fatalf("stats %+v, published %v, options %v", st, col.publish, col.opts)
				}
				if cfg.name == "small" && tb.Rows > 200 && col.batches < int(tb.Rows/97) {
					t.Errorf("%d batches for %d rows at 97 a batch", col.batches, tb.Rows)
				}
				moved[tb.FullName()+"/"+cfg.name] = s.(*hostSink).moved
				compareRows(t, tb, col.schema, col.rows, false)
			})
		}
	}
}
