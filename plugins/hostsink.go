package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

// conn is how a host sink reaches its plugin: a plugin process over
// go-plugin (remote.go) or a plugin linked into the host (inprocess.go).
type conn interface {
	// start prepares the plugin (a process starts) before the query runs.
	start(ctx context.Context, info sinks.ExtractInfo) error
	// open gives the plugin the schema and returns the ring the batches
	// travel through.
	open(ctx context.Context, schemaIPC []byte, info sinks.ExtractInfo) (slotRing, error)
	// drain waits until the plugin has taken every batch sent.
	drain(ctx context.Context) error
	prepare(ctx context.Context) error
	publish(ctx context.Context) (sinks.Stats, error)
	abort(ctx context.Context) error
	// close ends the plugin (a process is stopped) and frees the ring.
	close()
	// name names the plugin in errors.
	name() string
}

// hostSink is the sinks.Sink of a plugin: an ordinary sink for the
// engine whose cell calls lay every value, once, into the Arrow buffers
// of a batch (batch.go), and whose batches go to the plugin.
type hostSink struct {
	opts hostOptions
	conn conn
	info sinks.ExtractInfo
	ctx  context.Context // the extract's, for waits inside cell calls

	plans     []fieldPlan
	f         []fieldBuf
	colf      []int // column -> its field
	cols      []decode.Column
	batchRows int
	header    int
	ring      slotRing

	slot  int
	mem   []byte
	cap   int // rows this batch can hold
	row   int // the row being written
	spill bool

	meta    metaBuilder
	stage   []byte
	staged  []stagedField
	minData []int

	rows    int64 // rows handed on
	batches int64
	moved   int64 // rows moved to the next batch because a value did not fit
	// slack is the room a batch leaves for variable-width values beyond
	// what earlier batches took per row: rows whose values are longer than
	// that move to the next batch (tests set less than 1 to make them common).
	slack float64
	err   error

	// sql_variant: the base type of the value that follows, and its text.
	vbin   bool
	vscale uint8
	vbuf   []byte
	vhex   []byte
	vnames map[variantKey]string

	started, opened, prepared, done bool
}

type variantKey struct {
	typ         byte
	size        uint32
	prec, scale uint8
}

var (
	_ sinks.Sink       = (*hostSink)(nil)
	_ decode.BytesSink = (*hostSink)(nil)
	_ sinks.Mapper     = (*hostSink)(nil)
	_ sinks.Preparer   = (*hostSink)(nil)
)

func newHostSink(o hostOptions, c conn) *hostSink {
	return &hostSink{opts: o, conn: c, slot: -1, batchRows: o.batchRows, slack: 1.25}
}

// wrap names the plugin in an error, once.
func (s *hostSink) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PluginError
	if errors.As(err, &pe) {
		return err
	}
	return &PluginError{Plugin: s.conn.name(), Op: what, Err: err}
}

// PluginError is a failure of a plugin sink, naming the plugin.
type PluginError struct {
	Plugin string // the plugin's name and executable
	Op     string // what the host was doing: start, open, writing batches, prepare, publish, abort, describe
	Err    error
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("plugin %s: %s: %v", e.Plugin, e.Op, e.Err)
}

func (e *PluginError) Unwrap() error { return e.Err }

// Open starts the plugin before the query runs, so a plugin that cannot
// start fails the extract before anything is read.
func (s *hostSink) Open(ctx context.Context, info sinks.ExtractInfo) error {
	if s.started {
		return errors.New("plugins: sink opened twice")
	}
	s.started, s.info, s.ctx = true, info, ctx
	return s.wrap("start", s.conn.start(ctx, info))
}

// Columns plans the Arrow schema from the first result set and opens the
// extract in the plugin; a later result set must have the same columns.
func (s *hostSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	if s.err != nil {
		return s.err
	}
	for i := range modes {
		modes[i] = decode.ModeValue
	}
	if s.opened {
		plans, err := planFields(cols, s.opts.schema)
		if err == nil && !samePlans(plans, s.plans) {
			err = fmt.Errorf("extract %q returned a second result set with other columns; give each query its own extract", s.info.Name)
		}
		if err != nil {
			s.fail(err)
		}
		return s.err
	}
	if err := s.openExtract(cols); err != nil {
		s.fail(s.wrap("open", err))
		return s.err
	}
	if err := s.start(); err != nil {
		s.fail(err)
	}
	return s.err
}

