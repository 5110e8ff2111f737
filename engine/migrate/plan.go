package migrate

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/partition"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Case-insensitive key policies.
const (
	// CINone keeps PostgreSQL's deterministic collation: keys compare
	// case-sensitively (the plan says which keys this concerns).
	CINone = "none"
	// CIICU gives text columns of keys and unique indexes under a
	// case-insensitive source collation the nondeterministic ICU
	// collation CICollation, so PostgreSQL refuses what SQL Server would.
	CIICU = "icu"
	// CICitext types those columns citext (the extension, created when
	// missing): case-insensitive comparisons, unique keys and pattern
	// matches everywhere, LIKE included; a varchar(n) or char(n) bound is
	// kept by a CHECK, as citext has no length.
	CICitext = "citext"
)

// CICollation is the collation CIICU creates and uses: ICU's root locale
// at strength 2 (case-insensitive, accent-sensitive, as SQL Server's
// _CI_AS collations).
const CICollation = "public.tdsextract_ci"

// Options shape the plan.
type Options struct {
	// Identifiers is postgres.IdentLower (default) or IdentPreserve. With
	// lower, a table whose columns (or a schema whose tables) would fold
	// into one name keeps its names as they are, and the plan says so.
	Identifiers string
	// CaseInsensitive is CINone (default), CIICU or CICitext.
	CaseInsensitive string
	// Analyze adds an ANALYZE of every table once its rows, keys,
	// indexes and checks are in, so that the planner has statistics as
	// soon as the migration ends instead of after autovacuum's first
	// round (which waits for autovacuum_naptime and then works through
	// the tables one at a time).
	Analyze bool
}

// Phase orders the steps of a migration.
type Phase uint8

// The phases, in the order they run.
const (
	PhaseSetup Phase = iota
	PhaseSchema
	PhaseSequence
	PhaseTable
	PhaseData
	PhaseKey
	PhaseIndex
	PhaseCheck
	PhaseForeignKey
	// PhaseValidate checks the rows against a foreign key added NOT
	// VALID: apart from adding it, because VALIDATE locks the referenced
	// table only in ROW SHARE mode, so the foreign keys of different
	// tables check their rows at once (an ADD that validates takes SHARE
	// ROW EXCLUSIVE on both tables, which makes them queue).
	PhaseValidate
	// PhaseAnalyze gathers a table's statistics (Options.Analyze).
	PhaseAnalyze
	PhaseView
)

var phaseNames = [...]string{"setup", "schema", "sequence", "table", "data", "key", "index", "check", "foreign key", "validate", "analyze", "view"}

func (p Phase) String() string { return phaseNames[p] }

// Step is one unit of DDL, run in its own transaction and recorded in
// the state table, so a resumed run skips it when it is done.
type Step struct {
	Phase Phase
	// Object is the target object the step creates, e.g. "sales.orders"
	// or "sales.orders.pk_orders".
	Object string
	// Table is the target table the step belongs to (empty for schemas,
	// sequences and views); a step of a table whose data failed is not run.
	Table string
	// Refs are the other tables a foreign key or view needs loaded.
	Refs []string
	SQL  []string
	// Range and PGWhere are, for a data step that loads one key range of
	// its table, the range (a T-SQL predicate with its bounds as
	// parameters) and the same rows as a PostgreSQL predicate.
	Range   *partition.Part
	PGWhere string
	// lock is the strongest lock the step's SQL takes on Table (Refs
	// take the mode the phase implies): what the scheduler keeps apart.
	lock lockMode
}

// where is the step's T-SQL predicate and its parameters ("" for a whole
// table).
func (s *Step) where() (string, []session.Param) {
	if s.Range == nil {
		return "", nil
	}
	return s.Range.Where, s.Range.Params()
}

// Key identifies the step in the state table.
func (s *Step) Key() string { return s.Phase.String() + ":" + s.Object }

// Item is a remark of the plan on one object.
type Item struct {
	// Object is the source object ("warehouse.stock.stock_value").
	Object string `json:"object"`
	// What kind of object it is: column, default, computed column, check,
	// index, foreign key, view, key, sequence, identity, name.
	What string `json:"what"`
	// Original is the source's text (definition), when it has one.
	Original string `json:"original,omitempty"`
	// Detail says what happens to it.
	Detail string `json:"detail"`
}

// TablePlan is one table: its target, its columns and how its rows load.
type TablePlan struct {
	Source *catalog.Table
	// Schema and Name are the target's, unquoted; Identifiers is the
	// identifier policy of its columns.
	Schema, Name string
	Identifiers  string
	// Load is the projection the data step runs: every column but the
	// generated ones.
	Load *catalog.Projection
	// Columns is the target mapping of every column (companions too).
	Columns []postgres.Column
	// Restart, when set, is run after the rows are in, in their
	// transaction: the identity restarted at the source's next value.
	Restart string
	// Parts is how many key ranges the data loads as (0: one piece).
	Parts int
}

// Target is schema.table of the target, unquoted.
func (t *TablePlan) Target() string { return t.Schema + "." + t.Name }

// QualifiedName is the target as SQL needs it.
func (t *TablePlan) QualifiedName() string {
	return postgres.QuoteIdent(t.Schema) + "." + postgres.QuoteIdent(t.Name)
}

