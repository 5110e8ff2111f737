package parquet

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	pqgzip "github.com/parquet-go/parquet-go/compress/gzip"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/outfile"
	"github.com/tdsextract/tdsextract/sinks/internal/sinkbase"
)

// Factory is the parquet sink's factory, for a sinks.Registry.
func Factory() sinks.Factory {
	return sinks.Factory{
		Name:        "parquet",
		Description: "Parquet files (lossless types, zstd, row groups compressed in parallel, split into numbered files)",
		Options:     Options(),
		// geo.go converts SQL Server's serialization to WKB and writes
		// the GeoParquet metadata, CRS from the values' SRID
		ReadsSpatial: true,
		New: func(opts map[string]any) (sinks.Sink, error) {
			c, err := ParseConfig(opts)
			if err != nil {
				return nil, err
			}
			return New(c)
		},
		Validate: func(opts map[string]any) error {
			_, err := ParseConfig(opts)
			return err
		},
		Mapping: func(opts map[string]any, cols []decode.Column) ([]sinks.ColumnMapping, error) {
			c, err := ParseConfig(opts)
			if err != nil {
				return nil, err
			}
			return c.mapping(cols), nil
		},
	}
}

var (
	_ sinks.Sink       = (*Sink)(nil)
	_ decode.BytesSink = (*Sink)(nil)
	_ decode.UTF16Sink = (*Sink)(nil)
	_ decode.LendSink  = (*Sink)(nil)
	_ sinks.Mapper     = (*Sink)(nil)
)

// epochDays is 1970-01-01 as days since 0001-01-01 (Parquet DATE and
// TIMESTAMP count from the Unix epoch).
var epochDays = decode.DateFromCivil(1970, 1, 1)

// colBuf is one column of a batch: values exactly as Parquet stores them,
// written once by the cell calls.
type colBuf struct {
	colPlan
	scale  uint8
	name   string
	u64    []uint64 // fixed-width values (a placeholder for NULL)
	def    []uint8  // 1 present, 0 NULL (optional columns only)
	arena  []byte   // variable-length and fixed-length byte values, back to back
	off    []int    // end offset in arena of each row's value (var kinds)
	aux    []int16  // datetimeoffset: the original offset in minutes
	tarena []byte   // sql_variant: base type names, back to back
	toff   []int    // sql_variant: end offset in tarena per row (NULL: empty)
	// geography/geometry: the geometry types of the batch's values
	geoTypes uint16
	// the short paths of Int and Decimal: a NOT NULL INT32/INT64 column,
	// a NOT NULL DECIMAL stored as INT32/INT64 (one load to test)
	shortInt, shortDec bool
}

// batch is one row group being filled or encoded.
type batch struct {
	cols  []colBuf
	rows  int64
	bytes int64  // bytes of arena values
	seq   uint64 // partitioned: global handoff order (0 = not yet numbered)
	rg    *pq.ConcurrentRowGroupWriter
	owner *pq.GenericWriter[any]
	done  chan error

	// encoding (encode.go): the job's snapshot of the columns and its
	// rows, the leaves, the next one to take, the goroutines still running
	// and the first error; rows sent to jobs so far and the batch's size
	// then; whether the batch is streaming (its jobs started while it
	// fills), and the token a finished non-final job leaves
	snap      []colBuf
	from, to  int
	final     bool
	leaves    []leaf
	next      atomic.Int32
	running   atomic.Int32
	errMu     sync.Mutex
	encErr    error
	sent      int64
	sentBytes int64
	streaming bool
	idle      chan struct{}
}

func (b *batch) reset() {
	for i := range b.cols {
		c := &b.cols[i]
		c.u64, c.def, c.arena, c.off, c.aux = c.u64[:0], c.def[:0], c.arena[:0], c.off[:0], c.aux[:0]
		c.tarena, c.toff = c.tarena[:0], c.toff[:0]
		c.geoTypes = 0
	}
	b.rows, b.bytes, b.seq = 0, 0, 0
	b.sent, b.sentBytes = 0, 0
}

// Sink writes one extract as Parquet. It is driven from one goroutine
// (sinks.Sink); row groups are encoded and compressed by background
// goroutines, at most Config.Parallel at a time.
type Sink struct {
	cfg   Config
	info  sinks.ExtractInfo
	final string
	split bool
	codec compress.Codec
	// threads is how many goroutines encode a row group's columns
	threads int
	// chunk is how many bytes of rows a streaming job takes (encode.go)
	chunk int64

	cols       []decode.Column
	plans      []colPlan
	started    bool
	fixedBytes int64 // bytes per row of the fixed-width parts

	fill     *batch
	free     []*batch
	inflight []*batch

	files    outfile.Set
	cur      *outfile.File
	cnt      outfile.Counter
	bw       *bufio.Writer
	w        *pq.GenericWriter[any]
	enc      []choice // per leaf column, from the first batch
	fileNo   int
	fileRows int64
	rotate   bool
	// trials delivers the encodings chosen by trials that started before
	// the first file was opened (earlyTrials); nil when none did
	trials chan []choice

	rows, bytesOut int64
	groups         int64 // row groups handed to encoders
	jobs           int64 // jobs streamed from batches being filled

	// the fill batch's next row takes endRow when it reaches markRows
	// rows or markBytes buffered bytes (EndRow, setMarks)
	markRows, markBytes int64

	variant bool  // a Variant call announced the next value's base type:
	vscale  uint8 // its fractional second digits (DateTimeScale)
	vbin    bool  // whether it carries bytes
	vnames  map[variantKey]string
	vstart  int

	// geography/geometry columns (geo.go), by source column: the SRID of
	// the run (shared with partitions' sinks), the types in the current
	// file; the parse and WKB buffers
	geo     []geoColumn
	fileGeo []uint16
	clr     clrGeo
	wkb     []byte

	// the decoder's slots for the columns lent to it (Lend): each points
	// at the fill batch's u64 of a lent column, nil for the others
	slots []*[]uint64

	// hive partitioning (partition_by); nil part when not partitioning
	part    *partitioner
	partDir string // a partition's sink: the directory of its files

	err error
}

