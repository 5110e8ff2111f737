package plugins

import (
	"context"
	"errors"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

// InProcess returns a factory whose sinks run p inside the host process:
// the host lays the batches out exactly as for a plugin process, and the
// plugin's Sink reads each one, in the decoding goroutine, before the
// next is written. It is how a plugin is tested and measured without the
// process boundary, and how a Go plugin can be linked into a custom
// build. The factory takes the host options of a plugin sink, without
// path and sha256.
func InProcess(p Plugin) (sinks.Factory, error) {
	if err := p.validate(); err != nil {
		return sinks.Factory{}, err
	}
	spec := hostSpec(false)
	parse := func(options map[string]any) (hostOptions, sinks.Spec, error) {
		o, err := parseHostOptions(spec, options)
		if err != nil {
			return o, nil, err
		}
		if o.sha256 != "" {
			return o, nil, &sinks.OptionError{Key: "sha256", Msg: "an in-process plugin has no executable to check"}
		}
		_, err = p.Options.Resolve(o.plugin)
		if err != nil {
			err = prefixOptionErrors("options.", err)
		}
		return o, p.Options, err
	}
	return sinks.Factory{
		Name:        p.Name,
		Description: p.Description + " (in process)",
		Options:     spec,
		New: func(options map[string]any) (sinks.Sink, error) {
			o, _, err := parse(options)
			if err != nil {
				return nil, err
			}
			return newHostSink(o, &localConn{p: p, opts: o}), nil
		},
		Validate: func(options map[string]any) error {
			_, _, err := parse(options)
			return err
		},
		Mapping: func(options map[string]any, cols []decode.Column) ([]sinks.ColumnMapping, error) {
			o, _, err := parse(options)
			if err != nil {
				return nil, err
			}
			return mapping(cols, o.schema), nil
		},
	}, nil
}

// prefixSpec lists a plugin's own options under "options.", the way a
// job nests them, for `tdsextract sinks NAME` and the documentation.
func prefixSpec(prefix string, spec sinks.Spec) sinks.Spec {
	out := make(sinks.Spec, len(spec))
	for i, o := range spec {
		o.Name = prefix + o.Name
		out[i] = o
	}
	return out
}

// prefixOptionErrors names a plugin's option errors by their place in the
// job ("options.path").
func prefixOptionErrors(prefix string, err error) error {
	var errs []error
	var visit func(error)
	visit = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				visit(x)
			}
			return
		}
		var oe *sinks.OptionError
		if errors.As(e, &oe) {
			c := *oe
			c.Key = prefix + c.Key
			errs = append(errs, &c)
			return
		}
		errs = append(errs, e)
	}
	visit(err)
	return errors.Join(errs...)
}

// localConn runs the plugin's Sink in the host process.
type localConn struct {
	p      Plugin
	opts   hostOptions
	sink   Sink
	reader *batchReader
	ring   *heapRing
	ctx    context.Context
}

func (c *localConn) name() string { return c.p.Name + " (in process)" }

func (c *localConn) start(context.Context, sinks.ExtractInfo) error { return nil }

func (c *localConn) open(ctx context.Context, schema []byte, info sinks.ExtractInfo) (slotRing, error) {
	opts, err := c.p.Options.Resolve(c.opts.plugin)
	if err != nil {
		return nil, err
	}
	c.reader, err = newBatchReader(schema)
	if err != nil {
		return nil, err
	}
	c.ctx = ctx
	sink := c.p.New()
	if err := sink.Open(ctx, OpenRequest{Schema: c.reader.schema, Options: opts, Extract: info}); err != nil {
		_ = sink.Abort(ctx)
		return nil, err
	}
	c.sink = sink
	// One slot: each batch is read before the next is laid out.
	c.ring = newHeapRing(1, c.opts.batchBytes, func(_ int, msg []byte, _ int64) error {
		rec, err := c.reader.read(msg)
		if err != nil {
			return err
		}
		return c.sink.WriteBatch(c.ctx, rec)
	})
	return c.ring, nil
}

func (c *localConn) drain(context.Context) error { return nil }

func (c *localConn) prepare(ctx context.Context) error {
	if p, ok := c.sink.(Preparer); ok {
		return p.Prepare(ctx)
	}
	return nil
}

func (c *localConn) publish(ctx context.Context) (sinks.Stats, error) { return c.sink.Publish(ctx) }

func (c *localConn) abort(ctx context.Context) error {
	if c.sink == nil {
		return nil
	}
	return c.sink.Abort(ctx)
}

func (c *localConn) close() {
	if c.reader != nil {
		c.reader.close()
		c.reader = nil
	}
}

// heapRing is a ring of slots on the heap whose batches a function takes
// synchronously.
type heapRing struct {
	slots [][]byte
	free  []int
	take  func(slot int, msg []byte, rows int64) error
}

func newHeapRing(n, size int, take func(int, []byte, int64) error) *heapRing {
	r := &heapRing{take: take}
	for i := 0; i < n; i++ {
		r.slots = append(r.slots, make([]byte, size))
		r.free = append(r.free, i)
	}
	return r
}

func (r *heapRing) acquire() (int, []byte, error) {
	if len(r.free) == 0 {
		return 0, nil, errors.New("plugins: no free batch slot")
	}
	i := r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	return i, r.slots[i], nil
}

func (r *heapRing) release(slot int) { r.free = append(r.free, slot) }

func (r *heapRing) send(slot, n int, rows int64) error {
	err := r.take(slot, r.slots[slot][:n], rows)
	r.free = append(r.free, slot)
	return err
}
