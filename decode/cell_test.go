package decode

import (
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// ahex parses annotated hex: whitespace is ignored and "#" starts a comment
// that runs to the end of the line.
func ahex(s string) []byte {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			b.WriteString(f)
		}
	}
	out, err := hex.DecodeString(b.String())
	if err != nil {
		panic("bad test hex: " + err.Error())
	}
	return out
}

// Collations of the tests (MS-TDS 2.2.5.1.2).
var (
	cLatin1   = Collation{Info: 0x00D00409, SortID: 52} // SQL_Latin1_General_CP1_CI_AS: cp1252
	cCyrillic = Collation{Info: 0x00D00419}             // Cyrillic_General_CI_AS: cp1251
	cJapanese = Collation{Info: 0x00D00411}             // Japanese_CI_AS: cp932
	cUTF8     = Collation{Info: 0x04D00409}             // Latin1_General_100_CI_AS_SC_UTF8 (fUTF8)
	cGreekSQL = Collation{Info: 0x00D00408, SortID: 114}
)

// decodeCell runs DecodeCell into a Capture (once reserving, once with the
// sink declining Reserve) and returns the captured value; both must agree.
func decodeCell(t *testing.T, ti TypeInfo, wire []byte) any {
	t.Helper()
	var vals [2]any
	for i, decline := range []bool{false, true} {
		c := &Capture{DeclineReserve: decline}
		c.Columns([]Column{{Type: ti}}, []Mode{ModeValue})
		n, err := DecodeCell(wire, &ti, 0, c)
		if err != nil {
			t.Fatalf("DecodeCell(% x): %v", wire, err)
		}
		if n != len(wire) {
			t.Fatalf("DecodeCell consumed %d of %d bytes", n, len(wire))
		}
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		if len(c.cur) != 1 || !c.seen[0] {
			t.Fatalf("no value delivered")
		}
		vals[i] = c.cur[0]
		// Every strict prefix is "need more", never an error or a value.
		for k := 0; k < len(wire); k++ {
			c := &Capture{}
			if _, err := DecodeCell(wire[:k], &ti, 0, c); err != ErrNeedMore {
				t.Fatalf("prefix of %d/%d bytes: err = %v, want ErrNeedMore", k, len(wire), err)
			}
			if len(c.cur) != 0 {
				t.Fatalf("prefix of %d/%d bytes delivered a value", k, len(wire))
			}
		}
	}
	if !reflect.DeepEqual(vals[0], vals[1]) {
		t.Fatalf("Reserve path %#v != Write path %#v", vals[0], vals[1])
	}
	return vals[0]
}

type cellCase struct {
	name string
	ti   TypeInfo
	wire string // annotated hex
	want any
}

func dec(neg bool, hi, lo uint64, p, s uint8) Decimal {
	return Decimal{Neg: neg, Hi: hi, Lo: lo, Precision: p, Scale: s}
}

func days(y, m, d int) int32 { return DateFromCivil(y, m, d) }

const lastTick = TicksPerDay - 1 // 23:59:59.9999999

