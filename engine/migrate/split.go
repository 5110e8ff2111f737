package migrate

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/partition"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Splitting a big table into key ranges: when a table has more rows than
// SplitRows, its data step becomes one step per range of the leading
// column of its clustered key, each its own SELECT with a WHERE on the key
// (which SQL Server answers with a range seek on the clustered index) and
// its own COPY and transaction, so that several sessions load one table
// at once and a resumed run reloads only the ranges that did not commit.
//
// The ranges are engine/partition's, the planner partitioned extracts
// use: integer, date and date/time keys cut evenly over [MIN, MAX] (and
// decimal(p,0) keys of at most 18 digits, exact integers, as integers),
// uniqueidentifier keys in SQL Server's own GUID order, character keys and
// other decimal keys at quantiles of a sample that SQL Server groups and
// sorts (so the bounds are in the order of the key's collation, which no
// client reproduces); the first range open below and the last above, so
// rows inserted outside the extremes since they were read still land in
// one range, and a nullable key one more range for its NULLs. The bounds
// are sp_executesql parameters of the key's own type (and collation).
//
// Each range is also a PostgreSQL predicate, for verifying what the range
// loaded. It must select exactly the rows the T-SQL one did, after the
// sink's conversion: date/time bounds are cut to whole seconds (every
// mapping keeps a value's second, while a datetime's 1/300 s or a
// datetime2's 100 ns digit may move by rounding), and a GUID bound is
// compared on the uuid's bytes in SQL Server's order of significance, not
// PostgreSQL's. A character key has no such predicate: PostgreSQL orders
// text by its own collation, not the source's ('abc' and 'ABC' are one
// value to a case-insensitive source, 'b' sorts before 'B' here and after
// it there), so a range of a character key is verified on the rows its
// own transaction inserted (pgInserted): each range appends in a
// transaction of its own, so those are the range's rows. The identity of a split table is restarted by a step of
// its own after every range is in (ALTER TABLE would wait for the other
// ranges' locks).

// maxParts bounds the ranges of one table.
const maxParts = 64

// split replaces the data step of every table that qualifies with its
// ranges.
func (p *Plan) split(ctx context.Context, q catalog.Querier, splitRows int64, timeout session.Timeout) error {
	if splitRows <= 0 {
		return nil
	}
	for _, tp := range p.Tables {
		if tp.Source.RowCount <= splitRows {
			continue
		}
		col, parts, why, err := tp.ranges(ctx, q, splitRows, timeout)
		if err != nil {
			return err
		}
		if len(parts) < 2 {
			if why != "" {
				p.Notes = append(p.Notes, Item{Object: tp.Source.FullName(), What: "table",
					Detail: fmt.Sprintf("about %d rows: loaded whole on one session, as %s; nothing needs doing, the table only does not load on several sessions at once", tp.Source.RowCount, why)})
			}
			continue
		}
		pgCol := tp.targetColumn(col.Name)
		ranges := make([]KeyRange, len(parts))
		for i := range parts {
			ranges[i] = KeyRange{Part: parts[i], PGWhere: pgRange(col, pgCol, parts[i])}
		}
		p.useRanges(tp, ranges)
		p.Notes = append(p.Notes, Item{Object: tp.Source.FullName(), What: "table",
			Detail: fmt.Sprintf("about %d rows: loaded as %d ranges of %s (%s), each in its own transaction", tp.Source.RowCount, len(parts), col.Name, col.SQLType())})
	}
	return nil
}

// KeyRange is one key range of a split table: the T-SQL predicate with
// its bounds, and the same rows as a PostgreSQL predicate. A run records
// the ranges of every split table in its state table before it loads
// any, and a resumed run loads the ranges recorded, not those the
// source's keys would give now: a range is then never loaded twice, nor
// a row in two ranges, whatever was inserted or deleted in between.
type KeyRange struct {
	Part    partition.Part `json:"part"`
	PGWhere string         `json:"pg_where"`
}

