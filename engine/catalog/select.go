package catalog

import (
	"context"
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
)

// Override replaces one column's SELECT expression; Expr "raw" selects
// the column as it is, without the default conversion.
type Override struct {
	Column string
	Expr   string
}

// UnknownColumnError is a column named in a column list or an override
// that the table does not have. Field says which list named it.
type UnknownColumnError struct {
	Field         string // "columns" or "convert"
	Column        string
	Schema, Table string
}

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("column %q is not in %s.%s", e.Column, e.Schema, e.Table)
}

// DefaultConversion is the SELECT expression a column of c's type is
// exported through when no override says otherwise, or "" for none: the
// CLR types no sink can read raw are converted by the server, geography
// and geometry to WKB with STAsBinary() (varbinary(max)), hierarchyid to
// its path text with ToString() (nvarchar(4000)).
func DefaultConversion(c *Column) string {
	q := QuoteIdent(c.Name)
	switch c.Kind() {
	case decode.KindGeography, decode.KindGeometry:
		return q + ".STAsBinary()"
	case decode.KindHierarchyID:
		return q + ".ToString()"
	}
	return ""
}

// Reads is what the sinks of an extract take as the server stores it, so
// Project selects those columns without their default conversion. The
// SELECT of an extract is one for all its sinks: a field is true only when
// every sink of the extract reads that form (engine.ExtractPlan.Reads).
type Reads struct {
	// Spatial: geography and geometry in SQL Server's own serialization,
	// which carries each value's SRID (STAsBinary's WKB drops it); the
	// sink converts it (the Parquet sink to WKB with GeoParquet metadata).
	Spatial bool
}

// converts reports whether c goes through its default conversion for
// sinks that read r.
func (r Reads) converts(c *Column) bool {
	switch c.Kind() {
	case decode.KindGeography, decode.KindGeometry:
		return !r.Spatial
	}
	return true
}

// Item is one column of a Projection.
type Item struct {
	Column *Column
	// Expr is the SELECT expression, "" for the column itself.
	Expr string
	// Converted says Expr is the default conversion (not an override).
	Converted bool
}

// Projection is the select list of a table extract: which columns, each
// through which expression. It is the one place that applies the default
// conversions and the job's overrides, so the SELECT a run sends and the
// one `inspect` describes are the same text.
type Projection struct {
	Table *Table
	Items []Item
}

// Project chooses the columns of t (want; default every column SELECT *
// returns, in table order) and their expressions: the override for the
// column when convert has one ("raw" selects it unconverted), else the
// default conversion unless the sinks read the column as it is (reads).
// Names are matched case-insensitively; an unknown one is an
// *UnknownColumnError.
func Project(t *Table, want []string, convert []Override, reads Reads) (*Projection, error) {
	conv := map[string]string{}
	for _, c := range convert {
		if t.Column(c.Column) == nil {
			return nil, &UnknownColumnError{Field: "convert", Column: c.Column, Schema: t.Schema, Table: t.Name}
		}
		conv[strings.ToLower(c.Column)] = c.Expr
	}
	p := &Projection{Table: t}
	pick := func(c *Column) {
		it := Item{Column: c}
		expr, ok := conv[strings.ToLower(c.Name)]
		switch {
		case ok && strings.EqualFold(expr, "raw"):
		case ok:
			it.Expr = expr
		case reads.converts(c):
			it.Expr = DefaultConversion(c)
			it.Converted = it.Expr != ""
		}
		p.Items = append(p.Items, it)
	}
	if len(want) == 0 {
		for i := range t.Columns {
			if !t.Columns[i].Hidden {
				pick(&t.Columns[i])
			}
		}
		return p, nil
	}
	for _, w := range want {
		c := t.Column(w)
		if c == nil {
			return nil, &UnknownColumnError{Field: "columns", Column: w, Schema: t.Schema, Table: t.Name}
		}
		pick(c)
	}
	return p, nil
}

