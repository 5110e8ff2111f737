package decode

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unixDay returns the time.Time of day number days (0 = 0001-01-01) from
// the standard library's own calendar, the independent reference.
func unixDay(days int32) time.Time {
	return time.Unix((int64(days)-719162)*86400, 0).UTC()
}

func TestFormatCivilEveryDay(t *testing.T) {
	// Every day 0001-01-01 .. 9999-12-31 against time.Time.
	for d := int32(0); d <= MaxDate; d++ {
		y, m, dd := CivilFromDate(d)
		ty, tm, td := unixDay(d).Date()
		if y != ty || m != int(tm) || dd != td {
			t.Fatalf("CivilFromDate(%d) = %d-%d-%d, time says %d-%d-%d", d, y, m, dd, ty, tm, td)
		}
		if back := DateFromCivil(y, m, dd); back != d {
			t.Fatalf("DateFromCivil(%d,%d,%d) = %d, want %d", y, m, dd, back, d)
		}
	}
	if got := DateFromCivil(9999, 12, 31); got != MaxDate {
		t.Fatalf("MaxDate: %d != %d", got, MaxDate)
	}
	if got := DateFromCivil(1900, 1, 1); got != sqlEpochDays {
		t.Fatalf("1900-01-01 = %d", got)
	}
	if got := DateFromCivil(1970, 1, 1); got != unixEpochDays {
		t.Fatalf("1970-01-01 = %d", got)
	}
	// Proleptic years before 1 still invert.
	for _, d := range []int32{-1, -366, -1000000, MaxDate + 1, 10_000_000} {
		y, m, dd := CivilFromDate(d)
		if back := DateFromCivil(y, m, dd); back != d {
			t.Fatalf("round trip of %d via %d-%d-%d gave %d", d, y, m, dd, back)
		}
	}
}

func TestFormatDateText(t *testing.T) {
	cases := []struct {
		days int32
		want string
	}{
		{0, "0001-01-01"},
		{MaxDate, "9999-12-31"},
		{sqlEpochDays, "1900-01-01"},
		{DateFromCivil(2000, 2, 29), "2000-02-29"},
		{MaxDate + 1, "10000-01-01"},
		{-1, "0000-12-31"}, // proleptic year 0
		{DateFromCivil(-5, 3, 1), "-0005-03-01"},
	}
	for _, c := range cases {
		if got := string(AppendDateText(nil, c.days)); got != c.want {
			t.Errorf("AppendDateText(%d) = %q, want %q", c.days, got, c.want)
		}
	}
}

// refDateTime formats a DateTime with the standard library, rounded half up
// to scale digits.
func refDateTime(v DateTime, scale uint8) string {
	return refFormat(unixDay(v.Days).Add(time.Duration(v.Ticks)*100), scale, "")
}

// refFormat formats tm with the standard library as date, time and scale
// fraction digits (rounded half up), then zone (a layout such as "-07:00").
func refFormat(tm time.Time, scale uint8, zone string) string {
	layout := "2006-01-02 15:04:05"
	if scale > 0 {
		layout += "." + strings.Repeat("0", int(scale))
		tm = tm.Round(time.Duration(pow10u64[7-scale]) * 100)
	} else {
		tm = tm.Round(time.Second)
	}
	return tm.Format(layout + zone)
}

func TestFormatDateTimeTextRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		v := DateTime{Days: r.Int32N(MaxDate + 1), Ticks: r.Int64N(TicksPerDay)}
		if i%7 == 0 { // favour the ends of the day
			v.Ticks = TicksPerDay - 1 - r.Int64N(1000)
		}
		scale := uint8(r.IntN(8))
		if v.Days == MaxDate && roundTicks(v.Ticks, scale) >= TicksPerDay {
			continue // the reference would enter year 10000; see TestFormatDateTimeTextEdges
		}
		got := string(AppendDateTimeText(nil, v, scale))
		if want := refDateTime(v, scale); got != want {
			t.Fatalf("AppendDateTimeText(%+v, %d) = %q, want %q", v, scale, got, want)
		}
	}
}

