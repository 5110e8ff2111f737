package decode

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"time"
)

// Canonical text forms of decoded values: exact, as SQL Server shows them
// (datetime with 3 digits, smalldatetime with none, money with 4), floats
// shortest round-trip, digits below 100 ns never rounded. Nothing turns into
// text unless a sink asks for it: these helpers append to the sink's own
// buffer and never allocate.

// Calendar facts used throughout the package.
const (
	// MaxDate is the day number of 9999-12-31, the last day SQL Server knows.
	MaxDate = 3652058
	// unixEpochDays is the day number of 1970-01-01.
	unixEpochDays = 719162
	// sqlEpochDays is the day number of 1900-01-01, day 0 of datetime and
	// smalldatetime.
	sqlEpochDays = 693595
)

// pow10u64 holds 10^0..10^19.
var pow10u64 = [20]uint64{
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	10000000000, 100000000000, 1000000000000, 10000000000000, 100000000000000,
	1000000000000000, 10000000000000000, 100000000000000000, 1000000000000000000,
	10000000000000000000,
}

// DateFromCivil returns the day number (0 = 0001-01-01, proleptic Gregorian)
// of year y, month m (1..12), day d (1..31). Out-of-range months and days are
// not normalised; callers validate. Years before 1 give negative numbers.
func DateFromCivil(y, m, d int) int32 {
	// Days-from-civil in the style of H. Hinnant's algorithms: the year
	// starts on March 1 so the leap day is the last day of the year.
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int32(era*146097 + doe - 719468 + unixEpochDays)
}

