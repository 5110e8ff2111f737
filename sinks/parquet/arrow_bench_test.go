package parquet

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tdsextract/tdsextract/decode"
)

// BenchmarkParquetArrow writes the rows of BenchmarkParquetRun (the same
// TDS bytes, decoded by decode.Stream into the same typed cell calls)
// through apache/arrow-go's Parquet writer instead of this sink, so the two
// writers can be compared shape by shape on CPU per row, allocations and
// file size:
//
//	go test ./sinks/parquet -run '^$' -bench 'Run/|Arrow/' -cpu 1,2 -count 5 -benchmem
//
// arrowSink is the sink a switch to arrow-go would build: the cell calls
// append to typed arrow builders (the same Parquet types as plan maps,
// decimals through Decimal128 stored as INT32/INT64 where the precision
// allows, the datetimeoffset companion column), and every eighth of a row
// group the rows so far become a record that a second goroutine writes
// into the file's buffered row group (pqarrow.FileWriter.WriteBuffered),
// so decoding and encoding overlap on two cores as in this sink.
//
// To compare the writers and not the encoding choices, the arrow side
// copies this sink's: one run of the sink writes the shape first, and its
// file's first row group gives the rows per row group and, per column,
// dictionary or not, the value encoding and whether it is compressed
// (arrow-go is handed the choices; this sink's trials are in its time).
// Both write zstd at klauspost's fastest level with literal entropy
// coding, 256 KiB pages, version 1 data pages and statistics.
//
// Measured (both benchmarks, -cpu 1,2, 5 runs each, the two interleaved,
// medians, the shared 2-core machine loaded), against this sink with its
// Values filled in place: arrow-go's CPU per row 1.23 to 1.82 times this
// sink's (geomean 1.39), never below 1; wall rows/s 0.36 to 0.76 of this
// sink's (arrow-go encodes a row group's columns on one goroutine); files
// within 0.6%; arrow-go allocates about once per dictionary-encoded
// byte-array value (its hash of each value escapes): 0.77 to 1.8 million
// allocations per run of 200,000 rows, this sink 1,300 to 50,000. So a
// switch would not buy speed.
func BenchmarkParquetArrow(b *testing.B) {
	benchRuns(b, func(b *testing.B, name string, rows int64, buf []byte, dir string) func() int64 {
		props, groupRows := arrowPropsLike(b, dir, name, rows, buf)
		return func() int64 { return arrowRun(b, filepath.Join(dir, "arrow.parquet"), props, groupRows, buf) }
	})
}

// arrowRun writes one extract through arrowSink into path and returns the
// file's size.
func arrowRun(b testing.TB, path string, props *apq.WriterProperties, groupRows int64, buf []byte) int64 {
	s := &arrowSink{path: path, props: props, chunk: max(groupRows/8, 1)}
	feedAll(b, s, buf)
	size, err := s.close()
	if err != nil {
		b.Fatal(err)
	}
	return size
}

// TestArrowSinkSameRows checks that BenchmarkParquetArrow compares like
// with like: on every shape, arrowSink's file reads back (with arrow-go's
// reader) as the same columns, Parquet types and values as this sink's.
func TestArrowSinkSameRows(t *testing.T) {
	db := runDB()
	for _, sh := range runShapes {
		t.Run(sh.name, func(t *testing.T) {
			rows := min(sh.rows, 3000)
			buf := runInput(db, sh.name, rows)
			dir := t.TempDir()
			props, groupRows := arrowPropsLike(t, dir, sh.name, rows, buf)
			arrowRun(t, filepath.Join(dir, "arrow.parquet"), props, groupRows, buf)
			want, got := readBack(t, filepath.Join(dir, "sink.parquet")), readBack(t, filepath.Join(dir, "arrow.parquet"))
			if !reflect.DeepEqual(got.names, want.names) || len(got.logical) != len(want.logical) {
				t.Fatalf("columns differ:\narrow %v\nsink  %v", got.names, want.names)
			}
			for i := range got.logical {
				if got.logical[i] != want.logical[i] {
					t.Fatalf("column types differ: arrow %s, sink %s", got.logical[i], want.logical[i])
				}
			}
			if len(got.rows) != int(rows) || !reflect.DeepEqual(got.rows, want.rows) {
				for r := range min(len(got.rows), len(want.rows)) {
					if !reflect.DeepEqual(got.rows[r], want.rows[r]) {
						t.Fatalf("row %d differs:\narrow %q\nsink  %q", r, got.rows[r], want.rows[r])
					}
				}
				t.Fatalf("arrow wrote %d rows, the sink %d, of %d", len(got.rows), len(want.rows), rows)
			}
		})
	}
}

