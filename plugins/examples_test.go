package plugins

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// runPlugin streams a table through the real decoder into a plugin sink
// of factory f and publishes it.
func runPlugin(t *testing.T, f sinks.Factory, options map[string]any, tb *sampledb.Table) sinks.Stats {
	t.Helper()
	s, err := f.New(options)
	if err != nil {
		t.Fatal(err)
	}
	st := sinktest.ExportTable(t, s, sinks.ExtractInfo{Name: tb.Name, Schema: tb.Schema, Table: tb.Name, EstimatedRows: tb.Rows}, tb, tb.Rows, false)
	if st.Rows != tb.Rows || len(st.Files) != 1 {
		t.Fatalf("stats %+v, want %d rows in one file", st, tb.Rows)
	}
	return st
}

// eachSampleTable runs, as a subtest per sample table, the plugin that
// options (given a fresh output directory) configures over that table, and
// check on the one file it wrote.
func eachSampleTable(t *testing.T, options func(dir string) map[string]any, check func(t *testing.T, tb *sampledb.Table, path string)) {
	h, _ := testHost(t)
	f := h.Factory()
	for _, tb := range testDB().Tables() {
		t.Run(tb.FullName(), func(t *testing.T) {
			st := runPlugin(t, f, options(t.TempDir()), tb)
			check(t, tb, st.Files[0])
		})
	}
}

// TestArrowIPCPluginSampleDB runs the arrowipc example plugin as a
// process over every sample table and reads its files back with
// arrow-go's IPC file reader: every value equals the sample database's.
func TestArrowIPCPluginSampleDB(t *testing.T) {
	options := func(dir string) map[string]any {
		return map[string]any{"path": bins.arrowipc, "options": map[string]any{"path": dir + "/", "compression": "zstd"}, "batch_bytes": "1MiB"}
	}
	eachSampleTable(t, options, func(t *testing.T, tb *sampledb.Table, path string) {
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		r, err := ipc.NewFileReader(file)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if got, _ := r.Schema().Metadata().GetValue(MetaTable); got != tb.Name {
			t.Errorf("schema metadata table %q", got)
		}
		var rows [][]string
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < int(rec.NumRows()); k++ {
				row := make([]string, rec.NumCols())
				for j := range row {
					row[j] = cellText(rec.Column(j), k)
				}
				rows = append(rows, row)
			}
		}
		compareRows(t, tb, r.Schema(), rows, false)
	})
}

// jsonText renders a value decoded by encoding/json (numbers as
// json.Number) for comparison.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return "n:" + x.String()
	case string:
		return "s:" + x
	case bool:
		return "b:" + strconv.FormatBool(x)
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, jsonText(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("?%T", v)
}

// expectJSON is what the jsonl plugin documents for a sample value, built
// from the generic value with Go's own formatting.
func expectJSON(c *decode.Column, v any) string {
	if v == nil {
		return "null"
	}
	k := c.Kind()
	clock := func(t time.Time) string { return t.Format("2006-01-02T15:04:05.999999999") }
	switch x := v.(type) {
	case bool:
		return "b:" + strconv.FormatBool(x)
	case int64:
		return "n:" + strconv.FormatInt(x, 10)
	case float32:
		return "n:" + strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return "n:" + strconv.FormatFloat(x, 'g', -1, 64)
	case decode.Decimal:
		return "n:" + x.String()
	case decode.Money:
		return "n:" + string(decode.AppendMoneyText(nil, int64(x)))
	case decode.Date:
		return "s:" + time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(x)).Format("2006-01-02")
	case decode.Time:
		return "s:" + time.Unix(0, int64(x)*100).UTC().Format("15:04:05.999999999")
	case decode.DateTime:
		if k == decode.KindDateTime || k == decode.KindSmallDateTime {
			return "s:" + clock(x.Time().Round(time.Millisecond))
		}
		return "s:" + clock(x.Time().Truncate(time.Microsecond))
	case decode.DateTimeOffset:
		return "s:" + clock(x.UTC.Time().Truncate(time.Microsecond)) + "Z"
	case decode.GUID:
		return "s:" + x.String()
	case string:
		return "s:" + x
	case []byte:
		if k == decode.KindBinary || k == decode.KindRowVersion {
			b := make([]byte, max(int(c.Type.Size), 1))
			copy(b, x)
			x = b
		}
		return "s:" + base64.StdEncoding.EncodeToString(x)
	case []float32:
		var parts []string
		for _, f := range x {
			parts = append(parts, "n:"+strconv.FormatFloat(float64(f), 'g', -1, 32))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case decode.Variant:
		return "s:" + expectText(c, x, false)
	}
	return fmt.Sprintf("?%T", v)
}

