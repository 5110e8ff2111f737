package migrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Splitting a big table into key ranges: when a table has more rows than
// SplitRows and its clustered key leads with an integer column, its data
// step becomes one step per range of that column, each its own SELECT
// with a WHERE on the key (which SQL Server answers with a range seek on
// the clustered index) and its own COPY and transaction, so that several
// sessions load one table at once and a resumed run reloads only the
// ranges that did not commit. The ranges split [MIN, MAX] evenly; the
// first is open below and the last above, so rows inserted outside the
// extremes since they were read still land in one range. The identity of
// a split table is restarted by a step of its own after every range is
// in (ALTER TABLE would wait for the other ranges' locks).

// maxParts bounds the ranges of one table.
const maxParts = 64

// part is one key range: its T-SQL and PostgreSQL predicates.
type part struct {
	n, of          int
	where, pgWhere string
	label          string
}

// split replaces the data step of every table that qualifies with its
// ranges.
func (p *Plan) split(ctx context.Context, q catalog.Querier, splitRows int64, timeout session.Timeout) error {
	if splitRows <= 0 {
		return nil
	}
	byTarget := map[string]*TablePlan{}
	for _, tp := range p.Tables {
		byTarget[tp.Target()] = tp
	}
	var steps []Step
	for _, s := range p.Steps {
		tp := byTarget[s.Table]
		if s.Phase != PhaseData || tp == nil || tp.Source.RowCount <= splitRows {
			steps = append(steps, s)
			continue
		}
		parts, err := tp.ranges(ctx, q, splitRows, timeout)
		if err != nil {
			return err
		}
		if len(parts) < 2 {
			steps = append(steps, s)
			continue
		}
		for _, pt := range parts {
			steps = append(steps, Step{Phase: PhaseData, Object: fmt.Sprintf("%s#%d/%d", tp.Target(), pt.n, pt.of), Table: tp.Target(),
				Where: pt.where, PGWhere: pt.pgWhere})
		}
		if tp.Restart != "" {
			steps = append(steps, Step{Phase: PhaseKey, Object: tp.Target() + ".identity", Table: tp.Target(), SQL: []string{tp.Restart}})
			tp.Restart = ""
		}
		tp.Parts = len(parts)
		p.Notes = append(p.Notes, Item{Object: tp.Source.FullName(), What: "table",
			Detail: fmt.Sprintf("about %d rows: loaded as %d ranges of %s, each in its own transaction", tp.Source.RowCount, len(parts), parts[0].label)})
	}
	// Keep the phase order: the identity steps join the keys.
	var ordered []Step
	for ph := PhaseSetup; ph <= PhaseView; ph++ {
		for _, s := range steps {
			if s.Phase == ph {
				ordered = append(ordered, s)
			}
		}
	}
	p.Steps = ordered
	return nil
}

// ranges computes the key ranges of tp, none when its clustered key does
// not lead with an integer column.
func (tp *TablePlan) ranges(ctx context.Context, q catalog.Querier, splitRows int64, timeout session.Timeout) ([]part, error) {
	kr, ok, err := catalog.ClusteredKeyRange(ctx, q, tp.Source, timeout)
	if err != nil || !ok {
		return nil, err
	}
	lo, ok1 := kr.Min.(int64)
	hi, ok2 := kr.Max.(int64)
	if !ok1 || !ok2 || hi <= lo {
		return nil, nil
	}
	n := (tp.Source.RowCount + splitRows - 1) / splitRows
	n = min(n, maxParts, hi-lo+1)
	var pgCol string
	for i := range tp.Columns {
		if tp.Columns[i].Companion == "" && strings.EqualFold(tp.Columns[i].SourceName, kr.Column.Name) {
			pgCol = postgres.QuoteIdent(tp.Columns[i].Name)
		}
	}
	if pgCol == "" {
		return nil, nil
	}
	col := catalog.QuoteIdent(kr.Column.Name)
	// Bounds b[1..n-1] split [lo, hi] evenly; computed in float64-free
	// integer steps that cannot overflow for any int64 extremes.
	span := uint64(hi - lo)
	bound := func(i int64) int64 { return lo + int64(span/uint64(n)*uint64(i)+span%uint64(n)*uint64(i)/uint64(n)) }
	out := make([]part, 0, n)
	for i := int64(0); i < n; i++ {
		var w, pw []string
		if i > 0 {
			b := bound(i)
			w, pw = append(w, fmt.Sprintf("%s >= %d", col, b)), append(pw, fmt.Sprintf("%s >= %d", pgCol, b))
		}
		if i < n-1 {
			b := bound(i + 1)
			w, pw = append(w, fmt.Sprintf("%s < %d", col, b)), append(pw, fmt.Sprintf("%s < %d", pgCol, b))
		}
		where, pgWhere := strings.Join(w, " AND "), strings.Join(pw, " AND ")
		if i == 0 && kr.Column.Nullable {
			where, pgWhere = "("+where+") OR "+col+" IS NULL", "("+pgWhere+") OR "+pgCol+" IS NULL"
		}
		out = append(out, part{n: int(i + 1), of: int(n), where: where, pgWhere: pgWhere, label: kr.Column.Name})
	}
	return out, nil
}
