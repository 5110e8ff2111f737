package incremental

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
)

// Spec is an extract's incremental configuration, resolved.
type Spec struct {
	// Column is the watermark column.
	Column string
	// StateFile is where the extract's State lives.
	StateFile string
	// Overlap is the configured overlap text, checked against the
	// column's type when the window opens ("" for none).
	Overlap string
}

// Window is the rows one run of an incremental extract exports, fixed
// when the run starts.
type Window struct {
	// Name is the extract's name.
	Name   string
	Spec   Spec
	Column *catalog.Column
	// Type is the parameters' type: the column's own, in its nullable
	// form (a NULL bound is how an empty table selects nothing).
	Type  decode.TypeInfo
	Class Class
	// Lo and Hi bound the rows: Lo exclusive (inclusive for a backfill),
	// Hi inclusive (exclusive for a backfill); a nil Lo is no lower bound
	// (the first run). HasHi false is no upper bound (a backfill "FROM..").
	Lo, Hi   any
	HasHi    bool
	Backfill bool
	// Prev is the state the run started from.
	Prev *State
	// Output is the name the run's outputs get: the extract's name and
	// the run number ("orders.run-000003"), or a backfill's time stamp,
	// so each run adds files and never replaces an earlier run's.
	Output string

	unlock func()
}

// errLocked is a state file another run holds.
var errLocked = errors.New("another run of this extract holds its state file")

// Close releases the state file's lock (after Commit, or when the run
// failed). It may be called more than once.
func (w *Window) Close() {
	if w.unlock != nil {
		w.unlock()
		w.unlock = nil
	}
}

// Params names of the window's bounds.
const (
	ParamLo = "@wm_lo"
	ParamHi = "@wm_hi"
)

// Predicate is the window's WHERE: "" when it bounds nothing.
func (w *Window) Predicate() string {
	col := catalog.QuoteIdent(w.Column.Name)
	var parts []string
	if w.Lo != nil {
		op := " > "
		if w.Backfill {
			op = " >= "
		}
		parts = append(parts, col+op+ParamLo)
	}
	if w.HasHi {
		op := " <= "
		if w.Backfill {
			op = " < "
		}
		parts = append(parts, col+op+ParamHi)
	}
	return strings.Join(parts, " AND ")
}

// Params are the bounds the predicate names, typed as the column.
func (w *Window) Params() []session.Param {
	var ps []session.Param
	if w.Lo != nil {
		ps = append(ps, session.Param{Name: ParamLo, Value: w.Lo, Type: &w.Type})
	}
	if w.HasHi {
		ps = append(ps, session.Param{Name: ParamHi, Value: w.Hi, Type: &w.Type})
	}
	return ps
}

// Describe is the window for logs and the summary, in the state file's
// text: "(lo, hi]" or, for a backfill, "[from, to)".
func (w *Window) Describe() string {
	f := func(v any) string {
		if v == nil {
			return "NULL"
		}
		s, err := Format(w.Class, v)
		if err != nil {
			return "?"
		}
		return s
	}
	lo, hi := "-inf", "+inf"
	if w.Lo != nil {
		lo = f(w.Lo)
	}
	if w.HasHi {
		hi = f(w.Hi)
	}
	if w.Backfill {
		return "[" + lo + ", " + hi + ")"
	}
	return "(" + lo + ", " + hi + "]"
}

