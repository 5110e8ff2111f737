package postgres

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

// PostgreSQL type OIDs of the built-in types the sink writes (pg_type.dat).
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidJSON        = 114
	oidXML         = 142
	oidFloat4      = 700
	oidFloat8      = 701
	oidFloat4Array = 1021
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// Type is a PostgreSQL column type: its OID, its type modifier (the n of
// varchar(n), the precision and scale of numeric, the fraction digits of
// timestamp; -1 when none) and its SQL spelling.
type Type struct {
	OID    uint32
	Typmod int32
	SQL    string
}

// typeNames are the built-in types a target column may have, by the names
// SQL and format_type spell them.
var typeNames = map[string]uint32{
	"boolean": oidBool, "bool": oidBool,
	"smallint": oidInt2, "int2": oidInt2,
	"integer": oidInt4, "int": oidInt4, "int4": oidInt4,
	"bigint": oidInt8, "int8": oidInt8,
	"real": oidFloat4, "float4": oidFloat4,
	"double precision": oidFloat8, "float8": oidFloat8,
	"numeric": oidNumeric, "decimal": oidNumeric,
	"text":    oidText,
	"varchar": oidVarchar, "character varying": oidVarchar,
	"char": oidBpchar, "character": oidBpchar, "bpchar": oidBpchar,
	"bytea": oidBytea, "uuid": oidUUID, "date": oidDate,
	"time": oidTime, "time without time zone": oidTime,
	"timestamp": oidTimestamp, "timestamp without time zone": oidTimestamp,
	"timestamptz": oidTimestamptz, "timestamp with time zone": oidTimestamptz,
	"json": oidJSON, "jsonb": oidJSONB, "xml": oidXML,
	"real[]": oidFloat4Array, "float4[]": oidFloat4Array,
}

var typeRE = regexp.MustCompile(`^([a-z][a-z0-9 ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*(\[\])?$`)

// ParseType reads a type as a column override or format_type spells it,
// e.g. "numeric(38,10)", "varchar(50)", "timestamp(3)", "real[]",
// "timestamp(6) with time zone". Only the built-in types the sink can
// write are accepted.
func ParseType(s string) (Type, error) {
	low := strings.ToLower(strings.Join(strings.Fields(s), " "))
	// format_type puts the modifier inside: "timestamp(3) without time zone".
	for _, suffix := range []string{" without time zone", " with time zone"} {
		if base, ok := strings.CutSuffix(low, suffix); ok {
			if i := strings.IndexByte(base, '('); i > 0 {
				low = base[:i] + suffix + base[i:]
			}
		}
	}
	m := typeRE.FindStringSubmatch(low)
	if m == nil {
		return Type{}, fmt.Errorf("type %q: not a type name such as numeric(38,10), varchar(50) or timestamp(3)", s)
	}
	name := m[1]
	if m[4] != "" {
		name += "[]"
	}
	oid, ok := typeNames[name]
	if !ok {
		return Type{}, fmt.Errorf("type %q: the sink writes boolean, smallint, integer, bigint, real, double precision, numeric, text, varchar, char, bytea, uuid, date, time, timestamp, timestamptz, json, jsonb, xml and real[]", s)
	}
	t := Type{OID: oid, Typmod: -1}
	a, _ := strconv.Atoi(m[2])
	b, _ := strconv.Atoi(m[3])
	switch {
	case m[2] == "":
	case oid == oidNumeric:
		if a < 1 || a > 1000 || b > a {
			return Type{}, fmt.Errorf("type %q: numeric(p,s) needs 1 <= p <= 1000 and s <= p", s)
		}
		t.Typmod = int32(a<<16|b) + 4
	case oid == oidVarchar || oid == oidBpchar:
		if m[3] != "" || a < 1 || a > 10485760 {
			return Type{}, fmt.Errorf("type %q: a length of 1 .. 10485760", s)
		}
		t.Typmod = int32(a) + 4
	case oid == oidTime || oid == oidTimestamp || oid == oidTimestamptz:
		if m[3] != "" || a > 6 {
			return Type{}, fmt.Errorf("type %q: PostgreSQL keeps at most 6 fraction digits", s)
		}
		t.Typmod = int32(a)
	default:
		return Type{}, fmt.Errorf("type %q takes no modifier", s)
	}
	t.SQL = typeSQL(t.OID, t.Typmod)
	return t, nil
}

