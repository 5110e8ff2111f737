package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/partition"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
)

// ErrorKind classifies a failed job for exit codes and messages.
type ErrorKind int

const (
	KindConfig  ErrorKind = iota + 1 // the job configuration is wrong
	KindConnect                      // the source cannot be reached or refuses the login
	KindExtract                      // a failure while extracting or writing
	// KindIncomplete: a commit found units not yet finished (run them and
	// commit again).
	KindIncomplete
)

// JobError is a failed extract (or job) with its kind.
type JobError struct {
	Kind    ErrorKind
	Extract string // empty for a job-level failure
	Err     error
}

// Transient reports whether the failure may pass if the same run is
// started again later (a lost connection, a deadlock, a failover, the
// source unreachable): what a scheduler should retry.
func (e *JobError) Transient() bool {
	return e.Kind == KindConnect || session.IsTransient(e.Err)
}

func (e *JobError) Error() string {
	if e.Extract == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("extract %q: %v", e.Extract, e.Err)
}

func (e *JobError) Unwrap() error { return e.Err }

// Progress receives progress events. Implementations must be safe for
// concurrent use (extracts may run in parallel) and cheap: Update is called
// every few thousand rows from the decoding goroutine.
//
// A display's rows/s agrees with the summary's when it divides the rows by
// the time since began (the extract's start, the origin of the summary's
// rate) while the extract runs, and shows rowsPerSec, the summary's own
// figure, once it finished.
type Progress interface {
	// Start: the sinks are open and the SELECT is about to be sent;
	// estimatedRows is -1 when unknown (a filtered extract without
	// verify: count).
	Start(extract string, estimatedRows int64, began time.Time)
	Update(extract string, rows, wireBytes int64)
	// Finish: rowsPerSec is the summary's rate (0 when the extract failed).
	Finish(extract string, rows, wireBytes int64, rowsPerSec float64, err error)
}

// RetryProgress is what a Progress may also implement to show retries. A
// unit is started and finished once, however many attempts it takes: an
// attempt that failed transiently and will run again is reported as
// Retry (its number, its error and the wait before the next attempt)
// instead of Finish, and the next attempt does not Start it again; its
// Updates count rows from 0 again. A Progress without Retry sees only
// the rows going back.
type RetryProgress interface {
	Retry(extract string, attempt int, err error, delay time.Duration)
}

// Summary is the result of a run.
type Summary struct {
	Job string `json:"job"`
	// Run, StateDir and Manifest name the checkpointed run (empty when the
	// run keeps no checkpoints); Manifest is set once it is written.
	Run      string           `json:"run,omitempty"`
	StateDir string           `json:"state_dir,omitempty"`
	Manifest string           `json:"manifest,omitempty"`
	Started  time.Time        `json:"started"`
	Duration time.Duration    `json:"duration_ns"`
	Extracts []ExtractSummary `json:"extracts"`
	OK       bool             `json:"ok"`
}

// ExtractSummary reports one extract.
type ExtractSummary struct {
	Name       string        `json:"name"`
	SQL        string        `json:"sql"`
	Rows       int64         `json:"rows"`
	WireBytes  int64         `json:"wire_bytes"`
	Duration   time.Duration `json:"duration_ns"`
	RowsPerSec float64       `json:"rows_per_s"`
	Timeout    string        `json:"timeout"`
	Verified   string        `json:"verified,omitempty"` // "count" when checked
	SourceRows int64         `json:"source_rows,omitempty"`
	Sinks      []SinkSummary `json:"sinks"`
	Error      string        `json:"error,omitempty"`
	// Incremental reports an incremental extract's window and state.
	Incremental *IncrementalSummary `json:"incremental,omitempty"`
	// Unit and Range identify a unit of a partitioned extract (its ID and
	// its range with the bounds written in); Units are those units' own
	// summaries in the extract's summary.
	Unit  string           `json:"unit,omitempty"`
	Range string           `json:"range,omitempty"`
	Units []ExtractSummary `json:"units,omitempty"`
	// Checksum fingerprints every value written (checkpointed runs only;
	// see Checksum); an extract's is the sum of its units'.
	Checksum string `json:"checksum,omitempty"`
	// Resumed is set for a unit an earlier run finished: not run again.
	Resumed bool `json:"resumed,omitempty"`
	// Attempts is how many times the unit ran; Retries say why each
	// retry happened.
	Attempts int          `json:"attempts,omitempty"`
	Retries  []RetryEvent `json:"retries,omitempty"`
}

