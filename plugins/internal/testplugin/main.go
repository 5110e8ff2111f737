// Command testplugin is a sink plugin for the plugin host's own tests:
// it fails on request (an error, a crash, a hang or an early exit, at a
// chosen point of the extract), and otherwise writes a small summary file
// under a temporary name that only Publish renames, so a test can tell
// that nothing of a failed extract was published.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/tdsextract/tdsextract/plugins"
	"github.com/tdsextract/tdsextract/sinks"
)

func main() {
	// A test names a file here to learn whether the process ever ran.
	if m := os.Getenv("TDSX_TESTPLUGIN_MARKER"); m != "" {
		f, err := os.OpenFile(m, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	plugins.Serve(plugins.Plugin{
		Name:        "testplugin",
		Description: "fails on request (for the host's tests)",
		Options: sinks.Spec{
			{Name: "path", Type: sinks.String, Default: "out/", Doc: "where the summary file goes"},
			{Name: "fail", Type: sinks.Enum, Values: []string{"none", "error", "crash", "hang", "exit"}, Default: "none", Doc: "how to fail"},
			{Name: "at", Type: sinks.Enum, Values: []string{"open", "batch", "prepare", "publish"}, Default: "batch", Doc: "when to fail"},
			{Name: "after_batches", Type: sinks.Int, Default: int64(1), Doc: "at batch: fail on this batch (1 = the first)"},
		},
		New: func() plugins.Sink { return &sink{} },
	})
}

type sink struct {
	fail, at string
	after    int64
	out      *plugins.OutputFile
	rows     int64
	batches  int64
}

// maybeFail fails as configured when the extract reaches point.
func (s *sink) maybeFail(point string) error {
	if s.fail == "none" || s.at != point || point == "batch" && s.batches != s.after {
		return nil
	}
	log.Printf("testplugin: failing (%s) at %s as asked", s.fail, point)
	switch s.fail {
	case "crash":
		panic("testplugin: crash at " + point)
	case "hang":
		for {
			time.Sleep(time.Hour)
		}
	case "exit":
		os.Exit(0)
	}
	return errors.New("testplugin: error at " + point + " as asked")
}

func (s *sink) Open(_ context.Context, req plugins.OpenRequest) error {
	s.fail, s.at, s.after = req.Options["fail"].(string), req.Options["at"].(string), req.Options["after_batches"].(int64)
	log.Printf("testplugin: opening extract %q with %d fields", req.Extract.Name, req.Schema.NumFields())
	out, err := plugins.CreateOutput(plugins.OutputPath(req.Options["path"].(string), ".summary", req.Extract))
	if err != nil {
		return err
	}
	s.out = out
	return s.maybeFail("open")
}

func (s *sink) WriteBatch(_ context.Context, rec arrow.RecordBatch) error {
	s.batches++
	s.rows += rec.NumRows()
	return s.maybeFail("batch")
}

func (s *sink) Prepare(context.Context) error {
	if err := s.maybeFail("prepare"); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.out, "rows %d batches %d\n", s.rows, s.batches); err != nil {
		return err
	}
	return s.out.Sync()
}

func (s *sink) Publish(context.Context) (plugins.Stats, error) {
	if err := s.maybeFail("publish"); err != nil {
		return plugins.Stats{}, err
	}
	if _, err := s.out.Publish(); err != nil {
		return plugins.Stats{}, err
	}
	return plugins.Stats{Rows: s.rows, Files: []string{s.out.Final}}, nil
}

func (s *sink) Abort(context.Context) error { return s.out.Abort() }
