package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/session"
)

// IncrementalConfig makes an extract incremental: each run exports the
// rows whose Column is past the watermark the last successful run
// committed, up to the column's maximum read when the run starts.
type IncrementalConfig struct {
	// Column is the watermark column: rowversion, datetime2 (or another
	// date/time type), an identity or any ordered integer or string key.
	Column string `mapstructure:"column"`
	// State is the extract's state file; default
	// <state_dir>/<extract>.watermark.json.
	State string `mapstructure:"state"`
	// Overlap re-exports rows this far below the last watermark, for rows
	// committed late (a duration for date/time columns, a count for
	// integer and rowversion columns). Rows in the overlap are exported
	// again: de-duplicate on the key downstream.
	Overlap string `mapstructure:"overlap"`
}

// Consistency is what an extract's session guarantees about the rows it
// reads.
type Consistency uint8

const (
	// ConsistencyNone reads under the server's default isolation (READ
	// COMMITTED): each statement sees what is committed when it runs.
	ConsistencyNone Consistency = iota
	// ConsistencySnapshot runs the unit's statements (row count, high
	// watermark, SELECT) in one SNAPSHOT transaction: they all see the
	// database as of the unit's first read. The guarantee is per session.
	ConsistencySnapshot
)

func (c Consistency) String() string {
	if c == ConsistencySnapshot {
		return "snapshot"
	}
	return "none"
}

// DefaultStateDir is where incremental state lives when the job names no
// state_dir: .tdsextract/<job> under the working directory, like the
// sinks' relative paths.
func defaultStateDir(job *JobConfig) string {
	key := job.Name
	if key == "" && job.File != "" {
		key = strings.TrimSuffix(filepath.Base(job.File), filepath.Ext(job.File))
	}
	if key == "" {
		key = "job"
	}
	return filepath.Join(".tdsextract", key)
}

// incremental resolves an extract's incremental and consistency keys.
func (r *resolver) incremental(ex *ExtractPlan, e *ExtractConfig, job *JobConfig) {
	switch strings.ToLower(strings.TrimSpace(e.Consistency)) {
	case "", "none":
	case "snapshot":
		ex.Consistency = ConsistencySnapshot
	default:
		r.add(ex.Field+".consistency", "%q: use none or snapshot", e.Consistency)
	}
	inc := e.Incremental
	if inc == nil {
		return
	}
	f := ex.Field + ".incremental"
	if !ex.IsTable() {
		r.add(f, "an incremental extract needs a table (its watermark column bounds the table's SELECT)")
		return
	}
	if strings.TrimSpace(inc.Column) == "" {
		r.add(f+".column", "missing: name the watermark column (rowversion, datetime2, an identity or another ordered key)")
		return
	}
	path := inc.State
	if path == "" {
		dir := job.StateDir
		if dir == "" {
			dir = defaultStateDir(job)
		}
		path = filepath.Join(dir, safeFileName(ex.Name)+".watermark.json")
	}
	if r.states == nil {
		r.states = map[string]string{}
	}
	key := filepath.Clean(path)
	if prev, dup := r.states[key]; dup {
		r.add(f+".state", "%s is also the state file of %s: each incremental extract needs its own", path, prev)
	}
	r.states[key] = ex.Field
	ex.Incremental = &incremental.Spec{Column: inc.Column, StateFile: path, Overlap: inc.Overlap}
	ex.inc = &windowOnce{}
	field := ex.Field + ".sinks"
	if len(e.Sinks) == 0 {
		field = "sinks" // the job's
	}
	for k, s := range ex.Sinks {
		if v, ok := s.Options["if_exists"].(string); ok && strings.EqualFold(v, "skip") {
			r.add(fmt.Sprintf("%s[%d].options.if_exists", field, k), "skip would leave a window's rows out of this sink while the watermark moves on: use replace or fail for an incremental extract")
		}
		if p, ok := s.Options["path"].(string); ok && fixedPath(p) {
			r.add(fmt.Sprintf("%s[%d].options.path", field, k), "%q names one file, which every run would replace with its own rows only: an incremental extract writes new files each run (<extract>.run-000001...), so give a directory ending in / or a template with {extract}", p)
		}
	}
}