// Open reads the extract's state and the high watermark and fixes the
// window of this run. table is the extract's table (with the watermark
// column); q a session on the source. With backfill, the window is the
// range given and the state is only read (a backfill never moves it).
//
// The high watermark is read once, here, before any row is exported, and
// the export is bounded by it: rows committed while the run goes on are
// left for the next run instead of being skipped by a watermark that was
// read at the end. For a rowversion column the bound is also kept below
// MIN_ACTIVE_ROWVERSION(): a transaction still open holds a rowversion
// lower than those already committed, and commits it later.
func Open(ctx context.Context, q catalog.Querier, table *catalog.Table, name string, spec Spec, backfill *Range, timeout session.Timeout) (*Window, error) {
	col := table.Column(spec.Column)
	if col == nil {
		return nil, fmt.Errorf("incremental: %s has no column %q", table.QuotedName(), spec.Column)
	}
	w := &Window{Name: name, Spec: spec, Column: col, Type: decode.NullableForm(col.Wire.Type)}
	c, err := ClassOf(&w.Type)
	if err != nil {
		return nil, fmt.Errorf("incremental: column %s: %w", col.Name, err)
	}
	w.Class = c
	ov, err := ParseOverlap(c, spec.Overlap)
	if err != nil {
		return nil, fmt.Errorf("incremental: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(spec.StateFile), 0o755); err != nil {
		return nil, fmt.Errorf("incremental: state directory: %w", err)
	}
	// One run of an extract at a time: a second one would export the
	// same window and both would commit it. A backfill moves no state and
	// takes no lock, so it can run beside the scheduled runs.
	unlock, err := func() {}, error(nil)
	if backfill == nil {
		unlock, err = lock(spec.StateFile + ".lock")
	}
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("incremental: %s: %w (runs of one incremental extract must not overlap; wait for it or check for a stuck process)", spec.StateFile, err)
	}
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unlock()
		}
	}()
	st, err := Load(spec.StateFile)
	if err != nil {
		return nil, err
	}
	w.Prev, w.unlock = st, unlock
	typeName := typeName(col)
	if st.Watermark != nil && (!strings.EqualFold(st.Column, col.Name) || st.Type != typeName) {
		return nil, fmt.Errorf("incremental: state file %s is for column %s %s, the extract's watermark is %s %s: point state at a new file to start over",
			spec.StateFile, st.Column, st.Type, col.Name, typeName)
	}
	if backfill != nil {
		w.Backfill = true
		if backfill.From != "" {
			if w.Lo, err = Parse(&w.Type, backfill.From); err != nil {
				return nil, fmt.Errorf("incremental: backfill: %w", err)
			}
		}
		if backfill.To != "" {
			if w.Hi, err = Parse(&w.Type, backfill.To); err != nil {
				return nil, fmt.Errorf("incremental: backfill: %w", err)
			}
			w.HasHi = true
		}
		w.Output = name + ".backfill-" + time.Now().UTC().Format("20060102T150405Z")
		ok = true
		return w, nil
	}
	if st.Watermark != nil {
		last, err := Parse(&w.Type, *st.Watermark)
		if err != nil {
			return nil, fmt.Errorf("incremental: state file %s: %w", spec.StateFile, err)
		}
		w.Lo = ov.Apply(last)
	}
	hi, err := highWatermark(ctx, q, table, col, timeout)
	if err != nil {
		return nil, err
	}
	w.Hi, w.HasHi = hi, true
	w.Output = fmt.Sprintf("%s.run-%06d", name, st.Runs+1)
	ok = true
	return w, nil
}

// typeName is the column's declared type as the state file records it.
func typeName(col *catalog.Column) string {
	if col.Kind() == decode.KindRowVersion {
		return "rowversion"
	}
	return col.Decl().String()
}

// highWatermark reads MAX(column), bounded below MIN_ACTIVE_ROWVERSION()
// for rowversion; nil when the table has no row with a value.
func highWatermark(ctx context.Context, q catalog.Querier, table *catalog.Table, col *catalog.Column, timeout session.Timeout) (any, error) {
	hi, err := scalar(ctx, q, "SELECT MAX("+catalog.QuoteIdent(col.Name)+") FROM "+table.QuotedName(), timeout)
	if err != nil || hi == nil || col.Kind() != decode.KindRowVersion {
		return hi, err
	}
	active, err := scalar(ctx, q, "SELECT MIN_ACTIVE_ROWVERSION()", timeout)
	if err != nil {
		return nil, err
	}
	a, ok1 := active.([]byte)
	h, ok2 := hi.([]byte)
	if !ok1 || !ok2 || len(a) != 8 || len(h) != 8 {
		return nil, fmt.Errorf("incremental: MAX(%s) and MIN_ACTIVE_ROWVERSION() are not 8-byte rowversions", col.Name)
	}
	if av := binary.BigEndian.Uint64(a); av <= binary.BigEndian.Uint64(h) {
		if av == 0 {
			return nil, nil
		}
		return binary.BigEndian.AppendUint64(nil, av-1), nil
	}
	return h, nil
}

// scalar runs a one-value query.
func scalar(ctx context.Context, q catalog.Querier, sql string, timeout session.Timeout) (any, error) {
	var c decode.Capture
	if _, err := q.Query(ctx, session.Query{SQL: sql, Timeout: timeout}, &c); err != nil {
		return nil, fmt.Errorf("incremental: %s: %w", sql, err)
	}
	if c.Err != nil {
		return nil, fmt.Errorf("incremental: %s: %w", sql, c.Err)
	}
	if len(c.Rows) != 1 || len(c.Rows[0]) != 1 {
		return nil, fmt.Errorf("incremental: %s: expected one value, got %d rows", sql, len(c.Rows))
	}
	v := c.Rows[0][0]
	if b, ok := v.([]byte); ok {
		v = append([]byte(nil), b...)
	}
	return v, nil
}

// Commit writes the state after a run whose outputs were all published:
// the watermark moves to the window's high end (never backwards), and the
// run is counted. A backfill commits nothing.
func (w *Window) Commit(rows int64) error {
	if w.Backfill {
		return nil
	}
	next := *w.Prev
	next.Extract, next.Column, next.Type = w.Name, w.Column.Name, typeName(w.Column)
	if w.Hi != nil {
		wm := w.Hi
		if w.Prev.Watermark != nil {
			if last, err := Parse(&w.Type, *w.Prev.Watermark); err == nil && Compare(last, wm) > 0 {
				wm = last
			}
		}
		s, err := Format(w.Class, wm)
		if err != nil {
			return err
		}
		next.Watermark = &s
	}
	next.Runs++
	next.Rows = rows
	next.Run = ""
	next.Updated = time.Now().UTC()
	return Save(w.Spec.StateFile, &next)
}
