package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// The units of a job run as shares (as a scheduler's array tasks would,
// the index from the flag or from the scheduler's environment), then
// commit writes the manifest, which matches a single-process run.
func TestSharesThenCommit(t *testing.T) {
	srv := startSampleServer(t, tdsserver.Config{DB: sampledb.New(sampledb.Config{Seed: 4, Rows: map[string]int64{"dbo.poc48": 3000}})})
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	for _, k := range append(append([]string{}, schedulerIndexEnv...), runIDEnv...) {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	job := partitionedJob(t, srv.Addr(), dir, "shares")

	code, out, errOut := runCLI(t, "plan", job)
	if code != 0 || !strings.Contains(out, "poc48#0008/0008") || !strings.Contains(out, "8 units") {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "[id] >= ") {
		t.Errorf("plan does not show the bounds:\n%s", out)
	}

	if code, _, errOut := runCLI(t, "run", job, "--unit", "0/3"); code != exitConfig || !strings.Contains(errOut, "--run-id") {
		t.Errorf("a share without a run id: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "run", job, "--unit", "3", "--run-id", "r1"); code != exitConfig || !strings.Contains(errOut, "JOB_COMPLETION_INDEX") {
		t.Errorf("--unit N without an index: exit %d %s", code, errOut)
	}
	manifest := filepath.Join(dir, "out", "manifest.json")
	for i, share := range []string{"0/3", "1/3"} {
		code, out, errOut := runCLI(t, "--quiet", "run", job, "--unit", share, "--run-id", "r1")
		if code != 0 {
			t.Fatalf("share %s: exit %d\n%s%s", share, code, out, errOut)
		}
		if _, err := os.Stat(manifest); err == nil {
			t.Fatalf("a manifest after %d of 3 shares", i+1)
		}
	}
	code, _, errOut = runCLI(t, "commit", job, "--run-id", "r1")
	if code != exitIncomplete || !strings.Contains(errOut, "2 unit(s) not finished") {
		t.Fatalf("early commit: exit %d %s", code, errOut)
	}
	// The last share, its index from a Kubernetes Indexed Job's environment
	// and its run id from TDSEXTRACT_RUN_ID, finishes the run and writes
	// the manifest.
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	t.Setenv("TDSEXTRACT_RUN_ID", "r1")
	if code, out, errOut := runCLI(t, "run", job, "--unit", "3"); code != 0 || !strings.Contains(out, "manifest ") {
		t.Fatalf("last share: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "commit", job); code != 0 || !strings.Contains(out, manifest) {
		t.Fatalf("commit: exit %d\n%s%s", code, out, errOut)
	}
	shared := readManifest(t, manifest)
	if _, err := os.Stat(filepath.Join(dir, "state", "r1", "plan.json")); err != nil {
		t.Errorf("the run's state is not in its run id's directory: %v", err)
	}

	os.Unsetenv("JOB_COMPLETION_INDEX")
	os.Unsetenv("TDSEXTRACT_RUN_ID")
	dir2 := t.TempDir()
	if code, out, errOut := runCLI(t, "--quiet", "run", partitionedJob(t, srv.Addr(), dir2, "shares")); code != 0 {
		t.Fatalf("single run: exit %d\n%s%s", code, out, errOut)
	}
	single := readManifest(t, filepath.Join(dir2, "out", "manifest.json"))
	if shared.Extracts[0].Checksum != single.Extracts[0].Checksum || shared.Extracts[0].Rows != 3000 || len(shared.Units) != 8 {
		t.Errorf("shared %+v, single %+v", shared.Extracts[0], single.Extracts[0])
	}
	if a, b := csvRows(t, shared), csvRows(t, single); !slices.Equal(a, b) {
		t.Error("the shares' output differs from a single run's")
	}
}
