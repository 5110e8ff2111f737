package decode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
	"unicode/utf8"
)

// Value encoders: the server side of the value decoders, used by the test
// server (internal/sampleserver/tdsserver, internal/sampleserver/sampledb), by RPC parameters and by
// tests. Everything encodes by appending to dst.
//
// Two layers:
//   - Fast typed appenders (AppendIntN, AppendDecimalN, AppendUShortUTF16,
//     AppendPLP, ...) take plain values, do no validation beyond what the
//     wire width forces, never fail and never allocate when dst has room.
//     They are for pre-encoding millions of rows per second.
//   - AppendValue/AppendRow/AppendNBCRow take the generic value types of the
//     Capture sink (nil, bool, int64, float32, float64, Decimal, Money, Date,
//     Time, DateTime, DateTimeOffset, GUID, string, []byte, []float32,
//     Variant), check them against the TYPE_INFO and report type mismatches
//     and out-of-range values as errors.
//
// Wire layouts: MS-TDS 2.2.5.5 (data type definitions) and 2.2.5.2.3
// (TYPE_VARBYTE, PLP).

// DefaultPLPChunkSize is the PLP chunk size of AppendValue. SQL Server's own
// chunks vary; tests re-chunk with EncodeOptions.PLPChunk.
const DefaultPLPChunkSize = 8000

// TextPointer and TextTimestamp are what AppendValue sends before a
// non-NULL text, ntext or image value (MS-TDS 2.2.7.20: TextPointer is a
// B_VARBYTE of 16 bytes, then an 8-byte timestamp). Clients ignore both;
// these are recognisable constants.
var (
	TextPointer   = [16]byte{'t', 'd', 's', 'e', 'x', 't', 'r', 'a', 'c', 't', '-', 't', 'x', 't', 'p', 'r'}
	TextTimestamp = [8]byte{1, 0, 0, 0, 0, 0, 0, 0}
)

// Range limits of the date and time types.
var (
	minDateTimeDays  = DateFromCivil(1753, 1, 1) // datetime
	maxSmallDateDays = DateFromCivil(2079, 6, 6) // smalldatetime
)

// ---------------------------------------------------------------------------
// Fast typed appenders. "N" appenders write a BYTELEN TYPE_VARBYTE (length
// byte, then data) for the nullable types (INTN, FLTN, ...); "Fixed"
// appenders write the data of a fixed-length type (no length byte).

// AppendNullN appends a NULL of a BYTELEN type (GEN_NULL, one 0x00 byte).
func AppendNullN(dst []byte) []byte { return append(dst, 0) }

// AppendFixedInt appends v as a size-byte little-endian integer (size 1, 2,
// 4 or 8; tinyint, smallint, int, bigint). Higher bits are dropped.
func AppendFixedInt(dst []byte, size int, v int64) []byte {
	switch size {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(v))
}

// AppendIntN appends an INTN value of size 1, 2, 4 or 8 bytes.
func AppendIntN(dst []byte, size int, v int64) []byte {
	dst = append(dst, byte(size))
	return AppendFixedInt(dst, size, v)
}

// AppendFixedBit appends a bit (1 byte).
func AppendFixedBit(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendBitN appends a BITN value.
func AppendBitN(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1, 1)
	}
	return append(dst, 1, 0)
}

// AppendFixedFloat appends v as real (size 4) or float (size 8), LE IEEE 754.
func AppendFixedFloat(dst []byte, size int, v float64) []byte {
	if size == 4 {
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v)))
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}

// AppendFltN appends a FLTN value of size 4 or 8.
func AppendFltN(dst []byte, size int, v float64) []byte {
	dst = append(dst, byte(size))
	return AppendFixedFloat(dst, size, v)
}

// AppendFixedMoney appends money (size 8: the high 4 bytes, then the low 4
// bytes, each little-endian; MS-TDS 2.2.5.5.1.4) or smallmoney (size 4: one
// LE int32). v is scaled by 10^4.
func AppendFixedMoney(dst []byte, size int, v int64) []byte {
	if size == 4 {
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(uint64(v)>>32))
	return binary.LittleEndian.AppendUint32(dst, uint32(v))
}

// AppendMoneyN appends a MONEYN value of size 4 or 8.
func AppendMoneyN(dst []byte, size int, v int64) []byte {
	dst = append(dst, byte(size))
	return AppendFixedMoney(dst, size, v)
}

// datetimeWire converts v to datetime's wire fields: days since 1900-01-01
// and 1/300 s ticks, rounded to the nearest tick (half up, as SQL Server
// converts datetime2 to datetime), carrying into the next day.
func datetimeWire(v DateTime) (days int32, t300 uint32) {
	t := (v.Ticks*3 + 50000) / 100000
	days = v.Days - sqlEpochDays
	if t >= 300*86400 {
		days++
		t -= 300 * 86400
	}
	return days, uint32(t)
}

// smallDatetimeWire converts v to smalldatetime's days since 1900-01-01 and
// minutes. As SQL Server does, 29.998 s and less round down and 29.999 s
// and more round up to the next minute.
func smallDatetimeWire(v DateTime) (days int32, mins uint32) {
	m := (v.Ticks + 300_010_000) / 600_000_000
	days = v.Days - sqlEpochDays
	if m >= 1440 {
		days++
		m -= 1440
	}
	return days, uint32(m)
}

// AppendFixedDateTime appends datetime (size 8: LE int32 days since
// 1900-01-01, LE uint32 1/300 s ticks; MS-TDS 2.2.5.5.1.8) or smalldatetime
// (size 4: LE uint16 days, LE uint16 minutes) for v, rounded as
// datetimeWire and smallDatetimeWire say. The range is not checked.
func AppendFixedDateTime(dst []byte, size int, v DateTime) []byte {
	if size == 4 {
		d, m := smallDatetimeWire(v)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(d))
		return binary.LittleEndian.AppendUint16(dst, uint16(m))
	}
	d, t := datetimeWire(v)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(d))
	return binary.LittleEndian.AppendUint32(dst, t)
}

