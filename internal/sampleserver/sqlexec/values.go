package sqlexec

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// Type infos of computed columns (what SQL Server sends for such expressions).

var defaultCollation = sampledb.CollSQLLatin1

// computed is the TYPE_INFO of a computed column of declaration d: in
// the nullable wire form, with the database's collation.
func computed(d decode.Decl) decode.TypeInfo { return d.TypeInfo(true, defaultCollation) }

// tiOf is computed for a bare type name (int, float, time(7), ...).
func tiOf(k decode.Kind) decode.TypeInfo { return computed(k.Decl()) }

// tiNVarChar is nvarchar(chars), nvarchar(max) beyond 4000 characters.
func tiNVarChar(chars int) decode.TypeInfo {
	return computed(decode.Decl{Kind: decode.KindNVarChar, Length: max(chars, 1), Max: chars > decode.MaxDeclChars})
}

// tiVarChar is varchar(n), varchar(max) beyond 8000 bytes.
func tiVarChar(n int) decode.TypeInfo {
	return computed(decode.Decl{Kind: decode.KindVarChar, Length: max(n, 1), Max: n > decode.MaxDeclBytes})
}

// tiVarBinary is varbinary(n); varbinary(max) beyond 8000 bytes or for
// an unknown length (n <= 0).
func tiVarBinary(n int) decode.TypeInfo {
	return computed(decode.Decl{Kind: decode.KindVarBinary, Length: n, Max: n <= 0 || n > decode.MaxDeclBytes})
}

func tiDecimal(p, s uint8) decode.TypeInfo {
	return computed(decode.Decl{Kind: decode.KindDecimal, Precision: p, Scale: s})
}

// isStringType reports whether values of ti are text.
func isStringType(ti *decode.TypeInfo) bool { return ti.Kind().IsText() }

// isUnicodeType reports whether ti's text is UTF-16 on the server.
func isUnicodeType(ti *decode.TypeInfo) bool { return ti.Kind().IsUnicode() }

// charLen returns the declared length in characters of a string type
// (-1 for max / LOB).
func charLen(ti *decode.TypeInfo) int {
	d := decode.DeclOf(ti, 0)
	if d.Max || !d.Kind.HasLength() {
		return -1
	}
	return d.Length
}

// Decimal helpers (exact, through math/big; only used off the hot path).

func decToBig(d decode.Decimal) *big.Int {
	v := new(big.Int).SetUint64(d.Hi)
	v.Lsh(v, 64)
	v.Or(v, new(big.Int).SetUint64(d.Lo))
	if d.Neg {
		v.Neg(v)
	}
	return v
}

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

func decToRat(d decode.Decimal) *big.Rat {
	return new(big.Rat).SetFrac(decToBig(d), pow10(int(d.Scale)))
}

// bigToDecimal builds a Decimal from an unscaled integer; ok is false when
// it does not fit 38 digits.
func bigToDecimal(v *big.Int, precision, scale uint8) (decode.Decimal, bool) {
	a := new(big.Int).Abs(v)
	if a.Cmp(pow10(int(precision))) >= 0 {
		return decode.Decimal{}, false
	}
	lo := new(big.Int).And(a, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(a, 64).Uint64()
	return decode.Decimal{Lo: lo, Hi: hi, Neg: v.Sign() < 0, Scale: scale, Precision: precision}, true
}

// ratToDecimal rounds r half away from zero to the scale.
func ratToDecimal(r *big.Rat, precision, scale uint8) (decode.Decimal, bool) {
	num := new(big.Int).Mul(r.Num(), pow10(int(scale)))
	den := r.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	m2 := new(big.Int).Abs(m)
	m2.Lsh(m2, 1)
	if m2.Cmp(den) >= 0 {
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return bigToDecimal(q, precision, scale)
}

func parseDecimalLiteral(s string) (decode.Decimal, error) {
	digits, scale := 0, 0
	seenDot := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '.':
			seenDot = true
		case isDigit(s[i]):
			digits++
			if seenDot {
				scale++
			}
		}
	}
	// Leading zeros of the integer part do not count towards precision.
	t := strings.TrimLeft(s, "0")
	if p := strings.IndexByte(t, '.'); p >= 0 {
		digits = len(t) - 1
		if p == 0 {
			digits = scale
		}
	}
	if digits < scale {
		digits = scale
	}
	if digits == 0 {
		digits = 1
	}
	if digits > 38 {
		return decode.Decimal{}, strconv.ErrRange
	}
	return decode.DecimalFromString(s, uint8(digits), uint8(scale))
}