// New returns a Parquet sink for a config.
func New(c Config) (*Sink, error) {
	c.applyDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Sink{cfg: c, split: c.MaxRows > 0 || c.MaxBytes > 0, threads: runtime.GOMAXPROCS(0)}
	// An eighth of a row group per job: the encoders start after the first
	// eighth and stay about one chunk behind the decoder. Below 256 KiB a
	// job costs more in goroutine hand-offs than it overlaps, and a single
	// thread has nothing to overlap with: row groups then encode whole.
	s.chunk = c.RowGroupBytes / 8
	if s.chunk < 256<<10 || s.threads < 2 {
		s.chunk = math.MaxInt64
	}
	switch c.Compression {
	case "zstd":
		s.codec = newZstdCodec(c.CompressionLevel, c.PageBytes)
	case "gzip":
		lvl := c.CompressionLevel
		if lvl == 0 {
			lvl = pqgzip.DefaultCompression
		}
		s.codec = &pqgzip.Codec{Level: lvl}
	case "snappy":
		s.codec = &pq.Snappy
	default:
		s.codec = &pq.Uncompressed
	}
	return s, nil
}

// Config returns the effective configuration.
func (s *Sink) Config() Config { return s.cfg }

// Open prepares the sink; files are created when the first row group is
// written (or at Publish for an empty result).
func (s *Sink) Open(ctx context.Context, info sinks.ExtractInfo) error {
	if info.Name == "" {
		return errors.New("parquet: extract has no name")
	}
	s.info = info
	if info.Parts > 1 && len(s.cfg.PartitionBy) > 0 && !strings.Contains(s.cfg.Path, "{part}") {
		// Every part would write the same Hive tree's part-0001.parquet.
		return fmt.Errorf("parquet: extract %q runs in %d key-range parts and partition_by is set: put {part} in path so each part writes its own tree", info.Name, info.Parts)
	}
	s.final = outfile.ResolveInfoPath(s.cfg.Path, info, ".parquet", ".parquet")
	var err error
	if len(s.cfg.PartitionBy) > 0 {
		err = s.files.BeginDir(s.cfg.IfExists, outfile.ResolveInfoPath(s.cfg.Path, info, ""))
	} else {
		err = s.files.Begin(s.cfg.IfExists, s.final, ".parquet")
	}
	if err != nil && !errors.Is(err, sinks.ErrSkip) {
		err = fmt.Errorf("parquet: %w", err)
	}
	return err
}

func (s *Sink) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Columns plans the columns once per result set. A later result set of the
// same extract must have the same columns and types.
func (s *Sink) Columns(cols []decode.Column, modes []decode.Mode) error {
	if s.err != nil {
		return s.err
	}
	for i := range modes {
		modes[i] = decode.ModeValue
	}
	if s.started {
		if len(cols) != len(s.cols) {
			s.fail(fmt.Errorf("parquet: extract %q returned a second result set with different columns; give each query its own extract", s.info.Name))
			return s.err
		}
		for i := range cols {
			p := s.cfg.plan(&cols[i])
			if cols[i].Name != s.cols[i].Name || p.kind != s.plans[i].kind || p.target != s.plans[i].target {
				s.fail(fmt.Errorf("parquet: extract %q returned a second result set with different columns (column %d %q); give each query its own extract", s.info.Name, i+1, cols[i].Name))
				return s.err
			}
		}
		return nil
	}
	s.started = true
	s.cols = append(s.cols[:0], cols...)
	s.plans = make([]colPlan, len(cols))
	leaf := 0
	seen := map[string]bool{}
	for i := range cols {
		if seen[cols[i].Name] {
			s.fail(fmt.Errorf("parquet: column name %q appears twice; alias the columns so every name is unique", cols[i].Name))
			return s.err
		}
		seen[cols[i].Name] = true
		p := s.cfg.plan(&cols[i])
		p.leaf = leaf
		leaf++
		if p.offset || p.vtype {
			leaf++
		}
		s.plans[i] = p
		s.fixedBytes += 8 // one uint64 value or one arena offset per row
		if p.offset {
			s.fixedBytes += 2
		}
		if p.optional {
			s.fixedBytes++
		}
	}
	for i := range s.plans {
		if s.plans[i].kind == kGeo {
			if s.geo == nil {
				s.geo = make([]geoColumn, len(cols))
			}
			s.geo[i] = geoColumn{name: cols[i].Name, geography: cols[i].Kind() == decode.KindGeography}
		}
	}
	s.fill = s.newBatch()
	if len(s.cfg.PartitionBy) > 0 {
		if err := s.initPartitions(); err != nil {
			s.fail(err)
			return s.err
		}
	}
	return nil
}