func samePlans(a, b []fieldPlan) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].field.Name != b[i].field.Name || !a[i].field.Equal(b[i].field) {
			return false
		}
	}
	return true
}

// openExtract plans the fields and their buffers and opens the extract in
// the plugin.
func (s *hostSink) openExtract(cols []decode.Column) error {
	if !s.started {
		return errors.New("plugins: Columns before Open")
	}
	plans, err := planFields(cols, s.opts.schema)
	if err != nil {
		return err
	}
	s.plans, s.cols = plans, append([]decode.Column(nil), cols...)
	s.f = make([]fieldBuf, len(plans))
	s.colf = make([]int, len(cols))
	s.staged = make([]stagedField, len(plans))
	s.minData = make([]int, len(plans))
	nodes, bufs := 0, 0
	for i := range plans {
		p := &plans[i]
		s.f[i] = fieldBuf{kind: p.kind, nullable: p.nullable, width: p.width, fixedLen: p.fixedLen, unit: p.unit,
			scale: cols[p.col].Type.Scale, aux: -1, est: p.est}
		nodes += p.nodes()
		bufs += p.buffers()
		if p.kind == wOffset || p.kind == wVarType {
			s.f[i-1].aux = i
		} else {
			s.colf[p.col] = i
		}
	}
	s.header = headerSize(nodes, bufs)
	s.meta.nodes = make([]ipcNode, 0, nodes)
	s.meta.buffers = make([]ipcBuffer, 0, bufs)
	schema, err := schemaIPC(buildSchema(plans, s.info))
	if err != nil {
		return err
	}
	s.ring, err = s.conn.open(s.ctx, schema, s.info)
	if err != nil {
		return err
	}
	s.opened = true
	return nil
}

// schemaIPC encodes a schema as an IPC stream holding only the schema
// message (and the end-of-stream marker).
func schemaIPC(schema *arrow.Schema) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("plugins: encoding the batch schema: %w", err)
	}
	return buf.Bytes(), nil
}

// Mapping describes the Arrow type of each column (for `inspect`).
func (s *hostSink) Mapping(cols []decode.Column) []sinks.ColumnMapping {
	return mapping(cols, s.opts.schema)
}

// Prepare hands on the last batch, waits until the plugin has taken every
// batch, and lets the plugin finish what can fail: after it, Publish only
// makes the output visible.
func (s *hostSink) Prepare(ctx context.Context) error {
	if s.done {
		return errors.New("plugins: sink already finished")
	}
	if s.prepared {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if !s.opened {
		// A batch with no result set (e.g. only statements): the plugin
		// still gets an extract, with an empty schema.
		if err := s.openExtract(nil); err != nil {
			return s.wrap("open", err)
		}
	}
	if err := s.flush(); err != nil {
		return s.wrap("writing batches", err)
	}
	if err := s.conn.drain(ctx); err != nil {
		return s.wrap("writing batches", err)
	}
	if err := s.conn.prepare(ctx); err != nil {
		return s.wrap("prepare", err)
	}
	s.prepared = true
	return nil
}

// Publish asks the plugin to publish, then ends it.
func (s *hostSink) Publish(ctx context.Context) (sinks.Stats, error) {
	if err := s.Prepare(ctx); err != nil {
		return sinks.Stats{}, err
	}
	st, err := s.conn.publish(ctx)
	if err != nil {
		return sinks.Stats{}, s.wrap("publish", err)
	}
	s.done = true
	s.conn.close()
	// The rows the plugin took: every one was sent and acknowledged.
	st.Rows = s.rows
	return st, nil
}

// Abort asks the plugin to remove everything partial, then ends it.
// Idempotent.
func (s *hostSink) Abort(ctx context.Context) error {
	if s.done {
		return nil
	}
	s.done = true
	defer s.conn.close()
	if !s.started {
		return nil
	}
	return s.wrap("abort", s.conn.abort(ctx))
}

// ProcessID is the process of a plugin sink once it is open, for
// measurements (its CPU time, its memory); 0 for a sink that is not a
// plugin process.
func ProcessID(s sinks.Sink) int {
	h, ok := s.(*hostSink)
	if !ok {
		return 0
	}
	if c, ok := h.conn.(*remoteConn); ok && c.proc != nil && c.proc.cmd != nil && c.proc.cmd.Process != nil {
		return c.proc.cmd.Process.Pid
	}
	return 0
}