// numeric kinds for comparison and arithmetic.
func asRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x), true
	case bool:
		if x {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case decode.Decimal:
		return decToRat(x), true
	case decode.Money:
		return big.NewRat(int64(x), 10000), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(x), true
	case float32:
		return asRat(float64(x))
	}
	return nil, false
}

// eitherFloat reports whether a or b is a float or real: arithmetic and
// comparison then take place in float64, as float has the highest
// precedence of the numeric types.
func eitherFloat(a, b any) bool {
	isFloat := func(v any) bool {
		switch v.(type) {
		case float64, float32:
			return true
		}
		return false
	}
	return isFloat(a) || isFloat(b)
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case decode.Decimal:
		return x.Float64(), true
	case decode.Money:
		return float64(x) / 10000, true
	}
	return 0, false
}

func isNumeric(v any) bool {
	switch v.(type) {
	case int64, bool, float64, float32, decode.Decimal, decode.Money:
		return true
	}
	return false
}

// asDateTime returns date/time values as a DateTime (dates at midnight,
// datetimeoffset as its UTC instant); strings are parsed.
func asDateTime(v any) (decode.DateTime, bool) {
	switch x := v.(type) {
	case decode.DateTime:
		return x, true
	case decode.Date:
		return decode.DateTime{Days: int32(x)}, true
	case decode.DateTimeOffset:
		return x.UTC, true
	case decode.Time:
		// A time compares as a datetime on 1900-01-01.
		return decode.DateTime{Days: decode.DateFromCivil(1900, 1, 1), Ticks: int64(x)}, true
	case string:
		if dto, ok := parseDateTimeText(x); ok {
			return dto.UTC, true
		}
	}
	return decode.DateTime{}, false
}

// parseDateTimeText parses the ISO forms SQL Server accepts for date and
// time literals: 'yyyy-mm-dd', 'yyyymmdd', 'yyyy-mm-dd hh:mm[:ss[.fffffff]]',
// with 'T' instead of the blank, and an optional zone 'Z' or '+hh:mm'.
func parseDateTimeText(s string) (decode.DateTimeOffset, bool) {
	s = strings.TrimSpace(s)
	layouts := []string{
		"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05 Z07:00", "2006-01-02 15:04:05.999999999 Z07:00",
		"2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02", "20060102", "20060102 15:04:05.999999999",
		"2006/01/02", "2006-01-02Z07:00", "15:04:05.999999999", "15:04",
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			if strings.HasPrefix(l, "15") {
				t = time.Date(1900, 1, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
			}
			return decode.DateTimeOffsetFromTime(t), true
		}
	}
	return decode.DateTimeOffset{}, false
}