// useRanges makes tp's data steps one per range (none: the whole table
// in one step), in phase order. The identity of a split table is
// restarted by a step of its own, once every range is in.
func (p *Plan) useRanges(tp *TablePlan, ranges []KeyRange) {
	var steps []Step
	for _, s := range p.Steps {
		switch {
		case s.Table == tp.Target() && s.Object == tp.Target()+".identity":
			tp.Restart = s.SQL[0]
		case s.Table != tp.Target() || s.Phase != PhaseData:
			steps = append(steps, s)
		}
	}
	if len(ranges) == 0 {
		steps = append(steps, Step{Phase: PhaseData, Object: tp.Target(), Table: tp.Target()})
	}
	for i, kr := range ranges {
		steps = append(steps, Step{Phase: PhaseData, Object: fmt.Sprintf("%s#%d/%d", tp.Target(), i+1, len(ranges)), Table: tp.Target(),
			Range: &kr.Part, PGWhere: kr.PGWhere})
	}
	if tp.Restart != "" && len(ranges) > 0 {
		steps = append(steps, Step{Phase: PhaseKey, Object: tp.Target() + ".identity", Table: tp.Target(), SQL: []string{tp.Restart}})
		tp.Restart = ""
	}
	tp.Parts = len(ranges)
	// Keep the phase order: the data steps join the data, the identity
	// steps the keys.
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Phase < steps[j].Phase })
	p.Steps = steps
}

// Ranges are the key ranges tp's data loads as (none: one piece).
func (p *Plan) Ranges(tp *TablePlan) []KeyRange {
	var out []KeyRange
	for _, s := range p.Steps {
		if s.Phase == PhaseData && s.Table == tp.Target() && s.Range != nil {
			out = append(out, KeyRange{Part: *s.Range, PGWhere: s.PGWhere})
		}
	}
	return out
}

