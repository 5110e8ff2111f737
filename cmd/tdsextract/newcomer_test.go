package main

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/migrate"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// pgExampleURL is the PostgreSQL server the examples in configs/ name.
const pgExampleURL = "postgres://tdsextract@127.0.0.1:5432/warehouse?sslmode=prefer"

// newcomerSecret is the sample server's password in the newcomer session:
// no 5-byte piece of it may appear in anything the session prints or
// writes.
const newcomerSecret = "Qz9#vX;@k7:Wp w=8"

// newcomer is a scripted first hour with tdsextract: the README's
// commands, every example job, and the mistakes a new user makes, each
// with its exit code and message, all against the sample server as
// `tdsextract sample-server` starts it. Everything printed is kept for the
// secret check at the end.
type newcomer struct {
	t    *testing.T
	addr string
	all  strings.Builder
	pg   string // the session's PostgreSQL, started on first use
	dbs  int    // databases created on it (freshDatabase)
}

// postgres is a throwaway PostgreSQL for the session, started once; t
// skips (or fails in CI) without one, as pgtest decides.
func (n *newcomer) postgres(t *testing.T) string {
	t.Helper()
	if n.pg == "" {
		srv, err := pgtest.Launch()
		if err != nil {
			return pgtest.Start(t) // skips or fails, saying why
		}
		n.t.Cleanup(func() { _ = srv.Stop() })
		n.pg = srv.URL
	}
	return n.pg
}

// freshDatabase creates an empty database on the server at pg and
// returns its connection string.
func (n *newcomer) freshDatabase(t *testing.T, pg string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(pg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	n.dbs++
	name := fmt.Sprintf("newcomer_%d", n.dbs)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pg)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func (n *newcomer) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out, errOut := runCLI(t, args...)
	n.all.WriteString(out)
	n.all.WriteString(errOut)
	return code, out, errOut
}

func TestNewcomerSession(t *testing.T) {
	addr, _, stop := runSampleServer(t, "--password", newcomerSecret)
	defer stop()
	t.Setenv("TDSEXTRACT_SAMPLE_PASSWORD", newcomerSecret)
	t.Setenv("MSSQL_PASSWORD", newcomerSecret)
	t.Setenv("SINCE_ORDER_ID", "4000") // configs/incremental.yaml's watermark
	os.Unsetenv("TDSEXTRACT_SOURCE_CONNECTION")
	work := t.TempDir()
	t.Chdir(work) // the README's commands and the examples write under ./out
	n := &newcomer{t: t, addr: addr}

	t.Run("readme", n.readme)
	t.Run("configs", n.configs)
	t.Run("bad-inputs", n.badInputs)

	assertNoSecret(t, "the session's output", n.all.String(), newcomerSecret)
	files := 0
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		files++
		assertNoSecret(t, p, string(b), newcomerSecret)
		return nil
	})
	if files < 10 {
		t.Errorf("the session wrote %d files; the README's commands and the examples write more", files)
	}
}

// exampleJob is configs/NAME rewritten for this session: the sample
// server's port, and for the PostgreSQL examples a throwaway PostgreSQL.
func (n *newcomer) exampleJob(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "configs", name))
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	if !strings.Contains(body, "127.0.0.1:14330") && !strings.Contains(body, "127.0.0.1,14330") {
		t.Fatalf("%s does not connect to the sample server's address 127.0.0.1:14330", name)
	}
	_, port, _ := net.SplitHostPort(n.addr)
	body = strings.NewReplacer("127.0.0.1:14330", n.addr, "127.0.0.1,14330", "127.0.0.1,"+port).Replace(body)
	if strings.Contains(body, "type: postgres") || isMigration(body) {
		pg := n.postgres(t)
		if isMigration(body) {
			// A migration creates the source's schemas and tables, which
			// the other PostgreSQL examples have loaded into the server's
			// database already: it gets a database of its own.
			pg = n.freshDatabase(t, pg)
		}
		body = strings.ReplaceAll(body, pgExampleURL, pg)
		t.Setenv("PGPASSWORD_WAREHOUSE", "unused: the test server trusts local logins")
	}
	return writeFile(t, t.TempDir(), name, body)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	// the session runs in a temporary directory: the package's own
	return filepath.Join(pkgDir, "..", "..")
}

