package decode

// Value representations handed to sinks, exact (decimal as a scaled 128-bit
// integer, money scaled by 10^4, date/time as days and 100 ns ticks). None
// of them is text:
// a sink that wants text formats them itself, with the Append* helpers of
// this package, straight into its own buffer.

// Decimal is an exact decimal/numeric value: sign, 128-bit magnitude and
// scale, value = (-1)^Neg * (Hi<<64 | Lo) / 10^Scale. Precision is the
// column's declared precision (1..38), kept so sinks can choose physical types.
type Decimal struct {
	Lo, Hi    uint64
	Neg       bool
	Scale     uint8
	Precision uint8
}

// DateTime is a calendar date plus a time of day without zone: Days since
// 0001-01-01 (proleptic Gregorian, day 0 = 0001-01-01) and Ticks of 100 ns
// since midnight (0 <= Ticks < 864_000_000_000). datetime, smalldatetime and
// datetime2 all decode to it; the column's TypeInfo keeps the source type.
type DateTime struct {
	Days  int32
	Ticks int64
}

// DateTimeOffset is a UTC instant (as on the wire) plus the original offset
// from UTC in minutes (-840..840).
type DateTimeOffset struct {
	UTC       DateTime
	OffsetMin int16
}

// GUID is a uniqueidentifier in RFC 4122 byte order (the order of its
// canonical text form). The wire's mixed-endian order is converted by the decoder.
type GUID [16]byte

// TicksPerDay is the number of 100 ns ticks in a day.
const TicksPerDay = 864_000_000_000

// Named value types of the generic value path (Capture, AppendValue), where
// a value travels as an interface and plain integers would be ambiguous. The
// sink path never uses them: it passes plain integers through typed calls.
type (
	// Money is money or smallmoney scaled by 10^4.
	Money int64
	// Date is days since 0001-01-01.
	Date int32
	// Time is 100 ns ticks since midnight.
	Time int64
)

// Variant is a sql_variant value on the generic path: its base type and the
// base value (one of the generic value types, never nil).
type Variant struct {
	Type  TypeInfo
	Value any
}
