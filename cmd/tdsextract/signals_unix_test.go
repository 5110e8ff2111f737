//go:build unix

package main

import (
	"bytes"
	"strings"
	"syscall"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// Ctrl-C (SIGINT) or SIGTERM during an export cancels it: the sinks abort
// (nothing published, no temporary file left) and the process exits
// 128+signal (130, 143), not 4 as a failed extract would.
func TestInterruptedExport(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		var stderr bytes.Buffer
		_, cmd, _ := startStalledExport(t, dir, &stderr)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != 128+int(sig) || strings.Count(stderr.String(), "interrupted (") != 1 || !strings.Contains(stderr.String(), "): nothing was published") {
			t.Errorf("%v: exit %d (%v), want %d\n%s", sig, code, err, 128+int(sig), stderr.String())
		}
		if got := sinktest.DirEntries(t, dir); len(got) != 0 {
			t.Errorf("%v: left %v", sig, got)
		}
	}
}
