package sampledb

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tdsextract/tdsextract/decode"
)

// Config configures a sample database.
type Config struct {
	// Seed selects the data: the same seed always gives the same rows.
	Seed int64
	// Rows overrides row counts per table, keyed "schema.table" (or just
	// "table" for schema dbo), case-insensitive, e.g. {"dbo.poc48": 1e9}.
	// Negative counts are ignored. A table of OptionalTables exists only
	// when Rows names it.
	Rows map[string]int64
	// Database is the database name (default "sample").
	Database string
	// Scale multiplies the default row counts (0 means 1); per-table
	// overrides in Rows are taken as given. type_matrix is not scaled.
	Scale float64
	// NoSnapshot turns the database's ALLOW_SNAPSHOT_ISOLATION off (SQL
	// Server's default): a statement under SNAPSHOT isolation then fails
	// with error 3952, as on SQL Server.
	NoSnapshot bool
}

// Validate checks that every key of Rows names a generated table whose row
// count can be set (type_matrix's rows are fixed by its content) and that
// no count is negative: New would otherwise ignore them silently.
func (c *Config) Validate() error {
	var bad []string
	for k, v := range c.Rows {
		key := strings.ToLower(strings.TrimSpace(k))
		if !strings.Contains(key, ".") {
			key = "dbo." + key
		}
		n, known := DefaultRows[key]
		if slices.Contains(OptionalTables, key) {
			n, known = -1, true // rows as given
		}
		switch {
		case !known:
			msg := fmt.Sprintf("%q: no such table", k)
			for _, name := range TableNames() {
				if _, bare, _ := strings.Cut(name, "."); !strings.Contains(k, ".") && bare == key[len("dbo."):] {
					msg += " (did you mean " + name + "?)"
				}
			}
			bad = append(bad, msg)
		case n == 0:
			bad = append(bad, fmt.Sprintf("%q: its rows are fixed by its content", k))
		case v < 0:
			bad = append(bad, fmt.Sprintf("%q: a row count must not be negative", k))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("sampledb: rows %s (tables: %s; schema dbo may be left out)", strings.Join(bad, ", "), strings.Join(TableNames(), ", "))
}

// TableNames lists the generated tables' qualified names, sorted.
func TableNames() []string {
	names := make([]string, 0, len(DefaultRows))
	for k := range DefaultRows {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Default row counts (quick tests); override with Config.Rows.
var DefaultRows = map[string]int64{
	"dbo.poc48":           100000,
	"dbo.odbc5":           200000,
	"dbo.wide601":         2000,
	"dbo.lob":             2000,
	"dbo.lob_nvarchar":    200,
	"dbo.temporal":        100000,
	"dbo.lineitem":        60000,
	"sales.customers":     1000,
	"sales.products":      200,
	"sales.orders":        5000,
	"sales.order_lines":   20000,
	"dbo.text_cp1252":     64,
	"dbo.text_cp1251":     64,
	"dbo.text_cp932":      64,
	"dbo.text_utf8":       64,
	"dbo.type_matrix":     0, // fixed by its content
	"warehouse.sites":     12,
	"warehouse.stock":     480,
	"warehouse.movements": 2000,
	"dbo.events":          1000,
	"dbo.readings":        3000,
	"dbo.devices":         2000,
	"finance.invoices":    40,
	"finance.ledger":      60,
}

// DB is a generated sample database. A DB value is immutable and safe for
// concurrent use; Insert (dbo.events only) makes a new version, which
// Current returns.
type DB struct {
	name    string
	seed    int64
	tables  []*Table
	byName  map[string]*Table
	catOnce sync.Once
	catalog []*Table
	catByNm map[string]*Table
	views   []*Table
	seqs    []Sequence
	pools   map[poolKey]*pool // shared encoded pools, used while New runs
	// live is shared by every version of the database: Insert makes a
	// new version and stores it there (events.go).
	live       *liveDB
	dbts       int64 // @@DBTS: the last rowversion handed out
	noSnapshot bool  // ALLOW_SNAPSHOT_ISOLATION OFF
}

// liveDB holds the newest version of a database rows were inserted into.
type liveDB struct {
	mu  sync.Mutex // serialises Insert
	cur atomic.Pointer[DB]
}

// Index describes a table index (the primary key is one, with PrimaryKey
// set; so is a UNIQUE constraint, with UniqueConstraint set).
type Index struct {
	Name     string
	Columns  []string // key columns in order
	Included []string // included (non-key) columns
	// Descending marks, per key column, a DESC key; nil means all ASC.
	Descending       []bool
	Unique           bool
	PrimaryKey       bool
	UniqueConstraint bool
	Clustered        bool
	// Filter is the WHERE of a filtered index as SQL Server stores it
	// (sys.indexes.filter_definition, e.g. "([quantity]<(10))"), "" for none.
	Filter string
}

// Check is a CHECK constraint as sys.check_constraints lists it.
type Check struct {
	Name string
	// Column is the column of a column-level constraint, "" for a
	// table-level one.
	Column string
	// Definition is the expression as SQL Server stores it, e.g.
	// "([quantity]>=(0))".
	Definition string
}

// Computed is a computed column's definition (sys.computed_columns).
type Computed struct {
	Definition string // as SQL Server stores it, e.g. "([quantity]*[unit_cost])"
	Persisted  bool
}

// Sequence is a sequence object (sys.sequences). Its values fit int64
// (the sample's sequences are bigint or decimal(12,0)).
type Sequence struct {
	Schema, Name string
	Type         string // declared type, e.g. "bigint", "decimal(12,0)"
	Start        int64
	Increment    int64
	Min, Max     int64
	Cycle        bool
	// Cache is the declared cache size, 0 for NO CACHE.
	Cache int64
	// Current is sys.sequences.current_value: the last value handed out,
	// or Start when none was.
	Current int64
	// Used reports whether a value was ever handed out
	// (sys.sequences.last_used_value is NULL otherwise).
	Used     bool
	ObjectID int32
}

// ForeignKey is a foreign-key constraint.
type ForeignKey struct {
	Name       string
	Columns    []string
	RefSchema  string
	RefTable   string
	RefColumns []string
	OnDelete   string // "NO_ACTION" or "CASCADE" (sys.foreign_keys.delete_referential_action_desc)
	OnUpdate   string
}

// Table is one table of the sample database (or a catalog view).
type Table struct {
	Schema, Name string
	Columns      []decode.Column
	// Rows is the number of rows.
	Rows int64
	// Key lists the primary key columns (empty when none).
	Key []string
	// Identity names the identity column ("" when none).
	Identity string
	// IdentitySeed and IdentityIncrement are the identity's seed and
	// increment (both 1 when zero). IdentityGap is how many values were
	// generated after the last row's (rows inserted and deleted since), so
	// the identity's last value is the last row's key plus
	// IdentityGap*IdentityIncrement.
	IdentitySeed, IdentityIncrement, IdentityGap int64
	// Computed maps a column name to its computed-column definition.
	Computed map[string]Computed
	// Checks are the table's CHECK constraints.
	Checks []Check
	// View is the definition of a view (CREATE VIEW ... as SQL Server keeps
	// it in sys.sql_modules); "" for a table. A view's rows are computed
	// from its base table when the database is built.
	View        string
	Indexes     []Index
	ForeignKeys []ForeignKey
	// Defaults maps column name to the SQL text of its default constraint as
	// SQL Server stores it (e.g. "(getdate())", "((0))", "(N'new')").
	Defaults map[string]string
	// ObjectID is the table's sys.objects object_id.
	ObjectID int32
	// Catalog is set for the INFORMATION_SCHEMA and sys views.
	Catalog bool
	// Features lists, per column index, the client features a column needs
	// to be sent with its native type (e.g. "JSONSUPPORT", "VECTORSUPPORT",
	// "UTF8_SUPPORT"); nil when none.
	Features map[int]string

	meta   []colMeta
	gens   []gen                          // fast path: one generator per column
	rowFn  func(i int64, dst []any) []any // generic tables
	static [][]any                        // catalog views and small fixed tables
	keyCol int                            // index of the integer key column, -1 if none
	keyOf  func(i int64) int64            // nil: key = i+1
	lowerB func(k int64) int64            // nil: derived from keyOf = i+1
	salt   uint64                         // table salt (from the seed and the table name)
	salts  []uint64                       // column salts
	nbc    int                            // null bitmap length
	db     *DB

	// An appendable table (dbo.events) holds genRows generated rows (genFn)
	// and then extra, the inserted ones; Rows is their sum.
	appendable bool
	genRows    int64
	genFn      func(i int64, dst []any) []any
	extra      [][]any
}

// gen produces one column of a fast table. h is the cell's hash, a pure
// function of (seed, table, column, row).
type gen struct {
	kind     genKind // hot kinds are encoded inline by AppendRows; others call enc
	pool     *pool   // kindPool
	nullPM   uint64  // the cell is NULL when h>>54 < nullPM (per 1024); 0 = never
	val      func(i int64, h uint64) any
	enc      func(dst []byte, i int64, h uint64) []byte // non-NULL value
	nullWire []byte
}

// genKind selects an inline encoder in AppendRows for the commonest cells.
type genKind uint8

const (
	kindFunc genKind = iota // call enc
	kindInt4                // INTN 4 from the cell hash (nint)
	kindPool                // a pool string picked by the cell hash
)

// hashInt4 is the value of an nint cell: mostly small, one in 8 full range.
func hashInt4(h uint64) int64 {
	if h&7 == 0 {
		return int64(int32(h >> 16))
	}
	return int64((h >> 16) % 100000)
}

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

const golden = 0x9E3779B97F4A7C15

func strHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// rowHash is the hash of row i of a table (seeded by the table's salt);
// cellHash derives the hash of one cell from it with one multiply.
func rowHash(tableSalt uint64, i int64) uint64 { return mix(tableSalt ^ uint64(i)*golden) }

func cellHash(rowh, colSalt uint64) uint64 {
	x := (rowh ^ colSalt) * 0xbf58476d1ce4e5b9
	return x ^ x>>32
}

// New builds the sample database described by cfg.
func New(cfg Config) *DB {
	db := &DB{name: cfg.Database, seed: cfg.Seed, byName: map[string]*Table{}, pools: map[poolKey]*pool{},
		live: &liveDB{}, noSnapshot: cfg.NoSnapshot}
	if db.name == "" {
		db.name = "sample"
	}
	// Overrides by lower-case qualified name; "dbo.x" wins over "x".
	over := map[string]int64{}
	for _, qualified := range []bool{false, true} {
		for k, v := range cfg.Rows {
			k = strings.ToLower(k)
			if strings.Contains(k, ".") != qualified || v < 0 {
				continue
			}
			if !qualified {
				k = "dbo." + k
			}
			over[k] = v
		}
	}
	rows := func(key string) int64 {
		if v, ok := over[key]; ok {
			return v
		}
		n := DefaultRows[key]
		if cfg.Scale > 0 && key != "dbo.type_matrix" {
			n = max(1, int64(float64(n)*cfg.Scale+0.5))
		}
		return n
	}
	b := &builder{db: db, rows: rows, over: over}
	b.shapes()
	b.typeMatrix()
	b.sales()
	b.textTables()
	b.warehouse()
	b.finance()
	b.events()
	b.keyed()
	b.codes()
	db.pools = nil
	sortTables(db.tables)
	sortTables(db.views)
	for i, t := range db.tables {
		t.ObjectID = int32(901578250 + 16*i)
		db.byName[strings.ToLower(t.Schema+"."+t.Name)] = t
	}
	// Views and sequences are numbered after every table, so adding one
	// never renumbers a table.
	next := int32(901578250 + 16*len(db.tables))
	for _, v := range db.views {
		v.ObjectID = next
		next += 16
		db.byName[strings.ToLower(v.Schema+"."+v.Name)] = v
	}
	for i := range db.seqs {
		db.seqs[i].ObjectID = next
		next += 16
	}
	return db
}

// Name returns the database name.
func (db *DB) Name() string { return db.name }

// Seed returns the seed the database was generated from.
func (db *DB) Seed() int64 { return db.seed }

// Tables returns the user tables, ordered by schema then name.
func (db *DB) Tables() []*Table { return db.tables }

// Views returns the views, ordered by schema then name.
func (db *DB) Views() []*Table { return db.views }

// Sequences returns the sequence objects.
func (db *DB) Sequences() []Sequence { return db.seqs }

// Table looks a user table or a view up by name, case-insensitively. An
// empty schema means dbo.
func (db *DB) Table(schema, name string) (*Table, bool) {
	if schema == "" {
		schema = "dbo"
	}
	t, ok := db.byName[strings.ToLower(schema+"."+name)]
	return t, ok
}

// builder collects tables while New runs.
type builder struct {
	db   *DB
	rows func(key string) int64
	over map[string]int64 // Config.Rows by lower-case qualified name
}

// optional reports whether Config.Rows names key, an optional table
// (OptionalTables): only then does the table exist.
func (b *builder) optional(key string) bool {
	_, ok := b.over[key]
	return ok
}

// colDef declares one column.
type colDef struct {
	name     string
	sqlType  string
	nullable bool
	coll     decode.Collation // zero: CollSQLLatin1
	v        *vfn             // fast tables only
}

// newTable creates a table from column declarations. Every column type must
// parse; a mistake is a programming error caught by the tests.
func (b *builder) newTable(schema, name string, defs []colDef) *Table {
	t := makeTable(b.db, schema, name, defs)
	t.Rows = b.rows(strings.ToLower(schema + "." + name))
	b.db.tables = append(b.db.tables, t)
	return t
}

// makeTable builds a table without registering it.
func makeTable(db *DB, schema, name string, defs []colDef) *Table {
	t := &Table{Schema: schema, Name: name, keyCol: -1, db: db}
	seed := mix(uint64(db.seed) ^ strHash(schema+"."+name))
	t.salt = seed
	for i, d := range defs {
		coll := d.coll
		if coll == (decode.Collation{}) {
			coll = CollSQLLatin1
		}
		ti, m, err := parseSQLType(d.sqlType, coll, d.nullable)
		if err != nil {
			panic(err)
		}
		flags := uint16(decode.ColFlagUpdateable & 0x8)
		if d.nullable {
			flags |= decode.ColFlagNullable
		}
		col := decode.Column{Name: d.name, Flags: flags, Type: ti}
		if m.decl.Kind == decode.KindRowVersion {
			col.UserType = decode.UserTypeTimestamp
			col.Flags = 0
		}
		switch m.decl.Kind {
		case decode.KindText, decode.KindNText, decode.KindImage:
			col.TableName = []string{schema, name}
		}
		t.Columns = append(t.Columns, col)
		t.meta = append(t.meta, m)
		var g gen
		if d.v != nil {
			g = buildGen(&t.Columns[i].Type, *d.v, db.pools)
			g.nullWire = nullWire(&t.Columns[i].Type)
			if !d.nullable {
				g.nullPM = 0
			}
		}
		t.gens = append(t.gens, g)
		t.salts = append(t.salts, mix(seed+uint64(i+1)*0xD1B54A32D192ED03))
	}
	fast := true
	for _, g := range t.gens {
		if g.enc == nil || g.val == nil {
			fast = false
		}
	}
	if !fast {
		t.gens = nil
	}
	t.nbc = (len(t.Columns) + 7) / 8
	return t
}

// setKey declares an integer primary key column whose value for row i is
// i+1 unless keyOf says otherwise (monotonic in i).
func (t *Table) setKey(col string, clustered bool) {
	t.Key = []string{col}
	t.keyCol = t.ColumnIndex(col)
	t.Indexes = append(t.Indexes, Index{Name: "PK_" + t.Name, Columns: []string{col}, Unique: true, PrimaryKey: true, Clustered: clustered})
}

// ColumnIndex returns the index of a column by name (case-insensitive), or -1.
func (t *Table) ColumnIndex(name string) int {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// SQLType returns the declared SQL type of column col, e.g. "int",
// "decimal(38,10)", "nvarchar(max)", "datetimeoffset(7)".
func (t *Table) SQLType(col int) string { return t.meta[col].sqlType() }

// Nullable reports whether column col is declared NULL, as the catalog
// views say (a column's wire type can be a nullable one regardless).
func (t *Table) Nullable(col int) bool { return t.meta[col].nullable }

// FullName returns "schema.name".
func (t *Table) FullName() string { return t.Schema + "." + t.Name }

// KeyColumn returns the index of the table's integer key column, or -1 when
// the table has no integer key (then KeyValue and RowForKey do not apply).
func (t *Table) KeyColumn() int { return t.keyCol }

// KeyValue returns the integer key of row i. It is non-decreasing in i
// (strictly increasing unless the key column repeats, as lineitem's
// l_orderkey does).
func (t *Table) KeyValue(i int64) int64 {
	if t.keyOf != nil {
		return t.keyOf(i)
	}
	return i + 1
}

// LowerBound returns the first row whose key is >= k (Rows when none), so
// that "key >= a AND key < b" is the row range [LowerBound(a), LowerBound(b)).
func (t *Table) LowerBound(k int64) int64 {
	var r int64
	if t.lowerB != nil {
		r = t.lowerB(k)
	} else if k <= 1 {
		r = 0
	} else {
		r = k - 1
	}
	return max(0, min(r, t.Rows))
}

// RowForKey returns the first row whose key equals k, and whether one exists.
func (t *Table) RowForKey(k int64) (int64, bool) {
	r := t.LowerBound(k)
	if r < t.Rows && t.KeyValue(r) == k {
		return r, true
	}
	return 0, false
}

// Row returns row i as generic values appended to dst[:0]. i must be in
// [0, Rows).
func (t *Table) Row(i int64, dst []any) []any {
	dst = dst[:0]
	switch {
	case t.static != nil:
		return append(dst, t.static[i]...)
	case t.rowFn != nil:
		return t.rowFn(i, dst)
	}
	r := rowHash(t.salt, i)
	for c := range t.gens {
		g := &t.gens[c]
		h := cellHash(r, t.salts[c])
		if g.nullPM != 0 && h>>54 < g.nullPM {
			dst = append(dst, nil)
			continue
		}
		dst = append(dst, g.val(i, h))
	}
	return dst
}

// Fast reports whether the table is served by the pre-encoded fast path.
func (t *Table) Fast() bool { return t.gens != nil }

// AppendRows appends rows [from, to) as ROW tokens (NBCROW tokens when nbc
// is set) to dst. The range is clipped to [0, Rows).
func (t *Table) AppendRows(dst []byte, from, to int64, nbc bool) []byte {
	from, to = max(from, 0), min(to, t.Rows)
	if t.gens == nil {
		return t.appendGeneric(dst, from, to, nbc)
	}
	gens, salts := t.gens, t.salts
	for i := from; i < to; i++ {
		r := rowHash(t.salt, i)
		if nbc {
			dst = append(dst, tokNBCRow)
			p := len(dst)
			for range t.nbc {
				dst = append(dst, 0)
			}
			for c := range gens {
				g := &gens[c]
				h := cellHash(r, salts[c])
				if g.nullPM != 0 && h>>54 < g.nullPM {
					dst[p+c>>3] |= 1 << (c & 7)
					continue
				}
				switch g.kind {
				case kindInt4:
					v := hashInt4(h)
					dst = append(dst, 4, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
				case kindPool:
					pl := g.pool
					k := pl.pick(h)
					dst = append(dst, pl.wire[pl.off[k]:pl.off[k+1]]...)
				default:
					dst = g.enc(dst, i, h)
				}
			}
			continue
		}
		dst = append(dst, tokRow)
		for c := range gens {
			g := &gens[c]
			h := cellHash(r, salts[c])
			if g.nullPM != 0 && h>>54 < g.nullPM {
				dst = append(dst, g.nullWire...)
				continue
			}
			switch g.kind {
			case kindInt4:
				v := hashInt4(h)
				dst = append(dst, 4, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			case kindPool:
				pl := g.pool
				k := pl.pick(h)
				dst = append(dst, pl.wire[pl.off[k]:pl.off[k+1]]...)
			default:
				dst = g.enc(dst, i, h)
			}
		}
	}
	return dst
}

// appendGeneric encodes rows of a generic table through decode's generic
// row encoders.
func (t *Table) appendGeneric(dst []byte, from, to int64, nbc bool) []byte {
	dst, err := t.encodeRows(dst, from, to, nbc, decode.EncodeOptions{})
	if err != nil {
		// The generated values match their column types by construction
		// (the tests encode every row); an error here is a bug.
		panic(err)
	}
	return dst
}

// encodeRows appends rows [from, to) of Row(i) as ROW (or NBCROW) tokens
// encoded by decode's generic encoder with options o.
func (t *Table) encodeRows(dst []byte, from, to int64, nbc bool, o decode.EncodeOptions) ([]byte, error) {
	vals := make([]any, 0, len(t.Columns))
	for i := from; i < to; i++ {
		vals = t.Row(i, vals)
		var err error
		if nbc {
			dst, err = o.AppendNBCRow(dst, t.Columns, vals)
		} else {
			dst, err = o.AppendRow(dst, t.Columns, vals)
		}
		if err != nil {
			return dst, fmt.Errorf("sampledb: %s row %d: %w", t.FullName(), i, err)
		}
	}
	return dst, nil
}

func sortTables(ts []*Table) {
	sort.SliceStable(ts, func(a, b int) bool {
		if ts[a].Schema != ts[b].Schema {
			return ts[a].Schema < ts[b].Schema
		}
		return ts[a].Name < ts[b].Name
	})
}

// IdentityValues returns the identity column's seed and increment and its
// last generated value (sys.identity_columns.last_value, IDENT_CURRENT);
// hasLast is false when no value was ever generated. The identity column
// must be the table's key column, so the last row's key is known.
func (t *Table) IdentityValues() (seed, incr, last int64, hasLast bool) {
	seed, incr = t.IdentitySeed, t.IdentityIncrement
	if seed == 0 {
		seed = 1
	}
	if incr == 0 {
		incr = 1
	}
	switch {
	case t.Rows > 0:
		return seed, incr, t.KeyValue(t.Rows-1) + t.IdentityGap*incr, true
	case t.IdentityGap > 0:
		return seed, incr, seed + (t.IdentityGap-1)*incr, true
	}
	return seed, incr, 0, false
}
