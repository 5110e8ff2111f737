package decode_test

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/cputime"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// Decode benchmarks over in-memory streams of the standard workload shapes
// (poc48, odbc5, wide601, lob, temporal, lineitem: see sampledb's doc),
// built by the sample database's encoder (internal/sampleserver/sampledb), each beside a
// memmove of the same bytes. The stream's COLMETADATA is decoded once; each
// iteration decodes all rows and the DONE into colSink, a columnar sink that
// keeps values in its own reused buffers (as a Parquet or Arrow batch would).
//
//	go test ./decode/ -run '^$' -bench 'Stream' -benchtime 2s -count 5

// benchShape is one benchmark workload.
type benchShape struct {
	table   string
	nbc     bool
	rows    int64
	discard bool // nil sink: every column skipped
	nop     bool // a sink whose methods do nothing: the cost of the calls alone
	nopB    bool // the same with the BytesSink fast path
	slow    bool // colSink without the BytesSink fast path (4 calls per varchar)
	big     bool // a stream far larger than the caches (memmove from DRAM)
}

var benchShapes = []benchShape{
	{table: "poc48", nbc: false, rows: 4096},
	{table: "poc48", nbc: true, rows: 4096},
	{table: "odbc5", nbc: false, rows: 4096},
	{table: "wide601", nbc: false, rows: 128},
	{table: "lob", nbc: false, rows: 512},
	{table: "lob_nvarchar", nbc: false, rows: 16},
	{table: "temporal", nbc: false, rows: 4096},
}

func (s benchShape) name() string {
	n := s.table
	for _, f := range [...]struct {
		on     bool
		suffix string
	}{{s.nbc, "/nbc"}, {s.discard, "/discard"}, {s.nop, "/nopsink"}, {s.nopB, "/nopbytes"}, {s.slow, "/4call"}, {s.big, "/dram"}} {
		if f.on {
			n += f.suffix
		}
	}
	return n
}

var benchDB = sampledb.New(sampledb.Config{Seed: 1})

// buildShape returns the COLMETADATA token and the rows (+ DONE) of a shape.
func buildShape(tb testing.TB, s benchShape) (meta, rows []byte, ncols int) {
	t, ok := benchDB.Table("dbo", s.table)
	if !ok {
		tb.Fatalf("sample table %s missing", s.table)
	}
	n := min(s.rows, t.Rows)
	meta = decode.AppendColMetadata(nil, t.Columns)
	rows = t.AppendRows(nil, 0, n, s.nbc)
	rows = decode.Done{Token: decode.TokenDone, Status: decode.DoneCount, CurCmd: 0xC1, RowCount: uint64(n)}.Append(rows)
	return meta, rows, len(t.Columns)
}

// colSink is a columnar sink in the style of an Arrow or Parquet batch
// builder: per column a fixed-capacity vector of 1024 fixed-size values (as
// uint64 words, written by row index), a validity bitmap, and a byte arena
// with end offsets for variable-length values. Every 1024 rows the batch is
// "flushed": a checksum is folded over every value and the buffers are
// reused, so steady state allocates nothing.
type colSink struct {
	cols  []sinkCol
	row   int // row within the batch
	rows  int
	bytes int // bytes in the arenas
	sum   uint64
}

const sinkBatch = 1024

type sinkCol struct {
	words [sinkBatch]uint64
	valid [sinkBatch / 64]uint64
	data  []byte
	offs  [sinkBatch + 1]int32
}

func (s *colSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	s.cols = make([]sinkCol, len(cols))
	for i := range s.cols {
		s.cols[i].data = make([]byte, 0, 1<<16)
	}
	s.row = 0
	return nil
}

func (s *colSink) word(col int, v uint64) {
	c := &s.cols[col]
	c.words[s.row&(sinkBatch-1)] = v
	c.valid[(s.row>>6)&(sinkBatch/64-1)] |= 1 << (s.row & 63)
}