// fixedPath reports a file sink path that names the same file whatever
// the extract's name.
func fixedPath(p string) bool {
	return p != "" && !strings.HasSuffix(p, "/") && !strings.HasSuffix(p, string(filepath.Separator)) && !strings.Contains(p, "{extract}")
}

// safeFileName keeps an extract name usable as a file name.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// windowOnce is an incremental extract's window during one Execute: opened
// by the first of its units to get there, shared by the others. A failed
// open is not kept: a unit that runs again (on a fresh session) tries
// again.
type windowOnce struct {
	mu sync.Mutex
	w  *incremental.Window
}

// resetWindows forgets the windows of a previous Execute of the plan.
func resetWindows(plan *Plan) {
	for _, ex := range plan.Extracts {
		if ex.Incremental != nil {
			ex.inc = &windowOnce{}
		}
	}
}

// openWindow fixes the unit's window (the extract's, read once) after the
// table is described: its predicate and parameters bound the unit's
// queries, and its output name replaces the extract's.
func (x *unit) openWindow(ctx context.Context) error {
	if x.ex.Incremental == nil {
		return nil
	}
	o := x.ex.inc
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.w == nil {
		var w *incremental.Window
		var err error
		if f := x.ex.frozen; f != nil {
			// The run's planner fixed the window; a whole run holds the
			// state's lock as a run of one process does, a share does not
			// (its siblings run beside it).
			w, err = incremental.Thaw(x.table, *x.ex.Incremental, *f, x.r.Share == nil)
		} else {
			w, err = incremental.Open(ctx, x.conn, x.table, x.ex.Name, *x.ex.Incremental, x.r.Backfill, x.ex.Timeout)
		}
		if err != nil {
			return failed(KindExtract, err)
		}
		o.w = w
	}
	x.win = o.w
	x.info.Name = o.w.Output
	return nil
}

// predicate is the WHERE of the unit's queries: the unit's and the
// window's.
func (x *unit) predicate() string {
	p := x.u.Predicate()
	if x.win == nil {
		return p
	}
	w := x.win.Predicate()
	switch {
	case w == "":
		return p
	case p == "":
		return w
	}
	return "(" + p + ") AND " + w
}

// params are the query parameters the predicate names: the unit's key
// range bounds and the window's.
func (x *unit) params() []session.Param {
	ps := x.u.Params()
	if x.win != nil {
		ps = append(ps[:len(ps):len(ps)], x.win.Params()...)
	}
	return ps
}

// count is COUNT_BIG(*) over the unit's predicate, with its parameters.
func (x *unit) count(ctx context.Context) (int64, error) {
	return catalog.Count(ctx, x.conn, x.ex.Schema, x.ex.Table, x.predicate(), x.ex.Timeout, x.params()...)
}

// IncrementalSummary reports an incremental extract's run.
type IncrementalSummary struct {
	Column string `json:"column"`
	// Window is the rows exported, "(last, high]" or for a backfill
	// "[from, to)".
	Window    string `json:"window"`
	StateFile string `json:"state_file"`
	// Committed reports that the state moved to the window's high end
	// (false for a failed run and for a backfill).
	Committed bool `json:"committed"`
	// Pending reports a window of a checkpointed run whose units are not
	// all finished yet: the state moves when the run is committed (by the
	// process that finishes the last unit, or `commit`).
	Pending  bool   `json:"pending,omitempty"`
	Backfill bool   `json:"backfill,omitempty"`
	Error    string `json:"error,omitempty"`
}

