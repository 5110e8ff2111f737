package sampledb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// Collations used by the sample database (5-byte TDS form, MS-TDS 2.2.5.1.2).
var (
	// CollSQLLatin1 is SQL_Latin1_General_CP1_CI_AS (code page 1252, sort id 52),
	// the default collation of the sample database.
	CollSQLLatin1 = decode.Collation{Info: 0x00D00409, SortID: 52}
	// CollLatin1 is Latin1_General_CI_AS (Windows collation, code page 1252).
	CollLatin1 = decode.Collation{Info: 0x00D00409}
	// CollCyrillic is Cyrillic_General_CI_AS (code page 1251).
	CollCyrillic = decode.Collation{Info: 0x00D00419}
	// CollJapanese is Japanese_CI_AS (code page 932).
	CollJapanese = decode.Collation{Info: 0x00D00411}
	// CollUTF8 is Latin1_General_100_CI_AS_SC_UTF8 (version 1, UTF-8 flag).
	CollUTF8 = decode.Collation{Info: 0x14D00409}
)

// CollationName returns the SQL Server name of one of the collations above
// (as INFORMATION_SCHEMA.COLUMNS.COLLATION_NAME shows it) and its
// CHARACTER_SET_NAME.
func CollationName(c decode.Collation) (name, charset string) {
	switch c {
	case CollSQLLatin1:
		return "SQL_Latin1_General_CP1_CI_AS", "iso_1"
	case CollLatin1:
		return "Latin1_General_CI_AS", "iso_1"
	case CollCyrillic:
		return "Cyrillic_General_CI_AS", "cp1251"
	case CollJapanese:
		return "Japanese_CI_AS", "cp932"
	case CollUTF8:
		return "Latin1_General_100_CI_AS_SC_UTF8", "UTF8"
	}
	return "", ""
}

// Assembly-qualified names of the system CLR types, as SQL Server sends them
// in the UDT TYPE_INFO.
const (
	asmGeography   = "Microsoft.SqlServer.Types.SqlGeography, Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91"
	asmGeometry    = "Microsoft.SqlServer.Types.SqlGeometry, Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91"
	asmHierarchyID = "Microsoft.SqlServer.Types.SqlHierarchyId, Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91"
)

// colMeta is what the catalog views need to know about a column beyond its
// TYPE_INFO.
type colMeta struct {
	sqlType  string // full declared type, e.g. "decimal(38,10)", "nvarchar(max)"
	baseType string // type name without arguments, e.g. "decimal"
	maxLen   int    // character length (-1 for max), 0 when not a character/binary type
	octets   int    // byte length (-1 for max)
	prec     int    // numeric precision (0 when none)
	scale    int    // numeric scale, or fractional-second precision
	hasScale bool
	dtPrec   int // DATETIME_PRECISION (-1 when none)
	nullable bool
	sysMax   int // sys.columns.max_length
	sysPrec  int // sys.columns.precision
	sysScale int // sys.columns.scale
}

