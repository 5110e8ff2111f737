package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/sinkbase"
)

// Factory is the postgres sink's factory, for a sinks.Registry.
func Factory() sinks.Factory {
	return sinks.Factory{
		Name:        "postgres",
		Description: "PostgreSQL through binary COPY, one transaction per table (create, append, truncate or replace)",
		Options:     Spec,
		New: func(options map[string]any) (sinks.Sink, error) {
			c, err := ParseConfig(options)
			if err != nil {
				return nil, err
			}
			return New(c)
		},
		Validate: func(options map[string]any) error {
			_, err := ParseConfig(options)
			return err
		},
		Combine: func(ctx context.Context, options map[string]any, info sinks.ExtractInfo) (sinks.Stats, error) {
			c, err := ParseConfig(options)
			if err != nil {
				return sinks.Stats{}, err
			}
			return Combine(ctx, c, info)
		},
		Mapping: func(options map[string]any, cols []decode.Column) ([]sinks.ColumnMapping, error) {
			// The mapping does not depend on the server: describe it
			// even when no connection is configured (inspect).
			if _, ok := options["connection"]; !ok {
				o := map[string]any{"connection": "postgres://localhost/"}
				for k, v := range options {
					o[k] = v
				}
				options = o
			}
			c, err := ParseConfig(options)
			if err != nil {
				return nil, err
			}
			mapped, err := MapColumns(cols, c.mapOptions())
			if err != nil {
				return nil, err
			}
			return mappings(cols, mapped), nil
		},
	}
}

var (
	_ sinks.Sink       = (*Sink)(nil)
	_ decode.BytesSink = (*Sink)(nil)
	_ sinks.Mapper     = (*Sink)(nil)
)

// maxField is the largest value PostgreSQL stores in one field (1 GB).
const maxField = 1<<30 - 1

// Sink loads one extract into one PostgreSQL table through binary COPY in
// one transaction. It is not safe for concurrent use; the engine drives it
// from one goroutine (sinks.Sink). Each sink has its own connection, so
// extracts that run in parallel load on parallel sessions.
type Sink struct {
	cfg  Config
	info sinks.ExtractInfo
	ctx  context.Context

	conn    *pgx.Conn
	inTx    bool
	schema  string // resolved target schema and table
	table   string
	target  *Table
	staging string // replace: the table loaded, renamed to table at Publish
	// partTable is the staging table of one part of a partitioned
	// extract (partition.go); "" otherwise.
	partTable string
	created   bool
	// fresh: the load's transaction created or truncated the table the
	// COPY goes into, so the COPY may FREEZE its rows.
	fresh bool

	srcCols []decode.Column
	plan    []colPlan
	fieldOf []int // source column -> index of its field in a tuple
	nfields int
	keys    []int // source columns identifying a row in rejects and errors

	pipe       copyStream
	copy       *copyState
	copyCancel context.CancelFunc
	ended      bool // pipe.end or pipe.abort called

	b        []byte // the COPY buffer being filled
	rowStart int    // offset of the current tuple (its field count)
	lastRow  int    // size of the last complete tuple
	vlen     int    // offset of the length word of the value in progress
	vstart   int    // offset of its first data byte

	variant bool // a Variant call announced the next value's base type
	vbin    bool
	vscale  uint8
	vname   string
	vnames  map[variantKey]string

	refCol    int // first refused value of the current row: source column, or -1
	refReason string
	rej       *rejectFile

	rows, rejected, sent int64
	err                  error
	aborted, published   bool
	jsonRepl             []byte
}

// colPlan is how one source column's values are written, worked out once
// per result set.
type colPlan struct {
	enc      encoding
	text     bool  // text from the source: NULs are refused
	jsonb    bool  // jsonb: \u0000 escapes are refused
	msRound  bool  // datetime: rounded to the millisecond as SQL Server shows it
	scale    uint8 // fraction digits when written as text
	offset   bool  // a datetimeoffset companion field follows
	vtype    bool  // a sql_variant base-type field follows
	maxChars int   // > 0: the target holds at most this many characters
	intMin   int64
	intMax   int64
	name     string
}

type variantKey struct {
	typ         byte
	size        uint32
	prec, scale uint8
}

// New returns a sink for a validated config.
func New(c Config) (*Sink, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Sink{cfg: c, refCol: -1}
	s.jsonRepl = appendJSONString(nil, c.NulReplacement)
	return s, nil
}

// Config returns the sink's configuration.
func (s *Sink) Config() Config { return s.cfg }