// pkgDir is this package's directory, taken before any test changes it.
var pkgDir, _ = os.Getwd()

// Every example in configs/ runs, as its comments say, against the sample
// server as `tdsextract sample-server` starts it (login-only TLS, the
// default rows), with only the port changed (and a throwaway PostgreSQL
// for the server the PostgreSQL examples name); every extract publishes
// all its rows to every sink.
func (n *newcomer) configs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "configs", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("configs: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			job := n.exampleJob(t, filepath.Base(f))
			sum := filepath.Join(t.TempDir(), "summary.json")
			code, out, errOut := n.cli(t, "--log-level", "warn", "run", "--summary-json", sum, job)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if b, _ := os.ReadFile(job); isMigration(string(b)) {
				checkMigrationSummary(t, sum)
				return
			}
			checkSummaryFile(t, sum)
		})
	}
}

// isMigration reports whether a job file's body is a migration.
func isMigration(body string) bool { return strings.Contains(body, "\nmigrate:") }

// checkMigrationSummary checks a migration's summary, which is per table:
// ok, and every table loaded and verified.
func checkMigrationSummary(t *testing.T, path string) {
	t.Helper()
	m := readJSON[migrate.Summary](t, path)
	if !m.OK || len(m.Tables) == 0 {
		t.Errorf("migration: ok %v, %d tables", m.OK, len(m.Tables))
	}
	for _, tb := range m.Tables {
		if tb.Error != "" || tb.Verified == "" {
			t.Errorf("%s: %+v", tb.Source, tb)
		}
	}
}

var (
	shBlock  = regexp.MustCompile("(?s)```sh\n(.*?)```")
	envWord  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
	fromREAD = strings.NewReplacer(
		// the quick start's real server, as the sample server
		"etl_user@sql01.example.com:1433", "sa@127.0.0.1:14330",
		"database=Sales", "database=sample",
		// its certificate is the sample server's self-signed one
		"encrypt=mandatory", "encrypt=mandatory&TrustServerCertificate=true",
		"dbo.Orders", "sales.orders",
	)
)

// readmeCommands are the tdsextract command lines of the README's sh
// blocks, as words (quotes removed, continuations joined, comments and a
// trailing & dropped), with their environment assignments.
func readmeCommands(t *testing.T) [][]string {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	for _, m := range shBlock.FindAllStringSubmatch(string(b), -1) {
		for _, line := range strings.Split(strings.ReplaceAll(m[1], "\\\n", " "), "\n") {
			words := shellWords(line)
			i := 0
			for i < len(words) && envWord.MatchString(words[i]) {
				i++
			}
			if i < len(words) && (words[i] == "tdsextract" || words[i] == "bin/tdsextract") {
				cmds = append(cmds, words)
			}
		}
	}
	return cmds
}

// shellWords splits a command line as sh would for these simple lines:
// single and double quotes, # comments, a trailing &.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	in, quote, word := false, byte(0), false
	flush := func() {
		if word {
			words = append(words, w.String())
		}
		w.Reset()
		word = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case in && c == quote:
			in = false
		case in:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			in, quote, word = true, c, true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !word:
			flush()
			return words
		case c == '&' && !word:
		default:
			w.WriteByte(c)
			word = true
		}
	}
	flush()
	return words
}

