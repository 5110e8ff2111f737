package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// This file formats go-mssqldb's values by the CSV rules documented in
// sinks/csv (doc.go), written here independently of the
// decode.Append*Text functions the sink uses:
//
//	bit               true / false (bool_format 1_0: 1 / 0)
//	integers          decimal
//	real, float       shortest text that parses back to the same float32/float64
//	decimal(p,s)      exact, exactly s fraction digits ("0.50", "-1", "0" for zero)
//	money             exact, exactly 4 fraction digits
//	date              YYYY-MM-DD
//	time(n)           hh:mm:ss + n fraction digits
//	datetime          YYYY-MM-DD hh:mm:ss.fff (as SQL Server shows it: 1/300 s rounded to ms)
//	smalldatetime     YYYY-MM-DD hh:mm:ss
//	datetime2(n)      YYYY-MM-DD hh:mm:ss + n fraction digits
//	datetimeoffset(n) local time + n digits + original offset ±hh:mm
//	uniqueidentifier  canonical lower-case 8-4-4-4-12 (RFC byte order)
//	binary types      lower-case hex; postgres dialect \x + hex; or padded standard base64
//	text types, xml, json, hierarchyid (ToString()): the text
//	geography/geometry STAsBinary() WKB: as binary
//	vector            JSON array [a,b] of shortest float32 texts; postgres {a,b}
//	sql_variant       the text of its base value by the rules above
//
// What go-mssqldb delivers and how it is mapped:
//   - decimal and money arrive as decimal strings: re-written with the
//     column's scale (go-mssqldb's own layout is not the contract).
//   - datetime arrives rounded to the millisecond by go-mssqldb, exactly the
//     3 digits SQL Server shows.
//   - uniqueidentifier arrives as the 16 wire bytes (mixed-endian):
//     reordered to RFC order.
//   - json and vector: go-mssqldb negotiates neither JSONSUPPORT nor
//     VECTORSUPPORT, so the server sends them as SQL Server does to such a
//     client: json as nvarchar(max) text (compared as is) and vector as
//     varchar(max) text "[1.0000000e+000,...]" (parsed as float32 and
//     re-written shortest). The engine negotiates both and gets the native
//     types, so this also checks the two paths agree.
//   - sql_variant: go-mssqldb returns the base value but not the base type,
//     so the base TypeInfo (only the type, never the value) is taken from
//     sampledb's row.

// kind is how a column's text is formed.
type kind int

const (
	kText kind = iota
	kBool
	kInt
	kReal
	kFloat
	kDecimal
	kMoney
	kDate
	kTime
	kDateTime // datetime2(n), datetime (3), smalldatetime (0)
	kDTO
	kGUID
	kBinary
	kVector
	kJSON
	kXML
	kVariant
)

// kindOf classifies a column by its declared (sampledb) type. scale is the
// number of fraction digits (decimal scale, time digits).
func kindOf(ti *decode.TypeInfo) (k kind, scale int) {
	switch dk := ti.Kind(); dk {
	case decode.KindHierarchyID:
		return kText, 0 // ToString()
	case decode.KindReal:
		return kReal, 0
	case decode.KindFloat:
		return kFloat, 0
	case decode.KindJSON:
		return kJSON, 0
	case decode.KindXML:
		return kXML, 0
	default:
		switch dk.Class() {
		case decode.ClassBool:
			return kBool, 0
		case decode.ClassInteger:
			return kInt, 0
		case decode.ClassDecimal:
			return kDecimal, int(ti.Scale)
		case decode.ClassMoney:
			return kMoney, 4
		case decode.ClassDate:
			return kDate, 0
		case decode.ClassTime:
			return kTime, int(ti.Scale)
		case decode.ClassDateTime:
			return kDateTime, int(ti.DateTimeScale())
		case decode.ClassDateTimeOffset:
			return kDTO, int(ti.Scale)
		case decode.ClassGUID:
			return kGUID, 0
		case decode.ClassBinary:
			return kBinary, 0 // spatial types: STAsBinary()
		case decode.ClassVector:
			return kVector, 0
		case decode.ClassVariant:
			return kVariant, 0
		}
	}
	return kText, 0
}