func TestFormatDateTimeTextEdges(t *testing.T) {
	maxV := DateTime{Days: MaxDate, Ticks: TicksPerDay - 1}
	cases := []struct {
		v     DateTime
		scale uint8
		want  string
	}{
		{DateTime{}, 0, "0001-01-01 00:00:00"},
		{DateTime{}, 7, "0001-01-01 00:00:00.0000000"},
		{maxV, 7, "9999-12-31 23:59:59.9999999"},
		// A carry past 9999-12-31 truncates instead of rounding.
		{maxV, 3, "9999-12-31 23:59:59.999"},
		{maxV, 0, "9999-12-31 23:59:59"},
		// Rounding carries into the next day.
		{DateTime{Days: 0, Ticks: TicksPerDay - 1}, 6, "0001-01-02 00:00:00.000000"},
		// datetime tick 2 (2/300 s) shows as .007, as SQL Server shows it.
		{DateTime{Ticks: 66667}, 3, "0001-01-01 00:00:00.007"},
		{DateTime{Ticks: 66666}, 3, "0001-01-01 00:00:00.007"},
		{DateTime{Ticks: 33333}, 3, "0001-01-01 00:00:00.003"},
		// Ticks outside one day are normalised.
		{DateTime{Days: 1, Ticks: -1}, 7, "0001-01-01 23:59:59.9999999"},
	}
	for _, c := range cases {
		if got := string(AppendDateTimeText(nil, c.v, c.scale)); got != c.want {
			t.Errorf("AppendDateTimeText(%+v, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}

func TestFormatTimeText(t *testing.T) {
	cases := []struct {
		ticks int64
		scale uint8
		want  string
	}{
		{0, 0, "00:00:00"},
		{0, 7, "00:00:00.0000000"},
		{TicksPerDay - 1, 7, "23:59:59.9999999"},
		{TicksPerDay - 1, 0, "23:59:59"}, // would round to 24:00:00: truncated
		{TicksPerDay - 1, 6, "23:59:59.999999"},
		{12_345_678_901, 3, "00:20:34.568"},
		{12_345_678_901, 1, "00:20:34.6"},
		{5_000_000, 0, "00:00:01"}, // 0.5 s rounds half up
		{TicksPerDay + 10_000_000, 0, "00:00:01"},
		{-10_000_000, 0, "23:59:59"},
		{15, 9, "00:00:00.0000015"}, // scale capped at 7
	}
	for _, c := range cases {
		if got := string(AppendTimeText(nil, c.ticks, c.scale)); got != c.want {
			t.Errorf("AppendTimeText(%d, %d) = %q, want %q", c.ticks, c.scale, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		ticks := r.Int64N(TicksPerDay)
		scale := uint8(r.IntN(8))
		if roundTicks(ticks, scale) >= TicksPerDay {
			continue
		}
		want := refDateTime(DateTime{Days: 10, Ticks: ticks}, scale)[11:]
		if got := string(AppendTimeText(nil, ticks, scale)); got != want {
			t.Fatalf("AppendTimeText(%d, %d) = %q, want %q", ticks, scale, got, want)
		}
	}
}

func TestFormatDateTimeOffsetText(t *testing.T) {
	cases := []struct {
		v     DateTimeOffset
		scale uint8
		want  string
	}{
		{DateTimeOffset{UTC: DateTime{Days: MaxDate, Ticks: TicksPerDay - 1}, OffsetMin: 0}, 7, "9999-12-31 23:59:59.9999999+00:00"},
		// 0001-01-01 14:00 UTC at -14:00 is local midnight of day 0.
		{DateTimeOffset{UTC: DateTime{Ticks: 14 * 36_000_000_000}, OffsetMin: -840}, 0, "0001-01-01 00:00:00-14:00"},
		// 9999-12-31 09:59:59.9999999 UTC at +14:00 is the last local instant.
		{DateTimeOffset{UTC: DateTime{Days: MaxDate, Ticks: 10*36_000_000_000 - 1}, OffsetMin: 840}, 7, "9999-12-31 23:59:59.9999999+14:00"},
		{DateTimeOffset{UTC: DateTime{Days: 738000, Ticks: 0}, OffsetMin: 330}, 3, "2021-07-30 05:30:00.000+05:30"},
		{DateTimeOffset{UTC: DateTime{Days: 738000, Ticks: 0}, OffsetMin: -90}, 2, "2021-07-29 22:30:00.00-01:30"},
	}
	for _, c := range cases {
		if got := string(AppendDateTimeOffsetText(nil, c.v, c.scale)); got != c.want {
			t.Errorf("AppendDateTimeOffsetText(%+v, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 50000; i++ {
		v := DateTimeOffset{
			UTC:       DateTime{Days: 1 + r.Int32N(MaxDate-1), Ticks: r.Int64N(TicksPerDay)},
			OffsetMin: int16(r.IntN(1681) - 840),
		}
		scale := uint8(r.IntN(8))
		want := refFormat(v.Time(), scale, "-07:00")
		if got := string(AppendDateTimeOffsetText(nil, v, scale)); got != want {
			t.Fatalf("AppendDateTimeOffsetText(%+v, %d) = %q, want %q", v, scale, got, want)
		}
		if back := DateTimeOffsetFromTime(v.Time()); back != v {
			t.Fatalf("DateTimeOffsetFromTime(Time()) = %+v, want %+v", back, v)
		}
	}
}

func TestFormatDateTimeTimeConversions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 100000; i++ {
		v := DateTime{Days: r.Int32N(MaxDate + 1), Ticks: r.Int64N(TicksPerDay)}
		tm := v.Time()
		if tm.Location() != time.UTC {
			t.Fatal("Time() must be in UTC")
		}
		want := unixDay(v.Days).Add(time.Duration(v.Ticks) * 100)
		if !tm.Equal(want) {
			t.Fatalf("Time(%+v) = %v, want %v", v, tm, want)
		}
		if back := DateTimeFromTime(tm); back != v {
			t.Fatalf("DateTimeFromTime(%v) = %+v, want %+v", tm, back, v)
		}
	}
	// Wall clock of the time's own location; sub-100 ns truncated.
	loc := time.FixedZone("x", -5*3600)
	got := DateTimeFromTime(time.Date(2024, 2, 29, 23, 59, 59, 999_999_999, loc))
	want := DateTime{Days: DateFromCivil(2024, 2, 29), Ticks: TicksPerDay - 1}
	if got != want {
		t.Fatalf("DateTimeFromTime = %+v, want %+v", got, want)
	}
}

func TestFormatGUID(t *testing.T) {
	// The wire bytes of 6F9619FF-8B86-D011-B42D-00C04FC964FF, the example of
	// MS-TDS 2.2.5.5.1.7 (GUIDs) mixed-endian order: first three groups LE.
	wire := []byte{0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	g := GUIDFromWire(wire)
	const text = "6f9619ff-8b86-d011-b42d-00c04fc964ff"
	if got := string(AppendGUIDText(nil, g)); got != text {
		t.Fatalf("AppendGUIDText = %q, want %q", got, text)
	}
	if g.String() != text {
		t.Fatalf("String = %q", g.String())
	}
	if got := g.AppendWire(nil); string(got) != string(wire) {
		t.Fatalf("AppendWire = % X", got)
	}
	for _, s := range []string{text, strings.ToUpper(text), "{" + text + "}", strings.ReplaceAll(text, "-", "")} {
		p, err := GUIDFromString(s)
		if err != nil || p != g {
			t.Fatalf("GUIDFromString(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "6f9619ff-8b86-d011-b42d-00c04fc964f", "6f9619ff+8b86-d011-b42d-00c04fc964ff", "6f9619ff-8b86-d011-b42d-00c04fc964fg", "{" + text} {
		if _, err := GUIDFromString(s); err == nil {
			t.Fatalf("GUIDFromString(%q) accepted", s)
		}
	}
	if GUIDFromWire(wire[:3]) != (GUID{0, 0x96, 0x19, 0xFF}) {
		t.Fatal("short wire input must zero-fill")
	}
}

func TestFormatFloatText(t *testing.T) {
	cases := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {0.1, "0.1"}, {-2.5e-5, "-2.5e-05"}, {1e21, "1e+21"},
		{123456, "123456"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
	}
	for _, c := range cases {
		if got := string(AppendFloat64Text(nil, c.v)); got != c.want {
			t.Errorf("AppendFloat64Text(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := string(AppendFloat32Text(nil, 0.1)); got != "0.1" {
		t.Errorf("AppendFloat32Text(0.1) = %q", got)
	}
	if got := string(AppendFloat32Text(nil, float32(math.Inf(-1)))); got != "-Infinity" {
		t.Errorf("AppendFloat32Text(-Inf) = %q", got)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 100000; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		if back, err := strconv.ParseFloat(string(AppendFloat64Text(nil, f)), 64); err != nil || back != f {
			t.Fatalf("float64 %v does not round-trip: %v %v", f, back, err)
		}
		f32 := math.Float32frombits(r.Uint32())
		if math.IsNaN(float64(f32)) || math.IsInf(float64(f32), 0) {
			continue
		}
		if back, err := strconv.ParseFloat(string(AppendFloat32Text(nil, f32)), 32); err != nil || float32(back) != f32 {
			t.Fatalf("float32 %v does not round-trip: %v %v", f32, back, err)
		}
	}
}

func TestFormatMoneyText(t *testing.T) {
	cases := []struct {
		v    int64
		want string
	}{
		{0, "0.0000"}, {1, "0.0001"}, {-1, "-0.0001"}, {-50000, "-5.0000"},
		{math.MaxInt64, "922337203685477.5807"}, {math.MinInt64, "-922337203685477.5808"},
		{math.MaxInt32, "214748.3647"}, {math.MinInt32, "-214748.3648"},
	}
	for _, c := range cases {
		if got := string(AppendMoneyText(nil, c.v)); got != c.want {
			t.Errorf("AppendMoneyText(%d) = %q, want %q", c.v, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 100000; i++ {
		v := int64(r.Uint64())
		want := refDecimalText(new(big.Int).SetInt64(v), 4)
		if got := string(AppendMoneyText(nil, v)); got != want {
			t.Fatalf("AppendMoneyText(%d) = %q, want %q", v, got, want)
		}
	}
}

// refDecimalText is the exact text of n / 10^scale, from math/big's own
// formatting: an implementation that shares nothing with the one tested.
func refDecimalText(n *big.Int, scale int) string {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	return new(big.Rat).SetFrac(n, den).FloatString(scale)
}

func decimalBig(d Decimal) *big.Int {
	n := new(big.Int).SetUint64(d.Hi)
	n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(d.Lo))
	if d.Neg {
		n.Neg(n)
	}
	return n
}

func TestFormatDecimalText(t *testing.T) {
	max38 := maxMagnitude[38]
	cases := []struct {
		d    Decimal
		want string
	}{
		{Decimal{Lo: 50, Neg: true, Scale: 2, Precision: 3}, "-0.50"},
		{Decimal{Lo: 0, Neg: true, Scale: 2, Precision: 3}, "0.00"},
		{Decimal{Lo: 0, Scale: 0, Precision: 1}, "0"},
		{Decimal{Lo: 123400, Scale: 4, Precision: 9}, "12.3400"},
		{Decimal{Hi: max38[0], Lo: max38[1], Scale: 0, Precision: 38}, "99999999999999999999999999999999999999"},
		{Decimal{Hi: max38[0], Lo: max38[1], Neg: true, Scale: 38, Precision: 38}, "-0.99999999999999999999999999999999999999"},
		{Decimal{Lo: 1, Scale: 38, Precision: 38}, "0.00000000000000000000000000000000000001"},
		{Decimal{Hi: math.MaxUint64, Lo: math.MaxUint64}, "340282366920938463463374607431768211455"},
	}
	// decimal(38,38) 0.12345678901234567890123456789012345678
	d, err := DecimalFromString("0.12345678901234567890123456789012345678", 38, 38)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		d    Decimal
		want string
	}{d, "0.12345678901234567890123456789012345678"})
	for _, c := range cases {
		if got := string(AppendDecimalText(nil, c.d)); got != c.want {
			t.Errorf("AppendDecimalText(%+v) = %q, want %q", c.d, got, c.want)
		}
		if c.d.String() != c.want {
			t.Errorf("String = %q", c.d.String())
		}
	}
}

func TestFormatDecimalRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 100000; i++ {
		prec := uint8(1 + r.IntN(38))
		scale := uint8(r.IntN(int(prec) + 1))
		// A random magnitude of a random digit count <= prec.
		m := maxMagnitude[r.IntN(int(prec)+1)]
		hi, lo := r.Uint64(), r.Uint64()
		if m[0] == 0 {
			hi = 0
			if m[1] != math.MaxUint64 {
				lo %= m[1] + 1
			}
		} else {
			hi %= m[0] + 1
			if hi == m[0] && lo > m[1] {
				lo = m[1]
			}
		}
		d := Decimal{Hi: hi, Lo: lo, Neg: r.IntN(2) == 0 && hi|lo != 0, Scale: scale, Precision: prec}
		want := refDecimalText(decimalBig(d), int(scale))
		got := string(AppendDecimalText(nil, d))
		if got != want {
			t.Fatalf("AppendDecimalText(%+v) = %q, want %q", d, got, want)
		}
		back, err := DecimalFromString(got, prec, scale)
		if err != nil || back != d {
			t.Fatalf("DecimalFromString(%q) = %+v, %v; want %+v", got, back, err, d)
		}
		// Float64 is correctly rounded: compare with big.Float's parse.
		bf, _, _ := big.ParseFloat(want, 10, 200, big.ToNearestEven)
		wantF, _ := bf.Float64()
		if f := d.Float64(); f != wantF {
			t.Fatalf("Float64(%s) = %v, want %v", want, f, wantF)
		}
	}
}

func TestFormatDecimalFromString(t *testing.T) {
	ok := []struct {
		s           string
		prec, scale uint8
		want        string
	}{
		{"1.235", 5, 2, "1.24"},   // rounds half away from zero
		{"-1.235", 5, 2, "-1.24"}, // away from zero
		{"1.234", 5, 2, "1.23"},
		{"+7", 3, 1, "7.0"},
		{".5", 2, 1, "0.5"},
		{"5.", 2, 0, "5"},
		{"-0.004", 5, 2, "0.00"}, // rounds to zero: no sign
		{"99999999999999999999999999999999999999", 0, 0, "99999999999999999999999999999999999999"},
		{"000000000000000000000000000000000000000000001.5", 38, 1, "1.5"},
	}
	for _, c := range ok {
		d, err := DecimalFromString(c.s, c.prec, c.scale)
		if err != nil {
			t.Errorf("DecimalFromString(%q,%d,%d): %v", c.s, c.prec, c.scale, err)
			continue
		}
		if got := d.String(); got != c.want {
			t.Errorf("DecimalFromString(%q,%d,%d) = %q, want %q", c.s, c.prec, c.scale, got, c.want)
		}
	}
	bad := []struct {
		s           string
		prec, scale uint8
	}{
		{"", 5, 0}, {"-", 5, 0}, {".", 5, 0}, {"1.2.3", 5, 1}, {"1e5", 9, 0}, {"12a", 5, 0},
		{"100", 2, 0}, {"9.995", 3, 2}, // rounds to 10.00: too many digits
		{"1", 39, 0}, {"1", 5, 6},
		{"999999999999999999999999999999999999999", 38, 0},
		{"1" + strings.Repeat("0", 60), 38, 0},
	}
	for _, c := range bad {
		if d, err := DecimalFromString(c.s, c.prec, c.scale); err == nil {
			t.Errorf("DecimalFromString(%q,%d,%d) = %v, want error", c.s, c.prec, c.scale, d)
		}
	}
}

func TestFormatNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	d := Decimal{Hi: 5, Lo: 12345, Neg: true, Scale: 20, Precision: 38}
	dt := DateTime{Days: 738000, Ticks: 123456789}
	dto := DateTimeOffset{UTC: dt, OffsetMin: -330}
	g := GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendDecimalText(buf[:0], d)
		b = AppendMoneyText(b, -123456789)
		b = AppendDateText(b, 738000)
		b = AppendTimeText(b, 123456789, 5)
		b = AppendDateTimeText(b, dt, 7)
		b = AppendDateTimeOffsetText(b, dto, 3)
		b = AppendGUIDText(b, g)
		b = AppendFloat64Text(b, 1.0/3)
		b = AppendFloat32Text(b, 0.1)
		_ = b
		_ = DateFromCivil(2024, 2, 29)
		_, _, _ = CivilFromDate(738000)
		_ = dt.Time()
		_ = DateTimeFromTime(time.Time{})
		_, _ = DecimalFromString("-12345.678", 20, 3)
		_, _ = GUIDFromString("6f9619ff-8b86-d011-b42d-00c04fc964ff")
		_ = GUIDFromWire(g[:])
	})
	if allocs != 0 {
		t.Fatalf("text formatting allocated %v times per run", allocs)
	}
}

func BenchmarkFormatDecimalText(b *testing.B) {
	d, _ := DecimalFromString("-12345678901234567890.123456789012345678", 38, 18)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDecimalText(buf[:0], d)
	}
}

func BenchmarkFormatDateTimeText(b *testing.B) {
	dt := DateTime{Days: 738000, Ticks: 123456789}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDateTimeText(buf[:0], dt, 7)
	}
}

// FuzzDecimalFromString: no panic; whatever parses prints back to text that
// parses to the same value.
func FuzzDecimalFromString(f *testing.F) {
	for _, s := range []string{"0", "-0.50", "1.235", "99999999999999999999999999999999999999", ".5", "5.", "+", "1e5", "--1"} {
		f.Add(s, uint8(38), uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, prec, scale uint8) {
		d, err := DecimalFromString(s, prec, scale)
		if err != nil {
			return
		}
		text := d.String()
		back, err := DecimalFromString(text, d.Precision, d.Scale)
		if err != nil || back != d {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, d, text, back, err)
		}
		if !fitsPrecision(d.Hi, d.Lo, d.Precision) {
			t.Fatalf("%q: %+v exceeds its precision", s, d)
		}
	})
}

// FuzzGUIDFromString: no panic; accepted text prints back canonically.
func FuzzGUIDFromString(f *testing.F) {
	f.Add("6f9619ff-8b86-d011-b42d-00c04fc964ff")
	f.Add("{6F9619FF-8B86-D011-B42D-00C04FC964FF}")
	f.Add("6f9619ff8b86d011b42d00c04fc964ff")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := GUIDFromString(s)
		if err != nil {
			return
		}
		if back, err := GUIDFromString(g.String()); err != nil || back != g {
			t.Fatalf("%q -> %v does not round-trip", s, g)
		}
		if GUIDFromWire(g.AppendWire(nil)) != g {
			t.Fatalf("wire order round trip of %v", g)
		}
	})
}
