package decode

// Kind is the logical SQL Server type of a column: what a user declared,
// whatever wire form carries it. One wire id can carry several kinds
// (INTN carries tinyint, smallint, int and bigint by its size; BIGBINARY
// carries binary(n) and rowversion) and one kind travels in several wire
// forms (int is INT4 when NOT NULL and INTN when nullable), so sinks, the
// test server and the bench switch on Kind, never on the wire id.
type Kind uint8

// The kinds, one per SQL Server type. decimal and numeric are one kind
// (the same values and semantics); Decl.Numeric keeps the T-SQL spelling.
const (
	KindUnknown Kind = iota
	KindBit
	KindTinyInt
	KindSmallInt
	KindInt
	KindBigInt
	KindReal
	KindFloat
	KindDecimal
	KindMoney
	KindSmallMoney
	KindDate
	KindTime
	KindSmallDateTime
	KindDateTime
	KindDateTime2
	KindDateTimeOffset
	KindChar
	KindVarChar
	KindText
	KindNChar
	KindNVarChar
	KindNText
	KindBinary
	KindVarBinary
	KindImage
	KindRowVersion
	KindUniqueIdentifier
	KindXML
	KindJSON
	KindVector
	KindVariant
	KindGeography
	KindGeometry
	KindHierarchyID
	// KindUDT is any other CLR user-defined type: its values are the
	// type's serialised bytes.
	KindUDT
	numKinds
)

// kindFacts are the facts of a kind that hold for every column of it.
type kindFacts struct {
	name  string // T-SQL base name, as sys.types spells it
	class Class
	// fixed is the value's size in bytes when every value of the kind has
	// the same size (as decoded, not on the wire), else 0.
	fixed int
	// wire is the TDS type of a NOT NULL column of the kind; wireN that of
	// a nullable one, where SQL Server sends a different form (INT4 and
	// INTN), else 0.
	wire, wireN byte
}

// Class groups kinds by how their values reach a sink (which CellSink
// call carries them) so a sink can decide what it does for whole families
// at once.
type Class uint8

const (
	ClassUnknown        Class = iota
	ClassBool                 // Bool
	ClassInteger              // Int
	ClassFloat                // Float32 (real, vector elements) or Float64
	ClassDecimal              // Decimal
	ClassMoney                // Money (scaled by 10^4)
	ClassDate                 // Date
	ClassTime                 // Time
	ClassDateTime             // DateTime
	ClassDateTimeOffset       // DateTimeOffset
	ClassText                 // UTF-8 through the variable-length calls
	ClassBinary               // bytes through the variable-length calls
	ClassGUID                 // GUID
	ClassVector               // float32 elements through the variable-length calls
	ClassVariant              // Variant, then the base value's own call
)