func (s *Sink) newBatch() *batch {
	b := &batch{cols: make([]colBuf, len(s.plans)), done: make(chan error, 1), idle: make(chan struct{}, 1)}
	for i := range s.plans {
		p := &s.plans[i]
		b.cols[i] = colBuf{colPlan: *p, scale: s.cols[i].Type.Scale, name: s.cols[i].Name,
			shortInt: !p.optional && (p.kind == kInt32 || p.kind == kInt64),
			shortDec: !p.optional && (p.kind == kDecInt32 || p.kind == kDecInt64)}
	}
	return b
}

// ---- cell calls: each value is written once into the batch ----

func (s *Sink) mismatch(col int, call string) {
	name := "?"
	if col >= 0 && col < len(s.cols) {
		name = s.cols[col].Name
	}
	s.fail(fmt.Errorf("parquet: column %d %q: unexpected %s value for its planned type", col+1, name, call))
}

// Growth. A batch's columns grow to the size the row group will reach,
// predicted from the rows so far, instead of by doubling: the first batch
// of a run (and of every partition) would otherwise copy each column about
// once more in total and keep up to twice its size allocated. Below
// predictFrom rows, or when the prediction is not larger, a column grows
// by doubling (at least 1/8) as append does.
const predictFrom = 1024

// growTo returns x with capacity want (> len(x)), its items copied.
func growTo[T any](x []T, want int) []T {
	n := make([]T, len(x), want)
	copy(n, x)
	return n
}

// predict is the capacity for a per-row column that holds n items, or an
// arena of n bytes, when it must grow by need: the size the row group will
// reach at the current bytes per row, or, when the source's row count is
// known and the extract ends sooner, at the extract's last row; plus 1/16.
func (s *Sink) predict(n, need int) int {
	b := s.fill
	want := max(2*n, n+need, 64)
	if b.rows >= predictFrom {
		held := b.bytes + b.rows*s.fixedBytes
		rows := float64(b.rows) * float64(s.cfg.RowGroupBytes) / float64(max(held, 1))
		if est := s.info.EstimatedRows; est > 0 {
			rows = min(rows, float64(b.rows+max(est-s.rows, 0)))
		}
		if p := int(float64(n)*rows/float64(b.rows)*17/16) + 64; p >= n+need {
			want = max(p, n+n/8+need)
		}
	}
	return want
}

// rowSlot makes room for one more row in every per-row slice of c that
// is full (the u64 values, levels, offsets and companions).
func (s *Sink) rowSlot(c *colBuf) {
	if c.kind.isVar() {
		if len(c.off) == cap(c.off) {
			c.off = growTo(c.off, s.predict(len(c.off), 1))
		}
	} else if len(c.u64) == cap(c.u64) {
		c.u64 = growValues(c.u64, s.predict(len(c.u64), 1))
	}
	if c.optional && len(c.def) == cap(c.def) {
		c.def = growTo(c.def, s.predict(len(c.def), 1))
	}
	if c.offset && len(c.aux) == cap(c.aux) {
		c.aux = growTo(c.aux, s.predict(len(c.aux), 1))
	}
}

// arenaRoom makes room for n more bytes in c's arena. It is the check
// alone, small enough to be inlined into every cell call; growArena is the
// rare slow path.
func (s *Sink) arenaRoom(c *colBuf, n int) {
	if cap(c.arena)-len(c.arena) < n {
		s.growArena(c, n)
	}
}

// growArena grows c's arena to hold n more bytes (to the predicted row
// group size, see predict). Kept out of line so arenaRoom inlines.
//
//go:noinline
func (s *Sink) growArena(c *colBuf, n int) {
	c.arena = growTo(c.arena, s.predict(len(c.arena), n))
}

func (c *colBuf) present() {
	if c.optional {
		c.def = append(c.def, 1)
	}
}

// fixed stores one fixed-width value. It is small enough to be inlined
// into the cell calls: the common case (room in the buffers) is put, the
// rest fixedGrow, out of line.
func (s *Sink) fixed(col int, v uint64) {
	if c := &s.fill.cols[col]; !c.put(v) {
		s.fixedGrow(c, v)
	}
}

// put stores v (and its level) when the buffers have room, by index.
func (c *colBuf) put(v uint64) bool {
	n, d := len(c.u64), len(c.def)
	if n == cap(c.u64) || (c.optional && d == cap(c.def)) {
		return false
	}
	if c.optional {
		c.def = c.def[:d+1]
		c.def[d] = 1
	}
	c.u64 = c.u64[:n+1]
	c.u64[n] = v
	return true
}

//go:noinline
func (s *Sink) fixedGrow(c *colBuf, v uint64) {
	s.rowSlot(c)
	c.u64 = append(c.u64, v)
	c.present()
}

// endArena ends the value at the end of c's arena. The common case is
// putEnd, inlined; endArenaGrow is the rest, out of line.
func (s *Sink) endArena(c *colBuf) {
	if !c.putEnd() {
		s.endArenaGrow(c)
	}
}

