package postgres

import (
	"encoding/binary"
	"math/bits"

	"github.com/tdsextract/tdsextract/decode"
)

// PostgreSQL's binary COPY format (the "Binary Format" section of the COPY
// reference): an 11-byte signature, an int32 flags field and an int32
// header-extension length; then per tuple an int16 field count and per
// field an int32 length (-1 for NULL) followed by the value in the type's
// binary send/recv form, all integers big-endian; then an int16 -1.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// pgEpochDays is 2000-01-01, PostgreSQL's date and timestamp epoch, in
// decode's day numbers (days since 0001-01-01): 730119.
var pgEpochDays = int64(decode.DateFromCivil(2000, 1, 1))

const usPerDay = 86_400_000_000

// Binary send forms of the types the sink writes, each appended to b.
// Callers make room first; each returns b grown by the field (length
// prefix included).

func appendNull(b []byte) []byte { return append(b, 0xFF, 0xFF, 0xFF, 0xFF) }

func appendBool(b []byte, v bool) []byte {
	x := byte(0)
	if v {
		x = 1
	}
	return append(b, 0, 0, 0, 1, x)
}

func appendInt2(b []byte, v int16) []byte {
	return append(b, 0, 0, 0, 2, byte(uint16(v)>>8), byte(v))
}

func appendInt4(b []byte, v int32) []byte {
	b = append(b, 0, 0, 0, 4)
	return binary.BigEndian.AppendUint32(b, uint32(v))
}

func appendInt8(b []byte, v int64) []byte {
	b = append(b, 0, 0, 0, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

// dateValue is a date's binary value: days since 2000-01-01.
func dateValue(days int32) int32 { return int32(int64(days) - pgEpochDays) }

// timestampValue is a timestamp's binary value: microseconds since
// 2000-01-01 00:00. Ticks are 100 ns: the sub-microsecond digit is
// truncated (ticks are never negative), so no value moves into the next
// second, day or year (9999-12-31 23:59:59.9999999 stays in 9999).
func timestampValue(v decode.DateTime) int64 {
	return (int64(v.Days)-pgEpochDays)*usPerDay + v.Ticks/10
}

// timestampMsValue is timestampValue rounded to the millisecond, for
// datetime: its 1/300 s ticks arrive as 100 ns ticks rounded, and SQL
// Server shows (and converts to text) the value rounded to 3 digits. The
// largest datetime fraction, 299/300 s, rounds to .997, so the rounding
// never carries into the next second.
func timestampMsValue(v decode.DateTime) int64 {
	return (int64(v.Days)-pgEpochDays)*usPerDay + (v.Ticks+5000)/10000*1000
}

// pow10u holds 10^0 .. 10^19.
var pow10u = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return
}()

// numericGroups writes the base-10000 digits of mag/10^scale into d, least
// significant first, aligned so the decimal point falls between two
// groups, and returns how many there are (0 for zero) and how many of them
// are after the point. mag < 10^38 gives at most 11 groups (10 after the
// point when scale is 38).
func numericGroups(d *[12]uint16, hi, lo uint64, scale uint8) (n, frac int) {
	pad := (4 - int(scale)%4) % 4 // decimal digits that fill the last fraction group
	frac = (int(scale) + pad) / 4
	if hi == 0 && lo == 0 {
		return 0, frac
	}
	// The lowest group holds the low 4-pad decimal digits scaled by 10^pad.
	var r uint64
	if hi != 0 {
		var q uint64
		q, r = bits.Div64(hi%pow10u[4-pad], lo, pow10u[4-pad])
		hi, lo = hi/pow10u[4-pad], q
	} else {
		switch pad {
		case 0:
			r, lo = lo%10000, lo/10000
		case 1:
			r, lo = lo%1000, lo/1000
		case 2:
			r, lo = lo%100, lo/100
		default:
			r, lo = lo%10, lo/10
		}
	}
	d[0] = uint16(r * pow10u[pad])
	n = 1
	// Above 64 bits, take 16 decimal digits (four groups) per 128-bit
	// division; the rest is 64-bit arithmetic by constants.
	for hi != 0 {
		var q uint64
		q, r = bits.Div64(hi%1e16, lo, 1e16)
		hi, lo = hi/1e16, q
		for k := 0; k < 4; k++ {
			d[n] = uint16(r % 10000)
			r /= 10000
			n++
		}
	}
	for lo != 0 {
		d[n] = uint16(lo % 10000)
		lo /= 10000
		n++
	}
	for n > 0 && d[n-1] == 0 { // leading zero groups (from the 128-bit steps)
		n--
	}
	return n, frac
}

// appendNumeric appends numeric's binary form (int16 ndigits, weight,
// sign, dscale, then ndigits base-10000 digits, most significant first)
// for (-1)^neg * (hi<<64|lo) / 10^scale, exactly: every decimal(38,s) and
// money value. Trailing zero groups are left out, as PostgreSQL stores it.
func appendNumeric(b []byte, hi, lo uint64, neg bool, scale uint8) []byte {
	var d [12]uint16
	n, frac := numericGroups(&d, hi, lo, scale)
	weight := n - 1 - frac
	low := 0
	for low < n && d[low] == 0 {
		low++
	}
	nd := n - low
	sign := uint16(0)
	if neg && nd > 0 {
		sign = 0x4000
	}
	if nd == 0 {
		weight = 0
	}
	b = binary.BigEndian.AppendUint32(b, uint32(8+2*nd))
	b = append(b, byte(nd>>8), byte(nd), byte(uint16(weight)>>8), byte(weight), byte(sign>>8), byte(sign), 0, scale)
	for i := n - 1; i >= low; i-- {
		b = append(b, byte(d[i]>>8), byte(d[i]))
	}
	return b
}

func appendDecimal(b []byte, v decode.Decimal) []byte {
	return appendNumeric(b, v.Hi, v.Lo, v.Neg, v.Scale)
}

// appendMoney appends money (an integer scaled by 10^4) as numeric(19,4).
func appendMoney(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		u = -u // math.MinInt64 too: its magnitude is 2^63 as uint64
	}
	return appendNumeric(b, 0, u, v < 0, 4)
}