// compare compares two non-NULL values as SQL Server would under a
// case-insensitive collation (compareRule under another): numbers numerically, strings ignoring case and
// trailing blanks, dates chronologically (strings converted), binary
// bytewise, uniqueidentifier in SQL Server's own byte order
// (decode.CompareGUID). ok is false when the values are not comparable.
func compare(a, b any) (int, bool) {
	if isNumeric(a) && isNumeric(b) {
		if x, ok := a.(int64); ok {
			if y, ok := b.(int64); ok {
				return cmp.Compare(x, y), true
			}
		}
		if eitherFloat(a, b) {
			x, _ := asFloat(a)
			y, _ := asFloat(b)
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
		x, ok1 := asRat(a)
		y, ok2 := asRat(b)
		if !ok1 || !ok2 {
			return 0, false
		}
		return x.Cmp(y), true
	}
	switch x := a.(type) {
	case string:
		switch y := b.(type) {
		case string:
			return compareText(x, y), true
		case int64, float64, decode.Decimal, decode.Money, float32, bool:
			r, ok := stringToNumber(x)
			if !ok {
				return 0, false
			}
			return compare(r, b)
		case decode.GUID:
			g, err := decode.GUIDFromString(x)
			if err != nil {
				return 0, false
			}
			return decode.CompareGUID(g, y), true
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(bytes.TrimRight(x, "\x00"), bytes.TrimRight(y, "\x00")), true
		}
	case decode.GUID:
		switch y := b.(type) {
		case decode.GUID:
			return decode.CompareGUID(x, y), true
		case string:
			c, ok := compare(b, a)
			return -c, ok
		}
	}
	if isNumeric(a) {
		if s, ok := b.(string); ok {
			c, ok := compare(s, a)
			return -c, ok
		}
	}
	if x, ok := asDateTime(a); ok {
		if y, ok := asDateTime(b); ok {
			if c := cmp.Compare(int64(x.Days), int64(y.Days)); c != 0 {
				return c, true
			}
			return cmp.Compare(x.Ticks, y.Ticks), true
		}
	}
	return 0, false
}

// textRule is how a collation compares text. Every rule ignores trailing
// blanks (the ANSI padding rule SQL Server applies to = and <).
type textRule uint8

const (
	// ruleFold is a case-insensitive collation's (_CI_): case folded.
	ruleFold textRule = iota
	// ruleCase is a case-sensitive linguistic collation's (_CS_): case
	// folded first, then, between values that differ only in case, lower
	// case before upper at the first difference, as Windows collations
	// sort; not the order of the bytes, where 'B' comes before 'a'.
	ruleCase
	// ruleBinary is a _BIN or _BIN2 collation's: code points.
	ruleBinary
)

// ruleOf is the rule of collation c; a zero collation (a value with none)
// is case-insensitive, the sample database's default.
func ruleOf(c decode.Collation) textRule {
	if c == (decode.Collation{}) {
		return ruleFold
	}
	f := c.Flags()
	switch {
	case f&(decode.CollationBinary|decode.CollationBinary2) != 0:
		return ruleBinary
	case f&decode.CollationIgnoreCase == 0:
		return ruleCase
	}
	return ruleFold
}

// compareRule is compare with text compared by rule r.
func compareRule(a, b any, r textRule) (int, bool) {
	if r != ruleFold {
		if x, ok := a.(string); ok {
			if y, ok := b.(string); ok {
				return compareTextRule(x, y, r), true
			}
		}
	}
	return compare(a, b)
}

// compareTextRule compares text by rule r.
func compareTextRule(a, b string, r textRule) int {
	switch r {
	case ruleBinary:
		return strings.Compare(strings.TrimRight(a, " "), strings.TrimRight(b, " "))
	case ruleCase:
		if c := compareText(a, b); c != 0 {
			return c
		}
		return -strings.Compare(strings.TrimRight(a, " "), strings.TrimRight(b, " "))
	}
	return compareText(a, b)
}

// compareText compares case-insensitively, ignoring trailing blanks (the
// ANSI padding rule SQL Server applies to = and <).
func compareText(a, b string) int {
	a = strings.TrimRight(a, " ")
	b = strings.TrimRight(b, " ")
	if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
		return c
	}
	return 0
}

func stringToNumber(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	if d, err := parseDecimalLiteral(s); err == nil {
		return d, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, true
	}
	return nil, false
}

// valueText formats a value as SQL Server's default conversion to varchar
// does (CONVERT without a style, string concatenation).
func valueText(v any, ti *decode.TypeInfo) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case decode.Decimal:
		return x.String()
	case decode.Money:
		// money converts with two decimals by default (style 0).
		d := decode.Decimal{Lo: uint64(abs64(int64(x))), Neg: x < 0, Scale: 4, Precision: 19}
		r, _ := ratToDecimal(decToRat(d), 19, 2)
		return r.String()
	case decode.Date:
		return string(decode.AppendDateText(nil, int32(x)))
	case decode.Time:
		return string(decode.AppendTimeText(nil, int64(x), scaleOf(ti, 7)))
	case decode.DateTime:
		if ti != nil && (ti.Kind() == decode.KindDateTime || ti.Kind() == decode.KindSmallDateTime) {
			return legacyDateTimeText(x)
		}
		return string(decode.AppendDateTimeText(nil, x, scaleOf(ti, 7)))
	case decode.DateTimeOffset:
		return string(decode.AppendDateTimeOffsetText(nil, x, scaleOf(ti, 7)))
	case decode.GUID:
		return strings.ToUpper(x.String())
	case []byte:
		return string(x)
	case decode.Variant:
		return valueText(x.Value, &x.Type)
	case []float32:
		// vector converts to its JSON array text.
		b := []byte{'['}
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
		}
		return string(append(b, ']'))
	}
	return ""
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// scaleOf is the fractional-second digits of a date/time type as
// conversions to text show them (3 for datetime and smalldatetime), def
// for anything else.
func scaleOf(ti *decode.TypeInfo, def uint8) uint8 {
	if ti == nil {
		return def
	}
	switch ti.Kind() {
	case decode.KindTime, decode.KindDateTime2, decode.KindDateTimeOffset:
		return ti.Scale
	case decode.KindDateTime, decode.KindSmallDateTime:
		return 3
	}
	return def
}

