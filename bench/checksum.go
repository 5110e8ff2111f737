package main

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// The checksum every leg computes over every decoded value, so a faster leg
// can never be one that decoded less (BENCHMARKS.md rule 4). Each leg
// appends a canonical encoding of each cell of a row to a reused row
// buffer and hashes the row once (hash/crc32 Castagnoli, hardware
// accelerated: the checksum costs both legs the same few ns per row rather
// than a hash call per cell). The canonical encoding, which both Go legs
// produce cheaply from what they decode:
//
//	NULL                      0xFF
//	integer, bit              0x01 + int64 LE
//	real, float               0x02 + float64 bits LE (real widened exactly)
//	decimal, numeric, money   0x03 + exact decimal text without trailing zeros
//	text                      0x04 + UTF-8 bytes
//	binary                    0x05 + bytes
//	uniqueidentifier          0x06 + 16 bytes in RFC 4122 order
//	date, time, datetime2     0x07 + int32 days since 0001-01-01 + int64 100 ns ticks
//	datetime, smalldatetime   0x07 + the same, rounded to the millisecond
//	                          (go-mssqldb rounds 1/300 s ticks to ms)
//	datetimeoffset            0x08 + UTC days + ticks + int16 offset minutes
//
// and 0x0A after each row; the checksum is the CRC-32C of the
// concatenation of every row's bytes (printed as 16 hex digits). freebcp's
// character output cannot be compared with that (its floats have 15 digits
// and NULL equals the empty string), so the freebcp leg is checked with a
// text checksum (textSum) that a tdsextract verification pass computes too.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// sum accumulates one row's canonical bytes in buf and folds them into crc
// at the end of the row. The zero value is ready to use.
type sum struct {
	crc uint64 // CRC-32C so far, widened
	buf []byte // the current row's canonical bytes, reused
}

func (s *sum) bytes(tag byte, p []byte) {
	n := len(s.buf)
	if cap(s.buf)-n <= len(p) {
		s.buf = slices.Grow(s.buf, 1+len(p))
	}
	b := s.buf[:n+1+len(p)]
	b[n] = tag
	copy(b[n+1:], p)
	s.buf = b
}
func (s *sum) str(tag byte, p string) { s.buf = append(append(s.buf, tag), p...) }
func (s *sum) null()                  { s.buf = append(s.buf, 0xFF) }

// row ends a row: its bytes are hashed and the buffer reused.
func (s *sum) row() {
	s.buf = append(s.buf, 0x0A)
	s.crc = uint64(crc32.Update(uint32(s.crc), crcTable, s.buf))
	s.buf = s.buf[:0]
}

// tagged appends tag and the 8 bytes of v with one capacity check.
func (s *sum) tagged(tag byte, v uint64) {
	n := len(s.buf)
	if cap(s.buf)-n < 9 {
		s.buf = slices.Grow(s.buf, 9)
	}
	b := s.buf[:n+9]
	b[n] = tag
	binary.LittleEndian.PutUint64(b[n+1:], v)
	s.buf = b
}

func (s *sum) int(v int64)     { s.tagged(0x01, uint64(v)) }
func (s *sum) float(v float64) { s.tagged(0x02, math.Float64bits(v)) }

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
	b := binary.LittleEndian.AppendUint32(append(s.buf, 0x07), uint32(days))
	s.buf = binary.LittleEndian.AppendUint64(b, uint64(ticks))
}

func (s *sum) dateTimeOffset(days int32, ticks int64, off int16) {
	b := binary.LittleEndian.AppendUint32(append(s.buf, 0x08), uint32(days))
	b = binary.LittleEndian.AppendUint64(b, uint64(ticks))
	s.buf = binary.LittleEndian.AppendUint16(b, uint16(off))
}

func roundToMs(ticks int64) int64 { return (ticks + 5000) / 10000 * 10000 }

// ---- the tdsextract leg: a CellSink that hashes every cell ----

