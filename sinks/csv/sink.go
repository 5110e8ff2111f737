package csv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/outfile"
	"github.com/tdsextract/tdsextract/sinks/internal/sinkbase"
)

// Factory is the csv sink's factory, for a sinks.Registry.
func Factory() sinks.Factory { return FactoryTo(os.Stdout) }

// FactoryTo is Factory whose sinks write path "-" (StdoutPath) to stdout.
func FactoryTo(stdout io.Writer) sinks.Factory {
	newSink := func(c Config) (*Sink, error) {
		s, err := New(c)
		if s != nil && s.stdout != nil {
			s.stdout = stdout
		}
		return s, err
	}
	f := sinkbase.Factory("csv",
		"CSV files (RFC 4180, or the postgres dialect COPY reads back), optionally gzip/zstd, split into numbered files",
		ParseConfig, newSink)
	f.Options = Spec
	f.Mapping = func(options map[string]any, cols []decode.Column) ([]sinks.ColumnMapping, error) {
		c, err := ParseConfig(options)
		if err != nil {
			return nil, err
		}
		return c.Mapping(cols), nil
	}
	return f
}

var (
	_ sinks.Sink       = (*Sink)(nil)
	_ decode.BytesSink = (*Sink)(nil)
	_ sinks.Mapper     = (*Sink)(nil)
)

// streamThreshold is the size above which a text or binary value is no
// longer held whole in the line buffer: it is quoted unconditionally and
// streamed to the file part by part, so a multi-GB nvarchar(max) needs no
// more memory than one part.
const streamThreshold = 1 << 20

// value kinds of variable-length values.
const (
	vText uint8 = iota
	vBinary
	vVector
)

// Sink writes one extract as CSV. It is not safe for concurrent use; the
// engine drives it from one goroutine (sinks.Sink).
type Sink struct {
	cfg   Config
	info  sinks.ExtractInfo
	final string // final path of the (first) file, before numbering
	split bool

	delim, quote byte
	special      [256]bool // bytes that force quoting
	nullTok      []byte
	nullEmpty    bool // NULL is the empty field: empty strings must be quoted
	eol          []byte
	bin          uint8 // 0 hex, 1 \x hex, 2 base64
	pgVector     bool
	bool10       bool // bools as 1/0 rather than true/false

	files outfile.Set
	// stdout, when set (path "-"), takes the CSV instead of files.
	stdout io.Writer
	cur    *outfile.File
	cnt    outfile.Counter
	gz     *gzip.Writer
	zs     *zstd.Encoder
	w      io.Writer // where the line buffer is flushed
	fileNo int

	cols    []decode.Column
	fmts    []colFmt // per column, from its type
	header  []byte
	started bool

	b      []byte // the line buffer: values are formatted straight into it
	tmp    []byte // scratch for vector and base64 conversion
	vstart int    // start of the current variable-length value in b
	vdone  int    // end of the already transformed part of the value (streaming / binary)
	vkind  uint8
	stream bool // the current value is being streamed (already quoted)

	variant bool   // a Variant call announced the next value's base type
	vfmt    colFmt // and how to format it

	rows, fileRows, fileBytes int64
	bytesOut                  int64
	err                       error
}

// colFmt is what formatting a column's values needs from its type,
// worked out once per column (and per sql_variant value).
type colFmt struct {
	kind  uint8 // value kind of variable-length values
	scale uint8 // fractional second digits of date/time values
}

func newColFmt(ti *decode.TypeInfo) colFmt {
	f := colFmt{kind: vText, scale: ti.DateTimeScale()}
	switch ti.Kind().Class() {
	case decode.ClassBinary:
		f.kind = vBinary
	case decode.ClassVector:
		f.kind = vVector
	}
	return f
}

// New returns a CSV sink for c, whose zero fields take their defaults
// from Spec; c is checked as a job's options are.
func New(c Config) (*Sink, error) {
	c, err := ParseConfig(sinks.StructOptions(&c))
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	s := &Sink{cfg: c, delim: c.Delimiter[0], quote: c.Quote[0], eol: []byte(c.LineEnding)}
	s.special[s.delim] = true
	s.special[s.quote] = true
	s.special['\r'] = true
	s.special['\n'] = true
	s.nullTok = []byte(c.Null)
	s.nullEmpty = c.Null == ""
	switch c.BinaryFormat {
	case "hex_prefixed":
		s.bin = 1
	case "base64":
		s.bin = 2
	}
	s.pgVector = c.Dialect == "postgres"
	s.bool10 = c.BoolFormat == "1_0"
	s.split = c.MaxRows > 0 || c.MaxBytes > 0
	if c.Path == StdoutPath {
		s.stdout = os.Stdout
	}
	s.b = make([]byte, 0, c.BufferSize+c.BufferSize/4)
	return s, nil
}