// arrowPropsLike writes the shape once with this sink and returns arrow-go
// writer properties making the choices its file shows, and the rows of its
// first row group.
func arrowPropsLike(b testing.TB, dir, name string, rows int64, buf []byte) (*apq.WriterProperties, int64) {
	stats := sinkRun(b, filepath.Join(dir, "sink.parquet"), name, rows, buf)
	rdr, err := file.OpenParquetFile(stats.Files[0], false)
	if err != nil {
		b.Fatal(err)
	}
	defer rdr.Close()
	rg := rdr.MetaData().RowGroup(0)
	opts := []apq.WriterProperty{
		apq.WithCompression(compress.Codecs.Zstd), apq.WithCompressionLevel(1),
		apq.WithDataPageSize(DefaultPageBytes), apq.WithDataPageVersion(apq.DataPageV1),
		apq.WithMaxRowGroupLength(rg.NumRows()), apq.WithStoreDecimalAsInteger(true),
		apq.WithDictionaryDefault(false),
	}
	var chosen []string
	for i := 0; i < rg.NumColumns(); i++ {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			b.Fatal(err)
		}
		path := cc.PathInSchema().String()
		enc := apq.Encodings.Plain
		dict := false
		for _, e := range cc.Encodings() {
			switch e {
			case apq.Encodings.RLEDict, apq.Encodings.PlainDict:
				dict = true
			case apq.Encodings.DeltaBinaryPacked, apq.Encodings.ByteStreamSplit, apq.Encodings.DeltaLengthByteArray, apq.Encodings.DeltaByteArray:
				enc = e
			}
		}
		if dict {
			// the sink's trial chose it: no second opinion
			opts = append(opts, apq.WithDictionaryFor(path, true), apq.WithDictionaryCostFallbackFor(path, false))
		} else if enc != apq.Encodings.Plain {
			opts = append(opts, apq.WithEncodingFor(path, enc))
		}
		if cc.Compression() == compress.Codecs.Uncompressed {
			opts = append(opts, apq.WithCompressionFor(path, compress.Codecs.Uncompressed))
		}
		chosen = append(chosen, fmt.Sprintf("%s:%v/dict=%v/%v", path, enc, dict, cc.Compression()))
	}
	if testing.Verbose() && len(chosen) < 20 {
		b.Logf("%s: %d rows per row group, %d row groups, %d bytes; %s", name, rg.NumRows(), rdr.NumRowGroups(), stats.Bytes, strings.Join(chosen, " "))
	}
	return apq.NewWriterProperties(opts...), rg.NumRows()
}

// arrowCol is one source column: its plan and the typed builder(s) the cell
// calls append to.
type arrowCol struct {
	kind  kind
	ints  uint8 // kInt32: 8 tinyint, 16 smallint, 32 int
	bool_ *array.BooleanBuilder
	u8    *array.Uint8Builder
	i16   *array.Int16Builder
	i32   *array.Int32Builder
	i64   *array.Int64Builder
	f32   *array.Float32Builder
	f64   *array.Float64Builder
	dec   *array.Decimal128Builder
	date  *array.Date32Builder
	t64   *array.Time64Builder
	ts    *array.TimestampBuilder
	off   *array.Int16Builder // datetimeoffset: the offset column
	bin   *array.BinaryBuilder
	fsb   *array.FixedSizeBinaryBuilder
	// a value arriving in parts (transcoded text) is gathered here
	part []byte
}

// arrowSink is a decode.CellSink writing through arrow-go (see
// BenchmarkParquetArrow).
type arrowSink struct {
	path  string
	props *apq.WriterProperties
	chunk int64

	cols   []arrowCol
	rb     *array.RecordBuilder
	schema *arrow.Schema
	rows   int64
	f      *os.File
	fw     *pqarrow.FileWriter
	recs   chan arrow.RecordBatch
	done   chan error
	err    error
}

var _ decode.BytesSink = (*arrowSink)(nil)