// Target is the table the sink loads, with the mapping it loads it with:
// set once the first result set has started (Columns).
func (s *Sink) Target() *Table { return s.target }

// Mapping describes the mapping for inspect (sinks.Mapper).
func (s *Sink) Mapping(cols []decode.Column) []sinks.ColumnMapping {
	mapped, err := MapColumns(cols, s.cfg.mapOptions())
	if err != nil {
		out := make([]sinks.ColumnMapping, len(cols))
		for i := range out {
			out[i] = sinks.ColumnMapping{Target: "error", Lossy: true, Why: err.Error()}
		}
		return out
	}
	return mappings(cols, mapped)
}

func expandTemplate(t string, info *sinks.ExtractInfo) string {
	table := info.Table
	if table == "" {
		table = info.Name
	}
	return strings.NewReplacer("{schema}", info.Schema, "{table}", table, "{extract}", info.Name).Replace(t)
}

// Open connects and starts the load's transaction. Nothing is created
// until the first result set names the columns.
func (s *Sink) Open(ctx context.Context, info sinks.ExtractInfo) error {
	if info.Name == "" {
		return errors.New("postgres: extract has no name")
	}
	s.info, s.ctx = info, ctx
	s.table = FoldIdent(expandTemplate(s.cfg.Table, &info), s.cfg.Identifiers)
	if s.table == "" {
		return fmt.Errorf("postgres: table template %q gives an empty name for extract %q", s.cfg.Table, info.Name)
	}
	if info.Parts > 1 {
		// One part of several: it loads its own staging table, and
		// Combine moves every part into the target at once.
		s.partTable = partStaging(s.table, info.Part)
	}
	if s.cfg.Schema != "" {
		s.schema = FoldIdent(expandTemplate(s.cfg.Schema, &info), s.cfg.Identifiers)
		if s.schema == "" {
			return fmt.Errorf("postgres: schema template %q gives an empty name for extract %q", s.cfg.Schema, info.Name)
		}
	}
	conn, err := Connect(ctx, s.cfg.Conn)
	if err != nil {
		return err
	}
	s.conn = conn
	if s.schema == "" {
		var cur *string
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&cur); err != nil {
			return s.fail(fmt.Errorf("postgres: current_schema(): %w", err))
		}
		if cur == nil {
			return s.fail(errors.New("postgres: the connection has no current schema (search_path names no existing schema): set the sink's schema option"))
		}
		s.schema = *cur
	}
	if err := s.ensureSchema(); err != nil {
		return s.fail(err)
	}
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		return s.fail(fmt.Errorf("postgres: BEGIN: %w", err))
	}
	s.inTx = true
	return nil
}

func (s *Sink) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// Columns starts a result set: the first one maps the columns, prepares
// the table (create, truncate or a staging table for replace, in the
// transaction) and starts the COPY. A later result set of the same
// extract must have the same columns: it continues the same COPY.
func (s *Sink) Columns(cols []decode.Column, modes []decode.Mode) error {
	if s.err != nil {
		return s.err
	}
	if s.conn == nil {
		return s.fail(errors.New("postgres: Columns before Open"))
	}
	mapped, err := MapColumns(cols, s.cfg.mapOptions())
	if err != nil {
		return s.fail(fmt.Errorf("postgres: extract %q: %w", s.info.Name, err))
	}
	if s.target != nil {
		if !sameSource(s.srcCols, cols) {
			return s.fail(fmt.Errorf("postgres: extract %q returned a second result set with other columns; give each query its own extract", s.info.Name))
		}
		s.srcCols = append(s.srcCols[:0], cols...)
		return nil
	}
	if !s.cfg.NotNull {
		for i := range mapped {
			mapped[i].NotNull = false
		}
	}
	s.srcCols = append(s.srcCols[:0], cols...)
	s.target = &Table{Schema: s.schema, Name: s.table, Columns: mapped}
	if err := s.keyColumns(cols); err != nil {
		return s.fail(err)
	}
	if err := s.prepareTable(); err != nil {
		return s.fail(err)
	}
	s.buildPlan(cols)
	s.startCopy()
	return nil
}

func sameSource(a, b []decode.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Kind() != b[i].Kind() || a[i].Type.Scale != b[i].Type.Scale || a[i].Type.Precision != b[i].Type.Precision {
			return false
		}
	}
	return true
}