// putEnd records the end of the value at the end of the arena (and its
// level) when the buffers have room, by index, as put does.
func (c *colBuf) putEnd() bool {
	n, d := len(c.off), len(c.def)
	if n == cap(c.off) || (c.optional && d == cap(c.def)) {
		return false
	}
	if c.optional {
		c.def = c.def[:d+1]
		c.def[d] = 1
	}
	c.off = c.off[:n+1]
	c.off[n] = len(c.arena)
	return true
}

//go:noinline
func (s *Sink) endArenaGrow(c *colBuf) {
	s.rowSlot(c)
	c.off = append(c.off, len(c.arena))
	c.present()
}

// Null records NULL; a NULL in a column declared NOT NULL is an error.
func (s *Sink) Null(col int) {
	s.variant = false
	c := &s.fill.cols[col]
	if !c.optional {
		s.fail(fmt.Errorf("parquet: NULL in column %q, which the source declared NOT NULL", c.name))
		return
	}
	// rowSlot grows the buffers only when one is full; checked here, as in
	// fixed and endArena, the common case costs no call.
	if len(c.def) == cap(c.def) || (c.kind.isVar() && len(c.off) == cap(c.off)) ||
		(!c.kind.isVar() && len(c.u64) == cap(c.u64)) || (c.offset && len(c.aux) == cap(c.aux)) {
		s.rowSlot(c)
	}
	c.def = append(c.def, 0)
	if c.kind.isVar() {
		c.off = append(c.off, len(c.arena))
	} else {
		c.u64 = append(c.u64, 0)
	}
	if c.offset {
		c.aux = append(c.aux, 0)
	}
	if c.vtype {
		c.toff = append(c.toff, len(c.tarena))
	}
}

// Bool stores BOOLEAN.
func (s *Sink) Bool(col int, v bool) {
	switch s.fill.cols[col].kind {
	case kBool:
		var u uint64
		if v {
			u = 1
		}
		s.fixed(col, u)
	case kVariant:
		s.variantText(col, strconv.AppendBool(s.variantBuf(col), v))
	default:
		s.mismatch(col, "bool")
	}
}

// Lend lends the decoder the value arrays of the columns whose Int or
// Decimal call, when the array has room, is just the append (decode.LendSink):
// NOT NULL INT32/INT64 columns and NOT NULL decimals stored as INT32/INT64
// (the wire's scale is the column's, so the unscaled integer is the value
// stored). relend points the slots at each new fill batch. A partitioning
// sink lends nothing: its rows go to the batches of their partitions.
//
// Measured (BenchmarkParquetCellPath, thread CPU time, medians of 5 A B
// pairs): sales.order_lines (six NOT NULL integer and decimal columns)
// 42.8 to 31.1 ns a row, dbo.lineitem 144 to 131, sales.orders 64 to 60.
// What the stores cost now is the memory they write, not the calls.
func (s *Sink) Lend(slots []*[]uint64) {
	s.slots = nil
	if s.part != nil || s.fill == nil || len(slots) != len(s.fill.cols) {
		return
	}
	s.slots = slots
	s.relend()
}

// relend points the lent slots at the fill batch.
func (s *Sink) relend() {
	for i := range s.slots {
		if c := &s.fill.cols[i]; c.shortInt || c.shortDec {
			s.slots[i] = &c.u64
		}
	}
}

// Int stores INT32 or INT64. The commonest cell call of all: a NOT NULL
// integer column with room is one compare and the store; the rest
// (levels, growth, sql_variant, a mismatch) is intSlow, out of line.
func (s *Sink) Int(col int, v int64) {
	c := &s.fill.cols[col]
	if n := len(c.u64); c.shortInt && n < cap(c.u64) {
		c.u64[:n+1][n] = uint64(v)
		c.u64 = c.u64[:n+1]
		return
	}
	s.intSlow(col, v)
}

//go:noinline
func (s *Sink) intSlow(col int, v int64) {
	c := &s.fill.cols[col]
	switch c.kind {
	case kInt32, kInt64:
		if !c.put(uint64(v)) {
			s.fixedGrow(c, uint64(v))
		}
	case kVariant:
		s.variantText(col, strconv.AppendInt(s.variantBuf(col), v, 10))
	default:
		s.mismatch(col, "integer")
	}
}

// Float32 stores FLOAT.
func (s *Sink) Float32(col int, v float32) {
	switch s.fill.cols[col].kind {
	case kFloat:
		s.fixed(col, uint64(math.Float32bits(v)))
	case kDouble:
		s.fixed(col, math.Float64bits(float64(v)))
	case kVariant:
		s.variantText(col, decode.AppendFloat32Text(s.variantBuf(col), v))
	default:
		s.mismatch(col, "real")
	}
}

// Float64 stores DOUBLE.
func (s *Sink) Float64(col int, v float64) {
	switch s.fill.cols[col].kind {
	case kDouble:
		s.fixed(col, math.Float64bits(v))
	case kVariant:
		s.variantText(col, decode.AppendFloat64Text(s.variantBuf(col), v))
	default:
		s.mismatch(col, "float")
	}
}