// AppendDateTimeN appends a DATETIMN value of size 4 or 8.
func AppendDateTimeN(dst []byte, size int, v DateTime) []byte {
	dst = append(dst, byte(size))
	return AppendFixedDateTime(dst, size, v)
}

// decimalLen returns the DECIMALN data length for a precision (MS-TDS
// 2.2.5.5.1.6): sign byte plus 4, 8, 12 or 16 magnitude bytes.
func decimalLen(precision uint8) int {
	switch {
	case precision == 0 || precision > 28:
		return 17
	case precision > 19:
		return 13
	case precision > 9:
		return 9
	}
	return 5
}

// appendDecimalBody appends the sign byte (1 = positive or zero, 0 =
// negative) and the LE magnitude in 4, 8, 12 or 16 bytes by v.Precision
// (0 means 38). Magnitude bits beyond the width are dropped.
func appendDecimalBody(dst []byte, v Decimal) []byte {
	sign := byte(1)
	if v.Neg && v.Hi|v.Lo != 0 {
		sign = 0
	}
	dst = append(dst, sign)
	switch decimalLen(v.Precision) {
	case 5:
		return binary.LittleEndian.AppendUint32(dst, uint32(v.Lo))
	case 9:
		return binary.LittleEndian.AppendUint64(dst, v.Lo)
	case 13:
		dst = binary.LittleEndian.AppendUint64(dst, v.Lo)
		return binary.LittleEndian.AppendUint32(dst, uint32(v.Hi))
	}
	dst = binary.LittleEndian.AppendUint64(dst, v.Lo)
	return binary.LittleEndian.AppendUint64(dst, v.Hi)
}

// AppendDecimalN appends a DECIMALN/NUMERICN value: length byte (5, 9, 13
// or 17 by v.Precision), sign byte, LE magnitude. v.Scale must already be
// the column's scale; the value is written as given.
func AppendDecimalN(dst []byte, v Decimal) []byte {
	dst = append(dst, byte(decimalLen(v.Precision)))
	return appendDecimalBody(dst, v)
}

// AppendGUIDN appends a uniqueidentifier (length 16, then the mixed-endian
// wire bytes; g is in RFC order).
func AppendGUIDN(dst []byte, g GUID) []byte {
	dst = append(dst, 16)
	return g.AppendWire(dst)
}

// appendUint24 appends the low 3 bytes of v, little-endian.
func appendUint24(dst []byte, v uint32) []byte {
	return append(dst, byte(v), byte(v>>8), byte(v>>16))
}

// AppendDateN appends a DATEN value: length 3, then LE days since 0001-01-01.
func AppendDateN(dst []byte, days int32) []byte {
	dst = append(dst, 3)
	return appendUint24(dst, uint32(days))
}

// TimeLen returns the byte length of the time part of time, datetime2 and
// datetimeoffset at scale (MS-TDS 2.2.5.5.1.8): 3 for scale 0..2, 4 for
// 3..4, 5 for 5..7.
func TimeLen(scale uint8) int {
	switch {
	case scale <= 2:
		return 3
	case scale <= 4:
		return 4
	}
	return 5
}

// scaleTicks converts 100 ns ticks to units of 10^-scale s, rounded half up;
// carry is 1 when rounding reached the next day (the units are then 0).
func scaleTicks(ticks int64, scale uint8) (units uint64, carry int32) {
	if scale > 7 {
		scale = 7
	}
	div := int64(pow10u64[7-scale])
	u := (ticks + div/2) / div
	if perDay := TicksPerDay / div; u >= perDay {
		return uint64(u - perDay), 1
	}
	return uint64(u), 0
}

func appendTimeBody(dst []byte, scale uint8, units uint64) []byte {
	switch TimeLen(scale) {
	case 3:
		return append(dst, byte(units), byte(units>>8), byte(units>>16))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(units))
	}
	return append(dst, byte(units), byte(units>>8), byte(units>>16), byte(units>>24), byte(units>>32))
}

// AppendTimeN appends a TIMEN value of scale 0..7 for ticks (100 ns since
// midnight): length byte, then the time in units of 10^-scale s in 3, 4 or 5
// bytes. Ticks are rounded half up to the scale; a rounding that reaches
// 24:00:00 wraps to 00:00:00, as SQL Server's conversion to time does.
func AppendTimeN(dst []byte, scale uint8, ticks int64) []byte {
	units, _ := scaleTicks(ticks, scale)
	dst = append(dst, byte(TimeLen(scale)))
	return appendTimeBody(dst, scale, units)
}

// AppendDateTime2N appends a DATETIME2N value: length byte, the time as
// AppendTimeN, then the 3-byte date. Rounding carries into the date.
func AppendDateTime2N(dst []byte, scale uint8, v DateTime) []byte {
	units, carry := scaleTicks(v.Ticks, scale)
	dst = append(dst, byte(TimeLen(scale)+3))
	dst = appendTimeBody(dst, scale, units)
	return appendUint24(dst, uint32(v.Days+carry))
}

// AppendDateTimeOffsetN appends a DATETIMEOFFSETN value: length byte, the
// UTC date and time as AppendDateTime2N, then the offset in minutes as a LE
// int16.
func AppendDateTimeOffsetN(dst []byte, scale uint8, v DateTimeOffset) []byte {
	units, carry := scaleTicks(v.UTC.Ticks, scale)
	dst = append(dst, byte(TimeLen(scale)+5))
	dst = appendTimeBody(dst, scale, units)
	dst = appendUint24(dst, uint32(v.UTC.Days+carry))
	return binary.LittleEndian.AppendUint16(dst, uint16(v.OffsetMin))
}

// AppendUShortBytes appends b as a USHORTCHARBINLEN value (binary,
// varbinary, or char data already in its code page). len(b) must not
// exceed 8000 (65534 at most; longer input is cut by the length field).
func AppendUShortBytes(dst []byte, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(b)))
	return append(dst, b...)
}

