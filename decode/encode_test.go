package decode

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// hx decodes hex byte strings; spaces separate the annotated fields.
func hx(parts ...string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(strings.Join(parts, ""), " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// Collations used by the tests (MS-TDS 2.2.5.1.2: LCID in bits 0-19,
// flags in 20-27, SortId byte).
var (
	collLatin1   = Collation{Info: 0x00D00409, SortID: 52}                 // SQL_Latin1_General_CP1_CI_AS, cp 1252
	collCyrillic = Collation{Info: 0x00D00419}                             // Cyrillic_General_CI_AS, cp 1251
	collJapanese = Collation{Info: 0x00D00411}                             // Japanese_CI_AS, cp 932
	collUTF8     = Collation{Info: 0x0409 | uint32(CollationUTF8)<<20}     // Latin1_General_100_CI_AS_SC_UTF8
	collGreek    = Collation{Info: 0x00D00408}                             // Greek_CI_AS, cp 1253
	collChinese  = Collation{Info: 0x00D00804}                             // Chinese_PRC_CI_AS, cp 936
	collKorean   = Collation{Info: 0x00D00412}                             // Korean_Wansung_CI_AS, cp 949
	collTaiwan   = Collation{Info: 0x00D00404}                             // Chinese_Taiwan_Stroke_CI_AS, cp 950
	collThai     = Collation{Info: 0x00D0041E}                             // Thai_CI_AS, cp 874
	collCzech    = Collation{Info: 0x00D00405}                             // Czech_CI_AS, cp 1250
	maxDT        = DateTime{Days: MaxDate, Ticks: TicksPerDay - 1}         // 9999-12-31 23:59:59.9999999
	dec38max     = Decimal{Hi: 0x4B3B4CA85A86C47A, Lo: 0x098A223FFFFFFFFF} // 10^38 - 1
)

type encCase struct {
	name string
	ti   TypeInfo
	v    any
	want []byte
}

func encCases() []encCase {
	vc := func(n uint32, c Collation) TypeInfo { return TypeInfo{Type: TypeBigVarChar, Size: n, Collation: c} }
	return []encCase{
		// 2.2.5.5.1.1 integers (fixed-length types: no length byte)
		{"tinyint 0", TypeInfo{Type: TypeInt1}, int64(0), hx("00")},
		{"tinyint 255", TypeInfo{Type: TypeInt1}, int64(255), hx("FF")},
		{"smallint min", TypeInfo{Type: TypeInt2}, int64(math.MinInt16), hx("0080")},
		{"smallint max", TypeInfo{Type: TypeInt2}, int64(math.MaxInt16), hx("FF7F")},
		{"int max (Go int)", TypeInfo{Type: TypeInt4}, math.MaxInt32, hx("FFFFFF7F")},
		{"int min", TypeInfo{Type: TypeInt4}, int64(math.MinInt32), hx("00000080")},
		{"bigint min", TypeInfo{Type: TypeInt8}, int64(math.MinInt64), hx("0000000000000080")},
		{"bigint max", TypeInfo{Type: TypeInt8}, int64(math.MaxInt64), hx("FFFFFFFFFFFFFF7F")},
		// INTN: BYTELEN then the integer; GEN_NULL 0x00
		{"intn(1) 255", TypeInfo{Type: TypeIntN, Size: 1}, int64(255), hx("01 FF")},
		{"intn(2) -2", TypeInfo{Type: TypeIntN, Size: 2}, int64(-2), hx("02 FEFF")},
		{"intn(4) 12345", TypeInfo{Type: TypeIntN, Size: 4}, int64(12345), hx("04 39300000")},
		{"intn(8) min", TypeInfo{Type: TypeIntN, Size: 8}, int64(math.MinInt64), hx("08 0000000000000080")},
		{"intn NULL", TypeInfo{Type: TypeIntN, Size: 8}, nil, hx("00")},
		// bit / BITN
		{"bit true", TypeInfo{Type: TypeBit}, true, hx("01")},
		{"bit false", TypeInfo{Type: TypeBit}, false, hx("00")},
		{"bitn false", TypeInfo{Type: TypeBitN, Size: 1}, false, hx("01 00")},
		{"bitn NULL", TypeInfo{Type: TypeBitN, Size: 1}, nil, hx("00")},
		// 2.2.5.5.1.5 floats: IEEE 754 little-endian
		{"real 1.5", TypeInfo{Type: TypeFlt4}, float32(1.5), hx("0000C03F")},
		{"float -2", TypeInfo{Type: TypeFlt8}, float64(-2), hx("00000000000000C0")},
		{"fltn(4) 1.5 from float64", TypeInfo{Type: TypeFltN, Size: 4}, 1.5, hx("04 0000C03F")},
		{"fltn(8) max", TypeInfo{Type: TypeFltN, Size: 8}, math.MaxFloat64, hx("08 FFFFFFFFFFFFEF7F")},
		{"fltn NULL", TypeInfo{Type: TypeFltN, Size: 8}, nil, hx("00")},
		// 2.2.5.5.1.4 money: high 4 bytes first, then low 4 bytes
		{"money -1.0000", TypeInfo{Type: TypeMoney}, Money(-10000), hx("FFFFFFFF F0D8FFFF")},
		{"money max", TypeInfo{Type: TypeMoney}, Money(math.MaxInt64), hx("FFFFFF7F FFFFFFFF")},
		{"money min", TypeInfo{Type: TypeMoney}, Money(math.MinInt64), hx("00000080 00000000")},
		{"smallmoney min", TypeInfo{Type: TypeMoney4}, Money(math.MinInt32), hx("00000080")},
		{"moneyn(8) -1", TypeInfo{Type: TypeMoneyN, Size: 8}, Money(-10000), hx("08 FFFFFFFF F0D8FFFF")},
		{"moneyn(4) 1", TypeInfo{Type: TypeMoneyN, Size: 4}, Money(10000), hx("04 10270000")},
		{"moneyn NULL", TypeInfo{Type: TypeMoneyN, Size: 8}, nil, hx("00")},
		// 2.2.5.5.1.8 datetime: days since 1900-01-01 (LONG), 1/300 s ticks (ULONG)
		{"datetime 1900-01-01", TypeInfo{Type: TypeDateTime}, DateTime{Days: sqlEpochDays}, hx("00000000 00000000")},
		{"datetime 1753-01-01", TypeInfo{Type: TypeDateTime}, DateTime{Days: DateFromCivil(1753, 1, 1)}, hx("462EFFFF 00000000")},
		{"datetime 9999-12-31 23:59:59.997", TypeInfo{Type: TypeDateTime},
			DateTime{Days: MaxDate, Ticks: TicksPerDay - 30_000}, hx("7F242D00 FF818B01")},
		// .0016667 s is 0.5 tick: rounds half up to tick 1
		{"datetime rounding", TypeInfo{Type: TypeDateTime}, DateTime{Days: sqlEpochDays, Ticks: 16667}, hx("00000000 01000000")},
		// 23:59:59.999 rounds to the next midnight
		{"datetime carry", TypeInfo{Type: TypeDateTimeN, Size: 8}, DateTime{Days: sqlEpochDays, Ticks: TicksPerDay - 10_000},
			hx("08 01000000 00000000")},
		{"datetime from time.Time", TypeInfo{Type: TypeDateTimeN, Size: 8}, time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC),
			hx("08 AC8E0000 2C010000")},
		{"datetimn NULL", TypeInfo{Type: TypeDateTimeN, Size: 8}, nil, hx("00")},
		// smalldatetime: USHORT days since 1900-01-01, USHORT minutes
		{"smalldatetime max", TypeInfo{Type: TypeDateTim4}, DateTime{Days: DateFromCivil(2079, 6, 6), Ticks: 1439 * 600_000_000},
			hx("FFFF 9F05")},
		{"smalldatetime 29.998s down", TypeInfo{Type: TypeDateTimeN, Size: 4}, DateTime{Days: sqlEpochDays, Ticks: 299_980_000},
			hx("04 0000 0000")},
		{"smalldatetime 29.999s up", TypeInfo{Type: TypeDateTimeN, Size: 4}, DateTime{Days: sqlEpochDays, Ticks: 299_990_000},
			hx("04 0000 0100")},
		// 2.2.5.5.1.6 DECIMALN: length, sign (1 = positive), LE magnitude of 4/8/12/16 bytes
		{"decimal(5,2) -0.50", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 2},
			Decimal{Lo: 50, Neg: true, Scale: 2}, hx("05 00 32000000")},
		{"decimal(5,2) from scale 1", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 2},
			Decimal{Lo: 5, Scale: 1}, hx("05 01 32000000")},
		{"numeric(10,0) 1", TypeInfo{Type: TypeNumericN, Size: 9, Precision: 10}, Decimal{Lo: 1}, hx("09 01 0100000000000000")},
		{"decimal(20,0) 2^64", TypeInfo{Type: TypeDecimalN, Size: 13, Precision: 20}, Decimal{Hi: 1},
			hx("0D 01 0000000000000000 01000000")},
		{"decimal(38,0) max", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, dec38max,
			hx("11 01 FFFFFFFF3F228A097AC4865AA84C3B4B")},
		{"decimal(38,0) min", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, Decimal{Hi: dec38max.Hi, Lo: dec38max.Lo, Neg: true},
			hx("11 00 FFFFFFFF3F228A097AC4865AA84C3B4B")},
		{"decimal(38,38)", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38, Scale: 38},
			mustDecimal("0.12345678901234567890123456789012345678", 38, 38), hx("11 01 4EF338DE509049C4133302F0F6B04909")},
		{"decimal legacy 0x37", TypeInfo{Type: TypeDecimalLegacy, Size: 5, Precision: 9}, Decimal{Lo: 7}, hx("05 01 07000000")},
		{"decimal NULL", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, nil, hx("00")},
		// 2.2.5.5.1.7 uniqueidentifier: first three groups little-endian
		{"guid", TypeInfo{Type: TypeGUID, Size: 16}, mustGUID("6f9619ff-8b86-d011-b42d-00c04fc964ff"),
			hx("10 FF19966F 868B 11D0 B42D 00C04FC964FF")},
		{"guid NULL", TypeInfo{Type: TypeGUID, Size: 16}, nil, hx("00")},
		// 2.2.5.5.1.8 date: 3-byte LE days since 0001-01-01
		{"date 0001-01-01", TypeInfo{Type: TypeDateN}, Date(0), hx("03 000000")},
		{"date 9999-12-31", TypeInfo{Type: TypeDateN}, Date(MaxDate), hx("03 DAB937")},
		{"date NULL", TypeInfo{Type: TypeDateN}, nil, hx("00")},
		// 2.2.5.5.1.8 time(n): 3/4/5 bytes of 10^-n s
		{"time(7) max", TypeInfo{Type: TypeTimeN, Scale: 7}, Time(TicksPerDay - 1), hx("05 FFBF692AC9")},
		{"time(0) 23:59:59", TypeInfo{Type: TypeTimeN, Scale: 0}, Time(86399 * 10_000_000), hx("03 7F5101")},
		{"time(3) 23:59:59.999", TypeInfo{Type: TypeTimeN, Scale: 3}, Time(TicksPerDay - 10_000), hx("04 FF5B2605")},
		{"time(1) 0.05s rounds up", TypeInfo{Type: TypeTimeN, Scale: 1}, Time(500_000), hx("03 010000")},
		{"time(0) wraps at 24:00", TypeInfo{Type: TypeTimeN, Scale: 0}, Time(TicksPerDay - 1), hx("03 000000")},
		{"time(5) 0", TypeInfo{Type: TypeTimeN, Scale: 5}, Time(0), hx("05 0000000000")},
		{"time NULL", TypeInfo{Type: TypeTimeN, Scale: 7}, nil, hx("00")},
		// datetime2(n): time then date
		{"datetime2(7) max", TypeInfo{Type: TypeDateTime2N, Scale: 7}, maxDT, hx("08 FFBF692AC9 DAB937")},
		{"datetime2(0) min", TypeInfo{Type: TypeDateTime2N, Scale: 0}, DateTime{}, hx("06 000000 000000")},
		{"datetime2(3) carry", TypeInfo{Type: TypeDateTime2N, Scale: 3}, DateTime{Days: 0, Ticks: TicksPerDay - 1},
			hx("07 00000000 010000")},
		{"datetime2 NULL", TypeInfo{Type: TypeDateTime2N, Scale: 7}, nil, hx("00")},
		// datetimeoffset(n): UTC time, UTC date, offset minutes (SHORT)
		{"datetimeoffset(7) max +14:00", TypeInfo{Type: TypeDateTimeOffset, Scale: 7},
			DateTimeOffset{UTC: DateTime{Days: MaxDate, Ticks: 10*36_000_000_000 - 1}, OffsetMin: 840},
			hx("0A FF0FACD153 DAB937 4803")},
		{"datetimeoffset(0) min -14:00", TypeInfo{Type: TypeDateTimeOffset, Scale: 0},
			DateTimeOffset{UTC: DateTime{Ticks: 14 * 36_000_000_000}, OffsetMin: -840},
			hx("08 E0C400 000000 B8FC")},
		{"datetimeoffset NULL", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, nil, hx("00")},
		// 2.2.5.5.1.3, 2.2.5.4.3 char types: USHORTCHARBINLEN, bytes in the collation's code page
		{"varchar cp1252", vc(20, collLatin1), "café €", hx("0600 636166E92080")},
		{"varchar cp1251", vc(20, collCyrillic), "Привет", hx("0600 CFF0E8E2E5F2")},
		{"varchar cp932", vc(20, collJapanese), "日本ｱ", hx("0500 93FA967BB1")},
		{"varchar cp1253", vc(20, collGreek), "Ωμ", hx("0200 D9EC")},
		{"varchar cp1250", vc(20, collCzech), "ř", hx("0100 F8")},
		{"varchar cp936", vc(20, collChinese), "中", hx("0200 D6D0")},
		{"varchar cp949", vc(20, collKorean), "한", hx("0200 C7D1")},
		{"varchar cp950", vc(20, collTaiwan), "中", hx("0200 A4A4")},
		{"varchar cp874", vc(20, collThai), "ก", hx("0100 A1")},
		{"varchar UTF-8 collation supplementary", vc(20, collUTF8), "😀", hx("0400 F09F9880")},
		{"varchar raw bytes", vc(20, collLatin1), []byte{0x80, 0xE9}, hx("0200 80E9")},
		{"varchar empty", vc(20, collLatin1), "", hx("0000")},
		{"varchar NULL", vc(20, collLatin1), nil, hx("FFFF")},
		{"char(6) padded", TypeInfo{Type: TypeBigChar, Size: 6, Collation: collLatin1}, "café", hx("0600 636166E92020")},
		{"nvarchar supplementary", TypeInfo{Type: TypeNVarChar, Size: 40}, "a😀", hx("0600 6100 3DD800DE")},
		{"nvarchar empty", TypeInfo{Type: TypeNVarChar, Size: 40}, "", hx("0000")},
		{"nvarchar NULL", TypeInfo{Type: TypeNVarChar, Size: 40}, nil, hx("FFFF")},
		{"nchar(4) padded", TypeInfo{Type: TypeNChar, Size: 4}, "a", hx("0400 6100 2000")},
		{"varbinary", TypeInfo{Type: TypeBigVarBinary, Size: 10}, []byte{0, 1, 0xFF}, hx("0300 0001FF")},
		{"binary(4) padded", TypeInfo{Type: TypeBigBinary, Size: 4}, []byte{0xAB}, hx("0400 AB000000")},
		{"rowversion", TypeInfo{Type: TypeBigBinary, Size: 8}, []byte{0, 0, 0, 0, 0, 0, 0x0F, 0xA1}, hx("0800 0000000000000FA1")},
		// legacy BYTELEN char types
		{"legacy varchar", TypeInfo{Type: TypeVarChar, Size: 10, Collation: collLatin1}, "ab", hx("02 6162")},
		{"legacy binary(3)", TypeInfo{Type: TypeBinary, Size: 3}, []byte{1}, hx("03 010000")},
		{"legacy NULL", TypeInfo{Type: TypeVarBinary, Size: 3}, nil, hx("00")},
		// 2.2.5.2.3 PLP: ULONGLONGLEN total, chunks (ULONG + bytes), terminator
		{"varchar(max)", vc(MaxVarLen, collLatin1), "abc", hx("0300000000000000 03000000 616263 00000000")},
		{"varchar(max) empty", vc(MaxVarLen, collLatin1), "", hx("0000000000000000 00000000")},
		{"varchar(max) NULL", vc(MaxVarLen, collLatin1), nil, hx("FFFFFFFFFFFFFFFF")},
		{"nvarchar(max)", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen}, "é", hx("0200000000000000 02000000 E900 00000000")},
		{"varbinary(max)", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, []byte{9}, hx("0100000000000000 01000000 09 00000000")},
		{"xml", TypeInfo{Type: TypeXML}, "<a/>", hx("0800000000000000 08000000 3C0061002F003E00 00000000")},
		{"xml NULL", TypeInfo{Type: TypeXML}, nil, hx("FFFFFFFFFFFFFFFF")},
		{"udt", TypeInfo{Type: TypeUDT, Size: MaxVarLen, UDTName: "hierarchyid"}, []byte{0x58}, hx("0100000000000000 01000000 58 00000000")},
		{"json", TypeInfo{Type: TypeJSON}, `{"a":"é"}`, hx("0A00000000000000 0A000000 7B2261223A22C3A9227D 00000000")},
		{"json NULL", TypeInfo{Type: TypeJSON}, nil, hx("FFFFFFFFFFFFFFFF")},
		// 2.2.7.20 (ROW) text/ntext/image: TextPointer (B_VARBYTE 16), Timestamp (8), LONGLEN data
		{"text cp1252", TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: collLatin1}, "é",
			hx("10", hex.EncodeToString(TextPointer[:]), hex.EncodeToString(TextTimestamp[:]), "01000000 E9")},
		{"ntext", TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE}, "😀",
			hx("10", hex.EncodeToString(TextPointer[:]), hex.EncodeToString(TextTimestamp[:]), "04000000 3DD800DE")},
		{"image empty", TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}, []byte{},
			hx("10", hex.EncodeToString(TextPointer[:]), hex.EncodeToString(TextTimestamp[:]), "00000000")},
		{"text NULL", TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: collLatin1}, nil, hx("00")},
		// 2.2.5.5.7 vector: USHORTLEN, header A9 01 dims type 000000, float32 LE
		{"vector(2)", TypeInfo{Type: TypeVector, Size: 16}, []float32{1, -2}, hx("1000 A9 01 0200 00 000000 0000803F 000000C0")},
		{"vector NULL", TypeInfo{Type: TypeVector, Size: 16}, nil, hx("FFFF")},
		// 2.2.5.5.4 sql_variant: LONGLEN, BaseType, PropBytes, props, data
		{"variant int", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeInt4}, Value: int64(5)},
			hx("06000000 38 00 05000000")},
		{"variant intn(2) as smallint", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeIntN, Size: 2}, Value: int64(-1)},
			hx("04000000 34 00 FFFF")},
		{"variant decimal(5,2)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 2}, Value: Decimal{Lo: 50, Neg: true, Scale: 2}},
			hx("09000000 6A 02 0502 00 32000000")},
		{"variant time(3)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeTimeN, Scale: 3}, Value: Time(TicksPerDay - 10_000)}, hx("07000000 29 01 03 FF5B2605")},
		{"variant guid", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeGUID, Size: 16}, Value: mustGUID("6f9619ff-8b86-d011-b42d-00c04fc964ff")},
			hx("12000000 24 00 FF19966F868B11D0B42D00C04FC964FF")},
		{"variant nvarchar", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeNVarChar, Size: 20, Collation: collLatin1}, Value: "ab"},
			hx("0D000000 E7 07 0904D00034 1400 61006200")},
		{"variant varbinary", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeBigVarBinary, Size: 4}, Value: []byte{7}}, hx("05000000 A5 02 0400 07")},
		{"variant money", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeMoneyN, Size: 8}, Value: Money(-10000)}, hx("0A000000 3C 00 FFFFFFFF F0D8FFFF")},
		{"variant NULL", TypeInfo{Type: TypeVariant, Size: 8009}, nil, hx("00000000")},
	}
}