// CivilFromDate is the inverse of DateFromCivil.
func CivilFromDate(days int32) (y, m, d int) {
	z := int(days) - unixEpochDays + 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// Time returns the wall time of dt as a time.Time in UTC (the value has no
// zone; UTC is only the carrier). Ticks are 100 ns.
func (dt DateTime) Time() time.Time {
	sec := (int64(dt.Days)-unixEpochDays)*86400 + dt.Ticks/10_000_000
	return time.Unix(sec, (dt.Ticks%10_000_000)*100).UTC()
}

// DateTimeFromTime returns the wall-clock date and time of t in t's own
// location. Nanoseconds below 100 ns are truncated.
func DateTimeFromTime(t time.Time) DateTime {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return DateTime{
		Days:  DateFromCivil(y, int(mo), d),
		Ticks: (int64(h)*3600+int64(mi)*60+int64(s))*10_000_000 + int64(t.Nanosecond())/100,
	}
}

// Time returns the instant of v as a time.Time in a fixed zone of the
// value's offset (named "", as time.FixedZone).
func (v DateTimeOffset) Time() time.Time {
	return v.UTC.Time().In(time.FixedZone("", int(v.OffsetMin)*60))
}

// DateTimeOffsetFromTime returns t as a UTC instant plus t's offset from UTC
// in minutes (seconds of the offset are dropped).
func DateTimeOffsetFromTime(t time.Time) DateTimeOffset {
	_, off := t.Zone()
	return DateTimeOffset{UTC: DateTimeFromTime(t.UTC()), OffsetMin: int16(off / 60)}
}

// Local returns the wall time of v at its own offset.
func (v DateTimeOffset) Local() DateTime {
	return addTicks(v.UTC, int64(v.OffsetMin)*60*10_000_000)
}

// addTicks adds a (possibly negative) tick count to dt, carrying into days.
func addTicks(dt DateTime, t int64) DateTime {
	t += dt.Ticks
	days := t / TicksPerDay
	t %= TicksPerDay
	if t < 0 {
		t += TicksPerDay
		days--
	}
	return DateTime{Days: dt.Days + int32(days), Ticks: t}
}

// append2 appends v (0..99) as two digits.
func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// appendUintPad appends v with at least width digits, zero-padded.
func appendUintPad(dst []byte, v uint64, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	for len(buf)-i < width {
		i--
		buf[i] = '0'
	}
	return append(dst, buf[i:]...)
}

// AppendDateText appends days (0 = 0001-01-01) as YYYY-MM-DD. Day numbers
// outside 0001..9999 are still written with the proleptic calendar: a year
// above 9999 gets more digits, a year below 1 a leading '-'.
func AppendDateText(dst []byte, days int32) []byte {
	y, m, d := CivilFromDate(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	dst = appendUintPad(dst, uint64(y), 4)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

// roundTicks rounds ticks (100 ns) half up to scale fractional digits.
func roundTicks(ticks int64, scale uint8) int64 {
	if scale >= 7 {
		return ticks
	}
	u := int64(pow10u64[7-scale])
	return (ticks + u/2) / u * u
}

// appendClock appends hh:mm:ss and exactly scale fractional digits (none
// for 0) of ticks, which must be in [0, TicksPerDay) and already rounded.
func appendClock(dst []byte, ticks int64, scale uint8) []byte {
	if scale > 7 {
		scale = 7
	}
	sec := ticks / 10_000_000
	frac := ticks % 10_000_000
	dst = append2(dst, int(sec/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(sec/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(sec%60))
	if scale > 0 {
		dst = append(dst, '.')
		dst = appendUintPad(dst, uint64(frac)/pow10u64[7-scale], int(scale))
	}
	return dst
}

// AppendTimeText appends a time of day given as 100 ns ticks as hh:mm:ss
// followed by exactly scale fractional digits (none when scale is 0; scale
// is capped at 7). The fraction is rounded half up to scale digits; a
// rounding that would reach 24:00:00 truncates instead. Ticks outside
// [0, TicksPerDay) are reduced modulo one day.
func AppendTimeText(dst []byte, ticks int64, scale uint8) []byte {
	ticks %= TicksPerDay
	if ticks < 0 {
		ticks += TicksPerDay
	}
	if r := roundTicks(ticks, scale); r < TicksPerDay {
		ticks = r
	} else if scale < 7 {
		u := int64(pow10u64[7-scale])
		ticks = ticks / u * u
	}
	return appendClock(dst, ticks, scale)
}

// AppendDateTimeText appends v as "YYYY-MM-DD hh:mm:ss" plus exactly scale
// fractional digits: callers pass the column's scale for datetime2, 3 for
// datetime (so a datetime shows .003/.007 as SQL Server does) and 0 for
// smalldatetime. The fraction is rounded half up and carries into the
// date; a carry past 9999-12-31 truncates instead.
func AppendDateTimeText(dst []byte, v DateTime, scale uint8) []byte {
	v = roundDateTime(v, scale)
	dst = AppendDateText(dst, v.Days)
	dst = append(dst, ' ')
	return appendClock(dst, v.Ticks, scale)
}

// roundDateTime normalises v.Ticks into one day and rounds it to scale
// digits, carrying into the date unless that would pass 9999-12-31.
func roundDateTime(v DateTime, scale uint8) DateTime {
	if v.Ticks < 0 || v.Ticks >= TicksPerDay {
		v = addTicks(DateTime{Days: v.Days}, v.Ticks)
	}
	if scale >= 7 {
		return v
	}
	r := roundTicks(v.Ticks, scale)
	if r < TicksPerDay {
		v.Ticks = r
	} else if v.Days < MaxDate {
		v.Days++
		v.Ticks = 0
	} else {
		u := int64(pow10u64[7-scale])
		v.Ticks = v.Ticks / u * u
	}
	return v
}

// AppendDateTimeOffsetText appends the local wall time of v (UTC plus the
// offset) as AppendDateTimeText does, followed by the offset as "+hh:mm" or
// "-hh:mm" (ISO 8601, "+00:00" for UTC).
func AppendDateTimeOffsetText(dst []byte, v DateTimeOffset, scale uint8) []byte {
	dst = AppendDateTimeText(dst, v.Local(), scale)
	off := int(v.OffsetMin)
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	dst = appendUintPad(dst, uint64(off/60), 2)
	dst = append(dst, ':')
	return append2(dst, off%60)
}

const hexDigits = "0123456789abcdef"

// AppendGUIDText appends g (RFC 4122 byte order) in the lower-case canonical
// 8-4-4-4-12 form.
func AppendGUIDText(dst []byte, g GUID) []byte {
	for i, b := range g {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0x0F])
	}
	return dst
}

// String returns the canonical text of g.
func (g GUID) String() string {
	var buf [36]byte
	return string(AppendGUIDText(buf[:0], g))
}

// GUIDFromWire converts the 16 wire bytes of a uniqueidentifier (first
// three groups little-endian, MS-TDS 2.2.5.5.1.7) to RFC byte order. Bytes
// missing from a short b are zero.
func GUIDFromWire(b []byte) GUID {
	var w [16]byte
	copy(w[:], b)
	return GUID{w[3], w[2], w[1], w[0], w[5], w[4], w[7], w[6],
		w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15]}
}

// AppendWire appends g in the mixed-endian wire order of SQL Server.
func (g GUID) AppendWire(dst []byte) []byte {
	return append(dst, g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6],
		g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15])
}

