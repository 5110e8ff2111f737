package main

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// The version comes from -ldflags (make build) or, without them, from the
// build info the go command records (go install module@version; vcs.*
// in a clone).
func TestDescribeVersion(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		v, c string
		bi   *debug.BuildInfo
		want string
	}{
		{"v1.2.0-3-gabc", "fedcba9876543210", nil, "tdsextract v1.2.0-3-gabc (commit fedcba987654)"},
		{"dev", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "tdsextract v1.4.0 ("},
		{"dev", "", vcs, "tdsextract dev (commit 0123456789ab, modified, committed 2026-12-01T10:00:00Z)"},
		{"v2", "aaaa", vcs, "tdsextract v2 (commit aaaa, modified, committed 2026-12-01T10:00:00Z)"},
		{"dev", "", nil, "tdsextract dev (commit unknown"},
	} {
		if got := describeVersion(tc.v, tc.c, tc.bi); !strings.HasPrefix(got, tc.want) {
			t.Errorf("describeVersion(%q, %q): %q, want %q...", tc.v, tc.c, got, tc.want)
		}
	}
	_, v1, _ := runCLI(t, "version")
	_, v2, _ := runCLI(t, "--version")
	if v1 == "" || v1 != v2 {
		t.Errorf("version %q and --version %q differ", v1, v2)
	}
}

// --quiet prints nothing on success (the summary file is still written);
// a failure is printed once, at the end, on stderr, whatever the mode.
func TestQuietAndErrorsOnce(t *testing.T) {
	src := startSource(t, map[string]int64{"dbo.poc48": 50})
	dir := t.TempDir()
	sum := filepath.Join(dir, "sum.json")
	code, out, errOut := runCLI(t, "-q", "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.poc48", "--out", dir, "--summary-json", sum)
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("-q success: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if len(sinktest.Files(dir)) != 2 {
		t.Errorf("-q wrote %v", sinktest.Files(dir))
	}
	for _, args := range [][]string{
		{"-q"}, {}, {"--log-format", "json"},
	} {
		args = append(args, "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.nosuch", "--out", dir)
		code, out, errOut := runCLI(t, args...)
		all := out + errOut
		if code != exitExtract || strings.Count(all, "dbo.nosuch not found") != 1 || !strings.HasPrefix(errOut[strings.LastIndex(strings.TrimSpace(errOut), "\n")+1:], "tdsextract: ") {
			t.Errorf("%v: exit %d; the error must appear once, last on stderr:\nstdout %s\nstderr %s", args, code, out, errOut)
		}
		if args[0] == "-q" && out != "" {
			t.Errorf("-q failure printed a summary: %q", out)
		}
	}
}

// A job file without a name is named by its file in the summary.
func TestJobNamedByItsFile(t *testing.T) {
	srv := startServer(t, map[string]int64{"dbo.poc48": 5})
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	dir := t.TempDir()
	job := writeFile(t, dir, "nightly-orders.yaml", fmt.Sprintf(`source:
  connection: "sqlserver://sa@%s?database=sample&encrypt=disable"
  password_env: TEST_PW
extracts:
  - table: dbo.poc48
sinks:
  - type: csv
    options: {path: %s/}
`, srv.Addr(), dir))
	code, out, errOut := runCLI(t, "--log-level", "warn", "run", job)
	if code != 0 || !strings.Contains(out, `job "nightly-orders" ok`) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