// The README's commands run as written, against the sample server where
// they name another (the quick start's), exiting 0.
func (n *newcomer) readme(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 4 {
		t.Fatalf("found %d tdsextract commands in the README", len(cmds))
	}
	for _, words := range cmds {
		line := strings.Join(words, " ")
		t.Run(line, func(t *testing.T) {
			var args []string
			for _, w := range words {
				if k, v, ok := strings.Cut(w, "="); ok && envWord.MatchString(w) && len(args) == 0 {
					if v == tdsserver.DefaultPassword {
						v = newcomerSecret // the session's server has its own
					}
					t.Setenv(k, v)
					continue
				}
				args = append(args, w)
			}
			args = args[1:]
			if len(args) > 0 && args[0] == "sample-server" {
				// the session's own server already listens on 14330's
				// place: start another with the README's flags, elsewhere
				var rest []string
				for i := 1; i < len(args); i++ {
					if args[i] == "--listen" {
						i++
						continue
					}
					rest = append(rest, args[i])
				}
				_, _, stop := runSampleServer(t, rest...)
				if code := stop(); code != 0 {
					t.Errorf("%s: exit %d", line, code)
				}
				return
			}
			for i, a := range args {
				a = strings.ReplaceAll(fromREAD.Replace(a), "127.0.0.1:14330", n.addr)
				switch {
				case strings.HasPrefix(a, "configs/"):
					a = n.exampleJob(t, strings.TrimPrefix(a, "configs/"))
				case strings.HasPrefix(a, "postgres://") && args[0] == "migrate":
					// a migration creates the sample's schemas: a database
					// of its own, apart from the other commands' tables
					a = n.freshDatabase(t, n.postgres(t))
				case strings.HasPrefix(a, "postgres://"):
					a = n.postgres(t)
				}
				args[i] = a
			}
			code, out, errOut := n.cli(t, args...)
			if code != 0 {
				t.Errorf("%s: exit %d\n%s%s", line, code, out, errOut)
			}
		})
	}
}

// checkSummaryFile checks that a run's JSON summary says ok and that
// every sink of every extract published all the rows, into files that
// exist (but for postgres).
func checkSummaryFile(t *testing.T, path string) {
	t.Helper()
	s := readJSON[engine.Summary](t, path)
	if !s.OK || len(s.Extracts) == 0 {
		t.Errorf("summary: ok %v, %d extracts", s.OK, len(s.Extracts))
	}
	for _, e := range s.Extracts {
		if e.Error != "" {
			t.Errorf("%s: %s", e.Name, e.Error)
			continue
		}
		if len(e.Sinks) == 0 {
			t.Errorf("%s: no sink published", e.Name)
		}
		// A partitioned extract lists every part's sinks: each sink type's
		// parts together have every row.
		perType := map[string]int64{}
		for _, sk := range e.Sinks {
			perType[sk.Type] += sk.Rows
		}
		for typ, n := range perType {
			if n != e.Rows {
				t.Errorf("%s -> %s: %d rows of %d", e.Name, typ, n, e.Rows)
			}
		}
		for _, sk := range e.Sinks {
			if sk.Type != "postgres" && len(sk.Files) == 0 {
				t.Errorf("%s -> %s: no output file", e.Name, sk.Type)
			}
			for _, p := range sk.Files {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s -> %s: %v", e.Name, sk.Type, err)
				}
			}
		}
	}
}

// badInput is a mistake, its exit code and a fragment of its one error.
type badInput struct {
	args []string
	code int
	want string
}