// ranges plans the key ranges of tp with engine/partition, about one per
// splitRows rows. A table the planner cannot split (no clustered index,
// a key type it does not cut) gets none and the reason.
func (tp *TablePlan) ranges(ctx context.Context, q catalog.Querier, splitRows int64, timeout session.Timeout) (*catalog.Column, []partition.Part, string, error) {
	spec := partition.Spec{Auto: true}
	col, err := partition.KeyColumn(tp.Source, spec)
	var pe *partition.Error
	if errors.As(err, &pe) {
		return nil, nil, unsplittable(tp.Source, pe), nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	if tp.targetColumn(col.Name) == "" {
		return nil, nil, "its key column is not loaded", nil
	}
	spec.Count = int(min((tp.Source.RowCount+splitRows-1)/splitRows, maxParts))
	parts, err := partition.Plan(ctx, q, tp.Source, spec, timeout)
	if err != nil {
		return nil, nil, "", err
	}
	if col.Kind().Class() == decode.ClassDateTime {
		parts = wholeSeconds(col, parts)
	}
	return col, parts, "", nil
}

// unsplittable says why t has no key ranges, in a migration's terms (the
// planner's message advises an export's partition settings, which a
// migration has none of).
func unsplittable(t *catalog.Table, pe *partition.Error) string {
	key := t.ClusteredKey()
	if len(key) == 0 {
		return "it has no clustered rowstore index whose key could be cut into ranges"
	}
	if c := t.Column(key[0].Column); c != nil {
		return fmt.Sprintf("its clustered key leads with %s, a %s: key ranges are cut on integer, decimal, numeric, "+
			"date, datetime, datetime2, smalldatetime, uniqueidentifier, char, varchar, nchar and nvarchar keys (not (max))", c.Name, c.SQLType())
	}
	return pe.Msg
}

// targetColumn is the quoted target column of source column name, "" when
// it is not loaded.
func (tp *TablePlan) targetColumn(name string) string {
	for i := range tp.Columns {
		if tp.Columns[i].Companion == "" && strings.EqualFold(tp.Columns[i].SourceName, name) {
			return postgres.QuoteIdent(tp.Columns[i].Name)
		}
	}
	return ""
}

// wholeSeconds cuts the bounds of a date/time key's parts down to whole
// seconds (dropping those that then coincide), so that a value and its
// PostgreSQL conversion are on the same side of every bound.
func wholeSeconds(col *catalog.Column, parts []partition.Part) []partition.Part {
	const perSecond = decode.TicksPerDay / 86400
	var bounds []partition.Bound
	for _, p := range parts {
		if p.Hi == nil {
			continue
		}
		b := *p.Hi
		b.Int -= b.Int % perSecond
		if len(bounds) == 0 || b.Int > bounds[len(bounds)-1].Int {
			bounds = append(bounds, b)
		}
	}
	return partition.Ranges(col, bounds)
}

// pgRange is part as a PostgreSQL predicate on pgCol, the target column of
// the key col.
func pgRange(col *catalog.Column, pgCol string, p partition.Part) string {
	switch {
	case p.Lo == nil && p.Hi == nil && p.Where == catalog.QuoteIdent(col.Name)+" IS NULL":
		return pgCol + " IS NULL"
	case p.Lo == nil && p.Hi == nil && p.Where != "":
		return pgCol + " IS NOT NULL"
	}
	operand := pgCol
	switch col.Kind() {
	case decode.KindUniqueIdentifier:
		operand = pgGUIDOrder(pgCol)
	case decode.KindChar, decode.KindVarChar, decode.KindNChar, decode.KindNVarChar:
		return pgInserted
	}
	var w []string
	if p.Lo != nil {
		w = append(w, operand+" >= "+pgBound(*p.Lo))
	}
	if p.Hi != nil {
		w = append(w, operand+" < "+pgBound(*p.Hi))
	}
	return strings.Join(w, " AND ")
}

// pgInserted selects the rows the current transaction inserted: their
// xmin is its transaction id.
const pgInserted = "xmin = pg_current_xact_id()::xid"

// pgGUIDOrder is a uuid column's bytes as hex digits in the order SQL
// Server compares uniqueidentifier values (decode.GUID.SQLServerOrderKey):
// compared as C strings they order as the source does. uuid's text is
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, byte k at 2k+1 (plus one per dash
// before it).
func pgGUIDOrder(pgCol string) string {
	// Runs of bytes adjacent in the text become one substr.
	type run struct{ pos, n int }
	var runs []run
	for _, k := range guidSignificance() {
		pos := 2*k + 1
		switch {
		case k >= 10:
			pos += 4
		case k >= 8:
			pos += 3
		case k >= 6:
			pos += 2
		case k >= 4:
			pos++
		}
		if l := len(runs) - 1; l >= 0 && runs[l].pos+runs[l].n == pos {
			runs[l].n += 2
			continue
		}
		runs = append(runs, run{pos, 2})
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("substr(%s::text, %d, %d)", pgCol, r.pos, r.n)
	}
	return "(" + strings.Join(parts, " || ") + ") COLLATE \"C\""
}

// guidSignificance lists a GUID's byte indexes (RFC 4122 order) most
// significant first in SQL Server's order, read off SQLServerOrderKey.
func guidSignificance() []int {
	var g decode.GUID
	for k := range g {
		g[k] = byte(k)
	}
	key := g.SQLServerOrderKey()
	out := make([]int, len(key))
	for i, b := range key {
		out[i] = int(b)
	}
	return out
}

// pgBound is a bound as a PostgreSQL literal of the key's target type.
func pgBound(b partition.Bound) string {
	if b.GUID != nil {
		key := b.GUID.SQLServerOrderKey()
		return "'" + hex.EncodeToString(key[:]) + "'"
	}
	return b.String() // an integer or decimal, or a quoted date or timestamp
}
