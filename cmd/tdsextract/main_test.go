package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// runCLI runs the CLI in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	code := execute(context.Background(), args, out, errf)
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return code, string(o), string(e)
}

func startServer(t *testing.T, rows map[string]int64) *tdsserver.Server {
	t.Helper()
	return startSampleServer(t, tdsserver.Config{DB: sampledb.New(sampledb.Config{Seed: 1, Rows: rows})})
}

// startSampleServer starts the sample TDS server with cfg, on a free
// loopback port unless cfg.Addr says otherwise, and closes it when the
// test ends.
func startSampleServer(t *testing.T, cfg tdsserver.Config) *tdsserver.Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	srv, err := tdsserver.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// sourceURL is srv's connection URL for --source; the password goes by
// --password-env or --password-file.
func sourceURL(srv *tdsserver.Server) string {
	return fmt.Sprintf("sqlserver://sa@%s?database=sample&encrypt=disable", srv.Addr())
}

// startSource starts a sample server with rows and returns its sourceURL,
// with its password in TEST_PW (--password-env TEST_PW).
func startSource(t *testing.T, rows map[string]int64) string {
	t.Helper()
	srv := startServer(t, rows)
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	return sourceURL(srv)
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "tdsextract ") {
		t.Fatalf("version: code %d, out %q", code, out)
	}
}

// Every example job in configs/ loads strictly and validates.
func TestConfigsValidate(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("configs: %v %v", files, err)
	}
	// A dry run builds the plan, ${VAR} expanded: without the variable a
	// scheduler passes, it says which variable and where; without the
	// password variable, that it is not set (before anything connects, not
	// as a failed login).
	t.Setenv("TDSEXTRACT_SAMPLE_PASSWORD", "")
	os.Unsetenv("TDSEXTRACT_SAMPLE_PASSWORD")
	since := writeFile(t, t.TempDir(), "since.yaml", `source: {connection: "sqlserver://sa@127.0.0.1:14330?database=sample", password_env: TDSEXTRACT_SAMPLE_PASSWORD}
extracts:
  - table: sales.orders
    where: "order_id > ${SINCE_ORDER_ID}"
    sinks: [{type: csv}]
`)
	code, _, errOut := runCLI(t, "run", "--dry-run", since)
	if code != exitConfig || !strings.Contains(errOut, "SINCE_ORDER_ID") || !strings.Contains(errOut, "since.yaml: extracts[0].where") ||
		!strings.Contains(errOut, "since.yaml: source.password_env: environment variable TDSEXTRACT_SAMPLE_PASSWORD is not set") {
		t.Errorf("dry run without SINCE_ORDER_ID and the password: code %d: %s", code, errOut)
	}
	t.Setenv("TDSEXTRACT_SAMPLE_PASSWORD", tdsserver.DefaultPassword)
	for _, f := range files {
		job, err := loadJob(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := job.Validate(builtinSinks()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		code, out, errOut := runCLI(t, "run", "--dry-run", f)
		if code != 0 || !strings.Contains(out, "valid") {
			t.Errorf("run --dry-run %s: code %d out %q err %q", f, code, out, errOut)
		}
	}
}

func TestBadConfigurations(t *testing.T) {
	srv := startServer(t, map[string]int64{"dbo.poc48": 100})
	dir := t.TempDir()
	outDir := filepath.Join(dir, "out")
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	t.Setenv("TEST_BAD_PW", "wrong-password")
	good := sourceURL(srv)
	// A port nothing listens on.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()

	job := func(conn, pwEnv, extra string) string {
		return fmt.Sprintf(`name: t
source:
  connection: %q
  password_env: %s
  connect_timeout: 5s
  timeout: 30s
extracts:
  - table: dbo.poc48
    sinks:
      - type: csv
        options:
          path: %s/
%s`, conn, pwEnv, outDir, extra)
	}
	cases := []struct {
		name, body string
		code       int
		want       []string
	}{
		{"unknown key", job(good, "TEST_PW", "    tabel: x\n"), exitConfig, []string{"tabel", "bad-unknown.yaml"}},
		{"unknown top key", job(good, "TEST_PW", "") + "colour: red\n", exitConfig, []string{"colour"}},
		{"missing source", "extracts:\n  - table: dbo.poc48\n    sinks: [{type: csv}]\n", exitConfig, []string{"source.connection"}},
		{"bad connection string", job("sqlserver://sa@:notaport?database=x", "TEST_PW", ""), exitConfig, []string{"source.connection"}},
		{"unknown sink", strings.Replace(job(good, "TEST_PW", ""), "type: csv", "type: excel", 1), exitConfig, []string{"excel", "csv"}},
		{"unreachable server", job("sqlserver://sa@"+dead+"?database=sample&encrypt=disable", "TEST_PW", ""), exitConnect, []string{dead}},
		{"wrong password", job(good, "TEST_BAD_PW", ""), exitConnect, []string{"18456"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(outDir)
			name := "bad-" + strings.Fields(c.name)[0] + ".yaml"
			p := writeFile(t, dir, name, c.body)
			code, out, errOut := runCLI(t, "--log-level", "warn", "run", p)
			if code != c.code {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut+out, w) {
					t.Errorf("message does not mention %q:\n%s%s", w, out, errOut)
				}
			}
			if strings.Contains(errOut+out, "wrong-password") || strings.Contains(errOut+out, tdsserver.DefaultPassword) {
				t.Errorf("a secret was printed:\n%s%s", out, errOut)
			}
			if files := sinktest.Files(outDir); len(files) > 0 {
				t.Errorf("files written on failure: %v", files)
			}
		})
	}
}