// Plan is a whole migration, computed from the source catalog without
// touching the target.
type Plan struct {
	Options Options
	Tables  []*TablePlan
	// Steps in order; the data step of each table sits in PhaseData.
	Steps []Step
	// Lossy are mappings that keep less than the source holds,
	// Untranslated what is not created (with the original text), Notes
	// what is created with a difference worth knowing.
	Lossy, Untranslated, Notes []Item
	// Discovered is how long Discover took to read the catalog, describe
	// the tables and plan their key ranges (0 for a plan Build made).
	Discovered time.Duration
}

// Describer returns the columns a projection's SELECT gives, as the
// server describes them (catalog.Describe on a session).
type Describer func(ctx context.Context, p *catalog.Projection) ([]decode.Column, error)

// Build plans the migration of db.
func Build(ctx context.Context, db *catalog.Database, describe Describer, o Options) (*Plan, error) {
	if o.Identifiers == "" {
		o.Identifiers = postgres.IdentLower
	}
	if o.CaseInsensitive == "" {
		o.CaseInsensitive = CINone
	}
	b := &builder{p: &Plan{Options: o}, db: db, o: o, names: map[string]bool{}, byTable: map[*catalog.Table]*tableScope{}}
	if o.CaseInsensitive == CIICU {
		b.step(Step{Phase: PhaseSetup, Object: CICollation, SQL: []string{"CREATE COLLATION IF NOT EXISTS " + CICollation +
			" (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"}})
	}
	if o.CaseInsensitive == CICitext {
		b.step(Step{Phase: PhaseSetup, Object: "citext", SQL: []string{"CREATE EXTENSION IF NOT EXISTS citext"}})
	}
	b.schemaNames()
	for _, s := range b.schemas {
		b.step(Step{Phase: PhaseSchema, Object: s, SQL: []string{"CREATE SCHEMA IF NOT EXISTS " + postgres.QuoteIdent(s)}})
	}
	for i := range db.Sequences {
		b.sequence(&db.Sequences[i])
	}
	var views []*catalog.Table
	for _, t := range db.Tables {
		if t.View {
			views = append(views, t)
			continue
		}
		if err := b.table(ctx, t, describe); err != nil {
			return nil, err
		}
	}
	for _, tp := range b.p.Tables {
		b.p.Steps = append(b.p.Steps, Step{Phase: PhaseData, Object: tp.Target(), Table: tp.Target()})
	}
	for _, tp := range b.p.Tables {
		b.keysAndIndexes(tp)
	}
	for _, tp := range b.p.Tables {
		b.checks(tp)
	}
	for _, tp := range b.p.Tables {
		b.foreignKeys(tp)
	}
	if b.o.Analyze {
		for _, tp := range b.p.Tables {
			// ANALYZE takes SHARE UPDATE EXCLUSIVE, as VALIDATE does
			b.step(Step{Phase: PhaseAnalyze, Object: tp.Target(), Table: tp.Target(), lock: lockShareUpdateExclusive,
				SQL: []string{"ANALYZE " + tp.QualifiedName()}})
		}
	}
	for _, v := range views {
		b.view(v)
	}
	sort.SliceStable(b.p.Steps, func(i, j int) bool { return b.p.Steps[i].Phase < b.p.Steps[j].Phase })
	return b.p, nil
}

type builder struct {
	p       *Plan
	db      *catalog.Database
	o       Options
	schemas []string
	schema  map[string]string // source schema (lower) -> target schema
	// tableName maps a source table (lower schema.name) to its target name.
	tableName map[string]string
	names     map[string]bool // relation names taken per target schema ("schema.name")
	byTable   map[*catalog.Table]*tableScope
}

func (b *builder) step(s Step) { b.p.Steps = append(b.p.Steps, s) }

func (b *builder) lossy(obj, what, orig, detail string) {
	b.p.Lossy = append(b.p.Lossy, Item{obj, what, orig, detail})
}
func (b *builder) untranslated(obj, what, orig, detail string) {
	b.p.Untranslated = append(b.p.Untranslated, Item{obj, what, orig, detail})
}
func (b *builder) note(obj, what, orig, detail string) {
	b.p.Notes = append(b.p.Notes, Item{obj, what, orig, detail})
}

// schemaNames folds schema and table names by the identifier policy. A
// name that would collide with another once folded keeps its case.
func (b *builder) schemaNames() {
	b.schema, b.tableName = map[string]string{}, map[string]string{}
	fold := func(names []string) map[string]string {
		count := map[string]int{}
		for _, n := range names {
			count[postgres.FoldIdent(n, b.o.Identifiers)]++
		}
		out := map[string]string{}
		for _, n := range names {
			f := postgres.FoldIdent(n, b.o.Identifiers)
			if count[f] > 1 {
				f = postgres.FoldIdent(n, postgres.IdentPreserve)
			}
			out[n] = f
		}
		return out
	}
	var srcSchemas []string
	seen := map[string]bool{}
	addSchema := func(s string) {
		if !seen[s] {
			seen[s] = true
			srcSchemas = append(srcSchemas, s)
		}
	}
	for _, t := range b.db.Tables {
		addSchema(t.Schema)
	}
	for _, s := range b.db.Sequences {
		addSchema(s.Schema)
	}
	sf := fold(srcSchemas)
	for _, s := range srcSchemas {
		b.schema[strings.ToLower(s)] = sf[s]
		b.schemas = append(b.schemas, sf[s])
		if sf[s] != postgres.FoldIdent(s, b.o.Identifiers) {
			b.note(s, "name", "", fmt.Sprintf("schema keeps its case (%q): another schema folds to the same name", sf[s]))
		}
		var names []string
		for _, t := range b.db.Tables {
			if strings.EqualFold(t.Schema, s) {
				names = append(names, t.Name)
			}
		}
		for _, sq := range b.db.Sequences {
			if strings.EqualFold(sq.Schema, s) {
				names = append(names, sq.Name)
			}
		}
		tf := fold(names)
		for _, n := range names {
			b.tableName[strings.ToLower(s+"."+n)] = tf[n]
			b.names[sf[s]+"."+tf[n]] = true
			if tf[n] != postgres.FoldIdent(n, b.o.Identifiers) {
				b.note(s+"."+n, "name", "", fmt.Sprintf("keeps its case (%q): another object of the schema folds to the same name", tf[n]))
			}
		}
	}
}