func (s *arrowSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	cfg := Config{}
	cfg.applyDefaults()
	var fields []arrow.Field
	s.cols = make([]arrowCol, len(cols))
	for i := range cols {
		p := cfg.plan(&cols[i])
		c := &s.cols[i]
		c.kind = p.kind
		var t arrow.DataType
		switch p.kind {
		case kBool:
			t = arrow.FixedWidthTypes.Boolean
		case kInt32:
			switch cols[i].Kind() {
			case decode.KindTinyInt:
				t, c.ints = arrow.PrimitiveTypes.Uint8, 8
			case decode.KindSmallInt:
				t, c.ints = arrow.PrimitiveTypes.Int16, 16
			default:
				t, c.ints = arrow.PrimitiveTypes.Int32, 32
			}
		case kInt64:
			t = arrow.PrimitiveTypes.Int64
		case kFloat:
			t = arrow.PrimitiveTypes.Float32
		case kDouble:
			t = arrow.PrimitiveTypes.Float64
		case kDecInt32, kDecInt64, kDecFixed:
			prec := int32(cols[i].Type.Precision)
			if prec < 1 || prec > 38 {
				prec = 38
			}
			t = &arrow.Decimal128Type{Precision: prec, Scale: int32(cols[i].Type.Scale)}
		case kMoneyInt64:
			t = &arrow.Decimal128Type{Precision: 10, Scale: 4}
		case kMoneyFixed:
			t = &arrow.Decimal128Type{Precision: 19, Scale: 4}
		case kDate:
			t = arrow.FixedWidthTypes.Date32
		case kTimeNanos:
			t = arrow.FixedWidthTypes.Time64ns
		case kTimeMicros:
			t = arrow.FixedWidthTypes.Time64us
		case kTSNanos:
			t = &arrow.TimestampType{Unit: arrow.Nanosecond}
		case kTSMicros:
			t = &arrow.TimestampType{Unit: arrow.Microsecond}
		case kTSMillis:
			t = &arrow.TimestampType{Unit: arrow.Millisecond}
		case kDTONanos:
			t = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
		case kDTOMicros:
			t = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case kUUID:
			t = extensions.NewUUIDType()
		case kFixedBytes:
			t = &arrow.FixedSizeBinaryType{ByteWidth: p.fixedLen}
		case kString:
			t = arrow.BinaryTypes.String
		case kBytes:
			t = arrow.BinaryTypes.Binary
		default:
			return fmt.Errorf("arrow bench: column %q: kind %d not covered", cols[i].Name, p.kind)
		}
		fields = append(fields, arrow.Field{Name: cols[i].Name, Type: t, Nullable: p.optional})
		if p.offset {
			fields = append(fields, arrow.Field{Name: cols[i].Name + "__offset_minutes", Type: arrow.PrimitiveTypes.Int16, Nullable: p.optional})
		}
	}
	s.schema = arrow.NewSchema(fields, nil)
	s.rb = array.NewRecordBuilder(memory.DefaultAllocator, s.schema)
	f := 0
	for i := range s.cols {
		c := &s.cols[i]
		switch x := s.rb.Field(f).(type) {
		case *array.BooleanBuilder:
			c.bool_ = x
		case *array.Uint8Builder:
			c.u8 = x
		case *array.Int16Builder:
			c.i16 = x
		case *array.Int32Builder:
			c.i32 = x
		case *array.Int64Builder:
			c.i64 = x
		case *array.Float32Builder:
			c.f32 = x
		case *array.Float64Builder:
			c.f64 = x
		case *array.Decimal128Builder:
			c.dec = x
		case *array.Date32Builder:
			c.date = x
		case *array.Time64Builder:
			c.t64 = x
		case *array.TimestampBuilder:
			c.ts = x
		case *array.StringBuilder:
			c.bin = x.BinaryBuilder
		case *array.BinaryBuilder:
			c.bin = x
		case *array.FixedSizeBinaryBuilder:
			c.fsb = x
		case *extensions.UUIDBuilder:
			c.fsb = x.StorageBuilder().(*array.FixedSizeBinaryBuilder)
		}
		f++
		if c.kind == kDTOMicros || c.kind == kDTONanos {
			c.off = s.rb.Field(f).(*array.Int16Builder)
			f++
		}
	}
	var err error
	if s.f, err = os.Create(s.path); err != nil {
		return err
	}
	if s.fw, err = pqarrow.NewFileWriter(s.schema, syncedFile{s.f}, s.props, pqarrow.DefaultWriterProps()); err != nil {
		return err
	}
	s.recs, s.done = make(chan arrow.RecordBatch, 1), make(chan error, 1)
	go func() {
		var err error
		for rec := range s.recs {
			if err == nil {
				err = s.fw.WriteBuffered(rec)
			}
			rec.Release()
		}
		s.done <- err
	}()
	return nil
}

func (s *arrowSink) Null(col int) {
	c := &s.cols[col]
	switch {
	case c.bool_ != nil:
		c.bool_.AppendNull()
	case c.u8 != nil:
		c.u8.AppendNull()
	case c.i16 != nil:
		c.i16.AppendNull()
	case c.i32 != nil:
		c.i32.AppendNull()
	case c.i64 != nil:
		c.i64.AppendNull()
	case c.f32 != nil:
		c.f32.AppendNull()
	case c.f64 != nil:
		c.f64.AppendNull()
	case c.dec != nil:
		c.dec.AppendNull()
	case c.date != nil:
		c.date.AppendNull()
	case c.t64 != nil:
		c.t64.AppendNull()
	case c.ts != nil:
		c.ts.AppendNull()
		if c.off != nil {
			c.off.AppendNull()
		}
	case c.bin != nil:
		c.bin.AppendNull()
	case c.fsb != nil:
		c.fsb.AppendNull()
	}
}