var monthAbbr = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// legacyDateTimeText is style 0/100 of datetime: "Jan  2 2006  3:04PM".
func legacyDateTimeText(v decode.DateTime) string {
	y, m, d := decode.CivilFromDate(v.Days)
	mins := v.Ticks / 600_000_000
	h, mi := int(mins/60), int(mins%60)
	ampm := "AM"
	if h >= 12 {
		ampm = "PM"
	}
	h12 := h % 12
	if h12 == 0 {
		h12 = 12
	}
	var b []byte
	b = append(b, monthAbbr[(m-1+12)%12]...)
	b = append(b, ' ')
	if d < 10 {
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(d), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, ' ')
	if h12 < 10 {
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(h12), 10)
	b = append(b, ':', byte('0'+mi/10), byte('0'+mi%10))
	b = append(b, ampm...)
	return string(b)
}

// isoText formats date/time values for CONVERT styles 126/127 (ISO 8601):
// 'yyyy-mm-ddThh:mi:ss[.fff…]'; the fraction has the type's digits (3 for
// datetime) and is left out when zero, as SQL Server does. utc (style 127
// with datetimeoffset) converts to UTC and appends 'Z'.
func isoText(v any, ti *decode.TypeInfo, style int) (string, bool) {
	switch x := v.(type) {
	case decode.Date:
		return string(decode.AppendDateText(nil, int32(x))), true
	case decode.DateTime:
		scale := scaleOf(ti, 7)
		if ti != nil && ti.Kind() == decode.KindSmallDateTime {
			scale = 0
		}
		return isoDateTime(x, scale), true
	case decode.DateTimeOffset:
		scale := scaleOf(ti, 7)
		if style == 127 {
			return isoDateTime(x.UTC, scale) + "Z", true
		}
		s := isoDateTime(x.Local(), scale)
		off := int(x.OffsetMin)
		sign := byte('+')
		if off < 0 {
			sign, off = '-', -off
		}
		return s + string([]byte{sign, byte('0' + off/600), byte('0' + off/60%10), ':', byte('0' + off%60/10), byte('0' + off%10)}), true
	case decode.Time:
		return timeText(int64(x), scaleOf(ti, 7), false), true
	}
	return "", false
}

func isoDateTime(v decode.DateTime, scale uint8) string {
	b := decode.AppendDateTimeText(nil, v, scale)
	// "2006-01-02 15:04:05.fff" -> 'T' separator; drop an all-zero fraction.
	if len(b) > 10 {
		b[10] = 'T'
	}
	if p := bytes.IndexByte(b, '.'); p >= 0 && strings.Trim(string(b[p+1:]), "0") == "" {
		b = b[:p]
	}
	return string(b)
}

// timeText formats a time of day; style 114 is "hh:mi:ss:mmm".
func timeText(ticks int64, scale uint8, style114 bool) string {
	if style114 {
		ms := (ticks + 5000) / 10_000 // round to milliseconds
		if ms >= 86_400_000 {
			ms = 86_399_999
		}
		h, mi, s, f := ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000
		return string([]byte{byte('0' + h/10), byte('0' + h%10), ':', byte('0' + mi/10), byte('0' + mi%10), ':',
			byte('0' + s/10), byte('0' + s%10), ':', byte('0' + f/100), byte('0' + f/10%10), byte('0' + f%10)})
	}
	return string(decode.AppendTimeText(nil, ticks, scale))
}