// parseSQLType builds the TYPE_INFO a SQL Server 2022/2025 server sends for a
// table column of the given declared type, and the catalog facts. coll is
// used by character types; nullable selects the nullable (xxxN) wire types
// for the fixed-length ones, as SQL Server does.
func parseSQLType(decl string, coll decode.Collation, nullable bool) (decode.TypeInfo, colMeta, error) {
	s := strings.ToLower(strings.TrimSpace(decl))
	base, args := s, ""
	if p := strings.IndexByte(s, '('); p >= 0 && strings.HasSuffix(s, ")") {
		base, args = strings.TrimSpace(s[:p]), s[p+1:len(s)-1]
	}
	var a []int
	isMax := false
	if args != "" {
		for _, f := range strings.Split(args, ",") {
			f = strings.TrimSpace(f)
			if f == "max" {
				isMax = true
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil {
				return decode.TypeInfo{}, colMeta{}, fmt.Errorf("sampledb: bad type %q", decl)
			}
			a = append(a, n)
		}
	}
	arg := func(i, def int) int {
		if i < len(a) {
			return a[i]
		}
		return def
	}
	m := colMeta{sqlType: s, baseType: base, dtPrec: -1, nullable: nullable}
	var ti decode.TypeInfo
	fixed := func(nullType, notNullType byte, size int) {
		if nullable {
			ti = decode.TypeInfo{Type: nullType, Size: uint32(size)}
		} else {
			ti = decode.TypeInfo{Type: notNullType}
		}
		m.sysMax = size
	}
	switch base {
	case "tinyint":
		fixed(decode.TypeIntN, decode.TypeInt1, 1)
		m.prec, m.hasScale, m.sysPrec = 3, true, 3
	case "smallint":
		fixed(decode.TypeIntN, decode.TypeInt2, 2)
		m.prec, m.hasScale, m.sysPrec = 5, true, 5
	case "int":
		fixed(decode.TypeIntN, decode.TypeInt4, 4)
		m.prec, m.hasScale, m.sysPrec = 10, true, 10
	case "bigint":
		fixed(decode.TypeIntN, decode.TypeInt8, 8)
		m.prec, m.hasScale, m.sysPrec = 19, true, 19
	case "bit":
		fixed(decode.TypeBitN, decode.TypeBit, 1)
		m.sysPrec = 1
	case "real":
		fixed(decode.TypeFltN, decode.TypeFlt4, 4)
		m.prec, m.sysPrec = 24, 24
	case "float":
		fixed(decode.TypeFltN, decode.TypeFlt8, 8)
		m.prec, m.sysPrec = 53, 53
	case "money":
		fixed(decode.TypeMoneyN, decode.TypeMoney, 8)
		m.prec, m.scale, m.hasScale, m.sysPrec, m.sysScale = 19, 4, true, 19, 4
	case "smallmoney":
		fixed(decode.TypeMoneyN, decode.TypeMoney4, 4)
		m.prec, m.scale, m.hasScale, m.sysPrec, m.sysScale = 10, 4, true, 10, 4
	case "datetime":
		fixed(decode.TypeDateTimeN, decode.TypeDateTime, 8)
		m.dtPrec, m.sysPrec, m.sysScale = 3, 23, 3
	case "smalldatetime":
		fixed(decode.TypeDateTimeN, decode.TypeDateTim4, 4)
		m.dtPrec, m.sysPrec = 0, 16
	case "decimal", "numeric":
		p, sc := arg(0, 18), arg(1, 0)
		if p < 1 || p > 38 || sc < 0 || sc > p {
			return ti, m, fmt.Errorf("sampledb: bad type %q", decl)
		}
		t := decode.TypeDecimalN
		if base == "numeric" {
			t = decode.TypeNumericN
		}
		size := decimalLen(p)
		ti = decode.TypeInfo{Type: t, Size: uint32(size), Precision: uint8(p), Scale: uint8(sc)}
		m.prec, m.scale, m.hasScale = p, sc, true
		m.sqlType = fmt.Sprintf("%s(%d,%d)", base, p, sc)
		m.sysMax, m.sysPrec, m.sysScale = size, p, sc
	case "uniqueidentifier":
		ti = decode.TypeInfo{Type: decode.TypeGUID, Size: 16}
		m.sysMax = 16
	case "date":
		ti = decode.TypeInfo{Type: decode.TypeDateN}
		m.dtPrec, m.sysMax, m.sysPrec = 0, 3, 10
	case "time", "datetime2", "datetimeoffset":
		sc := arg(0, 7)
		if sc < 0 || sc > 7 {
			return ti, m, fmt.Errorf("sampledb: bad type %q", decl)
		}
		t := map[string]byte{"time": decode.TypeTimeN, "datetime2": decode.TypeDateTime2N, "datetimeoffset": decode.TypeDateTimeOffset}[base]
		ti = decode.TypeInfo{Type: t, Scale: uint8(sc)}
		m.dtPrec, m.scale = sc, sc
		m.sqlType = fmt.Sprintf("%s(%d)", base, sc)
		tl := decode.TimeLen(uint8(sc))
		switch base {
		case "time":
			m.sysMax, m.sysPrec = tl, 8+sc
		case "datetime2":
			m.sysMax, m.sysPrec = tl+3, 20+sc
		default:
			m.sysMax, m.sysPrec = tl+5, 27+sc
		}
		if sc == 0 {
			m.sysPrec--
		}
		m.sysScale = sc
	case "char", "varchar", "binary", "varbinary", "nchar", "nvarchar":
		n := arg(0, 1)
		if !isMax && (n < 1 || n > 8000 || (base[0] == 'n' && n > 4000)) {
			return ti, m, fmt.Errorf("sampledb: bad type %q", decl)
		}
		if isMax && (base == "char" || base == "binary" || base == "nchar") {
			return ti, m, fmt.Errorf("sampledb: bad type %q", decl)
		}
		t := map[string]byte{"char": decode.TypeBigChar, "varchar": decode.TypeBigVarChar, "binary": decode.TypeBigBinary,
			"varbinary": decode.TypeBigVarBinary, "nchar": decode.TypeNChar, "nvarchar": decode.TypeNVarChar}[base]
		bytes := n
		if base[0] == 'n' {
			bytes = 2 * n
		}
		ti = decode.TypeInfo{Type: t, Size: uint32(bytes)}
		if isMax {
			ti.Size = decode.MaxVarLen
			m.maxLen, m.octets, m.sysMax = -1, -1, -1
			m.sqlType = base + "(max)"
		} else {
			m.maxLen, m.octets, m.sysMax = n, bytes, bytes
			m.sqlType = fmt.Sprintf("%s(%d)", base, n)
		}
		if base != "binary" && base != "varbinary" {
			ti.Collation = coll
		}
	case "text", "ntext", "image":
		t := map[string]byte{"text": decode.TypeText, "ntext": decode.TypeNText, "image": decode.TypeImage}[base]
		ti = decode.TypeInfo{Type: t, Size: 0x7FFFFFFF}
		m.maxLen, m.octets = 0x7FFFFFFF, 0x7FFFFFFF
		if base == "ntext" {
			ti.Size = 0x7FFFFFFE
			m.maxLen = 0x3FFFFFFF
			m.octets = 0x7FFFFFFE
		}
		if base != "image" {
			ti.Collation = coll
		}
		m.sysMax = 16
	case "xml":
		ti = decode.TypeInfo{Type: decode.TypeXML}
		m.maxLen, m.octets, m.sysMax = -1, -1, -1
	case "geography", "geometry", "hierarchyid":
		asm := map[string]string{"geography": asmGeography, "geometry": asmGeometry, "hierarchyid": asmHierarchyID}[base]
		ti = decode.TypeInfo{Type: decode.TypeUDT, Size: decode.MaxVarLen, UDTSchema: "sys", UDTName: base, UDTAssembly: asm}
		m.maxLen, m.octets, m.sysMax = -1, -1, -1
		if base == "hierarchyid" {
			ti.Size = 892
			m.maxLen, m.octets, m.sysMax = 892, 892, 892
		}
	case "sql_variant":
		ti = decode.TypeInfo{Type: decode.TypeVariant, Size: 8009} // TDS max length; sys.columns says 8016
		m.sysMax = 8016
	case "timestamp", "rowversion":
		ti = decode.TypeInfo{Type: decode.TypeBigBinary, Size: 8}
		m.sysMax = 8
		m.baseType, m.sqlType = "timestamp", "timestamp"
	case "json":
		ti = decode.TypeInfo{Type: decode.TypeJSON}
		m.maxLen, m.octets, m.sysMax = -1, -1, -1
	case "vector":
		n := arg(0, 0)
		if n < 1 || n > 1998 {
			return ti, m, fmt.Errorf("sampledb: bad type %q", decl)
		}
		ti = decode.TypeInfo{Type: decode.TypeVector, Size: uint32(8 + 4*n)}
		m.sysMax = 8 + 4*n // INFORMATION_SCHEMA lengths stay NULL
		m.sqlType = fmt.Sprintf("vector(%d)", n)
	default:
		return ti, m, fmt.Errorf("sampledb: unknown type %q", decl)
	}
	return ti, m, nil
}

// decimalLen is the DECIMALN value length (sign byte included) for a precision.
func decimalLen(p int) int {
	switch {
	case p <= 9:
		return 5
	case p <= 19:
		return 9
	case p <= 28:
		return 13
	}
	return 17
}
