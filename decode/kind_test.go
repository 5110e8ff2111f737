package decode

import "testing"

// Every wire form SQL Server sends maps to the kind and the declaration a
// user wrote; the expectations are spelled out by hand from MS-TDS 2.2.5.4
// and the T-SQL type names, not derived from the code under test.
func TestKindAndTypeDecl(t *testing.T) {
	coll := Collation{Info: 0x00D00409, SortID: 52}
	cases := []struct {
		ti       TypeInfo
		userType uint32
		kind     Kind
		decl     string
	}{
		{TypeInfo{Type: TypeBit}, 0, KindBit, "bit"},
		{TypeInfo{Type: TypeBitN, Size: 1}, 0, KindBit, "bit"},
		{TypeInfo{Type: TypeInt1}, 0, KindTinyInt, "tinyint"},
		{TypeInfo{Type: TypeIntN, Size: 1}, 0, KindTinyInt, "tinyint"},
		{TypeInfo{Type: TypeInt2}, 0, KindSmallInt, "smallint"},
		{TypeInfo{Type: TypeIntN, Size: 2}, 0, KindSmallInt, "smallint"},
		{TypeInfo{Type: TypeInt4}, 0, KindInt, "int"},
		{TypeInfo{Type: TypeIntN, Size: 4}, 0, KindInt, "int"},
		{TypeInfo{Type: TypeInt8}, 0, KindBigInt, "bigint"},
		{TypeInfo{Type: TypeIntN, Size: 8}, 0, KindBigInt, "bigint"},
		{TypeInfo{Type: TypeFlt4}, 0, KindReal, "real"},
		{TypeInfo{Type: TypeFltN, Size: 4}, 0, KindReal, "real"},
		{TypeInfo{Type: TypeFlt8}, 0, KindFloat, "float"},
		{TypeInfo{Type: TypeFltN, Size: 8}, 0, KindFloat, "float"},
		{TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38, Scale: 38}, 0, KindDecimal, "decimal(38,38)"},
		{TypeInfo{Type: TypeNumericN, Size: 5, Precision: 9, Scale: 2}, 0, KindDecimal, "numeric(9,2)"},
		{TypeInfo{Type: TypeMoney}, 0, KindMoney, "money"},
		{TypeInfo{Type: TypeMoneyN, Size: 8}, 0, KindMoney, "money"},
		{TypeInfo{Type: TypeMoney4}, 0, KindSmallMoney, "smallmoney"},
		{TypeInfo{Type: TypeMoneyN, Size: 4}, 0, KindSmallMoney, "smallmoney"},
		{TypeInfo{Type: TypeDateN}, 0, KindDate, "date"},
		{TypeInfo{Type: TypeTimeN, Scale: 7}, 0, KindTime, "time(7)"},
		{TypeInfo{Type: TypeDateTim4}, 0, KindSmallDateTime, "smalldatetime"},
		{TypeInfo{Type: TypeDateTimeN, Size: 4}, 0, KindSmallDateTime, "smalldatetime"},
		{TypeInfo{Type: TypeDateTime}, 0, KindDateTime, "datetime"},
		{TypeInfo{Type: TypeDateTimeN, Size: 8}, 0, KindDateTime, "datetime"},
		{TypeInfo{Type: TypeDateTime2N, Scale: 3}, 0, KindDateTime2, "datetime2(3)"},
		{TypeInfo{Type: TypeDateTimeOffset, Scale: 0}, 0, KindDateTimeOffset, "datetimeoffset(0)"},
		{TypeInfo{Type: TypeBigChar, Size: 10, Collation: coll}, 0, KindChar, "char(10)"},
		{TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: coll}, 0, KindVarChar, "varchar(max)"},
		{TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: coll}, 0, KindText, "text"},
		{TypeInfo{Type: TypeNChar, Size: 20, Collation: coll}, 0, KindNChar, "nchar(10)"},
		{TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: coll}, 0, KindNVarChar, "nvarchar(4000)"},
		{TypeInfo{Type: TypeNVarChar, Size: MaxVarLen, Collation: coll}, 0, KindNVarChar, "nvarchar(max)"},
		{TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE, Collation: coll}, 0, KindNText, "ntext"},
		{TypeInfo{Type: TypeBigBinary, Size: 16}, 0, KindBinary, "binary(16)"},
		{TypeInfo{Type: TypeBigVarBinary, Size: 0}, 0, KindVarBinary, "varbinary(1)"},
		{TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}, 0, KindImage, "image"},
		{TypeInfo{Type: TypeBigBinary, Size: 8}, UserTypeTimestamp, KindRowVersion, "timestamp"},
		{TypeInfo{Type: TypeGUID, Size: 16}, 0, KindUniqueIdentifier, "uniqueidentifier"},
		{TypeInfo{Type: TypeXML}, 0, KindXML, "xml"},
		{TypeInfo{Type: TypeJSON}, 0, KindJSON, "json"},
		{TypeInfo{Type: TypeVector, Size: 8 + 4*3}, 0, KindVector, "vector(3)"},
		{TypeInfo{Type: TypeVariant, Size: 8016}, 0, KindVariant, "sql_variant"},
		{TypeInfo{Type: TypeUDT, UDTName: "Geography"}, 0, KindGeography, "geography"},
		{TypeInfo{Type: TypeUDT, UDTName: "geometry"}, 0, KindGeometry, "geometry"},
		{TypeInfo{Type: TypeUDT, UDTName: "hierarchyid"}, 0, KindHierarchyID, "hierarchyid"},
		{TypeInfo{Type: TypeUDT, UDTName: "PhoneNumber"}, 0, KindUDT, "phonenumber"},
		{TypeInfo{Type: 0x01}, 0, KindUnknown, "type 0x01"},
	}
	for _, c := range cases {
		col := Column{Type: c.ti, UserType: c.userType}
		if got := col.Kind(); got != c.kind {
			t.Errorf("%+v: Kind %v, want %v", c.ti, got, c.kind)
		}
		if got := SQLTypeName(&col); got != c.decl {
			t.Errorf("%+v: declared %q, want %q", c.ti, got, c.decl)
		}
	}
	// Every kind has a name and a class, and the names are distinct.
	seen := map[string]Kind{}
	for k := KindBit; k < numKinds; k++ {
		if k.Name() == "" || k.Class() == ClassUnknown {
			t.Errorf("kind %d has no name or class", k)
		}
		if prev, dup := seen[k.Name()]; dup {
			t.Errorf("kinds %d and %d are both %q", prev, k, k.Name())
		}
		seen[k.Name()] = k
	}
}