// AppendUShortString is AppendUShortBytes for a string (single-byte code
// page or UTF-8 text already encoded).
func AppendUShortString(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// AppendUShortText appends s (UTF-8) as a char/varchar value of collation
// c: USHORT byte length, then the bytes in c's code page (EncodeText). On
// error (a character the code page lacks, invalid UTF-8) dst is returned
// unchanged. The length is not checked against a declared maximum.
func AppendUShortText(dst []byte, c Collation, s string) ([]byte, error) {
	p := len(dst)
	dst = append(dst, 0, 0)
	out, err := EncodeText(dst, c, s)
	if err != nil {
		return dst[:p], err
	}
	binary.LittleEndian.PutUint16(out[p:], uint16(len(out)-p-2))
	return out, nil
}

// AppendUShortNull appends the NULL of a USHORTCHARBINLEN type (0xFFFF).
func AppendUShortNull(dst []byte) []byte { return append(dst, 0xFF, 0xFF) }

// AppendUShortUTF16 appends s (UTF-8) as an nchar/nvarchar value: USHORT
// byte length, then UTF-16LE. Nothing is allocated when dst has room. The
// encoding must fit 8000 bytes (the caller's check; see UTF16Len).
func AppendUShortUTF16(dst []byte, s string) []byte {
	p := len(dst)
	dst = append(dst, 0, 0)
	dst = AppendUTF16LE(dst, s)
	binary.LittleEndian.PutUint16(dst[p:], uint16(len(dst)-p-2))
	return dst
}

// AppendPLPNull appends a PLP NULL (PLP_NULL, eight 0xFF bytes).
func AppendPLPNull(dst []byte) []byte {
	return binary.LittleEndian.AppendUint64(dst, PLPNull)
}

// AppendPLP appends b as a PLP_BODY of known length: ULONGLONGLEN total,
// chunks of at most chunk bytes (chunk <= 0: one chunk), the terminator.
// An empty b is a total of 0 and the terminator alone (MS-TDS 2.2.5.2.3).
func AppendPLP(dst []byte, b []byte, chunk int) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(b)))
	return appendPLPChunks(dst, b, chunk)
}

// AppendPLPUnknown is AppendPLP with UNKNOWN_PLP_LEN instead of the total.
func AppendPLPUnknown(dst []byte, b []byte, chunk int) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, PLPUnknown)
	return appendPLPChunks(dst, b, chunk)
}

func appendPLPChunks(dst []byte, b []byte, chunk int) []byte {
	if chunk <= 0 {
		chunk = len(b)
	}
	for len(b) > 0 {
		n := min(chunk, len(b))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		dst = append(dst, b[:n]...)
		b = b[n:]
	}
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// plpFrame rewrites dst[start:], a value's raw bytes, in place into a
// PLP_BODY with chunks of at most chunk bytes (chunk <= 0: one chunk),
// with a known or unknown total length. It lets an encoder (UTF-16, code
// page) write straight into dst and frame afterwards, without a scratch
// buffer: the chunks move right from last to first.
func plpFrame(dst []byte, start, chunk int, unknownLen bool) []byte {
	n := len(dst) - start
	if chunk <= 0 || chunk > n {
		chunk = n
	}
	k := 0
	if n > 0 {
		k = (n + chunk - 1) / chunk
	}
	newLen := start + 8 + n + 4*k + 4
	if cap(dst) < newLen {
		dst = growBytes(dst, newLen-len(dst))
	}
	dst = dst[:newLen]
	for i := k - 1; i >= 0; i-- {
		from := start + i*chunk
		m := min(chunk, n-i*chunk)
		to := start + 8 + i*(chunk+4)
		copy(dst[to+4:to+4+m], dst[from:from+m])
		binary.LittleEndian.PutUint32(dst[to:], uint32(m))
	}
	total := uint64(n)
	if unknownLen {
		total = PLPUnknown
	}
	binary.LittleEndian.PutUint64(dst[start:], total)
	binary.LittleEndian.PutUint32(dst[newLen-4:], 0)
	return dst
}

// AppendPLPUTF16 appends s (UTF-8) as a PLP of UTF-16LE (nvarchar(max),
// xml), chunked at chunk bytes; a chunk boundary may fall inside a code
// unit or a surrogate pair, as the protocol allows. No allocation when
// dst has room.
func AppendPLPUTF16(dst []byte, s string, chunk int) []byte {
	start := len(dst)
	dst = AppendUTF16LE(dst, s)
	return plpFrame(dst, start, chunk, false)
}

// AppendPLPString appends the bytes of s (UTF-8 json, or text already in
// its code page) as a PLP of known length.
func AppendPLPString(dst []byte, s string, chunk int) []byte {
	start := len(dst)
	dst = append(dst, s...)
	return plpFrame(dst, start, chunk, false)
}

// Vector header facts (MS-TDS 2.2.5.5.7): layout byte 0xA9, version 1,
// dimension count, element type, 3 reserved bytes.
const (
	vectorLayout     = 0xA9
	vectorVersion    = 0x01
	vectorHeaderLen  = 8
	VectorFloat32    = 0x00 // element type of vector(n) float32
	maxVectorBytes   = 8000
	maxVectorFloat32 = (maxVectorBytes - vectorHeaderLen) / 4
)

// AppendVector appends a vector(len(v)) float32 value: USHORT length, the
// 8-byte header A9 01 dims(LE u16) 00 00 00 00, then LE float32 elements.
func AppendVector(dst []byte, v []float32) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(vectorHeaderLen+4*len(v)))
	dst = append(dst, vectorLayout, vectorVersion, byte(len(v)), byte(len(v)>>8), VectorFloat32, 0, 0, 0)
	for _, f := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

// ---------------------------------------------------------------------------
// Generic encoder.

// EncodeOptions tune AppendValue's framing of PLP values. The zero value is
// what AppendValue uses.
type EncodeOptions struct {
	// PLPChunk is the PLP chunk size in bytes; 0 means DefaultPLPChunkSize.
	PLPChunk int
	// UnknownPLPLength sends PLP values with UNKNOWN_PLP_LEN instead of
	// their total length.
	UnknownPLPLength bool
}

// EncodeError is the error of AppendValue: which type, which value, why.
type EncodeError struct {
	Type byte   // TYPE_INFO type id
	Msg  string // e.g. "value 256 out of range 0..255"
	Err  error  // the underlying error, if any (e.g. *UnrepresentableError)
}