// RetryEvent is one retry of a unit.
type RetryEvent struct {
	Unit    string        `json:"unit"`
	Attempt int           `json:"attempt"` // the attempt that failed
	Error   string        `json:"error"`
	Delay   time.Duration `json:"delay_ns"`
}

// SinkSummary reports one sink of an extract.
type SinkSummary struct {
	Type       string        `json:"type"`
	Rows       int64         `json:"rows"`
	Bytes      int64         `json:"bytes"`
	Files      []string      `json:"files,omitempty"`
	Rejected   int64         `json:"rejected,omitempty"` // rows set aside (in a reject file among Files)
	Duration   time.Duration `json:"duration_ns"`
	RowsPerSec float64       `json:"rows_per_s"`
	// Skipped says why the sink wrote nothing (its output exists and
	// if_exists is skip); empty when it ran.
	Skipped string `json:"skipped,omitempty"`
}

// Runner runs jobs.
type Runner struct {
	// Registry resolves sink types. Required.
	Registry *sinks.Registry
	// Progress, if set, receives progress events.
	Progress Progress
	// Connect opens a session; nil means session.Connect. Tests may substitute.
	Connect func(ctx context.Context, cfg session.Config) (*session.Conn, error)
	// Backfill, when set, makes every incremental extract export this
	// range of its watermark column instead of its next window, leaving
	// its state as it is.
	Backfill *incremental.Range
	// Resume keeps checkpoints for any job and finishes an unfinished run
	// (a checkpointed job does that when started again anyway).
	Resume bool
	// Restart discards an unfinished run in the state directory.
	Restart bool
	// Share, when set, runs only that share of the units (a scheduler's
	// array task); the manifest is written by whichever process finishes
	// the last unit, or by Commit.
	Share *Share
	// RunID names the run for processes that share it (a scheduler's job
	// id); its state is a subdirectory of the state directory.
	RunID string
	// Sleep waits between retries; nil means a timer (tests substitute).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Run resolves the job (Resolve) and executes its plan. It always
// returns a summary (possibly partial); the error is a *JobError (or
// several joined).
func (r *Runner) Run(ctx context.Context, job *JobConfig) (*Summary, error) {
	sum := &Summary{Job: job.Name, Started: time.Now()}
	if r.Registry == nil {
		return sum, &JobError{Kind: KindConfig, Err: errors.New("engine: Runner has no sink registry")}
	}
	plan, err := Resolve(job, r.Registry)
	if err != nil {
		return sum, &JobError{Kind: KindConfig, Err: err}
	}
	return r.Execute(ctx, plan)
}

// Expand splits every partitioned extract of plan into its key-range
// units (engine/partition: the key's MIN and MAX read on one session, or
// the predicates as written). It is done once; a plan resumed from a
// checkpoint is already expanded, with the bounds of its first run.
func (r *Runner) Expand(ctx context.Context, plan *Plan) error {
	if plan.Expanded {
		return nil
	}
	var conn *session.Conn
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	var units []Unit
	for _, u := range plan.Units {
		ex := u.Extract
		if ex.Partition == nil {
			units = append(units, u)
			continue
		}
		var parts []partition.Part
		if len(ex.Partition.Predicates) > 0 {
			for _, p := range ex.Partition.Predicates {
				parts = append(parts, partition.Part{Where: p})
			}
		} else {
			if conn == nil {
				c, err := r.connect(ctx, plan.Session)
				if err != nil {
					return &JobError{Kind: KindConnect, Extract: ex.Name, Err: err}
				}
				conn = c
			}
			t, err := catalog.LoadTable(ctx, conn, ex.Schema, ex.Table, ex.Timeout)
			if err != nil {
				return &JobError{Kind: KindExtract, Extract: ex.Name, Err: err}
			}
			parts, err = partition.Plan(ctx, conn, t, *ex.Partition, ex.Timeout)
			if err != nil {
				kind := KindExtract
				var pe *partition.Error
				if errors.As(err, &pe) {
					kind = KindConfig
					err = &ConfigError{File: plan.File, Field: ex.Field + ".partition", Msg: pe.Msg}
				}
				return &JobError{Kind: kind, Extract: ex.Name, Err: err}
			}
		}
		for i, p := range parts {
			units = append(units, Unit{Extract: ex, Where: p.Where, Range: p, Part: i, Parts: len(parts)})
		}
	}
	plan.Units, plan.Expanded = units, true
	return nil
}

func (r *Runner) connect(ctx context.Context, cfg session.Config) (*session.Conn, error) {
	if r.Connect != nil {
		return r.Connect(ctx, cfg)
	}
	return session.Connect(ctx, cfg)
}

// Execute runs the units of a plan, Parallel at a time (and at most each
// extract's Parallel of its own units), each on its own session, and
// summarises them per extract.
func (r *Runner) Execute(ctx context.Context, plan *Plan) (*Summary, error) {
	sum := &Summary{Job: plan.Job, Started: time.Now()}
	resetWindows(plan)
	if err := r.checkIncremental(plan); err != nil {
		sum.Duration = time.Since(sum.Started)
		return sum, err
	}
	if err := r.Expand(ctx, plan); err != nil {
		sum.Duration = time.Since(sum.Started)
		return sum, err
	}
	var rs *runState
	if r.checkpointing(plan) {
		var err error
		if rs, err = r.openRun(ctx, plan); err != nil {
			sum.Duration = time.Since(sum.Started)
			return sum, err
		}
		sum.Run, sum.StateDir = rs.pf.Run, rs.st.dir
	}
	results := make([]ExtractSummary, len(plan.Units))
	errs := make([]error, len(plan.Units))
	ran := make([]bool, len(plan.Units))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, plan.Parallel))
	exSem := map[*ExtractPlan]chan struct{}{}
	for _, ex := range plan.Extracts {
		if ex.Parallel > 0 {
			exSem[ex] = make(chan struct{}, ex.Parallel)
		}
	}
	for i, u := range plan.Units {
		if !r.Share.has(i) {
			continue
		}
		ran[i] = true
		if rs != nil && rs.done[i] != nil {
			results[i] = resumedSummary(rs.done[i])
			continue
		}
		wg.Add(1)
		es := exSem[u.Extract]
		if es != nil {
			es <- struct{}{}
		}
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() {
				<-sem
				if es != nil {
					<-es
				}
			}()
			results[i], errs[i] = r.runWithRetries(ctx, plan, u, rs != nil)
			if errs[i] == nil && rs != nil {
				if err := rs.record(i, u, results[i]); err != nil {
					errs[i] = &JobError{Kind: KindExtract, Extract: u.Extract.Name, Err: fmt.Errorf("unit %s published, but its checkpoint could not be written (a rerun repeats it): %w", u.ID(), err)}
				}
			}
		}()
	}
	wg.Wait()
	for _, ex := range plan.Extracts {
		var units []ExtractSummary
		for i, u := range plan.Units {
			if u.Extract == ex && ran[i] {
				units = append(units, results[i])
			}
		}
		if len(units) > 0 {
			sum.Extracts = append(sum.Extracts, mergeUnits(units))
		}
	}
	err := errors.Join(errs...)
	complete := false
	if err == nil && rs != nil {
		// Whoever finishes the last unit writes the manifest; a share
		// whose siblings are still running leaves it to them (or to
		// Commit).
		if rerr := rs.refresh(); rerr != nil {
			err = &JobError{Kind: KindExtract, Err: rerr}
		} else if len(rs.missing()) == 0 {
			path, cerr := rs.commit(ctx, plan)
			if cerr != nil {
				err = cerr
				var je *JobError
				if !errors.As(cerr, &je) {
					err = &JobError{Kind: KindExtract, Err: cerr}
				}
			}
			sum.Manifest, complete = path, cerr == nil
		}
	}
	sum.Duration = time.Since(sum.Started)
	// The watermarks advance last, for the extracts whose every unit
	// published (of a checkpointed run: once the run is complete).
	err = errors.Join(err, commitWindows(plan, sum, errs, rs, complete))
	sum.OK = err == nil
	return sum, err
}