// appendFloat4Array appends a one-dimensional real[] without NULLs from
// little-endian float32 elements (a vector's wire form): the array header
// (ndim, has-null flag, element type, dimension, lower bound 1) and one
// length-prefixed big-endian float4 per element.
func appendFloat4Array(b []byte, le []byte) []byte {
	n := len(le) / 4
	b = binary.BigEndian.AppendUint32(b, uint32(arrayHeaderLen+8*n))
	b = appendArrayHeader(b, n)
	for i := 0; i < n; i++ {
		b = append(b, 0, 0, 0, 4, le[4*i+3], le[4*i+2], le[4*i+1], le[4*i])
	}
	return b
}

// arrayHeaderLen is the header of a one-dimensional array; with no
// elements it is 12 bytes (ndim 0), but it is always reserved whole.
const arrayHeaderLen = 20

func appendArrayHeader(b []byte, n int) []byte {
	if n == 0 {
		// PostgreSQL reads exactly ndim dimensions: an empty array is
		// ndim 0, the has-null flag and the element type.
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
		return binary.BigEndian.AppendUint32(b, oidFloat4)
	}
	b = append(b, 0, 0, 0, 1, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, oidFloat4)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	return append(b, 0, 0, 0, 1)
}

// expandFloat4Array turns b[at:] (the array header space of
// arrayHeaderLen bytes, then little-endian float32 elements) into the
// array's binary form in place, growing b by 4 bytes per element (the
// caller made room), and returns b and the array's length.
func expandFloat4Array(b []byte, at int) ([]byte, int) {
	raw := len(b) - at - arrayHeaderLen
	n := raw / 4
	total := 8 * n
	if n == 0 {
		total = -8 // ndim 0: 12 header bytes, not 20
	}
	end := at + arrayHeaderLen + total
	b = b[:max(end, len(b))]
	// From the last element down: element i moves from at+20+4i to
	// at+20+8i, never below where it came from.
	for i := n - 1; i >= 0; i-- {
		src := at + arrayHeaderLen + 4*i
		dst := at + arrayHeaderLen + 8*i
		b0, b1, b2, b3 := b[src], b[src+1], b[src+2], b[src+3]
		b[dst], b[dst+1], b[dst+2], b[dst+3] = 0, 0, 0, 4
		b[dst+4], b[dst+5], b[dst+6], b[dst+7] = b3, b2, b1, b0
	}
	appendArrayHeader(b[at:at], n)
	return b[:end], end - at
}