// target returns the target schema and name of a source relation, ok
// false when it is not migrated.
func (b *builder) target(schema, name string) (string, string, bool) {
	s, ok := b.schema[strings.ToLower(schema)]
	if !ok {
		return "", "", false
	}
	n, ok := b.tableName[strings.ToLower(schema+"."+name)]
	return s, n, ok
}

// uniqueName returns name, or name with the table's name prefixed when
// the schema already has a relation of that name (PostgreSQL's index
// names are per schema, SQL Server's per table).
func (b *builder) uniqueName(schema, table, name string) string {
	n := postgres.FoldIdent(name, b.o.Identifiers)
	for k := 2; b.names[schema+"."+n]; k++ {
		n = postgres.FoldIdent(fmt.Sprintf("%s_%s", table, name), b.o.Identifiers)
		if k > 2 {
			n = postgres.FoldIdent(fmt.Sprintf("%s_%s_%d", table, name, k), b.o.Identifiers)
		}
	}
	b.names[schema+"."+n] = true
	return n
}

// intBounds are the PostgreSQL integer types' bounds.
var intBounds = map[string][2]string{
	"smallint": {"-32768", "32767"},
	"integer":  {"-2147483648", "2147483647"},
	"bigint":   {"-9223372036854775808", "9223372036854775807"},
}

func (b *builder) sequence(sq *catalog.Sequence) {
	obj := sq.Schema + "." + sq.Name
	schema, name, _ := b.target(sq.Schema, sq.Name)
	typ := ""
	switch strings.ToLower(sq.TypeName) {
	case "tinyint", "smallint":
		typ = "smallint"
	case "int":
		typ = "integer"
	case "bigint":
		typ = "bigint"
	case "decimal", "numeric":
		// PostgreSQL sequences are bigint at most.
		lo, hi := new(big.Int), new(big.Int)
		lo.SetString(intBounds["bigint"][0], 10)
		hi.SetString(intBounds["bigint"][1], 10)
		if sq.Min != nil && sq.Max != nil && sq.Min.Cmp(lo) >= 0 && sq.Max.Cmp(hi) <= 0 {
			typ = "bigint"
			b.note(obj, "sequence", "", fmt.Sprintf("%s(%d,0) sequence becomes bigint (its bounds fit)", sq.TypeName, sq.Precision))
		}
	}
	if typ == "" || sq.Start == nil || sq.Increment == nil || sq.Current == nil {
		b.untranslated(obj, "sequence", "", fmt.Sprintf("a %s sequence has no PostgreSQL equivalent", sq.TypeName))
		return
	}
	q := postgres.QuoteIdent(schema) + "." + postgres.QuoteIdent(name)
	ddl := fmt.Sprintf("CREATE SEQUENCE %s AS %s INCREMENT BY %s", q, typ, sq.Increment)
	if sq.Min != nil {
		ddl += fmt.Sprintf(" MINVALUE %s", sq.Min)
	}
	if sq.Max != nil {
		ddl += fmt.Sprintf(" MAXVALUE %s", sq.Max)
	}
	ddl += fmt.Sprintf(" START WITH %s", sq.Start)
	if sq.Cycle {
		ddl += " CYCLE"
	}
	// current_value is the last value handed out, or the start value when
	// none was: setval with is_called true makes nextval return the one
	// after it. A sequence never used gets is_called false, so its first
	// value is its start value, as in SQL Server.
	called := "true"
	if sq.LastUsed == nil && !sq.LastUsedUnknown {
		called = "false"
	}
	if sq.LastUsedUnknown {
		b.note(obj, "sequence", "", "the server does not say whether the sequence was used (sys.sequences.last_used_value is SQL Server 2017 and later): the next value is the one after current_value")
	}
	set := fmt.Sprintf("SELECT pg_catalog.setval(%s, %s, %s)", quoteLiteral(q), sq.Current, called)
	b.step(Step{Phase: PhaseSequence, Object: schema + "." + name, SQL: []string{ddl, set}})
}

// tableScope resolves the columns of one table for its expressions.
type tableScope struct {
	b    *builder
	t    *catalog.Table
	tp   *TablePlan
	cols map[string]colInfo // by lower-case source name
}

