// Command arrowipc is a tdsextract sink plugin that writes each extract as
// an Apache Arrow IPC file (Feather v2, ".arrow") or stream
// (".arrows"): the batches exactly as they came, in one file that pandas,
// Polars, DuckDB, Spark and every Arrow library read without conversion.
// The schema keeps the SQL Server type of every column as field metadata
// (sqlserver.type, sqlserver.kind, ...), so a reader can rebuild exact
// destination types.
package main

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/tdsextract/tdsextract/plugins"
	"github.com/tdsextract/tdsextract/sinks"
)

func main() {
	plugins.Serve(plugins.Plugin{
		Name:        "arrowipc",
		Description: "Apache Arrow IPC files (Feather v2) or streams, batches as they came",
		Options: sinks.Spec{
			{Name: "path", Type: sinks.String, Default: "out/",
				Doc: `a directory (existing, or ending in "/") that gets "<extract>.arrow" (".arrows" for a stream), or a file name where {extract}, {schema} and {table} are replaced`},
			{Name: "format", Type: sinks.Enum, Values: []string{"file", "stream"}, Default: "file",
				Doc: "file: the IPC file format with its footer (random access; Feather v2); stream: the IPC stream format (readable while it is written, no footer)"},
			{Name: "compression", Type: sinks.Enum, Values: []string{"none", "zstd", "lz4"}, Default: "none",
				Doc: "buffer compression of the IPC format (Arrow 1.0+ readers decompress it)"},
		},
		New: func() plugins.Sink { return &sink{} },
	})
}

// writer is what the IPC file and stream writers share.
type writer interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

type sink struct {
	out  *plugins.OutputFile
	w    writer
	rows int64
}

func (s *sink) Open(_ context.Context, req plugins.OpenRequest) error {
	ext := ".arrow"
	if req.Options["format"] == "stream" {
		ext = ".arrows"
	}
	out, err := plugins.CreateOutput(plugins.OutputPath(req.Options["path"].(string), ext, req.Extract))
	if err != nil {
		return err
	}
	s.out = out
	opts := []ipc.Option{ipc.WithSchema(req.Schema)}
	switch req.Options["compression"] {
	case "zstd":
		opts = append(opts, ipc.WithZstd())
	case "lz4":
		opts = append(opts, ipc.WithLZ4())
	}
	if req.Options["format"] == "stream" {
		s.w = ipc.NewWriter(out.Buffered(), opts...)
		return nil
	}
	s.w, err = ipc.NewFileWriter(out.Buffered(), opts...)
	return err
}

// WriteBatch writes the batch out: its buffers are copied into the file
// before the call returns, as the batch's memory is only lent.
func (s *sink) WriteBatch(_ context.Context, rec arrow.RecordBatch) error {
	if err := s.w.Write(rec); err != nil {
		return fmt.Errorf("arrowipc: %w", err)
	}
	s.rows += rec.NumRows()
	return nil
}

// Prepare finishes the file (footer, end of stream) and syncs it.
func (s *sink) Prepare(context.Context) error {
	if err := s.w.Close(); err != nil {
		return err
	}
	return s.out.Sync()
}

func (s *sink) Publish(context.Context) (plugins.Stats, error) {
	return s.out.PublishStats(s.rows)
}

func (s *sink) Abort(context.Context) error { return s.out.Abort() }
