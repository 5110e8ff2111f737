package decode

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var wireLatin1 = Collation{Info: 0x00D00409, SortID: 0x34}

// wireTypeInfoCases: every type of types.go with its TYPE_INFO bytes
// (MS-TDS 2.2.5.6) as servers send them.
var wireTypeInfoCases = []struct {
	name string
	hex  string
	ti   TypeInfo
}{
	{"null", "1F", TypeInfo{Type: TypeNull}},
	{"tinyint", "30", TypeInfo{Type: TypeInt1}},
	{"bit", "32", TypeInfo{Type: TypeBit}},
	{"smallint", "34", TypeInfo{Type: TypeInt2}},
	{"int", "38", TypeInfo{Type: TypeInt4}},
	{"smalldatetime", "3A", TypeInfo{Type: TypeDateTim4}},
	{"real", "3B", TypeInfo{Type: TypeFlt4}},
	{"money", "3C", TypeInfo{Type: TypeMoney}},
	{"datetime", "3D", TypeInfo{Type: TypeDateTime}},
	{"float", "3E", TypeInfo{Type: TypeFlt8}},
	{"smallmoney", "7A", TypeInfo{Type: TypeMoney4}},
	{"bigint", "7F", TypeInfo{Type: TypeInt8}},
	{"intn 1", "26 01", TypeInfo{Type: TypeIntN, Size: 1}},
	{"intn 2", "26 02", TypeInfo{Type: TypeIntN, Size: 2}},
	{"intn 4", "26 04", TypeInfo{Type: TypeIntN, Size: 4}},
	{"intn 8", "26 08", TypeInfo{Type: TypeIntN, Size: 8}},
	{"bitn", "68 01", TypeInfo{Type: TypeBitN, Size: 1}},
	{"fltn 4", "6D 04", TypeInfo{Type: TypeFltN, Size: 4}},
	{"fltn 8", "6D 08", TypeInfo{Type: TypeFltN, Size: 8}},
	{"moneyn 4", "6E 04", TypeInfo{Type: TypeMoneyN, Size: 4}},
	{"moneyn 8", "6E 08", TypeInfo{Type: TypeMoneyN, Size: 8}},
	{"datetimn 4", "6F 04", TypeInfo{Type: TypeDateTimeN, Size: 4}},
	{"datetimn 8", "6F 08", TypeInfo{Type: TypeDateTimeN, Size: 8}},
	{"guid", "24 10", TypeInfo{Type: TypeGUID, Size: 16}},
	{"decimal(38,0)", "6A 11 26 00", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38}},
	{"decimal(38,38)", "6A 11 26 26", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38, Scale: 38}},
	{"numeric(9,2)", "6C 05 09 02", TypeInfo{Type: TypeNumericN, Size: 5, Precision: 9, Scale: 2}},
	{"numeric(19,4)", "6C 09 13 04", TypeInfo{Type: TypeNumericN, Size: 9, Precision: 19, Scale: 4}},
	{"decimal(28,1)", "6A 0D 1C 01", TypeInfo{Type: TypeDecimalN, Size: 13, Precision: 28, Scale: 1}},
	{"legacy decimal", "37 11 26 05", TypeInfo{Type: TypeDecimalLegacy, Size: 17, Precision: 38, Scale: 5}},
	{"legacy numeric", "3F 05 01 00", TypeInfo{Type: TypeNumericLegacy, Size: 5, Precision: 1}},
	{"date", "28", TypeInfo{Type: TypeDateN}},
	{"time(0)", "29 00", TypeInfo{Type: TypeTimeN}},
	{"time(7)", "29 07", TypeInfo{Type: TypeTimeN, Scale: 7}},
	{"datetime2(3)", "2A 03", TypeInfo{Type: TypeDateTime2N, Scale: 3}},
	{"datetimeoffset(7)", "2B 07", TypeInfo{Type: TypeDateTimeOffset, Scale: 7}},
	{"legacy char", "2F 0A", TypeInfo{Type: TypeChar, Size: 10}},
	{"legacy varchar", "27 FF", TypeInfo{Type: TypeVarChar, Size: 255}},
	{"legacy binary", "2D 01", TypeInfo{Type: TypeBinary, Size: 1}},
	{"legacy varbinary", "25 10", TypeInfo{Type: TypeVarBinary, Size: 16}},
	{"varbinary(8000)", "A5 40 1F", TypeInfo{Type: TypeBigVarBinary, Size: 8000}},
	{"varbinary(max)", "A5 FF FF", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}},
	{"binary(16)", "AD 10 00", TypeInfo{Type: TypeBigBinary, Size: 16}},
	{"varchar(3) 4.7", "A7 03 00 09 04 D0 00 34", TypeInfo{Type: TypeBigVarChar, Size: 3, Collation: wireLatin1}},
	{"varchar(max)", "A7 FF FF 09 04 D0 00 34", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: wireLatin1}},
	{"char(8000)", "AF 40 1F 09 04 D0 00 34", TypeInfo{Type: TypeBigChar, Size: 8000, Collation: wireLatin1}},
	{"nvarchar(4000)", "E7 40 1F 09 04 D0 00 34", TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: wireLatin1}},
	{"nvarchar(max) utf8 collation", "E7 FF FF 09 04 D0 04 00", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen, Collation: Collation{Info: 0x04D00409}}},
	{"nchar(1)", "EF 02 00 09 04 D0 00 34", TypeInfo{Type: TypeNChar, Size: 2, Collation: wireLatin1}},
	{"text", "23 FF FF FF 7F 09 04 D0 00 34", TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: wireLatin1}},
	{"ntext", "63 FE FF FF 7F 09 04 D0 00 34", TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE, Collation: wireLatin1}},
	{"image", "22 FF FF FF 7F", TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}},
	{"sql_variant", "62 49 1F 00 00", TypeInfo{Type: TypeVariant, Size: 8009}},
	{"xml", "F1 00", TypeInfo{Type: TypeXML}},
	{"xml with schema", "F1 01 02 64 00 62 00 03 64 00 62 00 6F 00 01 00 63 00",
		TypeInfo{Type: TypeXML, XMLSchema: true, XMLDatabase: "db", XMLOwningSchema: "dbo", XMLCollection: "c"}},
	{"udt geography", `
		F0 FF FF                          // MAX_BYTE_SIZE 0xFFFF (large UDT)
		06 6D 00 61 00 73 00 74 00 65 00 72 00 // DB_NAME "master"
		03 73 00 79 00 73 00              // SCHEMA_NAME "sys"
		09 67 00 65 00 6F 00 67 00 72 00 61 00 70 00 68 00 79 00 // TYPE_NAME "geography"
		01 00 41 00                       // ASSEMBLY_QUALIFIED_NAME "A"`,
		TypeInfo{Type: TypeUDT, Size: MaxVarLen, UDTDatabase: "master", UDTSchema: "sys", UDTName: "geography", UDTAssembly: "A"}},
	{"udt hierarchyid", "F0 92 03 00 03 73 00 79 00 73 00 0B 68 00 69 00 65 00 72 00 61 00 72 00 63 00 68 00 79 00 69 00 64 00 00 00",
		TypeInfo{Type: TypeUDT, Size: 914, UDTSchema: "sys", UDTName: "hierarchyid"}},
	{"json", "F4", TypeInfo{Type: TypeJSON}},
	{"vector(3) float32", "F5 14 00 00", TypeInfo{Type: TypeVector, Size: 20}},
	{"vector(1998) float32", "F5 40 1F 00", TypeInfo{Type: TypeVector, Size: 8000}},
	{"vector(4) float16", "F5 10 00 01", TypeInfo{Type: TypeVector, Size: 16, Scale: 1}},
}

