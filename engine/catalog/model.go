package catalog

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// Database is what Load found: the selected tables (and views), and the
// sequences when asked for.
type Database struct {
	// Tables are the selected tables and views, ordered by schema, then name.
	Tables []*Table
	// Sequences are the sequence objects of the selected schemas.
	Sequences []Sequence
}

// Table looks a table or view up by schema and name, case-insensitively.
func (d *Database) Table(schema, name string) *Table {
	for _, t := range d.Tables {
		if strings.EqualFold(t.Schema, schema) && strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// Table is a table or a view.
type Table struct {
	ObjectID     int32
	Schema, Name string
	// View is set for a view; Definition is then its CREATE VIEW text
	// (empty when the view is encrypted).
	View       bool
	Definition string
	// Columns in column_id order.
	Columns []Column
	// PrimaryKey is the PRIMARY KEY constraint, nil when there is none.
	PrimaryKey *Key
	// Uniques are the UNIQUE constraints (unique indexes that are not
	// constraints are in Indexes only).
	Uniques []Key
	// Indexes are every index, the primary key's and unique constraints'
	// included, in index_id order; a heap has none.
	Indexes     []Index
	ForeignKeys []ForeignKey
	Checks      []Check
	// RowCount is the row count SQL Server keeps in sys.partitions (of the
	// heap or clustered index): cheap, maintained by the engine, possibly
	// a little stale while writes run. -1 for a view.
	RowCount int64
}

// FullName is schema.name, unquoted.
func (t *Table) FullName() string { return t.Schema + "." + t.Name }

// QuotedName is [schema].[name], for SQL text.
func (t *Table) QuotedName() string { return quoteName(t.Schema, t.Name) }

// Column returns the column named name (case-insensitive), or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i]
		}
	}
	return nil
}

// Clustered returns the clustered index (a clustered columnstore index
// included), or nil for a heap.
func (t *Table) Clustered() *Index {
	for i := range t.Indexes {
		if t.Indexes[i].ID == 1 {
			return &t.Indexes[i]
		}
	}
	return nil
}

// ClusteredKey returns the key columns of the clustered rowstore index, in
// order, or nil for a heap or a clustered columnstore index (which has no
// key order): the order a key-range partition can follow.
func (t *Table) ClusteredKey() []IndexKey {
	if ix := t.Clustered(); ix != nil && ix.Type == IndexClustered {
		return ix.Keys
	}
	return nil
}

// Column is one column of a table or view.
type Column struct {
	// ID is sys.columns.column_id (unique in the table, not necessarily
	// dense).
	ID   int32
	Name string
	// Wire is the column as the server describes it in a result set
	// (COLMETADATA of SELECT * FROM the table): TYPE_INFO with collation,
	// CLR type name, flags. It is the zero Column for a hidden column.
	Wire decode.Column
	// Hidden columns are not returned by SELECT * (the period columns of
	// a temporal table declared HIDDEN, graph internals); the engine's
	// default column list leaves them out as SELECT * would.
	Hidden bool
	// TypeName is the column's type as declared (sys.types via
	// user_type_id): an alias type keeps its own name. BaseType is the
	// system type under it ("nvarchar" for sysname; a CLR type such as
	// "geography" is its own base).
	TypeName, BaseType string
	// MaxLength is sys.columns.max_length: bytes (so nvarchar(10) is 20),
	// -1 for (max) and xml.
	MaxLength        int
	Precision, Scale int
	// Collation is the collation name of a character column, else "".
	Collation string
	Nullable  bool
	Identity  *Identity
	Computed  *Computed
	Default   *Default
}

// Kind is the column's logical type: from the wire description when there
// is one, else from its base type name.
func (c *Column) Kind() decode.Kind {
	if c.Wire.Type.Type != 0 {
		return c.Wire.Kind()
	}
	return kindOfName(c.BaseType)
}