func mustDecimal(s string, p, sc uint8) Decimal {
	d, err := DecimalFromString(s, p, sc)
	if err != nil {
		panic(err)
	}
	return d
}

func mustGUID(s string) GUID {
	g, err := GUIDFromString(s)
	if err != nil {
		panic(err)
	}
	return g
}

func TestEncodeAnnotated(t *testing.T) {
	for _, c := range encCases() {
		prefix := []byte{0xEE} // AppendValue must append, keeping dst
		got, err := AppendValue(prefix, &c.ti, c.v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got[0] != 0xEE || !bytes.Equal(got[1:], c.want) {
			t.Errorf("%s:\n got % X\nwant % X", c.name, got[1:], c.want)
		}
	}
}

func TestEncodeMaxLength(t *testing.T) {
	// varchar(8000) holds exactly 8000 bytes; 8001 is an error.
	ti := TypeInfo{Type: TypeBigVarChar, Size: 8000, Collation: collLatin1}
	got, err := AppendValue(nil, &ti, strings.Repeat("x", 8000))
	if err != nil || len(got) != 8002 || got[0] != 0x40 || got[1] != 0x1F {
		t.Fatalf("varchar(8000): len %d err %v % X", len(got), err, got[:2])
	}
	if _, err := AppendValue(nil, &ti, strings.Repeat("x", 8001)); err == nil {
		t.Fatal("8001 bytes accepted")
	}
	// nvarchar(4000) is 8000 bytes: 4000 BMP characters, or 2000 supplementary ones.
	nti := TypeInfo{Type: TypeNVarChar, Size: 8000}
	if got, err := AppendValue(nil, &nti, strings.Repeat("😀", 2000)); err != nil || len(got) != 8002 {
		t.Fatalf("nvarchar(4000) of 2000 supplementary characters: %d %v", len(got), err)
	}
	if _, err := AppendValue(nil, &nti, strings.Repeat("é", 4001)); err == nil {
		t.Fatal("nvarchar over 8000 bytes accepted")
	}
	// A 1998-dimension float32 vector is the largest (8 + 1998*4 = 8000).
	vti := TypeInfo{Type: TypeVector, Size: 8000}
	if got, err := AppendValue(nil, &vti, make([]float32, 1998)); err != nil || len(got) != 8002 {
		t.Fatalf("vector(1998): %d %v", len(got), err)
	}
}

func TestEncodePLPChunks(t *testing.T) {
	ti := TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: collLatin1}
	got, err := EncodeOptions{PLPChunk: 2}.AppendValue(nil, &ti, "abc")
	want := hx("0300000000000000", "02000000 6162", "01000000 63", "00000000")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("chunk 2: % X %v", got, err)
	}
	got, _ = EncodeOptions{PLPChunk: 2, UnknownPLPLength: true}.AppendValue(nil, &ti, "abc")
	want = hx("FEFFFFFFFFFFFFFF", "02000000 6162", "01000000 63", "00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("unknown length: % X", got)
	}
	// A supplementary character split between chunks (chunk 3 splits the
	// surrogate pair D83D DE00 inside its second code unit).
	nti := TypeInfo{Type: TypeNVarChar, Size: MaxVarLen}
	got, _ = EncodeOptions{PLPChunk: 3}.AppendValue(nil, &nti, "😀")
	want = hx("0400000000000000", "03000000 3DD800", "01000000 DE", "00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("split surrogate: % X", got)
	}
	// The typed appenders agree with the generic path.
	payload := bytes.Repeat([]byte("0123456789"), 1000)
	for _, chunk := range []int{0, 1, 7, 4096, 9999, 10000, 20000} {
		a := AppendPLP([]byte{1}, payload, chunk)
		b := plpFrame(append([]byte{1}, payload...), 1, chunk, false)
		if !bytes.Equal(a, b) {
			t.Fatalf("chunk %d: AppendPLP and plpFrame differ", chunk)
		}
		// Walk the chunks back.
		var back []byte
		p := 9
		for {
			n := int(uint32(a[p]) | uint32(a[p+1])<<8 | uint32(a[p+2])<<16 | uint32(a[p+3])<<24)
			p += 4
			if n == 0 {
				break
			}
			if chunk > 0 && n > chunk {
				t.Fatalf("chunk of %d > %d", n, chunk)
			}
			back = append(back, a[p:p+n]...)
			p += n
		}
		if p != len(a) || !bytes.Equal(back, payload) {
			t.Fatalf("chunk %d: reassembly differs", chunk)
		}
	}
	u := AppendPLPUnknown(nil, []byte("ab"), 1)
	if !bytes.Equal(u, hx("FEFFFFFFFFFFFFFF 01000000 61 01000000 62 00000000")) {
		t.Fatalf("AppendPLPUnknown: % X", u)
	}
	if got := AppendPLPUTF16(nil, "é", 0); !bytes.Equal(got, hx("0200000000000000 02000000 E900 00000000")) {
		t.Fatalf("AppendPLPUTF16: % X", got)
	}
	if got := AppendPLPString(nil, "", 5); !bytes.Equal(got, hx("0000000000000000 00000000")) {
		t.Fatalf("AppendPLPString empty: % X", got)
	}
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name string
		ti   TypeInfo
		v    any
	}{
		{"tinyint 256", TypeInfo{Type: TypeInt1}, int64(256)},
		{"tinyint -1", TypeInfo{Type: TypeInt1}, -1},
		{"smallint overflow", TypeInfo{Type: TypeIntN, Size: 2}, int64(40000)},
		{"int overflow", TypeInfo{Type: TypeInt4}, int64(math.MaxInt32) + 1},
		{"uint64 overflow", TypeInfo{Type: TypeInt8}, uint64(math.MaxUint64)},
		{"int NULL fixed", TypeInfo{Type: TypeInt4}, nil},
		{"int from string", TypeInfo{Type: TypeInt4}, "1"},
		{"intn bad size", TypeInfo{Type: TypeIntN, Size: 3}, int64(1)},
		{"bit from int", TypeInfo{Type: TypeBit}, int64(1)},
		{"real overflow", TypeInfo{Type: TypeFlt4}, 1e300},
		{"money from int64", TypeInfo{Type: TypeMoney}, int64(1)},
		{"smallmoney overflow", TypeInfo{Type: TypeMoney4}, Money(math.MaxInt32 + 1)},
		{"datetime before 1753", TypeInfo{Type: TypeDateTime}, DateTime{Days: DateFromCivil(1752, 12, 31)}},
		{"datetime rounds past 9999", TypeInfo{Type: TypeDateTime}, DateTime{Days: MaxDate, Ticks: TicksPerDay - 1}},
		{"datetime ticks out of day", TypeInfo{Type: TypeDateTime}, DateTime{Days: sqlEpochDays, Ticks: TicksPerDay}},
		{"smalldatetime before 1900", TypeInfo{Type: TypeDateTim4}, DateTime{Days: sqlEpochDays - 1}},
		{"smalldatetime rounds past 2079-06-06", TypeInfo{Type: TypeDateTim4}, DateTime{Days: DateFromCivil(2079, 6, 6), Ticks: TicksPerDay - 1}},
		{"decimal too many digits", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 2}, Decimal{Lo: 100000, Scale: 2}},
		{"decimal scale loss", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 1}, Decimal{Lo: 125, Scale: 2}},
		{"decimal 39 digits", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}, Decimal{Hi: math.MaxUint64}},
		{"decimal bad precision", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 39}, Decimal{}},
		{"decimal scale > precision", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5, Scale: 6}, Decimal{}},
		{"decimal from float", TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 5}, 1.5},
		{"guid from string", TypeInfo{Type: TypeGUID, Size: 16}, "6f9619ff-8b86-d011-b42d-00c04fc964ff"},
		{"date past 9999", TypeInfo{Type: TypeDateN}, Date(MaxDate + 1)},
		{"date negative", TypeInfo{Type: TypeDateN}, Date(-1)},
		{"time a day", TypeInfo{Type: TypeTimeN, Scale: 7}, Time(TicksPerDay)},
		{"time negative", TypeInfo{Type: TypeTimeN, Scale: 7}, Time(-1)},
		{"time scale 8", TypeInfo{Type: TypeTimeN, Scale: 8}, Time(0)},
		{"datetime2 rounds past 9999", TypeInfo{Type: TypeDateTime2N, Scale: 6}, maxDT},
		{"dto offset -841", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, DateTimeOffset{UTC: DateTime{Days: 10}, OffsetMin: -841}},
		{"dto offset 841", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, DateTimeOffset{UTC: DateTime{Days: 10}, OffsetMin: 841}},
		{"dto local before 0001", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, DateTimeOffset{OffsetMin: -60}},
		{"varchar unrepresentable 1252", TypeInfo{Type: TypeBigVarChar, Size: 10, Collation: collLatin1}, "日"},
		{"varchar unrepresentable 1251", TypeInfo{Type: TypeBigVarChar, Size: 10, Collation: collCyrillic}, "é"},
		{"varchar unrepresentable 932", TypeInfo{Type: TypeBigVarChar, Size: 10, Collation: collJapanese}, "😀"},
		{"varchar invalid UTF-8", TypeInfo{Type: TypeBigVarChar, Size: 10, Collation: collUTF8}, "\xff"},
		{"nvarchar invalid UTF-8", TypeInfo{Type: TypeNVarChar, Size: 10}, "a\xc3"},
		{"varchar too long", TypeInfo{Type: TypeBigVarChar, Size: 2, Collation: collLatin1}, "abc"},
		{"char(2) too long", TypeInfo{Type: TypeBigChar, Size: 2, Collation: collLatin1}, "abc"},
		{"varbinary too long", TypeInfo{Type: TypeBigVarBinary, Size: 1}, []byte{1, 2}},
		{"varbinary from string", TypeInfo{Type: TypeBigVarBinary, Size: 10}, "ab"},
		{"nchar max", TypeInfo{Type: TypeNChar, Size: MaxVarLen}, "a"},
		{"legacy varchar 256", TypeInfo{Type: TypeVarChar, Collation: collLatin1}, strings.Repeat("a", 256)},
		{"text too long", TypeInfo{Type: TypeText, Size: 1, Collation: collLatin1}, "ab"},
		{"xml from bytes", TypeInfo{Type: TypeXML}, []byte("<a/>")},
		{"udt too long", TypeInfo{Type: TypeUDT, Size: 1}, []byte{1, 2}},
		{"vector wrong dims", TypeInfo{Type: TypeVector, Size: 16}, []float32{1}},
		{"vector empty", TypeInfo{Type: TypeVector}, []float32{}},
		{"vector float16", TypeInfo{Type: TypeVector, Size: 12, Scale: 1}, []float32{1, 2}},
		{"vector too big", TypeInfo{Type: TypeVector}, make([]float32, 1999)},
		{"variant NULL base", TypeInfo{Type: TypeVariant}, Variant{Type: TypeInfo{Type: TypeInt4}}},
		{"variant of xml", TypeInfo{Type: TypeVariant}, Variant{Type: TypeInfo{Type: TypeXML}, Value: "<a/>"}},
		{"variant of max", TypeInfo{Type: TypeVariant}, Variant{Type: TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, Value: []byte{1}}},
		{"variant too long", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeBigVarBinary, Size: 8000}, Value: make([]byte, 8001)}},
		{"variant bad inner", TypeInfo{Type: TypeVariant}, Variant{Type: TypeInfo{Type: TypeInt1}, Value: int64(300)}},
		{"variant from int", TypeInfo{Type: TypeVariant}, int64(1)},
		{"NULLTYPE value", TypeInfo{Type: TypeNull}, int64(1)},
		{"unknown type", TypeInfo{Type: 0x01}, int64(1)},
	}
	for _, c := range cases {
		dst := []byte{0xEE}
		got, err := AppendValue(dst, &c.ti, c.v)
		if err == nil {
			t.Errorf("%s: accepted, encoded % X", c.name, got)
			continue
		}
		if !bytes.Equal(got, dst) {
			t.Errorf("%s: dst changed on error: % X", c.name, got)
		}
		if !strings.HasPrefix(err.Error(), "decode: ") {
			t.Errorf("%s: error %q lacks the package prefix", c.name, err)
		}
	}
	var ue *UnrepresentableError
	_, err := AppendValue(nil, &TypeInfo{Type: TypeBigVarChar, Size: 10, Collation: collJapanese}, "ab😀")
	if !errors.As(err, &ue) || ue.Rune != '😀' || ue.Offset != 2 || ue.CodePage != 932 {
		t.Fatalf("want UnrepresentableError for U+1F600 at 2 in 932, got %v", err)
	}
	_, err = EncodeText(nil, collCyrillic, "xyzé")
	if !errors.As(err, &ue) || ue.Rune != 'é' || ue.Offset != 3 || ue.CodePage != 1251 {
		t.Fatalf("want UnrepresentableError for é at 3 in 1251, got %v", err)
	}
	var ee *EncodeError
	if _, err := AppendValue(nil, &TypeInfo{Type: TypeInt1}, 300); !errors.As(err, &ee) || ee.Type != TypeInt1 {
		t.Fatalf("want *EncodeError, got %v", err)
	}
}