func (s *Sink) keyColumns(cols []decode.Column) error {
	s.keys = s.keys[:0]
	if len(s.cfg.KeyColumns) == 0 {
		if len(cols) > 0 {
			s.keys = append(s.keys, 0)
		}
		return nil
	}
	for _, k := range s.cfg.KeyColumns {
		found := -1
		for i := range cols {
			if strings.EqualFold(cols[i].Name, k) {
				found = i
			}
		}
		if found < 0 {
			return fmt.Errorf("postgres: key_columns: no source column %q (columns are %s)", k, columnList(cols))
		}
		s.keys = append(s.keys, found)
	}
	return nil
}

func (s *Sink) buildPlan(cols []decode.Column) {
	s.plan = make([]colPlan, len(cols))
	s.fieldOf = make([]int, len(cols))
	for f := range s.target.Columns {
		m := &s.target.Columns[f]
		p := &s.plan[m.Source]
		switch m.Companion {
		case "offset":
			p.offset = true
			continue
		case "type":
			p.vtype = true
			continue
		}
		c := &cols[m.Source]
		k := c.Kind()
		s.fieldOf[m.Source] = f
		p.enc = m.enc
		p.name = c.Name
		p.scale = c.Type.DateTimeScale()
		p.msRound = k == decode.KindDateTime
		// Text from the source (a sql_variant's character values too) may
		// hold NULs; text the sink formats from typed values cannot.
		p.text = (k.Class() == decode.ClassText || k == decode.KindVariant) && (m.enc == encText || m.enc == encJSONB)
		p.jsonb = m.enc == encJSONB
		p.maxChars = m.maxChars
		p.intMin, p.intMax = math.MinInt64, math.MaxInt64
		switch m.enc {
		case encInt2:
			p.intMin, p.intMax = math.MinInt16, math.MaxInt16
		case encInt4:
			p.intMin, p.intMax = math.MinInt32, math.MaxInt32
		}
	}
	s.nfields = len(s.target.Columns)
}

// startCopy starts pgconn's CopyFrom on its own goroutine, reading the
// stream the decoder fills, and writes the COPY header and the first
// tuple's field count.
func (s *Sink) startCopy() {
	if s.cfg.stream != nil {
		s.pipe = s.cfg.stream(s.cfg.Buffers, s.cfg.BufferSize)
	} else {
		s.pipe = newCopyPipe(s.cfg.Buffers, s.cfg.BufferSize)
	}
	s.copy = s.pipe.state()
	name := s.target.QualifiedName()
	if s.staging != "" {
		name = QuoteIdent(s.schema) + "." + QuoteIdent(s.staging)
	}
	if s.partTable != "" {
		name = QuoteIdent(s.schema) + "." + QuoteIdent(s.partTable)
	}
	sql := copySQL(name, s.target.Columns, s.fresh && s.cfg.Freeze)
	// The COPY is ended by the sink (Publish ends the stream, Abort makes
	// it fail), not by the run's context: the transaction must end with
	// a clean CopyFail and ROLLBACK, not a connection torn down mid-message.
	ctx, cancel := context.WithCancel(context.WithoutCancel(s.ctx))
	s.copyCancel = cancel
	pipe, pg := s.pipe, s.conn.PgConn()
	go func() {
		tag, err := pg.CopyFrom(ctx, pipe, sql)
		pipe.state().finish(tag.RowsAffected(), err)
	}()
	b, ok := s.pipe.take(s.cfg.BufferSize)
	if !ok {
		b = make([]byte, 0, s.cfg.BufferSize) // the COPY failed at once: reported at EndRow
	}
	s.b = append(b, copyHeader...)
	s.rowStart = len(s.b)
	s.b = binary.BigEndian.AppendUint16(s.b, uint16(s.nfields))
}

// room makes sure n more bytes fit in the buffer.
func (s *Sink) room(n int) {
	if cap(s.b)-len(s.b) < n {
		s.spill(n)
	}
}

// spill is room's slow path: the complete tuples go to PostgreSQL and the
// tuple in progress continues at the start of a free buffer (a tuple is
// only ever sent whole, so a rejected row can still be dropped); a tuple
// bigger than a buffer grows it.
func (s *Sink) spill(n int) {
	head := s.rowStart
	need := len(s.b) - head + n
	if head == 0 {
		nb := make([]byte, len(s.b), max(2*(len(s.b)+n), s.cfg.BufferSize))
		copy(nb, s.b)
		s.b = nb
		return
	}
	tail := s.b[head:]
	s.send(s.b[:head])
	nb, ok := s.pipe.take(s.cfg.BufferSize)
	if !ok {
		// The COPY has ended (with an error, reported at EndRow): keep
		// accepting cells into fresh memory until then.
		nb = nil
	}
	if cap(nb) < need {
		nb = make([]byte, 0, max(2*need, s.cfg.BufferSize))
	}
	s.b = append(nb, tail...)
	s.rowStart = 0
	s.vlen -= head
	s.vstart -= head
}