func (s *tableScope) column(parts []string) (colInfo, error) {
	c, ok := s.cols[strings.ToLower(parts[len(parts)-1])]
	if !ok {
		return colInfo{}, untranslatable("unknown column %s", strings.Join(parts, "."))
	}
	return c, nil
}

func (s *tableScope) sequence(parts []string) (string, error) { return s.b.sequenceName(parts) }
func (s *tableScope) pgType(t string) (string, class, error)  { return pgType(t) }

// sequenceName is the target name of a sequence a NEXT VALUE FOR names.
func (b *builder) sequenceName(parts []string) (string, error) {
	schema, name := "dbo", parts[len(parts)-1]
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	for _, sq := range b.db.Sequences {
		if strings.EqualFold(sq.Schema, schema) && strings.EqualFold(sq.Name, name) {
			s, n, _ := b.target(sq.Schema, sq.Name)
			return postgres.QuoteIdent(s) + "." + postgres.QuoteIdent(n), nil
		}
	}
	return "", untranslatable("sequence %s.%s is not migrated", schema, name)
}

// pgType translates a T-SQL type name with the PostgreSQL sink's mapping.
func pgType(tsql string) (string, class, error) {
	d, err := decode.ParseDecl(tsql)
	if err != nil {
		return "", 0, untranslatable("type %s: %v", tsql, err)
	}
	c := decode.Column{Type: d.TypeInfo(true, decode.Collation{})}
	t, _, _ := postgres.DefaultType(&c)
	if t.OID == 0 {
		return "", 0, untranslatable("type %s has no PostgreSQL mapping", tsql)
	}
	return t.SQL, classOf(c.Kind()), nil
}

// classOf is the translation's class of a SQL Server type.
func classOf(k decode.Kind) class {
	switch {
	case k == decode.KindBit:
		return cBool
	case k == decode.KindUniqueIdentifier:
		return cUUID
	case k.IsText():
		return cText
	case k.IsBinary():
		return cBytes
	}
	switch k.Class() {
	case decode.ClassInteger, decode.ClassDecimal, decode.ClassMoney, decode.ClassFloat:
		return cNum
	case decode.ClassDate, decode.ClassTime, decode.ClassDateTime, decode.ClassDateTimeOffset:
		return cTime
	}
	return cUnknown
}

// charLength is the n of a varchar(n) or char(n) target type.
func charLength(t postgres.Type) (int, bool) {
	if t.Typmod < 4 || !strings.HasPrefix(t.SQL, "varchar(") && !strings.HasPrefix(t.SQL, "char(") {
		return 0, false
	}
	return int(t.Typmod - 4), true
}

// caseInsensitive reports whether a collation name is case-insensitive.
func caseInsensitive(collation string) bool {
	return strings.Contains(strings.ToUpper(collation), "_CI")
}

// ciKeyColumns are the text columns under a case-insensitive collation
// that a primary key, unique constraint or unique index covers.
func ciKeyColumns(t *catalog.Table) map[string][]string {
	out := map[string][]string{} // column (lower) -> the keys
	for col, keys := range textKeyColumns(t) {
		if caseInsensitive(t.Column(col).Collation) {
			out[col] = keys
		}
	}
	return out
}

// textKeyColumns are the text columns, under any collation, that a
// primary key, unique constraint or unique index covers.
func textKeyColumns(t *catalog.Table) map[string][]string {
	out := map[string][]string{} // column (lower) -> the keys
	for _, ix := range t.Indexes {
		if !ix.Unique {
			continue
		}
		for _, k := range ix.Keys {
			c := t.Column(k.Column)
			if c != nil && c.Kind().IsText() {
				out[strings.ToLower(c.Name)] = append(out[strings.ToLower(c.Name)], ix.Name)
			}
		}
	}
	return out
}