func (p *Projection) list() string {
	var b strings.Builder
	for k, it := range p.Items {
		if k > 0 {
			b.WriteString(", ")
		}
		q := QuoteIdent(it.Column.Name)
		if it.Expr == "" {
			b.WriteString(q)
		} else {
			b.WriteString(it.Expr + " AS " + q)
		}
	}
	return b.String()
}

// SQL is the extract's SELECT, with where (a predicate, "" for none).
func (p *Projection) SQL(where string) string {
	s := "SELECT " + p.list() + " FROM " + p.Table.QuotedName()
	if where != "" {
		s += " WHERE " + where
	}
	return s
}

// DescribeSQL is the SELECT with TOP (0): run with Describe it gives the
// columns exactly as the extract's sinks will receive them, converted
// columns included, reading no row.
func (p *Projection) DescribeSQL() string {
	return "SELECT TOP (0) " + p.list() + " FROM " + p.Table.QuotedName()
}

// CountSQL counts the rows of schema.table that where selects.
func CountSQL(schema, table, where string) string {
	s := "SELECT COUNT_BIG(*) FROM " + quoteName(schema, table)
	if where != "" {
		s += " WHERE " + where
	}
	return s
}

// Count returns the exact number of rows of schema.table that where
// selects (COUNT_BIG(*): a scan on the server, unlike Table.RowCount).
// params are the values of the @names where uses (a partition's bounds).
func Count(ctx context.Context, q Querier, schema, table, where string, timeout session.Timeout, params ...session.Param) (int64, error) {
	sql := CountSQL(schema, table, where)
	sets, err := run(ctx, q, []string{sql}, timeout, params...)
	if err != nil {
		return 0, err
	}
	if len(sets[0].rows) != 1 || len(sets[0].rows[0]) != 1 {
		return 0, fmt.Errorf("catalog: %s: expected one value, got %d rows", sql, len(sets[0].rows))
	}
	f := fields{view: "COUNT_BIG", row: sets[0].rows[0]}
	if sets[0].rows[0][0] == nil {
		return 0, fmt.Errorf("catalog: %s: NULL count", sql)
	}
	n := f.int(0)
	return n, f.err
}

// KeyRange is the smallest and largest value of the leading column of a
// table's clustered key: what a key-range partition plan splits.
type KeyRange struct {
	// Column is the leading clustered key column; Descending its order.
	Column     *Column
	Descending bool
	// Min and Max are its extremes as decode.Capture gives values (int64,
	// string, decode.DateTime, ...); both nil when the table is empty or
	// the column holds only NULLs.
	Min, Max any
}

// ClusteredKeyRange reads MIN and MAX of the leading clustered key column
// of t. ok is false for a heap or a clustered columnstore table, which
// have no key order to split on.
func ClusteredKeyRange(ctx context.Context, q Querier, t *Table, timeout session.Timeout) (r KeyRange, ok bool, err error) {
	key := t.ClusteredKey()
	if len(key) == 0 {
		return KeyRange{}, false, nil
	}
	c := t.Column(key[0].Column)
	if c == nil {
		return KeyRange{}, false, fmt.Errorf("catalog: %s: clustered key column %q is not a column", t.FullName(), key[0].Column)
	}
	r, err = ColumnRange(ctx, q, t, c, timeout)
	r.Descending = key[0].Descending
	return r, true, err
}

// ColumnRange reads MIN and MAX of column c of t: on an indexed column two
// seeks, on any other a scan. NULLs are not part of the range.
func ColumnRange(ctx context.Context, q Querier, t *Table, c *Column, timeout session.Timeout) (KeyRange, error) {
	col := QuoteIdent(c.Name)
	sql := "SELECT MIN(" + col + "), MAX(" + col + ") FROM " + t.QuotedName()
	sets, err := run(ctx, q, []string{sql}, timeout)
	if err != nil {
		return KeyRange{}, fmt.Errorf("catalog: %s: %w", sql, err)
	}
	if len(sets[0].rows) != 1 || len(sets[0].rows[0]) != 2 {
		return KeyRange{}, fmt.Errorf("catalog: %s: expected one row of two values", sql)
	}
	row := sets[0].rows[0]
	return KeyRange{Column: c, Min: row[0], Max: row[1]}, nil
}