func (s *colSink) Null(col int) {}
func (s *colSink) Bool(col int, v bool) {
	if v {
		s.word(col, 1)
	} else {
		s.word(col, 0)
	}
}
func (s *colSink) Int(col int, v int64)       { s.word(col, uint64(v)) }
func (s *colSink) Float32(col int, v float32) { s.word(col, uint64(math.Float32bits(v))) }
func (s *colSink) Float64(col int, v float64) { s.word(col, math.Float64bits(v)) }
func (s *colSink) Decimal(col int, v decode.Decimal) {
	w := v.Lo ^ v.Hi<<1
	if v.Neg {
		w = ^w
	}
	s.word(col, w)
}
func (s *colSink) Money(col int, v int64)    { s.word(col, uint64(v)) }
func (s *colSink) Date(col int, days int32)  { s.word(col, uint64(days)) }
func (s *colSink) Time(col int, ticks int64) { s.word(col, uint64(ticks)) }
func (s *colSink) DateTime(col int, v decode.DateTime) {
	s.word(col, uint64(v.Days)*decode.TicksPerDay+uint64(v.Ticks))
}
func (s *colSink) DateTimeOffset(col int, v decode.DateTimeOffset) {
	s.word(col, (uint64(v.UTC.Days)*decode.TicksPerDay+uint64(v.UTC.Ticks))^uint64(v.OffsetMin)<<50)
}
func (s *colSink) GUID(col int, v decode.GUID) {
	var w uint64
	for _, b := range v {
		w = w*31 + uint64(b)
	}
	s.word(col, w)
}
func (s *colSink) Variant(col int, ti *decode.TypeInfo) { s.sum += uint64(ti.Type) }
func (s *colSink) BeginValue(col int, size int64)       {}
func (s *colSink) Reserve(col int, n int) []byte {
	c := &s.cols[col]
	if cap(c.data)-len(c.data) < n {
		nd := make([]byte, len(c.data), 2*cap(c.data)+n)
		copy(nd, c.data)
		c.data = nd
	}
	return c.data[len(c.data) : len(c.data)+n]
}
func (s *colSink) Commit(col int, n int) {
	c := &s.cols[col]
	c.data = c.data[:len(c.data)+n]
	s.bytes += n
}
func (s *colSink) Write(col int, p []byte) {
	c := &s.cols[col]
	c.data = append(c.data, p...)
	s.bytes += len(p)
}
func (s *colSink) EndValue(col int) {
	c := &s.cols[col]
	r := s.row & (sinkBatch - 1)
	c.offs[r+1] = int32(len(c.data))
	c.valid[r>>6] |= 1 << (r & 63)
}
func (s *colSink) EndRow() error {
	s.rows++
	s.row++
	// Variable-length columns: rows without a value (NULL) repeat the
	// previous end offset.
	if s.row == sinkBatch || s.big() {
		s.flush()
	}
	return nil
}

// big reports a batch whose arenas passed 4 MiB: batches are bounded in
// bytes as well as rows, as a real columnar writer's are.
func (s *colSink) big() bool { return s.bytes > 4<<20 }

// flush folds the batch into the checksum and resets it.
func (s *colSink) flush() {
	for i := range s.cols {
		c := &s.cols[i]
		for r := 0; r < s.row; r++ {
			if c.valid[r>>6]&(1<<(r&63)) != 0 {
				s.sum = s.sum*31 + c.words[r] + uint64(c.offs[r+1])
			}
		}
		for _, b := range c.data {
			s.sum = s.sum*31 + uint64(b)
		}
		c.data = c.data[:0]
		c.valid = [sinkBatch / 64]uint64{}
	}
	s.row, s.bytes = 0, 0
}

// nopBytesSink is decode.Nop with the BytesSink fast path.
type nopBytesSink struct{ decode.Nop }

func (nopBytesSink) Bytes(int, []byte) {}

// newBenchStream returns a Stream with the shape's columns decoded.
func newBenchStream(tb testing.TB, meta []byte, sink decode.CellSink) *decode.Stream {
	s := decode.NewStream(decode.StreamOptions{})
	s.SetSink(sink)
	if _, ev, err := s.Next(meta); err != nil || ev != decode.EventColMetadata {
		tb.Fatalf("COLMETADATA: %v %v", ev, err)
	}
	return s
}

// decodeRows decodes every row of rows and the final DONE; it returns the
// row count.
func decodeRows(tb testing.TB, s *decode.Stream, rows []byte) int {
	n := 0
	for len(rows) > 0 {
		k, ev, err := s.Next(rows)
		if err != nil {
			tb.Fatalf("Next: %v", err)
		}
		rows = rows[k:]
		if ev == decode.EventRow {
			n++
		}
	}
	return n
}

func BenchmarkStream(b *testing.B) {
	for _, shape := range benchShapes {
		meta, rows, ncols := buildShape(b, shape)
		nrows := 0
		b.Run(shape.name()+"/decode", func(b *testing.B) {
			sink := &colSink{}
			s := newBenchStream(b, meta, sink)
			b.SetBytes(int64(len(rows)))
			b.ReportAllocs()
			for b.Loop() {
				nrows = decodeRows(b, s, rows)
			}
			perRow := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(nrows)
			b.ReportMetric(perRow, "ns/row")
			b.ReportMetric(perRow/float64(ncols), "ns/cell")
		})
		b.Run(shape.name()+"/memmove", func(b *testing.B) {
			dst := make([]byte, len(rows))
			b.SetBytes(int64(len(rows)))
			b.ReportAllocs()
			for b.Loop() {
				copy(dst, rows)
			}
			if nrows > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nrows), "ns/row")
			}
		})
	}
}