func TestEncodeRows(t *testing.T) {
	cols := make([]Column, 10)
	vals := make([]any, 10)
	for i := range cols {
		cols[i] = Column{Name: "c", Flags: ColFlagNullable, Type: TypeInfo{Type: TypeIntN, Size: 4}}
		vals[i] = int64(i)
	}
	vals[1], vals[8] = nil, nil
	// ROW 0xD1 (2.2.7.20): every value, NULL as GEN_NULL.
	row, err := AppendRow([]byte{0xEE}, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := hx("EE D1", "04 00000000", "00", "04 02000000", "04 03000000", "04 04000000", "04 05000000",
		"04 06000000", "04 07000000", "00", "04 09000000")
	if !bytes.Equal(row, want) {
		t.Fatalf("ROW:\n got % X\nwant % X", row, want)
	}
	// NBCROW 0xD2 (2.2.7.15): bitmap of 2 bytes, bit 1 of byte 0 and bit 0
	// of byte 1 set; NULL values omitted.
	nbc, err := AppendNBCRow([]byte{0xEE}, cols, vals)
	if err != nil {
		t.Fatal(err)
	}
	want = hx("EE D2", "02 01", "04 00000000", "04 02000000", "04 03000000", "04 04000000", "04 05000000",
		"04 06000000", "04 07000000", "04 09000000")
	if !bytes.Equal(nbc, want) {
		t.Fatalf("NBCROW:\n got % X\nwant % X", nbc, want)
	}
	// Errors leave dst as it was and name the column.
	vals[3] = "x"
	if got, err := AppendRow([]byte{0xEE}, cols, vals); err == nil || len(got) != 1 || !strings.Contains(err.Error(), "column 3") {
		t.Fatalf("bad ROW: %v % X", err, got)
	}
	if got, err := AppendNBCRow([]byte{0xEE}, cols, vals); err == nil || len(got) != 1 {
		t.Fatalf("bad NBCROW: %v % X", err, got)
	}
	if _, err := AppendRow(nil, cols, vals[:9]); err == nil {
		t.Fatal("short row accepted")
	}
	if _, err := AppendNBCRow(nil, cols, vals[:9]); err == nil {
		t.Fatal("short NBCROW accepted")
	}
	// A fixed-length type can be NULL in an NBCROW (the bitmap says so) but
	// not in a ROW.
	fcols := []Column{{Type: TypeInfo{Type: TypeInt4}}}
	if got, err := AppendNBCRow(nil, fcols, []any{nil}); err != nil || !bytes.Equal(got, hx("D2 01")) {
		t.Fatalf("NBCROW fixed NULL: % X %v", got, err)
	}
	if _, err := AppendRow(nil, fcols, []any{nil}); err == nil {
		t.Fatal("ROW with NULL int accepted")
	}
}

func TestEncodeTextCodePages(t *testing.T) {
	// Round trip through the decoders' code page tables (collation.go).
	cases := []struct {
		c Collation
		s string
	}{
		{collLatin1, "Grüße, ½ € œ"},
		{collCyrillic, "Съешь же ещё этих мягких французских булок"},
		{collJapanese, "いろはにほへと ｲﾛﾊ 漢字"},
		{collGreek, "Ξεσκεπάζω"},
		{collCzech, "Příliš žluťoučký kůň"},
		{collChinese, "中文简体"},
		{collKorean, "한국어"},
		{collTaiwan, "中文繁體"},
		{collThai, "ภาษาไทย"},
		{Collation{Info: 0x00D0042A}, "Đơư Ă ₫"},    // 1258
		{Collation{Info: 0x00D0040D}, "עברית"},      // 1255
		{Collation{Info: 0x00D00401}, "عربي"},       // 1256
		{Collation{Info: 0x00D00425}, "Eesti ÕÄÖÜ"}, // 1257
		{Collation{Info: 0x00D0041F}, "Türkçe ğış"}, // 1254
		{collUTF8, "any 😀 text"},
	}
	for _, c := range cases {
		enc, err := EncodeText([]byte{0xEE}, c.c, c.s)
		if err != nil {
			t.Errorf("%d: EncodeText(%q): %v", c.c.CodePage(), c.s, err)
			continue
		}
		if enc[0] != 0xEE {
			t.Fatal("EncodeText must append")
		}
		if c.c.CodePage() == CodePageUTF8 {
			if string(enc[1:]) != c.s {
				t.Errorf("UTF-8 pass-through changed the text")
			}
			continue
		}
		dec, err := CodePageEncoding(c.c.CodePage()).NewDecoder().Bytes(enc[1:])
		if err != nil || string(dec) != c.s {
			t.Errorf("%d: %q -> % X -> %q (%v)", c.c.CodePage(), c.s, enc[1:], dec, err)
		}
	}
	if _, err := EncodeTextCodePage(nil, 12345, "é"); !errors.Is(err, ErrUnknownCodePage) {
		t.Fatalf("unknown code page: %v", err)
	}
	if got, err := EncodeTextCodePage(nil, 1252, "plain"); err != nil || string(got) != "plain" {
		t.Fatalf("ASCII fast path: %q %v", got, err)
	}
	if got, err := AppendUShortText([]byte{0xEE}, collJapanese, "日本"); err != nil || !bytes.Equal(got, hx("EE 0400 93FA967B")) {
		t.Fatalf("AppendUShortText: % X %v", got, err)
	}
	if got, err := AppendUShortText([]byte{0xEE}, collLatin1, "日本"); err == nil || !bytes.Equal(got, hx("EE")) {
		t.Fatalf("AppendUShortText unrepresentable: % X %v", got, err)
	}
	// A long Shift-JIS text crosses the encoder's buffer growth.
	long := strings.Repeat("日本語のテキスト", 2000)
	enc, err := EncodeText(nil, collJapanese, long)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := CodePageEncoding(932).NewDecoder().Bytes(enc)
	if string(dec) != long {
		t.Fatal("long Shift-JIS text does not round-trip")
	}
}

func TestEncodeTypedAppendersNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 1<<16)
	d := Decimal{Hi: 1, Lo: 2, Scale: 4, Precision: 38}
	dt := DateTime{Days: 738000, Ticks: 123456789}
	dto := DateTimeOffset{UTC: dt, OffsetMin: 60}
	g := GUID{1, 2, 3}
	payload := make([]byte, 10000)
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendIntN(buf[:0], 4, 5)
		b = AppendFixedInt(b, 8, -1)
		b = AppendNullN(b)
		b = AppendBitN(b, true)
		b = AppendFixedBit(b, false)
		b = AppendFltN(b, 8, 1.5)
		b = AppendFixedFloat(b, 4, 1.5)
		b = AppendMoneyN(b, 8, -10000)
		b = AppendFixedMoney(b, 4, 10000)
		b = AppendDecimalN(b, d)
		b = AppendDateN(b, 738000)
		b = AppendTimeN(b, 7, 123)
		b = AppendDateTime2N(b, 3, dt)
		b = AppendDateTimeOffsetN(b, 7, dto)
		b = AppendDateTimeN(b, 8, dt)
		b = AppendFixedDateTime(b, 4, dt)
		b = AppendGUIDN(b, g)
		b = AppendUShortBytes(b, payload[:100])
		b = AppendUShortString(b, "hello")
		b = AppendUShortNull(b)
		b, _ = AppendUShortText(b, collLatin1, "café €")
		b, _ = AppendUShortText(b, collJapanese, "日本語ｱ")
		b, _ = AppendUShortText(b, collKorean, "한국어")
		b = AppendUShortUTF16(b, "héllo 😀")
		b = AppendPLP(b, payload, 4096)
		b = AppendPLPUnknown(b, payload[:10], 3)
		b = AppendPLPNull(b)
		b = AppendPLPUTF16(b, "héllo 😀", 3)
		b = AppendPLPString(b, "json", 2)
		b = AppendVector(b, []float32{1, 2, 3})
		_ = b
	})
	if allocs != 0 {
		t.Fatalf("typed appenders allocated %v times per run", allocs)
	}
}

