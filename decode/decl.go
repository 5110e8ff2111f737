package decode

import (
	"fmt"
	"strconv"
	"strings"
)

// Decl is a SQL Server type as T-SQL declares it: a kind and the
// arguments of its declaration. It is the one translation between the
// names a user writes ("nvarchar(max)", "numeric(9,2)", "rowversion") and
// the TYPE_INFO a server sends for a column of that type.
type Decl struct {
	Kind Kind
	// Numeric marks a decimal declared as numeric: the same values, but
	// its own name and wire id.
	Numeric bool
	// Length is the declared length of the kinds that take one
	// (Kind.HasLength): bytes for char, varchar, binary and varbinary,
	// characters for nchar and nvarchar, dimensions for vector. 0 means
	// not given; a declaration without a length means 1 (30 in CAST and
	// CONVERT, which set it themselves).
	Length int
	// Max marks varchar(max), nvarchar(max) and varbinary(max).
	Max       bool
	Precision uint8 // decimal: 1..38
	Scale     uint8 // decimal: 0..Precision; time, datetime2, datetimeoffset: 0..7
	// UDT is the type name of a KindUDT (a user's CLR type).
	UDT string
}

// Maximum declared lengths (T-SQL): 8000 bytes, 4000 UTF-16 characters and
// 1998 vector dimensions (8000 bytes of float32 elements and a header).
const (
	MaxDeclBytes      = 8000
	MaxDeclChars      = 4000
	MaxVectorDims     = 1998
	MaxDecimalDigits  = 38
	MaxFractionDigits = 7
)

// typeNames resolves T-SQL type names and their ISO synonyms to the
// declaration they stand for with no arguments. The base names come from
// the kinds table; this adds only the synonyms.
var typeNames = func() map[string]Decl {
	m := map[string]Decl{}
	for k := KindBit; k < KindUDT; k++ {
		m[k.Name()] = k.defaultDecl()
	}
	syn := map[string]Decl{
		"integer":                    {Kind: KindInt},
		"dec":                        KindDecimal.defaultDecl(),
		"numeric":                    {Kind: KindDecimal, Numeric: true, Precision: 18},
		"double precision":           {Kind: KindFloat},
		"rowversion":                 {Kind: KindRowVersion},
		"character":                  {Kind: KindChar},
		"char varying":               {Kind: KindVarChar},
		"character varying":          {Kind: KindVarChar},
		"binary varying":             {Kind: KindVarBinary},
		"national character":         {Kind: KindNChar},
		"national char":              {Kind: KindNChar},
		"national character varying": {Kind: KindNVarChar},
		"national char varying":      {Kind: KindNVarChar},
		"national text":              {Kind: KindNText},
		// sysname is the system alias type nvarchar(128) NOT NULL.
		"sysname": {Kind: KindNVarChar, Length: 128},
	}
	for n, d := range syn {
		m[n] = d
	}
	return m
}()

// defaultDecl is the declaration of a bare type name: decimal(18,0),
// time(7) and the like, no length.
func (k Kind) defaultDecl() Decl {
	d := Decl{Kind: k}
	switch k {
	case KindDecimal:
		d.Precision = 18
	case KindTime, KindDateTime2, KindDateTimeOffset:
		d.Scale = MaxFractionDigits
	}
	return d
}

// LookupDecl returns the declaration a T-SQL type name stands for without
// arguments, with SQL Server's defaults (decimal(18,0), time(7), float(53);
// Length 0). The name is matched without regard to case or to the spacing
// of the multi-word synonyms ("double precision", "char varying").
func LookupDecl(name string) (Decl, bool) {
	d, ok := typeNames[strings.Join(strings.Fields(strings.ToLower(name)), " ")]
	return d, ok
}

// DeclProblem says what is wrong with a declaration's arguments.
type DeclProblem uint8

const (
	// DeclNoArgs: the type takes no arguments, or not (max).
	DeclNoArgs DeclProblem = iota + 1
	// DeclPrecision: a decimal precision outside 1..38, or a float(n)
	// outside 1..53.
	DeclPrecision
	// DeclScale: a decimal scale above the precision.
	DeclScale
	// DeclFraction: a time, datetime2 or datetimeoffset scale above 7.
	DeclFraction
	// DeclLength: a length outside 1..8000 (1..4000 for the N- types,
	// 1..1998 for vector).
	DeclLength
)

// DeclError is a declaration whose arguments SQL Server would refuse.
// Value is the offending argument and Limit the bound it broke, so a
// caller can word the error as its context wants.
type DeclError struct {
	Name    string // the type name as given
	Problem DeclProblem
	Value   int
	Limit   int
}

