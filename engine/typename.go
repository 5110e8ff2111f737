package engine

import (
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// SQLTypeName returns the SQL Server type of a column as T-SQL spells it,
// e.g. "decimal(38,10)", "nvarchar(max)", "datetime2(7)", "geography".
func SQLTypeName(c *decode.Column) string { return typeDecl(&c.Type, c.UserType) }

// typeDecl spells a type as T-SQL declares it; userType 0x50 marks
// timestamp/rowversion. A zero length (an empty parameter value) is
// declared as 1, the smallest valid length.
func typeDecl(ti *decode.TypeInfo, userType uint32) string {
	if userType == 0x50 && (ti.Type == decode.TypeBigBinary || ti.Type == decode.TypeBigVarBinary) {
		return "timestamp"
	}
	length := func(unit uint32) string {
		if ti.Size == decode.MaxVarLen {
			return "max"
		}
		return fmt.Sprint(max(ti.Size/unit, 1))
	}
	switch ti.Type {
	case decode.TypeInt1:
		return "tinyint"
	case decode.TypeInt2:
		return "smallint"
	case decode.TypeInt4:
		return "int"
	case decode.TypeInt8:
		return "bigint"
	case decode.TypeIntN:
		switch ti.Size {
		case 1:
			return "tinyint"
		case 2:
			return "smallint"
		case 4:
			return "int"
		}
		return "bigint"
	case decode.TypeBit, decode.TypeBitN:
		return "bit"
	case decode.TypeFlt4:
		return "real"
	case decode.TypeFlt8:
		return "float"
	case decode.TypeFltN:
		if ti.Size == 4 {
			return "real"
		}
		return "float"
	case decode.TypeMoney:
		return "money"
	case decode.TypeMoney4:
		return "smallmoney"
	case decode.TypeMoneyN:
		if ti.Size == 4 {
			return "smallmoney"
		}
		return "money"
	case decode.TypeDateTime:
		return "datetime"
	case decode.TypeDateTim4:
		return "smalldatetime"
	case decode.TypeDateTimeN:
		if ti.Size == 4 {
			return "smalldatetime"
		}
		return "datetime"
	case decode.TypeDecimalN, decode.TypeDecimalLegacy:
		return fmt.Sprintf("decimal(%d,%d)", ti.Precision, ti.Scale)
	case decode.TypeNumericN, decode.TypeNumericLegacy:
		return fmt.Sprintf("numeric(%d,%d)", ti.Precision, ti.Scale)
	case decode.TypeGUID:
		return "uniqueidentifier"
	case decode.TypeDateN:
		return "date"
	case decode.TypeTimeN:
		return fmt.Sprintf("time(%d)", ti.Scale)
	case decode.TypeDateTime2N:
		return fmt.Sprintf("datetime2(%d)", ti.Scale)
	case decode.TypeDateTimeOffset:
		return fmt.Sprintf("datetimeoffset(%d)", ti.Scale)
	case decode.TypeBigChar, decode.TypeChar:
		return "char(" + length(1) + ")"
	case decode.TypeBigVarChar, decode.TypeVarChar:
		return "varchar(" + length(1) + ")"
	case decode.TypeNChar:
		return "nchar(" + length(2) + ")"
	case decode.TypeNVarChar:
		return "nvarchar(" + length(2) + ")"
	case decode.TypeBigBinary, decode.TypeBinary:
		return "binary(" + length(1) + ")"
	case decode.TypeBigVarBinary, decode.TypeVarBinary:
		return "varbinary(" + length(1) + ")"
	case decode.TypeText:
		return "text"
	case decode.TypeNText:
		return "ntext"
	case decode.TypeImage:
		return "image"
	case decode.TypeXML:
		return "xml"
	case decode.TypeUDT:
		if ti.UDTName != "" {
			return strings.ToLower(ti.UDTName)
		}
		return "udt"
	case decode.TypeVariant:
		return "sql_variant"
	case decode.TypeJSON:
		return "json"
	case decode.TypeVector:
		return fmt.Sprintf("vector(%d)", vectorDims(ti))
	}
	return fmt.Sprintf("type 0x%02X", ti.Type)
}

// vectorDims derives the dimension count from a vector's declared byte
// length: an 8-byte header plus 4 bytes per float32 element.
func vectorDims(ti *decode.TypeInfo) int {
	if ti.Size < 8 {
		return 0
	}
	return int(ti.Size-8) / 4
}

// ConvertedColumns returns the columns as sinks receive them when the
// engine writes the SELECT with its default conversions (DefaultConversion):
// spatial types arrive as varbinary(max) WKB, hierarchyid as nvarchar(4000).
func ConvertedColumns(cols []decode.Column) []decode.Column {
	out := append([]decode.Column(nil), cols...)
	for i := range out {
		c := &out[i]
		if c.Type.Type != decode.TypeUDT {
			continue
		}
		switch strings.ToLower(c.Type.UDTName) {
		case "geography", "geometry":
			c.Type = decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: decode.MaxVarLen}
		case "hierarchyid":
			c.Type = decode.TypeInfo{Type: decode.TypeNVarChar, Size: 8000, Collation: decode.Collation{Info: 0x00D00409, SortID: 52}}
		}
	}
	return out
}