var cellCases = []cellCase{
	// 2.2.5.5.1.1 integers, fixed-length types (2.2.5.4.1): no length byte.
	{"tinyint max", TypeInfo{Type: TypeInt1}, "ff", int64(255)},
	{"tinyint min", TypeInfo{Type: TypeInt1}, "00", int64(0)},
	{"smallint min", TypeInfo{Type: TypeInt2}, "00 80", int64(math.MinInt16)},
	{"int max", TypeInfo{Type: TypeInt4}, "ff ff ff 7f", int64(math.MaxInt32)},
	{"int min", TypeInfo{Type: TypeInt4}, "00 00 00 80", int64(math.MinInt32)},
	{"bigint min", TypeInfo{Type: TypeInt8}, "00 00 00 00 00 00 00 80", int64(math.MinInt64)},
	{"bigint max", TypeInfo{Type: TypeInt8}, "ff ff ff ff ff ff ff 7f", int64(math.MaxInt64)},
	{"bit", TypeInfo{Type: TypeBit}, "01", true},
	// INTN (2.2.5.5.1.1): BYTELEN length 0 = NULL, else 1/2/4/8.
	{"intn(4) null", TypeInfo{Type: TypeIntN, Size: 4}, "00", nil},
	{"intn(1) 255", TypeInfo{Type: TypeIntN, Size: 1}, "01 ff", int64(255)},
	{"intn(2) -1", TypeInfo{Type: TypeIntN, Size: 2}, "02 ff ff", int64(-1)},
	{"intn(4) -2", TypeInfo{Type: TypeIntN, Size: 4}, "04 fe ff ff ff", int64(-2)},
	{"intn(8) max", TypeInfo{Type: TypeIntN, Size: 8}, "08 ff ff ff ff ff ff ff 7f", int64(math.MaxInt64)},
	{"bitn false", TypeInfo{Type: TypeBitN, Size: 1}, "01 00", false},
	{"bitn null", TypeInfo{Type: TypeBitN, Size: 1}, "00", nil},
	// 2.2.5.5.1.2 floats.
	{"real 1.5", TypeInfo{Type: TypeFlt4}, "00 00 c0 3f", float32(1.5)},
	{"float -max", TypeInfo{Type: TypeFlt8}, "ff ff ff ff ff ff ef ff", -math.MaxFloat64},
	{"fltn(4)", TypeInfo{Type: TypeFltN, Size: 4}, "04 00 00 80 bf", float32(-1)},
	{"fltn(8) smallest", TypeInfo{Type: TypeFltN, Size: 8}, "08 01 00 00 00 00 00 00 00", math.SmallestNonzeroFloat64},
	{"fltn null", TypeInfo{Type: TypeFltN, Size: 8}, "00", nil},
	// 2.2.5.5.1.4 money: high 4 bytes first, then low 4 bytes; x 10^4.
	{"money -0.0001", TypeInfo{Type: TypeMoney}, "ff ff ff ff  ff ff ff ff", Money(-1)},
	{"money max", TypeInfo{Type: TypeMoney}, "ff ff ff 7f  ff ff ff ff", Money(math.MaxInt64)},
	{"money min", TypeInfo{Type: TypeMoney}, "00 00 00 80  00 00 00 00", Money(math.MinInt64)},
	{"money -1.5", TypeInfo{Type: TypeMoneyN, Size: 8}, "08  ff ff ff ff  68 c5 ff ff", Money(-15000)},
	{"smallmoney min", TypeInfo{Type: TypeMoney4}, "00 00 00 80", Money(math.MinInt32)},
	{"moneyn(4) 1", TypeInfo{Type: TypeMoneyN, Size: 4}, "04 10 27 00 00", Money(10000)},
	{"moneyn null", TypeInfo{Type: TypeMoneyN, Size: 8}, "00", nil},
	// 2.2.5.5.1.8 datetime: days since 1900-01-01 (int32), 1/300 s ticks.
	{"datetime 1900-01-01", TypeInfo{Type: TypeDateTime}, "00 00 00 00  00 00 00 00", DateTime{Days: days(1900, 1, 1)}},
	{"datetime 1753-01-01", TypeInfo{Type: TypeDateTime}, "46 2e ff ff  00 00 00 00", DateTime{Days: days(1753, 1, 1)}},
	{"datetime 9999-12-31 23:59:59.997", TypeInfo{Type: TypeDateTime}, "7f 24 2d 00  ff 81 8b 01",
		DateTime{Days: days(9999, 12, 31), Ticks: 863999966667}},
	{"datetime .003 rounds to .0033333", TypeInfo{Type: TypeDateTimeN, Size: 8}, "08 00 00 00 00 01 00 00 00", DateTime{Days: days(1900, 1, 1), Ticks: 33333}},
	{"datetime .007 rounds to .0066667", TypeInfo{Type: TypeDateTimeN, Size: 8}, "08 00 00 00 00 02 00 00 00", DateTime{Days: days(1900, 1, 1), Ticks: 66667}},
	{"smalldatetime 2079-06-06 23:59", TypeInfo{Type: TypeDateTim4}, "ff ff  9f 05", DateTime{Days: days(2079, 6, 6), Ticks: 1439 * 600_000_000}},
	{"datetimn(4)", TypeInfo{Type: TypeDateTimeN, Size: 4}, "04 00 00 3c 00", DateTime{Days: days(1900, 1, 1), Ticks: 60 * 600_000_000}},
	{"datetimn null", TypeInfo{Type: TypeDateTimeN, Size: 8}, "00", nil},
	// 2.2.5.5.1.7 decimal: length, sign (1 = positive), LE magnitude.
	{"decimal(38,0) max", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, `
		11                                                 # length 17
		01                                                 # positive
		ff ff ff ff 3f 22 8a 09 7a c4 86 5a a8 4c 3b 4b    # 10^38-1`,
		dec(false, 0x4B3B4CA85A86C47A, 0x098A223FFFFFFFFF, 38, 0)},
	{"decimal(38,38) min", TypeInfo{Type: TypeNumericN, Size: 17, Precision: 38, Scale: 38}, `
		11 00 ff ff ff ff 3f 22 8a 09 7a c4 86 5a a8 4c 3b 4b`,
		dec(true, 0x4B3B4CA85A86C47A, 0x098A223FFFFFFFFF, 38, 38)},
	{"decimal(5,2) -123.45", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 2}, "05 00 39 30 00 00", dec(true, 0, 12345, 5, 2)},
	{"decimal(18,4)", TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 18, Scale: 4}, "09 01 ff ff 63 a7 b3 b6 e0 0d", dec(false, 0, 999999999999999999, 18, 4)},
	{"decimal(28,0) 12-byte", TypeInfo{Type: TypeDecimalN, Size: 13, Precision: 28}, "0d 01 00 00 00 00 00 00 00 00 01 00 00 00", dec(false, 1, 0, 28, 0)},
	{"decimal -0 is 0", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 9}, "05 00 00 00 00 00", dec(false, 0, 0, 9, 0)},
	{"decimal(19,0) -0 is 0", TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 19}, "09 00 00 00 00 00 00 00 00 00", dec(false, 0, 0, 19, 0)},
	{"decimal(19,2) max", TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 19, Scale: 2}, "09 00 ff ff e7 89 04 23 c7 8a", dec(true, 0, 9999999999999999999, 19, 2)},
	{"decimal null", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, "00", nil},
	// 2.2.5.5.1.9 GUID: first three groups little-endian.
	{"uniqueidentifier", TypeInfo{Type: TypeGUID, Size: 16}, "10 33 22 11 00 55 44 77 66 88 99 aa bb cc dd ee ff",
		GUID{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
	{"uniqueidentifier null", TypeInfo{Type: TypeGUID, Size: 16}, "00", nil},
	// 2.2.5.5.1.8 date: 3-byte days since 0001-01-01.
	{"date 0001-01-01", TypeInfo{Type: TypeDateN}, "03 00 00 00", Date(0)},
	{"date 9999-12-31", TypeInfo{Type: TypeDateN}, "03 da b9 37", Date(3652058)},
	{"date null", TypeInfo{Type: TypeDateN}, "00", nil},
	// time(n): 3/4/5 bytes of 10^-n s units.
	{"time(0) 23:59:59", TypeInfo{Type: TypeTimeN, Scale: 0}, "03 7f 51 01", Time(86399 * 10_000_000)},
	{"time(1)", TypeInfo{Type: TypeTimeN, Scale: 1}, "03 0f 00 00", Time(15 * 1_000_000)},
	{"time(2)", TypeInfo{Type: TypeTimeN, Scale: 2}, "03 ff d5 83", Time(8639999 * 100_000)},
	{"time(3) 23:59:59.999", TypeInfo{Type: TypeTimeN, Scale: 3}, "04 ff 5b 26 05", Time(86399999 * 10_000)},
	{"time(4)", TypeInfo{Type: TypeTimeN, Scale: 4}, "04 01 00 00 00", Time(1000)},
	{"time(5)", TypeInfo{Type: TypeTimeN, Scale: 5}, "05 01 00 00 00 00", Time(100)},
	{"time(6)", TypeInfo{Type: TypeTimeN, Scale: 6}, "05 01 00 00 00 00", Time(10)},
	{"time(7) 23:59:59.9999999", TypeInfo{Type: TypeTimeN, Scale: 7}, "05 ff bf 69 2a c9", Time(lastTick)},
	{"time null", TypeInfo{Type: TypeTimeN, Scale: 7}, "00", nil},
	// datetime2(n): time then date.
	{"datetime2(7) max", TypeInfo{Type: TypeDateTime2N, Scale: 7}, `
		08                   # length
		ff bf 69 2a c9       # 863999999999 x 100 ns
		da b9 37             # 9999-12-31`, DateTime{Days: 3652058, Ticks: lastTick}},
	{"datetime2(0) min", TypeInfo{Type: TypeDateTime2N, Scale: 0}, "06 00 00 00 00 00 00", DateTime{}},
	{"datetime2(3)", TypeInfo{Type: TypeDateTime2N, Scale: 3}, "07 e8 03 00 00 01 00 00", DateTime{Days: 1, Ticks: 10_000_000}},
	// datetimeoffset(n): datetime2 in UTC, then int16 offset minutes.
	{"datetimeoffset(7) -14:00", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, `
		0a 00 b0 bd 58 75  00 00 00  b8 fc   # 0001-01-01 14:00 UTC, -840 (local 00:00)`,
		DateTimeOffset{UTC: DateTime{Ticks: 14 * 36_000_000_000}, OffsetMin: -840}},
	{"datetimeoffset(7) +14:00 max", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, `
		0a ff 0f ac d1 53  da b9 37  48 03   # 9999-12-31 09:59:59.9999999 UTC, +840 (local 23:59:59.9999999)`,
		DateTimeOffset{UTC: DateTime{Days: 3652058, Ticks: 10*36_000_000_000 - 1}, OffsetMin: 840}},
	{"datetimeoffset(0)", TypeInfo{Type: TypeDateTimeOffset, Scale: 0}, "08 01 00 00 00 00 00 3c 00", DateTimeOffset{UTC: DateTime{Ticks: 10_000_000}, OffsetMin: 60}},
	{"datetimeoffset null", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, "00", nil},
	// 2.2.5.2.2 USHORTLEN char types with their collation's code page.
	{"varchar cp1252", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cLatin1}, "06 00 63 61 66 e9 20 80", "café €"},
	{"varchar cp1251", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cCyrillic}, "06 00 cf f0 e8 e2 e5 f2", "Привет"},
	{"varchar cp932", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cJapanese}, "06 00 93 fa 96 7b b1 32", "日本ｱ2"},
	{"varchar cp1253 sort 114", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cGreekSQL}, "02 00 e1 e2", "αβ"},
	{"varchar UTF-8", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cUTF8}, "07 00 63 61 66 c3 a9 c3 a9", "caf\u00e9\u00e9"},
	{"varchar UTF-8 invalid", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cUTF8}, "03 00 61 ff 62", "a\uFFFDb"},
	{"varchar UTF-8 truncated", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cUTF8}, "03 00 61 e2 82", "a\uFFFD\uFFFD"},
	{"varchar empty", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cLatin1}, "00 00", ""},
	{"varchar null", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cLatin1}, "ff ff", nil},
	{"char(3)", TypeInfo{Type: TypeBigChar, Size: 3, Collation: cLatin1}, "03 00 61 20 20", "a  "},
	{"cp932 cut lead byte", TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: cJapanese}, "02 00 61 93", "a\uFFFD"},
	// nchar/nvarchar: UTF-16LE.
	{"nvarchar supplementary", TypeInfo{Type: TypeNVarChar, Size: 100, Collation: cLatin1}, `
		0a 00                 # 10 bytes
		61 00                 # a
		3d d8 00 de           # U+1F600 as a surrogate pair
		e9 00                 # é
		ac 20                 # €`, "a\U0001F600é€"},
	{"nvarchar lone surrogates", TypeInfo{Type: TypeNVarChar, Size: 100, Collation: cLatin1}, "06 00 00 d8 41 00 00 dc", "\uFFFDA\uFFFD"},
	{"nvarchar trailing high surrogate", TypeInfo{Type: TypeNVarChar, Size: 100, Collation: cLatin1}, "02 00 3d d8", "\uFFFD"},
	{"nvarchar empty", TypeInfo{Type: TypeNVarChar, Size: 100, Collation: cLatin1}, "00 00", ""},
	{"nvarchar null", TypeInfo{Type: TypeNVarChar, Size: 100, Collation: cLatin1}, "ff ff", nil},
	{"nchar(2)", TypeInfo{Type: TypeNChar, Size: 4, Collation: cLatin1}, "04 00 48 4e 20 00", "么 "},
	// binary types.
	{"varbinary", TypeInfo{Type: TypeBigVarBinary, Size: 8000}, "03 00 00 ff 10", []byte{0, 0xff, 0x10}},
	{"varbinary empty", TypeInfo{Type: TypeBigVarBinary, Size: 8000}, "00 00", []byte{}},
	{"varbinary null", TypeInfo{Type: TypeBigVarBinary, Size: 8000}, "ff ff", nil},
	{"timestamp", TypeInfo{Type: TypeBigBinary, Size: 8}, "08 00 00 00 00 00 00 00 07 d1", []byte{0, 0, 0, 0, 0, 0, 7, 0xd1}},
	// 2.2.5.2.3 PLP: ULONGLONGLEN total, chunks, terminator.
	{"varchar(max) known length", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: cLatin1}, `
		03 00 00 00 00 00 00 00   # total 3
		02 00 00 00  61 e9        # chunk "aé"
		01 00 00 00  80           # chunk "€"
		00 00 00 00               # terminator`, "aé€"},
	{"varchar(max) cp932 char split between chunks", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: cJapanese}, `
		fe ff ff ff ff ff ff ff   # unknown length
		01 00 00 00  93           # lead byte of 日
		03 00 00 00  fa 96 7b     # its trail byte, then 本
		00 00 00 00`, "日本"},
	{"varchar(max) UTF-8 split", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: cUTF8}, `
		fe ff ff ff ff ff ff ff
		02 00 00 00  f0 9f
		02 00 00 00  98 80        # U+1F600 over two chunks
		00 00 00 00`, "\U0001F600"},
	{"varchar(max) null", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: cLatin1}, "ff ff ff ff ff ff ff ff", nil},
	{"varchar(max) empty", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: cLatin1}, "00 00 00 00 00 00 00 00  00 00 00 00", ""},
	{"varchar(max) empty unknown", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: cLatin1}, "fe ff ff ff ff ff ff ff  00 00 00 00", ""},
	{"nvarchar(max) pair split inside a code unit", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen, Collation: cLatin1}, `
		06 00 00 00 00 00 00 00   # total 6
		03 00 00 00  61 00 3d     # "a", low byte of the high surrogate
		01 00 00 00  d8           # its high byte
		02 00 00 00  00 de        # the low surrogate
		00 00 00 00`, "a\U0001F600"},
	{"varbinary(max)", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, "02 00 00 00 00 00 00 00 01 00 00 00 aa 01 00 00 00 bb 00 00 00 00", []byte{0xaa, 0xbb}},
	{"xml", TypeInfo{Type: TypeXML}, "fe ff ff ff ff ff ff ff 08 00 00 00 3c 00 61 00 2f 00 3e 00 00 00 00 00", "<a/>"},
	{"json", TypeInfo{Type: TypeJSON}, "07 00 00 00 00 00 00 00 07 00 00 00 7b 22 c3 a9 22 7d 20 00 00 00 00", "{\"é\"} "},
	{"udt", TypeInfo{Type: TypeUDT, Size: MaxVarLen, UDTName: "hierarchyid"}, "01 00 00 00 00 00 00 00 01 00 00 00 58 00 00 00 00", []byte{0x58}},
	// 2.2.7.19 text/ntext/image: text pointer, timestamp, LONGLEN data.
	{"text cp1252", TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: cLatin1}, `
		10 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f   # text pointer (16)
		00 00 00 00 00 00 00 01                              # timestamp
		02 00 00 00  e9 e8                                   # data`, "éè"},
	{"text null", TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: cLatin1}, "00", nil},
	{"ntext", TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE, Collation: cLatin1}, "01 aa 00 00 00 00 00 00 00 00 04 00 00 00 41 04 42 04", "ст"},
	{"image empty", TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}, "01 aa 00 00 00 00 00 00 00 00 00 00 00 00", []byte{}},
	// 2.2.5.5.7 vector: header A9 01 dims type 00 00 00, then float32.
	{"vector(2)", TypeInfo{Type: TypeVector, Size: 16}, `
		10 00                     # 16 bytes
		a9 01 02 00 00 00 00 00   # layout, version, 2 dims, float32
		00 00 80 3f  00 00 00 c0  # 1, -2`, []float32{1, -2}},
	{"vector null", TypeInfo{Type: TypeVector, Size: 16}, "ff ff", nil},
	{"vector float16", TypeInfo{Type: TypeVector, Size: 12, Scale: 1}, "0c 00 a9 01 02 00 01 00 00 00 00 3c 00 c0", []float32{1, -2}},
	// 2.2.5.5.4 sql_variant: LONGLEN, base type, prop bytes, props, data.
	{"variant int", TypeInfo{Type: TypeVariant, Size: 8009}, "06 00 00 00  38 00  2a 00 00 00",
		Variant{Type: TypeInfo{Type: TypeInt4}, Value: int64(42)}},
	{"variant nvarchar", TypeInfo{Type: TypeVariant, Size: 8009}, `
		0d 00 00 00          # 13 bytes
		e7 07                # nvarchar, 7 prop bytes
		09 04 d0 00 34       # collation
		0a 00                # max length 10
		68 00 69 00          # "hi"`,
		Variant{Type: TypeInfo{Type: TypeNVarChar, Size: 10, Collation: cLatin1}, Value: "hi"}},
	{"variant varchar cp1251", TypeInfo{Type: TypeVariant, Size: 8009}, "0a 00 00 00 a7 07 19 04 d0 00 00 08 00 cf", Variant{Type: TypeInfo{Type: TypeBigVarChar, Size: 8, Collation: cCyrillic}, Value: "П"}},
	{"variant decimal", TypeInfo{Type: TypeVariant, Size: 8009}, "09 00 00 00 6c 02 05 02 00 39 30 00 00",
		Variant{Type: TypeInfo{Type: TypeNumericN, Precision: 5, Scale: 2}, Value: dec(true, 0, 12345, 5, 2)}},
	{"variant datetime2", TypeInfo{Type: TypeVariant, Size: 8009}, "0b 00 00 00 2a 01 07 ff bf 69 2a c9 da b9 37",
		Variant{Type: TypeInfo{Type: TypeDateTime2N, Scale: 7}, Value: DateTime{Days: 3652058, Ticks: lastTick}}},
	{"variant varbinary", TypeInfo{Type: TypeVariant, Size: 8009}, "06 00 00 00 a5 02 10 00 01 02", Variant{Type: TypeInfo{Type: TypeBigVarBinary, Size: 16}, Value: []byte{1, 2}}},
	{"variant money", TypeInfo{Type: TypeVariant, Size: 8009}, "0a 00 00 00 3c 00 00 00 00 00 10 27 00 00", Variant{Type: TypeInfo{Type: TypeMoney}, Value: Money(10000)}},
	{"variant guid", TypeInfo{Type: TypeVariant, Size: 8009}, "12 00 00 00 24 00 33 22 11 00 55 44 77 66 88 99 aa bb cc dd ee ff",
		Variant{Type: TypeInfo{Type: TypeGUID}, Value: GUID{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}}},
	{"variant date", TypeInfo{Type: TypeVariant, Size: 8009}, "05 00 00 00 28 00 da b9 37", Variant{Type: TypeInfo{Type: TypeDateN}, Value: Date(3652058)}},
	{"variant null", TypeInfo{Type: TypeVariant, Size: 8009}, "00 00 00 00", nil},
}

