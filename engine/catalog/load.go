package catalog

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
)

// Querier runs a request on a session; *session.Conn is one.
type Querier interface {
	Query(ctx context.Context, q session.Query, sink decode.CellSink) (*session.Result, error)
}

// Options says what Load reads.
type Options struct {
	// Filter selects the tables (and views).
	Filter Filter
	// Views also loads the views the filter selects.
	Views bool
	// Sequences also loads the sequences of the schemas of the selected
	// tables (every schema when Filter has no Include).
	Sequences bool
	// Timeout is the request deadline of each catalog query.
	Timeout session.Timeout
	// NoWire skips the zero-row SELECT * of every table that fills
	// Column.Wire: enough to list tables with their columns and row
	// counts, one batch fewer per describeBatch tables.
	NoWire bool
}

// The catalog queries. Each reads one catalog view (joined only with
// sys.schemas or sys.types for names), with the column names SQL Server
// documents, so they run on every version from SQL Server 2012 on, and
// each result is parsed by a function of its own (parse.go) that the
// tests also feed with rows as a server returns them. The detail queries
// take a predicate on the object id in place of %s.
const (
	qTables = `SELECT t.object_id, s.name AS schema_name, t.name FROM sys.tables AS t ` +
		`JOIN sys.schemas AS s ON s.schema_id = t.schema_id WHERE t.is_ms_shipped = 0%s`
	qViews = `SELECT v.object_id, s.name AS schema_name, v.name, m.definition FROM sys.views AS v ` +
		`JOIN sys.schemas AS s ON s.schema_id = v.schema_id LEFT JOIN sys.sql_modules AS m ON m.object_id = v.object_id ` +
		`WHERE v.is_ms_shipped = 0%s`
	qSequences = `SELECT sq.object_id, s.name AS schema_name, sq.name, ty.name AS type_name, sq.precision, sq.start_value, ` +
		`sq.increment, sq.minimum_value, sq.maximum_value, sq.is_cycling, sq.is_cached, sq.cache_size, sq.current_value ` +
		`FROM sys.sequences AS sq JOIN sys.schemas AS s ON s.schema_id = sq.schema_id ` +
		`JOIN sys.types AS ty ON ty.user_type_id = sq.user_type_id`
	// qSequencesUsed is separate from qSequences: last_used_value exists
	// from SQL Server 2017 on, and older servers refuse the statement.
	qSequencesUsed = `SELECT sq.object_id, sq.last_used_value FROM sys.sequences AS sq`
	qColumns       = `SELECT c.object_id, c.column_id, c.name, ty.name AS type_name, bt.name AS base_type_name, c.max_length, ` +
		`c.precision, c.scale, c.collation_name, c.is_nullable, c.is_identity, c.is_computed FROM sys.columns AS c ` +
		`JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id LEFT JOIN sys.types AS bt ON bt.user_type_id = c.system_type_id ` +
		`WHERE %s ORDER BY c.object_id, c.column_id`
	qIdentity = `SELECT ic.object_id, ic.column_id, ic.seed_value, ic.increment_value, ic.last_value ` +
		`FROM sys.identity_columns AS ic WHERE %s`
	qComputed = `SELECT cc.object_id, cc.column_id, cc.definition, cc.is_persisted FROM sys.computed_columns AS cc WHERE %s`
	qDefaults = `SELECT d.parent_object_id, d.parent_column_id, d.name, d.definition FROM sys.default_constraints AS d WHERE %s`
	qIndexes  = `SELECT i.object_id, i.index_id, i.name, i.type, i.is_unique, i.is_primary_key, i.is_unique_constraint, ` +
		`i.is_disabled, i.filter_definition FROM sys.indexes AS i WHERE %s AND i.is_hypothetical = 0 AND i.index_id > 0 ` +
		`ORDER BY i.object_id, i.index_id`
	qIndexColumns = `SELECT ic.object_id, ic.index_id, ic.index_column_id, ic.column_id, ic.key_ordinal, ic.is_descending_key, ` +
		`ic.is_included_column FROM sys.index_columns AS ic WHERE %s ORDER BY ic.object_id, ic.index_id, ic.index_column_id`
	qKeys        = `SELECT k.parent_object_id, k.name, k.type, k.unique_index_id FROM sys.key_constraints AS k WHERE %s`
	qForeignKeys = `SELECT f.object_id, f.parent_object_id, f.name, OBJECT_SCHEMA_NAME(f.referenced_object_id) AS referenced_schema, ` +
		`OBJECT_NAME(f.referenced_object_id) AS referenced_table, f.delete_referential_action, f.update_referential_action, ` +
		`f.is_disabled, f.is_not_trusted FROM sys.foreign_keys AS f WHERE %s`
	qForeignKeyColumns = `SELECT fc.constraint_object_id, fc.constraint_column_id, fc.parent_object_id, fc.parent_column_id, ` +
		`COL_NAME(fc.referenced_object_id, fc.referenced_column_id) AS referenced_column FROM sys.foreign_key_columns AS fc ` +
		`WHERE %s ORDER BY fc.constraint_object_id, fc.constraint_column_id`
	qChecks = `SELECT ck.parent_object_id, ck.parent_column_id, ck.name, ck.definition, ck.is_disabled, ck.is_not_trusted ` +
		`FROM sys.check_constraints AS ck WHERE %s`
	qRowCounts = `SELECT p.object_id, SUM(p.rows) AS row_count FROM sys.partitions AS p WHERE %s AND p.index_id IN (0, 1) ` +
		`GROUP BY p.object_id`
)