func (s *Sink) send(b []byte) {
	if s.pipe.send(b) {
		s.sent += int64(len(b))
	}
}

// ---- fixed-size values ----

// fixedRoom is enough for any fixed-size value with its companions, or a
// typed value written as text.
const fixedRoom = 128

// Null writes NULL (and NULL companions).
func (s *Sink) Null(col int) {
	p := &s.plan[col]
	s.room(12)
	s.b = appendNull(s.b)
	if p.offset || p.vtype {
		s.b = appendNull(s.b)
	}
	s.variant = false
}

func (s *Sink) Bool(col int, v bool) {
	p := &s.plan[col]
	s.room(fixedRoom)
	x := int64(0)
	if v {
		x = 1
	}
	switch p.enc {
	case encBool:
		s.b = appendBool(s.b, v)
	case encInt2:
		s.b = appendInt2(s.b, int16(x))
	case encInt4:
		s.b = appendInt4(s.b, int32(x))
	case encInt8:
		s.b = appendInt8(s.b, x)
	case encText:
		s.textStart()
		s.b = strconv.AppendBool(s.b, v)
		s.textEnd(col)
	}
}

func (s *Sink) Int(col int, v int64) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encInt8:
		s.b = appendInt8(s.b, v)
	case encInt4:
		if v < p.intMin || v > p.intMax {
			s.outOfRange(col, v)
			return
		}
		s.b = appendInt4(s.b, int32(v))
	case encInt2:
		if v < p.intMin || v > p.intMax {
			s.outOfRange(col, v)
			return
		}
		s.b = appendInt2(s.b, int16(v))
	case encNumeric:
		u := uint64(v)
		if v < 0 {
			u = -u
		}
		s.b = appendNumeric(s.b, 0, u, v < 0, 0)
	case encFloat8:
		s.b = appendFloat8(s.b, float64(v))
	case encText:
		s.textStart()
		s.b = strconv.AppendInt(s.b, v, 10)
		s.textEnd(col)
	}
}

func (s *Sink) outOfRange(col int, v int64) {
	s.b = appendNull(s.b)
	s.refuse(col, fmt.Sprintf("%d is outside the range of the target column's %s", v, s.target.Columns[s.fieldOf[col]].Type.SQL), false)
}

func appendFloat8(b []byte, v float64) []byte {
	b = append(b, 0, 0, 0, 8)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

func (s *Sink) Float32(col int, v float32) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encFloat4:
		s.b = append(s.b, 0, 0, 0, 4)
		s.b = binary.BigEndian.AppendUint32(s.b, math.Float32bits(v))
	case encFloat8:
		s.b = appendFloat8(s.b, float64(v))
	case encText:
		s.textStart()
		s.b = decode.AppendFloat32Text(s.b, v)
		s.textEnd(col)
	}
}

func (s *Sink) Float64(col int, v float64) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encFloat8:
		s.b = appendFloat8(s.b, v)
	case encText:
		s.textStart()
		s.b = decode.AppendFloat64Text(s.b, v)
		s.textEnd(col)
	}
}

func (s *Sink) Decimal(col int, v decode.Decimal) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encNumeric:
		s.b = appendDecimal(s.b, v)
	case encFloat8:
		s.b = appendFloat8(s.b, v.Float64())
	case encText:
		s.textStart()
		s.b = decode.AppendDecimalText(s.b, v)
		s.textEnd(col)
	}
}

func (s *Sink) Money(col int, v int64) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encNumeric:
		s.b = appendMoney(s.b, v)
	case encFloat8:
		s.b = appendFloat8(s.b, float64(v)/1e4)
	case encText:
		s.textStart()
		s.b = decode.AppendMoneyText(s.b, v)
		s.textEnd(col)
	}
}

func (s *Sink) Date(col int, days int32) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encDate:
		s.b = appendInt4(s.b, dateValue(days))
	case encTimestamp:
		s.b = appendInt8(s.b, timestampValue(decode.DateTime{Days: days}))
	case encText:
		s.textStart()
		s.b = decode.AppendDateText(s.b, days)
		s.textEnd(col)
	}
}