func (e *DeclError) Error() string {
	switch e.Problem {
	case DeclNoArgs:
		return "decode: type " + e.Name + " takes no such arguments"
	case DeclPrecision:
		return fmt.Sprintf("decode: type %s: precision %d outside 1..%d", e.Name, e.Value, e.Limit)
	case DeclScale:
		return fmt.Sprintf("decode: type %s: scale %d exceeds the precision %d", e.Name, e.Value, e.Limit)
	case DeclFraction:
		return fmt.Sprintf("decode: type %s: fractional-second scale %d exceeds %d", e.Name, e.Value, e.Limit)
	}
	return fmt.Sprintf("decode: type %s: length %d outside 1..%d", e.Name, e.Value, e.Limit)
}

// WithArgs applies a declaration's arguments to a bare declaration from
// LookupDecl: (n) or (max) for the kinds with a length, (p) or (p,s) for
// decimal and numeric, (s) for time, datetime2 and datetimeoffset, (n)
// for float (1..24 is real, 25..53 float) and vector. Arguments SQL Server
// would refuse are a *DeclError. name is only used in errors.
func (d Decl) WithArgs(name string, args []int, isMax bool) (Decl, error) {
	bad := func(p DeclProblem, v, limit int) (Decl, error) {
		return Decl{}, &DeclError{Name: name, Problem: p, Value: v, Limit: limit}
	}
	if isMax {
		switch d.Kind {
		case KindVarChar, KindNVarChar, KindVarBinary:
		default:
			return bad(DeclNoArgs, 0, 0)
		}
		if len(args) != 0 {
			return bad(DeclNoArgs, 0, 0)
		}
		d.Max, d.Length = true, 0
		return d, nil
	}
	if len(args) == 0 {
		return d, nil
	}
	switch d.Kind {
	case KindDecimal:
		if len(args) > 2 {
			return bad(DeclNoArgs, 0, 0)
		}
		p, s := args[0], 0
		if len(args) == 2 {
			s = args[1]
		}
		if p < 1 || p > MaxDecimalDigits {
			return bad(DeclPrecision, p, MaxDecimalDigits)
		}
		if s < 0 || s > p {
			return bad(DeclScale, s, p)
		}
		d.Precision, d.Scale = uint8(p), uint8(s)
	case KindFloat:
		if len(args) > 1 {
			return bad(DeclNoArgs, 0, 0)
		}
		// float(n) keeps n mantissa bits: up to 24 fit a real.
		switch n := args[0]; {
		case n < 1 || n > 53:
			return bad(DeclPrecision, n, 53)
		case n <= 24:
			d.Kind = KindReal
		}
	case KindTime, KindDateTime2, KindDateTimeOffset:
		if len(args) > 1 {
			return bad(DeclNoArgs, 0, 0)
		}
		if s := args[0]; s < 0 || s > MaxFractionDigits {
			return bad(DeclFraction, s, MaxFractionDigits)
		}
		d.Scale = uint8(args[0])
	case KindChar, KindVarChar, KindBinary, KindVarBinary, KindNChar, KindNVarChar, KindVector:
		if len(args) > 1 || d.Length != 0 {
			return bad(DeclNoArgs, 0, 0) // sysname(10)
		}
		limit := MaxDeclBytes
		switch {
		case d.Kind.IsUnicode():
			limit = MaxDeclChars
		case d.Kind == KindVector:
			limit = MaxVectorDims
		}
		if n := args[0]; n < 1 || n > limit {
			return bad(DeclLength, n, limit)
		}
		d.Length = args[0]
	default:
		return bad(DeclNoArgs, 0, 0)
	}
	return d, nil
}