func (s *arrowSink) Bool(col int, v bool) { s.cols[col].bool_.Append(v) }

func (s *arrowSink) Int(col int, v int64) {
	c := &s.cols[col]
	switch c.ints {
	case 32:
		c.i32.Append(int32(v))
	case 16:
		c.i16.Append(int16(v))
	case 8:
		c.u8.Append(uint8(v))
	default:
		c.i64.Append(v)
	}
}

func (s *arrowSink) Float32(col int, v float32) {
	c := &s.cols[col]
	if c.f32 != nil {
		c.f32.Append(v)
	} else {
		c.f64.Append(float64(v))
	}
}

func (s *arrowSink) Float64(col int, v float64) { s.cols[col].f64.Append(v) }

func (s *arrowSink) Decimal(col int, v decode.Decimal) {
	n := decimal128.New(int64(v.Hi), v.Lo)
	if v.Neg {
		n = n.Negate()
	}
	s.cols[col].dec.Append(n)
}

func (s *arrowSink) Money(col int, v int64) { s.cols[col].dec.Append(decimal128.FromI64(v)) }

func (s *arrowSink) Date(col int, days int32) {
	s.cols[col].date.Append(arrow.Date32(days - epochDays))
}

func (s *arrowSink) Time(col int, ticks int64) {
	c := &s.cols[col]
	if c.kind == kTimeNanos {
		c.t64.Append(arrow.Time64(ticks * 100))
	} else {
		c.t64.Append(arrow.Time64(ticks / 10))
	}
}

// ts converts as this sink's timestamp does (MICROS truncates, MILLIS
// rounds as SQL Server shows datetime).
func (c *arrowCol) tsValue(v decode.DateTime) arrow.Timestamp {
	t := ticks100(v)
	switch c.kind {
	case kTSNanos, kDTONanos:
		return arrow.Timestamp(t * 100)
	case kTSMillis:
		return arrow.Timestamp(floorDiv(t+5000, 10000))
	}
	return arrow.Timestamp(floorDiv(t, 10))
}

func (s *arrowSink) DateTime(col int, v decode.DateTime) {
	c := &s.cols[col]
	c.ts.Append(c.tsValue(v))
}

func (s *arrowSink) DateTimeOffset(col int, v decode.DateTimeOffset) {
	c := &s.cols[col]
	c.ts.Append(c.tsValue(v.UTC))
	c.off.Append(v.OffsetMin)
}

func (s *arrowSink) GUID(col int, v decode.GUID) { s.cols[col].fsb.Append(v[:]) }

func (s *arrowSink) Variant(col int, ti *decode.TypeInfo) {}

func (s *arrowSink) Bytes(col int, p []byte) {
	c := &s.cols[col]
	if c.bin != nil {
		c.bin.Append(p)
	} else {
		c.fsb.Append(p)
	}
}

func (s *arrowSink) BeginValue(col int, size int64) { s.cols[col].part = s.cols[col].part[:0] }

func (s *arrowSink) Reserve(col int, n int) []byte {
	c := &s.cols[col]
	c.part = growTo(c.part, len(c.part)+n)
	return c.part[len(c.part) : len(c.part)+n]
}

func (s *arrowSink) Commit(col int, n int) {
	c := &s.cols[col]
	c.part = c.part[:len(c.part)+n]
}

func (s *arrowSink) Write(col int, p []byte) {
	c := &s.cols[col]
	c.part = append(c.part, p...)
}

func (s *arrowSink) EndValue(col int) { s.Bytes(col, s.cols[col].part) }

func (s *arrowSink) EndRow() error {
	if s.err != nil {
		return s.err
	}
	s.rows++
	if s.rows%s.chunk == 0 {
		s.flush()
	}
	return s.err
}

// flush hands the rows built so far to the writing goroutine.
func (s *arrowSink) flush() {
	select {
	case err := <-s.done: // the writer stopped early
		s.err = err
		return
	case s.recs <- s.rb.NewRecordBatch():
	}
}

// close writes the last rows, waits for the writer and finishes the file,
// returning its size.
func (s *arrowSink) close() (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.rows%s.chunk != 0 {
		s.recs <- s.rb.NewRecordBatch()
	}
	close(s.recs)
	if err := <-s.done; err != nil {
		return 0, err
	}
	s.rb.Release()
	if err := s.fw.Close(); err != nil { // fsyncs and closes s.f, as this sink's Publish
		return 0, err
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// syncedFile is fsynced when closed, as this sink's files are.
type syncedFile struct{ *os.File }

func (f syncedFile) Close() error {
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}
