package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Verification modes.
const (
	VerifyNone     = "none"
	VerifyCount    = "count"
	VerifyChecksum = "checksum"
)

// DefaultSplitRows is the size of a key range of a split table in a job
// or on the command line: big enough that a range's COPY runs at full
// speed, small enough that a table of tens of millions of rows loads on
// every session the run has.
const DefaultSplitRows = 1_000_000

// DefaultMaintenanceWorkMem keeps the server's maintenance_work_mem for
// the sessions that build keys and indexes. Measured on lineitem at 10M
// rows (PostgreSQL 15, 2 shared cores, the server's two parallel
// maintenance workers), 512MB and 1GB built the primary key and the
// index no faster than the default 64MB (medians of the sum 12.8 s and
// 14.2 s against 11.3 s, rebuilt in turn three times; whole migrations
// 60.9 s and 43.8 s against 49.5 s, within the noise): the sorts are
// bound by the CPU, and an external merge of a few runs from the page
// cache costs little. A server with more cores, or a table far beyond
// memory, may gain from a larger setting; it is per build, and up to
// Parallel builds run at once.
const DefaultMaintenanceWorkMem = "server"

// DefaultStateTable records the steps a migration finished, in the
// target, so that --resume continues where a run stopped.
const DefaultStateTable = "public.tdsextract_migrate"

// Config is a migration: where from, where to, what and how.
type Config struct {
	Source  session.Config
	Timeout session.Timeout
	Filter  catalog.Filter
	Target  postgres.ConnConfig
	Options Options
	// Parallel is how many steps run at once: tables or key ranges
	// loading (each on its own source session and PostgreSQL
	// connection), keys and indexes building, foreign keys validating.
	// Default 4.
	Parallel int
	// Verify is VerifyNone, VerifyCount or VerifyChecksum.
	Verify string
	// Resume continues a migration whose state table holds finished
	// steps; without it a target with such a table is refused.
	Resume bool
	// StateTable is schema.table of the state table (DefaultStateTable).
	StateTable string
	// SplitRows: a table with more rows (by the count SQL Server keeps)
	// whose clustered key leads with an integer column loads as key
	// ranges of about this many rows, each on its own sessions and in
	// its own transaction. 0 never splits.
	SplitRows int64
	// MaintenanceWorkMem is the maintenance_work_mem (a PostgreSQL
	// memory size such as 512MB or 1GB) of the sessions that build keys
	// and indexes; "" and "server" keep the server's setting.
	MaintenanceWorkMem string
	// Connect opens a source session; nil means session.Connect.
	Connect func(ctx context.Context, cfg session.Config) (*session.Conn, error)
}

// Validate checks the config without touching the network.
func (c *Config) Validate() error {
	var errs []string
	switch c.Verify {
	case "", VerifyNone, VerifyCount, VerifyChecksum:
	default:
		errs = append(errs, fmt.Sprintf("verify %q: use none, count or checksum", c.Verify))
	}
	switch c.Options.Identifiers {
	case "", postgres.IdentLower, postgres.IdentPreserve:
	default:
		errs = append(errs, fmt.Sprintf("identifiers %q: use lower or preserve", c.Options.Identifiers))
	}
	switch c.Options.CaseInsensitive {
	case "", CINone, CIICU, CICitext:
	default:
		errs = append(errs, fmt.Sprintf("case_insensitive %q: use none, icu or citext", c.Options.CaseInsensitive))
	}
	if c.SplitRows < 0 {
		errs = append(errs, fmt.Sprintf("split_rows %d: use 0 (never) or a row count", c.SplitRows))
	}
	if c.Parallel < 0 || c.Parallel > 64 {
		errs = append(errs, fmt.Sprintf("parallel %d: use 1 .. 64", c.Parallel))
	}
	if m := c.MaintenanceWorkMem; m != "" && m != "server" && !memSize.MatchString(m) {
		errs = append(errs, fmt.Sprintf("maintenance_work_mem %q: use a size such as 512MB or 1GB, or server", m))
	}
	if c.StateTable != "" && strings.Count(c.StateTable, ".") != 1 {
		errs = append(errs, fmt.Sprintf("state_table %q: use schema.table", c.StateTable))
	}
	if c.Target.Connection == "" {
		errs = append(errs, "target: required (a postgres:// URL or host=... dbname=... string)")
	} else if _, err := pgconn.ParseConfig(c.Target.Connection.Reveal()); err != nil {
		errs = append(errs, "target: cannot parse it (use postgres://user@host:5432/db?sslmode=... or host=... dbname=... user=...)")
	}
	if c.Target.PasswordEnv != "" && c.Target.PasswordFile != "" {
		errs = append(errs, "set only one of target_password_env and target_password_file")
	}
	if err := c.Filter.Validate(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("migrate: %s", strings.Join(errs, "; "))
	}
	return nil
}