// kindOfName maps a sys.types name to its kind; a name decode does not
// know is a CLR type of the database's own.
func kindOfName(name string) decode.Kind {
	if d, ok := decode.LookupDecl(name); ok {
		return d.Kind
	}
	return decode.KindUDT
}

// Decl is the column's declared type from the catalog's facts (base type,
// max_length in bytes, precision, scale), in decode's type model.
func (c *Column) Decl() decode.Decl {
	d, ok := decode.LookupDecl(c.BaseType)
	if !ok {
		return decode.Decl{Kind: decode.KindUDT, UDT: c.BaseType}
	}
	switch k := d.Kind; {
	case k == decode.KindDecimal:
		d.Precision, d.Scale = uint8(c.Precision), uint8(c.Scale)
	case k.HasScale():
		d.Scale = uint8(c.Scale)
	case k == decode.KindVector:
		d.Length = (c.MaxLength - 8) / 4 // an 8-byte header, then 4 bytes per float32
	case k.HasLength():
		d.Max = c.MaxLength < 0
		if !d.Max {
			d.Length = c.MaxLength
			if k.IsUnicode() {
				d.Length /= 2 // max_length counts bytes
			}
		}
	}
	return d
}

// SQLType is the column's type as T-SQL declares it, from the catalog:
// "int", "decimal(12,2)", "nvarchar(50)", "varbinary(max)",
// "datetime2(3)"; an alias type is shown by its own name.
func (c *Column) SQLType() string {
	if !strings.EqualFold(c.TypeName, c.BaseType) && c.TypeName != "" {
		return c.TypeName
	}
	return c.Decl().String()
}

// Identity is an identity column's definition and state
// (sys.identity_columns). The values are exact integers of the column's
// type, which may be decimal(38,0).
type Identity struct {
	Seed, Increment *big.Int
	// Last is the last value generated, nil when none was (a new, never
	// inserted table). It may exceed the largest value in the table: rows
	// deleted, inserts rolled back.
	Last *big.Int
}

// Computed is a computed column's expression.
type Computed struct {
	// Definition is the expression as SQL Server stores it, e.g.
	// "([quantity]*[unit_cost])".
	Definition string
	Persisted  bool
}

// Default is a column's DEFAULT constraint.
type Default struct {
	Name string
	// Definition is the expression as SQL Server stores it, wrapped in
	// parentheses: "(getdate())", "((0))", "(N'new')",
	// "(NEXT VALUE FOR [s].[seq])".
	Definition string
}

// Expr is the default's expression without the parentheses SQL Server
// wraps every stored default in: "getdate()", "0", "N'new'".
func (d *Default) Expr() string { return StripParens(d.Definition) }

// StripParens removes the parentheses that enclose all of s, as SQL Server
// wraps stored default, check and computed expressions ("((0))" is "0",
// "(getdate())" is "getdate()"); "(a)+(b)" is left alone, since its first
// and last parentheses do not pair.
func StripParens(s string) string {
	for {
		s = strings.TrimSpace(s)
		if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' || !enclosing(s) {
			return s
		}
		s = s[1 : len(s)-1]
	}
}

// enclosing reports whether the ( at s[0] closes at the end of s; text in
// quotes and brackets does not count.
func enclosing(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'': // to the closing quote; '' is a quote inside
			if i = closing(s, i, '\''); i < 0 {
				return false
			}
		case '[': // to the closing bracket; ]] is a bracket inside
			if i = closing(s, i, ']'); i < 0 {
				return false
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(s)-1 {
				return false
			}
		}
	}
	return depth == 0
}

// Key is a PRIMARY KEY or UNIQUE constraint.
type Key struct {
	Name    string
	Columns []string
	// IndexID is the index that enforces the constraint (an entry of
	// Table.Indexes); Clustered says whether it is the clustered index.
	IndexID   int32
	Clustered bool
}

// IndexType is sys.indexes.type.
type IndexType uint8