// sumSink writes each value's canonical bytes straight into the row buffer:
// variable-length values are reserved there (the one copy), and resident
// values that need no transcoding arrive in one Bytes call
// (decode.BytesSink).
type sumSink struct {
	sum
	rounds []bool // datetime/smalldatetime: round to ms
	kind   []byte // per column: tag for variable-length values
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
		t := cols[i].Type.Type
		s.rounds = append(s.rounds, t == decode.TypeDateTime || t == decode.TypeDateTim4 || t == decode.TypeDateTimeN)
		k := byte(0x04)
		switch t {
		case decode.TypeBigVarBinary, decode.TypeBigBinary, decode.TypeImage, decode.TypeBinary, decode.TypeVarBinary, decode.TypeUDT:
			k = 0x05
		}
		s.kind = append(s.kind, k)
	}
	return nil
}

func (s *sumSink) Null(int)                 { s.null() }
func (s *sumSink) Bool(_ int, v bool)       { s.int(b2i(v)) }
func (s *sumSink) Int(_ int, v int64)       { s.int(v) }
func (s *sumSink) Float32(_ int, v float32) { s.float(float64(v)) }
func (s *sumSink) Float64(_ int, v float64) { s.float(v) }
func (s *sumSink) Decimal(_ int, v decode.Decimal) {
	at := len(s.buf) + 1
	s.buf = decode.AppendDecimalText(append(s.buf, 0x03), v)
	s.trimDecimal(at)
}
func (s *sumSink) Money(_ int, v int64) {
	at := len(s.buf) + 1
	s.buf = decode.AppendMoneyText(append(s.buf, 0x03), v)
	s.trimDecimal(at)
}