func TestWireTypeInfo(t *testing.T) {
	seen := map[byte]bool{}
	for _, c := range wireTypeInfoCases {
		b := wireHexBytes(t, c.hex)
		var ti TypeInfo
		n, err := DecodeTypeInfo(append(b, 0xEE), &ti) // a trailing byte must not be consumed
		if err != nil || n != len(b) {
			t.Errorf("%s: n=%d/%d err=%v", c.name, n, len(b), err)
			continue
		}
		if !reflect.DeepEqual(ti, c.ti) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, ti, c.ti)
		}
		if got := AppendTypeInfo(nil, &c.ti); !bytes.Equal(got, b) {
			t.Errorf("%s: AppendTypeInfo = % x, want % x", c.name, got, b)
		}
		for k := 0; k < len(b); k++ {
			if _, err := DecodeTypeInfo(b[:k], &ti); err != ErrNeedMore {
				t.Errorf("%s: truncated to %d: %v", c.name, k, err)
			}
		}
		seen[c.ti.Type] = true
	}
	// Every type id declared in types.go is covered.
	for _, typ := range []byte{TypeNull, TypeInt1, TypeBit, TypeInt2, TypeInt4, TypeDateTim4, TypeFlt4, TypeMoney, TypeDateTime,
		TypeFlt8, TypeMoney4, TypeInt8, TypeDecimalLegacy, TypeNumericLegacy, TypeGUID, TypeIntN, TypeDecimalN, TypeNumericN,
		TypeBitN, TypeFltN, TypeMoneyN, TypeDateTimeN, TypeDateN, TypeTimeN, TypeDateTime2N, TypeDateTimeOffset, TypeChar,
		TypeVarChar, TypeBinary, TypeVarBinary, TypeBigVarBinary, TypeBigVarChar, TypeBigBinary, TypeBigChar, TypeNVarChar,
		TypeNChar, TypeText, TypeImage, TypeNText, TypeVariant, TypeXML, TypeUDT, TypeJSON, TypeVector} {
		if !seen[typ] {
			t.Errorf("type %#x has no TYPE_INFO case", typ)
		}
	}
}