// errGUIDText is returned by GUIDFromString for malformed text.
var errGUIDText = errors.New("decode: malformed uniqueidentifier text")

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// GUIDFromString parses the canonical 8-4-4-4-12 form (either case),
// optionally in braces, or 32 hex digits without dashes.
func GUIDFromString(s string) (GUID, error) {
	var g GUID
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	dashes := len(s) == 36
	if !dashes && len(s) != 32 {
		return g, errGUIDText
	}
	j := 0
	for i := 0; i < 16; i++ {
		if dashes && (i == 4 || i == 6 || i == 8 || i == 10) {
			if s[j] != '-' {
				return g, errGUIDText
			}
			j++
		}
		hi, ok1 := unhex(s[j])
		lo, ok2 := unhex(s[j+1])
		if !ok1 || !ok2 {
			return g, errGUIDText
		}
		g[i] = hi<<4 | lo
		j += 2
	}
	return g, nil
}

// AppendFloat64Text appends the shortest text that parses back to exactly v
// (strconv 'g' with precision -1: exponent form below 1e-4 and from 1e21,
// e.g. "0.1", "1e+21", "-2.5e-05"). NaN and infinities, which SQL Server
// cannot store, are written "NaN", "Infinity" and "-Infinity" (the spelling
// PostgreSQL and JSON tools accept).
func AppendFloat64Text(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return appendNonFinite(dst, v)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// AppendFloat32Text is AppendFloat64Text for real: the shortest text that
// parses back to exactly v as a float32.
func AppendFloat32Text(dst []byte, v float32) []byte {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendNonFinite(dst, f)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 32)
}

func appendNonFinite(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case v > 0:
		return append(dst, "Infinity"...)
	}
	return append(dst, "-Infinity"...)
}

// AppendMoneyText appends money or smallmoney (scaled by 10^4) with exactly
// four decimals, e.g. "-922337203685477.5808".
func AppendMoneyText(dst []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		dst = append(dst, '-')
		u = -u
	}
	dst = strconv.AppendUint(dst, u/10000, 10)
	dst = append(dst, '.')
	return appendUintPad(dst, u%10000, 4)
}

// decimalDigits writes the magnitude hi:lo in decimal into the end of buf
// and returns the index of its first digit (at least one digit, "0").
func decimalDigits(buf *[40]byte, hi, lo uint64) int {
	i := len(buf)
	const e19 = 10000000000000000000
	for hi != 0 {
		// Divide the 128-bit magnitude by 10^19: hi < 10^19 after one
		// step, so the second Div64 cannot overflow.
		qhi := hi / e19
		r := hi % e19
		qlo, rem := bits.Div64(r, lo, e19)
		hi, lo = qhi, qlo
		for k := 0; k < 19; k++ {
			i--
			buf[i] = byte('0' + rem%10)
			rem /= 10
		}
	}
	for lo >= 10 {
		i--
		buf[i] = byte('0' + lo%10)
		lo /= 10
	}
	i--
	buf[i] = byte('0' + lo)
	return i
}