// Decimal stores the unscaled value: INT32, INT64 or big-endian two's
// complement FIXED_LEN_BYTE_ARRAY of the minimal length for the precision.
// A value of a NOT NULL INT32 or INT64 column with room is stored here;
// everything else is decimalSlow, out of line.
func (s *Sink) Decimal(col int, v decode.Decimal) {
	c := &s.fill.cols[col]
	if n := len(c.u64); c.shortDec && n < cap(c.u64) &&
		v.Scale == c.scale && v.Hi == 0 && v.Lo <= math.MaxInt64 {
		x := int64(v.Lo)
		if v.Neg {
			x = -x
		}
		c.u64[:n+1][n] = uint64(x)
		c.u64 = c.u64[:n+1]
		return
	}
	s.decimalSlow(col, v)
}

//go:noinline
func (s *Sink) decimalSlow(col int, v decode.Decimal) {
	c := &s.fill.cols[col]
	if c.kind == kVariant {
		s.variantText(col, decode.AppendDecimalText(s.variantBuf(col), v))
		return
	}
	if v.Scale != c.scale {
		s.fail(fmt.Errorf("parquet: column %q: decimal value with scale %d in a column of scale %d", c.name, v.Scale, c.scale))
		return
	}
	switch c.kind {
	case kDecInt32, kDecInt64:
		if v.Hi != 0 || v.Lo > math.MaxInt64 {
			s.fail(fmt.Errorf("parquet: column %q: decimal value exceeds its precision", c.name))
			return
		}
		x := int64(v.Lo)
		if v.Neg {
			x = -x
		}
		if !c.put(uint64(x)) {
			s.fixedGrow(c, uint64(x))
		}
	case kDecFixed:
		hi, lo := v.Hi, v.Lo
		if v.Neg {
			lo = ^lo + 1
			hi = ^hi
			if lo == 0 {
				hi++
			}
		}
		var be [16]byte
		for i := 0; i < 8; i++ {
			be[i] = byte(hi >> (56 - 8*i))
			be[8+i] = byte(lo >> (56 - 8*i))
		}
		s.arenaRoom(c, 16)
		c.arena = append(c.arena, be[16-c.fixedLen:]...)
		s.fill.bytes += int64(c.fixedLen)
		s.endArena(c)
	default:
		s.mismatch(col, "decimal")
	}
}

// Money stores DECIMAL(19,4) or DECIMAL(10,4).
func (s *Sink) Money(col int, v int64) {
	c := &s.fill.cols[col]
	switch c.kind {
	case kMoneyInt64:
		s.fixed(col, uint64(v))
	case kMoneyFixed:
		// FIXED_LEN_BYTE_ARRAY(9): the sign extension byte, then v
		// big-endian, stored in place (an append of a 9-byte array is a
		// memmove call).
		s.arenaRoom(c, 9)
		n := len(c.arena)
		a := c.arena[n : n+9]
		a[0] = byte(v >> 63)
		binary.BigEndian.PutUint64(a[1:], uint64(v))
		c.arena = c.arena[:n+9]
		s.fill.bytes += 9
		s.endArena(c)
	case kVariant:
		s.variantText(col, decode.AppendMoneyText(s.variantBuf(col), v))
	default:
		s.mismatch(col, "money")
	}
}

// Date stores DATE (days since 1970-01-01).
func (s *Sink) Date(col int, days int32) {
	c := &s.fill.cols[col]
	switch c.kind {
	case kDate:
		if x := uint64(int64(days - epochDays)); !c.put(x) {
			s.fixedGrow(c, x)
		}
	case kVariant:
		s.variantText(col, decode.AppendDateText(s.variantBuf(col), days))
	default:
		s.mismatch(col, "date")
	}
}

