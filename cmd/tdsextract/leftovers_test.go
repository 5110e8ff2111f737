package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// TestHelperCLI is not a test: run as a child process with TDSEXTRACT_ARGS
// set, it runs the CLI with those arguments (separated by \x1f) and exits
// with its code, so a test can kill a real tdsextract process.
func TestHelperCLI(t *testing.T) {
	args := os.Getenv("TDSEXTRACT_ARGS")
	if args == "" {
		t.Skip("helper process only")
	}
	os.Exit(runMain(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// helperCLI is a command, not started, that runs the CLI with args in a
// child process (TestHelperCLI).
func helperCLI(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCLI$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TDSEXTRACT_ARGS="+strings.Join(args, "\x1f"))
	return cmd
}

// An export killed with SIGKILL leaves its hidden temporary file; the next
// run of the same output removes it and publishes a complete file, and
// nothing else is left.
func TestKilledExportLeavesNothingAfterTheNextRun(t *testing.T) {
	dir := t.TempDir()
	srv, cmd, args := startStalledExport(t, dir, nil)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := sinktest.DirEntries(t, dir); len(got) != 2 {
		t.Fatalf("after kill -9: %v, want the temporary and its owner file", got)
	}

	if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", code, out, errOut)
	}
	if got := sinktest.DirEntries(t, dir); !slices.Equal(got, []string{"poc48.csv"}) {
		t.Fatalf("after the rerun: %v, want only poc48.csv", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "poc48.csv"))
	if err != nil || strings.Count(string(b), "\n") != 3001 {
		t.Fatalf("poc48.csv: %d lines, %v", strings.Count(string(b), "\n"), err)
	}
}

// if_exists: skip leaves an existing output alone and does not run the
// extract's query; fail refuses with a message that says what to do.
func TestIfExistsSkipAndFail(t *testing.T) {
	srv := startServer(t, map[string]int64{"dbo.poc48": 2000})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	job := func(mode string) string {
		return writeFile(t, dir, "job-"+mode+".yaml", fmt.Sprintf(`name: t
source:
  connection: "sqlserver://sa@%s?database=sample&encrypt=disable"
  password_env: TEST_PW
extracts:
  - table: dbo.poc48
    sinks:
      - type: csv
        options:
          path: %s/
          if_exists: %s
`, srv.Addr(), out, mode))
	}
	if code, o, e := runCLI(t, "--log-level", "warn", "run", job("replace")); code != 0 {
		t.Fatalf("first run: %d\n%s%s", code, o, e)
	}
	first, _ := os.ReadFile(filepath.Join(out, "poc48.csv"))
	sent := srv.Stats().RowsSent

	sum := filepath.Join(dir, "summary.json")
	code, o, e := runCLI(t, "--log-level", "warn", "run", "--summary-json", sum, job("skip"))
	if code != 0 || !strings.Contains(o, "skipped: output "+filepath.Join(out, "poc48.csv")+" exists (if_exists: skip)") {
		t.Fatalf("skip: exit %d\n%s%s", code, o, e)
	}
	var s engine.Summary
	if b, err := os.ReadFile(sum); err != nil || json.Unmarshal(b, &s) != nil || len(s.Extracts) != 1 || len(s.Extracts[0].Sinks) != 1 || s.Extracts[0].Sinks[0].Skipped == "" {
		t.Fatalf("skip summary: %+v", s)
	}
	if d := srv.Stats().RowsSent - sent; d >= 2000 {
		t.Fatalf("skip still read the table (%d rows sent)", d)
	}

	code, o, e = runCLI(t, "--log-level", "warn", "run", job("fail"))
	if code != exitExtract || !strings.Contains(o+e, "if_exists: fail") {
		t.Fatalf("fail: exit %d\n%s%s", code, o, e)
	}
	if now, _ := os.ReadFile(filepath.Join(out, "poc48.csv")); string(now) != string(first) {
		t.Fatal("skip or fail changed the existing output")
	}
	if got := sinktest.DirEntries(t, out); !slices.Equal(got, []string{"poc48.csv"}) {
		t.Fatalf("left: %v", got)
	}
}

// startStalledExport starts, in a process of its own, an export of
// dbo.poc48 (3000 rows) into dir that the server stalls after 1500 rows,
// and waits until the export's temporary file is there; it returns the
// server, the process and the export's arguments.
func startStalledExport(t *testing.T, dir string, stderr io.Writer) (*tdsserver.Server, *exec.Cmd, []string) {
	t.Helper()
	srv := startSampleServer(t, tdsserver.Config{
		DB: sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.poc48": 3000}}),
		// The run stalls mid-table: killed or interrupted while it writes.
		Faults: tdsserver.Faults{StallAfterRows: 1500, Stall: time.Minute, Table: "poc48"},
	})
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	args := []string{"--log-level", "warn", "export", "--source", sourceURL(srv),
		"--password-env", "TEST_PW", "--table", "dbo.poc48", "--to", "csv", "--out", dir}
	cmd := helperCLI(args...)
	cmd.Stderr = stderr
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
		_ = cmd.Wait()
		t.Fatalf("the export did not start writing: %v", sinktest.DirEntries(t, dir))
	}
	return srv, cmd, args
}
