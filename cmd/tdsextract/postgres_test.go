package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
)

// export --to postgres --target loads each table into the table of the
// same name in the target's default schema, creating it; a PostgreSQL
// that cannot be reached or refuses the login is exit code 3 with the
// password never printed.
func TestExportToPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	src := startSource(t, map[string]int64{"dbo.poc48": 1500, "sales.orders": 200})
	code, out, errOut := runCLI(t, "--log-level", "warn", "export", "--source", src, "--password-env", "TEST_PW",
		"--table", "dbo.poc48", "--table", "sales.orders", "--to", "postgres", "--target", pg, "--verify", "count")
	if code != 0 {
		t.Fatalf("export: code %d\n%s\n%s", code, out, errOut)
	}
	pgcheck.Counts(t, pgcheck.Connect(t, pg), map[string]int64{"public.poc48": 1500, "public.orders": 200})
	if !strings.Contains(out, "-> postgres: 1500 rows") {
		t.Errorf("summary:\n%s", out)
	}
	code, _, errOut = runCLI(t, "--log-level", "warn", "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.poc48", "--to", "postgres")
	if code != exitConfig || !strings.Contains(errOut, "--target") {
		t.Errorf("no --target: code %d %s", code, errOut)
	}

	// inspect shows the PostgreSQL mapping (without contacting PostgreSQL).
	code, out, errOut = runCLI(t, "inspect", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.type_matrix",
		"--to", "postgres", "--set", "postgres.connection=postgres://nobody@127.0.0.1:1/x")
	if code != 0 || !strings.Contains(out, "numeric(38,38)") || !strings.Contains(out, "timestamptz(6) + c_datetimeoffset_7__offset_minutes smallint (LOSSY)") {
		t.Errorf("inspect --to postgres: code %d\n%s\n%s", code, out, errOut)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	const pw = "pg-Secret-99"
	for _, target := range []string{
		"postgres://app:" + pw + "@" + dead + "/db?sslmode=disable&connect_timeout=5",
		strings.Replace(pg, "postgres@", "nosuchrole:"+pw+"@", 1),
	} {
		code, out, errOut := runCLI(t, "--log-level", "warn", "export", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.poc48", "--to", "postgres", "--target", target)
		if code != exitConnect {
			t.Errorf("%s: exit code %d, want %d\n%s%s", secret.Secret(target), code, exitConnect, out, errOut)
		}
		if strings.Contains(out+errOut, pw) {
			t.Errorf("the password was printed:\n%s%s", out, errOut)
		}
	}
}

// configs/postgres.yaml runs as written against the sample server and a
// real PostgreSQL (only the addresses are the test's).
func TestPostgresConfigRuns(t *testing.T) {
	pg := pgtest.Start(t)
	srv := startServer(t, map[string]int64{"sales.customers": 300, "sales.orders": 400})
	job, err := loadJob("../../configs/postgres.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	job.Source.Connection = secret.Secret(sourceURL(srv))
	job.SummaryFile = filepath.Join(dir, "summary.json")
	t.Setenv("TDSEXTRACT_SAMPLE_PASSWORD", tdsserver.DefaultPassword)
	t.Setenv("PGPASSWORD_WAREHOUSE", "unused: the test server trusts local logins")
	retarget := func(opts map[string]any) {
		if _, ok := opts["connection"]; ok {
			opts["connection"] = pg
		}
		if p, ok := opts["path"].(string); ok {
			opts["path"] = filepath.Join(dir, p) + "/"
		}
	}
	for _, s := range job.Sinks {
		retarget(s.Options)
	}
	for _, e := range job.Extracts {
		for _, s := range e.Sinks {
			retarget(s.Options)
		}
	}
	g := &globalOpts{stdout: os.Stdout, stderr: os.Stderr, registry: builtinSinks(), quiet: true}
	if err := runJob(context.Background(), g, job, nil, nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := pgcheck.Connect(t, pg)
	pgcheck.Counts(t, conn, map[string]int64{"sales.customers": 300, "sales.orders": 400, "staging.all_types": 40})
	var dto string
	var amount *string
	if err := conn.QueryRow(ctx, "SELECT dto_as_text, amount::text FROM staging.all_types WHERE id = 2").Scan(&dto, &amount); err != nil || !strings.HasSuffix(dto, "+14:00") {
		t.Errorf("overrides: %q %v", dto, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out/postgres/parquet/type_matrix.parquet")); err != nil {
		t.Errorf("the tee's parquet file: %v", err)
	}
}

// A partitioned extract into PostgreSQL: the parts load their own staging
// tables, and the target receives every part at once when the last is in.
// A run with a failing part leaves the target as it was (its old rows,
// not a single new one) and no manifest; the run resumed loads only the
// missing part and then replaces the table with all rows.
func TestPartitionedPostgresAllOrNothing(t *testing.T) {
	pg := pgtest.Start(t)
	srv := startServer(t, map[string]int64{"dbo.poc48": 2000})
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	dir := t.TempDir()
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte(fmt.Sprintf(`name: pgparts
source:
  connection: sqlserver://sa@%s?database=sample&encrypt=disable
  password_env: TEST_PW
parallel: 2
state_dir: %s
retry: {attempts: 1}
extracts:
  - table: dbo.poc48
    partition: {column: id, count: 4}
    sinks:
      - type: postgres
        options: {connection: "%s", mode: replace}
`, srv.Addr(), filepath.Join(dir, "state"), pg)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := pgcheck.Connect(t, pg)
	if _, err := conn.Exec(ctx, "CREATE TABLE public.poc48 (old int); INSERT INTO public.poc48 VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}

	// The last part (501 rows, the others have at most 500) fails: its
	// 501st row is malformed.
	if err := srv.SetFaults(tdsserver.Faults{MalformedAtRow: 501, Table: "poc48"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "--quiet", "run", job)
	if code == 0 {
		t.Fatalf("run with a failing part succeeded:\n%s", out)
	}
	if n := count("SELECT count(*) FROM public.poc48"); n != 2 {
		t.Fatalf("after a failed part the target has %d rows, want its 2 old ones\n%s%s", n, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "manifest.json")); err == nil {
		t.Fatal("manifest after a failed run")
	}

	if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "run", job)
	if code != 0 {
		t.Fatalf("resumed run: exit %d\n%s%s", code, out, errOut)
	}
	if n := count("SELECT count(DISTINCT id) FROM public.poc48"); n != 2000 || count("SELECT count(*) FROM public.poc48") != 2000 {
		t.Errorf("target has %d distinct ids, want 2000", n)
	}
	if n := count("SELECT count(*) FROM pg_class WHERE relname LIKE 'poc48__tdsx_p%'"); n != 0 {
		t.Errorf("%d staging tables left", n)
	}
	if !strings.Contains(out, "finished by an earlier run") {
		t.Errorf("the resumed run did not skip the finished parts:\n%s", out)
	}
	// Combining again (a commit after a crash that followed the combine)
	// changes nothing.
	if code, out, errOut := runCLI(t, "commit", job); code != 0 {
		t.Fatalf("commit: exit %d\n%s%s", code, out, errOut)
	}
	if n := count("SELECT count(*) FROM public.poc48"); n != 2000 {
		t.Errorf("after a second combine: %d rows", n)
	}
}
