package main

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// The checksum every leg computes over every decoded value, so a faster leg
// can never be one that decoded less (BENCHMARKS.md rule 4). It is a CRC-64
// over a canonical encoding of each cell that both Go legs can produce
// cheaply from what they decode:
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
// and 0x0A after each row. freebcp's character output cannot be compared
// with that (its floats have 15 digits and NULL equals the empty string),
// so the freebcp leg is checked with a text checksum (textSum) that a
// tdsextract verification pass computes too.
var crcTable = crc64.MakeTable(crc64.ECMA)

type sum struct {
	crc uint64
	buf [32]byte
}

func (s *sum) bytes(tag byte, p []byte) {
	s.buf[0] = tag
	s.crc = crc64.Update(s.crc, crcTable, s.buf[:1])
	s.crc = crc64.Update(s.crc, crcTable, p)
}

func (s *sum) null() { s.buf[0] = 0xFF; s.crc = crc64.Update(s.crc, crcTable, s.buf[:1]) }
func (s *sum) row()  { s.buf[0] = 0x0A; s.crc = crc64.Update(s.crc, crcTable, s.buf[:1]) }

func (s *sum) int(v int64) {
	s.buf[0] = 0x01
	binary.LittleEndian.PutUint64(s.buf[1:], uint64(v))
	s.crc = crc64.Update(s.crc, crcTable, s.buf[:9])
}

func (s *sum) float(v float64) {
	s.buf[0] = 0x02
	binary.LittleEndian.PutUint64(s.buf[1:], math.Float64bits(v))
	s.crc = crc64.Update(s.crc, crcTable, s.buf[:9])
}

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
	s.buf[0] = 0x07
	binary.LittleEndian.PutUint32(s.buf[1:], uint32(days))
	binary.LittleEndian.PutUint64(s.buf[5:], uint64(ticks))
	s.crc = crc64.Update(s.crc, crcTable, s.buf[:13])
}

func (s *sum) dateTimeOffset(days int32, ticks int64, off int16) {
	s.buf[0] = 0x08
	binary.LittleEndian.PutUint32(s.buf[1:], uint32(days))
	binary.LittleEndian.PutUint64(s.buf[5:], uint64(ticks))
	binary.LittleEndian.PutUint16(s.buf[13:], uint16(off))
	s.crc = crc64.Update(s.crc, crcTable, s.buf[:15])
}

func roundToMs(ticks int64) int64 { return (ticks + 5000) / 10000 * 10000 }

// ---- the tdsextract leg: a CellSink that hashes every cell ----

type sumSink struct {
	sum
	cols    []decode.Column
	rounds  []bool // datetime/smalldatetime: round to ms
	scratch []byte
	val     []byte
	kind    []byte // per column: tag for variable-length values
	rows    int64
}

var _ decode.CellSink = (*sumSink)(nil)

func (s *sumSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	s.cols = cols
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
	s.scratch = decode.AppendDecimalText(s.scratch[:0], v)
	s.decimalText(s.scratch)
}
func (s *sumSink) Money(_ int, v int64) {
	s.scratch = decode.AppendMoneyText(s.scratch[:0], v)
	s.decimalText(s.scratch)
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
func (s *sumSink) BeginValue(int, int64)         { s.val = s.val[:0] }
func (s *sumSink) Reserve(_ int, n int) []byte {
	if cap(s.val)-len(s.val) < n {
		nv := make([]byte, len(s.val), 2*cap(s.val)+n)
		copy(nv, s.val)
		s.val = nv
	}
	return s.val[len(s.val) : len(s.val)+n]
}
func (s *sumSink) Commit(_ int, n int)   { s.val = s.val[:len(s.val)+n] }
func (s *sumSink) Write(_ int, p []byte) { s.val = append(s.val, p...) }
func (s *sumSink) EndValue(col int)      { s.bytes(s.kind[col], s.val) }
func (s *sumSink) EndRow() error         { s.row(); s.rows++; return nil }

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

var epoch0001 = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

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
		s.bytes(0x04, []byte(x))
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
	sumSink
	line  []byte
	field int
	isFlt []bool
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
		t.line = append(t.line, 0x1F)
	}
	t.field++
}
func (t *textSink) Null(int)           { t.sep() }
func (t *textSink) Int(_ int, v int64) { t.sep(); t.line = strconv.AppendInt(t.line, v, 10) }
func (t *textSink) Float64(_ int, v float64) {
	t.sep()
	t.line = strconv.AppendFloat(t.line, v, 'g', -1, 64)
}
func (t *textSink) BeginValue(int, int64) { t.sep(); t.sumSink.val = t.sumSink.val[:0] }
func (t *textSink) EndValue(int)          { t.line = append(t.line, t.sumSink.val...) }
func (t *textSink) EndRow() error {
	t.line = append(t.line, '\n')
	t.crc = crc64.Update(t.crc, crcTable, t.line)
	t.line, t.field = t.line[:0], 0
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
		crc = crc64.Update(crc, crcTable, line)
		rows++
	}
	return rows, crc, nil
}