// Index types as SQL Server numbers them.
const (
	IndexHeap                    IndexType = 0
	IndexClustered               IndexType = 1
	IndexNonclustered            IndexType = 2
	IndexXML                     IndexType = 3
	IndexSpatial                 IndexType = 4
	IndexClusteredColumnstore    IndexType = 5
	IndexNonclusteredColumnstore IndexType = 6
	IndexNonclusteredHash        IndexType = 7
)

var indexTypeNames = [...]string{"heap", "clustered", "nonclustered", "xml", "spatial", "clustered columnstore",
	"nonclustered columnstore", "nonclustered hash"}

func (t IndexType) String() string { return nameOf(indexTypeNames[:], uint8(t), "index type") }

// nameOf is names[v], or what and the number for a value SQL Server may
// add after this was written.
func nameOf(names []string, v uint8, what string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s %d", what, v)
}

// Index is one index of a table.
type Index struct {
	// ID is sys.indexes.index_id: 1 is the clustered index, 2 and up the
	// others.
	ID   int32
	Name string
	Type IndexType
	// Unique indexes include those of PRIMARY KEY and UNIQUE constraints.
	Unique, PrimaryKey, UniqueConstraint, Disabled bool
	// Filter is the predicate of a filtered index as SQL Server stores it,
	// e.g. "([quantity]<(10))"; "" for none.
	Filter string
	// Keys are the key columns in key order; Include the INCLUDE columns.
	Keys    []IndexKey
	Include []string
}

// IndexKey is one key column of an index.
type IndexKey struct {
	Column     string
	Descending bool
}

// Action is a foreign key's ON DELETE or ON UPDATE action.
type Action uint8

// Referential actions as sys.foreign_keys numbers them.
const (
	NoAction   Action = 0
	Cascade    Action = 1
	SetNull    Action = 2
	SetDefault Action = 3
)

var actionNames = [...]string{"NO ACTION", "CASCADE", "SET NULL", "SET DEFAULT"}

// String is the action as SQL spells it: "NO ACTION", "CASCADE", ...
func (a Action) String() string { return nameOf(actionNames[:], uint8(a), "action") }

// ForeignKey is a FOREIGN KEY constraint.
type ForeignKey struct {
	Name string
	// Columns and RefColumns pair up in constraint order.
	Columns             []string
	RefSchema, RefTable string
	RefColumns          []string
	OnDelete, OnUpdate  Action
	// Disabled constraints are not enforced; NotTrusted ones were not
	// checked against the existing rows (created or re-enabled WITH
	// NOCHECK).
	Disabled, NotTrusted bool
}

// Check is a CHECK constraint.
type Check struct {
	Name string
	// Column is the column of a column-level constraint, "" for a
	// table-level one.
	Column string
	// Definition is the expression as SQL Server stores it, e.g.
	// "([quantity]>=(0))".
	Definition           string
	Disabled, NotTrusted bool
}

// Sequence is a sequence object (sys.sequences).
type Sequence struct {
	ObjectID     int32
	Schema, Name string
	// TypeName is the sequence's declared type ("bigint", "decimal", an
	// alias type); Precision its precision.
	TypeName  string
	Precision int
	Start     *big.Int
	Increment *big.Int
	// Min and Max are the bounds (the type's own when none was declared).
	Min, Max *big.Int
	Cycle    bool
	// Cache is the declared cache size; 0 with Cached set means the
	// server's default size, Cached false means NO CACHE.
	Cached bool
	Cache  int64
	// Current is sys.sequences.current_value: the last value handed out,
	// or the start value when none was.
	Current *big.Int
	// LastUsed is sys.sequences.last_used_value: nil when no value was
	// ever handed out. Only it tells a sequence that handed out its start
	// value from one never used (current_value is the start value for
	// both). LastUsedUnknown is set when the server has no such column
	// (before SQL Server 2017).
	LastUsed        *big.Int
	LastUsedUnknown bool
}