func (b *builder) table(ctx context.Context, t *catalog.Table, describe Describer) error {
	schema, name, _ := b.target(t.Schema, t.Name)
	tp := &TablePlan{Source: t, Schema: schema, Name: name, Identifiers: b.o.Identifiers}
	conv := b.bigintColumns(t)
	all, err := catalog.Project(t, nil, conv, catalog.Reads{})
	if err != nil {
		return err
	}
	cols, err := describe(ctx, all)
	if err != nil {
		return fmt.Errorf("migrate: describing %s: %w", t.FullName(), err)
	}
	mo := postgres.MapOptions{Identifiers: b.o.Identifiers, OffsetColumn: true, VariantTypeColumn: true}
	mapped, err := postgres.MapColumns(cols, mo)
	if err != nil {
		// Columns that fold into one name keep their case.
		mo.Identifiers, tp.Identifiers = postgres.IdentPreserve, postgres.IdentPreserve
		if mapped, err = postgres.MapColumns(cols, mo); err != nil {
			return fmt.Errorf("migrate: %s: %w", t.FullName(), err)
		}
		b.note(t.FullName(), "name", "", "the column names keep their case: two of them fold to the same name in lower case")
	}
	// A column the server converts is described as the expression, whose
	// nullability the server may not derive: the column's is the catalog's.
	for _, o := range conv {
		for i := range mapped {
			if mapped[i].Companion == "" && strings.EqualFold(mapped[i].SourceName, o.Column) {
				mapped[i].NotNull = !t.Column(o.Column).Nullable
			}
		}
	}
	tp.Columns = mapped
	sc := &tableScope{b: b, t: t, tp: tp, cols: map[string]colInfo{}}
	b.byTable[t] = sc
	ci := ciKeyColumns(t)
	// Under citext a column referencing such a key is citext too:
	// PostgreSQL implements no foreign key from varchar onto citext.
	fkCI := map[string]string{} // column (lower) -> the key it references
	if b.o.CaseInsensitive == CICitext {
		for _, fk := range t.ForeignKeys {
			ref := b.db.Table(fk.RefSchema, fk.RefTable)
			if ref == nil {
				continue
			}
			rci := ciKeyColumns(ref)
			for i, rc := range fk.RefColumns {
				if _, ok := rci[strings.ToLower(rc)]; ok && i < len(fk.Columns) {
					if _, own := ci[strings.ToLower(fk.Columns[i])]; !own {
						fkCI[strings.ToLower(fk.Columns[i])] = ref.FullName() + "." + rc
					}
				}
			}
		}
	}
	// The source column of each target column.
	src := make([]*catalog.Column, len(mapped))
	for i := range mapped {
		src[i] = all.Items[mapped[i].Source].Column
		if mapped[i].Companion == "" {
			_, key := ci[strings.ToLower(src[i].Name)]
			if _, ok := fkCI[strings.ToLower(src[i].Name)]; ok {
				key = true
			}
			sc.cols[strings.ToLower(src[i].Name)] = colInfo{sql: postgres.QuoteIdent(mapped[i].Name), class: classOf(src[i].Kind()),
				ci: src[i].Kind().IsText() && caseInsensitive(src[i].Collation), nondet: key && b.o.CaseInsensitive == CIICU,
				citext: key && b.o.CaseInsensitive == CICitext}
		}
	}
	// padded: the key columns whose target type compares trailing
	// spaces (varchar, text, citext; char(n) ignores them, as SQL Server
	// does for every type). targetType: the column's target type.
	targetType := func(col string) string {
		for i := range mapped {
			if mapped[i].Companion == "" && strings.EqualFold(src[i].Name, col) {
				return mapped[i].Type.SQL
			}
		}
		return ""
	}
	padded := func(col string) bool {
		_, isCI := ci[strings.ToLower(col)]
		_, isRef := fkCI[strings.ToLower(col)]
		if b.o.CaseInsensitive == CICitext && (isCI || isRef) {
			return true
		}
		typ := targetType(col)
		return typ != "" && !strings.HasPrefix(typ, "char(")
	}
	const trailingSpaces = "SQL Server ignores trailing spaces when it compares text ('a' = 'a '), %s does not: " +
		"values that differ only in trailing spaces are no longer duplicates, and a foreign key value with trailing spaces no longer matches its key without them"
	trailing := func(obj, col, how string) {
		if padded(col) {
			b.lossy(obj, "key", "", fmt.Sprintf(trailingSpaces, how))
		}
	}
	// One item per key column, in column order, whatever the number of
	// keys it is part of.
	textKeys := textKeyColumns(t)
	for i := range t.Columns {
		col := t.Columns[i].Name
		lc := strings.ToLower(col)
		obj := t.FullName() + "." + col
		keys, isCI := ci[lc]
		if !isCI {
			// A text key column under a case-sensitive collation keeps
			// its type under every policy (unless it references a
			// case-insensitive key under citext): only trailing spaces
			// differ.
			if ref, ok := fkCI[lc]; ok {
				b.note(obj, "key", "", fmt.Sprintf("references the case-insensitive key %s: typed citext like it", ref))
				trailing(obj, col, "citext")
			} else if keys := textKeys[lc]; len(keys) > 0 && padded(col) {
				b.lossy(obj, "key", "", fmt.Sprintf("used by %s: "+trailingSpaces, strings.Join(keys, ", "), targetType(col)))
			}
			continue
		}
		switch b.o.CaseInsensitive {
		case CIICU:
			b.note(obj, "key", "", fmt.Sprintf("case-insensitive in the source (%s, used by %s): COLLATE %s keeps keys unique regardless of case",
				t.Columns[i].Collation, strings.Join(keys, ", "), CICollation))
			trailing(obj, col, "COLLATE "+CICollation)
		case CICitext:
			b.note(obj, "key", "", fmt.Sprintf("case-insensitive in the source (%s, used by %s): typed citext (the citext extension), which keeps keys unique regardless of case",
				t.Columns[i].Collation, strings.Join(keys, ", ")))
			trailing(obj, col, "citext")
		default:
			d := fmt.Sprintf("case-insensitive in the source (%s, used by %s) but case-sensitive in PostgreSQL: values that differ only in case are no longer duplicates (use --case-insensitive icu)",
				t.Columns[i].Collation, strings.Join(keys, ", "))
			if padded(col) {
				d += "; " + fmt.Sprintf(trailingSpaces, targetType(col))
			}
			b.lossy(obj, "key", "", d)
		}
	}
	var defs []string
	generated := map[string]bool{}
	// offsetOf: the datetimeoffset columns split into a timestamptz and an
	// offset companion.
	offsetOf := map[string]bool{}
	for i := range mapped {
		if mapped[i].Companion == "offset" {
			offsetOf[strings.ToLower(src[i].Name)] = true
		}
	}
	for i := range mapped {
		m, c := &mapped[i], src[i]
		obj := t.FullName() + "." + c.Name
		def := postgres.QuoteIdent(m.Name) + " " + m.Type.SQL
		if m.Lossy && m.Companion == "" {
			b.lossy(obj, "column", c.SQLType(), fmt.Sprintf("%s -> %s: %s", c.SQLType(), m.Type.SQL, m.Why))
		}
		if m.Companion == "" {
			_, isKey := ci[strings.ToLower(c.Name)]
			_, isRef := fkCI[strings.ToLower(c.Name)]
			if isKey || isRef {
				switch b.o.CaseInsensitive {
				case CIICU:
					def += " COLLATE " + CICollation
				case CICitext:
					def = postgres.QuoteIdent(m.Name) + " citext"
					if n, ok := charLength(m.Type); ok {
						def += fmt.Sprintf(" CHECK (char_length(%s) <= %d)", postgres.QuoteIdent(m.Name), n)
					}
				}
			}
		}
		switch {
		case m.Companion != "":
		case c.Computed != nil:
			expr, _, notes, err := translateExpr(catalog.StripParens(c.Computed.Definition), sc)
			if err != nil {
				b.untranslated(obj, "computed column", c.Computed.Definition,
					fmt.Sprintf("not translated (%v): created as a plain %s column holding the source's values", err, m.Type.SQL))
				break
			}
			def += " GENERATED ALWAYS AS (" + expr + ") STORED"
			generated[strings.ToLower(c.Name)] = true
			if !c.Computed.Persisted {
				notes = append(notes, "computed on read in the source, stored in PostgreSQL (which has stored generated columns only)")
			}
			for _, n := range notes {
				b.note(obj, "computed column", c.Computed.Definition, n)
			}
		case c.Identity != nil:
			bounds, ok := intBounds[m.Type.SQL]
			if !ok {
				why := "PostgreSQL identities are smallint, integer or bigint"
				if c.Kind() == decode.KindDecimal && c.Scale == 0 {
					why = fmt.Sprintf("%d digits do not fit a bigint, the widest PostgreSQL identity", c.Precision)
				}
				b.untranslated(obj, "identity", "", fmt.Sprintf("identity on %s (seed %s, increment %s): %s; the column is created as %s without one and keeps the source's values",
					c.SQLType(), c.Identity.Seed, c.Identity.Increment, why, m.Type.SQL))
				break
			}
			if c.Kind() == decode.KindDecimal {
				b.note(obj, "identity", "", fmt.Sprintf("a %s identity becomes bigint (every %d-digit integer fits), read from the source as CAST(... AS bigint)", c.SQLType(), c.Precision))
			}
			def += fmt.Sprintf(" GENERATED BY DEFAULT AS IDENTITY (START WITH %s INCREMENT BY %s MINVALUE %s MAXVALUE %s)",
				c.Identity.Seed, c.Identity.Increment, bounds[0], bounds[1])
			// The next value is the one after the last generated, or the
			// seed when none was: never max(id)+1.
			next := new(big.Int).Set(c.Identity.Seed)
			if c.Identity.Last != nil {
				next.Add(c.Identity.Last, c.Identity.Increment)
			}
			// setval on the identity's sequence, not ALTER TABLE ...
			// RESTART: that takes an ACCESS EXCLUSIVE lock on the table,
			// so after a split load it waits for the index builds on the
			// table and makes every later build queue behind it.
			tp.Restart = fmt.Sprintf("SELECT pg_catalog.setval(pg_catalog.pg_get_serial_sequence(%s, %s), %s, false)",
				quoteLiteral(tp.QualifiedName()), quoteLiteral(m.Name), next)
		}
		if m.NotNull {
			def += " NOT NULL"
		}
		if c.Default != nil && c.Kind() == decode.KindDateTimeOffset && offsetOf[strings.ToLower(c.Name)] && c.Computed == nil {
			// The default reaches both columns, or neither.
			instant, offset, notes, err := translateZonedDefault(c.Default.Expr(), sc)
			switch {
			case err != nil && m.Companion == "":
				b.untranslated(obj, "default", c.Default.Definition, fmt.Sprintf("not translated (%v): neither %s nor its offset column has a default", err, m.Name))
			case err != nil:
			case m.Companion == "":
				def += " DEFAULT " + instant
				for _, n := range notes {
					b.note(obj, "default", c.Default.Definition, n)
				}
			default:
				def += " DEFAULT " + offset
			}
		} else if c.Default != nil && m.Companion == "" && c.Computed == nil && c.Identity == nil {
			expr, notes, err := translateDefault(c.Default.Expr(), classOf(c.Kind()), sc)
			if err != nil {
				b.untranslated(obj, "default", c.Default.Definition, fmt.Sprintf("not translated (%v): the column has no default", err))
			} else {
				def += " DEFAULT " + expr
				for _, n := range notes {
					b.note(obj, "default", c.Default.Definition, n)
				}
			}
		}
		defs = append(defs, def)
	}
	var load []string
	for _, c := range t.Columns {
		if !c.Hidden && !generated[strings.ToLower(c.Name)] {
			load = append(load, c.Name)
		}
	}
	if tp.Load, err = catalog.Project(t, load, conv, catalog.Reads{}); err != nil {
		return err
	}
	b.p.Tables = append(b.p.Tables, tp)
	b.step(Step{Phase: PhaseTable, Object: tp.Target(), Table: tp.Target(),
		SQL: []string{"CREATE TABLE " + tp.QualifiedName() + " (\n  " + strings.Join(defs, ",\n  ") + "\n)"}})
	return nil
}