// Time stores TIME NANOS or MICROS.
func (s *Sink) Time(col int, ticks int64) {
	switch s.fill.cols[col].kind {
	case kTimeNanos:
		s.fixed(col, uint64(ticks*100))
	case kTimeMicros: // scale 0..6: whole microseconds already
		s.fixed(col, uint64(ticks/10))
	case kVariant:
		s.variantText(col, decode.AppendTimeText(s.variantBuf(col), ticks, s.vscale))
	default:
		s.mismatch(col, "time")
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ticks100 is v as 100 ns ticks since the Unix epoch (fits int64 for every
// SQL Server date: about ±3.2e18).
func ticks100(v decode.DateTime) int64 {
	return int64(v.Days-epochDays)*decode.TicksPerDay + v.Ticks
}

// nanos stores v as TIMESTAMP NANOS, or fails a value outside
// 1677-09-21 .. 2262-04-11, naming column and row. It is out of line (the
// error makes it too big to inline), unlike MICROS and MILLIS.
func (s *Sink) nanos(col int, c *colBuf, v decode.DateTime) bool {
	t := ticks100(v)
	if t > math.MaxInt64/100 || t < math.MinInt64/100 {
		s.fail(fmt.Errorf("parquet: column %q, row %d: %s is outside TIMESTAMP NANOS (1677-09-21 .. 2262-04-11); timestamp_unit: micros (the default) stores every date",
			c.name, s.rows+1, decode.AppendDateTimeText(nil, v, 7)))
		return false
	}
	s.fixed(col, uint64(t*100))
	return true
}

// DateTime stores TIMESTAMP (not UTC-adjusted). MICROS truncates the
// 100 ns digit (floor: toward the earlier instant, also before 1970), so a
// value never moves into the next second, day or year; MILLIS rounds
// datetime's 1/300 s ticks as SQL Server shows them (.003, .007), which
// never reaches the next second (the largest is .997). Both are stored
// inline; NANOS, which can fail, is not.
func (s *Sink) DateTime(col int, v decode.DateTime) {
	c := &s.fill.cols[col]
	switch c.kind {
	case kTSNanos:
		s.nanos(col, c, v)
	case kTSMicros:
		if x := uint64(floorDiv(ticks100(v), 10)); !c.put(x) {
			s.fixedGrow(c, x)
		}
	case kTSMillis:
		if x := uint64(floorDiv(ticks100(v)+5000, 10000)); !c.put(x) {
			s.fixedGrow(c, x)
		}
	case kVariant:
		s.variantText(col, decode.AppendDateTimeText(s.variantBuf(col), v, s.vscale))
	default:
		s.mismatch(col, "datetime")
	}
}

// DateTimeOffset stores the UTC instant (UTC-adjusted TIMESTAMP) and the
// original offset in the companion column.
func (s *Sink) DateTimeOffset(col int, v decode.DateTimeOffset) {
	c := &s.fill.cols[col]
	var ok bool
	switch c.kind {
	case kDTONanos:
		ok = s.nanos(col, c, v.UTC)
	case kDTOMicros:
		if x := uint64(floorDiv(ticks100(v.UTC), 10)); !c.put(x) {
			s.fixedGrow(c, x)
		}
		ok = true
	case kVariant:
		s.variantText(col, decode.AppendDateTimeOffsetText(s.variantBuf(col), v, s.vscale))
		return
	default:
		s.mismatch(col, "datetimeoffset")
		return
	}
	if ok && c.offset {
		c.aux = append(c.aux, v.OffsetMin)
	}
}

// GUID stores UUID (RFC 4122 byte order, as decoded).
func (s *Sink) GUID(col int, v decode.GUID) {
	c := &s.fill.cols[col]
	switch c.kind {
	case kUUID:
		// One 16-byte store in place, not an append's memmove call.
		s.arenaRoom(c, 16)
		n := len(c.arena)
		*(*decode.GUID)(c.arena[n : n+16]) = v
		c.arena = c.arena[:n+16]
		s.fill.bytes += 16
		s.endArena(c)
	case kVariant:
		s.variantText(col, decode.AppendGUIDText(s.variantBuf(col), v))
	default:
		s.mismatch(col, "uniqueidentifier")
	}
}

// Variant announces the base type of a sql_variant value, which is stored
// as the text of that value.
func (s *Sink) Variant(col int, ti *decode.TypeInfo) {
	s.vscale, s.vbin = ti.DateTimeScale(), ti.IsBinary()
	s.variant = true
	c := &s.fill.cols[col]
	if c.vtype {
		c.tarena = append(c.tarena, s.typeName(ti)...)
		c.toff = append(c.toff, len(c.tarena))
		s.fill.bytes += 16
	}
}

// typeName returns the T-SQL name of a sql_variant base type, cached so a
// row costs no allocation.
func (s *Sink) typeName(ti *decode.TypeInfo) string {
	k := variantKey{ti.Type, ti.Size, ti.Precision, ti.Scale}
	if n, ok := s.vnames[k]; ok {
		return n
	}
	if s.vnames == nil {
		s.vnames = map[variantKey]string{}
	}
	n := decode.SQLTypeName(&decode.Column{Type: *ti})
	s.vnames[k] = n
	return n
}

type variantKey struct {
	typ         byte
	size        uint32
	prec, scale uint8
}

func (s *Sink) variantBuf(col int) []byte {
	s.variant = false
	return s.fill.cols[col].arena
}

func (s *Sink) variantText(col int, arena []byte) {
	c := &s.fill.cols[col]
	s.fill.bytes += int64(len(arena) - len(c.arena))
	c.arena = arena
	s.endArena(c)
}

// BeginValue starts a variable-length value in the column's arena.
func (s *Sink) BeginValue(col int, size int64) {
	c := &s.fill.cols[col]
	switch c.kind {
	case kString, kBytes, kFixedBytes, kVector, kVariant, kGeo:
	default:
		s.mismatch(col, "variable-length")
	}
	s.vstart = len(c.arena)
	if size > 0 && size < 1<<30 {
		s.arenaRoom(c, int(size))
	}
}

// Reserve returns n bytes at the end of the column's arena.
func (s *Sink) Reserve(col int, n int) []byte {
	if n < 0 {
		return nil
	}
	c := &s.fill.cols[col]
	s.arenaRoom(c, n)
	return c.arena[len(c.arena) : len(c.arena)+n]
}

// Commit keeps n bytes of the reserved space.
func (s *Sink) Commit(col int, n int) {
	c := &s.fill.cols[col]
	c.arena = c.arena[:len(c.arena)+n]
	s.fill.bytes += int64(n)
}

// Write appends a borrowed part.
func (s *Sink) Write(col int, p []byte) {
	c := &s.fill.cols[col]
	s.arenaRoom(c, len(p))
	c.arena = append(c.arena, p...)
	s.fill.bytes += int64(len(p))
}

// EndValue ends the value: binary(n) is checked (and zero-padded, as SQL
// Server pads it), vector bytes checked to be whole float32s, a binary
// sql_variant base value turned into hex text.
func (s *Sink) EndValue(col int) {
	c := &s.fill.cols[col]
	if k := c.kind; k == kString || k == kBytes { // nothing to check
		if !c.putEnd() {
			s.endArenaGrow(c)
		}
		return
	}
	n := len(c.arena) - s.vstart
	switch c.kind {
	case kFixedBytes:
		if n > c.fixedLen {
			s.fail(fmt.Errorf("parquet: column %q: %d-byte value in binary(%d)", c.name, n, c.fixedLen))
			return
		}
		for ; n < c.fixedLen; n++ {
			c.arena = append(c.arena, 0)
			s.fill.bytes++
		}
	case kVector:
		if n%4 != 0 {
			s.fail(fmt.Errorf("parquet: column %q: vector value of %d bytes is not whole float32 elements", c.name, n))
			return
		}
	case kGeo:
		if !s.toWKB(col, c) {
			return
		}
	case kVariant:
		if s.variant && s.vbin {
			c.arena = sinkbase.AppendHexInPlace(c.arena, s.vstart)
			s.fill.bytes += int64(n)
		}
		s.variant = false
	}
	s.endArena(c)
}

// EndRow counts the row and hands the batch to an encoder when it reaches
// the row-group size.
//
// Most rows only count: whatever else a row can start (sizing the jobs at
// predictFrom rows, the early trials at sampleValues, a full row group or
// file, a streaming job) happens at a row count or a batch size known in
// advance, which endRow leaves in markRows and markBytes. A row below both
// (and without an error) takes the one comparison; the row at a mark
// takes endRow, which checks everything as before. Until the first endRow,
// and always while partitioning, markRows is 0: every row takes endRow.
func (s *Sink) EndRow() error {
	s.variant = false
	b := s.fill
	if n := b.rows + 1; n < s.markRows && b.bytes+n*s.fixedBytes < s.markBytes && s.err == nil {
		b.rows = n
		s.rows++
		s.fileRows++
		return nil
	}
	return s.endRow()
}

func (s *Sink) endRow() error {
	if s.err != nil {
		return s.err
	}
	if s.part != nil {
		return s.endRowPartitioned()
	}
	s.fill.rows++
	s.rows++
	s.fileRows++
	// streaming first: once the fill batch streams, its first job may be
	// opening the file (s.w, s.enc) on another goroutine
	if s.fill.rows == predictFrom && !s.fill.streaming && s.w == nil {
		s.sizeChunk()
	}
	if s.fill.rows == sampleValues && !s.fill.streaming && s.enc == nil && s.trials == nil && s.w == nil {
		s.earlyTrials()
	}
	if group, fileFull := s.full(); group {
		s.handoff()
		if fileFull || s.rotate {
			s.finishFile()
		}
	} else if s.buffered()-s.fill.sentBytes >= s.chunk {
		s.stream()
	}
	s.setMarks()
	return s.err
}

// setMarks sets the row count (markRows) and the batch size (markBytes,
// as buffered counts it) at which the fill batch's next row must take
// endRow: the first of the rows and sizes at which endRow does more than
// count (see EndRow).
func (s *Sink) setMarks() {
	b := s.fill
	rows := int64(math.MaxInt64)
	for _, at := range [...]int64{predictFrom, sampleValues} {
		if b.rows < at {
			rows = min(rows, at)
		}
	}
	if s.cfg.RowGroupRows > 0 {
		rows = min(rows, s.cfg.RowGroupRows)
	}
	if s.cfg.MaxRows > 0 {
		rows = min(rows, b.rows+max(s.cfg.MaxRows-s.fileRows, 0))
	}
	bytes := s.cfg.RowGroupBytes
	if s.chunk <= math.MaxInt64-b.sentBytes {
		bytes = min(bytes, b.sentBytes+s.chunk)
	}
	s.markRows, s.markBytes = rows, bytes
}

// sizeChunk sizes the streaming jobs from the first rows of a file's
// first batch when the source's row count is known and the extract ends
// before a row group is full: an eighth of the bytes the batch will then
// hold (at least 256 KiB), so that the first job, which also runs the
// encoding trials, starts after an eighth of the rows rather than after an
// eighth of row_group_bytes, and the encoders keep up with the decoder
// instead of leaving most of the rows for after the last one. At 200,000
// rows of sales.order_lines (9.6 MB) the first job started after 87,382
// rows (4 MiB), and the decoder then waited for it.
func (s *Sink) sizeChunk() {
	est := s.info.EstimatedRows
	if est <= 0 || s.chunk == math.MaxInt64 {
		return
	}
	perRow := float64(s.buffered()) / float64(s.fill.rows)
	group := min(float64(s.cfg.RowGroupBytes), perRow*float64(s.fill.rows+max(est-s.rows, 0)))
	if c := max(int64(group/8), 256<<10); c < s.chunk {
		s.chunk = c
	}
}

// earlyTrials starts the run's encoding trials on the first sampleValues
// rows, in the background, as soon as the batch holds them; the first job
// (which opens the file) takes their result. The trials are the longest
// fixed cost of a file (at 200,000 rows of lineitem, 16 columns, several
// milliseconds of one core), and the first job, which could not start
// encoding before they were done, otherwise began them only after an
// eighth of the row group. With one thread nothing overlaps: the trials
// then run in the first (only) job as before. The trials read a snapshot
// of the columns' slice headers; the decoder only appends past them, and
// an array it outgrows stays as it was.
func (s *Sink) earlyTrials() {
	if s.chunk == math.MaxInt64 {
		return
	}
	b := s.fill
	n := int(b.rows)
	// the row group will hold about this many rows (as stream estimates it)
	groupRows := int(b.rows * s.cfg.RowGroupBytes / max(s.buffered(), 1))
	snap := append([]colBuf(nil), b.cols...)
	s.trials = make(chan []choice, 1)
	go func() {
		s.trials <- s.chooseEncodings(snap, n, max(n, groupRows), max(1, s.threads-1))
	}()
}

// stream sends the rows of the fill batch not yet sent to an encoding job,
// unless its previous job is still running (then it tries again after an
// eighth of a chunk). The first job of a file opens it, and the first of
// the run chooses the encodings from the rows so far, in the job, so the
// decoder goes on filling the batch meanwhile.
func (s *Sink) stream() {
	b := s.fill
	if b.streaming {
		select {
		case <-b.idle:
		default:
			b.sentBytes += s.chunk / 8
			return
		}
		if s.w == nil { // the first job could not open the file
			b.streaming = false
			s.fail(b.encErr)
			return
		}
	} else {
		b.encErr = nil
		b.streaming = true
		if s.w == nil {
			// the row group will hold about this many rows
			groupRows := b.rows * s.cfg.RowGroupBytes / max(s.buffered(), 1)
			s.beginFile(b.rows)
			b.sentBytes = s.buffered()
			b.snapshot(false)
			s.jobs++
			go s.openAndLaunch(b, int(groupRows))
			return
		}
		if b.owner != s.w {
			b.rg = s.w.BeginRowGroup()
			b.owner = s.w
		}
	}
	b.sentBytes = s.buffered()
	b.startJob(s.threads, false)
	s.jobs++
}

// openAndLaunch is the first job of a file's first batch b: it opens the
// file (choosing the run's encodings from the job's rows, on all but one
// thread, so that the decoder keeps its own) and then encodes the rows.
// When the file cannot be opened it leaves the error in b.encErr and the
// file unset, which the decoder sees when it next waits for b.
func (s *Sink) openAndLaunch(b *batch, groupRows int) {
	if err := s.openFile(b.snap, b.to, groupRows, max(1, s.threads-1)); err != nil {
		b.encErr = err
		clear(b.snap)
		b.idle <- struct{}{}
		return
	}
	b.rg = s.w.BeginRowGroup()
	b.owner = s.w
	b.launch(s.threads)
}

// settle waits until no job of the fill batch runs (the first may be
// opening the file), leaving the batch streaming; the run fails if that
// job could not open the file.
func (s *Sink) settle() {
	if b := s.fill; b != nil && b.streaming {
		<-b.idle
		if s.w == nil {
			b.streaming = false
			s.fail(b.encErr)
			return
		}
		b.idle <- struct{}{}
	}
}

// buffered is the size of the fill batch: its arena values and the
// fixed-width parts of its rows.
func (s *Sink) buffered() int64 { return s.fill.bytes + s.fill.rows*s.fixedBytes }

// full reports, after a row was added to the fill batch, whether the batch
// is a complete row group (by row_group_bytes or row_group_rows, or because
// the file is full) and whether the file is full (max_rows).
func (s *Sink) full() (group, file bool) {
	file = s.cfg.MaxRows > 0 && s.fileRows >= s.cfg.MaxRows
	group = file || s.buffered() >= s.cfg.RowGroupBytes ||
		(s.cfg.RowGroupRows > 0 && s.fill.rows >= s.cfg.RowGroupRows)
	return group, file
}

// Bytes takes a complete, resident value in one call (decode.BytesSink):
// the decoder skips three interface calls per value; the bytes are copied
// once, as through Write. Strings and varbinary (nearly every such value)
// take a direct path.
func (s *Sink) Bytes(col int, p []byte) {
	c := &s.fill.cols[col]
	if c.kind == kString || c.kind == kBytes {
		s.arenaRoom(c, len(p))
		c.arena = append(c.arena, p...)
		s.fill.bytes += int64(len(p))
		if !c.putEnd() {
			s.endArenaGrow(c)
		}
		return
	}
	s.BeginValue(col, int64(len(p)))
	s.Write(col, p)
	s.EndValue(col)
}

// UTF16 takes a complete, resident UTF-16 text value in one call
// (decode.UTF16Sink): the decoder's converter writes the UTF-8 straight
// into the column's arena, once, and the decoder skips three interface
// calls per value. Strings (nearly every such value) take a direct path.
func (s *Sink) UTF16(col int, p []byte) {
	c := &s.fill.cols[col]
	n := decode.MaxUTF16ToUTF8(len(p))
	if c.kind != kString {
		s.BeginValue(col, int64(len(p)))
		if dst := s.Reserve(col, n); dst != nil {
			s.Commit(col, decode.UTF16ToUTF8(dst, p))
		}
		s.EndValue(col)
		return
	}
	s.arenaRoom(c, n)
	a := len(c.arena)
	m := decode.UTF16ToUTF8(c.arena[a:a+n], p)
	c.arena = c.arena[:a+m]
	s.fill.bytes += int64(m)
	if !c.putEnd() {
		s.endArenaGrow(c)
	}
}