// typeSQL spells a type as the sink's DDL writes it.
func typeSQL(oid uint32, typmod int32) string {
	mod := ""
	switch oid {
	case oidNumeric:
		if typmod >= 4 {
			mod = fmt.Sprintf("(%d,%d)", (typmod-4)>>16, (typmod-4)&0xFFFF)
		}
	case oidVarchar, oidBpchar:
		if typmod >= 4 {
			mod = fmt.Sprintf("(%d)", typmod-4)
		}
	case oidTime, oidTimestamp, oidTimestamptz:
		if typmod >= 0 {
			mod = fmt.Sprintf("(%d)", typmod)
		}
	}
	switch oid {
	case oidBool:
		return "boolean"
	case oidInt2:
		return "smallint"
	case oidInt4:
		return "integer"
	case oidInt8:
		return "bigint"
	case oidFloat4:
		return "real"
	case oidFloat8:
		return "double precision"
	case oidNumeric:
		return "numeric" + mod
	case oidText:
		return "text"
	case oidVarchar:
		return "varchar" + mod
	case oidBpchar:
		return "char" + mod
	case oidBytea:
		return "bytea"
	case oidUUID:
		return "uuid"
	case oidDate:
		return "date"
	case oidTime:
		return "time" + mod
	case oidTimestamp:
		return "timestamp" + mod
	case oidTimestamptz:
		return "timestamptz" + mod
	case oidJSON:
		return "json"
	case oidJSONB:
		return "jsonb"
	case oidXML:
		return "xml"
	case oidFloat4Array:
		return "real[]"
	}
	return fmt.Sprintf("type %d", oid)
}

func mkType(oid uint32, typmod int32) Type {
	return Type{OID: oid, Typmod: typmod, SQL: typeSQL(oid, typmod)}
}

// numericScale is the scale of a numeric typmod, -1 when unconstrained.
func numericScale(typmod int32) int {
	if typmod < 4 {
		return -1
	}
	return int((typmod - 4) & 0xFFFF)
}

// encoding is how the sink writes one field.
type encoding uint8

const (
	encNone encoding = iota
	encBool
	encInt2
	encInt4
	encInt8
	encFloat4
	encFloat8
	encNumeric
	encDate
	encTime
	encTimestamp
	encTimestamptz
	encUUID
	encBytea
	encText // UTF-8 text: text, varchar, char, json, xml; typed values as their text
	encJSONB
	encFloat4Array
)

