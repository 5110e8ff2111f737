package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// TestHelperWriter is not a test: run as a child process (OUTFILE_HELPER
// set to a final path), it starts writing that output, prints its
// temporary's path and waits for its standard input to close; then it
// aborts cleanly. The parent kills some children with SIGKILL first.
func TestHelperWriter(t *testing.T) {
	final := os.Getenv("OUTFILE_HELPER")
	if final == "" {
		t.Skip("helper process only")
	}
	var s Set
	f, err := s.Create(final)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	_, _ = f.WriteString("partial output of a run that will be killed\n")
	fmt.Println(f.Tmp)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = s.Abort()
	os.Exit(0)
}

type writer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	tmp string
}

// startWriter runs TestHelperWriter in a child process writing final.
func startWriter(t *testing.T, final string) *writer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OUTFILE_HELPER="+final)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(strings.TrimSpace(line), filepath.Dir(final)) {
		t.Fatalf("helper: %q, %v", line, err)
	}
	return &writer{cmd: cmd, in: in, tmp: strings.TrimSpace(line)}
}

func (w *writer) kill(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// A run killed with SIGKILL leaves its temporary; the next run of the same
// output removes it, but never a live run's, nor another output's.
func TestOrphansOfAKilledRunAreRemoved(t *testing.T) {
	if !locksSupported {
		t.Skip("this platform has no flock, so orphans are never removed")
	}
	dir := t.TempDir()
	final := filepath.Join(dir, "orders.csv")
	killed := startWriter(t, final)
	killedPart := startWriter(t, filepath.Join(dir, "orders.0007.csv")) // a part of the same output
	live := startWriter(t, final)
	other := startWriter(t, filepath.Join(dir, "customers.csv"))
	killed.kill(t)
	killedPart.kill(t)
	other.kill(t)
	for _, w := range []*writer{killed, killedPart, live, other} {
		if !exists(w.tmp) {
			t.Fatalf("%s is gone before any cleanup", w.tmp)
		}
	}

	var s Set
	f, err := s.Create(final)
	if err != nil {
		t.Fatal(err)
	}
	if exists(killed.tmp) || exists(killedPart.tmp) {
		t.Errorf("the killed runs' temporaries are still there: %v", sinktest.DirEntries(t, dir))
	}
	if !exists(live.tmp) {
		t.Errorf("a live run's temporary was removed")
	}
	if !exists(other.tmp) {
		t.Errorf("another output's temporary was removed")
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(); err != nil {
		t.Fatal(err)
	}

	// The live run ends normally and removes its own temporary and owner file.
	live.in.Close()
	if err := live.cmd.Wait(); err != nil {
		t.Fatalf("live helper: %v", err)
	}
	if exists(live.tmp) {
		t.Error("the live run left its temporary")
	}
	// The other output's orphan goes when that output runs again.
	var s2 Set
	if _, err := s2.Create(filepath.Join(dir, "customers.csv")); err != nil {
		t.Fatal(err)
	}
	_ = s2.Abort()
	want := []string{"orders.csv"}
	if got := sinktest.DirEntries(t, dir); !slices.Equal(got, want) {
		t.Errorf("left in the directory: %v, want %v", got, want)
	}
}

// Whether an owner lives is decided by its lock, not by a process id: an
// owner file naming a live PID (a reused one: here, this very process) but
// not locked is a dead owner's, and an orphan without any owner file is
// removed too.
func TestOrphanOwnershipIgnoresPIDs(t *testing.T) {
	if !locksSupported {
		t.Skip("this platform has no flock, so orphans are never removed")
	}
	dir := t.TempDir()
	final := filepath.Join(dir, "t.csv")
	deadTok, goneTok := "00000000deadbeef", "0000000000000abc"
	orphan := filepath.Join(dir, ".t.csv.tmp-"+deadTok+"-1")
	noOwner := filepath.Join(dir, ".t.0002.csv.tmp-"+goneTok+"-9")
	for _, p := range []string{orphan, noOwner} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lock := filepath.Join(dir, lockName(deadTok))
	if err := os.WriteFile(lock, []byte(fmt.Sprintf("tdsextract temporary files of pid %d\n", os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveOrphans(final)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if want := []string{noOwner, orphan}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if exists(lock) {
		t.Error("the dead owner's file is left although none of its temporaries is")
	}
}

// A set spread over several directories under LockDir holds one owner
// file there; a cleaner in a subdirectory finds it and sees it alive.
func TestLockDirCoversSubdirectories(t *testing.T) {
	root := t.TempDir()
	s := Set{LockDir: root}
	var tmps []string
	for _, sub := range []string{"year=2024", "year=2025/month=01"} {
		f, err := s.Create(filepath.Join(root, sub, "part-0001.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		tmps = append(tmps, f.Tmp)
	}
	locks, _ := filepath.Glob(filepath.Join(root, "*", lockPrefix+"*"))
	if deeper, _ := filepath.Glob(filepath.Join(root, "*", "*", lockPrefix+"*")); len(locks)+len(deeper) != 0 {
		t.Fatalf("owner files in subdirectories: %v %v", locks, deeper)
	}
	if top, _ := filepath.Glob(filepath.Join(root, lockPrefix+"*")); len(top) != 1 {
		t.Fatalf("owner files at the root: %v", top)
	}
	// Pretend to be another process: only the token differs.
	tok := ownerToken()
	release, dead := ownerDead(filepath.Dir(tmps[1]), tok)
	if dead {
		release()
		t.Fatal("a live owner's file in an ancestor was taken as dead")
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if top, _ := filepath.Glob(filepath.Join(root, lockPrefix+"*")); len(top) != 0 {
		t.Fatalf("owner file left after Abort: %v", top)
	}
}

func TestTempNamesAndOutputKeys(t *testing.T) {
	tmp := tempName("/o/t.0003.csv.gz", 12)
	final, tok, ok := parseTemp(filepath.Base(tmp))
	if !ok || final != "t.0003.csv.gz" || tok != ownerToken() {
		t.Fatalf("parseTemp(%q) = %q %q %v", tmp, final, tok, ok)
	}
	for _, bad := range []string{"t.csv", ".t.csv.tmp-7427-1733-2", ".t.csv.tmp-00000000deadbeef-", ".t.csv.tmp-00000000DEADBEEF-1", ".tmp-00000000deadbeef-1"} {
		if _, _, ok := parseTemp(bad); ok {
			t.Errorf("parseTemp(%q) accepted", bad)
		}
	}
	same := [][2]string{{"t.csv", "t.0001.csv"}, {"t.0002.csv", "t.12345.csv"}, {"part-0001.parquet", "part-0042.parquet"}, {"t.csv.gz", "t.0001.csv.gz"}}
	for _, p := range same {
		if outputKey(p[0]) != outputKey(p[1]) {
			t.Errorf("%s and %s are parts of one output", p[0], p[1])
		}
	}
	differ := [][2]string{{"t.csv", "u.csv"}, {"t.csv", "t.parquet"}, {"t2024.csv", "t2025.csv"}, {"t.001.csv", "t.002.csv"}}
	for _, p := range differ {
		if outputKey(p[0]) == outputKey(p[1]) {
			t.Errorf("%s and %s are different outputs", p[0], p[1])
		}
	}
}

func TestIfExists(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "t.csv")
	for _, m := range []IfExists{Replace, Skip, Fail} {
		if err := m.Check(final, ".csv"); err != nil {
			t.Errorf("%s, nothing there: %v", m, err)
		}
	}
	if err := os.WriteFile(Numbered(final, 1, ".csv"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Replace.Check(final, ".csv"); err != nil {
		t.Errorf("replace: %v", err)
	}
	var ee *ExistsError
	if err := Skip.Check(final, ".csv"); err == nil || !strings.Contains(err.Error(), "t.0001.csv exists") || errors.As(err, &ee) {
		t.Errorf("skip: %v", err)
	}
	if err := Fail.Check(final, ".csv"); !errors.As(err, &ee) || !strings.Contains(err.Error(), "if_exists: fail") {
		t.Errorf("fail: %v", err)
	}
	for _, s := range []string{"", "Replace", "skip", " FAIL "} {
		if _, err := ParseIfExists(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseIfExists("overwrite"); err == nil {
		t.Error("overwrite accepted")
	}
}

// With Fail, Publish never overwrites a file that appeared while the run
// wrote, and leaves nothing of the set published.
func TestPublishFailNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	s := Set{IfExists: Fail}
	a, _ := s.Create(filepath.Join(dir, "t.0001.csv"))
	b, _ := s.Create(filepath.Join(dir, "t.0002.csv"))
	_, _ = a.WriteString("new 1")
	_, _ = b.WriteString("new 2")
	if err := os.WriteFile(b.Final, []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publish()
	var ee *ExistsError
	if !errors.As(err, &ee) || ee.Path != b.Final {
		t.Fatalf("Publish: %v", err)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := sinktest.DirEntries(t, dir); !slices.Equal(got, []string{"t.0002.csv"}) {
		t.Fatalf("left: %v", got)
	}
	if bb, _ := os.ReadFile(b.Final); string(bb) != "someone else's" {
		t.Fatalf("overwritten: %q", bb)
	}
}

// Replacing an output removes the old parts the new one does not cover.
func TestRemoveStaleParts(t *testing.T) {
	mk := func(dir string, names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		old   []string
		split bool
		parts int
		left  []string
	}{
		// 5 old parts, 2 new ones: 3..5 go; 0007 is not part of the run of numbers.
		{[]string{"t.0001.csv", "t.0002.csv", "t.0003.csv", "t.0004.csv", "t.0005.csv", "t.0007.csv", "u.0003.csv"}, true, 2,
			[]string{"t.0001.csv", "t.0002.csv", "t.0007.csv", "u.0003.csv"}},
		// split before, one file now
		{[]string{"t.csv", "t.0001.csv", "t.0002.csv"}, false, 1, []string{"t.csv"}},
		// one file before, split now
		{[]string{"t.csv", "t.0001.csv"}, true, 1, []string{"t.0001.csv"}},
	}
	for i, c := range cases {
		dir := t.TempDir()
		mk(dir, c.old...)
		if _, err := RemoveStaleParts(filepath.Join(dir, "t.csv"), c.split, c.parts, ".csv"); err != nil {
			t.Fatal(err)
		}
		if got := sinktest.DirEntries(t, dir); !slices.Equal(got, c.left) {
			t.Errorf("case %d: left %v, want %v", i, got, c.left)
		}
	}
}