// exactInt reports whether c is decimal(p,0) or numeric(p,0) whose every
// value fits a bigint: the same columns key ranges cut as integers.
func exactInt(c *catalog.Column) bool { return c != nil && partition.ExactInt(c) }

// bigintColumns are the columns of t read as bigint: identities on
// decimal(p,0) with p <= 18, which become bigint identities (PostgreSQL
// identities are integers), and the decimal(p,0) columns of foreign keys
// referencing such an identity (PostgreSQL implements no foreign key from
// numeric onto bigint). The server converts them: the sink writes
// numeric values into numeric columns only, and a bigint holds every
// value exactly.
func (b *builder) bigintColumns(t *catalog.Table) []catalog.Override {
	var out []catalog.Override
	seen := map[string]bool{}
	add := func(c *catalog.Column) {
		if !seen[strings.ToLower(c.Name)] {
			seen[strings.ToLower(c.Name)] = true
			out = append(out, catalog.Override{Column: c.Name, Expr: "CAST(" + catalog.QuoteIdent(c.Name) + " AS bigint)"})
		}
	}
	for i := range t.Columns {
		if c := &t.Columns[i]; c.Identity != nil && exactInt(c) && c.Computed == nil {
			add(c)
		}
	}
	for _, fk := range t.ForeignKeys {
		ref := b.db.Table(fk.RefSchema, fk.RefTable)
		if ref == nil {
			continue
		}
		for i, rc := range fk.RefColumns {
			if r := ref.Column(rc); r != nil && r.Identity != nil && exactInt(r) && i < len(fk.Columns) {
				if c := t.Column(fk.Columns[i]); exactInt(c) && c.Computed == nil {
					add(c)
				}
			}
		}
	}
	return out
}