func (e *EncodeError) Error() string {
	msg := e.Msg
	if e.Err != nil {
		msg = strings.TrimPrefix(e.Err.Error(), "decode: ")
	}
	return fmt.Sprintf("decode: cannot encode value for type 0x%02X: %s", e.Type, msg)
}

// Unwrap returns the underlying error.
func (e *EncodeError) Unwrap() error { return e.Err }

func wrapErr(ti *TypeInfo, err error) error {
	return &EncodeError{Type: ti.Type, Err: err}
}

func encErr(ti *TypeInfo, format string, args ...any) error {
	return &EncodeError{Type: ti.Type, Msg: fmt.Sprintf(format, args...)}
}

func mismatch(ti *TypeInfo, v any) error {
	return encErr(ti, "unsupported Go type %T", v)
}

// AppendValue appends v as the TYPE_VARBYTE of type ti, as in a ROW token
// (length prefix, PLP framing, text pointer included), with the default
// EncodeOptions. v is one of the generic value types or nil for NULL. On
// error dst is returned unchanged.
//
// Accepted Go types per column type:
//   - integers: int64, int, int32, int16, int8, uint8, uint16, uint32, uint64
//   - bit: bool; real/float: float32, float64
//   - money, smallmoney: Money; decimal/numeric: Decimal (rescaled exactly
//     to the column's scale; digits that would be lost are an error)
//   - date: Date; time: Time; datetime, smalldatetime, datetime2: DateTime
//     or time.Time (wall clock); datetimeoffset: DateTimeOffset or time.Time
//   - uniqueidentifier: GUID; char types, xml, json: string (char types also
//     []byte as bytes already in the code page); binary types, image, UDT:
//     []byte; vector: []float32; sql_variant: Variant
//
// char(n), nchar(n) and binary(n) values are padded to the declared length
// (spaces, UTF-16 spaces, zero bytes), as SQL Server sends them. Times are
// rounded half up to what the type holds, as SQL Server converts them:
// time(n) to n digits (a value that rounds to 24:00:00 wraps to 00:00:00),
// datetime2(n) and datetimeoffset(n) to n digits carrying into the date,
// datetime to 1/300 s, smalldatetime to the minute (29.999 s rounds up); a
// rounding past the type's last day is an error.
func AppendValue(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	return EncodeOptions{}.AppendValue(dst, ti, v)
}

// AppendValue is the package-level AppendValue with options o.
func (o EncodeOptions) AppendValue(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	start := len(dst)
	out, err := o.appendValue(dst, ti, v)
	if err != nil {
		return dst[:start], err
	}
	return out, nil
}

// AppendRow appends a ROW token (0xD1, MS-TDS 2.2.7.20): the token byte and
// one value per column.
func AppendRow(dst []byte, cols []Column, vals []any) ([]byte, error) {
	return EncodeOptions{}.AppendRow(dst, cols, vals)
}

// AppendNBCRow appends an NBCROW token (0xD2, MS-TDS 2.2.7.15): the token
// byte, a null bitmap of ceil(len(cols)/8) bytes (bit i, LSB first, set for
// a NULL column i) and the values of the non-NULL columns.
func AppendNBCRow(dst []byte, cols []Column, vals []any) ([]byte, error) {
	return EncodeOptions{}.AppendNBCRow(dst, cols, vals)
}

// AppendRow is the package-level AppendRow with options o.
func (o EncodeOptions) AppendRow(dst []byte, cols []Column, vals []any) ([]byte, error) {
	if len(vals) != len(cols) {
		return dst, fmt.Errorf("decode: row has %d values for %d columns", len(vals), len(cols))
	}
	start := len(dst)
	dst = append(dst, 0xD1)
	for i := range cols {
		var err error
		dst, err = o.AppendValue(dst, &cols[i].Type, vals[i])
		if err != nil {
			return dst[:start], fmt.Errorf("decode: column %d (%s): %w", i, cols[i].Name, err)
		}
	}
	return dst, nil
}

// AppendNBCRow is the package-level AppendNBCRow with options o.
func (o EncodeOptions) AppendNBCRow(dst []byte, cols []Column, vals []any) ([]byte, error) {
	if len(vals) != len(cols) {
		return dst, fmt.Errorf("decode: row has %d values for %d columns", len(vals), len(cols))
	}
	start := len(dst)
	dst = append(dst, 0xD2)
	bm := len(dst)
	for i := 0; i < (len(cols)+7)/8; i++ {
		dst = append(dst, 0)
	}
	for i := range cols {
		if vals[i] == nil {
			dst[bm+i/8] |= 1 << (i % 8)
			continue
		}
		var err error
		dst, err = o.AppendValue(dst, &cols[i].Type, vals[i])
		if err != nil {
			return dst[:start], fmt.Errorf("decode: column %d (%s): %w", i, cols[i].Name, err)
		}
	}
	return dst, nil
}

func (o EncodeOptions) chunk() int {
	if o.PLPChunk > 0 {
		return o.PLPChunk
	}
	return DefaultPLPChunkSize
}

// asInt extracts an integer of any Go integer type.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