func TestCellDecodeTypes(t *testing.T) {
	for _, c := range cellCases {
		t.Run(c.name, func(t *testing.T) {
			got := decodeCell(t, c.ti, ahex(c.wire))
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestCellMaxLengthStrings(t *testing.T) {
	// varchar(8000) and nvarchar(4000) at their maximum length.
	b := make([]byte, 2, 8002)
	b[0], b[1] = 0x40, 0x1f // 8000
	for i := 0; i < 8000; i++ {
		b = append(b, 'a'+byte(i%26))
	}
	got := decodeCellQuick(t, TypeInfo{Type: TypeBigVarChar, Size: 8000, Collation: cLatin1}, b)
	if s, ok := got.(string); !ok || len(s) != 8000 || s[:3] != "abc" {
		t.Fatalf("varchar(8000): %T len %d", got, len(s))
	}
	n := make([]byte, 2, 8002)
	n[0], n[1] = 0x40, 0x1f
	for i := 0; i < 4000; i++ {
		n = append(n, 0x3a, 0x04) // U+043A к
	}
	got = decodeCellQuick(t, TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: cLatin1}, n)
	if s, ok := got.(string); !ok || s != strings.Repeat("к", 4000) {
		t.Fatalf("nvarchar(4000) wrong")
	}
}

// decodeCellQuick is decodeCell without the prefix sweep (for big values).
func decodeCellQuick(t *testing.T, ti TypeInfo, wire []byte) any {
	t.Helper()
	c := &Capture{}
	c.Columns([]Column{{Type: ti}}, []Mode{ModeValue})
	n, err := DecodeCell(wire, &ti, 0, c)
	if err != nil || n != len(wire) || c.Err != nil {
		t.Fatalf("DecodeCell: n=%d/%d err=%v capture=%v", n, len(wire), err, c.Err)
	}
	return c.cur[0]
}

func TestCellRawAndSkip(t *testing.T) {
	for _, c := range cellCases {
		wire := ahex(c.wire)
		var d cellDecoder
		var td textDecoder
		var p colPlan
		ti := c.ti
		if err := makePlan(&p, &ti, ModeRaw, &td); err != nil {
			t.Fatal(err)
		}
		cp := &Capture{Modes: []Mode{ModeRaw}}
		cp.Columns([]Column{{Type: ti}}, []Mode{ModeValue})
		d.sink = cp
		n, err := d.complete(wire, &p, 0)
		if err != nil || n != len(wire) || cp.Err != nil {
			t.Fatalf("%s raw: n=%d err=%v %v", c.name, n, err, cp.Err)
		}
		if c.want == nil {
			if cp.cur[0] != nil {
				t.Fatalf("%s raw: NULL became %#v", c.name, cp.cur[0])
			}
			continue
		}
		if _, ok := cp.cur[0].([]byte); !ok {
			t.Fatalf("%s raw: got %T", c.name, cp.cur[0])
		}
		p.mode = ModeSkip
		cs := &Capture{Modes: []Mode{ModeSkip}}
		cs.Columns([]Column{{Type: ti}}, []Mode{ModeValue})
		d.sink = cs
		if n, err := d.complete(wire, &p, 0); err != nil || n != len(wire) || cs.seen[0] || cs.Err != nil {
			t.Fatalf("%s skip: n=%d err=%v", c.name, n, err)
		}
	}
	// Raw values are the wire bytes without framing; GUIDs in wire order.
	ti := TypeInfo{Type: TypeGUID, Size: 16}
	var d cellDecoder
	var td textDecoder
	var p colPlan
	makePlan(&p, &ti, ModeRaw, &td)
	cp := &Capture{}
	d.sink = cp
	d.complete(ahex("10 33 22 11 00 55 44 77 66 88 99 aa bb cc dd ee ff"), &p, 0)
	if !reflect.DeepEqual(cp.cur[0], ahex("33 22 11 00 55 44 77 66 88 99 aa bb cc dd ee ff")) {
		t.Fatalf("raw GUID %x", cp.cur[0])
	}
}

// Malformed values are *ProtocolErrors, never panics or values.
func TestCellMalformed(t *testing.T) {
	cases := []struct {
		name string
		ti   TypeInfo
		wire string
		msg  string
	}{
		{"intn length 3", TypeInfo{Type: TypeIntN, Size: 4}, "03 01 02 03", "invalid length 3"},
		{"intn longer than declared", TypeInfo{Type: TypeIntN, Size: 4}, "08 01 02 03 04 05 06 07 08", "invalid length 8"},
		{"decimal length 6", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, "06 01 00 00 00 00 00", "invalid length 6"},
		{"decimal sign 2", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 9}, "05 02 00 00 00 00", "sign byte"},
		{"decimal over precision", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 2}, "05 01 64 00 00 00", "exceeds precision"},
		{"decimal(10) over 10^10", TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 10}, "09 01 00 e4 0b 54 02 00 00 00", "exceeds precision"},
		{"decimal(19) at 10^19", TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 19}, "09 01 00 00 e8 89 04 23 c7 8a", "exceeds precision"},
		{"decimal(12) sign 2", TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 12}, "09 02 01 00 00 00 00 00 00 00", "sign byte"},
		{"decimal(38) over 10^38", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, "11 01 00 00 00 00 40 22 8a 09 7a c4 86 5a a8 4c 3b 4b", "exceeds precision"},
		{"date after 9999", TypeInfo{Type: TypeDateN}, "03 db b9 37", "after 9999-12-31"},
		{"time(7) 24:00", TypeInfo{Type: TypeTimeN, Scale: 7}, "05 00 c0 69 2a c9", "outside a day"},
		{"time(7) wrong length", TypeInfo{Type: TypeTimeN, Scale: 7}, "03 00 00 00", "invalid length"},
		{"dto offset 841", TypeInfo{Type: TypeDateTimeOffset, Scale: 0}, "08 00 00 00 00 00 00 49 03", "offset"},
		{"datetime ticks", TypeInfo{Type: TypeDateTime}, "00 00 00 00 00 8c 8b 01", "outside a day"},
		{"datetime day", TypeInfo{Type: TypeDateTime}, "80 24 2d 00 00 00 00 00", "outside 1753"},
		{"smalldatetime minutes", TypeInfo{Type: TypeDateTim4}, "00 00 a0 05", "outside a day"},
		{"guid length 15", TypeInfo{Type: TypeGUID, Size: 16}, "0f 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00", "invalid length 15"},
		{"varchar over declared", TypeInfo{Type: TypeBigVarChar, Size: 2, Collation: cLatin1}, "03 00 61 62 63", "exceeds the declared maximum"},
		{"nvarchar odd", TypeInfo{Type: TypeNVarChar, Size: 10}, "03 00 61 00 62", "odd byte count"},
		{"plp chunk beyond total", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, "01 00 00 00 00 00 00 00 02 00 00 00 aa bb 00 00 00 00", "exceeds the declared length"},
		{"plp chunks short of total", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, "03 00 00 00 00 00 00 00 02 00 00 00 aa bb 00 00 00 00", "sum to 2"},
		{"plp odd UTF-16 total", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen}, "03 00 00 00 00 00 00 00 03 00 00 00 61 00 62 00 00 00 00", "odd PLP length"},
		{"plp odd UTF-16 unknown", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen}, "fe ff ff ff ff ff ff ff 03 00 00 00 61 00 62 00 00 00 00", "odd byte count"},
		{"plp total over limit", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, "00 00 00 80 00 00 00 00", "exceeds the value size limit"},
		{"vector bad layout", TypeInfo{Type: TypeVector, Size: 12}, "0c 00 a8 01 01 00 00 00 00 00 00 00 80 3f", "malformed vector header"},
		{"vector dims mismatch", TypeInfo{Type: TypeVector, Size: 12}, "0c 00 a9 01 02 00 00 00 00 00 00 00 80 3f", "does not match"},
		{"vector element type", TypeInfo{Type: TypeVector, Size: 12}, "0c 00 a9 01 01 00 01 00 00 00 00 00 80 3f", "element type"},
		{"variant base type", TypeInfo{Type: TypeVariant, Size: 8009}, "03 00 00 00 f1 00 00", "not allowed"},
		{"variant prop bytes", TypeInfo{Type: TypeVariant, Size: 8009}, "06 00 00 00 38 01 00 2a 00 00", "property bytes"},
		{"variant data length", TypeInfo{Type: TypeVariant, Size: 8009}, "05 00 00 00 38 00 2a 00 00", "does not match"},
		{"variant too long", TypeInfo{Type: TypeVariant, Size: 8009}, "4a 1f 00 00", "exceeds the declared maximum"},
		{"text negative length", TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}, "01 aa 00 00 00 00 00 00 00 00 ff ff ff ff", "out of range"},
		{"ntext odd", TypeInfo{Type: TypeNText, Size: 0x7FFFFFFF}, "01 aa 00 00 00 00 00 00 00 00 01 00 00 00 41", "odd byte count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCell(ahex(c.wire), &c.ti, 0, &Capture{})
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ProtocolError", err)
			}
			if !strings.Contains(pe.Msg, c.msg) {
				t.Fatalf("message %q does not contain %q", pe.Msg, c.msg)
			}
		})
	}
	// Impossible TYPE_INFO facts are rejected when the plan is made.
	for _, ti := range []TypeInfo{
		{Type: TypeDecimalN, Size: 17, Precision: 39},
		{Type: TypeTimeN, Scale: 8},
		{Type: 0x01},
	} {
		if _, err := DecodeCell([]byte{0}, &ti, 0, &Capture{}); err == nil {
			t.Fatalf("type %#v accepted", ti)
		}
	}
}