var kinds = [numKinds]kindFacts{
	KindUnknown:          {"", ClassUnknown, 0, 0, 0},
	KindBit:              {"bit", ClassBool, 1, TypeBit, TypeBitN},
	KindTinyInt:          {"tinyint", ClassInteger, 1, TypeInt1, TypeIntN},
	KindSmallInt:         {"smallint", ClassInteger, 2, TypeInt2, TypeIntN},
	KindInt:              {"int", ClassInteger, 4, TypeInt4, TypeIntN},
	KindBigInt:           {"bigint", ClassInteger, 8, TypeInt8, TypeIntN},
	KindReal:             {"real", ClassFloat, 4, TypeFlt4, TypeFltN},
	KindFloat:            {"float", ClassFloat, 8, TypeFlt8, TypeFltN},
	KindDecimal:          {"decimal", ClassDecimal, 0, TypeDecimalN, 0},
	KindMoney:            {"money", ClassMoney, 8, TypeMoney, TypeMoneyN},
	KindSmallMoney:       {"smallmoney", ClassMoney, 4, TypeMoney4, TypeMoneyN},
	KindDate:             {"date", ClassDate, 3, TypeDateN, 0},
	KindTime:             {"time", ClassTime, 0, TypeTimeN, 0},
	KindSmallDateTime:    {"smalldatetime", ClassDateTime, 4, TypeDateTim4, TypeDateTimeN},
	KindDateTime:         {"datetime", ClassDateTime, 8, TypeDateTime, TypeDateTimeN},
	KindDateTime2:        {"datetime2", ClassDateTime, 0, TypeDateTime2N, 0},
	KindDateTimeOffset:   {"datetimeoffset", ClassDateTimeOffset, 0, TypeDateTimeOffset, 0},
	KindChar:             {"char", ClassText, 0, TypeBigChar, 0},
	KindVarChar:          {"varchar", ClassText, 0, TypeBigVarChar, 0},
	KindText:             {"text", ClassText, 0, TypeText, 0},
	KindNChar:            {"nchar", ClassText, 0, TypeNChar, 0},
	KindNVarChar:         {"nvarchar", ClassText, 0, TypeNVarChar, 0},
	KindNText:            {"ntext", ClassText, 0, TypeNText, 0},
	KindBinary:           {"binary", ClassBinary, 0, TypeBigBinary, 0},
	KindVarBinary:        {"varbinary", ClassBinary, 0, TypeBigVarBinary, 0},
	KindImage:            {"image", ClassBinary, 0, TypeImage, 0},
	KindRowVersion:       {"timestamp", ClassBinary, 8, TypeBigBinary, 0},
	KindUniqueIdentifier: {"uniqueidentifier", ClassGUID, 16, TypeGUID, 0},
	KindXML:              {"xml", ClassText, 0, TypeXML, 0},
	KindJSON:             {"json", ClassText, 0, TypeJSON, 0},
	KindVector:           {"vector", ClassVector, 0, TypeVector, 0},
	KindVariant:          {"sql_variant", ClassVariant, 0, TypeVariant, 0},
	KindGeography:        {"geography", ClassBinary, 0, TypeUDT, 0},
	KindGeometry:         {"geometry", ClassBinary, 0, TypeUDT, 0},
	KindHierarchyID:      {"hierarchyid", ClassBinary, 0, TypeUDT, 0},
	KindUDT:              {"udt", ClassBinary, 0, TypeUDT, 0},
}

// Name is the kind's T-SQL base name (sys.types), e.g. "datetime2";
// rowversion is "timestamp", as SQL Server names it in its catalog.
func (k Kind) Name() string {
	if k >= numKinds {
		return ""
	}
	return kinds[k].name
}

// String is Name, or "unknown".
func (k Kind) String() string {
	if n := k.Name(); n != "" {
		return n
	}
	return "unknown"
}

// Class says which CellSink call carries values of the kind.
func (k Kind) Class() Class {
	if k >= numKinds {
		return ClassUnknown
	}
	return kinds[k].class
}

// FixedSize is the size in bytes of every value of the kind as SQL Server
// stores it (int 4, datetime 8, uniqueidentifier 16, ...), or 0 when it
// depends on the column (decimal precision, time scale, string length).
func (k Kind) FixedSize() int {
	if k >= numKinds {
		return 0
	}
	return kinds[k].fixed
}

// IsText reports whether values are text delivered as UTF-8 (char types in
// any code page, the N- types, xml, json).
func (k Kind) IsText() bool { return k.Class() == ClassText }

// IsBinary reports whether values are bytes (binary types, rowversion,
// CLR types).
func (k Kind) IsBinary() bool { return k.Class() == ClassBinary }

// IsUnicode reports whether the server holds the text as UTF-16 (nchar,
// nvarchar, ntext, xml), so its declared length counts 2-byte units.
func (k Kind) IsUnicode() bool {
	switch k {
	case KindNChar, KindNVarChar, KindNText, KindXML:
		return true
	}
	return false
}

// IntRange is the range of values of an integer kind: tinyint is
// unsigned, the others two's complement of their size. Other kinds have
// no range (0, 0).
func (k Kind) IntRange() (lo, hi int64) {
	if k.Class() != ClassInteger {
		return 0, 0
	}
	return intRange(kinds[k].fixed)
}

// Decl is the declaration the kind's bare name stands for: SQL Server's
// defaults decimal(18,0), time(7), datetime2(7), datetimeoffset(7); no
// length.
func (k Kind) Decl() Decl { return k.defaultDecl() }

