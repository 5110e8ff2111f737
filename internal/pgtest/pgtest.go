// Package pgtest starts a throwaway PostgreSQL server for integration tests
// against the real thing, started by the test setup (no mock of PostgreSQL).
//
// Start runs initdb into a fresh temporary directory, starts postgres on
// 127.0.0.1 with a free port (trust authentication, fsync off: the data is
// thrown away), and registers a cleanup that stops it immediately and
// removes the directory. When the process runs as root, PostgreSQL (which
// refuses to run as root) is run as the system user "postgres" (or
// $PGTEST_USER) through runuser.
//
// When initdb is not installed the test is skipped with a message, unless
// the environment variable CI is set, in which case it fails. Setting
// PGTEST_URL to a connection string uses that server instead of starting one.
package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Start starts a PostgreSQL server for the test and returns a connection
// string for its "postgres" database as the "postgres" superuser.
func Start(t testing.TB) (connString string) {
	t.Helper()
	if u := os.Getenv("PGTEST_URL"); u != "" {
		return u
	}
	skipUnlessInstalled(t)
	srv, err := Launch()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Logf("pgtest: %v", err)
		}
	})
	return srv.URL
}

// Shared starts one server for a whole test binary, the first time a test
// asks for it (PostgreSQL takes a second or two to start); TestMain calls
// StopShared after the tests. It skips or fails like Start.
func Shared(t testing.TB) (connString string) {
	t.Helper()
	if u := os.Getenv("PGTEST_URL"); u != "" {
		return u
	}
	skipUnlessInstalled(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil {
		srv, err := Launch()
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		shared = srv
	}
	return shared.URL
}

// StopShared stops the server Shared started, if any.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		_ = shared.Stop()
		shared = nil
	}
}

var (
	sharedMu sync.Mutex
	shared   *Server
)

// skipUnlessInstalled skips the test when PostgreSQL is not installed, or
// fails it in CI, where it must be.
func skipUnlessInstalled(t testing.TB) {
	t.Helper()
	if _, err := findBin(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: %v (CI is set, so this fails instead of skipping)", err)
		}
		t.Skipf("pgtest: skipping: %v", err)
	}
}

// Server is a throwaway PostgreSQL started by Launch.
type Server struct {
	// URL connects to its "postgres" database as the "postgres" superuser.
	URL string
	// Settings are the non-default server settings it runs with (for
	// benchmark notes).
	Settings []string
	// DataDir is its data directory (postmaster.pid is there).
	DataDir string
	stop    func() error
}

// Stop stops the server at once and removes its directory.
func (s *Server) Stop() error { return s.stop() }

// serverSettings are the settings every throwaway server runs with: the
// data is thrown away, so durability is switched off.
var serverSettings = []string{"fsync=off", "synchronous_commit=off", "full_page_writes=off", "timezone=UTC"}

// Launch starts a server as Start does, for programs that are not tests
// (the benchmark harness). extra are more name=value settings, after the
// usual ones (so they win), for measuring a server configured otherwise
// (wal_level=minimal, say). The caller stops it.
func Launch(extra ...string) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	settings := append(append([]string(nil), serverSettings...), extra...)
	for _, s := range extra {
		if k, _, ok := strings.Cut(s, "="); !ok || k == "" || strings.ContainsAny(s, " '\"") {
			return nil, fmt.Errorf("pgtest: setting %q: want name=value without spaces or quotes", s)
		}
	}
	var runAs string
	if os.Geteuid() == 0 {
		runAs = os.Getenv("PGTEST_USER")
		if runAs == "" {
			runAs = "postgres"
		}
		if _, err := user.Lookup(runAs); err != nil {
			return nil, fmt.Errorf("running as root and system user %q does not exist (create it, e.g. `useradd -r postgres`, or set PGTEST_USER): %v", runAs, err)
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			return nil, fmt.Errorf("running as root needs runuser to start PostgreSQL as %q: %v", runAs, err)
		}
	}

	// Not t.TempDir: its parent directories are private to this user, and
	// postgres may run as another one.
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	logf := filepath.Join(dir, "postgres.log")
	if runAs != "" {
		u, _ := user.Lookup(runAs)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("chown %s: %v", dir, err)
		}
	}
	run := func(name string, args ...string) ([]byte, error) {
		path := filepath.Join(bin, name)
		var cmd *exec.Cmd
		if runAs != "" {
			cmd = exec.Command("runuser", append([]string{"-u", runAs, "--", path}, args...)...)
		} else {
			cmd = exec.Command(path, args...)
		}
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		return cmd.CombinedOutput()
	}
	cleanupDir := func() { _ = os.RemoveAll(dir) }

	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		cleanupDir()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}

	var port int
	var startErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err = freePort()
		if err != nil {
			cleanupDir()
			return nil, err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", port, dir)
		for _, s := range settings {
			opts += " -c " + s
		}
		out, err := run("pg_ctl", "-D", data, "-o", opts, "-l", logf, "-w", "-t", "60", "start")
		if err == nil {
			startErr = nil
			break
		}
		log, _ := os.ReadFile(logf)
		startErr = fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
		if !bytes.Contains(log, []byte("in use")) {
			break
		}
	}
	if startErr != nil {
		cleanupDir()
		return nil, startErr
	}
	stop := func() error {
		defer cleanupDir()
		if out, err := run("pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "60", "stop"); err != nil {
			return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
		}
		return nil
	}
	return &Server{
		URL:      fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=10", port),
		Settings: settings,
		DataDir:  data,
		stop:     stop,
	}, nil
}

// findBin returns the directory holding initdb, pg_ctl and postgres: from
// PATH, else the newest /usr/lib/postgresql/<version>/bin.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		d := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[j]))))
		return vi > vj
	})
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	return "", fmt.Errorf("initdb not found in PATH or /usr/lib/postgresql/*/bin (install PostgreSQL 15, e.g. apt-get install postgresql)")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
