package decode

import (
	"fmt"
	"strconv"
	"strings"
)

// SQLTypeName returns the SQL Server type of a column as T-SQL declares it,
// e.g. "decimal(38,10)", "nvarchar(max)", "datetime2(7)", "geography".
func SQLTypeName(c *Column) string { return TypeDecl(&c.Type, c.UserType) }

// TypeDecl spells a type as T-SQL declares it; userType UserTypeTimestamp
// marks timestamp (rowversion). A zero length (an empty parameter value) is
// declared as 1, the smallest valid length.
func TypeDecl(ti *TypeInfo, userType uint32) string {
	k := ti.Kind()
	if userType == UserTypeTimestamp && (k == KindBinary || k == KindVarBinary) {
		k = KindRowVersion
	}
	length := func(unit uint32) string {
		if ti.Size == MaxVarLen {
			return "max"
		}
		return strconv.FormatUint(uint64(max(ti.Size/unit, 1)), 10)
	}
	switch k {
	case KindUnknown:
		return fmt.Sprintf("type 0x%02X", ti.Type)
	case KindDecimal:
		name := "decimal"
		if ti.Type == TypeNumericN || ti.Type == TypeNumericLegacy {
			name = "numeric"
		}
		return name + "(" + strconv.Itoa(int(ti.Precision)) + "," + strconv.Itoa(int(ti.Scale)) + ")"
	case KindTime, KindDateTime2, KindDateTimeOffset:
		return k.Name() + "(" + strconv.Itoa(int(ti.Scale)) + ")"
	case KindChar, KindVarChar, KindBinary, KindVarBinary:
		return k.Name() + "(" + length(1) + ")"
	case KindNChar, KindNVarChar:
		return k.Name() + "(" + length(2) + ")"
	case KindVector:
		return "vector(" + strconv.Itoa(VectorDims(ti)) + ")"
	case KindUDT:
		if ti.UDTName != "" {
			return strings.ToLower(ti.UDTName)
		}
	}
	return k.Name()
}

// VectorDims derives a vector's dimension count from its declared byte
// length: an 8-byte header plus 4 bytes per float32 element.
func VectorDims(ti *TypeInfo) int {
	if ti.Size < 8 {
		return 0
	}
	return int(ti.Size-8) / 4
}
