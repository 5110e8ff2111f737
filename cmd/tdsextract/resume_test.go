package main

import (
	"encoding/json"
	"fmt"
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

// partitionedJob writes a job file exporting dbo.poc48 in 8 key ranges,
// one at a time, to CSV under out, with its state in state.
func partitionedJob(t *testing.T, addr, dir, name string) string {
	t.Helper()
	job := fmt.Sprintf(`name: %s
source:
  connection: sqlserver://sa@%s?database=sample&encrypt=disable
  password_env: TEST_PW
  timeout: 2m
parallel: 1
state_dir: %s
manifest: %s
extracts:
  - table: dbo.poc48
    partition: {column: id, count: 8}
    sinks:
      - type: csv
        options:
          path: %s/
`, name, addr, filepath.Join(dir, "state"), filepath.Join(dir, "out", "manifest.json"), filepath.Join(dir, "out"))
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readManifestFile(t *testing.T, path string) engine.Manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m engine.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// csvRows reads the data lines of the manifest's files, sorted.
func csvRows(t *testing.T, m engine.Manifest) []string {
	t.Helper()
	return sinktest.CSVDataLines(t, m.Files()...)
}

// A partitioned export killed with SIGKILL part way leaves finished parts,
// checkpoints and temporaries but no manifest; the same run started again
// does only the missing parts, and its output equals an uninterrupted
// run's, checksum of every value included.
func TestKilledPartitionedRunResumes(t *testing.T) {
	const rows = 20000
	srv, err := tdsserver.Start(tdsserver.Config{
		Addr: "127.0.0.1:0",
		DB:   sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"dbo.poc48": rows}}),
		// Slow enough to be killed in the middle.
		Faults: tdsserver.Faults{TrickleBytesPerSec: 4 << 20, Table: "poc48"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	dir := t.TempDir()
	job := partitionedJob(t, srv.Addr(), dir, "killed")

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCLI$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TDSEXTRACT_ARGS="+strings.Join([]string{"--quiet", "run", job}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Wait for two finished parts, then stall the next one and kill the
	// process while it writes.
	unitsDir := filepath.Join(dir, "state", "units")
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("timed out waiting for %s", what)
	}
	waitFor("two finished parts", func() bool { m, _ := filepath.Glob(filepath.Join(unitsDir, "*.json")); return len(m) >= 2 })
	if err := srv.SetFaults(tdsserver.Faults{StallAfterRows: 100, Stall: time.Minute, Table: "poc48"}); err != nil {
		t.Fatal(err)
	}
	waitFor("a part in progress", func() bool { m, _ := filepath.Glob(filepath.Join(dir, "out", ".*.tmp-*")); return len(m) > 0 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	done, _ := filepath.Glob(filepath.Join(unitsDir, "*.json"))
	if len(done) < 2 || len(done) >= 8 {
		t.Fatalf("killed after %d finished parts, want some but not all", len(done))
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "manifest.json")); err == nil {
		t.Fatal("a killed run left a manifest")
	}

	// The same command again, the server healthy: only the missing parts.
	if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	sent := srv.Stats().RowsSent
	code, out, errOut := runCLI(t, "run", job)
	if code != 0 {
		t.Fatalf("resumed run: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "finished by an earlier run") || !strings.Contains(out, "manifest ") {
		t.Errorf("summary of the resumed run:\n%s", out)
	}
	if n := srv.Stats().RowsSent - sent; n >= rows {
		t.Errorf("the resumed run read %d rows again, the table has %d", n, rows)
	}
	resumed := readManifestFile(t, filepath.Join(dir, "out", "manifest.json"))
	if left, _ := filepath.Glob(filepath.Join(dir, "out", ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	// The same export uninterrupted, elsewhere.
	dir2 := t.TempDir()
	code, out, errOut = runCLI(t, "--quiet", "run", partitionedJob(t, srv.Addr(), dir2, "whole"))
	if code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s%s", code, out, errOut)
	}
	whole := readManifestFile(t, filepath.Join(dir2, "out", "manifest.json"))
	if resumed.Extracts[0].Checksum != whole.Extracts[0].Checksum || resumed.Extracts[0].Rows != rows || whole.Extracts[0].Rows != rows {
		t.Errorf("resumed %+v\nuninterrupted %+v", resumed.Extracts[0], whole.Extracts[0])
	}
	a, b := csvRows(t, resumed), csvRows(t, whole)
	if len(a) != rows || !slices.Equal(a, b) {
		t.Errorf("resumed output: %d rows, uninterrupted %d, equal %v", len(a), len(b), slices.Equal(a, b))
	}
	if len(slices.Compact(slices.Clone(a))) != rows {
		t.Error("a row was written twice")
	}
}