func TestExportAndInspect(t *testing.T) {
	src := startSource(t, map[string]int64{"dbo.poc48": 2500, "sales.orders": 300})
	dir := t.TempDir()
	sum := filepath.Join(dir, "summary.json")
	code, out, errOut := runCLI(t, "--log-level", "warn", "export", "--source", src, "--password-env", "TEST_PW",
		"--table", "dbo.poc48", "--table", "sales.orders", "--to", "csv", "--out", dir, "--timeout", "1m",
		"--verify", "count", "--summary-json", sum)
	if code != 0 {
		t.Fatalf("export: code %d\n%s\n%s", code, out, errOut)
	}
	f, err := os.Open(filepath.Join(dir, "poc48.csv"))
	if err != nil {
		t.Fatalf("poc48.csv: %v (files: %v)", err, sinktest.Files(dir))
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2501 || len(recs[0]) != 48 {
		t.Fatalf("poc48.csv: %d records of %d fields, want 2501 of 48", len(recs), len(recs[0]))
	}
	s := readJSON[engine.Summary](t, sum)
	if !s.OK || len(s.Extracts) != 2 || s.Extracts[0].Rows != 2500 || s.Extracts[1].Rows != 300 || s.Extracts[0].Verified != "count" {
		t.Fatalf("summary: %+v", s)
	}
	if !strings.Contains(out, "poc48") || !strings.Contains(out, "2500") {
		t.Errorf("printed summary lacks the extract:\n%s", out)
	}

	code, out, errOut = runCLI(t, "inspect", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.type_matrix")
	if code != 0 {
		t.Fatalf("inspect: code %d\n%s\n%s", code, out, errOut)
	}
	for _, w := range []string{"datetime2(7)", "decimal(38,38)", "uniqueidentifier", "geography", "[c_geography].STAsBinary() AS [c_geography]", "DECIMAL(38,38)", "TIMESTAMP(MICROS, not UTC-adjusted) (LOSSY)", "100 ns digit is truncated",
		"type_matrix -> parquet: memory: about ", "--set parquet.row_group_bytes=8MiB"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out+errOut, tdsserver.DefaultPassword) {
		t.Errorf("inspect printed the password")
	}
	// Beside csv, which reads STAsBinary(), inspect says why parquet gets
	// WKB without the SRID; to parquet alone the spatial columns are
	// selected as stored and mapped to GeoParquet, as a run sends them.
	if w := "spatial: geography and geometry go through STAsBinary() (WKB without the SRID) for csv; an extract whose sinks are only parquet selects them as stored"; !strings.Contains(out, w) {
		t.Errorf("inspect to csv and parquet lacks %q:\n%s", w, out)
	}
	code, out, errOut = runCLI(t, "inspect", "--source", src, "--password-env", "TEST_PW", "--table", "dbo.type_matrix", "--to", "parquet")
	if code != 0 {
		t.Fatalf("inspect --to parquet: code %d\n%s\n%s", code, out, errOut)
	}
	for _, w := range []string{"[c_xml], [c_geography], [c_geometry], [c_hierarchyid].ToString() AS [c_hierarchyid]", "BYTE_ARRAY WKB (GeoParquet 1.1"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect --to parquet lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "STAsBinary") {
		t.Errorf("inspect --to parquet converts spatial columns:\n%s", out)
	}
}

func TestExportUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"export"},
		{"export", "--source", "sqlserver://sa@127.0.0.1:1"},
		{"run"},
		{"export", "--no-such-flag"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitConfig {
			t.Errorf("%v: code %d, want %d (%s)", args, code, exitConfig, errOut)
		}
		if strings.TrimSpace(errOut) == "" {
			t.Errorf("%v: no message", args)
		}
	}
}