func (s *Sink) Time(col int, ticks int64) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encTime:
		s.b = appendInt8(s.b, ticks/10) // truncated: 23:59:59.9999999 stays in the day
	case encText:
		s.textStart()
		s.b = decode.AppendTimeText(s.b, ticks, s.scale(p))
		s.textEnd(col)
	}
}

func (s *Sink) scale(p *colPlan) uint8 {
	if s.variant {
		return s.vscale
	}
	return p.scale
}

func (s *Sink) DateTime(col int, v decode.DateTime) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encTimestamp, encTimestamptz:
		if p.msRound {
			s.b = appendInt8(s.b, timestampMsValue(v))
		} else {
			s.b = appendInt8(s.b, timestampValue(v))
		}
	case encText:
		s.textStart()
		s.b = decode.AppendDateTimeText(s.b, v, s.scale(p))
		s.textEnd(col)
	}
}

func (s *Sink) DateTimeOffset(col int, v decode.DateTimeOffset) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encTimestamptz, encTimestamp:
		s.b = appendInt8(s.b, timestampValue(v.UTC))
	case encText:
		s.textStart()
		s.b = decode.AppendDateTimeOffsetText(s.b, v, s.scale(p))
		s.textEnd(col)
		return
	}
	if p.offset {
		s.b = appendInt2(s.b, v.OffsetMin)
	}
}

func (s *Sink) GUID(col int, v decode.GUID) {
	p := &s.plan[col]
	s.room(fixedRoom)
	switch p.enc {
	case encUUID:
		s.b = append(s.b, 0, 0, 0, 16)
		s.b = append(s.b, v[:]...)
	case encText:
		s.textStart()
		s.b = decode.AppendGUIDText(s.b, v)
		s.textEnd(col)
	}
}

// Variant remembers the base type of the sql_variant value that follows;
// the value is written as its text, its type name in the companion field.
func (s *Sink) Variant(col int, ti *decode.TypeInfo) {
	s.variant = true
	s.vbin = ti.IsBinary()
	s.vscale = ti.DateTimeScale()
	if s.plan[col].vtype {
		s.vname = s.variantName(ti)
	}
}

func (s *Sink) variantName(ti *decode.TypeInfo) string {
	k := variantKey{ti.Type, ti.Size, ti.Precision, ti.Scale}
	if n, ok := s.vnames[k]; ok {
		return n
	}
	if s.vnames == nil {
		s.vnames = map[variantKey]string{}
	}
	n := decode.TypeDecl(ti, 0)
	s.vnames[k] = n
	return n
}

// textStart begins a typed value written as text (a text override or a
// sql_variant): the caller has made room for the length and the text.
func (s *Sink) textStart() {
	s.vlen = len(s.b)
	s.b = append(s.b, 0, 0, 0, 0)
	s.vstart = len(s.b)
}

// textEnd patches the length and writes the variant's type companion.
func (s *Sink) textEnd(col int) {
	binary.BigEndian.PutUint32(s.b[s.vlen:], uint32(len(s.b)-s.vstart))
	s.endVariant(col)
}

func (s *Sink) endVariant(col int) {
	if !s.variant {
		return
	}
	s.variant = false
	if s.plan[col].vtype {
		s.room(4 + len(s.vname))
		s.b = binary.BigEndian.AppendUint32(s.b, uint32(len(s.vname)))
		s.b = append(s.b, s.vname...)
	}
}

// ---- variable-length values ----

// BeginValue starts a variable-length value: its length is patched at
// EndValue, once known.
func (s *Sink) BeginValue(col int, size int64) {
	p := &s.plan[col]
	s.room(4 + arrayHeaderLen + 1)
	s.vlen = len(s.b)
	s.b = append(s.b, 0, 0, 0, 0)
	switch p.enc {
	case encJSONB:
		s.b = append(s.b, 1) // jsonb's binary format version
	case encFloat4Array:
		s.b = s.b[:len(s.b)+arrayHeaderLen] // the header, written at EndValue
	}
	s.vstart = len(s.b)
}

// Reserve returns n bytes of the COPY buffer for the decoder to write the
// value into: the value's one copy.
func (s *Sink) Reserve(col int, n int) []byte {
	s.room(n)
	return s.b[len(s.b) : len(s.b)+n]
}

// Commit keeps n bytes written into the reserved space.
func (s *Sink) Commit(col int, n int) { s.b = s.b[:len(s.b)+n] }

// Write appends a borrowed part.
func (s *Sink) Write(col int, p []byte) {
	s.room(len(p))
	s.b = append(s.b, p...)
}

