package decode

import (
	"errors"
	"testing"
)

// What SQL Server sends for a column declared as each type, written out by
// hand from MS-TDS 2.2.5.4 and captures of SQL Server 2022 COLMETADATA
// (the N- wire forms for nullable fixed-size columns, sizes in bytes,
// UTF-16 lengths doubled), not derived from the code under test.
func TestParseDeclTypeInfo(t *testing.T) {
	coll := Collation{Info: 0x00D00409, SortID: 52}
	cases := []struct {
		decl     string
		nullable bool
		want     TypeInfo
		canon    string // DeclOf(want).String()
	}{
		{"int", false, TypeInfo{Type: TypeInt4}, "int"},
		{"INTEGER", true, TypeInfo{Type: TypeIntN, Size: 4}, "int"},
		{"tinyint", true, TypeInfo{Type: TypeIntN, Size: 1}, "tinyint"},
		{"smallint", false, TypeInfo{Type: TypeInt2}, "smallint"},
		{"bigint", true, TypeInfo{Type: TypeIntN, Size: 8}, "bigint"},
		{"bit", true, TypeInfo{Type: TypeBitN, Size: 1}, "bit"},
		{"bit", false, TypeInfo{Type: TypeBit}, "bit"},
		{"real", true, TypeInfo{Type: TypeFltN, Size: 4}, "real"},
		{"float(24)", false, TypeInfo{Type: TypeFlt4}, "real"},
		{"float", true, TypeInfo{Type: TypeFltN, Size: 8}, "float"},
		{"double  precision", false, TypeInfo{Type: TypeFlt8}, "float"},
		{"decimal", true, TypeInfo{Type: TypeDecimalN, Size: 9, Precision: 18}, "decimal(18,0)"},
		{"dec(9, 2)", false, TypeInfo{Type: TypeDecimalN, Size: 5, Precision: 9, Scale: 2}, "decimal(9,2)"},
		{"numeric(38,10)", true, TypeInfo{Type: TypeNumericN, Size: 17, Precision: 38, Scale: 10}, "numeric(38,10)"},
		{"numeric(20)", true, TypeInfo{Type: TypeNumericN, Size: 13, Precision: 20}, "numeric(20,0)"},
		{"money", false, TypeInfo{Type: TypeMoney}, "money"},
		{"smallmoney", true, TypeInfo{Type: TypeMoneyN, Size: 4}, "smallmoney"},
		{"date", false, TypeInfo{Type: TypeDateN}, "date"},
		{"time", true, TypeInfo{Type: TypeTimeN, Scale: 7}, "time(7)"},
		{"datetime2(0)", true, TypeInfo{Type: TypeDateTime2N}, "datetime2(0)"},
		{"datetimeoffset(3)", false, TypeInfo{Type: TypeDateTimeOffset, Scale: 3}, "datetimeoffset(3)"},
		{"datetime", true, TypeInfo{Type: TypeDateTimeN, Size: 8}, "datetime"},
		{"smalldatetime", false, TypeInfo{Type: TypeDateTim4}, "smalldatetime"},
		{"char", false, TypeInfo{Type: TypeBigChar, Size: 1, Collation: coll}, "char(1)"},
		{"varchar(50)", true, TypeInfo{Type: TypeBigVarChar, Size: 50, Collation: coll}, "varchar(50)"},
		{"VARCHAR(MAX)", true, TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: coll}, "varchar(max)"},
		{"nchar(10)", false, TypeInfo{Type: TypeNChar, Size: 20, Collation: coll}, "nchar(10)"},
		{"national character varying(4000)", true, TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: coll}, "nvarchar(4000)"},
		{"nvarchar(max)", true, TypeInfo{Type: TypeNVarChar, Size: MaxVarLen, Collation: coll}, "nvarchar(max)"},
		{"sysname", false, TypeInfo{Type: TypeNVarChar, Size: 256, Collation: coll}, "nvarchar(128)"},
		{"text", true, TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: coll}, "text"},
		{"ntext", true, TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE, Collation: coll}, "ntext"},
		{"image", true, TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}, "image"},
		{"binary(16)", false, TypeInfo{Type: TypeBigBinary, Size: 16}, "binary(16)"},
		{"varbinary(max)", true, TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, "varbinary(max)"},
		{"rowversion", false, TypeInfo{Type: TypeBigBinary, Size: 8}, "binary(8)"},
		{"uniqueidentifier", true, TypeInfo{Type: TypeGUID, Size: 16}, "uniqueidentifier"},
		{"xml", true, TypeInfo{Type: TypeXML}, "xml"},
		{"json", true, TypeInfo{Type: TypeJSON}, "json"},
		{"vector(3)", true, TypeInfo{Type: TypeVector, Size: 20}, "vector(3)"},
		{"sql_variant", true, TypeInfo{Type: TypeVariant, Size: 8009}, "sql_variant"},
		{"geography", true, TypeInfo{Type: TypeUDT, Size: MaxVarLen, UDTSchema: "sys", UDTName: "geography", UDTAssembly: AssemblyGeography}, "geography"},
		{"hierarchyid", true, TypeInfo{Type: TypeUDT, Size: 892, UDTSchema: "sys", UDTName: "hierarchyid", UDTAssembly: AssemblyHierarchyID}, "hierarchyid"},
	}
	for _, c := range cases {
		d, err := ParseDecl(c.decl)
		if err != nil {
			t.Errorf("%q: %v", c.decl, err)
			continue
		}
		if got := d.TypeInfo(c.nullable, coll); got != c.want {
			t.Errorf("%q nullable=%v: TypeInfo %+v, want %+v", c.decl, c.nullable, got, c.want)
		}
		if got := TypeDecl(&c.want, 0); got != c.canon {
			t.Errorf("%q: TypeDecl of its TYPE_INFO %q, want %q", c.decl, got, c.canon)
		}
	}
	// rowversion is told apart by the column's user type only.
	if d, _ := ParseDecl("timestamp"); d.Kind != KindRowVersion || d.String() != "timestamp" {
		t.Errorf("timestamp: %+v %q", d, d.String())
	}
}