func TestCollationCodePages(t *testing.T) {
	cases := []struct {
		c  Collation
		cp int
	}{
		{cLatin1, 1252},
		{Collation{Info: 0x00D00409}, 1252},
		{Collation{Info: 0x00D00405}, 1250},
		{cCyrillic, 1251},
		{Collation{Info: 0x00D00408}, 1253},
		{Collation{Info: 0x00D0041F}, 1254},
		{Collation{Info: 0x00D0040D}, 1255},
		{Collation{Info: 0x00D00401}, 1256},
		{Collation{Info: 0x00D00425}, 1257},
		{Collation{Info: 0x00D0042A}, 1258},
		{Collation{Info: 0x00D0041E}, 874},
		{cJapanese, 932},
		{Collation{Info: 0x00110411}, 932}, // Japanese_Unicode sort variant
		{Collation{Info: 0x00D00804}, 936},
		{Collation{Info: 0x00D00412}, 949},
		{Collation{Info: 0x00D00404}, 950},
		{cUTF8, CodePageUTF8},
		{Collation{Info: 0x00D00439}, CodePageUTF8}, // Hindi: Unicode-only
		{Collation{Info: 0x0409, SortID: 30}, 437},
		{Collation{Info: 0x0409, SortID: 40}, 850},
		{Collation{Info: 0x0405, SortID: 82}, 1250},
		{Collation{Info: 0x0419, SortID: 106}, 1251},
		{cGreekSQL, 1253},
		{Collation{Info: 0x041F, SortID: 128}, 1254},
		{Collation{Info: 0x040D, SortID: 137}, 1255},
		{Collation{Info: 0x0401, SortID: 145}, 1256},
		{Collation{Info: 0x0425, SortID: 153}, 1257},
		{Collation{Info: 0x041E, SortID: 205}, 874},
		{Collation{Info: 0x0411, SortID: 192}, 932},
		{Collation{Info: 0x0804, SortID: 198}, 936},
		{Collation{Info: 0x0412, SortID: 194}, 949},
		{Collation{Info: 0x0404, SortID: 196}, 950},
	}
	for _, c := range cases {
		if got := c.c.CodePage(); got != c.cp {
			t.Errorf("%#v: code page %d, want %d", c.c, got, c.cp)
		}
		if c.cp != CodePageUTF8 && CodePageEncoding(c.cp) == nil {
			t.Errorf("code page %d has no encoding", c.cp)
		}
	}
}