// targetType is the target type of a source column ("" when not mapped).
func (tp *TablePlan) targetType(name string) string {
	for i := range tp.Columns {
		if tp.Columns[i].Companion == "" && strings.EqualFold(tp.Columns[i].SourceName, name) {
			return tp.Columns[i].Type.SQL
		}
	}
	return ""
}

// fkTypeMismatch says which columns of a foreign key have target types
// of which one is an integer and the other numeric: a decimal(p,0)
// identity that became bigint, referenced from a column of more than 18
// digits that stays numeric.
func fkTypeMismatch(tp, ref *TablePlan, cols, refCols []string) string {
	for i := range cols {
		if i >= len(refCols) {
			break
		}
		a, b := tp.targetType(cols[i]), ref.targetType(refCols[i])
		_, ai := intBounds[a]
		_, bi := intBounds[b]
		if ai != bi && (strings.HasPrefix(a, "numeric") || strings.HasPrefix(b, "numeric")) {
			return fmt.Sprintf("%s is %s and %s.%s is %s", cols[i], a, ref.Source.FullName(), refCols[i], b)
		}
	}
	return ""
}

// colList is the target names of source columns, quoted.
func (s *tableScope) colList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = s.cols[strings.ToLower(n)].sql
	}
	return strings.Join(out, ", ")
}

// nullable reports whether any of the columns may hold NULL.
func nullable(t *catalog.Table, names []string) bool {
	for _, n := range names {
		if c := t.Column(n); c != nil && c.Nullable {
			return true
		}
	}
	return false
}