// DefaultType is the PostgreSQL type a source column maps to by default
// (the type mapping of the README), whether the mapping loses anything
// and what. It is what the sink's DDL creates; companion columns
// (offset, variant type) are added by MapColumns.
func DefaultType(c *decode.Column) (t Type, lossy bool, why string) {
	ti := &c.Type
	switch k := c.Kind(); k {
	case decode.KindBit:
		return mkType(oidBool, -1), false, ""
	case decode.KindTinyInt, decode.KindSmallInt:
		return mkType(oidInt2, -1), false, ""
	case decode.KindInt:
		return mkType(oidInt4, -1), false, ""
	case decode.KindBigInt:
		return mkType(oidInt8, -1), false, ""
	case decode.KindReal:
		return mkType(oidFloat4, -1), false, ""
	case decode.KindFloat:
		return mkType(oidFloat8, -1), false, ""
	case decode.KindDecimal:
		return mkType(oidNumeric, int32(int(ti.Precision)<<16|int(ti.Scale))+4), false, ""
	case decode.KindMoney:
		return mkType(oidNumeric, int32(19<<16|4)+4), false, ""
	case decode.KindSmallMoney:
		return mkType(oidNumeric, int32(10<<16|4)+4), false, ""
	case decode.KindDate:
		return mkType(oidDate, -1), false, ""
	case decode.KindTime:
		return mkType(oidTime, int32(min(ti.Scale, 6))), ti.Scale == 7, sub100ns
	case decode.KindSmallDateTime:
		return mkType(oidTimestamp, 0), false, ""
	case decode.KindDateTime:
		return mkType(oidTimestamp, 3), false, ""
	case decode.KindDateTime2:
		return mkType(oidTimestamp, int32(min(ti.Scale, 6))), ti.Scale == 7, sub100ns
	case decode.KindDateTimeOffset:
		return mkType(oidTimestamptz, int32(min(ti.Scale, 6))), ti.Scale == 7, sub100ns
	case decode.KindChar, decode.KindNChar:
		if ti.Size == decode.MaxVarLen {
			return mkType(oidText, -1), false, ""
		}
		n := int32(ti.Size)
		if k == decode.KindNChar {
			n /= 2
		}
		// char(n) only where every value has exactly n characters: a
		// single-byte code page. Elsewhere (nchar with surrogate pairs,
		// double-byte code pages, UTF-8) n counts units, not characters,
		// and char(n) would pad the value with spaces it never had.
		if k == decode.KindChar && singleByte(ti.Collation) {
			return mkType(oidBpchar, max(n, 1)+4), false, ""
		}
		return mkType(oidVarchar, max(n, 1)+4), false, ""
	case decode.KindVarChar, decode.KindNVarChar:
		if ti.Size == decode.MaxVarLen {
			return mkType(oidText, -1), false, ""
		}
		n := int32(ti.Size)
		if k == decode.KindNVarChar {
			n /= 2
		}
		// varchar(n) counts characters: never fewer than SQL Server's
		// n bytes or UTF-16 units hold.
		return mkType(oidVarchar, max(n, 1)+4), false, ""
	case decode.KindText, decode.KindNText:
		return mkType(oidText, -1), false, ""
	case decode.KindUniqueIdentifier:
		return mkType(oidUUID, -1), false, ""
	case decode.KindXML:
		return mkType(oidXML, -1), false, ""
	case decode.KindJSON:
		return mkType(oidJSONB, -1), false, ""
	case decode.KindVector:
		return mkType(oidFloat4Array, -1), false, ""
	case decode.KindVariant:
		return mkType(oidText, -1), false, ""
	case decode.KindBinary, decode.KindVarBinary, decode.KindImage, decode.KindRowVersion,
		decode.KindGeography, decode.KindGeometry, decode.KindHierarchyID, decode.KindUDT:
		return mkType(oidBytea, -1), false, ""
	}
	return Type{}, false, ""
}

const sub100ns = "PostgreSQL keeps microseconds: the 100 ns digit is truncated (never rounded into the next second, day or year)"

// singleByte reports whether char data under c has one byte per character.
func singleByte(c decode.Collation) bool {
	if c.UTF8() {
		return false
	}
	switch c.CodePage() {
	case 932, 936, 949, 950, 65001, 0:
		return false
	}
	return true
}

// encodingFor is how values of a source column are written into a target
// column of type t, or encNone when the sink cannot write them there
// exactly (the error says why).
func encodingFor(c *decode.Column, t Type) (encoding, error) {
	k := c.Kind()
	bad := func() (encoding, error) {
		return encNone, fmt.Errorf("a %s column cannot be loaded into %s", decode.SQLTypeName(c), t.SQL)
	}
	if t.OID == oidText || t.OID == oidVarchar || t.OID == oidBpchar {
		switch k.Class() {
		case decode.ClassBinary:
			return bad()
		}
		return encText, nil
	}
	enc, ok := classEncodings[k.Class()][t.OID]
	switch {
	case !ok:
		return bad()
	case enc == encFloat8 && k == decode.KindBigInt:
		// A float8 holds 53 bits: not every bigint.
		return bad()
	case enc == encFloat4 && k != decode.KindReal:
		return bad()
	case enc == encNumeric && (k.Class() == decode.ClassDecimal || k.Class() == decode.ClassMoney):
		scale := int(c.Type.Scale)
		if k.Class() == decode.ClassMoney {
			scale = 4
		}
		if s := numericScale(t.Typmod); s >= 0 && s < scale {
			return encNone, fmt.Errorf("%s holds %d fraction digits and %s %d: PostgreSQL would round the values", decode.SQLTypeName(c), scale, t.SQL, s)
		}
	}
	return enc, nil
}