// detail lists the detail queries in batch order with the column that
// holds the owning table's object id.
var detail = []struct {
	sql, objCol string
}{
	{qColumns, "c.object_id"},
	{qIdentity, "ic.object_id"},
	{qComputed, "cc.object_id"},
	{qDefaults, "d.parent_object_id"},
	{qIndexes, "i.object_id"},
	{qIndexColumns, "ic.object_id"},
	{qKeys, "k.parent_object_id"},
	{qForeignKeys, "f.parent_object_id"},
	{qForeignKeyColumns, "fc.parent_object_id"},
	{qChecks, "ck.parent_object_id"},
	{qRowCounts, "p.object_id"},
}

// maxInList is the most object ids a detail query names in an IN list;
// beyond it the queries read every table's rows and the unselected ones
// are dropped, which is cheaper than a very long statement.
const maxInList = 500

// describeBatch is how many SELECT TOP (0) * statements go in one batch.
const describeBatch = 100

// NotFoundError is a table that does not exist (or is not visible to the
// login).
type NotFoundError struct{ Schema, Table string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("table %s.%s not found (or the login may not see it)", e.Schema, e.Table)
}

// LoadTable loads one table or view by name.
func LoadTable(ctx context.Context, q Querier, schema, table string, timeout session.Timeout) (*Table, error) {
	db, err := Load(ctx, q, Options{Filter: Filter{Include: []string{quoteName(schema, table)}}, Views: true, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	if len(db.Tables) == 0 {
		return nil, &NotFoundError{schema, table}
	}
	return db.Tables[0], nil
}

// Load reads what opts selects from the database the session is in. It
// sends one batch listing the tables, one batch with the detail queries,
// and one batch per describeBatch tables describing their columns.
func Load(ctx context.Context, q Querier, opts Options) (*Database, error) {
	if err := opts.Filter.Validate(); err != nil {
		return nil, err
	}
	// The tables (and views), narrowed to one by name when the filter
	// names exactly one.
	nameCond := func(alias string) string { return "" }
	if s, t, ok := opts.Filter.exact(); ok {
		nameCond = func(alias string) string {
			return " AND s.name = " + quoteString(s) + " AND " + alias + ".name = " + quoteString(t)
		}
	}
	stmts := []string{fmt.Sprintf(qTables, nameCond("t"))}
	if opts.Views {
		stmts = append(stmts, fmt.Sprintf(qViews, nameCond("v")))
	}
	if opts.Sequences {
		stmts = append(stmts, qSequences)
	}
	sets, err := run(ctx, q, stmts, opts.Timeout)
	if err != nil {
		return nil, fmt.Errorf("catalog: listing tables: %w", err)
	}
	db := &Database{}
	tables, err := parseTables(sets[0].rows, false)
	if err != nil {
		return nil, err
	}
	next := 1
	if opts.Views {
		views, err := parseTables(sets[next].rows, true)
		if err != nil {
			return nil, err
		}
		tables = append(tables, views...)
		next++
	}
	for _, t := range tables {
		if opts.Filter.Match(t.Schema, t.Name) {
			db.Tables = append(db.Tables, t)
		}
	}
	sort.Slice(db.Tables, func(i, j int) bool {
		a, b := db.Tables[i], db.Tables[j]
		if !strings.EqualFold(a.Schema, b.Schema) {
			return strings.ToLower(a.Schema) < strings.ToLower(b.Schema)
		}
		return strings.ToLower(a.Name) < strings.ToLower(b.Name)
	})
	if opts.Sequences {
		seqs, err := parseSequences(sets[next].rows)
		if err != nil {
			return nil, err
		}
		schemas := map[string]bool{}
		for _, t := range db.Tables {
			schemas[strings.ToLower(t.Schema)] = true
		}
		used, uerr := run(ctx, q, []string{qSequencesUsed}, opts.Timeout)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var last map[int32]*big.Int
		if uerr == nil {
			if last, err = parseSequencesUsed(used[0].rows); err != nil {
				return nil, err
			}
		}
		for _, s := range seqs {
			if len(opts.Filter.Include) == 0 || schemas[strings.ToLower(s.Schema)] {
				s.LastUsed, s.LastUsedUnknown = last[s.ObjectID], uerr != nil
				db.Sequences = append(db.Sequences, s)
			}
		}
	}
	if len(db.Tables) == 0 {
		return db, nil
	}
	if err := loadDetails(ctx, q, db.Tables, opts.Timeout); err != nil {
		return nil, err
	}
	if opts.NoWire {
		return db, nil
	}
	if err := describe(ctx, q, db.Tables, opts.Timeout); err != nil {
		return nil, err
	}
	return db, nil
}

// loadDetails runs the detail queries for tables in one batch and
// attaches what they return.
func loadDetails(ctx context.Context, q Querier, tables []*Table, timeout session.Timeout) error {
	var stmts []string
	for _, d := range detail {
		cond := "1 = 1"
		if len(tables) <= maxInList {
			ids := make([]string, len(tables))
			for i, t := range tables {
				ids[i] = strconv.FormatInt(int64(t.ObjectID), 10)
			}
			cond = d.objCol + " IN (" + strings.Join(ids, ", ") + ")"
		}
		stmts = append(stmts, fmt.Sprintf(d.sql, cond))
	}
	sets, err := run(ctx, q, stmts, timeout)
	if err != nil {
		return fmt.Errorf("catalog: reading table details: %w", err)
	}
	rows := make([][][]any, len(sets))
	for i := range sets {
		rows[i] = sets[i].rows
	}
	return attach(tables, rows)
}

// describe adds each column's wire description (Column.Wire) from a
// zero-row SELECT * of its table, and marks the columns SELECT * leaves
// out as hidden.
func describe(ctx context.Context, q Querier, tables []*Table, timeout session.Timeout) error {
	for from := 0; from < len(tables); from += describeBatch {
		part := tables[from:min(from+describeBatch, len(tables))]
		stmts := make([]string, len(part))
		for i, t := range part {
			stmts[i] = "SELECT TOP (0) * FROM " + t.QuotedName()
		}
		sets, err := run(ctx, q, stmts, timeout)
		if err != nil {
			return fmt.Errorf("catalog: describing columns: %w", err)
		}
		for i, t := range part {
			attachWire(t, sets[i].cols)
		}
	}
	return nil
}

// Describe returns the columns of the first result set of sql as the
// server describes them, reading no rows: run it on a zero-row form of a
// query (Projection.DescribeSQL) to learn what a sink will be given.
func Describe(ctx context.Context, q Querier, sql string, timeout session.Timeout) ([]decode.Column, error) {
	sets, err := run(ctx, q, []string{sql}, timeout)
	if err != nil {
		return nil, err
	}
	return sets[0].cols, nil
}

// resultSet is one result set of a catalog batch.
type resultSet struct {
	cols []decode.Column
	rows [][]any
}

// run sends stmts as one batch and returns one result set per statement.
func run(ctx context.Context, q Querier, stmts []string, timeout session.Timeout, params ...session.Param) ([]resultSet, error) {
	var sets multiCapture
	if _, err := q.Query(ctx, session.Query{SQL: strings.Join(stmts, ";\n"), Params: params, Timeout: timeout}, &sets); err != nil {
		return nil, err
	}
	sets.flush()
	if sets.Err != nil {
		return nil, sets.Err
	}
	if len(sets.sets) != len(stmts) {
		return nil, fmt.Errorf("catalog: the server returned %d result sets for %d statements", len(sets.sets), len(stmts))
	}
	return sets.sets, nil
}

// multiCapture keeps every result set of a batch, where decode.Capture
// keeps the last.
type multiCapture struct {
	decode.Capture
	sets []resultSet
}

func (m *multiCapture) Columns(cols []decode.Column, modes []decode.Mode) error {
	m.flush()
	return m.Capture.Columns(cols, modes)
}

// flush moves the result set in progress to sets.
func (m *multiCapture) flush() {
	if m.Capture.Sets > len(m.sets) {
		m.sets = append(m.sets, resultSet{cols: m.Capture.Cols, rows: m.Capture.Rows})
	}
}
