//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// Ctrl-C (SIGINT) or SIGTERM during an export cancels it: the sinks abort
// (nothing published, no temporary file left) and the process exits
// 128+signal (130, 143), not 4 as a failed extract would.
func TestInterruptedExport(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		srv, err := tdsserver.Start(tdsserver.Config{
			Addr:   "127.0.0.1:0",
			DB:     sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.poc48": 3000}}),
			Faults: tdsserver.Faults{StallAfterRows: 1500, Stall: time.Minute, Table: "poc48"},
		})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		t.Setenv("TEST_PW", tdsserver.DefaultPassword)
		args := []string{"--log-level", "warn", "export", "--source", "sqlserver://sa@" + srv.Addr() + "?database=sample&encrypt=disable",
			"--password-env", "TEST_PW", "--table", "dbo.poc48", "--to", "csv", "--out", dir}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCLI$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TDSEXTRACT_ARGS="+strings.Join(args, "\x1f"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var left []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if left, _ = filepath.Glob(filepath.Join(dir, ".poc48.csv.tmp-*")); len(left) == 1 && srv.Stats().RowsSent >= 1500 {
				break
			}
		}
		if len(left) != 1 {
			_ = cmd.Process.Kill()
			t.Fatalf("the export did not start writing: %v", sinktest.DirEntries(t, dir))
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != 128+int(sig) || strings.Count(stderr.String(), "interrupted (") != 1 || !strings.Contains(stderr.String(), "): nothing was published") {
			t.Errorf("%v: exit %d (%v), want %d\n%s", sig, code, err, 128+int(sig), stderr.String())
		}
		if got := sinktest.DirEntries(t, dir); len(got) != 0 {
			t.Errorf("%v: left %v", sig, got)
		}
		srv.Close()
	}
}
