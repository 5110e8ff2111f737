package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/tdsextract/tdsextract"

// rule: the packages matched by pattern may not depend on any package
// named in forbidden (a trailing "/..." forbids the subtree too).
type rule struct {
	pattern   string
	forbidden []string
	why       string
}

var rules = []rule{
	{"./sinks/...", []string{module + "/engine", module + "/engine/...", module + "/cmd/..."},
		"a sink needs only the sink contract (package sinks) and decode, so sinks and plugins build without the session or job layers"},
	{"./plugins/...", []string{module + "/engine", module + "/engine/...", module + "/cmd/..."},
		"a plugin links the sink contract and the SDK, never the engine"},
	{"./decode", []string{"net", "crypto/tls", "net/http", module + "/engine", module + "/engine/...", module + "/sinks", module + "/sinks/..."},
		"decode is the wire protocol over byte slices: no networking, no knowledge of who consumes the cells"},
	{"./engine/session", []string{module + "/engine", module + "/engine/catalog", module + "/sinks", module + "/sinks/..."},
		"the session layer speaks TDS; jobs, catalogs and sinks are built on it, not in it"},
	{"./engine/catalog", []string{module + "/engine", module + "/sinks/..."},
		"introspection serves the job layer, inspect and migrate; it knows no job and no sink"},
	{"./engine/...", []string{"github.com/spf13/cobra", "github.com/spf13/viper", module + "/cmd/..."},
		"only the CLI knows cobra and viper"},
	{"./sinks/...", []string{"github.com/spf13/cobra", "github.com/spf13/viper"},
		"only the CLI knows cobra and viper"},
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// deps maps each package matched by pattern to its dependency closure.
func deps(t *testing.T, root, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, pattern)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", pattern, err, msg)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list %s matched no package", pattern)
	}
	return m
}

func matches(dep, forbidden string) bool {
	if sub, ok := strings.CutSuffix(forbidden, "/..."); ok {
		return dep == sub || strings.HasPrefix(dep, sub+"/")
	}
	return dep == forbidden
}

func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is needed to read the dependency graph")
	}
	root := moduleRoot(t)
	for _, r := range rules {
		for pkg, ds := range deps(t, root, r.pattern) {
			for _, d := range ds {
				for _, f := range r.forbidden {
					if matches(d, f) {
						t.Errorf("%s depends on %s: %s", pkg, d, r.why)
					}
				}
			}
		}
	}
}

// TestMatches keeps the subtree rule honest: a forbidden "a/..." covers a
// and a/b, never ab.
func TestMatches(t *testing.T) {
	for _, c := range []struct {
		dep, forbidden string
		want           bool
	}{
		{"m/engine", "m/engine/...", true},
		{"m/engine/session", "m/engine/...", true},
		{"m/engineering", "m/engine/...", false},
		{"m/engine/session", "m/engine", false},
		{"net", "net", true},
		{"net/http", "net", false},
	} {
		if got := matches(c.dep, c.forbidden); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.dep, c.forbidden, got, c.want)
		}
	}
}