// ParseDecl parses a T-SQL type declaration such as "int",
// "decimal(38, 10)", "NVARCHAR(MAX)", "datetime2(3)" or "rowversion".
// Unknown names and arguments SQL Server would refuse are errors; vector
// needs its dimensions.
func ParseDecl(s string) (Decl, error) {
	name, rest := strings.TrimSpace(s), ""
	if p := strings.IndexByte(name, '('); p >= 0 {
		name, rest = strings.TrimSpace(name[:p]), strings.TrimSpace(name[p+1:])
		if !strings.HasSuffix(rest, ")") {
			return Decl{}, fmt.Errorf("decode: bad type %q", s)
		}
		rest = strings.TrimSpace(rest[:len(rest)-1])
	}
	d, ok := LookupDecl(name)
	if !ok {
		return Decl{}, fmt.Errorf("decode: unknown type %q", s)
	}
	var args []int
	isMax := false
	if rest != "" {
		for _, f := range strings.Split(rest, ",") {
			f = strings.TrimSpace(f)
			if strings.EqualFold(f, "max") {
				isMax = true
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil {
				return Decl{}, fmt.Errorf("decode: bad type %q", s)
			}
			args = append(args, n)
		}
	} else if p := strings.IndexByte(s, '('); p >= 0 {
		return Decl{}, fmt.Errorf("decode: bad type %q", s) // "char()"
	}
	if d.Kind == KindVector && len(args) == 0 {
		return Decl{}, &DeclError{Name: name, Problem: DeclLength, Limit: MaxVectorDims}
	}
	d, err := d.WithArgs(name, args, isMax)
	if err != nil {
		return Decl{}, err
	}
	return d, nil
}

// DeclOf returns the declaration of a TYPE_INFO; userType
// UserTypeTimestamp marks timestamp (rowversion), whose TYPE_INFO is a
// plain binary(8).
func DeclOf(ti *TypeInfo, userType uint32) Decl {
	k := ti.Kind()
	if userType == UserTypeTimestamp && (k == KindBinary || k == KindVarBinary) {
		k = KindRowVersion
	}
	d := Decl{Kind: k}
	switch k {
	case KindDecimal:
		d.Numeric = ti.Type == TypeNumericN || ti.Type == TypeNumericLegacy
		d.Precision, d.Scale = ti.Precision, ti.Scale
	case KindTime, KindDateTime2, KindDateTimeOffset:
		d.Scale = ti.Scale
	case KindChar, KindVarChar, KindBinary, KindVarBinary, KindNChar, KindNVarChar:
		if ti.Size == MaxVarLen {
			d.Max = true
			break
		}
		d.Length = int(ti.Size)
		if k.IsUnicode() {
			d.Length /= 2
		}
	case KindVector:
		d.Length = VectorDims(ti)
	case KindUDT:
		d.UDT = ti.UDTName
	}
	return d
}

// Name is the declaration's T-SQL base name, as SQL Server's messages
// spell a type: "numeric" for a decimal declared so, a CLR type's own
// name in lower case, else Kind.Name.
func (d Decl) Name() string {
	switch {
	case d.Kind == KindDecimal && d.Numeric:
		return "numeric"
	case d.Kind == KindUDT && d.UDT != "":
		return strings.ToLower(d.UDT)
	}
	return d.Kind.Name()
}

// String spells the declaration as T-SQL does: "decimal(38,10)",
// "nvarchar(max)", "datetime2(7)", "timestamp". A length of 0 is
// spelled 1, the smallest valid length.
func (d Decl) String() string {
	switch d.Kind {
	case KindDecimal:
		return d.Name() + "(" + strconv.Itoa(int(d.Precision)) + "," + strconv.Itoa(int(d.Scale)) + ")"
	case KindTime, KindDateTime2, KindDateTimeOffset:
		return d.Name() + "(" + strconv.Itoa(int(d.Scale)) + ")"
	case KindChar, KindVarChar, KindBinary, KindVarBinary, KindNChar, KindNVarChar, KindVector:
		if d.Max {
			return d.Name() + "(max)"
		}
		return d.Name() + "(" + strconv.Itoa(max(d.Length, 1)) + ")"
	}
	return d.Name()
}

// Assembly-qualified names of the system CLR types, as SQL Server sends
// them in a UDT TYPE_INFO.
const (
	AssemblyGeography   = "Microsoft.SqlServer.Types.SqlGeography, Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91"
	AssemblyGeometry    = "Microsoft.SqlServer.Types.SqlGeometry, Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91"
	AssemblyHierarchyID = "Microsoft.SqlServer.Types.SqlHierarchyId, Microsoft.SqlServer.Types, Version=11.0.0.0, Culture=neutral, PublicKeyToken=89845dcd8080cc91"
)

// MaxHierarchyIDLen is hierarchyid's MAX_BYTE_SIZE: it is the one system
// CLR type that is not (max).
const MaxHierarchyIDLen = 892

// TypeInfo returns the TYPE_INFO SQL Server 2022/2025 sends for a column of
// the declared type: nullable selects the nullable wire form of the
// fixed-size kinds (INTN rather than INT4, as SQL Server does); coll is
// kept only by the kinds with a collation. A rowversion's TYPE_INFO is its
// binary(8); the column's user type (UserTypeTimestamp) tells it apart.
func (d Decl) TypeInfo(nullable bool, coll Collation) TypeInfo {
	if d.Kind >= numKinds {
		return TypeInfo{}
	}
	f := &kinds[d.Kind]
	ti := TypeInfo{Type: f.wire}
	if nullable && f.wireN != 0 {
		ti.Type, ti.Size = f.wireN, uint32(f.fixed)
	}
	length := func(unit int) uint32 {
		if d.Max {
			return MaxVarLen
		}
		return uint32(max(d.Length, 1) * unit)
	}
	switch d.Kind {
	case KindDecimal:
		if d.Numeric {
			ti.Type = TypeNumericN
		}
		ti.Precision, ti.Scale = d.Precision, d.Scale
		ti.Size = uint32(DecimalLen(d.Precision))
	case KindTime, KindDateTime2, KindDateTimeOffset:
		ti.Scale = d.Scale
	case KindChar, KindVarChar, KindBinary, KindVarBinary:
		ti.Size = length(1)
	case KindNChar, KindNVarChar:
		ti.Size = length(2)
	case KindText, KindImage:
		ti.Size = 0x7FFFFFFF
	case KindNText:
		ti.Size = 0x7FFFFFFE
	case KindRowVersion, KindUniqueIdentifier:
		ti.Size = uint32(f.fixed)
	case KindVariant:
		ti.Size = MaxVariantLen
	case KindVector:
		ti.Size = uint32(8 + 4*max(d.Length, 1))
	case KindGeography:
		ti.Size, ti.UDTSchema, ti.UDTName, ti.UDTAssembly = MaxVarLen, "sys", "geography", AssemblyGeography
	case KindGeometry:
		ti.Size, ti.UDTSchema, ti.UDTName, ti.UDTAssembly = MaxVarLen, "sys", "geometry", AssemblyGeometry
	case KindHierarchyID:
		ti.Size, ti.UDTSchema, ti.UDTName, ti.UDTAssembly = MaxHierarchyIDLen, "sys", "hierarchyid", AssemblyHierarchyID
	case KindUDT:
		ti.Size, ti.UDTName = MaxVarLen, d.UDT
	}
	if d.Kind.HasCollation() {
		ti.Collation = coll
	}
	return ti
}

// NullableForm returns the TYPE_INFO SQL Server uses for a nullable
// column of ti's kind: the fixed-length types become their N- forms (INT4
// becomes INTN of size 4, MONEY4 MONEYN of size 4); every other type is its
// own nullable form and is returned unchanged.
func NullableForm(ti TypeInfo) TypeInfo {
	if tiFixedLen(ti.Type) == 0 {
		return ti
	}
	f := &kinds[ti.Kind()]
	if f.wireN == 0 {
		return ti
	}
	return TypeInfo{Type: f.wireN, Size: uint32(f.fixed)}
}

// FixedForm is the reverse of NullableForm: the N- forms of the
// fixed-length types become the fixed type (INTN of size 4 becomes INT4),
// the form sql_variant uses for its base types; every other type is
// returned unchanged (with no size if it is fixed-length).
func FixedForm(ti TypeInfo) TypeInfo {
	switch ti.Type {
	case TypeIntN, TypeBitN, TypeFltN, TypeMoneyN, TypeDateTimeN:
		if k := ti.Kind(); k != KindUnknown {
			return TypeInfo{Type: kinds[k].wire}
		}
	}
	if tiFixedLen(ti.Type) != 0 {
		ti.Size = 0
	}
	return ti
}

// DecimalLen is the DECIMALN/NUMERICN value length for a precision: a
// sign byte and 4, 8, 12 or 16 bytes of magnitude.
func DecimalLen(precision uint8) int {
	switch {
	case precision <= 9:
		return 5
	case precision <= 19:
		return 9
	case precision <= 28:
		return 13
	}
	return 17
}

// SQLTypeName returns the SQL Server type of a column as T-SQL declares it,
// e.g. "decimal(38,10)", "nvarchar(max)", "datetime2(7)", "geography".
func SQLTypeName(c *Column) string { return TypeDecl(&c.Type, c.UserType) }

// TypeDecl spells a type as T-SQL declares it (DeclOf(ti, userType).String());
// a wire type this package does not know is "type 0xNN".
func TypeDecl(ti *TypeInfo, userType uint32) string {
	if ti.Kind() == KindUnknown {
		return fmt.Sprintf("type 0x%02X", ti.Type)
	}
	return DeclOf(ti, userType).String()
}

// VectorDims derives a vector's dimension count from its declared byte
// length: an 8-byte header plus 4 bytes per float32 element.
func VectorDims(ti *TypeInfo) int {
	if ti.Size < 8 {
		return 0
	}
	return int(ti.Size-8) / 4
}