// BenchmarkStreamDiscard decodes poc48 with a nil sink (every column
// skipped): the cost of walking the wire format alone.
func BenchmarkStreamDiscard(b *testing.B) {
	meta, rows, _ := buildShape(b, benchShapes[0])
	s := newBenchStream(b, meta, nil)
	b.SetBytes(int64(len(rows)))
	b.ReportAllocs()
	for b.Loop() {
		decodeRows(b, s, rows)
	}
}

// Zero allocations per row in steady state, for every shape, with the
// columnar sink and with the nil (discard) sink.
func TestStreamShapesNoAllocs(t *testing.T) {
	for _, shape := range benchShapes {
		t.Run(shape.name(), func(t *testing.T) {
			meta, rows, _ := buildShape(t, shape)
			sink := &colSink{}
			s := newBenchStream(t, meta, sink)
			decodeRows(t, s, rows) // warm up the sink's buffers
			if a := testing.AllocsPerRun(3, func() { decodeRows(t, s, rows) }); a != 0 {
				t.Fatalf("%v allocations per pass of %d bytes", a, len(rows))
			}
			d := newBenchStream(t, meta, nil)
			if a := testing.AllocsPerRun(3, func() { decodeRows(t, d, rows) }); a != 0 {
				t.Fatalf("nil sink: %v allocations per pass", a)
			}
		})
	}
}