// TestJSONLPluginSampleDB runs the jsonl example plugin as a process over
// every sample table and parses its files with encoding/json: keys in
// column order, every value as the sample database holds it.
func TestJSONLPluginSampleDB(t *testing.T) {
	options := func(dir string) map[string]any {
		return map[string]any{"path": "jsonl", "options": map[string]any{"path": dir + "/"}}
	}
	eachSampleTable(t, options, func(t *testing.T, tb *sampledb.Table, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		var row []any
		r, bad := int64(0), 0
		for ; sc.Scan() && bad < 10; r++ {
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.UseNumber()
			if _, err := dec.Token(); err != nil { // {
				t.Fatal(err)
			}
			got := map[string]any{}
			var keys []string
			for dec.More() {
				k, _ := dec.Token()
				var v any
				if err := dec.Decode(&v); err != nil {
					t.Fatalf("row %d: %v", r, err)
				}
				keys = append(keys, k.(string))
				got[k.(string)] = v
			}
			row = tb.Row(r, row)
			ki := 0
			for i := range tb.Columns {
				c := &tb.Columns[i]
				if keys[ki] != c.Name {
					t.Fatalf("row %d: key %d is %q, want %q", r, ki, keys[ki], c.Name)
				}
				ki++
				if g, w := jsonText(got[c.Name]), expectJSON(c, row[i]); g != w {
					t.Errorf("row %d %s (%s): got %.100q want %.100q", r, c.Name, decode.SQLTypeName(c), g, w)
					bad++
				}
				switch c.Kind() {
				case decode.KindDateTimeOffset:
					w := "null"
					if row[i] != nil {
						w = "n:" + strconv.Itoa(int(row[i].(decode.DateTimeOffset).OffsetMin))
					}
					if g := jsonText(got[c.Name+"__offset_minutes"]); g != w {
						t.Errorf("row %d %s offset: got %s want %s", r, c.Name, g, w)
						bad++
					}
					ki++
				case decode.KindVariant:
					w := "null"
					if row[i] != nil {
						vr := row[i].(decode.Variant)
						w = "s:" + decode.SQLTypeName(&decode.Column{Type: vr.Type})
					}
					if g := jsonText(got[c.Name+"__type"]); g != w {
						t.Errorf("row %d %s type: got %s want %s", r, c.Name, g, w)
						bad++
					}
					ki++
				}
			}
			if ki != len(keys) {
				t.Fatalf("row %d: %d keys, want %d", r, len(keys), ki)
			}
		}
		if err := sc.Err(); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if bad == 0 && r != tb.Rows {
			t.Fatalf("%d lines, want %d", r, tb.Rows)
		}
	})
}

// Both transports carry the same batches: the gRPC-bytes fallback, asked
// for explicitly, gives the same file, and the log says which was used.
func TestTransports(t *testing.T) {
	h, lb := testHost(t)
	tb, _ := testDB().Table("dbo", "type_matrix")
	var files [][]byte
	for _, tr := range []string{"shm", "grpc"} {
		dir := t.TempDir()
		st := runPlugin(t, h.Factory(), map[string]any{"path": "jsonl", "transport": tr, "options": map[string]any{"path": dir + "/"}}, tb)
		b, err := os.ReadFile(st.Files[0])
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("shm and grpc transports wrote different files")
	}
	if !strings.Contains(lb.String(), "batches through shared memory") {
		t.Errorf("log does not report the shm transport:\n%s", lb)
	}
}