// The mistakes of a first hour: each exits with its class's code and
// says what is wrong, once, without the secret.
func (n *newcomer) badInputs(t *testing.T) {
	src := "sqlserver://sa@" + n.addr + "?database=sample&encrypt=optional"
	ex := func(extra ...string) []string {
		return append([]string{"export", "--source", src, "--password-env", "MSSQL_PASSWORD", "--out", t.TempDir()}, extra...)
	}
	dir := t.TempDir()
	job := func(name, body string) string {
		return writeFile(t, dir, name, fmt.Sprintf("name: j\nsource:\n  connection: %q\n  password_env: MSSQL_PASSWORD\n%s", src, body))
	}
	good := job("good.yaml", "extracts:\n  - table: dbo.odbc5\nsinks:\n  - type: csv\n    options: {path: "+dir+"/out/}\n")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	t.Setenv("WRONG_PW", "wrong-password")
	cases := []badInput{
		{[]string{"bogus"}, exitConfig, `unknown command "bogus"`},
		{[]string{"rn", "x.yaml"}, exitConfig, `did you mean "run"`},
		{[]string{"version", "extra"}, exitConfig, "version takes no arguments"},
		{[]string{"help", "bogus"}, exitConfig, `no help topic "bogus"`},
		{[]string{"completion", "fish2"}, exitConfig, `completion: unknown shell "fish2"`},
		{[]string{"demo", "now"}, exitConfig, `demo takes no arguments (got "now")`},
		{[]string{"run", "--bogus", good}, exitConfig, "unknown flag: --bogus"},
		{[]string{"--log-level", "loud", "version"}, exitConfig, `--log-level "loud": use debug, info, warn or error`},
		{[]string{"--log-format", "xml", "version"}, exitConfig, `--log-format "xml": use text or json`},
		{[]string{"run"}, exitConfig, "run needs exactly one job file"},
		{[]string{"run", filepath.Join(dir, "nosuch.yaml")}, exitConfig, "cannot read the job file"},
		{[]string{"run", "--parallel", "0", good}, exitConfig, "--parallel 0: must be at least 1"},
		{[]string{"run", "--parallel", "-2", good}, exitConfig, "--parallel -2: must be at least 1"},
		{[]string{"run", "--dry-run", job("where.yaml", "extracts:\n  - table: dbo.odbc5\n    where: id > ${NEWCOMER_UNSET}\nsinks: [{type: csv}]\n")},
			exitConfig, "where.yaml: extracts[0].where: environment variable(s) NEWCOMER_UNSET not set"},
		{[]string{"run", job("top.yaml", "extract:\n  - table: dbo.odbc5\n")}, exitConfig, `top.yaml: extract: unknown key (did you mean "extracts"?)`},
		{[]string{"run", job("keys.yaml", "extracts:\n  - table: dbo.odbc5\n    wher: id > 1\n    sinks: [{type: csv, option: {}}]\n")}, exitConfig,
			`keys.yaml: extracts[0].wher: unknown key (did you mean "where"?)`},
		{[]string{"run", job("keys2.yaml", "extracts:\n  - table: dbo.odbc5\n    sinks: [{type: csv, option: {}}]\n")}, exitConfig,
			`keys2.yaml: extracts[0].sinks[0].option: unknown key (did you mean "options"?)`},
		{[]string{"run", job("type.yaml", "parallel: [2]\nextracts:\n  - table: dbo.odbc5\n")}, exitConfig, "type.yaml: parallel: want a whole number, got a list"},
		{[]string{"run", job("opt.yaml", "extracts:\n  - table: dbo.odbc5\nsinks:\n  - type: csv\n    options: {dilect: postgres}\n")},
			exitConfig, `opt.yaml: sinks[0].options.dilect: unknown option (did you mean "dialect"?)`},
		{[]string{"run", writeFile(t, dir, "pwenv.yaml",
			fmt.Sprintf("source:\n  connection: %q\n  password_env: NEWCOMER_NO_PW\nextracts:\n  - table: dbo.odbc5\nsinks: [{type: csv}]\n", src))},
			exitConfig, "pwenv.yaml: source.password_env: environment variable NEWCOMER_NO_PW is not set"},
		{[]string{"export"}, exitConfig, "export needs --source (or TDSEXTRACT_SOURCE_CONNECTION)"},
		{ex(), exitConfig, "export needs --table or --query"},
		{ex("--table", "dbo.odbc5", "--parallel", "0"), exitConfig, "--parallel 0: must be at least 1"},
		{[]string{"export", "--source", "sqlserver//sa:" + newcomerSecret + "@db:1433", "--table", "t"}, exitConfig, "byte 0"},
		{[]string{"export", "--source", "Server=db;User ID=sa;Password=" + newcomerSecret + ";Database=d", "--table", "t"}, exitConfig, "--source: engine: connection string: byte 37: unknown key"},
		{[]string{"export", "--source", "sqlserver://sa@" + n.addr + ":99?database=sample", "--password-env", "MSSQL_PASSWORD", "--table", "t"}, exitConfig, "bad port"},
		{[]string{"export", "--source", src, "--password-env", "NEWCOMER_NO_PW", "--table", "dbo.odbc5"}, exitConfig, "environment variable NEWCOMER_NO_PW is not set"},
		{[]string{"export", "--source", src, "--password-file", filepath.Join(dir, "no-pw-file"), "--table", "dbo.odbc5"}, exitConfig, "--password-file: cannot read"},
		{ex("--table", "dbo.odbc5", "--connect-timeout", "soon"), exitConfig, `"soon" is not a duration`},
		{ex("--table", "dbo.odbc5", "--timeout", "later"), exitConfig, `--timeout: engine: timeout "later"`},
		{ex("--table", "dbo.odbc5", "--to", "excel"), exitConfig, `--to excel: unknown sink type "excel"`},
		{ex("--table", "dbo.odbc5", "--set", "csv.dilect=x"), exitConfig, `--set csv.dilect: unknown option (did you mean "dialect"?)`},
		{ex("--table", "dbo.odbc5", "--set", "csv.header=maybe"), exitConfig, `"maybe": use true or false`},
		{ex("--table", "dbo.odbc5", "--set", "justtext"), exitConfig, "write --set sink.option=value"},
		{ex("--table", "dbo.odbc5", "--set", "excel.x=1"), exitConfig, `unknown sink "excel"`},
		{ex("--table", "dbo.odbc5", "--verify", "sometimes"), exitConfig, `--verify (--table dbo.odbc5): "sometimes": use none or count`},
		{ex("--table", "dbo.odbc5", "--parallel", "two"), exitConfig, `--parallel "two": want a whole number`},
		{ex("dbo.odbc5"), exitConfig, `export takes no arguments (got "dbo.odbc5")`},
		{ex("--query", "SELECT 1 AS a", "--where", "id < 2"), exitConfig, "--where shape(s) a --table extract"},
		{ex("--table", "dbo.odbc5", "--target", "postgres://u@127.0.0.1/db"), exitConfig, "--target is the server of a sink that loads one"},
		{ex("--table", "dbo.odbc5,dbo.poc48", "--name", "x"), exitConfig, "--name names one extract: give one --table (not 2) or --query"},
		{ex("--table", "dbo.odbc5", "--to", "postgres"), exitConfig, "--to postgres needs --target"},
		{ex("--table", "dbo.odbc5,dbo.poc48", "--out", "-"), exitConfig, "it takes one --table or --query (not 2)"},
		{ex("--table", "dbo.odbc5", "--columns", "nosuch"), exitConfig, `--columns (--table dbo.odbc5): column "nosuch" is not in dbo.odbc5`},
		{ex("--table", "dbo.nosuch"), exitExtract, "table dbo.nosuch not found"},
		{ex("--query", "SELECT nosuchcol FROM dbo.odbc5"), exitExtract, "Invalid column name 'nosuchcol'"},
		{[]string{"export", "--source", src, "--password-env", "WRONG_PW", "--table", "dbo.odbc5"}, exitConnect, "Login failed for user 'sa'"},
		{[]string{"export", "--source", "sqlserver://sa@" + dead + "?database=sample", "--password-env", "MSSQL_PASSWORD", "--table", "dbo.odbc5"}, exitConnect, "connection refused"},
		{[]string{"inspect"}, exitConfig, "inspect needs a job file or --source"},
		{[]string{"inspect", good, "--table", "dbo.odbc5"}, exitConfig, "not both"},
		{[]string{"tables", "--source", src, "--password-env", "MSSQL_PASSWORD", "a.b.c"}, exitConfig, "use table or schema.table"},
		{[]string{"sinks", "excel"}, exitConfig, `unknown sink "excel"`},
		{[]string{"sample-server", "--rows", "nosuch=5"}, exitConfig, `rows "nosuch": no such table`},
		{[]string{"sample-server", "--encrypt", "sometimes"}, exitConfig, `--encrypt "sometimes"`},
	}
	if len(cases) < 30 {
		t.Fatalf("%d bad inputs; the session covers at least 30", len(cases))
	}
	for _, c := range cases {
		code, out, errOut := n.cli(t, c.args...)
		all := out + errOut
		if code != c.code || strings.Count(all, c.want) != 1 {
			t.Errorf("%q: exit %d (want %d); %q appears %d times (want once):\nstdout %s\nstderr %s",
				c.args, code, c.code, c.want, strings.Count(all, c.want), out, errOut)
		}
		if last := strings.TrimSpace(errOut); !strings.HasPrefix(last[strings.LastIndex(last, "\n")+1:], "tdsextract: ") {
			t.Errorf("%q: the error is not the last line of stderr, as tdsextract: ...:\n%s", c.args, errOut)
		}
	}
}
