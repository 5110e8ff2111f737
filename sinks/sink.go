package sinks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/tdsextract/tdsextract/decode"
)

// Sink is a destination for the rows of one extract. The engine streams
// every result set of the extract through the decoder straight into the
// sink's CellSink methods, so each value is written once into memory the
// sink owns (docs/ARCHITECTURE.md: the contract and its slice lifetimes).
//
// Lifecycle, always in this order and from one goroutine:
//
//	Open(ctx, info)
//	for each result set: Columns(...), then per row the cell calls and EndRow
//	Publish(ctx) on success: publish everything (rename, COMMIT), return stats
//	Abort(ctx)   on failure instead of Publish: remove everything partial
//
// Abort may also be called after a failed Publish, and must be idempotent.
// A sink never publishes partial output: files appear under their final
// names only in Publish.
//
// Open may return an error wrapping ErrSkip: the sink's output exists and
// it is configured to leave it alone (if_exists: skip). The engine then
// neither feeds nor publishes nor aborts that sink, reports it as skipped,
// and does not run the extract's query when every sink skips.
type Sink interface {
	decode.CellSink
	Open(ctx context.Context, info ExtractInfo) error
	Publish(ctx context.Context) (Stats, error)
	Abort(ctx context.Context) error
}

// ErrSkip is wrapped by an Open error that asks the engine to skip the
// sink for this extract (see Sink); the error's text says why.
var ErrSkip = errors.New("skipped")

// ExtractInfo describes the extract a sink is opened for.
type ExtractInfo struct {
	// Name is the extract's name, unique in a job; sinks derive file and
	// table names from it unless configured otherwise.
	Name string
	// Schema and Table name the source table when the extract is a table,
	// empty for a query.
	Schema, Table string
	// EstimatedRows is the source's row count when known, else -1.
	EstimatedRows int64
	// Part and Parts number the extract's key-range part this sink writes
	// (0 of 1 for an extract that is not partitioned). Every part gets its
	// own sinks; file sinks put the part in their file names ("{part}" in
	// a path, else ".part-0001" before the extension).
	Part, Parts int
	// RunDir is the directory of the run summary (the job's summary_file),
	// where sinks put side files such as rejected rows; empty when the job
	// writes no summary file (then the working directory).
	RunDir string
}

// Stats is what a sink reports when it publishes.
type Stats struct {
	Rows  int64
	Bytes int64    // bytes written to the destination (compressed size for files)
	Files []string // final paths or object names published, if any
	// Rejected counts rows the sink refused and set aside (a reject file
	// among Files) instead of failing.
	Rejected int64
}

// ConnectError is returned by a sink whose destination cannot be reached or
// refuses the login (a database server, an object store): the job layer
// reports it as a connection failure (the CLI's exit code 3), not as a
// failed export. Err never holds a secret.
type ConnectError struct {
	Sink string
	Err  error
}

func (e *ConnectError) Error() string { return e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

// ColumnMapping is how a sink maps one source column, for `inspect`.
type ColumnMapping struct {
	Target string // the destination type, e.g. "DECIMAL(38,10)" or "timestamptz"
	Lossy  bool
	Why    string // when Lossy: what is lost and how to avoid it
	// Note is something the user should know that loses nothing: what the
	// output of these columns costs (memory, say) and which option changes
	// it. A sink puts a note about the whole table on its first column;
	// inspect prints every note under the table.
	Note string
}

// Mapper is implemented by sinks that can describe their type mapping
// before anything runs: inspect's pre-flight report, which lists every lossy
// column before a run loses anything.
type Mapper interface {
	Mapping(cols []decode.Column) []ColumnMapping
}

// Factory creates sinks of one kind from their options. Options are the
// sink's section of the job configuration as plain values (decoded from
// YAML by the CLI, or given as --set on the command line).
type Factory struct {
	Name string
	// Description says in one line what the sink writes, for
	// `tdsextract sinks`.
	Description string
	// Options declares every option the sink takes; resolution, defaults,
	// `tdsextract sinks NAME` and the documentation's option tables come
	// from it. A factory without Options checks its options in Validate
	// alone.
	Options Spec
	// New creates a sink from options, given as the job has them or as
	// Resolve returns them (resolving resolved options changes nothing).
	New func(options map[string]any) (Sink, error)
	// Validate checks what the spec cannot, one option against another,
	// on options already resolved against Options (as given when there is
	// no spec). Optional. Its errors should be *OptionError naming a key.
	Validate func(options map[string]any) error
	// Mapping describes how a sink created with options would map cols,
	// for `inspect`, without creating one. Optional.
	Mapping func(options map[string]any, cols []decode.Column) ([]ColumnMapping, error)
	// ReadsSpatial says the sink takes geography and geometry values in
	// SQL Server's own serialization, SRID included, and converts them
	// itself: a table extract whose sinks all say so selects those columns
	// as they are rather than through STAsBinary() (WKB without the SRID).
	ReadsSpatial bool
	// Combine, when set, is called once every part of an extract that ran
	// in several parts (info.Parts > 1) has published: the sink's parts
	// were published somewhere staged and Combine makes them visible
	// together, all or nothing (the PostgreSQL sink moves the parts'
	// staging tables into the target table in one transaction). It must
	// be idempotent: after a crash it is called again, and a Combine that
	// finds its work done returns success. Sinks without it publish each
	// part's output as the part finishes (file sinks: one file set each).
	Combine func(ctx context.Context, options map[string]any, info ExtractInfo) (Stats, error)
}

// Resolve checks options and returns them resolved: against Options
// (unknown keys, types, allowed values, ranges; defaults filled in), then
// by Validate. Every problem is reported, joined, each an *OptionError
// naming its key where it has one.
func (f Factory) Resolve(options map[string]any) (map[string]any, error) {
	resolved := options
	if f.Options != nil {
		var err error
		if resolved, err = f.Options.Resolve(options); err != nil {
			return nil, err
		}
	}
	if f.Validate != nil {
		if err := f.Validate(resolved); err != nil {
			return nil, err
		}
	}
	if resolved == nil {
		resolved = map[string]any{}
	}
	return resolved, nil
}

// Registry maps sink names to factories. The zero value is not usable; use
// NewRegistry. There is no global registry: the CLI builds one from the
// sink packages' Factory functions and hands it to the job layer, and
// tests build their own.
type Registry struct {
	mu        sync.RWMutex
	factories map[string]Factory
}

// NewRegistry returns a registry holding factories; a duplicate name is
// an error.
func NewRegistry(factories ...Factory) (*Registry, error) {
	r := &Registry{factories: map[string]Factory{}}
	for _, f := range factories {
		if err := r.Register(f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds f. Registering a name twice is an error.
func (r *Registry) Register(f Factory) error {
	if f.Name == "" || f.New == nil {
		return fmt.Errorf("sinks: sink factory needs a name and a New function")
	}
	if err := f.Options.Check(); err != nil {
		return fmt.Errorf("sinks: sink %q: %w", f.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.factories[f.Name]; dup {
		return fmt.Errorf("sinks: sink %q registered twice", f.Name)
	}
	r.factories[f.Name] = f
	return nil
}

// Lookup returns the factory registered under name.
func (r *Registry) Lookup(name string) (Factory, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.factories[name]
	return f, ok
}

// Names lists the registered sink names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.factories))
	for n := range r.factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preparer is implemented by sinks with work that can fail after the last
// row short of publishing (a plugin flushing its last batch and closing
// its output). The engine prepares every sink of an extract before it
// publishes any, so such a failure leaves every sink unpublished; Publish
// then only makes output visible.
type Preparer interface {
	Prepare(ctx context.Context) error
}