func TestParseDeclRefuses(t *testing.T) {
	cases := []struct {
		decl    string
		problem DeclProblem // 0: not a DeclError (unknown or malformed)
	}{
		{"integer(4)", DeclNoArgs},
		{"char(max)", DeclNoArgs},
		{"date(3)", DeclNoArgs},
		{"sysname(10)", DeclNoArgs},
		{"decimal(39)", DeclPrecision},
		{"decimal(0)", DeclPrecision},
		{"numeric(5,6)", DeclScale},
		{"decimal(5,2,1)", DeclNoArgs},
		{"float(54)", DeclPrecision},
		{"time(8)", DeclFraction},
		{"varchar(8001)", DeclLength},
		{"nvarchar(4001)", DeclLength},
		{"binary(0)", DeclLength},
		{"vector", DeclLength},
		{"vector(1999)", DeclLength},
		{"varchar(max, 3)", DeclNoArgs},
		{"number", 0},
		{"varchar(", 0},
		{"varchar()", 0},
		{"varchar(x)", 0},
	}
	for _, c := range cases {
		d, err := ParseDecl(c.decl)
		if err == nil {
			t.Errorf("%q: accepted as %+v", c.decl, d)
			continue
		}
		var de *DeclError
		switch {
		case c.problem == 0 && errors.As(err, &de):
			t.Errorf("%q: %v, want a plain error", c.decl, err)
		case c.problem != 0 && (!errors.As(err, &de) || de.Problem != c.problem):
			t.Errorf("%q: %v, want problem %d", c.decl, err, c.problem)
		}
	}
}

// Every declaration of every kind survives TypeInfo and DeclOf unchanged,
// nullable or not: the two directions are one table, not two that drift.
func TestDeclRoundTrip(t *testing.T) {
	decls := []Decl{{Kind: KindUDT, UDT: "phonenumber"}}
	for k := KindBit; k < KindUDT; k++ {
		d := k.defaultDecl()
		switch k {
		case KindChar, KindVarChar, KindBinary, KindVarBinary, KindNChar, KindNVarChar, KindVector:
			d.Length = 7
		}
		decls = append(decls, d)
	}
	decls = append(decls,
		Decl{Kind: KindDecimal, Numeric: true, Precision: 29, Scale: 3},
		Decl{Kind: KindVarChar, Max: true}, Decl{Kind: KindNVarChar, Max: true}, Decl{Kind: KindVarBinary, Max: true},
		Decl{Kind: KindTime, Scale: 0}, Decl{Kind: KindDateTime2, Scale: 3})
	for _, d := range decls {
		for _, nullable := range []bool{false, true} {
			ti := d.TypeInfo(nullable, Collation{Info: 0x00D00409})
			var ut uint32
			if d.Kind == KindRowVersion {
				ut = UserTypeTimestamp
			}
			if got := DeclOf(&ti, ut); got != d {
				t.Errorf("%v nullable=%v: TypeInfo %+v reads back as %+v", d, nullable, ti, got)
			}
			if d.Kind != KindUDT {
				if p, err := ParseDecl(d.String()); err != nil || p != d {
					t.Errorf("%v: ParseDecl(%q) = %+v, %v", d, d.String(), p, err)
				}
			}
		}
	}
}

