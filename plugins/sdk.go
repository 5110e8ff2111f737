package plugins

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/tdsextract/tdsextract/sinks"
)

// ProtocolVersion is the version of the host-plugin protocol this package
// speaks, negotiated in go-plugin's handshake. A host and a plugin built
// with different versions refuse each other with an error that names both.
const ProtocolVersion = 1

// Sink is what a plugin implements: one instance receives one extract.
// The host calls, from one goroutine and always in this order:
//
//	Open(ctx, req)             the Arrow schema and the options, once
//	WriteBatch(ctx, rec) ...   every batch of rows, in order
//	Prepare(ctx)               if the Sink is also a Preparer
//	Publish(ctx)               on success: make the output visible
//	Abort(ctx)                 instead of Publish on failure (also after a
//	                           failed Open or Publish): remove everything partial
//
// A plugin never publishes partial output: what WriteBatch writes stays
// invisible (a temporary file, an open transaction) until Publish. A
// plugin that crashes or hangs gets no Abort (its process is ended), so
// what it leaves must already be invisible: a temporary file name
// (OutputFile), an uncommitted transaction.
type Sink interface {
	Open(ctx context.Context, req OpenRequest) error
	// WriteBatch receives the next batch. rec and every buffer of its
	// arrays are valid only until WriteBatch returns: they lie in memory
	// the host reuses for a later batch as soon as the call returns. Copy
	// what must outlive the call (array.Concatenate, or a builder). An
	// error fails the extract; the host then calls Abort.
	WriteBatch(ctx context.Context, rec arrow.RecordBatch) error
	Publish(ctx context.Context) (Stats, error)
	Abort(ctx context.Context) error
}

// Preparer is implemented by sinks with work that can fail after the last
// batch: flushing, closing a file, checking a constraint. The host
// prepares every sink of an extract before it publishes any, so a plugin
// that fails here leaves the extract's other sinks unpublished too.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// OpenRequest starts an extract.
type OpenRequest struct {
	// Schema has one field per source column (plus a companion field after
	// each datetimeoffset and sql_variant column when the host's
	// offset_column and variant_type_column options are on). Field
	// metadata carries the SQL Server type (MetaType, MetaKind, ...).
	Schema *arrow.Schema
	// Options are the sink's options from the job, resolved against
	// Plugin.Options: every declared option present (given or defaulted)
	// in its Go type (see sinks.Spec.Resolve).
	Options map[string]any
	// Extract names the extract: derive file or table names from it.
	Extract sinks.ExtractInfo
}

// Stats is what a plugin reports when it publishes.
type Stats = sinks.Stats

// Plugin declares a plugin: what `tdsextract sinks` shows and how to make
// its sinks.
type Plugin struct {
	// Name is the plugin's name, lower case (e.g. "jsonl").
	Name string
	// Description is one line on what the plugin writes.
	Description string
	// Options declares every option the plugin takes. The host checks a
	// job's options against it before anything runs; unknown options are
	// an error.
	Options sinks.Spec
	// New returns a sink for one extract.
	New func() Sink
}

func (p *Plugin) validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("plugins: Plugin.Name is empty"))
	}
	if p.New == nil {
		errs = append(errs, errors.New("plugins: Plugin.New is nil"))
	}
	seen := map[string]bool{}
	for _, o := range p.Options {
		if o.Name == "" || seen[o.Name] {
			errs = append(errs, fmt.Errorf("plugins: option %q is empty or declared twice", o.Name))
		}
		seen[o.Name] = true
		if o.Type.String() == "unknown" {
			errs = append(errs, fmt.Errorf("plugins: option %q has no type", o.Name))
		}
	}
	return errors.Join(errs...)
}