// EndValue finishes the value: vectors become real[], a variant's bytes
// hex text; text is checked for what PostgreSQL refuses; the length is
// patched.
func (s *Sink) EndValue(col int) {
	p := &s.plan[col]
	switch {
	case p.enc == encFloat4Array:
		n := (len(s.b) - s.vstart) / 4
		s.room(4 * n)
		s.b, _ = expandFloat4Array(s.b, s.vstart-arrayHeaderLen)
	case s.variant && s.vbin:
		n := len(s.b) - s.vstart
		s.room(n)
		s.b = sinkbase.AppendHexInPlace(s.b, s.vstart)
	case p.text:
		s.checkText(col, p)
	}
	if n := len(s.b) - s.vlen - 4; n > maxField {
		s.refuse(col, fmt.Sprintf("the value is %d bytes; PostgreSQL stores at most 1 GB in a field", n), false)
	}
	binary.BigEndian.PutUint32(s.b[s.vlen:], uint32(len(s.b)-s.vlen-4))
	s.endVariant(col)
}

// Bytes takes a complete, resident value in one call (decode.BytesSink):
// text and bytes are copied once into the buffer, vector elements turned
// into real[] on the way.
func (s *Sink) Bytes(col int, v []byte) {
	p := &s.plan[col]
	if !s.variant {
		switch p.enc {
		case encText, encBytea:
			s.room(4 + len(v))
			s.vlen = len(s.b)
			s.b = binary.BigEndian.AppendUint32(s.b, uint32(len(v)))
			s.vstart = len(s.b)
			s.b = append(s.b, v...)
			if p.text && (p.maxChars > 0 || bytes.IndexByte(v, 0) >= 0) {
				s.checkText(col, p)
				binary.BigEndian.PutUint32(s.b[s.vlen:], uint32(len(s.b)-s.vstart))
			}
			return
		case encFloat4Array:
			s.room(4 + arrayHeaderLen + 2*len(v))
			s.b = appendFloat4Array(s.b, v)
			return
		}
	}
	s.BeginValue(col, int64(len(v)))
	s.Write(col, v)
	s.EndValue(col)
}

// ---- rows ----

// EndRow ends a tuple. A refused value fails the load or drops the row
// into the reject file here, when the whole row is known; a COPY that
// PostgreSQL has ended with an error stops the decoder.
func (s *Sink) EndRow() error {
	s.variant = false
	if s.err != nil {
		return s.err
	}
	if s.copy.failed.Load() {
		return s.fail(s.copyError())
	}
	s.rows++
	if s.refCol >= 0 {
		if err := s.refused(); err != nil {
			return s.fail(err)
		}
		return nil
	}
	if s.cfg.OnRow != nil {
		s.cfg.OnRow(s.b[s.rowStart:])
	}
	n := len(s.b) - s.rowStart
	s.lastRow = n
	if cap(s.b)-len(s.b) < n+2 {
		s.send(s.b)
		nb, ok := s.pipe.take(s.cfg.BufferSize)
		if !ok {
			nb = make([]byte, 0, s.cfg.BufferSize)
		}
		s.b = nb
	}
	s.rowStart = len(s.b)
	s.b = binary.BigEndian.AppendUint16(s.b, uint16(s.nfields))
	return nil
}

// copyError describes the error CopyFrom returned, with PostgreSQL's
// context (which names the COPY line, i.e. the row, and the column).
func (s *Sink) copyError() error {
	err := s.copy.err
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.Detail != "" {
			msg += ": " + pe.Detail
		}
		if pe.Where != "" {
			msg += " (" + pe.Where + ")"
		}
		return fmt.Errorf("postgres: PostgreSQL ended the COPY into %s: %s [SQLSTATE %s]; nothing was committed", s.target.QualifiedName(), msg, pe.Code)
	}
	if errors.Is(err, errAborted) {
		return errAborted
	}
	return fmt.Errorf("postgres: COPY into %s failed: %w; nothing was committed", s.target.QualifiedName(), err)
}