// commitWindows advances the state of every incremental extract whose
// units all succeeded (each published every sink), and only those: a
// failed unit, a failed publish or a cancelled run leaves the state as it
// was, so the next run exports the same window again. The window of a
// checkpointed run (frozen when it was planned) moves only once the run's
// manifest is written: when rs is set and complete, here, else by the
// process that completes the run or by Commit.
func commitWindows(plan *Plan, sum *Summary, errs []error, rs *runState, complete bool) error {
	var out []error
	for i, ex := range plan.Extracts {
		if ex.Incremental != nil && ex.frozen != nil && rs != nil && ex.inc != nil {
			if err := commitFrozenWindow(sum, ex, rs, complete); err != nil {
				out = append(out, err)
			}
			continue
		}
		if ex.Incremental == nil || ex.inc == nil || ex.inc.w == nil {
			continue
		}
		w := ex.inc.w
		defer w.Close()
		is := &IncrementalSummary{Column: w.Column.Name, Window: w.Describe(), StateFile: ex.Incremental.StateFile, Backfill: w.Backfill}
		ok := true
		var rows int64
		for k, u := range plan.Units {
			if u.Extract == ex && errs[k] != nil {
				ok = false
			}
		}
		if i < len(sum.Extracts) {
			rows = sum.Extracts[i].Rows
			sum.Extracts[i].Incremental = is
			for _, s := range sum.Extracts[i].Sinks {
				if s.Skipped != "" && ok && !w.Backfill {
					// A sink that skipped has not got the window's rows:
					// moving the watermark would lose them for it.
					ok = false
					is.Error = "sink " + s.Type + " skipped (" + s.Skipped + "): the state was not moved"
					out = append(out, &JobError{Kind: KindExtract, Extract: ex.Name, Err: errors.New(is.Error)})
				}
			}
		}
		if !ok || w.Backfill {
			continue
		}
		if err := w.Commit(rows); err != nil {
			is.Error = err.Error()
			out = append(out, &JobError{Kind: KindExtract, Extract: ex.Name, Err: fmt.Errorf("outputs published, but the watermark was not saved (the next run exports this window again): %w", err)})
			continue
		}
		is.Committed = true
	}
	return errors.Join(out...)
}

// FrozenWindow is the window the extract's checkpointed run was planned
// with (after Runner.PlanUnits or a run), nil when it has none.
func (ex *ExtractPlan) FrozenWindow() *incremental.Frozen { return ex.frozen }

// commitFrozenWindow reports, and when the run is complete saves, the
// frozen window of extract ex of a checkpointed run.
func commitFrozenWindow(sum *Summary, ex *ExtractPlan, rs *runState, complete bool) error {
	f := ex.frozen
	w := ex.inc.w
	if w != nil {
		defer w.Close()
	}
	is := &IncrementalSummary{Column: f.Column, Window: f.Describe(), StateFile: ex.Incremental.StateFile, Pending: !complete}
	for k := range sum.Extracts {
		// A share reports only the extracts it ran units of.
		if sum.Extracts[k].Name == ex.Name {
			sum.Extracts[k].Incremental = is
		}
	}
	if !complete {
		return nil
	}
	err := incremental.CommitFrozen(*ex.Incremental, *f, rs.pf.Run, extractRows(rs.done, ex), w != nil && w.Holds())
	if err != nil {
		is.Error = err.Error()
		return &JobError{Kind: KindExtract, Extract: ex.Name, Err: fmt.Errorf("outputs published and the manifest written, but the watermark was not saved: %w", err)}
	}
	is.Committed = true
	return nil
}

// commitFrozen saves the frozen windows of a complete run (Commit).
func commitFrozen(plan *Plan, run string, done []*UnitRecord) error {
	var out []error
	for _, ex := range plan.Extracts {
		if ex.Incremental == nil || ex.frozen == nil {
			continue
		}
		if err := incremental.CommitFrozen(*ex.Incremental, *ex.frozen, run, extractRows(done, ex), false); err != nil {
			out = append(out, &JobError{Kind: KindExtract, Extract: ex.Name, Err: fmt.Errorf("manifest written, but the watermark was not saved: %w", err)})
		}
	}
	return errors.Join(out...)
}

// extractRows sums the rows of ex's finished units.
func extractRows(done []*UnitRecord, ex *ExtractPlan) int64 {
	var n int64
	for _, rec := range done {
		if rec != nil && rec.Extract == ex.Name {
			n += rec.Rows
		}
	}
	return n
}