func TestDecimalLen(t *testing.T) {
	// MS-TDS 2.2.5.5.1.3 / SQL Server storage: 5, 9, 13, 17 bytes.
	for p, want := range map[uint8]int{1: 5, 9: 5, 10: 9, 19: 9, 20: 13, 28: 13, 29: 17, 38: 17} {
		if got := DecimalLen(p); got != want {
			t.Errorf("DecimalLen(%d) = %d, want %d", p, got, want)
		}
	}
}

// The nullable and fixed wire forms of the fixed-length types (MS-TDS
// 2.2.5.4.1 and 2.2.5.4.2), and types that have only one form.
func TestNullableFixedForm(t *testing.T) {
	pairs := []struct{ fixed, nullable TypeInfo }{
		{TypeInfo{Type: TypeInt1}, TypeInfo{Type: TypeIntN, Size: 1}},
		{TypeInfo{Type: TypeInt2}, TypeInfo{Type: TypeIntN, Size: 2}},
		{TypeInfo{Type: TypeInt4}, TypeInfo{Type: TypeIntN, Size: 4}},
		{TypeInfo{Type: TypeInt8}, TypeInfo{Type: TypeIntN, Size: 8}},
		{TypeInfo{Type: TypeBit}, TypeInfo{Type: TypeBitN, Size: 1}},
		{TypeInfo{Type: TypeFlt4}, TypeInfo{Type: TypeFltN, Size: 4}},
		{TypeInfo{Type: TypeFlt8}, TypeInfo{Type: TypeFltN, Size: 8}},
		{TypeInfo{Type: TypeMoney4}, TypeInfo{Type: TypeMoneyN, Size: 4}},
		{TypeInfo{Type: TypeMoney}, TypeInfo{Type: TypeMoneyN, Size: 8}},
		{TypeInfo{Type: TypeDateTim4}, TypeInfo{Type: TypeDateTimeN, Size: 4}},
		{TypeInfo{Type: TypeDateTime}, TypeInfo{Type: TypeDateTimeN, Size: 8}},
	}
	for _, p := range pairs {
		if got := NullableForm(p.fixed); got != p.nullable {
			t.Errorf("NullableForm(%+v) = %+v, want %+v", p.fixed, got, p.nullable)
		}
		if got := FixedForm(p.nullable); got != p.fixed {
			t.Errorf("FixedForm(%+v) = %+v, want %+v", p.nullable, got, p.fixed)
		}
	}
	for _, ti := range []TypeInfo{
		{Type: TypeDecimalN, Size: 9, Precision: 18}, {Type: TypeGUID, Size: 16}, {Type: TypeDateN},
		{Type: TypeNVarChar, Size: 20, Collation: Collation{Info: 0x00D00409}}, {Type: TypeIntN, Size: 3},
	} {
		if got := NullableForm(ti); got != ti {
			t.Errorf("NullableForm(%+v) = %+v, want it unchanged", ti, got)
		}
		if got := FixedForm(ti); got != ti {
			t.Errorf("FixedForm(%+v) = %+v, want it unchanged", ti, got)
		}
	}
}

func TestIntRangeAndName(t *testing.T) {
	ranges := map[Kind][2]int64{
		KindTinyInt: {0, 255}, KindSmallInt: {-32768, 32767},
		KindInt: {-2147483648, 2147483647}, KindBigInt: {-1 << 63, 1<<63 - 1}, KindMoney: {0, 0},
	}
	for k, want := range ranges {
		if lo, hi := k.IntRange(); lo != want[0] || hi != want[1] {
			t.Errorf("%v.IntRange() = %d, %d, want %d, %d", k, lo, hi, want[0], want[1])
		}
	}
	names := map[string]Decl{
		"numeric":     {Kind: KindDecimal, Numeric: true, Precision: 5},
		"decimal":     {Kind: KindDecimal, Precision: 5},
		"phonenumber": {Kind: KindUDT, UDT: "PhoneNumber"},
		"nvarchar":    {Kind: KindNVarChar, Max: true},
		"timestamp":   {Kind: KindRowVersion},
	}
	for want, d := range names {
		if got := d.Name(); got != want {
			t.Errorf("%+v.Name() = %q, want %q", d, got, want)
		}
	}
}
