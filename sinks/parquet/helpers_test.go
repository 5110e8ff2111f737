package parquet

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// cell is one value to drive into a sink (shared with the CSV tests).
type cell = sinktest.Cell

// drive delivers c to s as the decoder would, each variable-length value
// in two parts (Reserve/Commit, then Write).
func drive(s decode.CellSink, col int, c *cell) { sinktest.Drive(s, col, c, 2) }

func ncol(name string, ti decode.TypeInfo) decode.Column {
	return decode.Column{Name: name, Flags: decode.ColFlagNullable, Type: ti}
}

// writeTable runs rows through a new sink and publishes.
func writeTable(t testing.TB, cfg Config, cols []decode.Column, rows [][]cell) sinks.Stats {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Open(ctx, sinks.ExtractInfo{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Columns(cols, make([]decode.Mode, len(cols))); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for i := range r {
			drive(s, i, &r[i])
		}
		if err := s.EndRow(); err != nil {
			_ = s.Abort(ctx)
			t.Fatal(err)
		}
	}
	st, err := s.Publish(ctx)
	if err != nil {
		_ = s.Abort(ctx)
		t.Fatal(err)
	}
	return st
}

// readBack reads a file with apache/arrow-go's Parquet reader (an
// independent implementation) and renders every value canonically.
type readResult struct {
	names   []string
	logical []string // parquet logical type per leaf column
	rows    [][]string
	groups  int
}

func readBack(t testing.TB, path string) readResult {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("arrow-go open: %v", err)
	}
	defer rdr.Close()
	var res readResult
	sc := rdr.MetaData().Schema
	for i := 0; i < sc.NumColumns(); i++ {
		c := sc.Column(i)
		lt := "none"
		if c.LogicalType() != nil {
			lt = c.LogicalType().String()
		}
		res.logical = append(res.logical, c.Path()+" "+c.PhysicalType().String()+" "+lt)
	}
	res.groups = rdr.NumRowGroups()
	tbl := arrowTable(t, rdr)
	defer tbl.Release()
	n := int(tbl.NumRows())
	res.rows = make([][]string, n)
	for ci := 0; ci < int(tbl.NumCols()); ci++ {
		res.names = append(res.names, tbl.Schema().Field(ci).Name)
		r := 0
		for _, chunk := range tbl.Column(ci).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				res.rows[r] = append(res.rows[r], arrowStr(chunk, i))
				r++
			}
		}
	}
	return res
}

// arrowTable reads the whole file with arrow-go's pqarrow reader.
func arrowTable(t testing.TB, rdr *file.Reader) arrow.Table {
	t.Helper()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow-go read: %v", err)
	}
	return tbl
}

func arrowStr(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "NULL"
	}
	switch a := a.(type) {
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Uint8:
		return "u8:" + strconv.Itoa(int(a.Value(i)))
	case *array.Int16:
		return "i16:" + strconv.Itoa(int(a.Value(i)))
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		return "f32:" + strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Decimal128:
		dt := a.DataType().(*arrow.Decimal128Type)
		return fmt.Sprintf("dec(%d,%d):%s", dt.Precision, dt.Scale, a.Value(i).ToString(dt.Scale))
	case *array.Decimal256:
		dt := a.DataType().(*arrow.Decimal256Type)
		return fmt.Sprintf("dec(%d,%d):%s", dt.Precision, dt.Scale, a.Value(i).ToString(dt.Scale))
	case *array.Date32:
		return "date:" + string(decode.AppendDateText(nil, int32(a.Value(i))+decode.DateFromCivil(1970, 1, 1)))
	case *array.Time64:
		return fmt.Sprintf("time(%s):%d", a.DataType().(*arrow.Time64Type).Unit, a.Value(i))
	case *array.Timestamp:
		dt := a.DataType().(*arrow.TimestampType)
		return fmt.Sprintf("ts(%s,%s):%d", dt.Unit, dt.TimeZone, a.Value(i))
	case *array.FixedSizeBinary:
		return "fixed:" + hex.EncodeToString(a.Value(i))
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return "bin:" + hex.EncodeToString(a.Value(i))
	case *array.List:
		start, end := a.ValueOffsets(i)
		var parts []string
		for k := start; k < end; k++ {
			parts = append(parts, arrowStr(a.ListValues(), int(k)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case array.ExtensionArray:
		return arrowStr(a.Storage(), i)
	}
	return fmt.Sprintf("?%T:%s", a, a.ValueStr(i))
}