// freezes reports whether a run of plan fixes its incremental extracts'
// windows when it is planned: a checkpointed run (partitioned, shared
// between processes, resumable) that is not a backfill.
func (r *Runner) freezes(plan *Plan) bool {
	if r.Backfill != nil || !r.checkpointing(plan) {
		return false
	}
	for _, ex := range plan.Extracts {
		if ex.Incremental != nil {
			return true
		}
	}
	return false
}

// freezeWindows reads the window of every incremental extract of a run
// being planned, on one session: the state, and the high watermark, once
// for the whole run.
func (r *Runner) freezeWindows(ctx context.Context, plan *Plan) ([]incremental.Frozen, error) {
	if !r.freezes(plan) {
		return nil, nil
	}
	var conn *session.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	var out []incremental.Frozen
	for _, ex := range plan.Extracts {
		if ex.Incremental == nil {
			continue
		}
		if conn == nil {
			c, err := r.connect(ctx, plan.Session)
			if err != nil {
				return nil, &JobError{Kind: KindConnect, Extract: ex.Name, Err: err}
			}
			conn = c
		}
		t, err := catalog.LoadTable(ctx, conn, ex.Schema, ex.Table, ex.Timeout)
		if err != nil {
			return nil, &JobError{Kind: KindExtract, Extract: ex.Name, Err: err}
		}
		w, err := incremental.Open(ctx, conn, t, ex.Name, *ex.Incremental, nil, ex.Timeout)
		if err != nil {
			return nil, &JobError{Kind: KindExtract, Extract: ex.Name, Err: err}
		}
		f, err := w.Freeze()
		w.Close()
		if err != nil {
			return nil, &JobError{Kind: KindExtract, Extract: ex.Name, Err: err}
		}
		out = append(out, f)
	}
	return out, nil
}

// beginConsistency starts the unit's SNAPSHOT transaction on its new
// session. For a table it reads the table at once (no row), so that the
// snapshot starts before the describe, count and watermark queries, and
// a database that does not allow snapshot isolation is reported before
// anything else runs.
func (x *unit) beginConsistency(ctx context.Context) error {
	if x.ex.Consistency != ConsistencySnapshot {
		return nil
	}
	sql := "SET TRANSACTION ISOLATION LEVEL SNAPSHOT;\nBEGIN TRANSACTION"
	if x.ex.IsTable() {
		sql += ";\nSELECT TOP (0) 1 FROM " + catalog.QuoteIdent(x.ex.Schema) + "." + catalog.QuoteIdent(x.ex.Table)
	}
	if _, err := x.conn.Query(ctx, session.Query{SQL: sql, Timeout: x.ex.Timeout}, nil); err != nil {
		return failed(KindExtract, snapshotHint(fmt.Errorf("consistency: snapshot: %w", err)))
	}
	return nil
}

// snapshotHint explains SQL Server's error 3952: the database does not
// allow snapshot isolation.
func snapshotHint(err error) error {
	var se *session.ServerError
	if errors.As(err, &se) && se.Number == 3952 {
		return &hinted{err, "the database does not allow snapshot isolation: an administrator can run ALTER DATABASE <db> SET ALLOW_SNAPSHOT_ISOLATION ON, or remove consistency: snapshot from the extract; nothing was published"}
	}
	return err
}

// checkIncremental refuses the combinations whose watermark could skip
// rows. A partitioned or shared incremental extract is safe because its
// run is checkpointed and freezes the window when it is planned (every
// unit, in every process and every resumption, reads the same window, and
// the watermark moves when the run is committed); a backfill's range is
// given, and it moves no watermark. What remains is a share (--unit) of a
// backfill: each process would name its outputs after its own start.
func (r *Runner) checkIncremental(plan *Plan) error {
	for _, ex := range plan.Extracts {
		if ex.Incremental != nil && r.Share != nil && r.Backfill != nil {
			return &JobError{Kind: KindConfig, Extract: ex.Name, Err: &ConfigError{File: plan.File, Field: ex.Field + ".incremental",
				Msg: "a backfill runs in one process: run it without --unit (partitions still run in parallel sessions)"}}
		}
	}
	return nil
}