func TestWireParamTypeInfoUDT(t *testing.T) {
	// UDT_INFO_IN_RPC: names only (2.2.5.5.2).
	ti := TypeInfo{Type: TypeUDT, UDTDatabase: "d", UDTSchema: "sys", UDTName: "geometry"}
	b := AppendParamTypeInfo(nil, &ti)
	want := wireHexBytes(t, "F0 01 64 00 03 73 00 79 00 73 00 08 67 00 65 00 6F 00 6D 00 65 00 74 00 72 00 79 00")
	if !bytes.Equal(b, want) {
		t.Fatalf("% x", b)
	}
	var got TypeInfo
	if n, err := DecodeParamTypeInfo(b, &got); err != nil || n != len(b) || !reflect.DeepEqual(got, ti) {
		t.Fatalf("%d %v %+v", n, err, got)
	}
}

func TestWireTypeInfoReject(t *testing.T) {
	cases := []struct{ name, hex, msg string }{
		{"intn 3", "26 03", "impossible length 3"},
		{"intn 0", "26 00", "impossible length 0"},
		{"intn 16", "26 10", "impossible length 16"},
		{"fltn 2", "6D 02", "impossible length"},
		{"moneyn 2", "6E 02", "impossible length"},
		{"datetimn 5", "6F 05", "impossible length"},
		{"bitn 2", "68 02", "impossible length"},
		{"guid 8", "24 08", "impossible length"},
		{"decimal len 6", "6A 06 0A 00", "want 5, 9, 13 or 17"},
		{"decimal precision 0", "6A 05 00 00", "precision 0"},
		{"decimal precision 39", "6A 11 27 00", "precision 39"},
		{"decimal scale > precision", "6A 05 05 06", "scale 6 exceeds precision 5"},
		{"time scale 8", "29 08", "scale 8 exceeds 7"},
		{"datetime2 scale 255", "2A FF", "exceeds 7"},
		{"datetimeoffset scale 9", "2B 09", "exceeds 7"},
		{"varchar 8001", "A7 41 1F 09 04 D0 00 34", "exceeds 8000"},
		{"char max", "AF FF FF 09 04 D0 00 34", "exceeds 8000"},
		{"binary max", "AD FF FF", "exceeds 8000"},
		{"nvarchar odd", "E7 03 00 09 04 D0 00 34", "odd max length"},
		{"text negative", "23 00 00 00 80 09 04 D0 00 34", "negative"},
		{"variant 8010", "62 4A 1F 00 00", "exceeds 8009"},
		{"xml schema present 2", "F1 02", "neither 0 nor 1"},
		{"udt size 0", "F0 00 00 00 00 00 00 00", "MAX_BYTE_SIZE"},
		{"udt size 8001", "F0 41 1F 00 00 00 00 00", "MAX_BYTE_SIZE"},
		{"vector dim type 2", "F5 10 00 02", "dimension type"},
		{"vector length 7", "F5 07 00 00", "not 8 + a multiple"},
		{"vector length 9 float32", "F5 09 00 00", "not 8 + a multiple"},
		{"vector length 8002", "F5 42 1F 00", "not 8 + a multiple"},
		{"vector max", "F5 FF FF 00", "not 8 + a multiple"},
		{"tvp", "F3", "table-valued"},
		{"unknown 0x00", "00", "unknown type"},
		{"unknown 0x99", "99", "unknown type"},
		{"xml schema odd name", "F1 01 01 41", "past"},
	}
	for _, c := range cases {
		var ti TypeInfo
		_, err := DecodeTypeInfo(wireHexBytes(t, c.hex), &ti)
		var pe *ProtocolError
		if c.msg == "past" {
			if err != ErrNeedMore {
				t.Errorf("%s: %v, want ErrNeedMore", c.name, err)
			}
			continue
		}
		if !errors.As(err, &pe) || pe.Where != "TYPE_INFO" || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want TYPE_INFO error with %q", c.name, err, c.msg)
		}
	}
}