// classEncodings is, for each class of source column, the target types
// (besides text, varchar and char, which take every class but binary as
// text) it loads into and the binary encoding that carries its values.
// encodingFor narrows three: float8 does not take bigint (53 bits),
// float4 takes only real, and numeric needs the source's fraction digits.
var classEncodings = map[decode.Class]map[uint32]encoding{
	decode.ClassBool:           {oidBool: encBool, oidInt2: encInt2, oidInt4: encInt4, oidInt8: encInt8},
	decode.ClassInteger:        {oidInt2: encInt2, oidInt4: encInt4, oidInt8: encInt8, oidNumeric: encNumeric, oidFloat8: encFloat8},
	decode.ClassFloat:          {oidFloat8: encFloat8, oidFloat4: encFloat4},
	decode.ClassDecimal:        {oidNumeric: encNumeric},
	decode.ClassMoney:          {oidNumeric: encNumeric},
	decode.ClassDate:           {oidDate: encDate, oidTimestamp: encTimestamp},
	decode.ClassTime:           {oidTime: encTime},
	decode.ClassDateTime:       {oidTimestamp: encTimestamp, oidTimestamptz: encTimestamptz},
	decode.ClassDateTimeOffset: {oidTimestamptz: encTimestamptz, oidTimestamp: encTimestamp},
	decode.ClassGUID:           {oidUUID: encUUID},
	decode.ClassText:           {oidJSON: encText, oidXML: encText, oidJSONB: encJSONB},
	decode.ClassBinary:         {oidBytea: encBytea},
	decode.ClassVector:         {oidFloat4Array: encFloat4Array},
}

// Column is one column of a target table and how a source column fills it.
type Column struct {
	// Name is the target column's name after renames and the identifier
	// policy (unquoted).
	Name string
	// Type is its PostgreSQL type.
	Type Type
	// NotNull is set when the source column cannot hold NULL.
	NotNull bool
	// Source is the index of the source column the values come from.
	Source int
	// SourceName is that column's name in the result set.
	SourceName string
	// Companion is "" for a column holding the source values, "offset" for
	// a datetimeoffset's offset in minutes and "type" for a sql_variant's
	// base type.
	Companion string
	// Lossy and Why say whether and how the mapping loses information.
	Lossy bool
	Why   string

	enc      encoding
	maxChars int // varchar(n)/char(n) of an existing table narrower than the source: checked per value
}

// ColumnRule renames a source column and/or overrides its type.
type ColumnRule struct {
	// Source is the source column's name (matched case-insensitively, as
	// SQL Server matches names).
	Source string `mapstructure:"source"`
	// Name is the target column's name (the identifier policy applies).
	Name string `mapstructure:"name"`
	// Type is the target type, e.g. "text", "numeric(20,4)", "bigint".
	Type string `mapstructure:"type"`
}

// MapOptions are the options the mapping depends on.
type MapOptions struct {
	// Identifiers is IdentLower (default) or IdentPreserve.
	Identifiers string
	// Rules rename columns and override types.
	Rules []ColumnRule
	// OffsetColumn adds "<name>__offset_minutes" smallint after each
	// datetimeoffset column.
	OffsetColumn bool
	// VariantTypeColumn adds "<name>__type" text after each sql_variant
	// column.
	VariantTypeColumn bool
}

