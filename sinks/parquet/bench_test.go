package parquet

import (
	"context"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// The benchmarks run each shape two ways in the same process:
//
//   - tdsextract: pre-encoded TDS rows (COLMETADATA + ROW tokens from
//     sampledb) decoded by decode.Stream straight into this sink, which
//     writes Parquet (zstd by default) to a real file in b.TempDir().
//   - generic_writer: what a Go user writes today: every row as boxed
//     values (the []any a database/sql driver such as go-mssqldb hands
//     out; here sampledb's generic Row, so the driver's own decoding cost
//     is NOT counted, which favours this side), copied into a struct per
//     row, written with parquet-go's GenericWriter in batches of 1024.
//
// Both report rows/s and allocs/row (b.ReportAllocs divided by rows).
//
// The sink side warms up over three 32 MiB row groups first (its batches
// grow to their steady size once, then are reused).
//
//	go test ./sinks/parquet/ -run '^$' -bench . -benchtime 20x
func BenchmarkParquetSink(b *testing.B) {
	db := sinktest.BenchDB()
	for _, comp := range []string{"zstd", "none"} {
		for _, sh := range sinktest.BenchShapes {
			b.Run(sh.Name+"/"+comp, func(b *testing.B) {
				tb, _ := db.Table("dbo", sh.Name)
				// 32 MiB row groups so that several cycle within a short run
				s, err := New(Config{Path: b.TempDir(), Compression: comp, RowGroupBytes: 32 << 20})
				if err != nil {
					b.Fatal(err)
				}
				// warm up: the batches reach their steady-state size after
				// the first row groups; measure the steady state
				sinktest.BenchSink(b, s, tb, sh.Block, func(feed func()) {
					for s.groups < 3 {
						feed()
					}
				})
			})
		}
	}
}

// goField is the field type a Go user would declare for a column read
// through database/sql.
func goField(c *decode.Column) reflect.Type {
	switch c.Kind().Class() {
	case decode.ClassBool:
		return reflect.TypeFor[*bool]()
	case decode.ClassInteger:
		return reflect.TypeFor[*int64]()
	case decode.ClassFloat:
		return reflect.TypeFor[*float64]()
	case decode.ClassDate, decode.ClassTime, decode.ClassDateTime, decode.ClassDateTimeOffset:
		return reflect.TypeFor[*time.Time]()
	case decode.ClassBinary, decode.ClassGUID:
		return reflect.TypeFor[[]byte]()
	}
	return reflect.TypeFor[*string]() // text, and decimals/money as go-mssqldb returns them (text)
}

func BenchmarkParquetGenericWriter(b *testing.B) {
	db := sinktest.BenchDB()
	for _, sh := range sinktest.BenchShapes {
		b.Run(sh.Name+"/zstd", func(b *testing.B) {
			tb, _ := db.Table("dbo", sh.Name)
			var fields []reflect.StructField
			for i := range tb.Columns {
				c := &tb.Columns[i]
				fields = append(fields, reflect.StructField{Name: "F" + strconv.Itoa(i), Type: goField(c),
					Tag: reflect.StructTag(`parquet:"` + c.Name + `,optional"`)})
			}
			st := reflect.StructOf(fields)
			schema := pq.SchemaOf(reflect.New(st).Elem().Interface())
			w := pq.NewGenericWriter[any](io.Discard, schema, pq.Compression(&pq.Zstd))
			var row []any
			batch := make([]any, 0, 1024)
			set := func(f reflect.Value, v any) {
				switch x := v.(type) {
				case nil:
				case bool:
					f.Set(reflect.ValueOf(&x))
				case int64:
					f.Set(reflect.ValueOf(&x))
				case float32:
					y := float64(x)
					f.Set(reflect.ValueOf(&y))
				case float64:
					f.Set(reflect.ValueOf(&x))
				case string:
					f.Set(reflect.ValueOf(&x))
				case []byte:
					f.Set(reflect.ValueOf(append([]byte(nil), x...)))
				case decode.GUID:
					f.Set(reflect.ValueOf(append([]byte(nil), x[:]...)))
				case decode.Decimal:
					s := x.String()
					f.Set(reflect.ValueOf(&s))
				case decode.Money:
					s := string(decode.AppendMoneyText(nil, int64(x)))
					f.Set(reflect.ValueOf(&s))
				case decode.DateTime:
					t := x.Time()
					f.Set(reflect.ValueOf(&t))
				case decode.DateTimeOffset:
					t := x.UTC.Time()
					f.Set(reflect.ValueOf(&t))
				case decode.Date:
					t := decode.DateTime{Days: int32(x)}.Time()
					f.Set(reflect.ValueOf(&t))
				case decode.Time:
					t := decode.DateTime{Ticks: int64(x)}.Time()
					f.Set(reflect.ValueOf(&t))
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := sinktest.CPUTime()
			var next int64
			for i := 0; i < b.N; i++ {
				for r := int64(0); r < sh.Block; r++ {
					row = tb.Row(next%sh.Block, row[:0])
					next++
					v := reflect.New(st).Elem()
					for c := range row {
						set(v.Field(c), row[c])
					}
					batch = append(batch, v.Interface())
					if len(batch) == cap(batch) {
						if _, err := w.Write(batch); err != nil {
							b.Fatal(err)
						}
						batch = batch[:0]
					}
				}
			}
			if _, err := w.Write(batch); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			sinktest.ReportRate(b, float64(b.N)*float64(sh.Block), cpu0)
		})
	}
}

// BenchmarkParquetRun is one whole extract per iteration, as the bench
// harness's parquet mode times it: a fresh sink with the default options,
// the rows decoded from pre-encoded TDS bytes, the encodings chosen on the
// first row group, the file published. It is the one to profile:
//
//	go test ./sinks/parquet/ -run '^$' -bench Run/lineitem -benchtime 5x -cpuprofile /tmp/cpu.out
func BenchmarkParquetRun(b *testing.B) {
	benchRuns(b, func(b *testing.B, name string, rows int64, buf []byte, dir string) func() int64 {
		return func() int64 { return sinkRun(b, dir, name, rows, buf).Bytes }
	})
}

// benchRuns runs, on every shape of runShapes, the function prepare
// returns once per iteration (one whole extract: the TDS bytes buf
// decoded and written to a file in dir, whose size it returns), and
// reports rows/s, CPU ns per row and the file's size, so that a change of
// the encoding choices shows beside its speed.
func benchRuns(b *testing.B, prepare func(b *testing.B, name string, rows int64, buf []byte, dir string) func() int64) {
	db := runDB()
	for _, sh := range runShapes {
		b.Run(sh.name, func(b *testing.B) {
			buf := runInput(db, sh.name, sh.rows)
			run := prepare(b, sh.name, sh.rows, buf, b.TempDir())
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := sinktest.CPUTime()
			var size int64
			for i := 0; i < b.N; i++ {
				size = run()
			}
			b.StopTimer()
			sinktest.ReportRate(b, float64(b.N)*float64(sh.rows), cpu0)
			b.ReportMetric(float64(size), "file-bytes")
		})
	}
}

// sinkRun writes one extract with a fresh sink of the default options
// into dir: buf decoded into it, the file published.
func sinkRun(b testing.TB, dir, name string, rows int64, buf []byte) sinks.Stats {
	s, err := New(Config{Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	_ = s.Open(ctx, sinks.ExtractInfo{Name: name, EstimatedRows: rows}) // as the engine passes the catalog's count
	feedAll(b, s, buf)
	stats, err := s.Publish(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return stats
}

// feedAll decodes the TDS bytes buf into sink.
func feedAll(b testing.TB, sink decode.CellSink, buf []byte) {
	st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
	_ = st.SetSink(sink)
	sinktest.Feed(b, st, buf)
}

// runShapes are the shapes and row counts of BenchmarkParquetRun and
// BenchmarkParquetArrow (the bench harness's parquet mode).
var runShapes = []struct {
	name string
	rows int64
}{{"lineitem", 200000}, {"temporal", 200000}, {"poc48", 200000}, {"wide601", 10000}, {"sales.orders", 200000}, {"sales.order_lines", 200000}}

func runDB() *sampledb.DB {
	return sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"poc48": 1 << 40, "wide601": 1 << 40, "temporal": 1 << 40, "lineitem": 1 << 40,
		"sales.orders": 200000, "sales.order_lines": 200000}})
}

// runInput is the TDS bytes of a shape's first rows: COLMETADATA and the
// ROW tokens, as the server sends them.
func runInput(db *sampledb.DB, shape string, rows int64) []byte {
	schema, name, ok := strings.Cut(shape, ".")
	if !ok {
		schema, name = "dbo", shape
	}
	tb, _ := db.Table(schema, name)
	buf := decode.AppendColMetadata(nil, tb.Columns)
	return tb.AppendRows(buf, 0, rows, false)
}