// Config returns the sink's effective configuration (defaults applied).
func (s *Sink) Config() Config { return s.cfg }

// Open prepares the sink for an extract. Files are created under temporary
// names when the first result set starts.
func (s *Sink) Open(ctx context.Context, info sinks.ExtractInfo) error {
	if info.Name == "" {
		return errors.New("csv: extract has no name")
	}
	s.info = info
	if s.stdout != nil {
		s.final = StdoutPath
		return nil
	}
	s.final = outfile.ResolveInfoPath(s.cfg.Path, info, s.cfg.ext(), partExts...)
	if err := s.files.Begin(s.cfg.IfExists, s.final, partExts...); err != nil {
		if errors.Is(err, sinks.ErrSkip) {
			return err // not a failure: the summary shows it as the reason
		}
		return fmt.Errorf("csv: %w", err)
	}
	return nil
}

// partExts are the extensions a part number goes before.
var partExts = []string{".csv.gz", ".csv.zst", ".csv", ".gz", ".zst"}

func (s *Sink) fileName(n int) string {
	if !s.split {
		return s.final
	}
	return outfile.Numbered(s.final, n, partExts...)
}

// openFile starts the next output file and writes its header.
func (s *Sink) openFile() error {
	s.fileNo++
	var err error
	if s.stdout != nil {
		// The stream is not a file: nothing to create, finish or rename.
		s.cur = &outfile.File{Final: "standard output"}
		s.cnt = outfile.Counter{W: s.stdout}
	} else {
		f, err := s.files.Create(s.fileName(s.fileNo))
		if err != nil {
			return fmt.Errorf("csv: %w", err)
		}
		s.cur = f
		s.cnt = outfile.Counter{W: f}
	}
	switch s.cfg.Compression {
	case "gzip":
		lvl := s.cfg.CompressionLevel
		if lvl == 0 {
			lvl = gzip.DefaultCompression
		}
		if s.gz == nil {
			s.gz, err = gzip.NewWriterLevel(&s.cnt, lvl)
			if err != nil {
				return fmt.Errorf("csv: gzip: %w", err)
			}
		} else {
			s.gz.Reset(&s.cnt)
		}
		s.w = s.gz
	case "zstd":
		if s.zs == nil {
			opts := []zstd.EOption{}
			if s.cfg.CompressionLevel != 0 {
				opts = append(opts, zstd.WithEncoderLevel(zstd.EncoderLevel(s.cfg.CompressionLevel)))
			}
			s.zs, err = zstd.NewWriter(&s.cnt, opts...)
			if err != nil {
				return fmt.Errorf("csv: zstd: %w", err)
			}
		} else {
			s.zs.Reset(&s.cnt)
		}
		s.w = s.zs
	default:
		s.w = &s.cnt
	}
	s.fileRows, s.fileBytes = 0, 0
	if *s.cfg.Header && s.header != nil {
		s.b = append(s.b, s.header...)
	}
	return nil
}

// closeFile flushes and finishes the current file (not yet published).
func (s *Sink) closeFile() error {
	if s.cur == nil {
		return nil
	}
	s.flush()
	if s.err != nil {
		return s.err
	}
	var err error
	switch s.cfg.Compression {
	case "gzip":
		err = s.gz.Close()
	case "zstd":
		err = s.zs.Close()
	}
	if err == nil && s.stdout == nil {
		err = s.cur.Finish()
	}
	s.bytesOut += s.cnt.N
	s.cur = nil
	if err != nil {
		s.err = fmt.Errorf("csv: %w", err)
	}
	return s.err
}

func (s *Sink) flush() {
	if len(s.b) == 0 || s.err != nil {
		s.b = s.b[:0]
		return
	}
	if _, err := s.w.Write(s.b); err != nil {
		s.err = fmt.Errorf("csv: write %s: %w", s.cur.Final, err)
	}
	s.fileBytes += int64(len(s.b))
	s.b = s.b[:0]
}