// MapColumns is the mapping the sink creates tables from and encodes the
// COPY with, so DDL and data cannot drift: one target column per source
// column (plus companions), named by the rules and the identifier policy.
// Two target columns with one name are an error naming both sources.
func MapColumns(cols []decode.Column, o MapOptions) ([]Column, error) {
	rules := map[int]ColumnRule{}
	for _, r := range o.Rules {
		found := -1
		for i := range cols {
			if strings.EqualFold(cols[i].Name, r.Source) {
				found = i
				break
			}
		}
		if found < 0 {
			return nil, fmt.Errorf("columns: no source column %q (columns are %s)", r.Source, columnList(cols))
		}
		if _, dup := rules[found]; dup {
			return nil, fmt.Errorf("columns: %q has two rules", r.Source)
		}
		rules[found] = r
	}
	var out []Column
	for i := range cols {
		c := &cols[i]
		name := c.Name
		if name == "" {
			name = "column" + strconv.Itoa(i+1)
		}
		r := rules[i]
		if r.Name != "" {
			name = r.Name
		}
		name = FoldIdent(name, o.Identifiers)
		t, lossy, why := DefaultType(c)
		if t.OID == 0 {
			return nil, fmt.Errorf("column %q: type %s has no PostgreSQL mapping; convert it in the SELECT (convert in the job)", c.Name, decode.SQLTypeName(c))
		}
		if r.Type != "" {
			var err error
			if t, err = ParseType(r.Type); err != nil {
				return nil, fmt.Errorf("columns: %q: %w", r.Source, err)
			}
			lossy, why = overrideLoss(c, t)
		}
		enc, err := encodingFor(c, t)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		kind := c.Kind()
		col := Column{Name: name, Type: t, NotNull: !c.Nullable(), Source: i, SourceName: c.Name, Lossy: lossy, Why: why, enc: enc}
		if kind == decode.KindDateTimeOffset && enc == encTimestamptz && !o.OffsetColumn {
			col.Lossy = true
			col.Why = joinWhy(col.Why, "the original offset is dropped (the instant is kept); set offset_column: true to keep it")
		}
		if kind == decode.KindVariant && !o.VariantTypeColumn {
			col.Lossy = true
			col.Why = joinWhy(col.Why, "the value is stored as text and its base type is dropped; set variant_type_column: true to keep it")
		}
		out = append(out, col)
		if kind == decode.KindDateTimeOffset && enc == encTimestamptz && o.OffsetColumn {
			out = append(out, Column{Name: FoldIdent(name+"__offset_minutes", o.Identifiers), Type: mkType(oidInt2, -1),
				NotNull: !c.Nullable(), Source: i, SourceName: c.Name, Companion: "offset", enc: encInt2})
		}
		if kind == decode.KindVariant && o.VariantTypeColumn {
			out = append(out, Column{Name: FoldIdent(name+"__type", o.Identifiers), Type: mkType(oidText, -1),
				NotNull: !c.Nullable(), Source: i, SourceName: c.Name, Companion: "type", enc: encText})
		}
	}
	seen := map[string]int{}
	for i := range out {
		if j, dup := seen[out[i].Name]; dup {
			return nil, fmt.Errorf("target columns %s and %s would both be named %q: rename one with columns: [{source: ..., name: ...}]",
				describeTarget(&out[j]), describeTarget(&out[i]), out[i].Name)
		}
		seen[out[i].Name] = i
	}
	return out, nil
}

