package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// export, inspect and tables take the same source flags (--password-file,
// --connect-timeout too) and the same TDSEXTRACT_SOURCE_* variables.
func TestSourceFlagsEverywhere(t *testing.T) {
	srv := startServer(t, map[string]int64{"dbo.poc48": 20})
	dir := t.TempDir()
	src := sourceURL(srv)
	pwFile := writeFile(t, dir, "pw", tdsserver.DefaultPassword+"\n")

	code, out, errOut := runCLI(t, "export", "--source", src, "--password-file", pwFile, "--connect-timeout", "5s",
		"--table", "dbo.poc48", "--out", filepath.Join(dir, "out"))
	if code != 0 || !strings.Contains(out, "poc48 -> csv: 20 rows") {
		t.Fatalf("export --password-file: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "export", "--source", src, "--password-file", pwFile, "--connect-timeout", "soon", "--table", "dbo.poc48")
	if code != exitConfig || !strings.Contains(errOut, "--connect-timeout: \"soon\" is not a duration") {
		t.Errorf("bad --connect-timeout: exit %d: %s", code, errOut)
	}

	// inspect honours TDSEXTRACT_SOURCE_CONNECTION and _PASSWORD_FILE, and
	// describes a query without running it.
	t.Setenv("TDSEXTRACT_SOURCE_CONNECTION", src)
	t.Setenv("TDSEXTRACT_SOURCE_PASSWORD_FILE", pwFile)
	sent := srv.Stats().RowsSent
	code, out, errOut = runCLI(t, "inspect", "--query", "SELECT id, c_money FROM dbo.type_matrix", "--name", "money", "--to", "parquet")
	if code != 0 || !strings.Contains(out, "money  (a query, 2 columns)") || !strings.Contains(out, "c_money  money") ||
		!strings.Contains(out, "DECIMAL(19,4)") {
		t.Fatalf("inspect --query: exit %d\n%s%s", code, out, errOut)
	}
	if d := srv.Stats().RowsSent - sent; d != 0 {
		t.Errorf("inspect --query read %d rows", d)
	}
	code, out, errOut = runCLI(t, "inspect", "--table", "dbo.poc48")
	if code != 0 || !strings.Contains(out, "dbo.poc48  (48 columns, about 20 rows)") {
		t.Fatalf("inspect from the environment: exit %d\n%s%s", code, out, errOut)
	}

	// tables lists with patterns, from the environment too.
	code, out, errOut = runCLI(t, "tables", "sales.*", "--exclude", "*lines")
	if code != 0 || !strings.Contains(out, "sales.orders") || !strings.Contains(out, "sales.customers") ||
		strings.Contains(out, "order_lines") || strings.Contains(out, "dbo.") {
		t.Fatalf("tables sales.*: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "tables", "--views", "warehouse.*")
	if code != 0 || !regexpLine(out, `warehouse\.low_stock\s+view`) || !regexpLine(out, `warehouse\.sites\s+table\s+7\s+12`) {
		t.Fatalf("tables --views: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "tables", "nosuch*")
	if code != 0 || !strings.Contains(out, "no table matches") {
		t.Errorf("tables nosuch*: exit %d %s", code, out)
	}
	os.Unsetenv("TDSEXTRACT_SOURCE_CONNECTION")
	code, _, errOut = runCLI(t, "tables")
	if code != exitConfig || !strings.Contains(errOut, "tables needs --source (or TDSEXTRACT_SOURCE_CONNECTION)") {
		t.Errorf("tables without a source: exit %d %s", code, errOut)
	}
}

// A server that accepts and never answers: the connect timeout, reported
// as such, exit 3.
func TestConnectTimeoutOnTheCommandLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Never accepted: the kernel completes the handshake and holds the
	// connection in the backlog, where nothing ever answers.
	t.Setenv("TEST_PW", "x")
	code, _, errOut := runCLI(t, "export", "--source", "sqlserver://sa@"+ln.Addr().String()+"?database=sample&encrypt=disable",
		"--password-env", "TEST_PW", "--connect-timeout", "300ms", "--table", "dbo.poc48", "--out", t.TempDir())
	if code != exitConnect || !strings.Contains(errOut, "connect timeout: no session within 300ms") || strings.Contains(errOut, "request timeout") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// regexpLine reports whether a line of s matches re.
func regexpLine(s, re string) bool {
	return regexp.MustCompile(`(?m)^` + re).MatchString(s)
}