// memSize is a PostgreSQL memory setting: a number and a unit.
var memSize = regexp.MustCompile(`^[0-9]+ ?(kB|MB|GB|TB)$`)

// buildSettings are the SET statements of a session that builds keys
// and indexes.
func (c *Config) buildSettings() []string {
	m := c.MaintenanceWorkMem
	if m == "" {
		m = DefaultMaintenanceWorkMem
	}
	if m == "server" {
		return nil
	}
	return []string{"SET maintenance_work_mem = '" + m + "'"}
}

func (c *Config) connect(ctx context.Context) (*session.Conn, error) {
	if c.Connect != nil {
		return c.Connect(ctx, c.Source)
	}
	return session.Connect(ctx, c.Source)
}

// ConnectError is a source or target that cannot be reached or refused
// the login.
type ConnectError struct{ Err error }

func (e *ConnectError) Error() string { return e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

// Discover reads the source's catalog and plans the migration, touching
// nothing in the target.
func Discover(ctx context.Context, c *Config) (*Plan, error) {
	t0 := time.Now()
	conn, err := c.connect(ctx)
	if err != nil {
		return nil, &ConnectError{err}
	}
	defer conn.Close()
	db, err := catalog.Load(ctx, conn, catalog.Options{Filter: c.Filter, Views: true, Sequences: true, Timeout: c.Timeout})
	if err != nil {
		return nil, err
	}
	describe := func(ctx context.Context, p *catalog.Projection) ([]decode.Column, error) {
		return catalog.Describe(ctx, conn, p.DescribeSQL(), c.Timeout)
	}
	plan, err := Build(ctx, db, describe, c.Options)
	if err != nil {
		return nil, err
	}
	if err := plan.split(ctx, conn, c.SplitRows, c.Timeout); err != nil {
		return nil, err
	}
	plan.Discovered = time.Since(t0)
	return plan, nil
}

// Summary is the result of a migration.
type Summary struct {
	Started  time.Time      `json:"started"`
	Duration time.Duration  `json:"duration_ns"`
	OK       bool           `json:"ok"`
	Verify   string         `json:"verify"`
	Tables   []TableSummary `json:"tables"`
	Steps    []StepSummary  `json:"steps"`
	// Phases is where the time went: the wall time of each phase that
	// ran (discover, then the plan's phases in order), from its first
	// step's start to its last one's end.
	Phases []PhaseSummary `json:"phases"`
	// The plan's remarks.
	Lossy        []Item `json:"lossy"`
	Untranslated []Item `json:"untranslated"`
	Notes        []Item `json:"notes"`
}

// TableSummary reports one table's data.
type TableSummary struct {
	Source   string        `json:"source"`
	Target   string        `json:"target"`
	Rows     int64         `json:"rows"`
	Bytes    int64         `json:"bytes"`
	Duration time.Duration `json:"duration_ns"`
	// Verified is "count", "checksum" or "" when not verified;
	// SourceRows the source's COUNT_BIG(*), Checksum the checksum both
	// sides agree on.
	Verified   string `json:"verified,omitempty"`
	SourceRows int64  `json:"source_rows,omitempty"`
	Checksum   string `json:"checksum,omitempty"`
	// VerifyDuration is the time the verification took (for a split
	// table, summed over its ranges), inside Duration.
	VerifyDuration time.Duration `json:"verify_ns,omitempty"`
	// Resumed is set when an earlier run loaded the table.
	Resumed bool   `json:"resumed,omitempty"`
	Error   string `json:"error,omitempty"`
	// Ranges are the key ranges of a split table, each as loaded.
	Ranges []RangeSummary `json:"ranges,omitempty"`
}

// RangeSummary reports one key range of a split table.
type RangeSummary struct {
	Object         string        `json:"object"`
	Rows           int64         `json:"rows"`
	Duration       time.Duration `json:"duration_ns"`
	VerifyDuration time.Duration `json:"verify_ns,omitempty"`
	Resumed        bool          `json:"resumed,omitempty"`
	Error          string        `json:"error,omitempty"`
}

// PhaseSummary is the wall time of one phase.
type PhaseSummary struct {
	Phase    string        `json:"phase"`
	Steps    int           `json:"steps"`
	Duration time.Duration `json:"duration_ns"`
}

// Step statuses.
const (
	StepDone    = "done"
	StepEarlier = "done earlier"
	StepFailed  = "failed"
	StepNotRun  = "not run"
)

// StepSummary reports one DDL step.
type StepSummary struct {
	Phase  string `json:"phase"`
	Object string `json:"object"`
	Status string `json:"status"`
	// Duration is the time the step's transaction took (0 when not run).
	Duration time.Duration `json:"duration_ns,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// parallel is Parallel, 0 meaning the default of 4 steps at once.
func (c *Config) parallel() int {
	if c.Parallel <= 0 {
		return 4
	}
	return c.Parallel
}

// Run executes plan against the target: schemas, sequences and tables,
// then the data, keys, indexes, checks and foreign keys on Parallel
// sessions, each step as soon as what it needs is in (see schedule), then
// views. A table that fails leaves the others: its own later steps are
// not run, and the summary and the error name it. The error is nil only
// when every step succeeded.
func Run(ctx context.Context, c *Config, plan *Plan) (*Summary, error) {
	sum := &Summary{Started: time.Now(), Verify: c.Verify, Lossy: plan.Lossy, Untranslated: plan.Untranslated, Notes: plan.Notes}
	if sum.Verify == "" {
		sum.Verify = VerifyNone
	}
	r := &runner{c: c, plan: plan, sum: sum, failedTables: map[string]string{}, failedRows: map[string]bool{}, spans: map[Phase]*span{}}
	err := r.run(ctx)
	sum.Duration = time.Since(sum.Started)
	sum.Phases = r.phases()
	sum.OK = err == nil
	return sum, err
}

type runner struct {
	c    *Config
	plan *Plan
	sum  *Summary
	pg   *pgx.Conn
	done map[string]int64 // state: finished step keys (rows for data steps)
	// detail is the state's detail of the steps that have one: the key
	// ranges of split tables, by rangesKey.
	detail map[string][]byte

	mu           sync.Mutex
	failedTables map[string]string // target table -> why
	failedRows   map[string]bool   // target tables with a data step that failed
	errs         []error
	spans        map[Phase]*span // the steps run of each phase
}

// span is the steps of one phase that ran, from the first one's start to
// the last one's end.
type span struct {
	steps      int
	start, end time.Time
}

// timed adds a step of phase ph that ran from start to now.
func (r *runner) timed(ph Phase, start time.Time) time.Duration {
	end := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := r.spans[ph]
	if sp == nil {
		sp = &span{start: start}
		r.spans[ph] = sp
	}
	sp.steps++
	if start.Before(sp.start) {
		sp.start = start
	}
	if end.After(sp.end) {
		sp.end = end
	}
	return end.Sub(start)
}

// phases is the summary's Phases: discover, then each phase that ran.
func (r *runner) phases() []PhaseSummary {
	var out []PhaseSummary
	if r.plan.Discovered > 0 {
		out = append(out, PhaseSummary{Phase: "discover", Duration: r.plan.Discovered})
	}
	for ph := PhaseSetup; ph <= PhaseView; ph++ {
		if sp := r.spans[ph]; sp != nil {
			out = append(out, PhaseSummary{Phase: ph.String(), Steps: sp.steps, Duration: sp.end.Sub(sp.start)})
		}
	}
	return out
}

func (r *runner) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *runner) tableFailed(t string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	why, ok := r.failedTables[t]
	return why, ok
}

func (r *runner) markFailed(t, why string) {
	r.mu.Lock()
	if _, ok := r.failedTables[t]; !ok {
		r.failedTables[t] = why
	}
	r.mu.Unlock()
}

func (r *runner) stateTable() string {
	s := r.c.StateTable
	if s == "" {
		s = DefaultStateTable
	}
	schema, name, _ := strings.Cut(s, ".")
	return postgres.QuoteIdent(schema) + "." + postgres.QuoteIdent(name)
}

func (r *runner) run(ctx context.Context) error {
	pg, err := postgres.Connect(ctx, r.c.Target)
	if err != nil {
		return &ConnectError{err}
	}
	r.pg = pg
	defer pg.Close(context.WithoutCancel(ctx))
	if err := r.loadState(ctx); err != nil {
		return err
	}
	steps := r.plan.Steps
	var tables, views []*Step
	for i := range steps {
		s := &steps[i]
		switch {
		case s.Phase < PhaseData:
			r.ddl(ctx, r.pg, s)
		case s.Phase < PhaseView:
			tables = append(tables, s)
		default:
			views = append(views, s)
		}
	}
	r.schedule(ctx, tables)
	// Views in passes: a view on a view not yet created fails and is
	// retried once the others are in.
	for len(views) > 0 {
		var again []*Step
		for _, s := range views {
			if !r.ddlQuiet(ctx, s) {
				again = append(again, s)
			}
		}
		if len(again) == len(views) {
			for _, s := range again {
				r.ddl(ctx, r.pg, s)
			}
			break
		}
		views = again
	}
	return errors.Join(r.errs...)
}

// loadState creates the state table when missing and reads the finished
// steps; without Resume a target with finished steps is refused.
func (r *runner) loadState(ctx context.Context) error {
	st := r.stateTable()
	schema, _, _ := strings.Cut(r.c.StateTable, ".")
	if schema == "" {
		schema = "public"
	}
	for _, q := range []string{"CREATE SCHEMA IF NOT EXISTS " + postgres.QuoteIdent(schema),
		"CREATE TABLE IF NOT EXISTS " + st + " (step text PRIMARY KEY, rows bigint, detail jsonb, done_at timestamptz NOT NULL DEFAULT now())",
		// A state table of a release before the key ranges were kept.
		"ALTER TABLE " + st + " ADD COLUMN IF NOT EXISTS detail jsonb"} {
		if _, err := r.pg.Exec(ctx, q); err != nil {
			return fmt.Errorf("migrate: state table: %s: %w", q, err)
		}
	}
	rows, err := r.pg.Query(ctx, "SELECT step, COALESCE(rows, 0), detail FROM "+st)
	if err != nil {
		return fmt.Errorf("migrate: reading %s: %w", st, err)
	}
	r.done = map[string]int64{}
	r.detail = map[string][]byte{}
	for rows.Next() {
		var k string
		var n int64
		var d []byte
		if err := rows.Scan(&k, &n, &d); err != nil {
			rows.Close()
			return fmt.Errorf("migrate: reading %s: %w", st, err)
		}
		r.done[k] = n
		if d != nil {
			r.detail[k] = d
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: reading %s: %w", st, err)
	}
	if len(r.done) > 0 && !r.c.Resume {
		return fmt.Errorf("migrate: the target holds an earlier migration (%d finished steps in %s): rerun with --resume to continue it, or drop what it created and that table", len(r.done), st)
	}
	return r.keepRanges(ctx)
}

// rangesKey is the state row of a split table's key ranges.
func rangesKey(table string) string { return "ranges:" + table }

// keepRanges makes the key ranges of every table those an earlier run
// recorded, and records those of the tables split now, before any range
// loads. A table an earlier run recorded as split loads as those ranges
// (even when the source's keys, or --split-rows, would cut it
// differently now), and a table an earlier run loaded whole stays done
// whole: either way no row is loaded twice.
func (r *runner) keepRanges(ctx context.Context) error {
	var record []*TablePlan
	for _, tp := range r.plan.Tables {
		if d, ok := r.detail[rangesKey(tp.Target())]; ok {
			var kept []KeyRange
			if err := json.Unmarshal(d, &kept); err != nil {
				return fmt.Errorf("migrate: the key ranges of %s in %s: %w", tp.Target(), r.stateTable(), err)
			}
			r.plan.useRanges(tp, kept)
			continue
		}
		if _, whole := r.done[PhaseData.String()+":"+tp.Target()]; whole {
			if tp.Parts > 0 {
				r.plan.useRanges(tp, nil)
			}
			continue
		}
		if tp.Parts > 0 {
			record = append(record, tp)
		}
	}
	if len(record) == 0 {
		return nil
	}
	tx, err := r.pg.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	for _, tp := range record {
		d, err := json.Marshal(r.plan.Ranges(tp))
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+r.stateTable()+" (step, detail) VALUES ($1, $2)", rangesKey(tp.Target()), string(d)); err != nil {
			return fmt.Errorf("migrate: recording the key ranges of %s: %w", tp.Target(), err)
		}
	}
	return tx.Commit(ctx)
}

func (r *runner) record(s *Step, status string, err error) { r.recordTimed(s, status, 0, err) }

func (r *runner) recordTimed(s *Step, status string, d time.Duration, err error) {
	ss := StepSummary{Phase: s.Phase.String(), Object: s.Object, Status: status, Duration: d}
	if err != nil {
		ss.Error = err.Error()
	}
	r.mu.Lock()
	r.sum.Steps = append(r.sum.Steps, ss)
	r.mu.Unlock()
}

// blocked reports why a step cannot run: its table or a table it
// references failed.
func (r *runner) blocked(s *Step) (string, bool) {
	for _, t := range append([]string{s.Table}, s.Refs...) {
		if t == "" {
			continue
		}
		if why, ok := r.tableFailed(t); ok {
			return fmt.Sprintf("table %s failed: %s", t, why), true
		}
		// A failed range does not stop its table's other ranges.
		if r.rowsFailed(t) && s.Phase != PhaseData {
			return fmt.Sprintf("table %s failed: loading its rows failed", t), true
		}
	}
	return "", false
}

// markRowsFailed records that rows of table t failed to load.
func (r *runner) markRowsFailed(t string) {
	r.mu.Lock()
	r.failedRows[t] = true
	r.mu.Unlock()
}

func (r *runner) rowsFailed(t string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failedRows[t]
}

// ddl runs one step in its own transaction with its state row.
func (r *runner) ddl(ctx context.Context, conn *pgx.Conn, s *Step) {
	if _, ok := r.done[s.Key()]; ok {
		r.record(s, StepEarlier, nil)
		return
	}
	if why, ok := r.blocked(s); ok {
		r.record(s, StepNotRun, errors.New(why))
		return
	}
	t0 := time.Now()
	err := r.exec(ctx, conn, s)
	d := r.timed(s.Phase, t0)
	if err != nil {
		r.recordTimed(s, StepFailed, d, err)
		r.fail(fmt.Errorf("%s %s: %w", s.Phase, s.Object, err))
		if s.Phase == PhaseTable {
			r.markFailed(s.Table, "creating it failed")
		}
		return
	}
	r.recordTimed(s, StepDone, d, nil)
}

// ddlQuiet runs a view step and reports success; a failure is recorded
// by the final pass.
func (r *runner) ddlQuiet(ctx context.Context, s *Step) bool {
	if _, ok := r.done[s.Key()]; ok {
		r.record(s, StepEarlier, nil)
		return true
	}
	if _, ok := r.blocked(s); ok {
		return false
	}
	t0 := time.Now()
	if r.exec(ctx, r.pg, s) != nil {
		return false
	}
	r.recordTimed(s, StepDone, r.timed(s.Phase, t0), nil)
	return true
}

func (r *runner) exec(ctx context.Context, conn *pgx.Conn, s *Step) (err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	for _, q := range s.SQL {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+r.stateTable()+" (step) VALUES ($1)", s.Key()); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// loadStep loads one data step (a table or a key range of one) into ts,
// unless an earlier run did or its table failed; started is when it began.
func (r *runner) loadStep(ctx context.Context, s *Step, tp *TablePlan, ts *TableSummary, started *time.Time) {
	*ts = TableSummary{Source: tp.Source.FullName(), Target: tp.Target()}
	if n, ok := r.done[s.Key()]; ok {
		ts.Rows, ts.Resumed = n, true
		return
	}
	if why, ok := r.blocked(s); ok {
		ts.Error = why
		return
	}
	*started = time.Now()
	err := r.loadTable(ctx, s, tp, ts)
	ts.Duration = r.timed(PhaseData, *started)
	if err != nil {
		ts.Error = err.Error()
		// The table's other ranges go on (each commits on its own, and
		// --resume does not load them again); its keys, indexes and the
		// foreign keys onto it wait for every range, and do not run.
		r.markRowsFailed(tp.Target())
		if s.Range != nil {
			err = fmt.Errorf("key range %s (%s): %w", s.Object, s.Range, err)
		}
		r.fail(fmt.Errorf("table %s: %w", tp.Source.FullName(), err))
	}
}

// mergeParts sums the key ranges of each table into one summary: rows
// and bytes added, the time from the first range's start to the last
// one's end, verified when every range was.
func mergeParts(steps []*Step, results []TableSummary, started []time.Time) []TableSummary {
	var out []TableSummary
	at := map[string]int{}
	end := map[string]time.Time{}
	begin := map[string]time.Time{}
	for i, s := range steps {
		ts := results[i]
		var rs *RangeSummary
		if s.Range != nil {
			rs = &RangeSummary{Object: s.Object, Rows: ts.Rows, Duration: ts.Duration, VerifyDuration: ts.VerifyDuration, Resumed: ts.Resumed, Error: ts.Error}
		}
		if !started[i].IsZero() {
			if b, ok := begin[s.Table]; !ok || started[i].Before(b) {
				begin[s.Table] = started[i]
			}
			if e := started[i].Add(ts.Duration); e.After(end[s.Table]) {
				end[s.Table] = e
			}
		}
		k, ok := at[s.Table]
		if !ok {
			at[s.Table] = len(out)
			if rs != nil {
				ts.Ranges = []RangeSummary{*rs}
			}
			out = append(out, ts)
			if ts.Resumed {
				out[len(out)-1].Verified = "?" // set by the first range loaded now
			}
			continue
		}
		m := &out[k]
		if rs != nil {
			m.Ranges = append(m.Ranges, *rs)
		}
		m.VerifyDuration += ts.VerifyDuration
		m.Rows += ts.Rows
		m.Bytes += ts.Bytes
		m.SourceRows += ts.SourceRows
		m.Resumed = m.Resumed && ts.Resumed
		m.Checksum = ""
		// Verified says how the ranges loaded by this run were checked.
		if !ts.Resumed {
			if m.Verified == "?" {
				m.Verified = ts.Verified
			} else if m.Verified != ts.Verified {
				m.Verified = ""
			}
		}
		if ts.Error != "" {
			if m.Error != "" {
				m.Error += "; "
			}
			m.Error += ts.Error
		}
	}
	for t, k := range at {
		if out[k].Verified == "?" {
			out[k].Verified = ""
		}
		if !begin[t].IsZero() {
			out[k].Duration = end[t].Sub(begin[t])
		}
	}
	return out
}

// loadTable streams one table through the PostgreSQL sink: truncated and
// loaded in one transaction, which also restarts the identity, verifies
// and records the step, so a table is either wholly loaded and recorded
// or left empty for a rerun.
func (r *runner) loadTable(ctx context.Context, s *Step, tp *TablePlan, ts *TableSummary) error {
	conn, err := r.c.connect(ctx)
	if err != nil {
		return &ConnectError{err}
	}
	defer conn.Close()
	verify := r.c.Verify
	where, params := s.where()
	if verify != "" && verify != VerifyNone {
		t0 := time.Now()
		n, err := catalog.Count(ctx, conn, tp.Source.Schema, tp.Source.Name, where, r.c.Timeout, params...)
		if err != nil {
			return fmt.Errorf("counting the source rows: %w", err)
		}
		ts.SourceRows = n
		ts.VerifyDuration = time.Since(t0)
	}
	var sent checksum
	var sink *postgres.Sink
	// The sink names columns as the plan did: preserve what the plan
	// folded, with one rule per column.
	var rules []postgres.ColumnRule
	for i := range tp.Columns {
		if m := &tp.Columns[i]; m.Companion == "" {
			rules = append(rules, postgres.ColumnRule{Source: m.SourceName, Name: m.Name})
		}
	}
	var loaded []postgres.ColumnRule
	for _, it := range tp.Load.Items {
		for _, ru := range rules {
			if strings.EqualFold(ru.Source, it.Column.Name) {
				loaded = append(loaded, ru)
			}
		}
	}
	// A whole table is emptied and loaded in one transaction; a key
	// range appends in its own (a rerun of a range that did not commit
	// finds none of its rows).
	mode := postgres.ModeTruncate
	if s.Range != nil {
		mode = postgres.ModeAppend
	}
	cfg := postgres.Config{Conn: r.c.Target, Schema: tp.Schema, Table: tp.Name, Mode: mode,
		Identifiers: postgres.IdentPreserve, Columns: loaded, RefusedValues: postgres.RefuseFail, OffsetColumn: true,
		VariantTypeColumn: true, NotNull: true, Freeze: true, BufferSize: postgres.DefaultBufferSize, Buffers: postgres.DefaultBuffers}
	if verify == VerifyChecksum {
		cfg.OnRow = func(tuple []byte) {
			if sent.skip == nil {
				sent.skip = jsonbFields(sink.Target())
			}
			sent.add(tuple)
		}
	}
	cfg.BeforeCommit = func(ctx context.Context, tx postgres.Execer, t *postgres.Table) error {
		if tp.Restart != "" {
			if _, err := tx.Exec(ctx, tp.Restart); err != nil {
				return fmt.Errorf("%s: %w", tp.Restart, err)
			}
		}
		q, ok := tx.(queryer)
		if !ok {
			return errors.New("the load's connection cannot query")
		}
		if verify == VerifyCount || verify == VerifyChecksum {
			verifyStart := time.Now()
			defer func() { ts.VerifyDuration += time.Since(verifyStart) }()
		}
		pgWhere := ""
		if s.PGWhere != "" {
			pgWhere = " WHERE " + s.PGWhere
		}
		if verify == VerifyCount || verify == VerifyChecksum {
			var n int64
			if err := q.QueryRow(ctx, "SELECT count(*) FROM "+t.QualifiedName()+pgWhere).Scan(&n); err != nil {
				return fmt.Errorf("verify: counting the rows loaded: %w", err)
			}
			if n != ts.SourceRows {
				return fmt.Errorf("verify: the source counted %d rows, PostgreSQL holds %d: nothing was committed", ts.SourceRows, n)
			}
			ts.Verified = VerifyCount
		}
		if verify == VerifyChecksum {
			back := checksum{skip: jsonbFields(t)}
			if err := readBack(ctx, q.PgConn(), t, pgWhere, &back); err != nil {
				return fmt.Errorf("verify: reading the table back: %w", err)
			}
			if back.n != sent.n || back.sum != sent.sum {
				return fmt.Errorf("verify: checksum of the rows sent %s (%d rows), of the rows read back %s (%d rows): nothing was committed",
					sent, sent.n, back, back.n)
			}
			ts.Verified, ts.Checksum = VerifyChecksum, sent.String()
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+r.stateTable()+" (step, rows) VALUES ($1, $2)", s.Key(), ts.Rows)
		return err
	}
	sink, err = postgres.New(cfg)
	if err != nil {
		return err
	}
	info := sinks.ExtractInfo{Name: tp.Target(), Schema: tp.Source.Schema, Table: tp.Source.Name, EstimatedRows: tp.Source.RowCount}
	if err := sink.Open(ctx, info); err != nil {
		_ = sink.Abort(context.WithoutCancel(ctx))
		var ce *sinks.ConnectError
		if errors.As(err, &ce) {
			return &ConnectError{err}
		}
		return err
	}
	res, err := conn.Query(ctx, session.Query{SQL: tp.Load.SQL(where), Params: params, Timeout: r.c.Timeout}, sink)
	if res != nil {
		ts.Rows = res.Rows
	}
	if err != nil {
		_ = sink.Abort(context.WithoutCancel(ctx))
		return err
	}
	st, err := sink.Publish(ctx)
	if err != nil {
		_ = sink.Abort(context.WithoutCancel(ctx))
		return err
	}
	ts.Rows, ts.Bytes = st.Rows, st.Bytes
	return nil
}

// queryer is what the load's connection (a *pgx.Conn) offers beyond Exec.
type queryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	PgConn() *pgconn.PgConn
}
