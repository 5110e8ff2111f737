package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
)

// unit is one unit of a plan while it runs. Its steps run in order, each
// a small method: connect, describe the table, build the SQL, count or
// estimate the rows, open the sinks, stream, verify, prepare, publish. A
// failed step ends the unit; whatever sinks are open and unpublished are
// aborted.
type unit struct {
	r     *Runner
	u     Unit
	ex    *ExtractPlan
	plan  *Plan
	start time.Time

	conn  *session.Conn
	table *catalog.Table
	sql   string
	info  sinks.ExtractInfo
	sinks []sinks.Sink // opened, in the extract's order
	types []string     // the sinks' types
	done  int          // sinks[:done] are published
	rows  int64
	sum   ExtractSummary
	win   *incremental.Window // an incremental extract's window (incremental.go)
	// check, when set, fingerprints every value (checkpointed runs).
	check *Checksum
	at    *attempt
}

// stepError is a failed step with the class of its failure.
type stepError struct {
	kind ErrorKind
	err  error
}

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func failed(kind ErrorKind, err error) error { return &stepError{kind, err} }

// attempt is what the attempts of one unit share: whether the unit has
// been reported started (under label), and whether an attempt's outcome
// ends the unit (else it is retried).
type attempt struct {
	started bool
	label   string
	final   func(error) bool
}

func (r *Runner) runUnit(ctx context.Context, plan *Plan, u Unit, checksum bool, at *attempt) (ExtractSummary, error) {
	x := &unit{r: r, u: u, ex: u.Extract, plan: plan, start: time.Now(), at: at}
	if checksum {
		x.check = &Checksum{}
	}
	x.sum.Name, x.sum.Timeout = x.ex.Name, x.ex.Timeout.String()
	if u.Parts > 1 {
		x.sum.Unit, x.sum.Range = u.ID(), u.Range.String()
	}
	x.info = sinks.ExtractInfo{Name: x.ex.Name, Schema: x.ex.Schema, Table: x.ex.Table, EstimatedRows: -1, Part: u.Part, Parts: max(1, u.Parts)}
	if plan.SummaryFile != "" {
		x.info.RunDir = filepath.Dir(plan.SummaryFile)
	}
	err := x.run(ctx)
	if x.conn != nil {
		x.sum.WireBytes = x.conn.WireBytes()
		_ = x.conn.Close()
	}
	// rows/s is rows over the extract's seconds, so that the summary's
	// columns agree with each other and with the progress display.
	x.sum.Duration = time.Since(x.start)
	if err == nil {
		x.sum.RowsPerSec = rate(x.rows, x.sum.Duration)
	}
	if r.Progress != nil && at.final(err) {
		// An attempt that will be retried is the retry's to report.
		r.Progress.Finish(x.label(), x.rows, x.sum.WireBytes, x.sum.RowsPerSec, err)
	}
	if err == nil {
		return x.sum, nil
	}
	x.sum.Error = err.Error()
	kind := KindExtract
	var se *stepError
	if errors.As(err, &se) {
		kind, err = se.kind, se.err
	}
	return x.sum, &JobError{Kind: kind, Extract: x.ex.Name, Err: err}
}

// label names the unit in progress events: the extract, or a part's ID.
func (x *unit) label() string {
	if x.u.Parts > 1 {
		return x.u.ID()
	}
	return x.ex.Name
}

func (x *unit) run(ctx context.Context) error {
	defer x.abortUnpublished(ctx)
	steps := []func(context.Context) error{x.connect, x.describe, x.buildSQL, x.countRows, x.openSinks, x.stream, x.verify, x.prepare, x.publish}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			if errors.Is(err, errAllSkipped) {
				return nil
			}
			return err
		}
	}
	return nil
}

// errAllSkipped ends a unit early and successfully: every sink skipped
// (sinks.ErrSkip), so there is nothing to extract.
var errAllSkipped = errors.New("engine: every sink skipped")

// connect opens the unit's own session.
func (x *unit) connect(ctx context.Context) error {
	conn, err := x.r.connect(ctx, x.plan.Session)
	if err != nil {
		return failed(KindConnect, ConnectHint(err))
	}
	x.conn = conn
	return x.beginConsistency(ctx)
}

// describe loads the table from the catalog (a query extract has none).
func (x *unit) describe(ctx context.Context) error {
	if !x.ex.IsTable() {
		return nil
	}
	t, err := catalog.LoadTable(ctx, x.conn, x.ex.Schema, x.ex.Table, x.ex.Timeout)
	if err != nil {
		return failed(KindExtract, err)
	}
	x.table = t
	return x.openWindow(ctx)
}

// buildSQL writes the unit's SELECT: the query as given, or the table's
// projection (columns, default conversions, overrides) with the unit's
// predicate.
func (x *unit) buildSQL(context.Context) error {
	if !x.ex.IsTable() {
		x.sql = x.ex.Query
	} else {
		p, err := x.ex.Project(x.table)
		if err != nil {
			var uc *catalog.UnknownColumnError
			if errors.As(err, &uc) {
				err = &ConfigError{File: x.plan.File, Field: x.ex.Field + "." + uc.Field, Msg: uc.Error()}
			}
			return failed(KindConfig, err)
		}
		x.sql = p.SQL(x.predicate())
	}
	x.sum.SQL = x.sql
	return nil
}