// Columns starts a result set. A later result set of the same extract must
// have the same column names (it continues the same file); anything else
// is an error, since one CSV file has one header.
func (s *Sink) Columns(cols []decode.Column, modes []decode.Mode) error {
	if s.err != nil {
		return s.err
	}
	if s.started {
		if !sameNames(s.cols, cols) {
			s.err = fmt.Errorf("csv: extract %q returned a second result set with different columns; give each query its own extract", s.info.Name)
			return s.err
		}
	} else {
		s.started = true
		s.header = s.header[:0]
		for i := range cols {
			if i > 0 {
				s.header = append(s.header, s.delim)
			}
			start := len(s.header)
			s.header = append(s.header, cols[i].Name...)
			s.header = s.quoteInPlace(s.header, start, true)
		}
		s.header = append(s.header, s.eol...)
	}
	s.cols = append(s.cols[:0], cols...)
	s.fmts = s.fmts[:0]
	for i := range cols {
		s.fmts = append(s.fmts, newColFmt(&cols[i].Type))
	}
	for i := range modes {
		modes[i] = decode.ModeValue
	}
	if s.cur == nil {
		if err := s.openFile(); err != nil {
			s.err = err
			return err
		}
	}
	return nil
}

func sameNames(a, b []decode.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// format returns how to format the value about to arrive for col: by the
// base type announced by Variant, or by the column's type.
func (s *Sink) format(col int) colFmt {
	if s.variant {
		return s.vfmt
	}
	return s.fmts[col]
}

// field starts a field: the delimiter before every column but the first.
// After a Variant call the base value continues the same field.
func (s *Sink) field(col int) {
	if s.variant {
		s.variant = false
		return
	}
	if col > 0 {
		s.b = append(s.b, s.delim)
	}
}

// Null writes the null token.
func (s *Sink) Null(col int) {
	s.field(col)
	s.b = append(s.b, s.nullTok...)
}

// Bool writes true/false or 1/0.
func (s *Sink) Bool(col int, v bool) {
	s.field(col)
	switch {
	case s.bool10 && v:
		s.b = append(s.b, '1')
	case s.bool10:
		s.b = append(s.b, '0')
	case v:
		s.b = append(s.b, "true"...)
	default:
		s.b = append(s.b, "false"...)
	}
}

// Int writes decimal text.
func (s *Sink) Int(col int, v int64) {
	s.field(col)
	s.b = strconv.AppendInt(s.b, v, 10)
}

// Float32 writes the shortest text that reads back as the same float32.
func (s *Sink) Float32(col int, v float32) {
	s.field(col)
	s.b = decode.AppendFloat32Text(s.b, v)
}

// Float64 writes the shortest text that reads back as the same float64.
func (s *Sink) Float64(col int, v float64) {
	s.field(col)
	s.b = decode.AppendFloat64Text(s.b, v)
}

// Decimal writes exact decimal text with the column's scale.
func (s *Sink) Decimal(col int, v decode.Decimal) {
	s.field(col)
	s.b = decode.AppendDecimalText(s.b, v)
}

// Money writes exact text with 4 decimals.
func (s *Sink) Money(col int, v int64) {
	s.field(col)
	s.b = decode.AppendMoneyText(s.b, v)
}

// Date writes YYYY-MM-DD.
func (s *Sink) Date(col int, days int32) {
	s.field(col)
	s.b = decode.AppendDateText(s.b, days)
}

// Time writes hh:mm:ss with the column's fractional digits.
func (s *Sink) Time(col int, ticks int64) {
	scale := s.format(col).scale
	s.field(col)
	s.b = decode.AppendTimeText(s.b, ticks, scale)
}

// DateTime writes "YYYY-MM-DD hh:mm:ss[.fffffff]": datetime2 with its
// scale's digits, datetime with 3 digits and smalldatetime with none, as
// SQL Server shows them.
func (s *Sink) DateTime(col int, v decode.DateTime) {
	scale := s.format(col).scale
	s.field(col)
	s.b = decode.AppendDateTimeText(s.b, v, scale)
}

// DateTimeOffset writes the local time with its original offset.
func (s *Sink) DateTimeOffset(col int, v decode.DateTimeOffset) {
	scale := s.format(col).scale
	s.field(col)
	s.b = decode.AppendDateTimeOffsetText(s.b, v, scale)
}

// GUID writes the canonical lower-case form.
func (s *Sink) GUID(col int, v decode.GUID) {
	s.field(col)
	s.b = decode.AppendGUIDText(s.b, v)
}

// Variant remembers the base type of the sql_variant value that follows;
// the value itself is written as its base type's text.
func (s *Sink) Variant(col int, ti *decode.TypeInfo) {
	s.field(col)
	s.vfmt = newColFmt(ti)
	s.variant = true
}

// BeginValue starts a variable-length value.
func (s *Sink) BeginValue(col int, size int64) {
	s.vkind = s.format(col).kind
	s.field(col)
	s.vstart = len(s.b)
	s.vdone = s.vstart
	s.stream = false
	if s.vkind == vBinary && s.bin == 1 {
		s.b = append(s.b, '\\', 'x')
		s.vstart = len(s.b)
		s.vdone = s.vstart
	}
}

// Reserve returns n bytes at the end of the line buffer for the decoder to
// write into.
func (s *Sink) Reserve(col int, n int) []byte {
	if n < 0 {
		return nil
	}
	s.b = slices.Grow(s.b, n)
	return s.b[len(s.b) : len(s.b)+n]
}

// Commit keeps the first n bytes written into the reserved space.
func (s *Sink) Commit(col int, n int) {
	s.b = s.b[:len(s.b)+n]
	s.afterPart()
}

// Write appends a borrowed part.
func (s *Sink) Write(col int, p []byte) {
	s.b = append(s.b, p...)
	s.afterPart()
}

func (s *Sink) afterPart() {
	switch s.vkind {
	case vBinary:
		if s.bin != 2 {
			s.b = sinkbase.AppendHexInPlace(s.b, s.vdone)
			s.vdone = len(s.b)
		}
	case vVector:
		return
	}
	if len(s.b)-s.vstart > streamThreshold {
		s.streamOut()
	}
}

// streamOut writes the value's bytes so far to the file and continues the
// value in streaming mode: text is quoted unconditionally (its closing
// quote comes at EndValue), quotes doubled part by part.
func (s *Sink) streamOut() {
	switch s.vkind {
	case vText:
		if !s.stream {
			s.b = slices.Insert(s.b, s.vstart, s.quote)
			s.vdone = s.vstart + 1
		}
		s.b = doubleQuotes(s.b, s.vdone, s.quote)
	case vBinary:
		if s.bin == 2 {
			// encode whole 3-byte groups; keep the rest raw for the next part
			raw := s.b[s.vdone:]
			whole := len(raw) / 3 * 3
			s.tmp = base64.StdEncoding.AppendEncode(s.tmp[:0], raw[:whole])
			rest := len(raw) - whole
			var keep [2]byte
			copy(keep[:], raw[whole:])
			s.b = append(s.b[:s.vdone], s.tmp...)
			s.flush()
			s.b = append(s.b, keep[:rest]...)
			s.vstart, s.vdone = 0, 0
			s.stream = true
			return
		}
	}
	s.flush()
	s.vstart, s.vdone = 0, 0
	s.stream = true
}

// EndValue finishes the value: text is quoted only if it needs it, binary
// encoded, vectors turned into JSON array text ({..} for postgres).
func (s *Sink) EndValue(col int) {
	switch s.vkind {
	case vText:
		if s.stream {
			s.b = doubleQuotes(s.b, s.vdone, s.quote)
			s.b = append(s.b, s.quote)
			return
		}
		s.b = s.quoteInPlace(s.b, s.vstart, false)
	case vBinary:
		if s.bin == 2 {
			raw := s.b[s.vdone:]
			s.tmp = base64.StdEncoding.AppendEncode(s.tmp[:0], raw)
			s.b = append(s.b[:s.vdone], s.tmp...)
		}
		// An empty binary value must not read back as NULL: quote it when
		// NULL is the empty field (the hex \x prefix already makes it
		// non-empty in the postgres dialect).
		if s.bin != 1 && s.nullEmpty && !s.stream && len(s.b) == s.vstart {
			s.b = append(s.b, s.quote, s.quote)
		}
	case vVector:
		raw := s.b[s.vstart:]
		s.tmp = append(s.tmp[:0], raw...)
		s.b = s.b[:s.vstart]
		open, close := byte('['), byte(']')
		if s.pgVector {
			open, close = '{', '}'
		}
		s.b = append(s.b, open)
		for i := 0; i+4 <= len(s.tmp); i += 4 {
			if i > 0 {
				s.b = append(s.b, ',')
			}
			bits := uint32(s.tmp[i]) | uint32(s.tmp[i+1])<<8 | uint32(s.tmp[i+2])<<16 | uint32(s.tmp[i+3])<<24
			s.b = decode.AppendFloat32Text(s.b, math.Float32frombits(bits))
		}
		s.b = append(s.b, close)
		s.b = s.quoteInPlace(s.b, s.vstart, false)
	}
}

// quoteInPlace quotes b[start:] if it needs quoting: it contains the
// delimiter, the quote, CR or LF; or it is empty while NULL is the empty
// field (or always, for header names); or it equals the null token; or it
// is \. (PostgreSQL's end-of-data marker). Quotes are doubled by shifting
// the bytes right inside b, from the end, without a second buffer.
func (s *Sink) quoteInPlace(b []byte, start int, header bool) []byte {
	v := b[start:]
	need := false
	nq := 0
	for _, c := range v {
		if s.special[c] {
			need = true
			if c == s.quote {
				nq++
			}
		}
	}
	if !need {
		switch {
		case len(v) == 0:
			need = s.nullEmpty || header
		case !s.nullEmpty && string(v) == string(s.nullTok):
			need = true
		case len(v) == 2 && v[0] == '\\' && v[1] == '.':
			need = true
		}
		if !need {
			return b
		}
	}
	n := len(v)
	grow := nq + 2
	b = slices.Grow(b, grow)[:len(b)+grow]
	v = b[start:]
	j := n + grow - 1
	v[j] = s.quote
	j--
	for i := n - 1; i >= 0; i-- {
		c := v[i]
		v[j] = c
		j--
		if c == s.quote {
			v[j] = c
			j--
		}
	}
	v[j] = s.quote
	return b
}

// doubleQuotes doubles every quote in b[from:] in place.
func doubleQuotes(b []byte, from int, q byte) []byte {
	nq := 0
	for _, c := range b[from:] {
		if c == q {
			nq++
		}
	}
	if nq == 0 {
		return b
	}
	n := len(b)
	b = slices.Grow(b, nq)[:n+nq]
	j := n + nq - 1
	for i := n - 1; i >= from; i-- {
		c := b[i]
		b[j] = c
		j--
		if c == q {
			b[j] = c
			j--
		}
	}
	return b
}

// EndRow ends the line, flushes the buffer when full and starts the next
// numbered file when a split limit is reached.
func (s *Sink) EndRow() error {
	s.variant = false
	s.b = append(s.b, s.eol...)
	s.rows++
	s.fileRows++
	if len(s.b) >= s.cfg.BufferSize {
		s.flush()
	}
	if s.split && ((s.cfg.MaxRows > 0 && s.fileRows >= s.cfg.MaxRows) ||
		(s.cfg.MaxBytes > 0 && s.fileBytes+int64(len(s.b)) >= s.cfg.MaxBytes)) {
		if s.closeFile() == nil {
			if err := s.openFile(); err != nil {
				s.err = err
			}
		}
	}
	return s.err
}

// Publish finishes every file and renames each to its final name. An
// extract that produced no result set publishes one empty file.
func (s *Sink) Publish(ctx context.Context) (sinks.Stats, error) {
	if s.err != nil {
		return sinks.Stats{}, s.err
	}
	if s.cur == nil && len(s.files.Files) == 0 {
		if err := s.openFile(); err != nil {
			return sinks.Stats{}, err
		}
	}
	// a split exactly at the last row leaves an empty trailing file: drop it
	if s.split && s.cur != nil && s.fileRows == 0 && len(s.files.Files) > 1 {
		if err := s.closeFile(); err != nil {
			return sinks.Stats{}, err
		}
		last := s.files.Files[len(s.files.Files)-1]
		s.files.Files = s.files.Files[:len(s.files.Files)-1]
		s.bytesOut -= s.cnt.N
		_ = os.Remove(last.Tmp)
	}
	if err := s.closeFile(); err != nil {
		return sinks.Stats{}, err
	}
	if s.stdout != nil {
		return sinks.Stats{Rows: s.rows, Bytes: s.bytesOut, Files: []string{"(standard output)"}}, nil
	}
	// The parts of an earlier, longer (or differently split) run would
	// otherwise sit beside the new ones as if they belonged.
	files, err := s.files.PublishOutput(s.final, s.split, partExts...)
	if err != nil {
		s.err = fmt.Errorf("csv: %w", err)
		return sinks.Stats{}, s.err
	}
	return sinks.Stats{Rows: s.rows, Bytes: s.bytesOut, Files: files}, nil
}

// Abort removes every temporary file; nothing is left under a final name.
func (s *Sink) Abort(ctx context.Context) error {
	s.cur = nil
	s.b = s.b[:0]
	if err := s.files.Abort(); err != nil {
		return fmt.Errorf("csv: abort: %w", err)
	}
	return nil
}

// Bytes takes a complete, resident value in one call (decode.BytesSink):
// the decoder skips three interface calls per value; the bytes are copied
// once, as through Write.
func (s *Sink) Bytes(col int, p []byte) {
	s.BeginValue(col, int64(len(p)))
	s.Write(col, p)
	s.EndValue(col)
}
