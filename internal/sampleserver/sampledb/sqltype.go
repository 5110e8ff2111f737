package sampledb

import (
	"fmt"

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
	// CollLatin1CS is Latin1_General_CS_AS: case-sensitive (no ignore-case
	// flag), code page 1252.
	CollLatin1CS = decode.Collation{Info: 0x00C00409}
	// CollLatin1BIN2 is Latin1_General_BIN2: code point order (binary2 flag).
	CollLatin1BIN2 = decode.Collation{Info: 0x02000409}
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
	case CollLatin1CS:
		return "Latin1_General_CS_AS", "iso_1"
	case CollLatin1BIN2:
		return "Latin1_General_BIN2", "iso_1"
	}
	return "", ""
}

// colMeta is what the catalog views need to know about a column beyond its
// TYPE_INFO.
type colMeta struct {
	decl     decode.Decl
	maxLen   int // character length (-1 for max), 0 when not a character/binary type
	octets   int // byte length (-1 for max)
	prec     int // numeric precision (0 when none)
	scale    int // numeric scale, or fractional-second precision
	dtPrec   int // DATETIME_PRECISION (-1 when none)
	nullable bool
	sysMax   int // sys.columns.max_length
	sysPrec  int // sys.columns.precision
	sysScale int // sys.columns.scale
}

// sqlType is the column's declared type, e.g. "decimal(38,10)".
func (m *colMeta) sqlType() string { return m.decl.String() }

// baseType is the declared type's name without arguments, e.g. "decimal".
func (m *colMeta) baseType() string { return m.decl.Name() }

// parseSQLType builds the TYPE_INFO a SQL Server 2022/2025 server sends for a
// table column of the given declared type, and the catalog facts. coll is
// used by character types; nullable selects the nullable (xxxN) wire types
// for the fixed-length ones, as SQL Server does.
func parseSQLType(decl string, coll decode.Collation, nullable bool) (decode.TypeInfo, colMeta, error) {
	d, err := decode.ParseDecl(decl)
	if err != nil {
		return decode.TypeInfo{}, colMeta{}, fmt.Errorf("sampledb: %w", err)
	}
	ti := d.TypeInfo(nullable, coll)
	m := colMeta{decl: d, dtPrec: -1, nullable: nullable}
	// The catalog's numbers for each type, as SQL Server 2022 reports them
	// in INFORMATION_SCHEMA.COLUMNS and sys.columns.
	switch k := d.Kind; k {
	case decode.KindTinyInt, decode.KindSmallInt, decode.KindInt, decode.KindBigInt:
		m.prec = map[decode.Kind]int{decode.KindTinyInt: 3, decode.KindSmallInt: 5, decode.KindInt: 10, decode.KindBigInt: 19}[k]
		m.sysMax, m.sysPrec = k.FixedSize(), m.prec
	case decode.KindBit:
		m.sysMax, m.sysPrec = 1, 1
	case decode.KindReal, decode.KindFloat:
		// binary digits of the mantissa
		m.prec = map[decode.Kind]int{decode.KindReal: 24, decode.KindFloat: 53}[k]
		m.sysMax, m.sysPrec = k.FixedSize(), m.prec
	case decode.KindMoney, decode.KindSmallMoney:
		m.prec = map[decode.Kind]int{decode.KindMoney: 19, decode.KindSmallMoney: 10}[k]
		m.scale = 4
		m.sysMax, m.sysPrec, m.sysScale = k.FixedSize(), m.prec, 4
	case decode.KindDateTime:
		m.dtPrec, m.sysMax, m.sysPrec, m.sysScale = 3, 8, 23, 3
	case decode.KindSmallDateTime:
		m.dtPrec, m.sysMax, m.sysPrec = 0, 4, 16
	case decode.KindDecimal:
		m.prec, m.scale = int(d.Precision), int(d.Scale)
		m.sysMax, m.sysPrec, m.sysScale = int(ti.Size), m.prec, m.scale
	case decode.KindUniqueIdentifier:
		m.sysMax = 16
	case decode.KindDate:
		m.dtPrec, m.sysMax, m.sysPrec = 0, 3, 10
	case decode.KindTime, decode.KindDateTime2, decode.KindDateTimeOffset:
		sc := int(d.Scale)
		m.dtPrec, m.scale, m.sysScale = sc, sc, sc
		// sys.columns.max_length is the stored size; precision the
		// length of the text form: hh:mm:ss (8), yyyy-mm-dd hh:mm:ss (19)
		// or that and " +hh:mm" (26), plus "." and the digits.
		tl := decode.TimeLen(d.Scale)
		switch k {
		case decode.KindTime:
			m.sysMax, m.sysPrec = tl, 8+sc
		case decode.KindDateTime2:
			m.sysMax, m.sysPrec = tl+3, 20+sc
		default:
			m.sysMax, m.sysPrec = tl+5, 27+sc
		}
		if sc == 0 {
			m.sysPrec-- // no "."
		}
	case decode.KindChar, decode.KindVarChar, decode.KindBinary, decode.KindVarBinary, decode.KindNChar, decode.KindNVarChar:
		if d.Max {
			m.maxLen, m.octets, m.sysMax = -1, -1, -1
			break
		}
		n := max(d.Length, 1)
		m.maxLen, m.octets, m.sysMax = n, int(ti.Size), int(ti.Size)
	case decode.KindText, decode.KindImage:
		m.maxLen, m.octets, m.sysMax = 0x7FFFFFFF, 0x7FFFFFFF, 16
	case decode.KindNText:
		m.maxLen, m.octets, m.sysMax = 0x3FFFFFFF, 0x7FFFFFFE, 16
	case decode.KindXML, decode.KindJSON, decode.KindGeography, decode.KindGeometry:
		m.maxLen, m.octets, m.sysMax = -1, -1, -1
	case decode.KindHierarchyID:
		m.maxLen, m.octets, m.sysMax = decode.MaxHierarchyIDLen, decode.MaxHierarchyIDLen, decode.MaxHierarchyIDLen
	case decode.KindVariant:
		m.sysMax = 8016 // sys.columns says 8016; the TDS max length is 8009
	case decode.KindRowVersion:
		m.sysMax = 8
	case decode.KindVector:
		m.sysMax = int(ti.Size) // INFORMATION_SCHEMA lengths stay NULL
	default:
		return decode.TypeInfo{}, colMeta{}, fmt.Errorf("sampledb: type %q is not a column type", decl)
	}
	return ti, m, nil
}
