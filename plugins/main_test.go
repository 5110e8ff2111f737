package plugins

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// bins holds the plugin executables the tests run, built once by TestMain
// from this repository: the two example plugins and the test plugin.
var bins struct {
	dir                         string
	jsonl, arrowipc, testplugin string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tdsx-plugins-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.dir = dir
	for _, b := range []struct {
		dst *string
		pkg string
	}{{&bins.jsonl, "./examples/jsonl"}, {&bins.arrowipc, "./examples/arrowipc"}, {&bins.testplugin, "./internal/testplugin"}} {
		*b.dst = filepath.Join(dir, filepath.Base(b.pkg))
		out, err := exec.Command("go", "build", "-o", *b.dst, b.pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", b.pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// logBuffer is a slog handler's output the tests read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testHost is a Host over the test binaries' directory whose log a test
// can read.
func testHost(t *testing.T) (*Host, *logBuffer) {
	t.Helper()
	lb := &logBuffer{}
	return &Host{Dir: bins.dir, Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))}, lb
}