func TestEncodeRowNoAllocs(t *testing.T) {
	// AppendRow over pre-boxed values allocates nothing, for every type and
	// code page (the double-byte encoders come from pools; AllocsPerRun's
	// warm-up run fills them).
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: the double-byte encoders are then allocated again")
	}
	var cols []Column
	var vals []any
	for _, c := range encCases() {
		if c.v == nil {
			continue
		}
		if c.ti.Type == TypeDateTimeN || c.ti.Type == TypeDateTime {
			if _, ok := c.v.(time.Time); ok {
				continue
			}
		}
		cols = append(cols, Column{Name: c.name, Type: c.ti})
		vals = append(vals, c.v)
	}
	buf := make([]byte, 0, 1<<16)
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		_, err = AppendRow(buf[:0], cols, vals)
		_, err = AppendNBCRow(buf[:0], cols, vals)
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("AppendRow allocated %v times per run over %d columns", allocs, len(cols))
	}
}

func BenchmarkEncodeTypedRow(b *testing.B) {
	// A poc48-like row of typed appenders: 8 ints, 8 decimals, 8 datetime2,
	// 8 nvarchar, 8 varchar, 8 floats.
	buf := make([]byte, 0, 1<<20)
	d := Decimal{Lo: 123456789, Scale: 2, Precision: 18}
	dt := DateTime{Days: 738000, Ticks: 123456789}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		buf = buf[:0]
		for r := 0; r < 100; r++ {
			buf = append(buf, 0xD1)
			for i := 0; i < 8; i++ {
				buf = AppendIntN(buf, 8, int64(r*i))
				buf = AppendDecimalN(buf, d)
				buf = AppendDateTime2N(buf, 7, dt)
				buf = AppendUShortUTF16(buf, "some text value")
				buf = AppendUShortString(buf, "some text value")
				buf = AppendFltN(buf, 8, 1.25)
			}
		}
		n = len(buf)
	}
	b.SetBytes(int64(n))
}