// resumedSummary reports a unit an earlier run finished.
func resumedSummary(rec *UnitRecord) ExtractSummary {
	s := ExtractSummary{Name: rec.Extract, Rows: rec.Rows, Checksum: rec.Checksum, Resumed: true, Attempts: rec.Attempts}
	if rec.Parts > 1 {
		s.Unit, s.Range = rec.ID, rec.Range
	}
	for _, t := range rec.Sinks {
		s.Sinks = append(s.Sinks, SinkSummary{Type: t, Rows: rec.Rows, Skipped: "finished by an earlier run"})
	}
	if len(s.Sinks) > 0 {
		s.Sinks[0].Files, s.Sinks[0].Bytes = rec.Files, rec.Bytes
	}
	return s
}

// runWithRetries runs a unit, and again on a fresh connection after a
// transient failure, up to the plan's attempts, waiting a capped
// exponential backoff with full jitter between runs (so units that failed
// together, on a failover, do not all come back at the same moment).
func (r *Runner) runWithRetries(ctx context.Context, plan *Plan, u Unit, checksum bool) (ExtractSummary, error) {
	attempts := max(1, plan.Retry.Attempts)
	var retries []RetryEvent
	at := &attempt{}
	for a := 1; ; a++ {
		at.final = func(err error) bool {
			return err == nil || a >= attempts || !retryable(err) || ctx.Err() != nil
		}
		s, err := r.runUnit(ctx, plan, u, checksum, at)
		s.Attempts, s.Retries = a, retries
		if at.final(err) {
			return s, err
		}
		d := backoff(plan.Retry, a)
		retries = append(retries, RetryEvent{Unit: u.ID(), Attempt: a, Error: err.Error(), Delay: d})
		if rp, ok := r.Progress.(RetryProgress); ok && at.started {
			rp.Retry(at.label, a, err, d)
		}
		sleep := r.Sleep
		if sleep == nil {
			sleep = sleepCtx
		}
		if serr := sleep(ctx, d); serr != nil {
			s.Retries = retries
			return s, err
		}
	}
}

