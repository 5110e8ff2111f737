package main

import (
	"context"
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