// trimDecimal normalises the decimal text at buf[at:] in place as
// decimalText does.
func (s *sumSink) trimDecimal(at int) {
	p := s.buf[at:]
	if bytes.IndexByte(p, '.') >= 0 {
		p = bytes.TrimRight(p, "0")
		p = bytes.TrimSuffix(p, []byte("."))
	}
	if len(p) == 2 && p[0] == '-' && p[1] == '0' {
		p[0] = '0'
		p = p[:1]
	}
	s.buf = s.buf[:at+len(p)]
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
func (s *sumSink) GUID(_ int, v decode.GUID)      { s.bytes(0x06, v[:]) }
func (s *sumSink) Variant(int, *decode.TypeInfo)  {}
func (s *sumSink) Bytes(col int, p []byte)        { s.bytes(s.kind[col], p) }
func (s *sumSink) BeginValue(col int, size int64) { s.buf = append(s.buf, s.kind[col]) }
func (s *sumSink) Reserve(_ int, n int) []byte    { return reserve(&s.buf, n) }
func (s *sumSink) Commit(_ int, n int)            { s.buf = s.buf[:len(s.buf)+n] }
func (s *sumSink) Write(_ int, p []byte)          { s.buf = append(s.buf, p...) }
func (s *sumSink) EndValue(int)                   {}
func (s *sumSink) EndRow() error                  { s.row(); s.rows++; return nil }

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

type colKind uint8

const (
	kOther colKind = iota
	kGUID
	kDecimal
	kDateTimeMs
	kDateTime
	kDate
	kTime
	kDTO
	kReal
	kBinary
)

func kindsOf(cts []*sql.ColumnType) []colKind {
	ks := make([]colKind, len(cts))
	for i, ct := range cts {
		switch strings.ToUpper(ct.DatabaseTypeName()) {
		case "UNIQUEIDENTIFIER":
			ks[i] = kGUID
		case "DECIMAL", "NUMERIC", "MONEY", "SMALLMONEY":
			ks[i] = kDecimal
		case "DATETIME", "SMALLDATETIME":
			ks[i] = kDateTimeMs
		case "DATETIME2":
			ks[i] = kDateTime
		case "DATE":
			ks[i] = kDate
		case "TIME":
			ks[i] = kTime
		case "DATETIMEOFFSET":
			ks[i] = kDTO
		case "REAL":
			ks[i] = kReal
		case "BINARY", "VARBINARY", "IMAGE":
			ks[i] = kBinary
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

func (s *sum) goValue(k colKind, v any) error {
	switch x := v.(type) {
	case nil:
		s.null()
	case int64:
		s.int(x)
	case bool:
		s.int(b2i(x))
	case float64:
		if k == kReal {
			x = float64(float32(x))
		}
		s.float(x)
	case string:
		s.str(0x04, x)
	case []byte:
		switch k {
		case kGUID:
			if len(x) != 16 {
				return fmt.Errorf("guid of %d bytes", len(x))
			}
			var g [16]byte
			g[0], g[1], g[2], g[3] = x[3], x[2], x[1], x[0]
			g[4], g[5], g[6], g[7] = x[5], x[4], x[7], x[6]
			copy(g[8:], x[8:])
			s.bytes(0x06, g[:])
		case kDecimal:
			s.decimalText(x)
		case kBinary:
			s.bytes(0x05, x)
		default:
			s.bytes(0x04, x)
		}
	case time.Time:
		switch k {
		case kDTO:
			_, off := x.Zone()
			days, ticks := daysTicks(x.UTC())
			s.dateTimeOffset(days, ticks, int16(off/60))
		case kDate:
			days, _ := daysTicks(x)
			s.dateTime(days, 0)
		case kTime:
			_, ticks := daysTicks(x)
			s.dateTime(0, ticks)
		case kDateTimeMs:
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
	default:
		return fmt.Errorf("unexpected go-mssqldb value %T", v)
	}
	return nil
}

// textSink computes the text checksum freebcp's character output is
// compared with: per row the fields' text joined by 0x1F and a newline;
// integers in decimal, floats as the shortest text that round-trips (freebcp
// prints 17 significant digits, which parse back to the same float), text
// as UTF-8, NULL as the empty field (freebcp writes NULL as an empty field and
// an empty string as a single NUL byte, which counts as empty here).
type textSink struct {
	sumSink // its row buffer holds the line
	field   int
	isFlt   []bool
}

func (t *textSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	t.isFlt = t.isFlt[:0]
	for _, c := range cols {
		t.isFlt = append(t.isFlt, c.Type.Type == decode.TypeFltN || c.Type.Type == decode.TypeFlt8 || c.Type.Type == decode.TypeFlt4)
	}
	return t.sumSink.Columns(cols, modes)
}

func (t *textSink) sep() {
	if t.field > 0 {
		t.buf = append(t.buf, 0x1F)
	}
	t.field++
}
func (t *textSink) Null(int)           { t.sep() }
func (t *textSink) Int(_ int, v int64) { t.sep(); t.buf = strconv.AppendInt(t.buf, v, 10) }
func (t *textSink) Float64(_ int, v float64) {
	t.sep()
	t.buf = strconv.AppendFloat(t.buf, v, 'g', -1, 64)
}

// Text arrives through sumSink's Reserve/Commit/Write, straight into the line.
func (t *textSink) BeginValue(int, int64) { t.sep() }
func (t *textSink) EndValue(int)          {}
func (t *textSink) Bytes(_ int, p []byte) { t.sep(); t.buf = append(t.buf, p...) }
func (t *textSink) EndRow() error {
	t.buf = append(t.buf, '\n')
	t.crc = uint64(crc32.Update(uint32(t.crc), crcTable, t.buf))
	t.buf, t.field = t.buf[:0], 0
	t.rows++
	return nil
}

// textFileSum computes textSink's checksum over a freebcp character-mode
// file written with tab field and newline row terminators.
func textFileSum(path string, isFlt []bool) (int64, uint64, error) {
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
			if f < len(isFlt) && isFlt[f] && len(field) > 0 {
				v, err := strconv.ParseFloat(string(field), 64)
				if err != nil {
					return rows, 0, fmt.Errorf("freebcp file: row %d field %d: %v", rows+1, f+1, err)
				}
				line = strconv.AppendFloat(line, v, 'g', -1, 64)
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
