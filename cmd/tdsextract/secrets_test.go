package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// assertNoSecret fails when out holds a secret or any 5-byte piece of one.
func assertNoSecret(t *testing.T, what, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for i := 0; i+5 <= len(s); i++ {
			if strings.Contains(out, s[i:i+5]) {
				t.Errorf("%s shows %q, part of a secret:\n%s", what, s[i:i+5], out)
				break
			}
		}
	}
}

// A malformed connection string from TDSEXTRACT_SOURCE_CONNECTION is a
// configuration error that names the position, never the text.
func TestDryRunEnvConnectionStringIsNotEchoed(t *testing.T) {
	dir := t.TempDir()
	job := writeFile(t, dir, "job.yaml", `name: t
source:
  connection: sqlserver://sa@127.0.0.1:1?database=x
extracts:
  - table: dbo.t
    sinks: [{type: csv}]
`)
	for _, c := range []struct{ conn, secret, want string }{
		{"sqlserver//sa:Secret123@db:1433", "Secret123@db", "byte 0"},
		{"Server=db;User ID=sa;Password=abc;xyz123;Database=d", "abc;xyz123", "byte 34"},
		{"Server=db;User ID=sa;Password=p;a@s:s# w o=rd", "p;a@s:s# w o=rd", "byte 32"},
	} {
		t.Setenv("TDSEXTRACT_SOURCE_CONNECTION", c.conn)
		code, out, errOut := runCLI(t, "run", "--dry-run", job)
		if code != exitConfig || !strings.Contains(errOut, "source.connection") || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d naming source.connection at %s", c.conn, code, errOut, exitConfig, c.want)
		}
		assertNoSecret(t, "run --dry-run", out+errOut, c.secret)
	}
}

// Whatever fails (the connection string, the login, TLS, the network, the
// query, a sink) and however it is reported (stderr, JSON logs at debug
// level, the printed and the JSON summary, the sample server's own log), no
// password or access token is printed.
func TestNoSecretInAnyOutput(t *testing.T) {
	const (
		pw       = "Qx7Zv;Wk@9#Lp w"
		wrongPw  = "Rj4Hq;Yn@2#Tc w"
		token    = "eyJ0b2tlbi1yaWdodC1aeTk"
		badToken = "eyJ0b2tlbi13cm9uZy1Wbjg"
	)
	var logMu sync.Mutex
	var srvLog bytes.Buffer
	srv := startSampleServer(t, tdsserver.Config{
		DB:           sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.poc48": 50}}),
		Users:        map[string]string{"sa": pw},
		AccessTokens: map[string]string{token: "etl"},
		Logger:       slog.New(slog.NewJSONHandler(lockedWriter{&logMu, &srvLog}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	addr := srv.Addr()
	dir := t.TempDir()
	enc := strings.NewReplacer(";", "%3B", "@", "%40", "#", "%23", " ", "%20")

	cases := []struct {
		name     string
		conn     string
		env      map[string]string
		table    string
		sinkOpts string
		code     int
	}{
		{"ok, password in the URL", "sqlserver://sa:" + pw + "@" + addr + "?database=sample&encrypt=disable", nil, "dbo.poc48", "", exitOK},
		{"ok, password in ADO braces", "Server=" + strings.Replace(addr, ":", ",", 1) + ";User ID=sa;Password={" + pw + "};Encrypt=disable", nil, "dbo.poc48", "", exitOK},
		{"ok, percent-encoded", "sqlserver://sa:" + enc.Replace(pw) + "@" + addr + "?encrypt=disable", nil, "dbo.poc48", "", exitOK},
		{"wrong password", "sqlserver://sa:" + wrongPw + "@" + addr + "?encrypt=disable", nil, "dbo.poc48", "", exitConnect},
		{"wrong password from env", "sqlserver://sa@" + addr + "?encrypt=disable&password+env=SECRETS_TEST_PW", map[string]string{"SECRETS_TEST_PW": wrongPw}, "dbo.poc48", "", exitConnect},
		{"unknown database", "sqlserver://sa:" + pw + "@" + addr + "?database=nosuch&encrypt=disable", nil, "dbo.poc48", "", exitConnect},
		{"untrusted certificate", "sqlserver://sa:" + pw + "@" + addr + "?encrypt=mandatory", nil, "dbo.poc48", "", exitConnect},
		{"certificate for another name", "sqlserver://sa:" + pw + "@" + addr + "?encrypt=mandatory&hostNameInCertificate=db.example.com", nil, "dbo.poc48", "", exitConnect},
		{"unreachable", "sqlserver://sa:" + pw + "@" + dead + "?encrypt=disable", nil, "dbo.poc48", "", exitConnect},
		{"unknown table", "sqlserver://sa:" + pw + "@" + addr + "?encrypt=disable", nil, "dbo.nosuch", "", exitExtract},
		{"bad sink option", "sqlserver://sa:" + pw + "@" + addr + "?encrypt=disable", nil, "dbo.poc48", "dialect: excel", exitConfig},
		{"malformed, URL", "sqlserver://sa:" + pw + "@" + addr + ":99?encrypt=disable", nil, "dbo.poc48", "", exitConfig},
		{"malformed, ADO", "Server=" + addr + ";Password=" + pw + ";Encrypt=disable", nil, "dbo.poc48", "", exitConfig},
		{"wrong access token", "sqlserver://" + addr + "?encrypt=disable", map[string]string{"TDSEXTRACT_ACCESS_TOKEN": badToken}, "dbo.poc48", "", exitConnect},
		{"ok, access token", "sqlserver://" + addr + "?encrypt=disable", map[string]string{"TDSEXTRACT_ACCESS_TOKEN": token}, "dbo.poc48", "", exitOK},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(dir, fmt.Sprint(i))
			opts := "path: " + out + "/"
			if c.sinkOpts != "" {
				opts += "\n          " + c.sinkOpts
			}
			sum := filepath.Join(out, "summary.json")
			job := writeFile(t, dir, fmt.Sprintf("job%d.yaml", i), fmt.Sprintf(`name: secrets
summary_file: %s
source:
  connection: %q
  connect_timeout: 10s
  timeout: 30s
extracts:
  - table: %s
    sinks:
      - type: csv
        options:
          %s
`, sum, c.conn, c.table, opts))
			code, stdout, stderr := runCLI(t, "--log-level", "debug", "--log-format", "json", "run", job)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			summary, _ := os.ReadFile(sum)
			assertNoSecret(t, "the output", stdout+stderr+string(summary), pw, wrongPw, enc.Replace(pw), token, badToken)
		})
	}
	logMu.Lock()
	defer logMu.Unlock()
	assertNoSecret(t, "the sample server's log", srvLog.String(), pw, wrongPw, token, badToken)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