func (b *builder) keysAndIndexes(tp *TablePlan) {
	t, sc := tp.Source, b.byTable[tp.Source]
	for _, ix := range t.Indexes {
		obj := t.FullName() + "." + ix.Name
		switch {
		case ix.Type != catalog.IndexClustered && ix.Type != catalog.IndexNonclustered:
			b.untranslated(obj, "index", "", fmt.Sprintf("a %s index has no PostgreSQL equivalent: not created", ix.Type))
			continue
		case ix.Disabled:
			b.untranslated(obj, "index", "", "disabled in the source: not created")
			continue
		}
		var keys []string
		for _, k := range ix.Keys {
			keys = append(keys, k.Column)
		}
		name := b.uniqueName(tp.Schema, tp.Name, ix.Name)
		if name != postgres.FoldIdent(ix.Name, b.o.Identifiers) {
			b.note(obj, "name", "", fmt.Sprintf("named %s: PostgreSQL index names are unique per schema", name))
		}
		// SQL Server's unique keys admit one NULL; PostgreSQL 15's NULLS
		// NOT DISTINCT says the same.
		nulls := ""
		if ix.Unique && nullable(t, keys) {
			nulls = " NULLS NOT DISTINCT"
		}
		if ix.PrimaryKey || ix.UniqueConstraint {
			kind, phase := "UNIQUE", PhaseKey
			if ix.PrimaryKey {
				kind, nulls = "PRIMARY KEY", ""
			}
			// Built as a unique index, then attached: CREATE INDEX takes
			// SHARE, so the table's other indexes build beside it, where
			// ADD CONSTRAINT ... PRIMARY KEY (cols) would hold ACCESS
			// EXCLUSIVE for the whole build. The attach is a catalog
			// change; PostgreSQL names the constraint as the index.
			b.step(Step{Phase: phase, Object: tp.Schema + "." + name, Table: tp.Target(), lock: lockKey, SQL: []string{
				fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s)%s", postgres.QuoteIdent(name), tp.QualifiedName(), sc.colList(keys), nulls),
				fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s USING INDEX %s", tp.QualifiedName(), postgres.QuoteIdent(name), kind, postgres.QuoteIdent(name))}})
			continue
		}
		var cols []string
		for _, k := range ix.Keys {
			c := sc.cols[strings.ToLower(k.Column)].sql
			if k.Descending {
				c += " DESC"
			}
			cols = append(cols, c)
		}
		ddl := "CREATE "
		if ix.Unique {
			ddl += "UNIQUE "
		}
		ddl += fmt.Sprintf("INDEX %s ON %s (%s)", postgres.QuoteIdent(name), tp.QualifiedName(), strings.Join(cols, ", "))
		if len(ix.Include) > 0 {
			ddl += " INCLUDE (" + sc.colList(ix.Include) + ")"
		}
		ddl += nulls
		if ix.Filter != "" {
			where, _, notes, err := translateExpr(catalog.StripParens(ix.Filter), sc)
			if err != nil {
				b.untranslated(obj, "index", ix.Filter, fmt.Sprintf("filter not translated (%v): index not created", err))
				continue
			}
			ddl += " WHERE " + where
			for _, n := range notes {
				b.note(obj, "index", ix.Filter, n)
			}
		}
		if ix.Type == catalog.IndexClustered {
			b.note(obj, "index", "", "clustered in the source: PostgreSQL tables are heaps, so it is an ordinary index")
		}
		b.step(Step{Phase: PhaseIndex, Object: tp.Schema + "." + name, Table: tp.Target(), lock: lockShare, SQL: []string{ddl}})
	}
}

func (b *builder) checks(tp *TablePlan) {
	t, sc := tp.Source, b.byTable[tp.Source]
	for _, ck := range t.Checks {
		obj := t.FullName() + "." + ck.Name
		if ck.Disabled {
			b.untranslated(obj, "check", ck.Definition, "disabled in the source: not created")
			continue
		}
		expr, _, notes, err := translateExpr(catalog.StripParens(ck.Definition), sc)
		if err != nil {
			b.untranslated(obj, "check", ck.Definition, fmt.Sprintf("not translated (%v): not created", err))
			continue
		}
		for _, n := range notes {
			b.note(obj, "check", ck.Definition, n)
		}
		ddl := fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s)", tp.QualifiedName(),
			postgres.QuoteIdent(postgres.FoldIdent(ck.Name, b.o.Identifiers)), expr)
		if ck.NotTrusted {
			ddl += " NOT VALID"
			b.note(obj, "check", ck.Definition, "not trusted in the source (created WITH NOCHECK): created NOT VALID")
		}
		b.step(Step{Phase: PhaseCheck, Object: tp.Target() + "." + postgres.FoldIdent(ck.Name, b.o.Identifiers), Table: tp.Target(), lock: lockAccessExclusive, SQL: []string{ddl}})
	}
}

func (b *builder) foreignKeys(tp *TablePlan) {
	t, sc := tp.Source, b.byTable[tp.Source]
	for _, fk := range t.ForeignKeys {
		obj := t.FullName() + "." + fk.Name
		rs, rn, ok := b.target(fk.RefSchema, fk.RefTable)
		var ref *tableScope
		if ok {
			if rt := b.db.Table(fk.RefSchema, fk.RefTable); rt != nil {
				ref = b.byTable[rt]
			}
		}
		if ref == nil {
			b.untranslated(obj, "foreign key", "", fmt.Sprintf("references %s.%s, which is not migrated: not created", fk.RefSchema, fk.RefTable))
			continue
		}
		if fk.Disabled {
			b.untranslated(obj, "foreign key", "", "disabled in the source: not created")
			continue
		}
		if why := fkTypeMismatch(tp, ref.tp, fk.Columns, fk.RefColumns); why != "" {
			b.untranslated(obj, "foreign key", "", why+": PostgreSQL implements no foreign key between them; not created")
			continue
		}
		name := postgres.FoldIdent(fk.Name, b.o.Identifiers)
		ddl := fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s.%s (%s) ON DELETE %s ON UPDATE %s",
			tp.QualifiedName(), postgres.QuoteIdent(name), sc.colList(fk.Columns), postgres.QuoteIdent(rs), postgres.QuoteIdent(rn),
			ref.colList(fk.RefColumns), fk.OnDelete, fk.OnUpdate)
		// Added NOT VALID (a catalog change) and validated in a step of
		// its own: see PhaseValidate.
		ddl += " NOT VALID"
		object, refs := tp.Target()+"."+name, []string{rs + "." + rn}
		b.step(Step{Phase: PhaseForeignKey, Object: object, Table: tp.Target(), Refs: refs, lock: lockShareRowExclusive, SQL: []string{ddl}})
		if fk.NotTrusted {
			b.note(obj, "foreign key", "", "not trusted in the source (created WITH NOCHECK): created NOT VALID")
			continue
		}
		b.step(Step{Phase: PhaseValidate, Object: object, Table: tp.Target(), Refs: refs, lock: lockShareUpdateExclusive,
			SQL: []string{fmt.Sprintf("ALTER TABLE %s VALIDATE CONSTRAINT %s", tp.QualifiedName(), postgres.QuoteIdent(name))}})
	}
}