// countRows counts the source rows exactly when the unit is verified, and
// otherwise estimates them for progress from the row count SQL Server
// keeps (cheap, possibly a little stale; not for a filtered unit).
func (x *unit) countRows(ctx context.Context) error {
	switch {
	case x.ex.Verify == VerifyCount:
		n, err := x.count(ctx)
		if err != nil {
			return failed(KindExtract, fmt.Errorf("verify: counting source rows: %w", err))
		}
		x.info.EstimatedRows = n
	case x.table != nil && x.predicate() == "":
		x.info.EstimatedRows = x.table.RowCount
	}
	return nil
}

// openSinks creates and opens the extract's sinks. A sink whose Open asks
// to be skipped (sinks.ErrSkip: its output exists and if_exists is skip)
// is reported as skipped and not fed; when every sink skips, the query
// does not run.
func (x *unit) openSinks(ctx context.Context) error {
	for _, sp := range x.ex.Sinks {
		s, err := sp.Factory.New(sp.Options)
		if err != nil {
			return failed(KindConfig, fmt.Errorf("sink %s: %w", sp.Type, err))
		}
		if err := s.Open(ctx, x.info); err != nil {
			if errors.Is(err, sinks.ErrSkip) {
				_ = s.Abort(context.WithoutCancel(ctx))
				x.sum.Sinks = append(x.sum.Sinks, SinkSummary{Type: sp.Type, Skipped: err.Error()})
				continue
			}
			x.sinks = append(x.sinks, s) // aborted with the others, in order
			kind := KindExtract
			var ce *sinks.ConnectError
			if errors.As(err, &ce) {
				kind = KindConnect // the destination is unreachable or refused the login
			}
			return failed(kind, fmt.Errorf("sink %s: open: %w", sp.Type, err))
		}
		x.sinks = append(x.sinks, s)
		x.types = append(x.types, sp.Type)
	}
	if len(x.sinks) == 0 {
		return errAllSkipped
	}
	if x.r.Progress != nil && !x.at.started {
		x.r.Progress.Start(x.label(), x.info.EstimatedRows, x.start)
	}
	x.at.started, x.at.label = true, x.label()
	return nil
}

// stream runs the SELECT once, through the tee into every sink.
func (x *unit) stream(ctx context.Context) error {
	cs := make([]decode.CellSink, len(x.sinks))
	for i, s := range x.sinks {
		cs[i] = s
	}
	if x.check != nil {
		cs = append(cs, x.check)
	}
	q := session.Query{SQL: x.sql, Params: x.params(), Timeout: x.ex.Timeout}
	if p := x.r.Progress; p != nil {
		label := x.label()
		q.OnProgress = func(n int64) { p.Update(label, n, x.conn.WireBytes()) }
	}
	res, err := x.conn.Query(ctx, q, Tee(cs...))
	if res != nil {
		x.rows = res.Rows
	}
	x.sum.Rows = x.rows
	if x.check != nil {
		x.sum.Checksum = x.check.String()
	}
	if err != nil {
		return failed(KindExtract, withHint(err))
	}
	return nil
}

// verify compares the rows streamed with the count.
func (x *unit) verify(context.Context) error {
	if x.ex.Verify != VerifyCount {
		return nil
	}
	x.sum.Verified, x.sum.SourceRows = VerifyCount.String(), x.info.EstimatedRows
	if x.rows != x.info.EstimatedRows {
		return failed(KindExtract, fmt.Errorf("verify: extracted %d rows but the source counted %d: nothing was published; rerun the extract (the table may have changed while it ran)", x.rows, x.info.EstimatedRows))
	}
	return nil
}

// prepare lets every sink finish what can still fail (a plugin sink
// hands on its last batch, waits for every acknowledgement and lets the
// plugin flush) before any sink publishes: such a failure then leaves
// every sink unpublished, and Publish only makes output visible.
func (x *unit) prepare(ctx context.Context) error {
	for i, s := range x.sinks {
		if p, ok := s.(sinks.Preparer); ok {
			if err := p.Prepare(ctx); err != nil {
				return failed(KindExtract, fmt.Errorf("sink %s: %w", x.ex.Sinks[i].Type, err))
			}
		}
	}
	return nil
}

// publish publishes the sinks in order; each sink's rate is taken after
// its own publish.
func (x *unit) publish(ctx context.Context) error {
	streamed := time.Since(x.start)
	for i, s := range x.sinks {
		t0 := time.Now()
		st, err := s.Publish(ctx)
		if err != nil {
			return failed(KindExtract, fmt.Errorf("sink %s: publish: %w", x.types[i], err))
		}
		x.done = i + 1
		d := streamed + time.Since(t0)
		x.sum.Sinks = append(x.sum.Sinks, SinkSummary{Type: x.types[i], Rows: st.Rows, Bytes: st.Bytes, Files: st.Files, Rejected: st.Rejected,
			Duration: d, RowsPerSec: rate(st.Rows, d)})
	}
	return nil
}

// abortUnpublished aborts the sinks that were opened (or created) and
// not published, even when ctx is cancelled.
func (x *unit) abortUnpublished(ctx context.Context) {
	for _, s := range x.sinks[x.done:] {
		_ = s.Abort(context.WithoutCancel(ctx))
	}
}
