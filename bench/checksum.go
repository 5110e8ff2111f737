package main

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/tdsextract/tdsextract/decode"
)

// The checksum every leg computes over every decoded value, so a faster leg
// can never be one that decoded less. Each leg feeds
// a canonical form of each cell, in row order, into a streaming 64-bit hash;
// both Go legs produce that form cheaply from what they decode:
//
//	NULL                      tag 0xFF
//	integer, bit              tag 0x01, int64
//	real, float               tag 0x02, float64 bits (real widened exactly)
//	decimal, numeric, money   tag 0x03, exact decimal text without trailing zeros
//	text                      tag 0x04, UTF-8 bytes
//	binary                    tag 0x05, bytes
//	uniqueidentifier          tag 0x06, 16 bytes in RFC 4122 order
//	date, time, datetime2     tag 0x07, int32 days since 0001-01-01, int64 100 ns ticks
//	datetime, smalldatetime   the same, rounded to the millisecond
//	                          (go-mssqldb rounds 1/300 s ticks to ms)
//	datetimeoffset            tag 0x08, UTC days, ticks, int16 offset minutes
//
// The hash works on 64-bit words: a value is its tag word (the tag and, for
// bytes, the length) and its data words (bytes little-endian, the last word
// zero-padded); each word w updates h = rotl(h, 5) ^ w*K. The multiply
// does not depend on h, so the chain the CPU must wait on is a rotate and
// an xor per word and the hash hides behind the decode it checks. Each row
// is finalised with murmur3's fmix64 and folded into the running total with
// a multiply, so rows cannot trade values. An earlier version appended
// every value's encoding to a row buffer and hashed that with CRC-32C; the
// copy and the bookkeeping cost tdsextract about a third of its in-memory
// time and go-mssqldb the same absolute time, which measured the checksum
// rather than the decoders. freebcp's character output cannot be compared
// with the typed form (its floats have 17 digits and NULL equals the empty
// string), so that leg is checked with a text checksum (textSink) that a
// tdsextract verification pass computes too.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

const (
	hashK   = 0x9E3779B97F4A7C15 // 2^64 / golden ratio, odd
	hashRow = 0xC2B2AE3D27D4EB4F // murmur3's second constant, odd
)

// sum is the streaming checksum. The zero value is ready to use.
type sum struct {
	h     uint64 // the current row
	total uint64 // every finished row
	tmp   []byte // scratch for decimal text
}

func (s *sum) word(w uint64) { s.h = bits.RotateLeft64(s.h, 5) ^ w*hashK }