// AppendDecimalText appends v exactly, with exactly v.Scale fractional
// digits ("0.50", "-12.3400", "0.12345678901234567890123456789012345678");
// a zero never carries a sign.
func AppendDecimalText(dst []byte, v Decimal) []byte {
	var buf [40]byte
	i := decimalDigits(&buf, v.Hi, v.Lo)
	digits := buf[i:]
	if v.Neg && (v.Hi|v.Lo) != 0 {
		dst = append(dst, '-')
	}
	scale := int(v.Scale)
	if scale == 0 {
		return append(dst, digits...)
	}
	if len(digits) <= scale {
		dst = append(dst, '0', '.')
		for k := len(digits); k < scale; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	n := len(digits) - scale
	dst = append(dst, digits[:n]...)
	dst = append(dst, '.')
	return append(dst, digits[n:]...)
}

// String returns the exact text of d (see AppendDecimalText).
func (d Decimal) String() string {
	var buf [48]byte
	return string(AppendDecimalText(buf[:0], d))
}

// Float64 returns the float64 nearest to d (correctly rounded).
func (d Decimal) Float64() float64 {
	if d.Hi == 0 && d.Lo < 1<<53 && d.Scale <= 22 {
		// Both operands are exact float64s, so IEEE division rounds once.
		f := float64(d.Lo) / math.Pow10(int(d.Scale))
		if d.Neg {
			f = -f
		}
		return f
	}
	// The exact text parsed by strconv is correctly rounded. Its only
	// possible error is a range error, impossible for 39 digits.
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// mul128 multiplies the 128-bit magnitude hi:lo by m and reports overflow
// past 128 bits.
func mul128(hi, lo, m uint64) (uint64, uint64, bool) {
	h1, l := bits.Mul64(lo, m)
	h2, h := bits.Mul64(hi, m)
	h, c := bits.Add64(h, h1, 0)
	return h, l, h2 != 0 || c != 0
}

// maxMagnitude holds 10^p - 1 as (hi, lo) for precision p = 0..38.
var maxMagnitude [39][2]uint64

func init() {
	hi, lo := uint64(0), uint64(1)
	for p := 0; p <= 38; p++ {
		// lo-1 with borrow gives 10^p - 1.
		l, b := bits.Sub64(lo, 1, 0)
		maxMagnitude[p] = [2]uint64{hi - b, l}
		hi, lo, _ = mul128(hi, lo, 10)
	}
}

// fitsPrecision reports whether the magnitude hi:lo has at most p digits.
func fitsPrecision(hi, lo uint64, p uint8) bool {
	if p > 38 {
		p = 38
	}
	m := maxMagnitude[p]
	return hi < m[0] || (hi == m[0] && lo <= m[1])
}

// Errors of decimal conversion.
var (
	errDecimalSyntax    = errors.New("decode: malformed decimal text")
	errDecimalPrecision = errors.New("decode: decimal value does not fit its precision")
	errDecimalScale     = errors.New("decode: decimal scale exceeds precision or 38")
)

// DecimalFromString parses "[+-]digits[.digits]" (at least one digit; no
// exponent) as decimal(precision, scale). More fractional digits than scale
// are rounded half away from zero, as SQL Server's conversion does. A
// precision of 0 means 38. The result must fit the precision.
func DecimalFromString(s string, precision, scale uint8) (Decimal, error) {
	if precision == 0 {
		precision = 38
	}
	if precision > 38 || scale > precision {
		return Decimal{}, errDecimalScale
	}
	d := Decimal{Precision: precision, Scale: scale}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.Neg = s[i] == '-'
		i++
	}
	var hi, lo uint64
	ndig, frac := 0, 0
	seenDot, roundUp := false, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !seenDot {
			seenDot = true
			continue
		}
		if c < '0' || c > '9' {
			return Decimal{}, errDecimalSyntax
		}
		ndig++
		if seenDot {
			if frac >= int(scale) {
				// The first digit beyond the scale decides the
				// rounding; later ones only have to be digits.
				if frac == int(scale) && c >= '5' {
					roundUp = true
				}
				frac++
				continue
			}
			frac++
		}
		var of bool
		hi, lo, of = mul128(hi, lo, 10)
		if of {
			return Decimal{}, errDecimalPrecision
		}
		var c1 uint64
		lo, c1 = bits.Add64(lo, uint64(c-'0'), 0)
		hi += c1
		if hi > maxMagnitude[38][0] {
			return Decimal{}, errDecimalPrecision
		}
	}
	if ndig == 0 {
		return Decimal{}, errDecimalSyntax
	}
	if frac > int(scale) {
		frac = int(scale)
	}
	for ; frac < int(scale); frac++ {
		var of bool
		hi, lo, of = mul128(hi, lo, 10)
		if of {
			return Decimal{}, errDecimalPrecision
		}
	}
	if roundUp {
		var c1 uint64
		lo, c1 = bits.Add64(lo, 1, 0)
		hi += c1
	}
	if !fitsPrecision(hi, lo, precision) {
		return Decimal{}, errDecimalPrecision
	}
	d.Hi, d.Lo = hi, lo
	if hi|lo == 0 {
		d.Neg = false
	}
	return d, nil
}