func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("demo exports every sample table")
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "--log-level", "warn", "demo", "--out", dir)
	if code != 0 {
		t.Fatalf("demo: code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"csv/poc48.csv", "parquet/poc48.parquet", "csv/type_matrix.csv", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("demo did not write %s: %v (have %v)", want, err, sinktest.Files(dir))
		}
	}
	if !strings.Contains(out, "ok in") {
		t.Errorf("demo summary:\n%s", out)
	}
}

// export --set and inspect --set resolve sink options through the sink's
// spec; inspect of a job file shows the job's columns, overrides and
// options: the mapping the run uses.
func TestSetOptionsAndInspectJob(t *testing.T) {
	src := startSource(t, map[string]int64{"warehouse.movements": 40})
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "--log-level", "warn", "export", "--source", src, "--password-env", "TEST_PW",
		"--table", "warehouse.sites", "--to", "csv", "--out", dir, "--set", "csv.header=false", "--set", "csv.delimiter=;")
	if code != 0 {
		t.Fatalf("export --set: code %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "warehouse.sites.csv"))
	if err != nil {
		t.Fatalf("%v (files %v)", err, sinktest.Files(dir))
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if strings.HasPrefix(first, "site_id") || !strings.HasPrefix(first, "100;") {
		t.Errorf("header=false, delimiter=; not applied: %q", first)
	}
	code, _, errOut = runCLI(t, "export", "--source", src, "--table", "warehouse.sites", "--to", "csv", "--set", "csv.dilect=postgres")
	if code != exitConfig || !strings.Contains(errOut, `--set csv.dilect: unknown option (did you mean "dialect"?)`) {
		t.Errorf("misspelt --set: code %d: %s", code, errOut)
	}

	inspectOut := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"inspect"}, args...)...)
		if code != 0 {
			t.Fatalf("inspect %v: code %d\n%s\n%s", args, code, out, errOut)
		}
		return out
	}
	base := []string{"--source", src, "--password-env", "TEST_PW", "--table", "dbo.type_matrix"}
	def := inspectOut(append(base, "--to", "csv,parquet")...)
	set := inspectOut(append(base, "--to", "csv,parquet", "--set", "csv.bool_format=1_0", "--set", "parquet.timestamp_unit=nanos")...)
	if !strings.Contains(def, "bool as true/false") || !strings.Contains(set, "bool as 1/0") {
		t.Errorf("csv.bool_format not reflected:\n%s", set)
	}
	if !strings.Contains(def, "TIMESTAMP(MICROS") || !strings.Contains(set, "TIMESTAMP(NANOS") {
		t.Errorf("parquet.timestamp_unit not reflected:\n%s", set)
	}

	// A job file: its columns, its convert override and its sink options.
	job := writeFile(t, dir, "job.yaml", fmt.Sprintf(`name: inspect-me
source:
  connection: %q
  password_env: TEST_PW
extracts:
  - table: dbo.type_matrix
    columns: [c_bit, c_geography]
    convert:
      - {column: c_geography, expr: "[c_geography].STAsText()"}
    sinks:
      - type: csv
        options: {bool_format: "1_0"}
`, src))
	out = inspectOut(job)
	for _, w := range []string{"select: SELECT [c_bit], [c_geography].STAsText() AS [c_geography] FROM [dbo].[type_matrix]",
		"bool as 1/0", "geography as [c_geography].STAsText()", "UTF-8 text"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect job.yaml lacks %q:\n%s", w, out)
		}
	}
	// What the catalog knows beyond the types.
	out = inspectOut("--source", src, "--password-env", "TEST_PW", "--table", "warehouse.sites", "--table", "warehouse.movements", "--to", "csv")
	for _, w := range []string{"identity site_id: seed 100, increment 10, last value 240", "unique UQ_sites_code (code)",
		"primary key PK_sites (site_id), clustered",
		"foreign key FK_movements_stock (site_id, sku) -> warehouse.stock (site_id, sku) on delete cascade"} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect lacks %q:\n%s", w, out)
		}
	}
	if code, _, errOut := runCLI(t, "inspect", job, "--table", "x"); code != exitConfig {
		t.Errorf("inspect with a job and flags: code %d %s", code, errOut)
	}
}