// Publish ends the COPY, swaps in the staging table (replace), runs the
// BeforeCommit hook and commits: the rows appear all at once. The reject
// file, if any, is published after the commit.
func (s *Sink) Publish(ctx context.Context) (sinks.Stats, error) {
	if s.err != nil {
		return sinks.Stats{}, s.err
	}
	if s.published {
		return sinks.Stats{}, errors.New("postgres: published twice")
	}
	if s.conn == nil {
		return sinks.Stats{}, errors.New("postgres: Publish before Open")
	}
	if s.pipe != nil {
		s.b = append(s.b[:s.rowStart], 0xFF, 0xFF) // the trailer replaces the unused field count
		s.send(s.b)
		s.b = nil
		s.ended = true
		s.pipe.end()
		<-s.copy.done
		if s.copy.err != nil {
			return sinks.Stats{}, s.fail(s.copyError())
		}
		if want := s.rows - s.rejected; s.copy.rows != want {
			return sinks.Stats{}, s.fail(fmt.Errorf("postgres: PostgreSQL reports %d rows copied into %s, the sink sent %d", s.copy.rows, s.target.QualifiedName(), want))
		}
	}
	if s.staging != "" {
		q := "DROP TABLE IF EXISTS " + QuoteIdent(s.schema) + "." + QuoteIdent(s.table)
		if _, err := s.conn.Exec(ctx, q); err != nil {
			return sinks.Stats{}, s.fail(fmt.Errorf("postgres: replace: %s: %w", q, err))
		}
		q = "ALTER TABLE " + QuoteIdent(s.schema) + "." + QuoteIdent(s.staging) + " RENAME TO " + QuoteIdent(s.table)
		if _, err := s.conn.Exec(ctx, q); err != nil {
			return sinks.Stats{}, s.fail(fmt.Errorf("postgres: replace: %s: %w", q, err))
		}
	}
	if h := s.cfg.BeforeCommit; h != nil && s.target != nil && s.partTable == "" { // a part's runs in Combine
		if err := h(ctx, s.conn, s.target); err != nil {
			return sinks.Stats{}, s.fail(fmt.Errorf("postgres: before commit: %w", err))
		}
	}
	if s.rej != nil {
		if err := s.rej.finish(); err != nil {
			return sinks.Stats{}, s.fail(err)
		}
	}
	if _, err := s.conn.Exec(ctx, "COMMIT"); err != nil {
		return sinks.Stats{}, s.fail(fmt.Errorf("postgres: COMMIT: %w", err))
	}
	s.inTx = false
	s.published = true
	st := sinks.Stats{Rows: s.rows - s.rejected, Bytes: s.sent, Rejected: s.rejected}
	if s.rej != nil {
		if err := s.rej.publish(); err != nil {
			return st, fmt.Errorf("postgres: the load was committed, but the reject file could not be published: %w", err)
		}
		st.Files = append(st.Files, s.rej.final)
	}
	s.close()
	return st, nil
}

// Abort ends a failed load: the COPY is made to fail, the transaction is
// rolled back (so the table is exactly as it was: not created, not
// truncated, not replaced, no row added), and the reject file is removed.
// A process killed mid-load gets the same from PostgreSQL, which rolls
// back the transaction of a connection that goes away.
func (s *Sink) Abort(ctx context.Context) error {
	if s.aborted || s.published {
		return nil
	}
	s.aborted = true
	if s.pipe != nil && !s.ended {
		s.ended = true
		s.pipe.abort()
		select {
		case <-s.copy.done:
		case <-time.After(30 * time.Second):
			s.copyCancel() // PostgreSQL does not answer: give up the connection
			<-s.copy.done
		}
	}
	var err error
	if s.conn != nil && s.inTx && !s.conn.IsClosed() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if _, e := s.conn.Exec(rctx, "ROLLBACK"); e != nil {
			// The connection is unusable; closing it ends the transaction
			// on the server as well.
			err = nil
		}
		cancel()
		s.inTx = false
	}
	if s.rej != nil {
		s.rej.abort()
	}
	s.close()
	return err
}

func (s *Sink) close() {
	if s.copyCancel != nil {
		s.copyCancel()
	}
	if s.conn != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.conn.Close(cctx)
		cancel()
		s.conn = nil
	}
}

// ---- values PostgreSQL refuses ----

