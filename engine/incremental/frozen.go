package incremental

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
)

// Frozen is a window written down when a run is planned, in the state
// file's text, so that every process of the run (a scheduler's array, each
// running a share of the units) and every resumption of it exports the
// same rows: the high watermark is read once, by the planner, and never
// again for that run. Its Hi becomes the watermark only when the whole
// run is committed (CommitFrozen).
type Frozen struct {
	Extract string `json:"extract"`
	Column  string `json:"column"`
	// Type is the column's type when the run was planned; a run whose
	// column has changed since is refused.
	Type string `json:"type"`
	// Lo (exclusive) and Hi (inclusive) bound the rows; a nil Lo is no
	// lower bound (the first run), a nil Hi a table without a value (the
	// window selects nothing).
	Lo *string `json:"lo"`
	Hi *string `json:"hi"`
	// Output is the name the run's outputs get.
	Output string `json:"output"`
	// Prev and Runs are the state the window was planned from: its
	// watermark and committed runs. Forward says Hi is above Prev, so
	// committing moves the watermark (it never moves back).
	Prev    *string `json:"prev"`
	Runs    int64   `json:"runs"`
	Forward bool    `json:"forward"`
}

// Freeze writes w down for the run's plan. A backfill is not frozen (it
// moves no state, and its range is given, not read).
func (w *Window) Freeze() (Frozen, error) {
	if w.Backfill {
		return Frozen{}, errors.New("incremental: a backfill window is not frozen")
	}
	f := Frozen{Extract: w.Name, Column: w.Column.Name, Type: typeName(w.Column), Output: w.Output, Prev: w.Prev.Watermark, Runs: w.Prev.Runs}
	var err error
	if f.Lo, err = w.format(w.Lo); err != nil {
		return Frozen{}, err
	}
	if f.Hi, err = w.format(w.Hi); err != nil {
		return Frozen{}, err
	}
	f.Forward = w.Hi != nil
	if w.Hi != nil && w.Prev.Watermark != nil {
		last, err := Parse(&w.Type, *w.Prev.Watermark)
		if err != nil {
			return Frozen{}, fmt.Errorf("incremental: state file %s: %w", w.Spec.StateFile, err)
		}
		f.Forward = Compare(w.Hi, last) > 0
	}
	return f, nil
}

func (w *Window) format(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := Format(w.Class, v)
	return &s, err
}

// Thaw is the window of a frozen plan for the extract's table as it is
// now. With hold it takes the state file's lock until Close, as Open does,
// so that no other run of the extract overlaps this process; the processes
// of one run sharing its units do not hold it.
func Thaw(table *catalog.Table, spec Spec, f Frozen, hold bool) (*Window, error) {
	col := table.Column(spec.Column)
	if col == nil {
		return nil, fmt.Errorf("incremental: %s has no column %q", table.QuotedName(), spec.Column)
	}
	if !strings.EqualFold(col.Name, f.Column) || typeName(col) != f.Type {
		return nil, fmt.Errorf("incremental: the run was planned on column %s %s, the table now has %s %s: restart the run (--restart)", f.Column, f.Type, col.Name, typeName(col))
	}
	w := &Window{Name: f.Extract, Spec: spec, Column: col, Type: decode.NullableForm(col.Wire.Type), HasHi: true, Output: f.Output,
		Prev: &State{Version: StateVersion, Extract: f.Extract, Column: f.Column, Type: f.Type, Watermark: f.Prev, Runs: f.Runs}}
	c, err := ClassOf(&w.Type)
	if err != nil {
		return nil, fmt.Errorf("incremental: column %s: %w", col.Name, err)
	}
	w.Class = c
	for _, b := range []struct {
		text *string
		dst  *any
	}{{f.Lo, &w.Lo}, {f.Hi, &w.Hi}} {
		if b.text == nil {
			continue
		}
		if *b.dst, err = Parse(&w.Type, *b.text); err != nil {
			return nil, fmt.Errorf("incremental: the run's plan: %w", err)
		}
	}
	if hold {
		unlock, err := lock(spec.StateFile + ".lock")
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("incremental: %s: %w (runs of one incremental extract must not overlap; wait for it or check for a stuck process)", spec.StateFile, err)
		}
		if err != nil {
			return nil, err
		}
		w.unlock = unlock
	}
	return w, nil
}

// CommitFrozen saves the watermark of a run planned with f, once every
// output of the run is published: the state moves to f.Hi (never back)
// and counts the run, which it records by its id, so committing the same
// run again changes nothing. held says the caller holds the state file's
// lock (a Thaw with hold); otherwise it is taken for the update. A state
// that another run has moved since f was planned is left as it is, with
// an error: this run's rows are published, and the next run starts from
// the other run's watermark.
func CommitFrozen(spec Spec, f Frozen, run string, rows int64, held bool) error {
	if !held {
		unlock, err := lock(spec.StateFile + ".lock")
		if errors.Is(err, errLocked) {
			return fmt.Errorf("incremental: %s: %w", spec.StateFile, err)
		}
		if err != nil {
			return err
		}
		defer unlock()
	}
	st, err := Load(spec.StateFile)
	if err != nil {
		return err
	}
	if run != "" && st.Run == run {
		return nil
	}
	if st.Runs != f.Runs || !sameText(st.Watermark, f.Prev) {
		return fmt.Errorf("incremental: state file %s moved since run %s was planned (another run of the extract committed): it keeps that run's watermark", spec.StateFile, run)
	}
	next := *st
	next.Extract, next.Column, next.Type = f.Extract, f.Column, f.Type
	if f.Forward {
		next.Watermark = f.Hi
	}
	next.Runs++
	next.Rows = rows
	next.Run = run
	next.Updated = time.Now().UTC()
	return Save(spec.StateFile, &next)
}

func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Holds reports whether w holds the state file's lock.
func (w *Window) Holds() bool { return w.unlock != nil }

// Describe is the window as Window.Describe writes it: "(lo, hi]".
func (f Frozen) Describe() string {
	lo, hi := "-inf", "NULL"
	if f.Lo != nil {
		lo = *f.Lo
	}
	if f.Hi != nil {
		hi = *f.Hi
	}
	return "(" + lo + ", " + hi + "]"
}
