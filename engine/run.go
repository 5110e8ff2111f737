package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
)

// ErrorKind classifies a failed job for exit codes and messages.
type ErrorKind int

const (
	KindConfig  ErrorKind = iota + 1 // the job configuration is wrong
	KindConnect                      // the source cannot be reached or refuses the login
	KindExtract                      // a failure while extracting or writing
)

// JobError is a failed extract (or job) with its kind.
type JobError struct {
	Kind    ErrorKind
	Extract string // empty for a job-level failure
	Err     error
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

// Summary is the result of a run.
type Summary struct {
	Job      string           `json:"job"`
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

// Execute runs the units of a plan, Parallel at a time, each on its own
// session, and summarises them per extract.
func (r *Runner) Execute(ctx context.Context, plan *Plan) (*Summary, error) {
	sum := &Summary{Job: plan.Job, Started: time.Now()}
	results := make([]ExtractSummary, len(plan.Units))
	errs := make([]error, len(plan.Units))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, plan.Parallel))
	for i, u := range plan.Units {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i], errs[i] = r.runUnit(ctx, plan, u)
		}()
	}
	wg.Wait()
	for _, ex := range plan.Extracts {
		var units []ExtractSummary
		for i, u := range plan.Units {
			if u.Extract == ex {
				units = append(units, results[i])
			}
		}
		sum.Extracts = append(sum.Extracts, mergeUnits(units))
	}
	sum.Duration = time.Since(sum.Started)
	err := errors.Join(errs...)
	sum.OK = err == nil
	return sum, err
}

// mergeUnits summarises an extract from its units' summaries.
func mergeUnits(units []ExtractSummary) ExtractSummary {
	if len(units) == 1 {
		return units[0]
	}
	var m ExtractSummary
	for i, u := range units {
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
	case errors.As(err, &se) && !session.IsTransient(err):
		return &hinted{err, "the server rejected the query: check the table, columns, where and convert settings; nothing was published"}
	case session.IsTransient(err):
		return &hinted{err, "a transient failure (connection lost, deadlock, failover): rerun the job; nothing was published"}
	case errors.Is(err, context.Canceled):
		return &hinted{err, "the run was cancelled; nothing was published"}
	}
	return err
}
