package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/sinks/csv"
)

// export --out - writes the CSV of one extract to standard output, the
// same bytes as the file export, and nothing else (the summary goes to
// stderr); no directory named "-" appears. Anything but one extract into
// csv alone is refused before connecting.
func TestExportToStdout(t *testing.T) {
	src := startSource(t, map[string]int64{"dbo.odbc5": 300})
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.odbc5", "--out", dir)
	if code != 0 {
		t.Fatalf("file export: %d %s", code, errOut)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "odbc5.csv"))
	code, out, errOut := runCLI(t, "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.odbc5", "--out", "-")
	if code != 0 || out != string(want) || len(want) == 0 {
		t.Fatalf("--out -: exit %d, %d bytes on stdout, want %d\nstderr %s", code, len(out), len(want), errOut)
	}
	if !strings.Contains(errOut, "odbc5 -> csv: 300 rows") || !strings.Contains(errOut, "(standard output)") {
		t.Errorf("the summary is not on stderr: %s", errOut)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a directory or file named "-" was created`)
	}
	// --name names the one table's extract, hence its file.
	code, _, errOut = runCLI(t, "-q", "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.odbc5", "--name", "five", "--out", dir)
	if b, err := os.ReadFile(filepath.Join(dir, "five.csv")); code != 0 || err != nil || string(b) != string(want) {
		t.Errorf("--table --name five: exit %d, %v %s", code, err, errOut)
	}
	code, out, _ = runCLI(t, "-q", "export", "--source", src, "--password-env", "TEST_PW", "--query", "SELECT TOP 2 id FROM dbo.odbc5", "--out", "-")
	if code != 0 || out != "id\n1\n2\n" {
		t.Errorf("--query --out -: exit %d %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--table", "dbo.odbc5,dbo.poc48"}, "it takes one --table or --query (not 2)"},
		{[]string{"--table", "dbo.odbc5", "--to", "parquet"}, "it takes --to csv alone (not parquet)"},
		{[]string{"--table", "dbo.odbc5", "--set", "csv.path=x/"}, "drop --set csv.path"},
		{[]string{"--table", "dbo.odbc5", "--set", "csv.max_bytes=1MiB"}, "--set csv.max_bytes: standard output"},
	} {
		args := append([]string{"export", "--source", src, "--password-env", "TEST_PW", "--out", "-"}, tc.args...)
		code, out, errOut := runCLI(t, args...)
		if code != exitConfig || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %s", tc.args, code, out, errOut)
		}
	}
	if _, err := csv.ParseConfig(map[string]any{"path": "-", "max_rows": 5}); err == nil || !strings.Contains(err.Error(), "max_rows") {
		t.Errorf("path - with max_rows: %v", err)
	}
}
