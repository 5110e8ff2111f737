//go:build unix

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// A real scheduler runs a job's units across processes: the test starts a
// one-node Slurm cluster (munged, slurmctld and slurmd from Debian's munge
// and slurm-wlm, all on 127.0.0.1, state in a temporary directory) and
// submits `run --unit 4` as a job array of 4 tasks, each taking its share
// from SLURM_ARRAY_TASK_ID and the run id from SLURM_ARRAY_JOB_ID. The
// manifest the last task writes matches a single-process run's.
func TestSlurmArrayRunsShares(t *testing.T) {
	var missing []string
	for _, b := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		t.Skipf("Slurm is not installed (no %s): apt-get install slurm-wlm munge", strings.Join(missing, ", "))
	}
	dir := t.TempDir()
	for _, d := range []string{"run", "log", "state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(dir, "run", "munge.sock")
	key := filepath.Join(dir, "munge.key")
	if out, err := exec.Command("mungekey", "--create", "--keyfile="+key, "--force").CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v\n%s", err, out)
	}
	start := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		logf, err := os.Create(filepath.Join(dir, "log", name+".out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Env = append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = logf.Close() })
	}
	start("munged", "-F", "-f", "--socket="+sock, "--key-file="+key, "--log-file="+filepath.Join(dir, "log", "munged.log"),
		"--pid-file="+filepath.Join(dir, "run", "munged.pid"), "--seed-file="+filepath.Join(dir, "run", "munged.seed"))
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	conf := fmt.Sprintf(`ClusterName=tdsx
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
SlurmUser=%s
SlurmdUser=%s
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MpiDefault=none
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
`, port(), port(), sock, u.Username, u.Username, filepath.Join(dir, "state"), filepath.Join(dir, "spool"),
		filepath.Join(dir, "run", "slurmctld.pid"), filepath.Join(dir, "run", "slurmd.pid"),
		filepath.Join(dir, "log", "slurmctld.log"), filepath.Join(dir, "log", "slurmd.log"))
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", filepath.Join(dir, "slurm.conf"))
	// munged needs a moment to create its socket.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("munged did not start")
		}
	}
	start("slurmctld", "-D", "-f", filepath.Join(dir, "slurm.conf"))
	start("slurmd", "-D", "-f", filepath.Join(dir, "slurm.conf"))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("sinfo", "-h", "-o", "%T").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "log", "slurmctld.log"))
			t.Fatalf("the Slurm node did not come up (sinfo: %q)\n%s", out, log)
		}
	}

	srv := startSampleServer(t, tdsserver.Config{DB: sampledb.New(sampledb.Config{Seed: 6, Rows: map[string]int64{"dbo.poc48": 4000}})})
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	work := filepath.Join(dir, "work")
	job := partitionedJob(t, srv.Addr(), mkdir(t, work), "slurm")
	// Each task runs this test binary as the CLI (TestHelperCLI).
	script := filepath.Join(dir, "task.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
TDSEXTRACT_ARGS=$(printf 'run\037%%s\037--unit\0374' %q)
export TDSEXTRACT_ARGS
exec %q -test.run='^TestHelperCLI$' -test.count=1
`, job, os.Args[0])), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sbatch", "--wait", "--array=0-3", "--parsable", "--output="+filepath.Join(dir, "log", "task-%a.txt"), script).CombinedOutput()
	if err != nil {
		var logs []string
		for i := range 4 {
			b, _ := os.ReadFile(filepath.Join(dir, "log", fmt.Sprintf("task-%d.txt", i)))
			logs = append(logs, string(b))
		}
		t.Fatalf("sbatch: %v\n%s\n%s", err, out, strings.Join(logs, "\n"))
	}
	jobID := strings.TrimSpace(strings.Split(string(out), "\n")[0])
	shared := readManifest(t, filepath.Join(work, "out", "manifest.json"))
	if shared.Run == "" || len(shared.Units) != 8 {
		t.Fatalf("manifest %+v", shared)
	}
	if _, err := os.Stat(filepath.Join(work, "state", jobID, "plan.json")); err != nil {
		t.Errorf("the tasks did not share the run of Slurm job %s: %v", jobID, err)
	}
	if code, out, errOut := runCLI(t, "commit", job, "--run-id", jobID); code != 0 {
		t.Errorf("commit: exit %d\n%s%s", code, out, errOut)
	}

	single := filepath.Join(dir, "single")
	if code, out, errOut := runCLI(t, "--quiet", "run", partitionedJob(t, srv.Addr(), mkdir(t, single), "slurm")); code != 0 {
		t.Fatalf("single run: exit %d\n%s%s", code, out, errOut)
	}
	one := readManifest(t, filepath.Join(single, "out", "manifest.json"))
	if shared.Extracts[0].Checksum != one.Extracts[0].Checksum || shared.Extracts[0].Rows != 4000 {
		t.Errorf("Slurm array %+v, single process %+v", shared.Extracts[0], one.Extracts[0])
	}
	if a, b := csvRows(t, shared), csvRows(t, one); !slices.Equal(a, b) {
		t.Error("the array's output differs from a single process's")
	}
}

func mkdir(t *testing.T, d string) string {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
