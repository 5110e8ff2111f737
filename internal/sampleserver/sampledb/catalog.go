package sampledb

import (
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// sysType is a row of sys.types.
type sysType struct {
	decl         decode.Decl // the type, or the base type of an alias type
	alias        string      // the name of an alias type (sysname), else ""
	systemTypeID int64
	userTypeID   int64
	maxLength    int64
	precision    int64
	scale        int64
}

func (t *sysType) name() string {
	if t.alias != "" {
		return t.alias
	}
	return t.decl.Name()
}

// sysTypes are the built-in types as SQL Server 2025 lists them in
// sys.types (json 244 and vector 255 as in SQL Server 2025; [unverified
// against a real 2025 instance]).
var sysTypes = []sysType{
	{decl: decode.KindImage.Decl(), systemTypeID: 34, userTypeID: 34, maxLength: 16},
	{decl: decode.KindText.Decl(), systemTypeID: 35, userTypeID: 35, maxLength: 16},
	{decl: decode.KindUniqueIdentifier.Decl(), systemTypeID: 36, userTypeID: 36, maxLength: 16},
	{decl: decode.KindDate.Decl(), systemTypeID: 40, userTypeID: 40, maxLength: 3, precision: 10},
	{decl: decode.KindTime.Decl(), systemTypeID: 41, userTypeID: 41, maxLength: 5, precision: 16, scale: 7},
	{decl: decode.KindDateTime2.Decl(), systemTypeID: 42, userTypeID: 42, maxLength: 8, precision: 27, scale: 7},
	{decl: decode.KindDateTimeOffset.Decl(), systemTypeID: 43, userTypeID: 43, maxLength: 10, precision: 34, scale: 7},
	{decl: decode.KindTinyInt.Decl(), systemTypeID: 48, userTypeID: 48, maxLength: 1, precision: 3},
	{decl: decode.KindSmallInt.Decl(), systemTypeID: 52, userTypeID: 52, maxLength: 2, precision: 5},
	{decl: decode.KindInt.Decl(), systemTypeID: 56, userTypeID: 56, maxLength: 4, precision: 10},
	{decl: decode.KindSmallDateTime.Decl(), systemTypeID: 58, userTypeID: 58, maxLength: 4, precision: 16},
	{decl: decode.KindReal.Decl(), systemTypeID: 59, userTypeID: 59, maxLength: 4, precision: 24},
	{decl: decode.KindMoney.Decl(), systemTypeID: 60, userTypeID: 60, maxLength: 8, precision: 19, scale: 4},
	{decl: decode.KindDateTime.Decl(), systemTypeID: 61, userTypeID: 61, maxLength: 8, precision: 23, scale: 3},
	{decl: decode.KindFloat.Decl(), systemTypeID: 62, userTypeID: 62, maxLength: 8, precision: 53},
	{decl: decode.KindVariant.Decl(), systemTypeID: 98, userTypeID: 98, maxLength: 8016},
	{decl: decode.KindNText.Decl(), systemTypeID: 99, userTypeID: 99, maxLength: 16},
	{decl: decode.KindBit.Decl(), systemTypeID: 104, userTypeID: 104, maxLength: 1, precision: 1},
	{decl: decode.KindDecimal.Decl(), systemTypeID: 106, userTypeID: 106, maxLength: 17, precision: 38, scale: 38},
	{decl: decode.Decl{Kind: decode.KindDecimal, Numeric: true}, systemTypeID: 108, userTypeID: 108, maxLength: 17, precision: 38, scale: 38},
	{decl: decode.KindSmallMoney.Decl(), systemTypeID: 122, userTypeID: 122, maxLength: 4, precision: 10, scale: 4},
	{decl: decode.KindBigInt.Decl(), systemTypeID: 127, userTypeID: 127, maxLength: 8, precision: 19},
	{decl: decode.KindHierarchyID.Decl(), systemTypeID: 240, userTypeID: 128, maxLength: decode.MaxHierarchyIDLen},
	{decl: decode.KindGeometry.Decl(), systemTypeID: 240, userTypeID: 129, maxLength: -1},
	{decl: decode.KindGeography.Decl(), systemTypeID: 240, userTypeID: 130, maxLength: -1},
	{decl: decode.KindVarBinary.Decl(), systemTypeID: 165, userTypeID: 165, maxLength: 8000},
	{decl: decode.KindVarChar.Decl(), systemTypeID: 167, userTypeID: 167, maxLength: 8000},
	{decl: decode.KindBinary.Decl(), systemTypeID: 173, userTypeID: 173, maxLength: 8000},
	{decl: decode.KindChar.Decl(), systemTypeID: 175, userTypeID: 175, maxLength: 8000},
	{decl: decode.KindRowVersion.Decl(), systemTypeID: 189, userTypeID: 189, maxLength: 8},
	{decl: decode.KindNVarChar.Decl(), systemTypeID: 231, userTypeID: 231, maxLength: 8000},
	{decl: decode.KindNChar.Decl(), systemTypeID: 239, userTypeID: 239, maxLength: 8000},
	{decl: decode.KindXML.Decl(), systemTypeID: 241, userTypeID: 241, maxLength: -1},
	{decl: decode.KindJSON.Decl(), systemTypeID: 244, userTypeID: 244, maxLength: -1},
	{decl: decode.KindVector.Decl(), systemTypeID: 255, userTypeID: 255, maxLength: 8000},
	{decl: decode.Decl{Kind: decode.KindNVarChar, Length: 128}, alias: "sysname", systemTypeID: 231, userTypeID: 256, maxLength: 256},
}

// sysTypeOf returns the sys.types row of a column's declared type.
func sysTypeOf(d decode.Decl) sysType {
	for _, t := range sysTypes {
		if t.alias == "" && t.decl.Kind == d.Kind && t.decl.Numeric == d.Numeric {
			return t
		}
	}
	return sysType{decl: d}
}

// catDate is the create/modify date every catalog object reports.
var catDate = decode.DateTime{Days: decode.DateFromCivil(2026, 1, 1)}

// Schema ids as SQL Server assigns them (user schemas from 5 in creation order).
var schemaIDs = map[string]int64{"dbo": 1, "guest": 2, "INFORMATION_SCHEMA": 3, "sys": 4, "sales": 5, "warehouse": 6, "finance": 7}

// schemaNames lists the schemas in schema_id order.
var schemaNames = []string{"dbo", "guest", "INFORMATION_SCHEMA", "sys", "sales", "warehouse", "finance"}

// catCol declares a catalog view column: name and SQL type; a trailing "?"
// on the type marks it nullable.
type catCol struct{ name, typ string }

func (db *DB) catTable(schema, name string, cols []catCol, rows [][]any) *Table {
	defs := make([]colDef, len(cols))
	for k, c := range cols {
		typ, nullable := strings.CutSuffix(c.typ, "?")
		if typ == "sysname" {
			typ = "nvarchar(128)"
		}
		defs[k] = colDef{name: c.name, sqlType: typ, nullable: nullable}
	}
	t := makeTable(db, schema, name, defs)
	t.Catalog = true
	t.static = rows
	t.Rows = int64(len(rows))
	return t
}

// Catalog looks up a catalog view ("INFORMATION_SCHEMA"."COLUMNS",
// "sys"."tables", ...), case-insensitively. The views are ordinary tables
// built from the schema, with SQL Server's column names and types.
func (db *DB) Catalog(schema, name string) (*Table, bool) {
	db.catOnce.Do(db.buildCatalog)
	t, ok := db.catByNm[strings.ToLower(schema+"."+name)]
	return t, ok
}

// Catalogs returns every catalog view.
func (db *DB) Catalogs() []*Table {
	db.catOnce.Do(db.buildCatalog)
	return db.catalog
}

// constraint object ids are allocated after the tables'.
type objIDs struct{ next int32 }

func (o *objIDs) alloc() int64 { o.next += 16; return int64(o.next) }

// Referential actions as sys.foreign_keys numbers them.
var fkActions = map[string]int64{"NO_ACTION": 0, "CASCADE": 1, "SET_NULL": 2, "SET_DEFAULT": 3}

// catIndex is one row of sys.indexes as the catalog numbers it.
type catIndex struct {
	t  *Table
	ix *Index
	id int64 // index_id: 1 for the clustered index, 2.. for the others in order
}

// indexIDs numbers a table's indexes as SQL Server does: the clustered
// index is 1 (a heap is 0), the others from 2.
func indexIDs(t *Table) []catIndex {
	out := make([]catIndex, 0, len(t.Indexes))
	next := int64(2)
	for k := range t.Indexes {
		ix := &t.Indexes[k]
		id := next
		if ix.Clustered {
			id = 1
		} else {
			next++
		}
		out = append(out, catIndex{t, ix, id})
	}
	return out
}

// keyIndex returns the unique index (primary key or unique constraint)
// whose key columns are cols, as the referenced key of a foreign key.
func keyIndex(t *Table, cols []string) (catIndex, bool) {
	for _, ci := range indexIDs(t) {
		if (ci.ix.PrimaryKey || ci.ix.UniqueConstraint) && strings.EqualFold(strings.Join(ci.ix.Columns, ","), strings.Join(cols, ",")) {
			return ci, true
		}
	}
	return catIndex{}, false
}

func (db *DB) buildCatalog() {
	cat := db.name
	ids := &objIDs{next: 1205579333}
	type fkInfo struct {
		t  *Table
		fk ForeignKey
		id int64
	}
	type keyInfo struct { // PRIMARY KEY and UNIQUE constraints
		ci catIndex
		id int64
	}
	type defInfo struct {
		t   *Table
		col int
		def string
		id  int64
	}
	type checkInfo struct {
		t  *Table
		ck Check
		id int64
	}
	var (
		keys   []keyInfo
		fks    []fkInfo
		defs   []defInfo
		checks []checkInfo
	)
	pkName := map[*Table]string{}
	// Ids in the order SQL Server would have handed them out creating each
	// table: its primary key, foreign keys, defaults, then unique and check
	// constraints (tables without the latter keep the ids they always had).
	for _, t := range db.tables {
		for _, ci := range indexIDs(t) {
			if ci.ix.PrimaryKey {
				keys = append(keys, keyInfo{ci, ids.alloc()})
				pkName[t] = ci.ix.Name
			}
		}
		for _, fk := range t.ForeignKeys {
			fks = append(fks, fkInfo{t, fk, ids.alloc()})
		}
		for c := range t.Columns {
			if d, ok := t.Defaults[t.Columns[c].Name]; ok {
				defs = append(defs, defInfo{t, c, d, ids.alloc()})
			}
		}
		for _, ci := range indexIDs(t) {
			if ci.ix.UniqueConstraint {
				keys = append(keys, keyInfo{ci, ids.alloc()})
			}
		}
		for _, ck := range t.Checks {
			checks = append(checks, checkInfo{t, ck, ids.alloc()})
		}
	}
	schemaID := func(s string) int64 { return schemaIDs[s] }
	// relations are the tables, then the views: what has columns.
	relations := append(append([]*Table(nil), db.tables...), db.views...)
	var views []*Table
	add := func(t *Table) { views = append(views, t) }

	// INFORMATION_SCHEMA.TABLES
	var rows [][]any
	for _, t := range relations {
		typ := "BASE TABLE"
		if t.View != "" {
			typ = "VIEW"
		}
		rows = append(rows, []any{cat, t.Schema, t.Name, typ})
	}
	add(db.catTable("INFORMATION_SCHEMA", "TABLES", []catCol{{"TABLE_CATALOG", "sysname?"}, {"TABLE_SCHEMA", "sysname?"},
		{"TABLE_NAME", "sysname"}, {"TABLE_TYPE", "varchar(10)?"}}, rows))

	// INFORMATION_SCHEMA.COLUMNS
	rows = nil
	for _, t := range relations {
		for c := range t.Columns {
			m := t.meta[c]
			var def, maxLen, octets, prec, radix, scale, dtPrec, csName, collName any
			if d, ok := t.Defaults[t.Columns[c].Name]; ok {
				def = d
			}
			if m.maxLen != 0 {
				maxLen, octets = int64(m.maxLen), int64(m.octets)
			}
			switch m.decl.Kind.Class() {
			case decode.ClassInteger, decode.ClassDecimal, decode.ClassMoney:
				prec, radix, scale = int64(m.prec), int64(10), int64(m.scale)
			case decode.ClassFloat:
				prec, radix = int64(m.prec), int64(2)
			}
			if m.dtPrec >= 0 {
				dtPrec = int64(m.dtPrec)
			}
			if ti := t.Columns[c].Type; ti.Collation != (decode.Collation{}) {
				n, cs := CollationName(ti.Collation)
				collName, csName = n, cs
				if ti.Kind().IsUnicode() {
					csName = "UNICODE"
				}
			}
			nullable := "NO"
			if m.nullable {
				nullable = "YES"
			}
			rows = append(rows, []any{cat, t.Schema, t.Name, t.Columns[c].Name, int64(c + 1), def, nullable, m.baseType(),
				maxLen, octets, prec, radix, scale, dtPrec, nil, nil, csName, nil, nil, collName, nil, nil, nil})
		}
	}
	add(db.catTable("INFORMATION_SCHEMA", "COLUMNS", []catCol{{"TABLE_CATALOG", "sysname?"}, {"TABLE_SCHEMA", "sysname?"},
		{"TABLE_NAME", "sysname"}, {"COLUMN_NAME", "sysname?"}, {"ORDINAL_POSITION", "int?"}, {"COLUMN_DEFAULT", "nvarchar(4000)?"},
		{"IS_NULLABLE", "varchar(3)?"}, {"DATA_TYPE", "nvarchar(128)?"}, {"CHARACTER_MAXIMUM_LENGTH", "int?"},
		{"CHARACTER_OCTET_LENGTH", "int?"}, {"NUMERIC_PRECISION", "tinyint?"}, {"NUMERIC_PRECISION_RADIX", "smallint?"},
		{"NUMERIC_SCALE", "int?"}, {"DATETIME_PRECISION", "smallint?"}, {"CHARACTER_SET_CATALOG", "sysname?"},
		{"CHARACTER_SET_SCHEMA", "sysname?"}, {"CHARACTER_SET_NAME", "sysname?"}, {"COLLATION_CATALOG", "sysname?"},
		{"COLLATION_SCHEMA", "sysname?"}, {"COLLATION_NAME", "sysname?"}, {"DOMAIN_CATALOG", "sysname?"},
		{"DOMAIN_SCHEMA", "sysname?"}, {"DOMAIN_NAME", "sysname?"}}, rows))

	// INFORMATION_SCHEMA.TABLE_CONSTRAINTS and KEY_COLUMN_USAGE
	var tc, kcu [][]any
	keyUsage := func(t *Table, name, typ string, cols []string) {
		tc = append(tc, []any{cat, t.Schema, name, cat, t.Schema, t.Name, typ, "NO", "NO"})
		for k, col := range cols {
			kcu = append(kcu, []any{cat, t.Schema, name, cat, t.Schema, t.Name, col, int64(k + 1)})
		}
	}
	for _, t := range db.tables {
		if n := pkName[t]; n != "" {
			keyUsage(t, n, "PRIMARY KEY", t.Key)
		}
		for _, fk := range t.ForeignKeys {
			keyUsage(t, fk.Name, "FOREIGN KEY", fk.Columns)
		}
		for _, ix := range t.Indexes {
			if ix.UniqueConstraint {
				keyUsage(t, ix.Name, "UNIQUE", ix.Columns)
			}
		}
		for _, ck := range t.Checks {
			tc = append(tc, []any{cat, t.Schema, ck.Name, cat, t.Schema, t.Name, "CHECK", "NO", "NO"})
		}
	}
	add(db.catTable("INFORMATION_SCHEMA", "TABLE_CONSTRAINTS", []catCol{{"CONSTRAINT_CATALOG", "sysname?"},
		{"CONSTRAINT_SCHEMA", "sysname?"}, {"CONSTRAINT_NAME", "sysname"}, {"TABLE_CATALOG", "sysname?"},
		{"TABLE_SCHEMA", "sysname?"}, {"TABLE_NAME", "sysname"}, {"CONSTRAINT_TYPE", "varchar(11)?"},
		{"IS_DEFERRABLE", "varchar(2)"}, {"INITIALLY_DEFERRED", "varchar(2)"}}, tc))
	add(db.catTable("INFORMATION_SCHEMA", "KEY_COLUMN_USAGE", []catCol{{"CONSTRAINT_CATALOG", "sysname?"},
		{"CONSTRAINT_SCHEMA", "sysname?"}, {"CONSTRAINT_NAME", "sysname"}, {"TABLE_CATALOG", "sysname?"},
		{"TABLE_SCHEMA", "sysname?"}, {"TABLE_NAME", "sysname"}, {"COLUMN_NAME", "sysname?"},
		{"ORDINAL_POSITION", "int"}}, kcu))

	// INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS
	rows = nil
	rule := func(s string) string { return strings.ReplaceAll(s, "_", " ") }
	for _, f := range fks {
		ref, _ := db.Table(f.fk.RefSchema, f.fk.RefTable)
		key, _ := keyIndex(ref, f.fk.RefColumns)
		rows = append(rows, []any{cat, f.t.Schema, f.fk.Name, cat, ref.Schema, key.ix.Name, "SIMPLE",
			rule(f.fk.OnUpdate), rule(f.fk.OnDelete)})
	}
	add(db.catTable("INFORMATION_SCHEMA", "REFERENTIAL_CONSTRAINTS", []catCol{{"CONSTRAINT_CATALOG", "sysname?"},
		{"CONSTRAINT_SCHEMA", "sysname?"}, {"CONSTRAINT_NAME", "sysname"}, {"UNIQUE_CONSTRAINT_CATALOG", "sysname?"},
		{"UNIQUE_CONSTRAINT_SCHEMA", "sysname?"}, {"UNIQUE_CONSTRAINT_NAME", "sysname?"}, {"MATCH_OPTION", "varchar(7)?"},
		{"UPDATE_RULE", "varchar(11)?"}, {"DELETE_RULE", "varchar(11)?"}}, rows))

	// sys.schemas
	rows = nil
	for _, s := range schemaNames {
		rows = append(rows, []any{s, schemaIDs[s], int64(1)})
	}
	add(db.catTable("sys", "schemas", []catCol{{"name", "sysname"}, {"schema_id", "int"}, {"principal_id", "int?"}}, rows))

	// sys.objects and the views that extend it: sys.tables, sys.views,
	// sys.key_constraints, sys.check_constraints, sys.default_constraints,
	// sys.foreign_keys, sys.sequences.
	objCols := []catCol{{"name", "sysname"}, {"object_id", "int"}, {"principal_id", "int?"}, {"schema_id", "int"},
		{"parent_object_id", "int"}, {"type", "char(2)?"}, {"type_desc", "nvarchar(60)?"}, {"create_date", "datetime"},
		{"modify_date", "datetime"}, {"is_ms_shipped", "bit"}, {"is_published", "bit"}, {"is_schema_published", "bit"}}
	withObj := func(extra ...catCol) []catCol { return append(append([]catCol(nil), objCols...), extra...) }
	obj := func(name string, id, schema, parent int64, typ, desc string) []any {
		return []any{name, id, nil, schema, parent, typ, desc, catDate, catDate, false, false, false}
	}
	var objs, tabs, vws, mods, kcs, ccs [][]any
	keyByTable := map[*Table][]keyInfo{}
	for _, k := range keys {
		keyByTable[k.ci.t] = append(keyByTable[k.ci.t], k)
	}
	for _, t := range db.tables {
		sid := schemaID(t.Schema)
		objs = append(objs, obj(t.Name, int64(t.ObjectID), sid, 0, "U ", "USER_TABLE"))
		r := obj(t.Name, int64(t.ObjectID), sid, 0, "U ", "USER_TABLE")
		tabs = append(tabs, append(r, int64(0), int64(len(t.Columns)), true, false, false, false, int64(0), "NON_TEMPORAL_TABLE"))
		for _, k := range keyByTable[t] {
			typ, desc := "PK", "PRIMARY_KEY_CONSTRAINT"
			if !k.ci.ix.PrimaryKey {
				typ, desc = "UQ", "UNIQUE_CONSTRAINT"
			}
			objs = append(objs, obj(k.ci.ix.Name, k.id, sid, int64(t.ObjectID), typ, desc))
			kcs = append(kcs, append(obj(k.ci.ix.Name, k.id, sid, int64(t.ObjectID), typ, desc), k.ci.id, false))
		}
	}
	for _, f := range fks {
		objs = append(objs, obj(f.fk.Name, f.id, schemaID(f.t.Schema), int64(f.t.ObjectID), "F ", "FOREIGN_KEY_CONSTRAINT"))
	}
	for _, d := range defs {
		objs = append(objs, obj(defaultName(d.t, d.col), d.id, schemaID(d.t.Schema), int64(d.t.ObjectID), "D ", "DEFAULT_CONSTRAINT"))
	}
	for _, c := range checks {
		r := obj(c.ck.Name, c.id, schemaID(c.t.Schema), int64(c.t.ObjectID), "C ", "CHECK_CONSTRAINT")
		objs = append(objs, r)
		col := int64(0)
		if c.ck.Column != "" {
			col = int64(c.t.ColumnIndex(c.ck.Column) + 1)
		}
		ccs = append(ccs, append(append([]any(nil), r...), false, false, false, col, c.ck.Definition, false, false))
	}
	for _, v := range db.views {
		r := obj(v.Name, int64(v.ObjectID), schemaID(v.Schema), 0, "V ", "VIEW")
		objs = append(objs, r)
		vws = append(vws, append(append([]any(nil), r...), false, false, false, false, false, false))
		mods = append(mods, []any{int64(v.ObjectID), v.View, true, true, false, false, false, false, nil, false})
	}
	var seqs [][]any
	for _, sq := range db.seqs {
		r := obj(sq.Name, int64(sq.ObjectID), schemaID(sq.Schema), 0, "SO", "SEQUENCE_OBJECT")
		objs = append(objs, r)
		ti, m, err := parseSQLType(sq.Type, CollSQLLatin1, false)
		if err != nil {
			panic(err)
		}
		st := sysTypeOf(m.decl)
		val := func(v int64) any {
			if m.decl.Kind == decode.KindDecimal {
				d := dec(v)
				d.Precision, d.Scale = ti.Precision, ti.Scale
				return decode.Variant{Type: ti, Value: d}
			}
			return decode.Variant{Type: ti, Value: v}
		}
		var cache, lastUsed any
		if sq.Cache > 0 {
			cache = sq.Cache
		}
		if sq.Used {
			lastUsed = val(sq.Current)
		}
		seqs = append(seqs, append(append([]any(nil), r...), val(sq.Start), val(sq.Increment), val(sq.Min), val(sq.Max),
			sq.Cycle, sq.Cache > 0, cache, st.systemTypeID, st.userTypeID, int64(m.sysPrec), int64(m.sysScale),
			val(sq.Current), false, lastUsed))
	}
	add(db.catTable("sys", "objects", objCols, objs))
	add(db.catTable("sys", "tables", withObj(catCol{"lob_data_space_id", "int"},
		catCol{"max_column_id_used", "int"}, catCol{"uses_ansi_nulls", "bit?"}, catCol{"is_replicated", "bit?"},
		catCol{"has_replication_filter", "bit?"}, catCol{"is_memory_optimized", "bit?"}, catCol{"temporal_type", "tinyint?"},
		catCol{"temporal_type_desc", "nvarchar(60)?"}), tabs))
	add(db.catTable("sys", "views", withObj(catCol{"is_replicated", "bit?"}, catCol{"has_replication_filter", "bit?"},
		catCol{"has_opaque_metadata", "bit"}, catCol{"has_unchecked_assembly_data", "bit"}, catCol{"with_check_option", "bit"},
		catCol{"is_date_correlation_view", "bit"}), vws))
	add(db.catTable("sys", "sql_modules", []catCol{{"object_id", "int"}, {"definition", "nvarchar(max)?"},
		{"uses_ansi_nulls", "bit?"}, {"uses_quoted_identifier", "bit?"}, {"is_schema_bound", "bit?"},
		{"uses_database_collation", "bit?"}, {"is_recompiled", "bit?"}, {"null_on_null_input", "bit?"},
		{"execute_as_principal_id", "int?"}, {"uses_native_compilation", "bit?"}}, mods))
	add(db.catTable("sys", "key_constraints", withObj(catCol{"unique_index_id", "int?"}, catCol{"is_system_named", "bit"}), kcs))
	add(db.catTable("sys", "check_constraints", withObj(catCol{"is_disabled", "bit"}, catCol{"is_not_for_replication", "bit"},
		catCol{"is_not_trusted", "bit"}, catCol{"parent_column_id", "int"}, catCol{"definition", "nvarchar(max)?"},
		catCol{"uses_database_collation", "bit?"}, catCol{"is_system_named", "bit"}), ccs))
	add(db.catTable("sys", "sequences", withObj(catCol{"start_value", "sql_variant"}, catCol{"increment", "sql_variant"},
		catCol{"minimum_value", "sql_variant?"}, catCol{"maximum_value", "sql_variant?"}, catCol{"is_cycling", "bit?"},
		catCol{"is_cached", "bit?"}, catCol{"cache_size", "int?"}, catCol{"system_type_id", "tinyint"},
		catCol{"user_type_id", "int"}, catCol{"precision", "tinyint"}, catCol{"scale", "tinyint"},
		catCol{"current_value", "sql_variant"}, catCol{"is_exhausted", "bit"}, catCol{"last_used_value", "sql_variant?"}), seqs))

	// sys.columns, and the views that extend it: sys.identity_columns and
	// sys.computed_columns.
	colCols := []catCol{{"object_id", "int"}, {"name", "sysname?"}, {"column_id", "int"},
		{"system_type_id", "tinyint"}, {"user_type_id", "int"}, {"max_length", "smallint"}, {"precision", "tinyint"},
		{"scale", "tinyint"}, {"collation_name", "sysname?"}, {"is_nullable", "bit?"}, {"is_ansi_padded", "bit"},
		{"is_rowguidcol", "bit"}, {"is_identity", "bit"}, {"is_computed", "bit"}, {"is_filestream", "bit"},
		{"is_replicated", "bit?"}, {"is_non_sql_subscribed", "bit?"}, {"is_merge_published", "bit?"},
		{"is_dts_replicated", "bit?"}, {"is_xml_document", "bit"}, {"xml_collection_id", "int"},
		{"default_object_id", "int"}, {"rule_object_id", "int"}, {"is_sparse", "bit?"}, {"is_column_set", "bit?"},
		{"generated_always_type", "tinyint?"}, {"generated_always_type_desc", "nvarchar(60)?"},
		{"encryption_type", "int?"}, {"encryption_type_desc", "nvarchar(64)?"}, {"encryption_algorithm_name", "sysname?"},
		{"column_encryption_key_id", "int?"}, {"column_encryption_key_database_name", "sysname?"},
		{"is_hidden", "bit?"}, {"is_masked", "bit?"}}
	defID := map[[2]int64]int64{}
	for _, d := range defs {
		defID[[2]int64{int64(d.t.ObjectID), int64(d.col)}] = d.id
	}
	colRow := func(t *Table, c int) []any {
		m := t.meta[c]
		st := sysTypeOf(m.decl)
		var coll any
		if ti := t.Columns[c].Type; ti.Collation != (decode.Collation{}) {
			coll, _ = CollationName(ti.Collation)
		}
		name := t.Columns[c].Name
		_, computed := t.Computed[name]
		return []any{int64(t.ObjectID), name, int64(c + 1), st.systemTypeID, st.userTypeID,
			int64(m.sysMax), int64(m.sysPrec), int64(m.sysScale), coll, m.nullable, true, false,
			strings.EqualFold(name, t.Identity) && t.Identity != "", computed, false, false, false, false, false,
			false, int64(0), defID[[2]int64{int64(t.ObjectID), int64(c)}], int64(0), false, false,
			int64(0), "NOT_APPLICABLE", nil, nil, nil, nil, nil, false, false}
	}
	var scols, idcols, compcols [][]any
	for _, t := range relations {
		for c := range t.Columns {
			scols = append(scols, colRow(t, c))
			name := t.Columns[c].Name
			if comp, ok := t.Computed[name]; ok {
				compcols = append(compcols, append(colRow(t, c), comp.Definition, false, comp.Persisted))
			}
			if t.Identity == "" || !strings.EqualFold(name, t.Identity) {
				continue
			}
			// sql_variant holds its base value in the fixed-length form,
			// in the column's own type: decimal(12,0) for a decimal(12,0)
			// identity.
			vt := decode.FixedForm(t.Columns[c].Type)
			iv := func(v int64) any {
				if vt.Kind() == decode.KindDecimal {
					d := dec(v)
					d.Precision, d.Scale = vt.Precision, vt.Scale
					return decode.Variant{Type: vt, Value: d}
				}
				return decode.Variant{Type: vt, Value: v}
			}
			seed, incr, last, ok := t.IdentityValues()
			var lastV any
			if ok {
				lastV = iv(last)
			}
			idcols = append(idcols, append(colRow(t, c), iv(seed), iv(incr), lastV, false))
		}
	}
	add(db.catTable("sys", "columns", colCols, scols))
	add(db.catTable("sys", "identity_columns", append(append([]catCol(nil), colCols...), catCol{"seed_value", "sql_variant?"},
		catCol{"increment_value", "sql_variant?"}, catCol{"last_value", "sql_variant?"}, catCol{"is_not_for_replication", "bit?"}), idcols))
	add(db.catTable("sys", "computed_columns", append(append([]catCol(nil), colCols...), catCol{"definition", "nvarchar(max)?"},
		catCol{"uses_database_collation", "bit?"}, catCol{"is_persisted", "bit"}), compcols))

	// sys.types
	rows = nil
	for _, st := range sysTypes {
		var coll any
		if st.decl.Kind.HasCollation() {
			coll = "SQL_Latin1_General_CP1_CI_AS"
		}
		k := st.decl.Kind
		nullable := k != decode.KindRowVersion && st.alias != "sysname"
		assembly := k == decode.KindGeography || k == decode.KindGeometry || k == decode.KindHierarchyID
		rows = append(rows, []any{st.name(), st.systemTypeID, st.userTypeID, int64(4), nil, st.maxLength, st.precision,
			st.scale, coll, nullable, false, assembly, int64(0), int64(0), false})
	}
	add(db.catTable("sys", "types", []catCol{{"name", "sysname"}, {"system_type_id", "tinyint"}, {"user_type_id", "int"},
		{"schema_id", "int"}, {"principal_id", "int?"}, {"max_length", "smallint"}, {"precision", "tinyint"},
		{"scale", "tinyint"}, {"collation_name", "sysname?"}, {"is_nullable", "bit?"}, {"is_user_defined", "bit"},
		{"is_assembly_type", "bit"}, {"default_object_id", "int"}, {"rule_object_id", "int"}, {"is_table_type", "bit"}}, rows))

	// sys.indexes, sys.index_columns, sys.partitions
	var idx, icols, parts [][]any
	partID := int64(72057594043170816)
	for _, t := range db.tables {
		oid := int64(t.ObjectID)
		hasClustered := false
		for _, ix := range t.Indexes {
			if ix.Clustered {
				hasClustered = true
			}
		}
		addPart := func(indexID int64) {
			parts = append(parts, []any{partID, oid, indexID, int64(1), partID, t.Rows, int64(0), int64(0), "NONE"})
			partID += 65536
		}
		if !hasClustered {
			idx = append(idx, []any{oid, nil, int64(0), int64(0), "HEAP", false, int64(1), false, false, false,
				int64(0), false, false, false, true, true, false, nil})
			addPart(0)
		}
		for _, ci := range indexIDs(t) {
			ix := ci.ix
			typ, desc := int64(2), "NONCLUSTERED"
			if ix.Clustered {
				typ, desc = 1, "CLUSTERED"
			}
			var filter any
			if ix.Filter != "" {
				filter = ix.Filter
			}
			idx = append(idx, []any{oid, ix.Name, ci.id, typ, desc, ix.Unique, int64(1), false, ix.PrimaryKey, ix.UniqueConstraint,
				int64(0), false, false, false, true, true, ix.Filter != "", filter})
			addPart(ci.id)
			n := int64(1)
			for k, col := range ix.Columns {
				desc := k < len(ix.Descending) && ix.Descending[k]
				icols = append(icols, []any{oid, ci.id, n, int64(t.ColumnIndex(col) + 1), int64(k + 1), int64(0), desc, false})
				n++
			}
			for _, col := range ix.Included {
				icols = append(icols, []any{oid, ci.id, n, int64(t.ColumnIndex(col) + 1), int64(0), int64(0), false, true})
				n++
			}
		}
	}
	add(db.catTable("sys", "indexes", []catCol{{"object_id", "int"}, {"name", "sysname?"}, {"index_id", "int"},
		{"type", "tinyint"}, {"type_desc", "nvarchar(60)?"}, {"is_unique", "bit?"}, {"data_space_id", "int?"},
		{"ignore_dup_key", "bit?"}, {"is_primary_key", "bit?"}, {"is_unique_constraint", "bit?"}, {"fill_factor", "tinyint"},
		{"is_padded", "bit?"}, {"is_disabled", "bit?"}, {"is_hypothetical", "bit?"}, {"allow_row_locks", "bit?"},
		{"allow_page_locks", "bit?"}, {"has_filter", "bit?"}, {"filter_definition", "nvarchar(max)?"}}, idx))
	add(db.catTable("sys", "index_columns", []catCol{{"object_id", "int"}, {"index_id", "int"}, {"index_column_id", "int"},
		{"column_id", "int"}, {"key_ordinal", "tinyint"}, {"partition_ordinal", "tinyint"}, {"is_descending_key", "bit?"},
		{"is_included_column", "bit?"}}, icols))
	add(db.catTable("sys", "partitions", []catCol{{"partition_id", "bigint"}, {"object_id", "int"}, {"index_id", "int"},
		{"partition_number", "int"}, {"hobt_id", "bigint"}, {"rows", "bigint?"}, {"filestream_filegroup_id", "smallint"},
		{"data_compression", "tinyint"}, {"data_compression_desc", "nvarchar(60)?"}}, parts))

	// sys.default_constraints
	rows = nil
	for _, d := range defs {
		r := obj(defaultName(d.t, d.col), d.id, schemaID(d.t.Schema), int64(d.t.ObjectID), "D ", "DEFAULT_CONSTRAINT")
		rows = append(rows, append(r, int64(d.col+1), d.def, false))
	}
	add(db.catTable("sys", "default_constraints", withObj(catCol{"parent_column_id", "int"},
		catCol{"definition", "nvarchar(max)?"}, catCol{"is_system_named", "bit"}), rows))

	// sys.foreign_keys and sys.foreign_key_columns
	var fkr, fkc [][]any
	for _, f := range fks {
		ref, _ := db.Table(f.fk.RefSchema, f.fk.RefTable)
		key, _ := keyIndex(ref, f.fk.RefColumns)
		r := obj(f.fk.Name, f.id, schemaID(f.t.Schema), int64(f.t.ObjectID), "F ", "FOREIGN_KEY_CONSTRAINT")
		fkr = append(fkr, append(r, int64(ref.ObjectID), key.id, false, false, false,
			fkActions[f.fk.OnDelete], f.fk.OnDelete, fkActions[f.fk.OnUpdate], f.fk.OnUpdate, false))
		for k, col := range f.fk.Columns {
			fkc = append(fkc, []any{f.id, int64(k + 1), int64(f.t.ObjectID), int64(f.t.ColumnIndex(col) + 1),
				int64(ref.ObjectID), int64(ref.ColumnIndex(f.fk.RefColumns[k]) + 1)})
		}
	}
	add(db.catTable("sys", "foreign_keys", withObj(catCol{"referenced_object_id", "int?"},
		catCol{"key_index_id", "int?"}, catCol{"is_disabled", "bit"}, catCol{"is_not_for_replication", "bit"},
		catCol{"is_not_trusted", "bit"}, catCol{"delete_referential_action", "tinyint?"},
		catCol{"delete_referential_action_desc", "nvarchar(60)?"}, catCol{"update_referential_action", "tinyint?"},
		catCol{"update_referential_action_desc", "nvarchar(60)?"}, catCol{"is_system_named", "bit"}), fkr))
	add(db.catTable("sys", "foreign_key_columns", []catCol{{"constraint_object_id", "int"}, {"constraint_column_id", "int"},
		{"parent_object_id", "int"}, {"parent_column_id", "int"}, {"referenced_object_id", "int"},
		{"referenced_column_id", "int"}}, fkc))

	db.catalog = views
	db.catByNm = map[string]*Table{}
	for _, v := range views {
		db.catByNm[strings.ToLower(v.Schema+"."+v.Name)] = v
	}
}

// defaultName is the name of a default constraint (DF_table_column).
func defaultName(t *Table, col int) string { return "DF_" + t.Name + "_" + t.Columns[col].Name }