// bytes hashes a tagged byte string.
func (s *sum) bytes(tag byte, p []byte) {
	s.word(uint64(len(p))<<8 | uint64(tag))
	for len(p) >= 8 {
		s.word(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	if len(p) > 0 {
		s.word(tail(p))
	}
}

// tail packs the last 1..7 bytes of a value into a word, little-endian,
// zero-padded.
func tail(p []byte) uint64 {
	switch n := len(p); {
	case n >= 4:
		lo := uint64(binary.LittleEndian.Uint32(p))
		hi := uint64(binary.LittleEndian.Uint32(p[n-4:]))
		return lo | hi<<((n-4)*8)
	default:
		w := uint64(p[0])
		if n > 1 {
			w |= uint64(p[1]) << 8
		}
		if n > 2 {
			w |= uint64(p[2]) << 16
		}
		return w
	}
}

// str hashes a string as bytes does, through a read-only view (no copy:
// the go-mssqldb leg's strings would otherwise cost it an allocation each).
func (s *sum) str(tag byte, p string) { s.bytes(tag, unsafe.Slice(unsafe.StringData(p), len(p))) }

func (s *sum) null() { s.word(0xFF) }

// row ends a row: fmix64 of its hash is folded into the total.
func (s *sum) row() {
	h := s.h ^ 0x0A
	h ^= h >> 33
	h *= 0xFF51AFD7ED558CCD
	h ^= h >> 33
	h *= hashRow
	h ^= h >> 33
	s.total = (s.total ^ h) * hashK
	s.h = 0
}

// A fixed-size value is one word: its data xor a constant per tag, so the
// hash chain gets one step per cell, not two.
func tagged(tag byte, v uint64) uint64 { return v ^ uint64(tag)*hashRow }

func (s *sum) int(v int64)     { s.word(tagged(0x01, uint64(v))) }
func (s *sum) float(v float64) { s.word(tagged(0x02, math.Float64bits(v))) }

// decimalText hashes decimal text normalised: trailing fractional zeros and
// a bare point removed, "-0" as "0".
func (s *sum) decimalText(p []byte) {
	if bytes.IndexByte(p, '.') >= 0 {
		p = bytes.TrimRight(p, "0")
		p = bytes.TrimSuffix(p, []byte("."))
	}
	if len(p) == 2 && p[0] == '-' && p[1] == '0' {
		p = p[1:]
	}
	s.bytes(0x03, p)
}

func (s *sum) dateTime(days int32, ticks int64) {
	s.word(0x07 | uint64(uint32(days))<<8)
	s.word(uint64(ticks))
}

func (s *sum) dateTimeOffset(days int32, ticks int64, off int16) {
	s.word(0x08 | uint64(uint32(days))<<8)
	s.word(uint64(ticks))
	s.word(uint64(uint16(off)))
}

func roundToMs(ticks int64) int64 { return (ticks + 5000) / 10000 * 10000 }

// ---- the tdsextract leg: a CellSink that hashes every cell ----

// sumSink hashes each value as it arrives: resident values that need no
// transcoding arrive in one Bytes call (decode.BytesSink) and are hashed in
// place; transcoded or streamed values are written once into the sink's
// value buffer (Reserve/Commit: the one copy) and hashed at EndValue.
type sumSink struct {
	sum
	rounds []bool // datetime/smalldatetime: round to ms
	kind   []byte // per column: tag for variable-length values
	val    []byte // the value being written, reused
	rows   int64
}

var (
	_ decode.CellSink  = (*sumSink)(nil)
	_ decode.BytesSink = (*sumSink)(nil)
)

func (s *sumSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	s.rounds = s.rounds[:0]
	s.kind = s.kind[:0]
	for i := range cols {
		k := cols[i].Kind()
		s.rounds = append(s.rounds, k == decode.KindDateTime || k == decode.KindSmallDateTime)
		tag := byte(0x04)
		if k.IsBinary() {
			tag = 0x05
		}
		s.kind = append(s.kind, tag)
	}
	return nil
}

func (s *sumSink) Null(int)                 { s.null() }
func (s *sumSink) Bool(_ int, v bool)       { s.int(b2i(v)) }
func (s *sumSink) Int(_ int, v int64)       { s.int(v) }
func (s *sumSink) Float32(_ int, v float32) { s.float(float64(v)) }
func (s *sumSink) Float64(_ int, v float64) { s.float(v) }
func (s *sumSink) Decimal(_ int, v decode.Decimal) {
	if v.Hi != 0 {
		s.tmp = decode.AppendDecimalText(s.tmp[:0], v)
		s.decimalText(s.tmp)
		return
	}
	s.decimal64(v)
}

// Money is a decimal of scale 4.
func (s *sumSink) Money(_ int, v int64) {
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	s.decimal64(decode.Decimal{Lo: u, Scale: 4, Neg: v < 0})
}

// decimal64 hashes a decimal whose magnitude fits 64 bits in the canonical
// form of decimalText, reached from the binary value: trailing fractional
// zeros are divided away before formatting, so the text needs no search
// for the point and no trimming. A zero is never signed.
func (s *sumSink) decimal64(v decode.Decimal) {
	for v.Scale > 0 && v.Lo%10 == 0 {
		v.Lo /= 10
		v.Scale--
	}
	s.tmp = decode.AppendDecimalText(s.tmp[:0], v)
	s.bytes(0x03, s.tmp)
}
func (s *sumSink) Date(_ int, days int32)  { s.dateTime(days, 0) }
func (s *sumSink) Time(_ int, ticks int64) { s.dateTime(0, ticks) }
func (s *sumSink) DateTime(col int, v decode.DateTime) {
	t := v.Ticks
	if s.rounds[col] {
		t = roundToMs(t)
	}
	days := v.Days
	if t >= decode.TicksPerDay {
		t -= decode.TicksPerDay
		days++
	}
	s.dateTime(days, t)
}
func (s *sumSink) DateTimeOffset(_ int, v decode.DateTimeOffset) {
	s.dateTimeOffset(v.UTC.Days, v.UTC.Ticks, v.OffsetMin)
}
func (s *sumSink) GUID(_ int, v decode.GUID)     { s.bytes(0x06, v[:]) }
func (s *sumSink) Variant(int, *decode.TypeInfo) {}

// Bytes hashes a resident value in place. A short value whose slice has
// spare capacity (it is a view of the decoder's buffer) is loaded as one
// word and masked to its length: the same word bytes() would build.
func (s *sumSink) Bytes(col int, p []byte) {
	if n := len(p); n <= 8 && cap(p) >= 8 {
		s.word(uint64(n)<<8 | uint64(s.kind[col]))
		if n > 0 {
			s.word(binary.LittleEndian.Uint64(p[:8]) & (^uint64(0) >> ((8 - n) * 8)))
		}
		return
	}
	s.bytes(s.kind[col], p)
}

func (s *sumSink) BeginValue(int, int64)       { s.val = s.val[:0] }
func (s *sumSink) Reserve(_ int, n int) []byte { return reserve(&s.val, n) }
func (s *sumSink) Commit(_ int, n int)         { s.val = s.val[:len(s.val)+n] }
func (s *sumSink) Write(_ int, p []byte)       { s.val = append(s.val, p...) }
func (s *sumSink) EndValue(col int)            { s.bytes(s.kind[col], s.val) }
func (s *sumSink) EndRow() error               { s.row(); s.rows++; return nil }

// reserve returns n bytes of spare capacity after len(*b), growing *b.
func reserve(b *[]byte, n int) []byte {
	if cap(*b)-len(*b) < n {
		nb := make([]byte, len(*b), 2*cap(*b)+n)
		copy(nb, *b)
		*b = nb
	}
	return (*b)[len(*b) : len(*b)+n]
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// ---- the go-mssqldb leg: hash database/sql values the same way ----

// kindsOf maps the type names database/sql reports (go-mssqldb spells them
// as T-SQL does, in upper case) to decode's kinds: what the go-mssqldb legs
// need to hash a value and, for the typed leg, to pick its target. A name
// decode does not know is KindUnknown, hashed as text.
func kindsOf(cts []*sql.ColumnType) []decode.Kind {
	ks := make([]decode.Kind, len(cts))
	for i, ct := range cts {
		if d, ok := decode.LookupDecl(ct.DatabaseTypeName()); ok {
			ks[i] = d.Kind
		}
	}
	return ks
}

func daysTicks(t time.Time) (int32, int64) {
	y, m, d := t.Date()
	days := int32(decode.DateFromCivil(y, int(m), d))
	ticks := (int64(t.Hour())*3600+int64(t.Minute())*60+int64(t.Second()))*10_000_000 + int64(t.Nanosecond())/100
	return days, ticks
}

func (s *sum) goValue(k decode.Kind, v any) error {
	switch x := v.(type) {
	case nil:
		s.null()
	case int64:
		s.int(x)
	case bool:
		s.int(b2i(x))
	case float64:
		s.goFloat(k, x)
	case string:
		s.str(0x04, x)
	case []byte:
		return s.goBytes(k, x)
	case time.Time:
		s.goTime(k, x)
	default:
		return fmt.Errorf("unexpected go-mssqldb value %T", v)
	}
	return nil
}

func (s *sum) goFloat(k decode.Kind, x float64) {
	if k == decode.KindReal {
		x = float64(float32(x))
	}
	s.float(x)
}

// goBytes hashes a byte value of go-mssqldb's: a GUID in SQL Server's
// mixed-endian wire order, decimal text, binary or text.
func (s *sum) goBytes(k decode.Kind, x []byte) error {
	switch k.Class() {
	case decode.ClassGUID:
		if len(x) != 16 {
			return fmt.Errorf("guid of %d bytes", len(x))
		}
		var g [16]byte
		g[0], g[1], g[2], g[3] = x[3], x[2], x[1], x[0]
		g[4], g[5], g[6], g[7] = x[5], x[4], x[7], x[6]
		copy(g[8:], x[8:])
		s.bytes(0x06, g[:])
	case decode.ClassDecimal, decode.ClassMoney:
		s.decimalText(x)
	case decode.ClassBinary:
		s.bytes(0x05, x)
	default:
		s.bytes(0x04, x)
	}
	return nil
}

func (s *sum) goTime(k decode.Kind, x time.Time) {
	switch k {
	case decode.KindDateTimeOffset:
		_, off := x.Zone()
		days, ticks := daysTicks(x.UTC())
		s.dateTimeOffset(days, ticks, int16(off/60))
	case decode.KindDate:
		days, _ := daysTicks(x)
		s.dateTime(days, 0)
	case decode.KindTime:
		_, ticks := daysTicks(x)
		s.dateTime(0, ticks)
	case decode.KindDateTime, decode.KindSmallDateTime:
		days, ticks := daysTicks(x)
		ticks = roundToMs(ticks)
		if ticks >= decode.TicksPerDay {
			ticks -= decode.TicksPerDay
			days++
		}
		s.dateTime(days, ticks)
	default:
		days, ticks := daysTicks(x)
		s.dateTime(days, ticks)
	}
}

// typedRow holds one row's scan targets for the go-mssqldb-typed leg: what
// hand-written code that knows its schema scans into. Each column gets a
// target for what go-mssqldb returns for its type: integers, bit, float
// and real into the small scanners below (database/sql's NullInt64,
// NullBool and NullFloat64 assign through convertAssign's reflection path,
// which made a first version of this leg slower than scanning into
// interface values), text into sql.NullString and date and time types into
// sql.NullTime (both assigned without reflection), and decimal, money,
// binary and GUID bytes into sql.RawBytes (handed over without database/sql's
// copy; go-mssqldb returns non-nil slices for empty values, so nil is NULL).
type typedRow struct {
	kinds []decode.Kind
	dest  []any
}

func newTypedRow(kinds []decode.Kind) *typedRow {
	r := &typedRow{kinds: kinds, dest: make([]any, len(kinds))}
	for i, k := range kinds {
		switch k.Class() {
		case decode.ClassInteger:
			r.dest[i] = new(scanInt)
		case decode.ClassBool:
			r.dest[i] = new(scanBool)
		case decode.ClassFloat:
			r.dest[i] = new(scanFloat)
		case decode.ClassDate, decode.ClassTime, decode.ClassDateTime, decode.ClassDateTimeOffset:
			r.dest[i] = new(sql.NullTime)
		case decode.ClassDecimal, decode.ClassMoney, decode.ClassBinary, decode.ClassGUID:
			r.dest[i] = new(sql.RawBytes)
		default:
			r.dest[i] = new(sql.NullString)
		}
	}
	return r
}

// scanInt, scanBool and scanFloat take go-mssqldb's int64, bool and
// float64 values as they are (sql.Scanner), or NULL.
type (
	scanInt struct {
		v  int64
		ok bool
	}
	scanBool struct {
		v  bool
		ok bool
	}
	scanFloat struct {
		v  float64
		ok bool
	}
)

func (x *scanInt) Scan(src any) error   { return scanAs(src, &x.v, &x.ok) }
func (x *scanBool) Scan(src any) error  { return scanAs(src, &x.v, &x.ok) }
func (x *scanFloat) Scan(src any) error { return scanAs(src, &x.v, &x.ok) }

func scanAs[T any](src any, v *T, ok *bool) error {
	if src == nil {
		*ok = false
		return nil
	}
	t, isT := src.(T)
	if !isT {
		return fmt.Errorf("scanning %T into %T", src, *v)
	}
	*v, *ok = t, true
	return nil
}

// hash hashes the scanned row as goValue would hash the same values.
func (r *typedRow) hash(s *sum) error {
	for i, d := range r.dest {
		k := r.kinds[i]
		switch x := d.(type) {
		case *scanInt:
			if !x.ok {
				s.null()
				continue
			}
			s.int(x.v)
		case *scanBool:
			if !x.ok {
				s.null()
				continue
			}
			s.int(b2i(x.v))
		case *scanFloat:
			if !x.ok {
				s.null()
				continue
			}
			s.goFloat(k, x.v)
		case *sql.NullTime:
			if !x.Valid {
				s.null()
				continue
			}
			s.goTime(k, x.Time)
		case *sql.NullString:
			if !x.Valid {
				s.null()
				continue
			}
			s.str(0x04, x.String)
		case *sql.RawBytes:
			if *x == nil {
				s.null()
				continue
			}
			if err := s.goBytes(k, *x); err != nil {
				return err
			}
		default:
			return fmt.Errorf("no hashing for scan target %T", d)
		}
	}
	return nil
}

// textSink computes the text checksum freebcp's character output is
// compared with: per row the fields' text joined by 0x1F and a newline, each
// value written as freebcp -c writes it (FreeTDS 1.3), so the freebcp leg is
// checked value by value at the precision freebcp keeps:
//
//	integers, decimal, money   decimal text (decimal with its scale, money with 4 places)
//	bit                        0 or 1
//	float, real                the shortest text that round-trips (textFileSum parses
//	                           freebcp's digits back the same way)
//	date                       "YYYY-MM-DD 00:00:00.000"
//	time                       "1900-01-01 hh:mm:ss.mmm"
//	datetime2, datetime        "YYYY-MM-DD hh:mm:ss.mmm"
//	datetimeoffset             the local time so, without the offset
//	uniqueidentifier           upper-case 8-4-4-4-12
//	binary                     lower-case hex
//	text                       UTF-8 as it is
//	NULL                       the empty field (freebcp writes an empty string as
//	                           one NUL byte, which counts as empty too)
//
// freebcp truncates every time of day to milliseconds and drops
// datetimeoffset's offset: that is what its output holds, so that is what
// is compared.
type textSink struct {
	sumSink // column kinds; its hash is unused
	line    []byte
	crc     uint64
	field   int
	fkind   []byte // per column: 'f' float, 'r' real, 0 other (for textFileSum)
	bin     bool   // the value in progress is binary: collected in val, hexed at EndValue
}

func (t *textSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	t.fkind = t.fkind[:0]
	for _, c := range cols {
		var k byte
		switch c.Kind() {
		case decode.KindFloat:
			k = 'f'
		case decode.KindReal:
			k = 'r'
		}
		t.fkind = append(t.fkind, k)
	}
	return t.sumSink.Columns(cols, modes)
}

func (t *textSink) sep() {
	if t.field > 0 {
		t.line = append(t.line, 0x1F)
	}
	t.field++
}

// msClock appends v truncated to the millisecond, as freebcp prints it
// (the year without leading zeros: "306-05-27 13:35:56.517").
func (t *textSink) msClock(v decode.DateTime) {
	v.Ticks = v.Ticks / 10_000 * 10_000
	at := len(t.line)
	t.line = decode.AppendDateTimeText(t.line, v, 3)
	z := 0
	for at+z+1 < len(t.line) && t.line[at+z] == '0' && t.line[at+z+1] != '-' {
		z++
	}
	if z > 0 {
		t.line = append(t.line[:at], t.line[at+z:]...)
	}
}

func (t *textSink) Null(int)           { t.sep() }
func (t *textSink) Int(_ int, v int64) { t.sep(); t.line = strconv.AppendInt(t.line, v, 10) }
func (t *textSink) Bool(_ int, v bool) { t.sep(); t.line = strconv.AppendInt(t.line, b2i(v), 10) }
func (t *textSink) Float64(_ int, v float64) {
	t.sep()
	t.line = strconv.AppendFloat(t.line, v, 'g', -1, 64)
}
func (t *textSink) Float32(_ int, v float32) {
	t.sep()
	t.line = strconv.AppendFloat(t.line, float64(v), 'g', -1, 32)
}
func (t *textSink) Decimal(_ int, v decode.Decimal) {
	t.sep()
	t.line = decode.AppendDecimalText(t.line, v)
}
func (t *textSink) Money(_ int, v int64) { t.sep(); t.line = decode.AppendMoneyText(t.line, v) }
func (t *textSink) Date(_ int, days int32) {
	t.sep()
	t.msClock(decode.DateTime{Days: days})
}
func (t *textSink) Time(_ int, ticks int64) {
	t.sep()
	t.msClock(decode.DateTime{Days: decode.DateFromCivil(1900, 1, 1), Ticks: ticks})
}
func (t *textSink) DateTime(_ int, v decode.DateTime) { t.sep(); t.msClock(v) }
func (t *textSink) DateTimeOffset(_ int, v decode.DateTimeOffset) {
	t.sep()
	t.msClock(v.Local())
}
func (t *textSink) GUID(_ int, v decode.GUID) {
	t.sep()
	at := len(t.line)
	t.line = decode.AppendGUIDText(t.line, v)
	copy(t.line[at:], bytes.ToUpper(t.line[at:]))
}

// Text is written straight into the line; binary is collected and hexed.
func (t *textSink) BeginValue(col int, _ int64) {
	t.sep()
	t.bin = t.kind[col] == 0x05
	t.val = t.val[:0]
}
func (t *textSink) Reserve(_ int, n int) []byte {
	if t.bin {
		return reserve(&t.val, n)
	}
	return reserve(&t.line, n)
}
func (t *textSink) Commit(_ int, n int) {
	if t.bin {
		t.val = t.val[:len(t.val)+n]
		return
	}
	t.line = t.line[:len(t.line)+n]
}
func (t *textSink) Write(_ int, p []byte) {
	if t.bin {
		t.val = append(t.val, p...)
		return
	}
	t.line = append(t.line, p...)
}
func (t *textSink) EndValue(int) {
	if t.bin {
		t.line = hex.AppendEncode(t.line, t.val)
	}
}
func (t *textSink) Bytes(col int, p []byte) {
	t.sep()
	if t.kind[col] == 0x05 {
		t.line = hex.AppendEncode(t.line, p)
		return
	}
	t.line = append(t.line, p...)
}
func (t *textSink) EndRow() error {
	t.line = append(t.line, '\n')
	t.crc = uint64(crc32.Update(uint32(t.crc), crcTable, t.line))
	t.line, t.field = t.line[:0], 0
	t.rows++
	return nil
}

// textFileSum computes textSink's checksum over a freebcp character-mode
// file written with tab field and newline row terminators.
func textFileSum(path string, fkind []byte) (int64, uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	var crc uint64
	var rows int64
	var line []byte
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return rows, 0, fmt.Errorf("freebcp file: unterminated last row")
		}
		rec := b[:nl]
		b = b[nl+1:]
		line = line[:0]
		for f := 0; ; f++ {
			tab := bytes.IndexByte(rec, '\t')
			field := rec
			if tab >= 0 {
				field = rec[:tab]
			}
			if f > 0 {
				line = append(line, 0x1F)
			}
			if f < len(fkind) && fkind[f] != 0 && len(field) > 0 {
				bits := 64
				if fkind[f] == 'r' {
					bits = 32
				}
				v, err := strconv.ParseFloat(string(field), bits)
				if err != nil {
					return rows, 0, fmt.Errorf("freebcp file: row %d field %d: %v", rows+1, f+1, err)
				}
				line = strconv.AppendFloat(line, v, 'g', -1, bits)
			} else if !(len(field) == 1 && field[0] == 0) {
				line = append(line, field...)
			}
			if tab < 0 {
				break
			}
			rec = rec[tab+1:]
		}
		line = append(line, '\n')
		crc = uint64(crc32.Update(uint32(crc), crcTable, line))
		rows++
	}
	return rows, crc, nil
}