func intRange(size int) (lo, hi int64) {
	switch size {
	case 1:
		return 0, 255
	case 2:
		return math.MinInt16, math.MaxInt16
	case 4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// Valid BYTELEN sizes as bit masks for nSize (bit n set: size n valid).
const (
	sizes1248 = 1<<1 | 1<<2 | 1<<4 | 1<<8
	sizes48   = 1<<4 | 1<<8
	sizes1    = 1 << 1
)

// nSize validates the length of a BYTELEN type's TYPE_INFO against a mask
// of valid sizes (a mask, not a variadic list, so nothing escapes).
func nSize(ti *TypeInfo, valid uint16) (int, error) {
	if ti.Size < 16 && valid&(1<<ti.Size) != 0 {
		return int(ti.Size), nil
	}
	return 0, invalidSize(ti)
}

func invalidSize(ti *TypeInfo) error {
	return encErr(ti, "invalid TYPE_INFO length %d", ti.Size)
}

func (o EncodeOptions) appendValue(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	switch ti.Type {
	case TypeNull:
		if v != nil {
			return dst, encErr(ti, "NULLTYPE holds only nil")
		}
		return dst, nil

	case TypeInt1, TypeInt2, TypeInt4, TypeInt8:
		if v == nil {
			return dst, encErr(ti, "fixed-length type cannot be NULL")
		}
		return appendIntBody(dst, ti, tiFixedLen(ti.Type), v)
	case TypeIntN:
		size, err := nSize(ti, sizes1248)
		if err != nil {
			return dst, err
		}
		if v == nil {
			return AppendNullN(dst), nil
		}
		return appendIntBody(append(dst, byte(size)), ti, size, v)

	case TypeBit, TypeBitN:
		if ti.Type == TypeBitN {
			if _, err := nSize(ti, sizes1); err != nil {
				return dst, err
			}
			if v == nil {
				return AppendNullN(dst), nil
			}
			dst = append(dst, 1)
		} else if v == nil {
			return dst, encErr(ti, "fixed-length type cannot be NULL")
		}
		b, ok := v.(bool)
		if !ok {
			return dst, mismatch(ti, v)
		}
		return AppendFixedBit(dst, b), nil

	case TypeFlt4, TypeFlt8, TypeFltN:
		size := tiFixedLen(ti.Type)
		if ti.Type == TypeFltN {
			var err error
			if size, err = nSize(ti, sizes48); err != nil {
				return dst, err
			}
			if v == nil {
				return AppendNullN(dst), nil
			}
			dst = append(dst, byte(size))
		} else if v == nil {
			return dst, encErr(ti, "fixed-length type cannot be NULL")
		}
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
			if size == 4 && !math.IsInf(x, 0) && math.Abs(x) > math.MaxFloat32 {
				return dst, encErr(ti, "value %g overflows real", x)
			}
		case float32:
			f = float64(x)
		default:
			return dst, mismatch(ti, v)
		}
		return AppendFixedFloat(dst, size, f), nil

	case TypeMoney, TypeMoney4, TypeMoneyN:
		size := tiFixedLen(ti.Type)
		if ti.Type == TypeMoneyN {
			var err error
			if size, err = nSize(ti, sizes48); err != nil {
				return dst, err
			}
			if v == nil {
				return AppendNullN(dst), nil
			}
			dst = append(dst, byte(size))
		} else if v == nil {
			return dst, encErr(ti, "fixed-length type cannot be NULL")
		}
		m, ok := v.(Money)
		if !ok {
			return dst, mismatch(ti, v)
		}
		if size == 4 && (m < math.MinInt32 || m > math.MaxInt32) {
			return dst, encErr(ti, "money value %d out of smallmoney range", int64(m))
		}
		return AppendFixedMoney(dst, size, int64(m)), nil

	case TypeDateTime, TypeDateTim4, TypeDateTimeN:
		size := tiFixedLen(ti.Type)
		if ti.Type == TypeDateTimeN {
			var err error
			if size, err = nSize(ti, sizes48); err != nil {
				return dst, err
			}
			if v == nil {
				return AppendNullN(dst), nil
			}
			dst = append(dst, byte(size))
		} else if v == nil {
			return dst, encErr(ti, "fixed-length type cannot be NULL")
		}
		dt, ok := asDateTime(v)
		if !ok {
			return dst, mismatch(ti, v)
		}
		if err := checkDateTime(ti, dt); err != nil {
			return dst, err
		}
		if size == 4 {
			d, _ := smallDatetimeWire(dt)
			if dt.Days < sqlEpochDays || d > maxSmallDateDays-sqlEpochDays {
				return dst, encErr(ti, "smalldatetime out of range 1900-01-01..2079-06-06 23:59")
			}
		} else {
			d, _ := datetimeWire(dt)
			if dt.Days < minDateTimeDays || d > MaxDate-sqlEpochDays {
				return dst, encErr(ti, "datetime out of range 1753-01-01..9999-12-31 23:59:59.997")
			}
		}
		return AppendFixedDateTime(dst, size, dt), nil

	case TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy:
		if v == nil {
			return AppendNullN(dst), nil
		}
		d, err := decimalForColumn(ti, v)
		if err != nil {
			return dst, err
		}
		return AppendDecimalN(dst, d), nil

	case TypeGUID:
		if ti.Size != 0 && ti.Size != 16 {
			return dst, encErr(ti, "invalid TYPE_INFO length %d (want 16)", ti.Size)
		}
		if v == nil {
			return AppendNullN(dst), nil
		}
		g, ok := v.(GUID)
		if !ok {
			return dst, mismatch(ti, v)
		}
		return AppendGUIDN(dst, g), nil

	case TypeDateN:
		if v == nil {
			return AppendNullN(dst), nil
		}
		d, err := dateValue(ti, v)
		if err != nil {
			return dst, err
		}
		return AppendDateN(dst, d), nil

	case TypeTimeN:
		if ti.Scale > 7 {
			return dst, encErr(ti, "time scale %d > 7", ti.Scale)
		}
		if v == nil {
			return AppendNullN(dst), nil
		}
		t, err := timeValue(ti, v)
		if err != nil {
			return dst, err
		}
		return AppendTimeN(dst, ti.Scale, t), nil

	case TypeDateTime2N:
		if ti.Scale > 7 {
			return dst, encErr(ti, "datetime2 scale %d > 7", ti.Scale)
		}
		if v == nil {
			return AppendNullN(dst), nil
		}
		dt, err := datetime2Value(ti, v)
		if err != nil {
			return dst, err
		}
		return AppendDateTime2N(dst, ti.Scale, dt), nil

	case TypeDateTimeOffset:
		if ti.Scale > 7 {
			return dst, encErr(ti, "datetimeoffset scale %d > 7", ti.Scale)
		}
		if v == nil {
			return AppendNullN(dst), nil
		}
		dto, err := dtoValue(ti, v)
		if err != nil {
			return dst, err
		}
		return AppendDateTimeOffsetN(dst, ti.Scale, dto), nil

	case TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar, TypeBigVarBinary, TypeBigBinary:
		return o.appendUShortType(dst, ti, v)

	case TypeChar, TypeVarChar, TypeBinary, TypeVarBinary:
		return appendLegacyShort(dst, ti, v)

	case TypeText, TypeNText, TypeImage:
		return appendTextType(dst, ti, v)

	case TypeXML:
		if v == nil {
			return AppendPLPNull(dst), nil
		}
		s, ok := v.(string)
		if !ok {
			return dst, mismatch(ti, v)
		}
		if !utf8.ValidString(s) {
			return dst, encErr(ti, "text is not valid UTF-8")
		}
		start := len(dst)
		dst = AppendUTF16LE(dst, s)
		return plpFrame(dst, start, o.chunk(), o.UnknownPLPLength), nil

	case TypeJSON:
		if v == nil {
			return AppendPLPNull(dst), nil
		}
		start := len(dst)
		switch x := v.(type) {
		case string:
			if !utf8.ValidString(x) {
				return dst, encErr(ti, "json text is not valid UTF-8")
			}
			dst = append(dst, x...)
		case []byte:
			if !utf8.Valid(x) {
				return dst, encErr(ti, "json text is not valid UTF-8")
			}
			dst = append(dst, x...)
		default:
			return dst, mismatch(ti, v)
		}
		return plpFrame(dst, start, o.chunk(), o.UnknownPLPLength), nil

	case TypeUDT:
		if v == nil {
			return AppendPLPNull(dst), nil
		}
		b, ok := v.([]byte)
		if !ok {
			return dst, mismatch(ti, v)
		}
		if ti.Size != 0 && ti.Size != MaxVarLen && len(b) > int(ti.Size) {
			return dst, encErr(ti, "UDT value of %d bytes exceeds max size %d", len(b), ti.Size)
		}
		start := len(dst)
		dst = append(dst, b...)
		return plpFrame(dst, start, o.chunk(), o.UnknownPLPLength), nil

	case TypeVector:
		if v == nil {
			return AppendUShortNull(dst), nil
		}
		f, ok := v.([]float32)
		if !ok {
			return dst, mismatch(ti, v)
		}
		if ti.Scale != VectorFloat32 {
			return dst, encErr(ti, "vector element type 0x%02X not supported (float32 is 0x00)", ti.Scale)
		}
		if len(f) == 0 || len(f) > maxVectorFloat32 {
			return dst, encErr(ti, "vector of %d dimensions (1..%d)", len(f), maxVectorFloat32)
		}
		if ti.Size != 0 && int(ti.Size) != vectorHeaderLen+4*len(f) {
			return dst, encErr(ti, "vector of %d dimensions does not match its declared size %d", len(f), ti.Size)
		}
		return AppendVector(dst, f), nil

	case TypeVariant:
		return appendVariant(dst, ti, v)
	}
	return dst, encErr(ti, "unknown type")
}

func appendIntBody(dst []byte, ti *TypeInfo, size int, v any) ([]byte, error) {
	n, ok := asInt(v)
	if !ok {
		return dst, mismatch(ti, v)
	}
	lo, hi := intRange(size)
	if n < lo || n > hi {
		return dst, encErr(ti, "value %d out of range %d..%d", n, lo, hi)
	}
	return AppendFixedInt(dst, size, n), nil
}

func asDateTime(v any) (DateTime, bool) {
	switch x := v.(type) {
	case DateTime:
		return x, true
	case time.Time:
		return DateTimeFromTime(x), true
	}
	return DateTime{}, false
}

func checkDateTime(ti *TypeInfo, dt DateTime) error {
	if dt.Ticks < 0 || dt.Ticks >= TicksPerDay {
		return encErr(ti, "time of day %d ticks outside 0..%d", dt.Ticks, int64(TicksPerDay-1))
	}
	if dt.Days < 0 || dt.Days > MaxDate {
		return encErr(ti, "date %d outside 0001-01-01..9999-12-31", dt.Days)
	}
	return nil
}

func dateValue(ti *TypeInfo, v any) (int32, error) {
	var d int32
	switch x := v.(type) {
	case Date:
		d = int32(x)
	case time.Time:
		d = DateTimeFromTime(x).Days
	default:
		return 0, mismatch(ti, v)
	}
	if d < 0 || d > MaxDate {
		return 0, encErr(ti, "date %d outside 0001-01-01..9999-12-31", d)
	}
	return d, nil
}

func timeValue(ti *TypeInfo, v any) (int64, error) {
	var t int64
	switch x := v.(type) {
	case Time:
		t = int64(x)
	case time.Duration:
		t = int64(x / 100)
	default:
		return 0, mismatch(ti, v)
	}
	if t < 0 || t >= TicksPerDay {
		return 0, encErr(ti, "time of day %d ticks outside 0..%d", t, int64(TicksPerDay-1))
	}
	return t, nil
}

func datetime2Value(ti *TypeInfo, v any) (DateTime, error) {
	dt, ok := asDateTime(v)
	if !ok {
		return dt, mismatch(ti, v)
	}
	if err := checkDateTime(ti, dt); err != nil {
		return dt, err
	}
	if _, carry := scaleTicks(dt.Ticks, ti.Scale); dt.Days+carry > MaxDate {
		return dt, encErr(ti, "rounding to scale %d passes 9999-12-31", ti.Scale)
	}
	return dt, nil
}

func dtoValue(ti *TypeInfo, v any) (DateTimeOffset, error) {
	var dto DateTimeOffset
	switch x := v.(type) {
	case DateTimeOffset:
		dto = x
	case time.Time:
		dto = DateTimeOffsetFromTime(x)
	default:
		return dto, mismatch(ti, v)
	}
	if dto.OffsetMin < -840 || dto.OffsetMin > 840 {
		return dto, encErr(ti, "offset %d minutes outside -840..840", dto.OffsetMin)
	}
	if err := checkDateTime(ti, dto.UTC); err != nil {
		return dto, err
	}
	if _, carry := scaleTicks(dto.UTC.Ticks, ti.Scale); dto.UTC.Days+carry > MaxDate {
		return dto, encErr(ti, "rounding to scale %d passes 9999-12-31", ti.Scale)
	}
	// The local time must be a valid date too (SQL Server checks both).
	if l := dto.Local(); l.Days < 0 || l.Days > MaxDate {
		return dto, encErr(ti, "local time outside 0001-01-01..9999-12-31")
	}
	return dto, nil
}

// decimalForColumn rescales v exactly to the column's scale and checks
// that it fits the column's precision.
func decimalForColumn(ti *TypeInfo, v any) (Decimal, error) {
	d, ok := v.(Decimal)
	if !ok {
		return d, mismatch(ti, v)
	}
	prec := ti.Precision
	if prec == 0 || prec > 38 {
		return d, encErr(ti, "decimal precision %d outside 1..38", prec)
	}
	if ti.Scale > prec {
		return d, encErr(ti, "decimal scale %d exceeds precision %d", ti.Scale, prec)
	}
	r, err := RescaleDecimal(d, ti.Scale)
	if err != nil {
		return d, wrapErr(ti, err)
	}
	if !fitsPrecision(r.Hi, r.Lo, prec) {
		return d, encErr(ti, "value %s does not fit decimal(%d,%d)", d.String(), prec, ti.Scale)
	}
	r.Precision = prec
	return r, nil
}

var errDecimalLoss = errors.New("decode: rescaling the decimal would drop non-zero digits")

// RescaleDecimal returns d with the given scale: exact multiplication by a
// power of ten for a larger scale, exact division for a smaller one (an
// error when non-zero digits would be dropped, or when the magnitude would
// pass 128 bits).
func RescaleDecimal(d Decimal, scale uint8) (Decimal, error) {
	hi, lo := d.Hi, d.Lo
	for s := d.Scale; s < scale; {
		k := min(int(scale-s), 19)
		var of bool
		hi, lo, of = mul128(hi, lo, pow10u64[k])
		if of {
			return d, errDecimalPrecision
		}
		s += uint8(k)
	}
	for s := d.Scale; s > scale; {
		k := min(int(s-scale), 19)
		m := pow10u64[k]
		qhi := hi / m
		qlo, rem := bits.Div64(hi%m, lo, m)
		if rem != 0 {
			return d, errDecimalLoss
		}
		hi, lo = qhi, qlo
		s -= uint8(k)
	}
	d.Hi, d.Lo, d.Scale = hi, lo, scale
	return d, nil
}

// charLimit is the maximum byte length of a USHORTLEN value of ti.
func charLimit(ti *TypeInfo) int {
	if ti.Size == 0 || ti.Size > 8000 {
		return 8000
	}
	return int(ti.Size)
}

// appendCharData appends the data bytes of a char-family or binary value
// (no length prefix): code page text, UTF-16LE or bytes.
func appendCharData(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	switch ti.Type {
	case TypeNVarChar, TypeNChar, TypeNText:
		s, ok := v.(string)
		if !ok {
			return dst, mismatch(ti, v)
		}
		if !utf8.ValidString(s) {
			return dst, encErr(ti, "text is not valid UTF-8")
		}
		return AppendUTF16LE(dst, s), nil
	case TypeBigVarChar, TypeBigChar, TypeChar, TypeVarChar, TypeText:
		switch x := v.(type) {
		case string:
			out, err := EncodeText(dst, ti.Collation, x)
			if err != nil {
				return dst, wrapErr(ti, err)
			}
			return out, nil
		case []byte:
			return append(dst, x...), nil
		}
		return dst, mismatch(ti, v)
	}
	b, ok := v.([]byte)
	if !ok {
		return dst, mismatch(ti, v)
	}
	return append(dst, b...), nil
}

// padFixed pads the data dst[start:] of a fixed-length char, nchar or
// binary column to n bytes.
func padFixed(dst []byte, t byte, start, n int) []byte {
	for len(dst)-start < n {
		switch t {
		case TypeBigChar, TypeChar:
			dst = append(dst, ' ')
		case TypeNChar:
			dst = append(dst, ' ', 0)
		default:
			dst = append(dst, 0)
		}
	}
	return dst
}

func (o EncodeOptions) appendUShortType(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	if ti.Size == MaxVarLen {
		if ti.Type != TypeBigVarChar && ti.Type != TypeNVarChar && ti.Type != TypeBigVarBinary {
			return dst, encErr(ti, "max length 0xFFFF is only valid for varchar, nvarchar and varbinary")
		}
		if v == nil {
			return AppendPLPNull(dst), nil
		}
		start := len(dst)
		dst, err := appendCharData(dst, ti, v)
		if err != nil {
			return dst, err
		}
		return plpFrame(dst, start, o.chunk(), o.UnknownPLPLength), nil
	}
	if v == nil {
		return AppendUShortNull(dst), nil
	}
	p := len(dst)
	dst = append(dst, 0, 0)
	dst, err := appendCharData(dst, ti, v)
	if err != nil {
		return dst, err
	}
	limit := charLimit(ti)
	if ti.Type == TypeBigChar || ti.Type == TypeNChar || ti.Type == TypeBigBinary {
		dst = padFixed(dst, ti.Type, p+2, limit)
	}
	n := len(dst) - p - 2
	if n > limit {
		return dst, encErr(ti, "value of %d bytes exceeds the declared length %d", n, limit)
	}
	binary.LittleEndian.PutUint16(dst[p:], uint16(n))
	return dst, nil
}

// appendLegacyShort encodes the legacy CHAR, VARCHAR, BINARY and VARBINARY
// types, whose TYPE_VARLEN is a BYTELEN (MS-TDS 2.2.5.2.3, 2.2.5.4.3): at
// most 255 bytes, and 0 is NULL (so an empty value cannot be told from
// NULL). Fixed-length CHAR and BINARY are padded like char(n)/binary(n)
// (2.2.5.4.3: "adds blanks to the end of a char and adds binary zeros to the
// end of a binary").
func appendLegacyShort(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	if v == nil {
		return AppendNullN(dst), nil
	}
	p := len(dst)
	dst = append(dst, 0)
	dst, err := appendCharData(dst, ti, v)
	if err != nil {
		return dst, err
	}
	limit := 255
	if ti.Size != 0 && ti.Size < 255 {
		limit = int(ti.Size)
	}
	if ti.Type == TypeChar || ti.Type == TypeBinary {
		dst = padFixed(dst, ti.Type, p+1, limit)
	}
	n := len(dst) - p - 1
	if n > limit {
		return dst, encErr(ti, "value of %d bytes exceeds the declared length %d", n, limit)
	}
	dst[p] = byte(n)
	return dst, nil
}

// appendTextType encodes text, ntext and image (MS-TDS 2.2.7.20): NULL is a
// zero TextPointer length; otherwise TextPointer (B_VARBYTE, 16 bytes),
// Timestamp (8 bytes), then the data as LONGLEN + bytes.
func appendTextType(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	if v == nil {
		return append(dst, 0), nil
	}
	dst = append(dst, byte(len(TextPointer)))
	dst = append(dst, TextPointer[:]...)
	dst = append(dst, TextTimestamp[:]...)
	p := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := appendCharData(dst, ti, v)
	if err != nil {
		return dst, err
	}
	n := len(dst) - p - 4
	if ti.Size != 0 && ti.Size <= math.MaxInt32 && n > int(ti.Size) || n > math.MaxInt32 {
		return dst, encErr(ti, "value of %d bytes exceeds the declared length %d", n, ti.Size)
	}
	binary.LittleEndian.PutUint32(dst[p:], uint32(n))
	return dst, nil
}

// MaxVariantLen is the largest sql_variant value (MS-TDS 2.2.5.5.4: 8000
// bytes of data plus base type, prop bytes and properties).
const MaxVariantLen = 8009

// appendVariant encodes sql_variant (MS-TDS 2.2.5.5.4): LONGLEN total (0 =
// NULL), BaseType, PropBytes, the properties of the base type, then the
// base value's data without its length prefix.
func appendVariant(dst []byte, ti *TypeInfo, v any) ([]byte, error) {
	if v == nil {
		return append(dst, 0, 0, 0, 0), nil
	}
	var vv Variant
	switch x := v.(type) {
	case Variant:
		vv = x
	case *Variant:
		if x == nil {
			return append(dst, 0, 0, 0, 0), nil
		}
		vv = *x
	default:
		return dst, mismatch(ti, v)
	}
	if vv.Value == nil {
		return dst, encErr(ti, "sql_variant base value cannot be NULL (send a NULL sql_variant instead)")
	}
	bt := FixedForm(vv.Type)
	p := len(dst)
	dst = append(dst, 0, 0, 0, 0, bt.Type)
	var err error
	switch bt.Type {
	case TypeInt1, TypeInt2, TypeInt4, TypeInt8, TypeBit, TypeFlt4, TypeFlt8,
		TypeMoney, TypeMoney4, TypeDateTime, TypeDateTim4:
		dst = append(dst, 0)
		dst, err = EncodeOptions{}.appendValue(dst, &bt, vv.Value)
	case TypeGUID, TypeDateN:
		dst = append(dst, 0)
		dst, err = EncodeOptions{}.appendValue(dst, &bt, vv.Value)
		dst = dropLenByte(dst, p+6, err)
	case TypeDecimalN, TypeNumericN:
		dst = append(dst, 2, bt.Precision, bt.Scale)
		dst, err = EncodeOptions{}.appendValue(dst, &bt, vv.Value)
		dst = dropLenByte(dst, p+8, err)
	case TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
		dst = append(dst, 1, bt.Scale)
		dst, err = EncodeOptions{}.appendValue(dst, &bt, vv.Value)
		dst = dropLenByte(dst, p+7, err)
	case TypeBigVarBinary, TypeBigBinary:
		if bt.Size == MaxVarLen {
			return dst[:p], encErr(ti, "sql_variant cannot hold a (max) type")
		}
		dst = append(dst, 2)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(charLimit(&bt)))
		dst, err = appendVariantChars(dst, &bt, vv.Value)
	case TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		if bt.Size == MaxVarLen {
			return dst[:p], encErr(ti, "sql_variant cannot hold a (max) type")
		}
		dst = append(dst, 7)
		dst = binary.LittleEndian.AppendUint32(dst, bt.Collation.Info)
		dst = append(dst, bt.Collation.SortID)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(charLimit(&bt)))
		dst, err = appendVariantChars(dst, &bt, vv.Value)
	default:
		return dst[:p], encErr(ti, "type 0x%02X cannot be a sql_variant base type", bt.Type)
	}
	if err != nil {
		return dst[:p], err
	}
	n := len(dst) - p - 4
	limit := MaxVariantLen
	if ti.Size != 0 && ti.Size < MaxVariantLen {
		limit = int(ti.Size)
	}
	if n > limit {
		return dst[:p], encErr(ti, "sql_variant of %d bytes exceeds %d", n, limit)
	}
	binary.LittleEndian.PutUint32(dst[p:], uint32(n))
	return dst, nil
}

// dropLenByte removes the BYTELEN at dst[i] written by a nullable-type
// encoder (sql_variant data carries no length of its own).
func dropLenByte(dst []byte, i int, err error) []byte {
	if err != nil || len(dst) <= i {
		return dst
	}
	copy(dst[i:], dst[i+1:])
	return dst[:len(dst)-1]
}

// appendVariantChars appends a char or binary base value's data, padded for
// the fixed-length types, checked against the declared length.
func appendVariantChars(dst []byte, bt *TypeInfo, v any) ([]byte, error) {
	start := len(dst)
	dst, err := appendCharData(dst, bt, v)
	if err != nil {
		return dst, err
	}
	limit := charLimit(bt)
	if bt.Type == TypeBigChar || bt.Type == TypeNChar || bt.Type == TypeBigBinary {
		dst = padFixed(dst, bt.Type, start, limit)
	}
	if n := len(dst) - start; n > limit {
		return dst, encErr(bt, "value of %d bytes exceeds the declared length %d", n, limit)
	}
	return dst, nil
}