func BenchmarkEncodeAppendRow(b *testing.B) {
	cols := []Column{
		{Type: TypeInfo{Type: TypeIntN, Size: 8}},
		{Type: TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 18, Scale: 2}},
		{Type: TypeInfo{Type: TypeDateTime2N, Scale: 7}},
		{Type: TypeInfo{Type: TypeNVarChar, Size: 100}},
		{Type: TypeInfo{Type: TypeBigVarChar, Size: 100, Collation: collLatin1}},
		{Type: TypeInfo{Type: TypeFltN, Size: 8}},
	}
	vals := []any{int64(42), Decimal{Lo: 12345, Scale: 2}, DateTime{Days: 738000, Ticks: 5}, "some text", "more text", 1.5}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendRow(buf[:0], cols, vals)
	}
	b.SetBytes(int64(len(buf)))
}

// FuzzEncodeText: no panic for any text and code page; output of a
// successful encoding decodes back to the input.
func FuzzEncodeText(f *testing.F) {
	for _, s := range []string{"", "abc", "café €", "Привет", "日本ｱ", "😀", "\xff"} {
		for _, cp := range []int{1252, 1251, 932, 936, 949, 950, 874, CodePageUTF8} {
			f.Add(s, cp)
		}
	}
	f.Fuzz(func(t *testing.T, s string, cp int) {
		enc, err := EncodeTextCodePage(nil, cp, s)
		if err != nil {
			return
		}
		if cp == CodePageUTF8 {
			if string(enc) != s {
				t.Fatal("UTF-8 pass-through changed the text")
			}
			return
		}
		dec, err := CodePageEncoding(cp).NewDecoder().Bytes(enc)
		if err != nil || string(dec) != s {
			t.Fatalf("cp %d: %q -> % X -> %q (%v)", cp, s, enc, dec, err)
		}
	})
}

func BenchmarkEncodeText(b *testing.B) {
	for _, c := range []struct {
		name string
		c    Collation
		s    string
	}{
		{"ascii-1252", collLatin1, "plain ascii text of some length"},
		{"latin-1252", collLatin1, "Grüße aus Köln, ½ € œ ça va"},
		{"cyrillic-1251", collCyrillic, "Съешь же ещё этих мягких булок"},
		{"japanese-932", collJapanese, "いろはにほへと ｲﾛﾊ 漢字テキスト"},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf, _ = EncodeText(buf[:0], c.c, c.s)
			}
		})
	}
}
