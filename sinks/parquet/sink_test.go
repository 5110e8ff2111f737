package parquet

import (
	"encoding/hex"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

func mustDec(t testing.TB, s string, p, sc uint8) decode.Decimal {
	d, err := decode.DecimalFromString(s, p, sc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func dtOf(tm time.Time) decode.DateTime {
	y, m, d := tm.Date()
	days := decode.DateFromCivil(y, int(m), d)
	ticks := int64(tm.Hour()*3600+tm.Minute()*60+tm.Second())*10_000_000 + int64(tm.Nanosecond()/100)
	return decode.DateTime{Days: days, Ticks: ticks}
}

// TestParquetTypesArrow writes every type with edge values and reads the
// file back with apache/arrow-go.
func TestParquetTypesArrow(t *testing.T) {
	g, _ := decode.GUIDFromString("6F9619FF-8B86-D011-B42D-00C04FC964FF")
	ts7 := time.Date(2024, 2, 29, 13, 4, 5, 123456700, time.UTC)
	type tc struct {
		name    string
		ti      decode.TypeInfo
		logical string
		vals    []cell
		want    []string
	}
	cases := []tc{
		{"bit", decode.TypeInfo{Type: decode.TypeBitN, Size: 1}, "BOOLEAN None", []cell{{Kind: 'b', B: true}, {Kind: 'b'}}, []string{"true", "false"}},
		{"tinyint", decode.TypeInfo{Type: decode.TypeIntN, Size: 1}, "INT32 Int(bitWidth=8, isSigned=false)", []cell{{Kind: 'i', I: 255}, {Kind: 'i'}}, []string{"u8:255", "u8:0"}},
		{"smallint", decode.TypeInfo{Type: decode.TypeIntN, Size: 2}, "INT32 Int(bitWidth=16, isSigned=true)", []cell{{Kind: 'i', I: -32768}, {Kind: 'i', I: 32767}}, []string{"i16:-32768", "i16:32767"}},
		{"int", decode.TypeInfo{Type: decode.TypeInt4}, "INT32", []cell{{Kind: 'i', I: math.MinInt32}, {Kind: 'i', I: math.MaxInt32}}, []string{"-2147483648", "2147483647"}},
		{"bigint", decode.TypeInfo{Type: decode.TypeIntN, Size: 8}, "INT64", []cell{{Kind: 'i', I: math.MinInt64}, {Kind: 'i', I: math.MaxInt64}}, []string{"-9223372036854775808", "9223372036854775807"}},
		{"real", decode.TypeInfo{Type: decode.TypeFltN, Size: 4}, "FLOAT None", []cell{{Kind: 'r', F: float64(float32(3.4028235e38))}, {Kind: 'r', F: float64(float32(-1.0 / 3))}}, []string{"f32:3.4028235e+38", "f32:-0.33333334"}},
		{"float", decode.TypeInfo{Type: decode.TypeFltN, Size: 8}, "DOUBLE None", []cell{{Kind: 'f', F: math.MaxFloat64}, {Kind: 'f', F: 5e-324}}, []string{"1.7976931348623157e+308", "5e-324"}},
		{"dec9", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 9, Scale: 2}, "INT32 Decimal(precision=9, scale=2)", []cell{{Kind: 'd', Dec: mustDec(t, "-9999999.99", 9, 2)}, {Kind: 'd', Dec: mustDec(t, "0.01", 9, 2)}}, []string{"dec(9,2):-9999999.99", "dec(9,2):0.01"}},
		{"dec18", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 18, Scale: 0}, "INT64 Decimal(precision=18, scale=0)", []cell{{Kind: 'd', Dec: mustDec(t, "999999999999999999", 18, 0)}, {Kind: 'd', Dec: mustDec(t, "-1", 18, 0)}}, []string{"dec(18,0):999999999999999999", "dec(18,0):-1"}},
		{"dec38_38", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 38}, "FIXED_LEN_BYTE_ARRAY Decimal(precision=38, scale=38)", []cell{{Kind: 'd', Dec: mustDec(t, "-0.99999999999999999999999999999999999999", 38, 38)}, {Kind: 'd', Dec: mustDec(t, "0.12345678901234567890123456789012345678", 38, 38)}}, []string{"dec(38,38):-0.99999999999999999999999999999999999999", "dec(38,38):0.12345678901234567890123456789012345678"}},
		{"dec38_0", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 0}, "FIXED_LEN_BYTE_ARRAY Decimal(precision=38, scale=0)", []cell{{Kind: 'd', Dec: mustDec(t, "99999999999999999999999999999999999999", 38, 0)}, {Kind: 'd', Dec: mustDec(t, "-99999999999999999999999999999999999999", 38, 0)}}, []string{"dec(38,0):99999999999999999999999999999999999999", "dec(38,0):-99999999999999999999999999999999999999"}},
		{"dec20_5", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 20, Scale: 5}, "FIXED_LEN_BYTE_ARRAY Decimal(precision=20, scale=5)", []cell{{Kind: 'd', Dec: mustDec(t, "-0.00001", 20, 5)}, {Kind: 'd', Dec: mustDec(t, "999999999999999.99999", 20, 5)}}, []string{"dec(20,5):-0.00001", "dec(20,5):999999999999999.99999"}},
		{"money", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 8}, "FIXED_LEN_BYTE_ARRAY Decimal(precision=19, scale=4)", []cell{{Kind: 'm', I: math.MinInt64}, {Kind: 'm', I: math.MaxInt64}}, []string{"dec(19,4):-922337203685477.5808", "dec(19,4):922337203685477.5807"}},
		{"smallmoney", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 4}, "INT64 Decimal(precision=10, scale=4)", []cell{{Kind: 'm', I: -2147483648}, {Kind: 'm', I: 2147483647}}, []string{"dec(10,4):-214748.3648", "dec(10,4):214748.3647"}},
		{"date", decode.TypeInfo{Type: decode.TypeDateN}, "INT32 Date", []cell{{Kind: 'D', I: 0}, {Kind: 'D', I: int64(decode.DateFromCivil(9999, 12, 31))}}, []string{"date:0001-01-01", "date:9999-12-31"}},
		{"time7", decode.TypeInfo{Type: decode.TypeTimeN, Scale: 7}, "INT64 Time(isAdjustedToUTC=false, timeUnit=nanoseconds)", []cell{{Kind: 't', I: decode.TicksPerDay - 1}, {Kind: 't', I: 0}}, []string{"time(ns):86399999999900", "time(ns):0"}},
		{"time3", decode.TypeInfo{Type: decode.TypeTimeN, Scale: 3}, "INT64 Time(isAdjustedToUTC=false, timeUnit=microseconds)", []cell{{Kind: 't', I: 123_4560_000}, {Kind: 't', I: 10}}, []string{"time(us):123456000", "time(us):1"}},
		{"datetime2_7", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}, "INT64 Timestamp(isAdjustedToUTC=false, timeUnit=microseconds", []cell{{Kind: 'T', DT: dtOf(ts7)}, {Kind: 'T', DT: dtOf(time.Date(1, 1, 1, 0, 0, 0, 9999900, time.UTC))}},
			[]string{"ts(us,):" + itoa(ts7.UnixMicro()), "ts(us,):" + itoa(time.Date(1, 1, 1, 0, 0, 0, 9999000, time.UTC).UnixMicro())}},
		{"datetime2_3", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 3}, "INT64 Timestamp(isAdjustedToUTC=false, timeUnit=microseconds", []cell{{Kind: 'T', DT: dtOf(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))}, {Kind: 'T', DT: dtOf(time.Date(9999, 12, 31, 23, 59, 59, 999000000, time.UTC))}},
			[]string{"ts(us,):" + itoa(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()*1e6), "ts(us,):" + itoa(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()*1e6+999000)}},
		{"datetime", decode.TypeInfo{Type: decode.TypeDateTimeN, Size: 8}, "INT64 Timestamp(isAdjustedToUTC=false, timeUnit=milliseconds", []cell{{Kind: 'T', DT: decode.DateTime{Days: decode.DateFromCivil(1753, 1, 1), Ticks: 33333}}, {Kind: 'T', DT: decode.DateTime{Days: decode.DateFromCivil(2000, 1, 1), Ticks: 66667}}},
			[]string{"ts(ms,):" + itoa(time.Date(1753, 1, 1, 0, 0, 0, 3e6, time.UTC).UnixMilli()), "ts(ms,):" + itoa(time.Date(2000, 1, 1, 0, 0, 0, 7e6, time.UTC).UnixMilli())}},
		{"dto7", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}, "INT64 Timestamp(isAdjustedToUTC=true, timeUnit=microseconds", []cell{{Kind: 'o', DTO: decode.DateTimeOffset{UTC: dtOf(ts7), OffsetMin: -330}}, {Kind: 'o', DTO: decode.DateTimeOffset{UTC: dtOf(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)), OffsetMin: 840}}},
			[]string{"ts(us,UTC):" + itoa(ts7.UnixMicro()), "ts(us,UTC):" + itoa(time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro())}},
		{"guid", decode.TypeInfo{Type: decode.TypeGUID, Size: 16}, "FIXED_LEN_BYTE_ARRAY UUID", []cell{{Kind: 'g', G: g}, {Kind: 'g'}}, []string{"fixed:6f9619ff8b86d011b42d00c04fc964ff", "fixed:00000000000000000000000000000000"}},
		{"nvarchar", decode.TypeInfo{Type: decode.TypeNVarChar, Size: 100}, "BYTE_ARRAY String", []cell{{Kind: 's', S: "ünï ✓ 𝄞"}, {Kind: 's', S: ""}}, []string{"ünï ✓ 𝄞", ""}},
		{"json", decode.TypeInfo{Type: decode.TypeJSON}, "BYTE_ARRAY JSON", []cell{{Kind: 's', S: `{"a":[1,2]}`}, {Kind: 's', S: "null"}}, []string{"bin:" + hex.EncodeToString([]byte(`{"a":[1,2]}`)), "bin:6e756c6c"}}, // arrow-go reads JSON as binary
		{"xml", decode.TypeInfo{Type: decode.TypeXML}, "BYTE_ARRAY String", []cell{{Kind: 's', S: `<a/>`}, {Kind: 's', S: ""}}, []string{`<a/>`, ""}},
		{"varbinary", decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 8000}, "BYTE_ARRAY None", []cell{{Kind: 'x', X: []byte{0, 1, 0xff}}, {Kind: 'x', X: []byte{}}}, []string{"bin:0001ff", "bin:"}},
		{"binary4", decode.TypeInfo{Type: decode.TypeBigBinary, Size: 4}, "FIXED_LEN_BYTE_ARRAY None", []cell{{Kind: 'x', X: []byte{1, 2, 3, 4}}, {Kind: 'x', X: []byte{9}}}, []string{"fixed:01020304", "fixed:09000000"}},
		{"vector", decode.TypeInfo{Type: decode.TypeVector, Size: 20}, "FLOAT None", []cell{{Kind: 'v', Vec: []float32{1, -2.5, 0.1}}, {Kind: 'v', Vec: []float32{}}}, []string{"[f32:1,f32:-2.5,f32:0.1]", "[]"}},
		{"variant", decode.TypeInfo{Type: decode.TypeVariant}, "BYTE_ARRAY String", []cell{{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 10, Scale: 3}, Inner: &cell{Kind: 'd', Dec: mustDec(t, "-1.500", 10, 3)}}, {Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeBigVarBinary}, Inner: &cell{Kind: 'x', X: []byte{0xde, 0xad}}}}, []string{"-1.500", "dead"}},
	}
	var cols []decode.Column
	rows := make([][]cell, 3)
	for _, c := range cases {
		cols = append(cols, ncol(c.name, c.ti))
		rows[0] = append(rows[0], c.vals[0])
		rows[1] = append(rows[1], c.vals[1])
		rows[2] = append(rows[2], cell{Kind: 'n'})
	}
	// a NOT NULL column
	cols = append(cols, decode.Column{Name: "req", Type: decode.TypeInfo{Type: decode.TypeInt4}})
	for i := range rows {
		rows[i] = append(rows[i], cell{Kind: 'i', I: int64(i)})
	}
	for _, comp := range []string{"zstd", "snappy", "gzip", "none"} {
		t.Run(comp, func(t *testing.T) {
			dir := t.TempDir()
			st := writeTable(t, Config{Path: dir, Compression: comp, RowGroupRows: 2}, cols, rows)
			if len(st.Files) != 1 || st.Files[0] != filepath.Join(dir, "t.parquet") || st.Rows != 3 {
				t.Fatalf("%+v", st)
			}
			res := readBack(t, st.Files[0])
			if res.groups != 2 {
				t.Errorf("%d row groups, want 2", res.groups)
			}
			// names and order as in the source, companion after dto7
			var wantNames []string
			for _, c := range cols {
				wantNames = append(wantNames, c.Name)
				if c.Name == "dto7" {
					wantNames = append(wantNames, "dto7__offset_minutes")
				}
				if c.Name == "variant" {
					wantNames = append(wantNames, "variant__type")
				}
			}
			if strings.Join(res.names, ",") != strings.Join(wantNames, ",") {
				t.Fatalf("names\n%v\nwant\n%v", res.names, wantNames)
			}
			leaf := 0
			for ci, c := range cases {
				if !strings.Contains(res.logical[leaf], c.logical) {
					t.Errorf("%s: logical %q, want %q", c.name, res.logical[leaf], c.logical)
				}
				leaf++
				col := ci
				if ci > 20 { // after dto7 and its companion
					col++
				}
				for r := 0; r < 2; r++ {
					if got := res.rows[r][col]; got != c.want[r] {
						t.Errorf("%s row %d: got %q want %q", c.name, r, got, c.want[r])
					}
				}
				if got := res.rows[2][col]; got != "NULL" {
					t.Errorf("%s NULL row: got %q", c.name, got)
				}
				if c.name == "dto7" {
					if !strings.Contains(res.logical[leaf], "Int(bitWidth=16, isSigned=true)") {
						t.Errorf("offset column logical %q", res.logical[leaf])
					}
					leaf++
					if res.rows[0][col+1] != "i16:-330" || res.rows[1][col+1] != "i16:840" || res.rows[2][col+1] != "NULL" {
						t.Errorf("offsets %q %q %q", res.rows[0][col+1], res.rows[1][col+1], res.rows[2][col+1])
					}
				}
				if c.name == "variant" {
					leaf++
					if res.rows[0][col+1] != "decimal(10,3)" || !strings.HasPrefix(res.rows[1][col+1], "varbinary") || res.rows[2][col+1] != "NULL" {
						t.Errorf("variant types %q %q %q", res.rows[0][col+1], res.rows[1][col+1], res.rows[2][col+1])
					}
				}
			}
			last := len(res.names) - 1
			for r := 0; r < 3; r++ {
				if res.rows[r][last] != itoa(int64(r)) {
					t.Errorf("req row %d: %q", r, res.rows[r][last])
				}
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