// HasCollation reports whether columns of the kind carry a collation
// (the char and N- types; xml and json are always UTF-16 and UTF-8).
func (k Kind) HasCollation() bool {
	switch k {
	case KindChar, KindVarChar, KindText, KindNChar, KindNVarChar, KindNText:
		return true
	}
	return false
}

// HasScale reports whether the kind's declaration carries a scale: the
// digits after the point of decimal/numeric, or the fractional-second
// digits of time, datetime2 and datetimeoffset.
func (k Kind) HasScale() bool {
	switch k {
	case KindDecimal, KindTime, KindDateTime2, KindDateTimeOffset:
		return true
	}
	return false
}

// HasLength reports whether the kind's declaration carries a length
// (char(n), varbinary(max), vector(n), ...).
func (k Kind) HasLength() bool {
	switch k {
	case KindChar, KindVarChar, KindNChar, KindNVarChar, KindBinary, KindVarBinary, KindVector:
		return true
	}
	return false
}

// Kind returns the logical kind of a TYPE_INFO. It cannot tell a
// rowversion from a binary(8) (that is in the column's user type): use
// Column.Kind for columns.
func (t *TypeInfo) Kind() Kind {
	switch t.Type {
	case TypeBit, TypeBitN:
		return KindBit
	case TypeInt1:
		return KindTinyInt
	case TypeInt2:
		return KindSmallInt
	case TypeInt4:
		return KindInt
	case TypeInt8:
		return KindBigInt
	case TypeIntN:
		switch t.Size {
		case 1:
			return KindTinyInt
		case 2:
			return KindSmallInt
		case 4:
			return KindInt
		case 8:
			return KindBigInt
		}
	case TypeFlt4:
		return KindReal
	case TypeFlt8:
		return KindFloat
	case TypeFltN:
		switch t.Size {
		case 4:
			return KindReal
		case 8:
			return KindFloat
		}
	case TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy:
		return KindDecimal
	case TypeMoney:
		return KindMoney
	case TypeMoney4:
		return KindSmallMoney
	case TypeMoneyN:
		switch t.Size {
		case 4:
			return KindSmallMoney
		case 8:
			return KindMoney
		}
	case TypeDateN:
		return KindDate
	case TypeTimeN:
		return KindTime
	case TypeDateTim4:
		return KindSmallDateTime
	case TypeDateTime:
		return KindDateTime
	case TypeDateTimeN:
		switch t.Size {
		case 4:
			return KindSmallDateTime
		case 8:
			return KindDateTime
		}
	case TypeDateTime2N:
		return KindDateTime2
	case TypeDateTimeOffset:
		return KindDateTimeOffset
	case TypeBigChar, TypeChar:
		return KindChar
	case TypeBigVarChar, TypeVarChar:
		return KindVarChar
	case TypeText:
		return KindText
	case TypeNChar:
		return KindNChar
	case TypeNVarChar:
		return KindNVarChar
	case TypeNText:
		return KindNText
	case TypeBigBinary, TypeBinary:
		return KindBinary
	case TypeBigVarBinary, TypeVarBinary:
		return KindVarBinary
	case TypeImage:
		return KindImage
	case TypeGUID:
		return KindUniqueIdentifier
	case TypeXML:
		return KindXML
	case TypeJSON:
		return KindJSON
	case TypeVector:
		return KindVector
	case TypeVariant:
		return KindVariant
	case TypeUDT:
		switch lowerASCII(t.UDTName) {
		case "geography":
			return KindGeography
		case "geometry":
			return KindGeometry
		case "hierarchyid":
			return KindHierarchyID
		}
		return KindUDT
	}
	return KindUnknown
}

// UserTypeTimestamp is the COLMETADATA user type of a timestamp
// (rowversion) column, whose TYPE_INFO is a plain BIGBINARY(8).
const UserTypeTimestamp = 0x50

// Kind returns the column's logical kind: its TYPE_INFO's, except that a
// binary column with the timestamp user type is a rowversion.
func (c *Column) Kind() Kind {
	k := c.Type.Kind()
	if c.UserType == UserTypeTimestamp && (k == KindBinary || k == KindVarBinary) {
		return KindRowVersion
	}
	return k
}

// lowerASCII lower-cases ASCII letters without allocating when s is
// already lower case (UDT names come from the server as declared).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