// retryable: a transient failure of the source (the session classifies
// them) or of the connection to it. Configuration errors, server errors
// about the query and protocol violations are not. A request timeout is
// (session.TimeoutError is temporary): a stall past the budget is mostly
// a passing condition (blocking, failover), and the attempts bound the
// total wait; a job that wants a timeout to be final sets one attempt.
func retryable(err error) bool {
	var je *JobError
	if errors.As(err, &je) && je.Kind == KindConfig {
		return false
	}
	return session.IsTransient(err)
}

// backoff is the delay before retry a (1-based): a random duration up to
// Initial*2^(a-1), capped at Max ("full jitter").
func backoff(p RetryPolicy, a int) time.Duration {
	d := p.Initial
	for i := 1; i < a && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// mergeUnits summarises an extract from its units' summaries.
func mergeUnits(units []ExtractSummary) ExtractSummary {
	if len(units) == 1 && units[0].Unit == "" {
		return units[0]
	}
	var m ExtractSummary
	m.Units = units
	for i, u := range units {
		if u.Checksum != "" {
			m.Checksum = addChecksums(m.Checksum, u.Checksum)
		}
		m.Retries = append(m.Retries, u.Retries...)
		if i == 0 {
			m.Name, m.SQL, m.Timeout, m.Verified = u.Name, u.SQL, u.Timeout, u.Verified
		}
		m.Rows += u.Rows
		m.WireBytes += u.WireBytes
		m.SourceRows += u.SourceRows
		m.Duration = max(m.Duration, u.Duration)
		m.Sinks = append(m.Sinks, u.Sinks...)
		if u.Error != "" && m.Error == "" {
			m.Error = u.Error
		}
	}
	m.RowsPerSec = rate(m.Rows, m.Duration)
	return m
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// hinted adds what to do to an extraction error; errors.As and errors.Is
// still see the original.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() + " (" + h.hint + ")" }
func (h *hinted) Unwrap() error { return h.err }

// withHint says what to do about a failed query: every error message of a
// run says what to change.
func withHint(err error) error {
	var pe *decode.ProtocolError
	var se *session.ServerError
	var te *session.TimeoutError
	switch {
	case errors.As(err, &te):
		return &hinted{err, "the request deadline was used up waiting for the server; raise source.timeout or the extract's timeout (--timeout), or find why the server stalls; nothing was published"}
	case errors.As(err, &pe):
		return &hinted{err, "the server sent data that is not valid TDS, so the connection was closed; nothing was published; if the server is a real SQL Server, please report this with its version"}
	case errors.As(err, &se) && se.Number == 3952:
		return snapshotHint(err)
	case errors.As(err, &se) && !session.IsTransient(err):
		return &hinted{err, "the server rejected the query: check the table, columns, where and convert settings; nothing was published"}
	case session.IsTransient(err):
		return &hinted{err, "a transient failure (connection lost, deadlock, failover): rerun the job; nothing was published"}
	case errors.Is(err, context.Canceled):
		return &hinted{err, "the run was cancelled; nothing was published"}
	}
	return err
}
