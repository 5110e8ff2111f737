package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
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
type Progress interface {
	Start(extract string, estimatedRows int64)
	Update(extract string, rows, wireBytes int64)
	Finish(extract string, rows, wireBytes int64, err error)
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
	Duration   time.Duration `json:"duration_ns"`
	RowsPerSec float64       `json:"rows_per_s"`
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

// Run validates and runs the job. It always returns a summary (possibly
// partial); the error is a *JobError (or several joined).
func (r *Runner) Run(ctx context.Context, job *JobConfig) (*Summary, error) {
	reg := r.Registry
	sum := &Summary{Job: job.Name, Started: time.Now()}
	if reg == nil {
		return sum, &JobError{Kind: KindConfig, Err: errors.New("engine: Runner has no sink registry")}
	}
	if err := job.Validate(reg); err != nil {
		return sum, &JobError{Kind: KindConfig, Err: err}
	}
	cfg, err := SourceToConfig(&job.Source)
	if err != nil {
		return sum, &JobError{Kind: KindConfig, Err: err}
	}
	sum.Extracts = make([]ExtractSummary, len(job.Extracts))
	par := job.Parallel
	if par <= 0 {
		par = 1
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, par)
	)
	for i := range job.Extracts {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			es, err := r.runExtract(ctx, reg, cfg, job, &job.Extracts[i])
			sum.Extracts[i] = es
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	sum.Duration = time.Since(sum.Started)
	sum.OK = len(errs) == 0
	return sum, errors.Join(errs...)
}

// SourceToConfig turns the job's source into a session Config.
func SourceToConfig(src *SourceConfig) (session.Config, error) {
	cfg, err := session.ParseConnString(string(src.Connection))
	if err != nil {
		return session.Config{}, &ConfigError{Field: "source.connection", Msg: err.Error()}
	}
	if src.PasswordEnv != "" {
		cfg.Password, cfg.PasswordFile, cfg.PasswordEnv = "", "", src.PasswordEnv
	}
	if src.PasswordFile != "" {
		cfg.Password, cfg.PasswordEnv, cfg.PasswordFile = "", "", src.PasswordFile
	}
	if src.ConnectTimeout != "" {
		d, err := parseDurationField(src.ConnectTimeout)
		if err != nil {
			return session.Config{}, &ConfigError{Field: "source.connect_timeout", Msg: err.Error()}
		}
		cfg.ConnectTimeout = d
	}
	return cfg, nil
}

func (r *Runner) runExtract(ctx context.Context, reg *sinks.Registry, cfg session.Config, job *JobConfig, ex *ExtractConfig) (es ExtractSummary, err error) {
	name := ex.ExtractName()
	es.Name = name
	start := time.Now()
	var conn *session.Conn
	wire := func() int64 {
		if conn == nil {
			return 0
		}
		return conn.WireBytes()
	}
	var rows int64
	if r.Progress != nil {
		defer func() { r.Progress.Finish(name, rows, wire(), err) }()
	}
	fail := func(kind ErrorKind, e error) (ExtractSummary, error) {
		es.Error = e.Error()
		es.Duration = time.Since(start)
		return es, &JobError{Kind: kind, Extract: name, Err: e}
	}

	timeout, _ := parseTimeoutField(job.Source.Timeout)
	if ex.Timeout != "" {
		timeout, _ = parseTimeoutField(ex.Timeout)
	}
	es.Timeout = timeout.String()

	connect := r.Connect
	if connect == nil {
		connect = session.Connect
	}
	conn, err = connect(ctx, cfg)
	if err != nil {
		return fail(KindConnect, err)
	}
	defer conn.Close()

	var sqlText string
	var info sinks.ExtractInfo
	info.Name, info.EstimatedRows = name, -1
	where, err := ExpandVars(ex.Where, os.LookupEnv)
	if err != nil {
		return fail(KindConfig, &ConfigError{Field: "where", Msg: err.Error()})
	}
	if ex.Query != "" {
		if sqlText, err = ExpandVars(ex.Query, os.LookupEnv); err != nil {
			return fail(KindConfig, &ConfigError{Field: "query", Msg: err.Error()})
		}
	} else {
		schema, table, _ := catalog.SplitTableName(ex.Table)
		info.Schema, info.Table = schema, table
		tab, err := catalog.LoadTable(ctx, conn, schema, table, timeout)
		if err != nil {
			return fail(KindExtract, err)
		}
		overrides := make([]catalog.Override, len(ex.Convert))
		for i, c := range ex.Convert {
			overrides[i] = catalog.Override{Column: c.Column, Expr: c.Expr}
		}
		proj, err := catalog.Project(tab, ex.Columns, overrides)
		if err != nil {
			var uc *catalog.UnknownColumnError
			if errors.As(err, &uc) {
				err = &ConfigError{Field: uc.Field, Msg: uc.Error()}
			}
			return fail(KindConfig, err)
		}
		sqlText = proj.SQL(where)
		if where == "" {
			// For progress: the row count SQL Server keeps in its
			// catalog (cheap, possibly stale).
			info.EstimatedRows = tab.RowCount
		}
	}
	es.SQL = sqlText
	verify := strings.EqualFold(ex.Verify, "count")
	if verify {
		n, err := catalog.Count(ctx, conn, info.Schema, info.Table, where, timeout)
		if err != nil {
			return fail(KindExtract, fmt.Errorf("verify: counting source rows: %w", err))
		}
		info.EstimatedRows = n
	}

	specs := ex.Sinks
	if len(specs) == 0 {
		specs = job.Sinks
	}
	sinks := make([]sinks.Sink, 0, len(specs))
	abortAll := func() {
		for _, s := range sinks {
			_ = s.Abort(context.WithoutCancel(ctx))
		}
	}
	for _, spec := range specs {
		fac, _ := reg.Lookup(spec.Type)
		s, err := fac.New(spec.Options)
		if err != nil {
			abortAll()
			return fail(KindConfig, fmt.Errorf("sink %s: %w", spec.Type, err))
		}
		sinks = append(sinks, s)
		if err := s.Open(ctx, info); err != nil {
			abortAll()
			return fail(KindExtract, fmt.Errorf("sink %s: open: %w", spec.Type, err))
		}
	}
	if r.Progress != nil {
		r.Progress.Start(name, info.EstimatedRows)
	}

	cs := make([]decode.CellSink, len(sinks))
	for i, s := range sinks {
		cs[i] = s
	}
	q := session.Query{SQL: sqlText, Timeout: timeout}
	if r.Progress != nil {
		q.OnProgress = func(n int64) { r.Progress.Update(name, n, wire()) }
	}
	res, qerr := conn.Query(ctx, q, Tee(cs...))
	if res != nil {
		rows = res.Rows
	}
	es.Rows, es.WireBytes = rows, wire()
	if qerr != nil {
		abortAll()
		return fail(KindExtract, withHint(qerr))
	}
	if verify {
		es.Verified, es.SourceRows = "count", info.EstimatedRows
		if rows != info.EstimatedRows {
			abortAll()
			return fail(KindExtract, fmt.Errorf("verify: extracted %d rows but the source counted %d: nothing was published; rerun the extract (the table may have changed while it ran)", rows, info.EstimatedRows))
		}
	}
	es.Duration = time.Since(start)
	es.RowsPerSec = rate(rows, es.Duration)
	for i, s := range sinks {
		t0 := time.Now()
		st, err := s.Publish(ctx)
		if err != nil {
			for _, rest := range sinks[i:] {
				_ = rest.Abort(context.WithoutCancel(ctx))
			}
			return fail(KindExtract, fmt.Errorf("sink %s: publish: %w", specs[i].Type, err))
		}
		d := es.Duration + time.Since(t0)
		es.Sinks = append(es.Sinks, SinkSummary{Type: specs[i].Type, Rows: st.Rows, Bytes: st.Bytes, Files: st.Files, Duration: d, RowsPerSec: rate(st.Rows, d)})
	}
	es.Duration = time.Since(start)
	return es, nil
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
