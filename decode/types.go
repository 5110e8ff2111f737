package decode

// TDS data type identifiers (MS-TDS 2.2.5.4). The names follow the spec.
const (
	// Fixed-length types (2.2.5.4.1): never NULL, no length byte on the wire.
	TypeNull          byte = 0x1F
	TypeInt1          byte = 0x30 // tinyint
	TypeBit           byte = 0x32
	TypeInt2          byte = 0x34 // smallint
	TypeInt4          byte = 0x38 // int
	TypeDateTim4      byte = 0x3A // smalldatetime
	TypeFlt4          byte = 0x3B // real
	TypeMoney         byte = 0x3C
	TypeDateTime      byte = 0x3D
	TypeFlt8          byte = 0x3E // float
	TypeMoney4        byte = 0x7A // smallmoney
	TypeInt8          byte = 0x7F // bigint
	TypeDecimalLegacy byte = 0x37
	TypeNumericLegacy byte = 0x3F

	// Variable-length types with a BYTELEN length (2.2.5.4.2).
	TypeGUID           byte = 0x24
	TypeIntN           byte = 0x26
	TypeDecimalN       byte = 0x6A
	TypeNumericN       byte = 0x6C
	TypeBitN           byte = 0x68
	TypeFltN           byte = 0x6D
	TypeMoneyN         byte = 0x6E
	TypeDateTimeN      byte = 0x6F
	TypeDateN          byte = 0x28
	TypeTimeN          byte = 0x29
	TypeDateTime2N     byte = 0x2A
	TypeDateTimeOffset byte = 0x2B

	// Legacy short types (BYTELEN max length and value length, no collation,
	// per the spec grammar; modern servers send the Big* forms instead).
	TypeChar      byte = 0x2F
	TypeVarChar   byte = 0x27
	TypeBinary    byte = 0x2D
	TypeVarBinary byte = 0x25

	// USHORTLEN types; a max length of 0xFFFF means a (max) type sent as PLP.
	TypeBigVarBinary byte = 0xA5
	TypeBigVarChar   byte = 0xA7
	TypeBigBinary    byte = 0xAD
	TypeBigChar      byte = 0xAF
	TypeNVarChar     byte = 0xE7
	TypeNChar        byte = 0xEF

	// LONGLEN types.
	TypeText    byte = 0x23
	TypeImage   byte = 0x22
	TypeNText   byte = 0x63
	TypeVariant byte = 0x62 // sql_variant

	// PLP-only types.
	TypeXML    byte = 0xF1
	TypeUDT    byte = 0xF0
	TypeJSON   byte = 0xF4 // SQL Server 2025, with JSONSUPPORT negotiated
	TypeVector byte = 0xF5 // SQL Server 2025, with VECTORSUPPORT negotiated
)

// MaxVarLen is the USHORT max length that marks a (max) type: its values are PLP.
const MaxVarLen = 0xFFFF

// Collation is the 5-byte TDS collation (MS-TDS 2.2.5.1.2).
type Collation struct {
	// Info holds LCID (bits 0-19), flags (bits 20-27) and version (bits 28-31).
	Info   uint32
	SortID byte
}

// Collation flag bits (bits 20-27 of Info).
const (
	CollationIgnoreCase  = 0x01
	CollationIgnoreAcc   = 0x02
	CollationIgnoreKana  = 0x04
	CollationIgnoreWidth = 0x08
	CollationBinary      = 0x10
	CollationBinary2     = 0x20
	CollationUTF8        = 0x40
)

// LCID returns the locale id of the collation.
func (c Collation) LCID() uint32 { return c.Info & 0xFFFFF }

// Flags returns the collation flag bits.
func (c Collation) Flags() uint8 { return uint8(c.Info >> 20) }

// UTF8 reports whether char data under this collation is UTF-8 (SQL Server 2019+).
func (c Collation) UTF8() bool { return c.Flags()&CollationUTF8 != 0 }

// TypeInfo is a decoded TYPE_INFO (MS-TDS 2.2.5.6) plus the facts a decoder
// derives from it once per result set. It is a plain value: copying it is
// cheap and it holds no references into a network buffer (names are copied).
type TypeInfo struct {
	Type byte // one of the Type* constants

	// Size is the declared maximum length in bytes: BYTELEN types 1..17,
	// USHORTLEN types up to 8000 (MaxVarLen for a (max) type), LONGLEN types
	// up to 2^31-1. Zero for fixed-length types.
	Size      uint32
	Precision uint8 // decimal/numeric: 1..38
	Scale     uint8 // decimal/numeric: 0..Precision; time types: 0..7; vector: element type

	Collation Collation // char, varchar, text, nchar, nvarchar, ntext

	// UDT (0xF0) and XML schema facts.
	UDTDatabase     string
	UDTSchema       string
	UDTName         string // e.g. "geography", "geometry", "hierarchyid"
	UDTAssembly     string
	XMLSchema       bool
	XMLDatabase     string
	XMLOwningSchema string
	XMLCollection   string
}

// IsBinary reports whether values of this type are bytes (binary,
// varbinary, image, CLR types) rather than text or numbers: Kind.IsBinary.
func (t *TypeInfo) IsBinary() bool { return t.Kind().IsBinary() }

// DateTimeScale is the number of fractional second digits a date/time
// value of this type is shown with, as SQL Server shows it: 3 for datetime,
// 0 for smalldatetime, the declared scale otherwise (datetime2, time,
// datetimeoffset).
func (t *TypeInfo) DateTimeScale() uint8 {
	switch t.Type {
	case TypeDateTime:
		return 3
	case TypeDateTim4:
		return 0
	case TypeDateTimeN:
		if t.Size == 4 {
			return 0
		}
		return 3
	}
	return t.Scale
}

// IsPLP reports whether values of this type are sent as PLP (2.2.5.2.3).
func (t *TypeInfo) IsPLP() bool {
	switch t.Type {
	case TypeBigVarBinary, TypeBigVarChar, TypeNVarChar:
		return t.Size == MaxVarLen
	case TypeXML, TypeUDT, TypeJSON:
		return true
	}
	return false
}

// Column flag bits of COLMETADATA (MS-TDS 2.2.7.4), LSB first.
const (
	ColFlagNullable        = 0x0001
	ColFlagCaseSen         = 0x0002
	ColFlagUpdateable      = 0x000C
	ColFlagIdentity        = 0x0010
	ColFlagComputed        = 0x0020
	ColFlagFixedLenCLR     = 0x0100
	ColFlagSparseColumnSet = 0x0400
	ColFlagEncrypted       = 0x0800
	ColFlagHidden          = 0x2000
	ColFlagKey             = 0x4000
	ColFlagNullableUnknown = 0x8000
)

// Column is one column of a COLMETADATA token.
type Column struct {
	Name     string
	UserType uint32
	Flags    uint16
	Type     TypeInfo
	// TableName is set only for text, ntext and image columns (multi-part name).
	TableName []string
}

// Nullable reports whether the column may hold NULL.
func (c *Column) Nullable() bool { return c.Flags&ColFlagNullable != 0 }