// The shapes decode identically whole and fed in pieces, checked by the
// columnar sink's checksum.
func TestStreamShapesPieces(t *testing.T) {
	for _, shape := range benchShapes {
		meta, rows, _ := buildShape(t, shape)
		whole := &colSink{}
		s := newBenchStream(t, meta, whole)
		want := decodeRows(t, s, rows)
		whole.flush()
		for _, piece := range []int{504, 4088, 32759} {
			sink := &colSink{}
			s := newBenchStream(t, meta, sink)
			got, buf, rest := 0, []byte(nil), rows
			for {
				n, ev, err := s.Next(buf)
				buf = buf[:copy(buf, buf[n:])]
				if err == decode.ErrNeedMore {
					if len(rest) == 0 {
						break
					}
					k := min(piece, len(rest))
					buf, rest = append(buf, rest[:k]...), rest[k:]
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if ev == decode.EventRow {
					got++
				}
			}
			sink.flush()
			if got != want || sink.sum != whole.sum || sink.rows != whole.rows {
				t.Fatalf("%s piece %d: %d rows sum %x, want %d rows sum %x", shape.name(), piece, got, sink.sum, want, whole.sum)
			}
		}
	}
}

func ExampleStream() {
	cols := []decode.Column{{Name: "n", Type: decode.TypeInfo{Type: decode.TypeIntN, Size: 4}}}
	buf := decode.AppendColMetadata(nil, cols)
	buf, _ = decode.AppendRow(buf, cols, []any{int64(42)})
	var c decode.Capture
	s := decode.NewStream(decode.StreamOptions{})
	s.SetSink(&c)
	for len(buf) > 0 {
		n, ev, err := s.Next(buf)
		if err != nil {
			break
		}
		buf = buf[n:]
		fmt.Println(ev)
	}
	fmt.Println(c.Rows)
	// Output:
	// ColMetadata
	// Row
	// [[42]]
}

// threadCPU returns the CPU time consumed by the calling OS thread. On this
// shared machine (2 cores, many processes) wall-clock time mostly measures
// the scheduler; the thread's own CPU time does not.
func threadCPU() int64 {
	d, _ := cputime.Thread()
	return int64(d)
}

// BenchmarkStreamVsMemmove runs decode and memmove of the same bytes
// interleaved A B B A on one locked thread and measures each leg in thread
// CPU time. It reports per leg ns/row (CPU), and the median and spread of
// the per-pair throughput ratio decode/memmove (the target for poc48 is
// at least 0.15).
//
//	go test ./decode/ -run '^$' -bench 'StreamVsMemmove' -benchtime 40x
func BenchmarkStreamVsMemmove(b *testing.B) {
	for _, shape := range append(benchShapes, benchShape{table: "poc48", rows: 4096, discard: true},
		benchShape{table: "poc48", rows: 4096, nop: true}, benchShape{table: "poc48", rows: 4096, nopB: true},
		benchShape{table: "poc48", rows: 4096, slow: true}, benchShape{table: "poc48", rows: 100000, big: true}) {
		meta, rows, ncols := buildShape(b, shape)
		b.Run(shape.name(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// The columnar sink with the BytesSink fast path, as a real
			// columnar sink implements it; /4call without it.
			var sink *colSink
			var s *decode.Stream
			if shape.slow {
				sl := &slowColSink{}
				sink, s = &sl.colSink, newBenchStream(b, meta, sl)
			} else {
				f := &fastColSink{}
				sink, s = &f.colSink, newBenchStream(b, meta, f)
			}
			if shape.discard {
				s = newBenchStream(b, meta, nil)
			}
			if shape.nop {
				s = newBenchStream(b, meta, decode.Nop{})
			}
			if shape.nopB {
				s = newBenchStream(b, meta, nopBytesSink{})
			}
			dst := make([]byte, len(rows))
			nrows := decodeRows(b, s, rows) // warm up
			copy(dst, rows)
			b.SetBytes(int64(len(rows)))
			b.ReportAllocs()
			dec, mov := abbaVsMemmove(b, rows, dst, func() { decodeRows(b, s, rows) })
			n := float64(2 * b.N * nrows)
			b.ReportMetric(float64(dec)/n, "cpu-ns/row")
			b.ReportMetric(float64(dec)/n/float64(ncols), "cpu-ns/cell")
			b.ReportMetric(float64(mov)/n, "memmove-cpu-ns/row")
			b.ReportMetric(float64(len(rows))*float64(2*b.N)/(float64(dec)/1e9)/1e6, "decode-MB/s")
			_ = sink.sum
		})
	}
}

// abbaVsMemmove times run and a memmove of rows into dst interleaved
// A B B A on the calling (locked) thread in thread CPU time, for every
// benchmark iteration. It reports the median, min and max of the per-pair
// throughput ratio run/memmove and returns both legs' total CPU time.
func abbaVsMemmove(b *testing.B, rows, dst []byte, run func()) (dec, mov int64) {
	ratios := make([]float64, 0, 1<<16)
	for b.Loop() {
		t0 := threadCPU()
		run()
		t1 := threadCPU()
		copy(dst, rows)
		t2 := threadCPU()
		copy(dst, rows)
		t3 := threadCPU()
		run()
		t4 := threadCPU()
		d, m := (t1-t0)+(t4-t3), (t2-t1)+(t3-t2)
		dec += d
		mov += m
		if d > 0 {
			ratios = append(ratios, float64(m)/float64(d))
		}
	}
	sort.Float64s(ratios)
	if len(ratios) > 0 {
		b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
		b.ReportMetric(ratios[0], "ratio-min")
		b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
	}
	return dec, mov
}

// BenchmarkStreamFastPathAB measures the row loop's inlined cases (A)
// against decoding every cell through the general cell decoder (B), A B B A
// interleaved on one thread in thread CPU time; it reports the median and
// spread of the per-pair ratio B/A (above 1: the inlined cases pay).
//
//	go test ./decode/ -run '^$' -bench 'FastPathAB' -benchtime 40x
func BenchmarkStreamFastPathAB(b *testing.B) {
	for _, shape := range benchShapes {
		if shape.table == "lob" || shape.table == "lob_nvarchar" {
			continue // PLP values take the general path either way
		}
		meta, rows, _ := buildShape(b, shape)
		b.Run(shape.name(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			sa, sb := &colSink{}, &colSink{}
			a := newBenchStream(b, meta, sa)
			decode.SetFastPaths(false)
			bs := newBenchStream(b, meta, sb)
			decode.SetFastPaths(true)
			decodeRows(b, a, rows)
			decodeRows(b, bs, rows)
			abbaCPU(b, func() { decodeRows(b, a, rows) }, func() { decodeRows(b, bs, rows) })
			sa.flush()
			sb.flush()
			if sa.sum != sb.sum {
				b.Fatalf("checksums differ: %x vs %x", sa.sum, sb.sum)
			}
		})
	}
}

// abbaCPU times a and b interleaved A B B A in thread CPU time for every
// benchmark iteration and reports the median, min and max of the B/A
// ratio per quadruple.
func abbaCPU(tb *testing.B, a, b func()) {
	ratios := make([]float64, 0, 1<<16)
	for tb.Loop() {
		t0 := threadCPU()
		a()
		t1 := threadCPU()
		b()
		t2 := threadCPU()
		b()
		t3 := threadCPU()
		a()
		t4 := threadCPU()
		ratios = append(ratios, float64((t2-t1)+(t3-t2))/float64((t1-t0)+(t4-t3)))
	}
	sort.Float64s(ratios)
	tb.ReportMetric(ratios[len(ratios)/2], "B/A-median")
	tb.ReportMetric(ratios[0], "B/A-min")
	tb.ReportMetric(ratios[len(ratios)-1], "B/A-max")
}