func describeTarget(c *Column) string {
	switch c.Companion {
	case "offset":
		return fmt.Sprintf("%q (the offset of source column %q)", c.Name, c.SourceName)
	case "type":
		return fmt.Sprintf("%q (the base type of source column %q)", c.Name, c.SourceName)
	}
	return fmt.Sprintf("%q (from source column %q)", c.Name, c.SourceName)
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// overrideLoss says what an override of c's type to t loses.
func overrideLoss(c *decode.Column, t Type) (bool, string) {
	k := c.Kind()
	switch {
	case t.OID == oidText || t.OID == oidVarchar || t.OID == oidBpchar:
		return false, ""
	case k.Class() == decode.ClassDecimal || k.Class() == decode.ClassMoney:
		if t.OID == oidFloat8 {
			return true, "a decimal stored as double precision keeps about 15 significant digits"
		}
	case k == decode.KindDateTimeOffset && t.OID == oidTimestamp:
		return true, "stored as the UTC time without zone; the offset is dropped"
	case k.HasScale() && c.Type.Scale == 7 && (t.OID == oidTime || t.OID == oidTimestamp || t.OID == oidTimestamptz):
		return true, sub100ns
	}
	if (t.OID == oidTime || t.OID == oidTimestamp || t.OID == oidTimestamptz) && t.Typmod >= 0 && k.HasScale() && int(c.Type.Scale) > int(t.Typmod) {
		return true, fmt.Sprintf("%s keeps %d fraction digits of %s's %d: the rest are truncated", t.SQL, t.Typmod, decode.SQLTypeName(c), c.Type.Scale)
	}
	return false, ""
}

func columnList(cols []decode.Column) string {
	names := make([]string, len(cols))
	for i := range cols {
		names[i] = strconv.Quote(cols[i].Name)
	}
	return strings.Join(names, ", ")
}

// Identifier policies.
const (
	// IdentLower folds names to lower case, so that they can be written
	// unquoted in SQL (PostgreSQL folds unquoted names to lower case).
	IdentLower = "lower"
	// IdentPreserve keeps names as the source spells them (quoted in SQL
	// whenever they are not all lower case).
	IdentPreserve = "preserve"
)

// maxIdentLen is PostgreSQL's NAMEDATALEN-1: longer names are truncated.
const maxIdentLen = 63

// FoldIdent applies the identifier policy to a name, and truncates it to
// 63 bytes (on a character boundary) as PostgreSQL would, so that names
// truncated into one are caught as a collision instead of by the server.
func FoldIdent(name, policy string) string {
	if policy != IdentPreserve {
		name = strings.ToLower(name)
	}
	if len(name) > maxIdentLen {
		n := maxIdentLen
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
		name = name[:n]
	}
	return name
}

// QuoteIdent writes a name as SQL needs it: as is when it is a lower-case
// identifier that is not a keyword PostgreSQL reserves, else in double
// quotes with embedded quotes doubled (what PostgreSQL's quote_ident does).
func QuoteIdent(name string) string {
	plain := name != ""
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = c == '_' || 'a' <= c && c <= 'z' || i > 0 && ('0' <= c && c <= '9' || c == '$')
	}
	if plain && !reservedKeywords[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// reservedKeywords are PostgreSQL 15's keywords that quote_ident quotes
// (every category but "unreserved": pg_get_keywords() catcode <> 'U').
var reservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization between bigint binary bit
	boolean both case cast char character check coalesce collate collation column concurrently constraint create cross
	current_catalog current_date current_role current_schema current_time current_timestamp current_user dec decimal
	default deferrable desc distinct do else end except exists extract false fetch float for foreign freeze from full
	grant greatest group grouping having ilike in initially inner inout int integer intersect interval into is isnull
	join lateral leading least left like limit localtime localtimestamp national natural nchar none normalize not
	notnull null nullif numeric offset on only or order out outer overlaps overlay placing position precision primary
	real references returning right row select session_user setof similar smallint some substring symmetric table
	tablesample then time timestamp to trailing treat trim true union unique user using values varchar variadic
	verbose when where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi
	xmlroot xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()

// Table is a target table: where the sink loads and the columns it loads.
type Table struct {
	Schema, Name string
	Columns      []Column
}

// QualifiedName is schema.name as SQL needs it.
func (t *Table) QualifiedName() string { return QuoteIdent(t.Schema) + "." + QuoteIdent(t.Name) }

// CreateSQL is the CREATE TABLE statement of the mapping: the DDL the sink
// runs, from the same columns the COPY writes.
func (t *Table) CreateSQL() string { return createSQL(t.QualifiedName(), t.Columns) }

func createSQL(qname string, cols []Column) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + qname + " (")
	for i := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(cols[i].Name) + " " + cols[i].Type.SQL)
		if cols[i].NotNull {
			b.WriteString(" NOT NULL")
		}
	}
	b.WriteString(")")
	return b.String()
}

// CopySQL is the COPY statement the sink streams the rows with.
func (t *Table) CopySQL() string { return copySQL(t.QualifiedName(), t.Columns, false) }

func copySQL(qname string, cols []Column, freeze bool) string {
	names := make([]string, len(cols))
	for i := range cols {
		names[i] = QuoteIdent(cols[i].Name)
	}
	opts := "FORMAT binary"
	if freeze {
		opts += ", FREEZE"
	}
	return "COPY " + qname + " (" + strings.Join(names, ", ") + ") FROM STDIN WITH (" + opts + ")"
}

// mappings describes a mapping for inspect.
func mappings(cols []decode.Column, mapped []Column) []sinks.ColumnMapping {
	out := make([]sinks.ColumnMapping, len(cols))
	for i := range mapped {
		m := &mapped[i]
		o := &out[m.Source]
		if m.Companion != "" {
			o.Target += " + " + m.Name + " " + m.Type.SQL
			continue
		}
		o.Target = m.Type.SQL
		o.Lossy, o.Why = m.Lossy, m.Why
	}
	return out
}