func TestWireValueWireLen(t *testing.T) {
	ti := func(hex string) TypeInfo {
		var x TypeInfo
		if _, err := DecodeTypeInfo(wireHexBytes(t, hex), &x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	cases := []struct {
		name string
		ti   TypeInfo
		hex  string
		n    int // -1: protocol error
	}{
		{"int fixed", ti("38"), "2A 00 00 00", 4},
		{"bigint fixed", ti("7F"), "01 02 03 04 05 06 07 08", 8},
		{"null type", ti("1F"), "", 0},
		{"intn null", ti("26 04"), "00", 1},
		{"intn 4", ti("26 04"), "04 01 00 00 00", 5},
		{"intn(8) holding 4", ti("26 08"), "04 01 00 00 00", 5},
		{"intn 3", ti("26 04"), "03 01 00 00", -1},
		{"intn 8 in intn(4)", ti("26 04"), "08 01 00 00 00 00 00 00 00", -1},
		{"bitn", ti("68 01"), "01 01", 2},
		{"bitn 2", ti("68 01"), "02 01 01", -1},
		{"guid", ti("24 10"), "10" + strings.Repeat(" AB", 16), 17},
		{"guid 15", ti("24 10"), "0F" + strings.Repeat(" AB", 15), -1},
		{"decimal 17", ti("6A 11 26 00"), "11 01" + strings.Repeat(" 00", 16), 18},
		{"decimal 9 in 17", ti("6A 11 26 00"), "09 01" + strings.Repeat(" 00", 8), 10},
		{"decimal 6", ti("6A 11 26 00"), "06 01 00 00 00 00 00", -1},
		{"decimal 17 in 5", ti("6A 05 09 00"), "11 01" + strings.Repeat(" 00", 16), -1},
		{"date", ti("28"), "03 01 02 03", 4},
		{"date null", ti("28"), "00", 1},
		{"date 4", ti("28"), "04 01 02 03 04", -1},
		{"time(7)", ti("29 07"), "05 01 02 03 04 05", 6},
		{"time(2) 4", ti("29 02"), "04 01 02 03 04", -1},
		{"datetime2(0)", ti("2A 00"), "06 01 02 03 04 05 06", 7},
		{"datetimeoffset(7)", ti("2B 07"), "0A" + strings.Repeat(" 01", 10), 11},
		{"datetimeoffset(7) 9", ti("2B 07"), "09" + strings.Repeat(" 01", 9), -1},
		{"varchar(3)", ti("A7 03 00 09 04 D0 00 34"), "03 00 66 6F 6F", 5},
		{"varchar null", ti("A7 03 00 09 04 D0 00 34"), "FF FF", 2},
		{"varchar empty", ti("A7 03 00 09 04 D0 00 34"), "00 00", 2},
		{"varchar 4 in 3", ti("A7 03 00 09 04 D0 00 34"), "04 00 66 6F 6F 6F", -1},
		{"varbinary(max) null", ti("A5 FF FF"), "FF FF FF FF FF FF FF FF", 8},
		{"varbinary(max) known", ti("A5 FF FF"), "03 00 00 00 00 00 00 00  02 00 00 00 01 02  01 00 00 00 03  00 00 00 00", 23},
		{"varbinary(max) unknown", ti("A5 FF FF"), "FE FF FF FF FF FF FF FF  01 00 00 00 01  00 00 00 00", 17},
		{"varbinary(max) empty", ti("A5 FF FF"), "00 00 00 00 00 00 00 00  00 00 00 00", 12},
		{"varbinary(max) sum short", ti("A5 FF FF"), "04 00 00 00 00 00 00 00  02 00 00 00 01 02  00 00 00 00", -1},
		{"varbinary(max) sum long", ti("A5 FF FF"), "01 00 00 00 00 00 00 00  02 00 00 00 01 02  00 00 00 00", -1},
		{"xml plp", ti("F1 00"), "FE FF FF FF FF FF FF FF  02 00 00 00 3C 00  00 00 00 00", 18},
		{"json plp", ti("F4"), "02 00 00 00 00 00 00 00  02 00 00 00 7B 7D  00 00 00 00", 18},
		{"udt plp", ti("F0 FF FF 00 00 00 00 00"), "FF FF FF FF FF FF FF FF", 8},
		{"text null", ti("22 FF FF FF 7F"), "00", 1},
		{"text", ti("23 FF FF FF 7F 09 04 D0 00 34"), "10" + strings.Repeat(" 11", 16) + strings.Repeat(" 22", 8) + " 03 00 00 00 61 62 63", 1 + 16 + 8 + 4 + 3},
		{"text negative", ti("23 FF FF FF 7F 09 04 D0 00 34"), "01 11" + strings.Repeat(" 22", 8) + " FF FF FF FF", -1},
		{"variant null", ti("62 49 1F 00 00"), "00 00 00 00", 4},
		{"variant int", ti("62 49 1F 00 00"), "06 00 00 00 38 00 2A 00 00 00", 10},
		{"variant 1 byte", ti("62 49 1F 00 00"), "01 00 00 00 38", -1},
		{"variant too long", ti("62 49 1F 00 00"), "4A 1F 00 00", -1},
		{"vector null", ti("F5 14 00 00"), "FF FF", 2},
		{"vector", ti("F5 0C 00 00"), "0C 00 A9 01 01 00 00 00 00 00 00 00 80 3F", 14},
		{"vector longer than declared", ti("F5 0C 00 00"), "10 00" + strings.Repeat(" 00", 16), -1},
		{"legacy varchar", ti("27 0A"), "03 61 62 63", 4},
		{"legacy varchar over", ti("27 02"), "03 61 62 63", -1},
	}
	for _, c := range cases {
		b := wireHexBytes(t, c.hex)
		n, err := ValueWireLen(append(b, 0xEE, 0xEE), &c.ti)
		if c.n < 0 {
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Where != "value" {
				t.Errorf("%s: %d %v, want a value *ProtocolError", c.name, n, err)
			}
			continue
		}
		if err != nil || n != c.n {
			t.Errorf("%s: %d %v, want %d", c.name, n, err, c.n)
			continue
		}
		for k := 0; k < c.n; k++ {
			if _, err := ValueWireLen(b[:k], &c.ti); err != ErrNeedMore {
				t.Errorf("%s: truncated to %d: %v", c.name, k, err)
			}
		}
	}
}

func FuzzTypeInfo(f *testing.F) {
	for _, c := range wireTypeInfoCases {
		f.Add(wireHexBytes(f, c.hex), false)
	}
	f.Add(wireHexBytes(f, "A5 FF FF 03 00 00 00 00 00 00 00 02 00 00 00 01 02 01 00 00 00 03 00 00 00 00"), false)
	f.Add(wireHexBytes(f, "23 FF FF FF 7F 09 04 D0 00 34 01 11 22 22 22 22 22 22 22 22 01 00 00 00 61"), false)
	f.Add(wireHexBytes(f, "F0 01 64 00 03 73 00 79 00 73 00 01 67 00 FF FF FF FF FF FF FF FF"), true)
	f.Fuzz(func(t *testing.T, data []byte, rpc bool) {
		wireAllocCheck(t, len(data), func() {
			var ti TypeInfo
			n, err := decodeTypeInfo(data, &ti, rpc)
			if err != nil {
				var pe *ProtocolError
				if err != ErrNeedMore && !errors.As(err, &pe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if n < 1 || n > len(data) {
				t.Fatalf("consumed %d of %d", n, len(data))
			}
			re := appendTypeInfo(nil, &ti, rpc)
			var ti2 TypeInfo
			n2, err := decodeTypeInfo(re, &ti2, rpc)
			if err != nil || n2 != len(re) || !reflect.DeepEqual(wireNormTI(ti), wireNormTI(ti2)) {
				t.Fatalf("round trip: %v\n%+v\n%+v", err, ti, ti2)
			}
			// The value walker never panics, never over-reads and is prefix-stable.
			rest := data[n:]
			vn, err := ValueWireLen(rest, &ti)
			if err == nil {
				if vn > len(rest) {
					t.Fatalf("value length %d beyond %d", vn, len(rest))
				}
				if vn2, err2 := ValueWireLen(rest[:vn], &ti); err2 != nil || vn2 != vn {
					t.Fatalf("value not prefix-stable: %d %v", vn2, err2)
				}
			}
		})
	})
}

// wireNormTI drops names the encoder truncates (B_VARCHAR holds 255 code units).
func wireNormTI(ti TypeInfo) TypeInfo {
	for _, s := range []*string{&ti.UDTDatabase, &ti.UDTSchema, &ti.UDTName, &ti.XMLDatabase, &ti.XMLOwningSchema} {
		*s = TruncateUTF16(*s, 255)
	}
	return ti
}

// TestWireValueWireLenParity checks ValueWireLen against the value encoder
// of encode.go (decode-values): every encoded value, NULL included, must
// measure exactly its own length, and every proper prefix must be short.
func TestWireValueWireLenParity(t *testing.T) {
	vs := func(v ...any) []any { return v }
	cases := []struct {
		hex  string
		vals []any
	}{
		{"38", vs(int64(-1), int64(2147483647))},
		{"26 08", vs(nil, int64(-9223372036854775808))},
		{"26 01", vs(nil, int64(255))},
		{"68 01", vs(nil, true)},
		{"6D 08", vs(nil, 1.5)},
		{"6E 08", vs(nil, Money(-922337203685477))},
		{"6A 11 26 26", vs(nil)},
		{"24 10", vs(nil, GUID{1, 2, 3})},
		{"28", vs(nil, Date(0), Date(3652058))},
		{"29 07", vs(nil, Time(863999999999))},
		{"2A 00", vs(nil, DateTime{Days: 3652058, Ticks: 863990000000})},
		{"2B 07", vs(nil, DateTimeOffset{UTC: DateTime{Days: 1}, OffsetMin: -840})},
		{"A7 0A 00 09 04 D0 00 34", vs(nil, "", "abc")},
		{"A7 FF FF 09 04 D0 00 34", vs(nil, "", strings.Repeat("z", 20000))},
		{"E7 40 1F 09 04 D0 00 34", vs(nil, "", "𝄞")},
		{"E7 FF FF 09 04 D0 00 34", vs(nil, strings.Repeat("é", 9000))},
		{"A5 FF FF", vs(nil, []byte{}, make([]byte, 17000))},
		{"AD 10 00", vs(nil, make([]byte, 16))},
		{"23 FF FF FF 7F 09 04 D0 00 34", vs(nil, "text")},
		{"63 FE FF FF 7F 09 04 D0 00 34", vs(nil, "ntext")},
		{"22 FF FF FF 7F", vs(nil, []byte{1, 2})},
		{"F1 00", vs(nil, "<a/>")},
		{"F4", vs(nil, `{"a":1}`)},
		{"F5 14 00 00", vs(nil, []float32{1, 2, 3})},
		{"62 49 1F 00 00", vs(nil, Variant{Type: TypeInfo{Type: TypeInt4}, Value: int64(7)})},
	}
	for _, c := range cases {
		var ti TypeInfo
		if _, err := DecodeTypeInfo(wireHexBytes(t, c.hex), &ti); err != nil {
			t.Fatal(err)
		}
		for _, v := range c.vals {
			b, err := AppendValue(nil, &ti, v)
			if err != nil {
				t.Errorf("type %#x: AppendValue(%T): %v", ti.Type, v, err)
				continue
			}
			n, err := ValueWireLen(append(b, 0xAB), &ti)
			if err != nil || n != len(b) {
				t.Errorf("type %#x value %T: ValueWireLen = %d, %v; encoded %d bytes", ti.Type, v, n, err, len(b))
				continue
			}
			for _, k := range []int{0, 1, len(b) / 2, len(b) - 1} {
				if k >= 0 && k < len(b) {
					if _, err := ValueWireLen(b[:k], &ti); err != ErrNeedMore {
						t.Errorf("type %#x value %T cut at %d: %v", ti.Type, v, k, err)
					}
				}
			}
		}
	}
}