// Text split into parts at every position decodes as the whole does, for
// every decoder kind, with invalid input too.
func TestTextDecoderSplits(t *testing.T) {
	inputs := []struct {
		c    Collation
		u16  bool
		data []byte
	}{
		{cLatin1, false, []byte("abc\x80\xe9\xff")},
		{cCyrillic, false, ahex("cf f0 e8 e2 e5 f2 98")},
		{cJapanese, false, ahex("93 fa 96 7b b1 32 81 fd 93")},
		{Collation{Info: 0x00D00804}, false, ahex("c4 e3 ba c3 81 30 81 30 ff")},
		{Collation{Info: 0x00D00412}, false, ahex("c7 d1 b1 db 41 c7")},
		{Collation{Info: 0x00D00404}, false, ahex("a4 a4 a4 e5 88 62 a4")},
		{cUTF8, false, []byte("a\u00e9\U0001F600\xf0\x9f\x98b\xc3")},
		{cLatin1, true, ahex("61 00 3d d8 00 de 00 d8 41 00 00 dc e9 00 3d")},
	}
	for _, in := range inputs {
		mk := func() *textDecoder {
			if in.u16 {
				return &textDecoder{kind: textUTF16}
			}
			return newTextDecoder(in.c)
		}
		whole := func(parts ...[]byte) string {
			d := mk()
			var out []byte
			for i, p := range parts {
				dst := make([]byte, d.maxOut(len(p)))
				n := d.decode(dst, p, i == len(parts)-1)
				out = append(out, dst[:n]...)
			}
			return string(out)
		}
		want := whole(in.data)
		if !utf8Valid(want) {
			t.Fatalf("invalid UTF-8 output %q", want)
		}
		for i := 0; i <= len(in.data); i++ {
			for j := i; j <= len(in.data); j++ {
				got := whole(in.data[:i], in.data[i:j], in.data[j:])
				if got != want {
					t.Fatalf("cp %d split %d/%d: %q, want %q", in.c.CodePage(), i, j, got, want)
				}
			}
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\x00") == s }