// expectCell formats go-mssqldb's value v of a column of declared type ti
// (for sql_variant: vti is the base type) as the CSV cell should read.
// null reports SQL NULL.
func expectCell(v any, ti, vti *decode.TypeInfo, d dialect) (text string, null bool, err error) {
	if v == nil {
		return "", true, nil
	}
	k, scale := kindOf(ti)
	if k == kVariant {
		if vti == nil {
			return "", false, fmt.Errorf("sql_variant without a base type")
		}
		return expectCell(v, vti, nil, d)
	}
	bad := func() (string, bool, error) {
		return "", false, fmt.Errorf("go-mssqldb returned %T (%v) for a %s column", v, v, kindName[k])
	}
	switch k {
	case kBool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		if d.bool10 {
			return map[bool]string{false: "0", true: "1"}[b], false, nil
		}
		return strconv.FormatBool(b), false, nil
	case kInt:
		i, ok := v.(int64)
		if !ok {
			return bad()
		}
		return strconv.FormatInt(i, 10), false, nil
	case kReal, kFloat:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		if k == kReal {
			return strconv.FormatFloat(float64(float32(f)), 'g', -1, 32), false, nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), false, nil
	case kDecimal, kMoney:
		var s string
		switch x := v.(type) {
		case []byte:
			s = string(x)
		case string:
			s = x
		default:
			return bad()
		}
		t, err := exactDecimal(s, scale)
		return t, false, err
	case kDate, kTime, kDateTime, kDTO:
		tm, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		return formatTime(tm, k, scale), false, nil
	case kGUID:
		b, ok := v.([]byte)
		if !ok || len(b) != 16 {
			return bad()
		}
		r := []byte{b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]}
		h := hex.EncodeToString(r)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], false, nil
	case kBinary:
		b, ok := v.([]byte)
		if !ok {
			return bad()
		}
		switch d.binary {
		case "hex_prefixed":
			return `\x` + hex.EncodeToString(b), false, nil
		case "base64":
			return base64.StdEncoding.EncodeToString(b), false, nil
		}
		return hex.EncodeToString(b), false, nil
	case kVector:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		var parts []json.Number
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&parts); err != nil {
			return "", false, fmt.Errorf("vector text %q: %v", s, err)
		}
		var sb strings.Builder
		sb.WriteByte(map[bool]byte{false: '[', true: '{'}[d.pg])
		for i, p := range parts {
			f, err := strconv.ParseFloat(string(p), 32)
			if err != nil {
				return "", false, fmt.Errorf("vector text %q: %v", s, err)
			}
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatFloat(f, 'g', -1, 32))
		}
		sb.WriteByte(map[bool]byte{false: ']', true: '}'}[d.pg])
		return sb.String(), false, nil
	default: // text, json, xml, hierarchyid
		switch x := v.(type) {
		case string:
			return x, false, nil
		case []byte:
			return string(x), false, nil
		}
		return bad()
	}
}

var kindName = map[kind]string{kText: "text", kBool: "bit", kInt: "integer", kReal: "real", kFloat: "float",
	kDecimal: "decimal", kMoney: "money", kDate: "date", kTime: "time", kDateTime: "datetime", kDTO: "datetimeoffset",
	kGUID: "uniqueidentifier", kBinary: "binary", kVector: "vector", kJSON: "json", kXML: "xml", kVariant: "sql_variant"}

// exactDecimal rewrites a decimal string ("-12.5", ".5", "3") with exactly
// scale fraction digits, a leading 0 before the point and no sign on zero.
func exactDecimal(s string, scale int) (string, error) {
	orig := s
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	ip, fp, _ := strings.Cut(s, ".")
	if strings.Trim(ip+fp, "0123456789") != "" || ip+fp == "" {
		return "", fmt.Errorf("not a decimal: %q", orig)
	}
	if len(fp) > scale {
		if strings.Trim(fp[scale:], "0") != "" {
			return "", fmt.Errorf("decimal %q has more than %d significant fraction digits", orig, scale)
		}
		fp = fp[:scale]
	}
	fp += strings.Repeat("0", scale-len(fp))
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	if strings.Trim(ip+fp, "0") == "" {
		neg = false
	}
	out := ip
	if scale > 0 {
		out += "." + fp
	}
	if neg {
		out = "-" + out
	}
	return out, nil
}

// formatTime writes a date/time value with scale fraction digits.
func formatTime(tm time.Time, k kind, scale int) string {
	clock := func() string {
		s := fmt.Sprintf("%02d:%02d:%02d", tm.Hour(), tm.Minute(), tm.Second())
		if scale > 0 {
			s += "." + fmt.Sprintf("%09d", tm.Nanosecond())[:scale]
		}
		return s
	}
	date := func() string { return fmt.Sprintf("%04d-%02d-%02d", tm.Year(), int(tm.Month()), tm.Day()) }
	switch k {
	case kDate:
		return date()
	case kTime:
		return clock()
	case kDTO:
		_, off := tm.Zone()
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		return date() + " " + clock() + fmt.Sprintf("%s%02d:%02d", sign, off/3600, off%3600/60)
	}
	return date() + " " + clock()
}

// floatBitsHex is the big-endian IEEE bits of a float text as PostgreSQL's
// float4send/float8send write them, in hex.
func floatBitsHex(s string, real bool) (string, error) {
	if real {
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%08x", math.Float32bits(float32(f))), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%016x", math.Float64bits(f)), nil
}
