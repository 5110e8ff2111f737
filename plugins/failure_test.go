package plugins

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/csv"
)

// startServer serves a small sample database over TDS on 127.0.0.1.
func startServer(t *testing.T) string {
	t.Helper()
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"dbo.poc48": 3000}})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	u := url.URL{Scheme: "sqlserver", User: url.UserPassword(tdsserver.DefaultUser, tdsserver.DefaultPassword), Host: srv.Addr(),
		RawQuery: "database=sample&encrypt=disable"}
	return u.String()
}

// runJob exports dbo.poc48 into the given sinks through the engine.
func runJob(t *testing.T, ctx context.Context, h *Host, conn string, sinkCfgs ...engine.SinkConfig) (*engine.Summary, error) {
	t.Helper()
	reg, err := sinks.NewRegistry(csv.Factory(), h.Factory())
	if err != nil {
		t.Fatal(err)
	}
	job := &engine.JobConfig{Name: "plugins", Source: engine.SourceConfig{Connection: secret.Secret(conn), Timeout: "1m"},
		Extracts: []engine.ExtractConfig{{Table: "dbo.poc48", Sinks: sinkCfgs}}}
	return (&engine.Runner{Registry: reg}).Run(ctx, job)
}

// published lists the files under dir that are not temporary: a plugin
// that crashed or hung could not remove its temporary file (it gets no
// Abort), but nothing may ever appear under a final name.
func published(t *testing.T, dir string) []string {
	var out []string
	for _, f := range sinktest.Files(dir) {
		if b := filepath.Base(f); !(strings.HasPrefix(b, ".") && strings.HasSuffix(b, ".tmp")) {
			out = append(out, f)
		}
	}
	return out
}

// A plugin that fails in any way fails the extract with an error that
// names it and says what happened, and no sink of the extract publishes
// anything, whole or partial: neither the CSV beside it nor the plugin.
func TestPluginFailuresPublishNothing(t *testing.T) {
	conn := startServer(t)
	cases := []struct {
		fail, at string
		timeout  string
		want     []string
	}{
		{"error", "open", "", []string{"testplugin: error at open as asked"}},
		{"error", "batch", "", []string{"batch 2: testplugin: error at batch as asked"}},
		{"error", "prepare", "", []string{"prepare: testplugin: error at prepare as asked"}},
		{"crash", "open", "", []string{"exited unexpectedly (exit status 2)", "panic: testplugin: crash at open"}},
		{"crash", "batch", "", []string{"exited unexpectedly (exit status 2)", "panic: testplugin: crash at batch"}},
		{"crash", "prepare", "", []string{"exited unexpectedly (exit status 2)", "panic: testplugin: crash at prepare"}},
		{"exit", "batch", "", []string{"exited unexpectedly (exit status 0)"}},
		{"hang", "batch", "2s", []string{"took no batch for 2s (the timeout option)"}},
		{"hang", "prepare", "2s", []string{"did not answer within 2s (the timeout option)"}},
	}
	for _, tc := range cases {
		t.Run(tc.fail+"_at_"+tc.at, func(t *testing.T) {
			h, lb := testHost(t)
			dir := t.TempDir()
			popts := map[string]any{"path": "testplugin", "batch_rows": 500,
				"options": map[string]any{"fail": tc.fail, "at": tc.at, "after_batches": 2, "path": filepath.Join(dir, "plugin") + "/"}}
			if tc.timeout != "" {
				popts["timeout"] = tc.timeout
			}
			start := time.Now()
			sum, err := runJob(t, context.Background(), h, conn,
				engine.SinkConfig{Type: "csv", Options: map[string]any{"path": filepath.Join(dir, "csv") + "/"}},
				engine.SinkConfig{Type: "plugin", Options: popts})
			if err == nil {
				t.Fatalf("the extract succeeded: %+v", sum)
			}
			msg := err.Error()
			t.Log(msg)
			for _, w := range append([]string{`plugin "testplugin" (` + bins.testplugin + ")"}, tc.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			var pe *PluginError
			if !errors.As(err, &pe) || pe.Plugin == "" {
				t.Errorf("no *PluginError in %v", err)
			}
			if left := published(t, dir); len(left) > 0 {
				t.Errorf("a failed extract published files: %v", left)
			}
			if left := sinktest.Files(dir); len(left) > 0 && tc.fail == "error" {
				t.Errorf("a plugin that failed with an error left files after Abort: %v", left)
			}
			if !strings.Contains(lb.String(), "plugin=testplugin") || !strings.Contains(lb.String(), "testplugin: failing ("+tc.fail+") at "+tc.at) {
				t.Errorf("the plugin's stderr is not in the host log with its name:\n%s", lb)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the failure took %v to report", d)
			}
		})
	}
}

// A plugin that fails in Publish, listed first, stops the extract before
// the CSV after it publishes. (Publishing is the one step a sink cannot
// take back: the engine prepares every sink first so that, short of
// Publish itself, a failure leaves every output unpublished.)
func TestPluginPublishFailureBeforeOthers(t *testing.T) {
	conn := startServer(t)
	h, _ := testHost(t)
	dir := t.TempDir()
	_, err := runJob(t, context.Background(), h, conn,
		engine.SinkConfig{Type: "plugin", Options: map[string]any{"path": "testplugin",
			"options": map[string]any{"fail": "error", "at": "publish", "path": filepath.Join(dir, "plugin") + "/"}}},
		engine.SinkConfig{Type: "csv", Options: map[string]any{"path": filepath.Join(dir, "csv") + "/"}})
	if err == nil || !strings.Contains(err.Error(), "testplugin: error at publish as asked") {
		t.Fatalf("error: %v", err)
	}
	if left := sinktest.Files(dir); len(left) > 0 {
		t.Errorf("a failed extract left files: %v", left)
	}
}

// A plugin that hangs with no plugin timeout is bounded by the extract's
// own deadline (its context).
func TestPluginHangBoundedByExtractDeadline(t *testing.T) {
	conn := startServer(t)
	h, _ := testHost(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := runJob(t, ctx, h, conn, engine.SinkConfig{Type: "plugin", Options: map[string]any{"path": "testplugin", "timeout": "0s",
		"batch_rows": 500, "options": map[string]any{"fail": "hang", "at": "batch", "path": dir + "/"}}})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error: %v", err)
	}
}

// The job succeeds with both sinks when the plugin does not fail, and the
// plugin's summary (published under its final name) counts every row.
func TestPluginWithCSV(t *testing.T) {
	conn := startServer(t)
	h, _ := testHost(t)
	dir := t.TempDir()
	sum, err := runJob(t, context.Background(), h, conn,
		engine.SinkConfig{Type: "csv", Options: map[string]any{"path": filepath.Join(dir, "csv") + "/"}},
		engine.SinkConfig{Type: "plugin", Options: map[string]any{"path": bins.testplugin, "batch_rows": 500,
			"options": map[string]any{"path": filepath.Join(dir, "plugin") + "/"}}})
	if err != nil {
		t.Fatal(err)
	}
	ex := sum.Extracts[0]
	if len(ex.Sinks) != 2 || ex.Sinks[1].Rows != 3000 || ex.Sinks[1].Type != "plugin" {
		t.Fatalf("sinks: %+v", ex.Sinks)
	}
	b, err := os.ReadFile(ex.Sinks[1].Files[0])
	if err != nil || string(b) != "rows 3000 batches 6\n" {
		t.Fatalf("summary %q, %v", b, err)
	}
}