// checkText checks the text value in progress (s.b[s.vstart:]): a NUL, a
// \u0000 escape in jsonb and a string too long for an existing column are
// refused; under refused_values: replace NULs are replaced.
func (s *Sink) checkText(col int, p *colPlan) {
	v := s.b[s.vstart:]
	if i := bytes.IndexByte(v, 0); i >= 0 {
		if s.cfg.RefusedValues == RefuseReplace {
			s.replaceNULs()
		} else {
			s.refuse(col, fmt.Sprintf("the text holds a NUL character (U+0000) at byte %d, which PostgreSQL cannot store", i), true)
		}
	}
	if p.jsonb {
		if i := jsonNULEscape(s.b[s.vstart:]); i >= 0 {
			if s.cfg.RefusedValues == RefuseReplace {
				s.replaceJSONEscapes()
			} else {
				s.refuse(col, fmt.Sprintf("the JSON holds \\u0000 at byte %d, which jsonb cannot store", i), true)
			}
		}
	}
	if p.maxChars > 0 {
		v = s.b[s.vstart:]
		if len(v) > p.maxChars {
			if n := utf8.RuneCount(v); n > p.maxChars && !spacesAfter(v, p.maxChars) {
				s.refuse(col, fmt.Sprintf("%d characters do not fit the target column's %s", n, s.target.Columns[s.fieldOf[col]].Type.SQL), false)
			}
		}
	}
}

// spacesAfter reports whether everything after the first n characters of
// v is spaces (PostgreSQL then cuts the value to n without an error).
func spacesAfter(v []byte, n int) bool {
	for i := 0; i < len(v); {
		_, w := utf8.DecodeRune(v[i:])
		if n == 0 {
			return len(bytes.Trim(v[i:], " ")) == 0
		}
		n--
		i += w
	}
	return true
}

// replaceNULs replaces every NUL of the value in progress by nul_replacement.
func (s *Sink) replaceNULs() {
	s.replaceAll([]byte{0}, []byte(s.cfg.NulReplacement))
}

// replaceJSONEscapes replaces every \u0000 escape of the jsonb value in
// progress by nul_replacement as a JSON string fragment.
func (s *Sink) replaceJSONEscapes() {
	for {
		v := s.b[s.vstart:]
		i := jsonNULEscape(v)
		if i < 0 {
			return
		}
		s.splice(s.vstart+i, 6, s.jsonRepl)
	}
}

func (s *Sink) replaceAll(old, repl []byte) {
	// rel is relative to the value's start: splice may move the value.
	for rel := 0; ; {
		i := bytes.Index(s.b[s.vstart+rel:], old)
		if i < 0 {
			return
		}
		s.splice(s.vstart+rel+i, len(old), repl)
		rel += i + len(repl)
	}
}

// splice replaces s.b[at:at+n] by repl, moving the rest.
func (s *Sink) splice(at, n int, repl []byte) {
	if d := len(repl) - n; d > 0 {
		before := s.rowStart
		s.room(d)
		at -= before - s.rowStart
	}
	end := len(s.b)
	s.b = s.b[:end+len(repl)-n]
	copy(s.b[at+len(repl):], s.b[at+n:end])
	copy(s.b[at:], repl)
}

// jsonNULEscape returns the offset of the first \u0000 escape in JSON text
// (a backslash that is itself escaped does not start one), or -1.
func jsonNULEscape(v []byte) int {
	for from := 0; ; {
		i := bytes.Index(v[from:], []byte(`\u0000`))
		if i < 0 {
			return -1
		}
		i += from
		k := 0
		for j := i - 1; j >= 0 && v[j] == '\\'; j-- {
			k++
		}
		if k%2 == 0 {
			return i
		}
		from = i + 1
	}
}

// appendJSONString appends s as the inside of a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return b
}

// refuse records the first value of the row PostgreSQL would refuse.
// replaceable values (NULs) are replaced under refused_values: replace
// before they get here; the rest fail the load under replace too.
func (s *Sink) refuse(col int, reason string, replaceable bool) {
	if s.refCol < 0 {
		s.refCol, s.refReason = col, reason
	}
}

// refused acts on a row holding a refused value, at EndRow.
func (s *Sink) refused() error {
	col, reason := s.refCol, s.refReason
	s.refCol, s.refReason = -1, ""
	if s.cfg.RefusedValues != RefuseReject {
		hint := "set refused_values: reject to set such rows aside, or replace to replace NUL characters"
		return fmt.Errorf("postgres: row %d%s, column %q: %s; nothing was committed (%s)", s.rows, s.keyText(), s.srcCols[col].Name, reason, hint)
	}
	if s.rej == nil {
		path := expandTemplate(s.cfg.RejectFile, &s.info)
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.info.RunDir, path)
		}
		r, err := newRejectFile(path)
		if err != nil {
			return err
		}
		s.rej = r
	}
	if err := s.rej.add(s.rows, s.keyValues(), s.srcCols[col].Name, reason); err != nil {
		return err
	}
	s.rejected++
	s.b = s.b[:s.rowStart+2] // drop the tuple, keep the next one's field count
	return nil
}
