package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// The migrate suite: `tdsextract migrate` beside pgloader, each a child
// process migrating the same tables of the same sample server into its
// own fresh database of one PostgreSQL, repetitions interleaved, the
// first of each discarded. Wall time and the child's peak resident set
// (getrusage's ru_maxrss) are reported as medians and as ratios, at every
// row count asked for, so that memory flat in the row count shows. After
// every repetition each table's row count in the target is checked, so a
// leg that loads less is an error, not a fast result.
//
// Two kinds of target (-shapes): one dbo table (lineitem by default), or
// the whole sales schema ("sales": customers, products, orders and
// order_lines with their primary keys, unique and secondary indexes and
// the three foreign keys between them), scaled by sampledb.SalesRows so
// that order_lines has the row count asked for and the other tables keep
// their proportions (and every foreign key holds). tdsextract migrates it
// with --include 'sales.*'; pgloader with INCLUDING ONLY TABLE NAMES LIKE
// '%' IN SCHEMA 'sales' and the options of the lineitem leg (include
// drop, create tables, create indexes, reset sequences, foreign keys).
// The sales schema needs no CAST rule: its defaults (getdate(), N'new',
// ((0)), ((1))) are ones pgloader translates (CURRENT_TIMESTAMP) or copies
// as valid literals; it is the warehouse schema's NEXT VALUE FOR and
// CONVERT defaults that stop pgloader (engine/migrate's pgloader
// comparison names the rules those need). Both legs then build the same
// work: 4 primary keys, 2 unique and 6 secondary indexes (pgloader makes
// INCLUDE columns key columns) and 3 foreign keys, after the data.
// pgloader's identities become plain integer columns, which costs it
// nothing here. The load file's clauses are written into the results
// file.

// migrateSample is one repetition of one leg.
type migrateSample struct {
	wall   time.Duration
	maxRSS int64         // bytes
	pgCPU  time.Duration // the server's CPU time during the leg; 0: not measured
	// cpu is the client's own CPU time (user and system, its children
	// included: for pgloader, the process that also runs FreeTDS).
	cpu time.Duration
}

// migrateTarget is what the suite migrates at one row count.
type migrateTarget struct {
	name     string                         // "sales", or a dbo table
	include  string                         // tdsextract migrate --include
	pgloader string                         // pgloader's INCLUDING (and CAST) clauses
	rows     func(n int64) map[string]int64 // the sample server's Config.Rows, keyed schema.table
}

// migrateTargetFor returns the target -shapes names.
func migrateTargetFor(shape string) migrateTarget {
	if shape == "sales" {
		return migrateTarget{name: "sales", include: "sales.*",
			pgloader: "INCLUDING ONLY TABLE NAMES LIKE '%' IN SCHEMA 'sales'",
			rows:     sampledb.SalesRows}
	}
	return migrateTarget{name: shape, include: "dbo." + shape,
		pgloader: fmt.Sprintf("INCLUDING ONLY TABLE NAMES LIKE '%s' IN SCHEMA 'dbo'", shape),
		rows:     func(n int64) map[string]int64 { return map[string]int64{"dbo." + shape: n} }}
}

// MigrateResult is one leg at one row count.
type MigrateResult struct {
	Table       string  `json:"table"`      // the target: "sales" or a dbo table
	Rows        int64   `json:"rows"`       // the row count asked for (sales: of order_lines)
	TotalRows   int64   `json:"total_rows"` // the rows of every table migrated
	Leg         string  `json:"leg"`
	Reps        int     `json:"reps"`
	WallMedianS float64 `json:"wall_median_s"`
	RSSMedianMB float64 `json:"peak_rss_median_mib"`
	// PGCPUMedianS is the PostgreSQL server's CPU time during the leg
	// (user and system, every backend and worker), when the harness
	// started the server itself.
	PGCPUMedianS float64 `json:"pg_cpu_median_s,omitempty"`
	// ClientCPUMedianS is the migrating process's own CPU time.
	ClientCPUMedianS float64 `json:"client_cpu_median_s"`
	RowsPerSec       float64 `json:"rows_per_s"` // TotalRows per second of median wall time
	// WallS is every kept repetition's wall time, in order: repetition i
	// of each leg ran back to back with repetition i of the others.
	WallS []float64 `json:"wall_s"`
}

// baselineLeg names the leg of -baseline: another build of tdsextract,
// run beside this one so that two commits are compared in one run.
const baselineLeg = "baseline tdsextract migrate"

// migrateLegs says which legs run beside this build's migrate.
type migrateLegs struct {
	baseline string // a tdsextract binary from another commit, or ""
	// variant is extra migrate flags for one more leg of this build
	// ("--split-rows 0", say), alternating with the default one.
	variant  []string
	pgloader bool
	// pgDataDir is the server's data directory when the harness started
	// it: its CPU time is measured per leg.
	pgDataDir string
}

// runMigrateSuite runs the suite on target at each row count; addrFor
// starts (or names) a sample server with those row counts.
func runMigrateSuite(target migrateTarget, rowCounts []int64, reps int, pgURL string, addrFor func(rows map[string]int64) (string, func()), with migrateLegs) ([]MigrateResult, error) {
	bin, err := buildTdsextract()
	if err != nil {
		return nil, err
	}
	var pgloader string
	if with.pgloader {
		if pgloader, err = exec.LookPath("pgloader"); err != nil {
			return nil, fmt.Errorf("pgloader not installed (apt-get install pgloader)")
		}
	}
	ctl, err := pgx.Connect(context.Background(), pgURL)
	if err != nil {
		return nil, err
	}
	defer ctl.Close(context.Background())
	var out []MigrateResult
	for _, n := range rowCounts {
		want := target.rows(n)
		var total int64
		for _, v := range want {
			total += v
		}
		addr, stop := addrFor(want)
		type leg struct {
			name string
			db   string
			run  func(url string) (migrateSample, error)
		}
		migrate := func(bin string, extra ...string) func(url string) (migrateSample, error) {
			return func(url string) (migrateSample, error) {
				args := append([]string{"--quiet", "migrate", "--source", fmt.Sprintf("sqlserver://%s@%s?database=sample&encrypt=disable", benchUser, addr),
					"--password-env", "BENCH_SOURCE_PASSWORD", "--include", target.include, "--target", url}, extra...)
				return child(exec.Command(bin, args...), nil)
			}
		}
		legs := []leg{{"tdsextract migrate", "bench_migrate_tdsx", migrate(bin)}}
		if len(with.variant) > 0 {
			legs = append(legs, leg{"tdsextract migrate " + strings.Join(with.variant, " "), "bench_migrate_var", migrate(bin, with.variant...)})
		}
		if with.baseline != "" {
			legs = append(legs, leg{baselineLeg, "bench_migrate_base", migrate(with.baseline)})
		}
		if with.pgloader {
			legs = append(legs, leg{"pgloader", "bench_migrate_pgl", func(url string) (migrateSample, error) {
				return pgloaderChild(pgloader, addr, target.pgloader, url)
			}})
		}
		samples := make([][]migrateSample, len(legs))
		for r := 0; r < reps; r++ {
			for i, l := range legs {
				url, err := freshDatabase(ctl, pgURL, l.db)
				if err != nil {
					stop()
					return nil, err
				}
				cpu0, cpuOK := serverCPU(with.pgDataDir)
				s, err := l.run(url)
				if err == nil {
					err = checkRowCounts(url, want)
				}
				if err == nil {
					// The database goes at once: left in place, the
					// autovacuum its load sets off would run during the
					// next leg and be counted there.
					_, err = ctl.Exec(context.Background(), "DROP DATABASE IF EXISTS "+l.db+" WITH (FORCE)")
				}
				if cpu1, ok := serverCPU(with.pgDataDir); err == nil && cpuOK && ok {
					s.pgCPU = cpu1 - cpu0
				}
				if err != nil {
					stop()
					return nil, fmt.Errorf("%s: %w", l.name, err)
				}
				if r > 0 { // the first repetition warms caches: discarded
					samples[i] = append(samples[i], s)
				}
				fmt.Fprintf(os.Stderr, "bench: migrate %s %d rows rep %d: %s %.2fs %.0f MiB, CPU %.2fs, PostgreSQL CPU %.2fs\n", target.name, n, r, l.name, s.wall.Seconds(), float64(s.maxRSS)/(1<<20), s.cpu.Seconds(), s.pgCPU.Seconds())
			}
		}
		stop()
		for i, l := range legs {
			var walls, rss, cpu, ccpu []float64
			for _, s := range samples[i] {
				walls, rss = append(walls, s.wall.Seconds()), append(rss, float64(s.maxRSS)/(1<<20))
				ccpu = append(ccpu, s.cpu.Seconds())
				if s.pgCPU > 0 {
					cpu = append(cpu, s.pgCPU.Seconds())
				}
			}
			w := median(walls)
			out = append(out, MigrateResult{Table: target.name, Rows: n, TotalRows: total, Leg: l.name, Reps: len(walls), WallMedianS: w,
				RSSMedianMB: median(rss), RowsPerSec: float64(total) / w, WallS: walls, PGCPUMedianS: median(cpu), ClientCPUMedianS: median(ccpu)})
		}
	}
	return out, nil
}

// checkRowCounts compares every table's row count in the database at url
// with want (keyed schema.table).
func checkRowCounts(url string, want map[string]int64) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	var bad []string
	for _, name := range names {
		var got int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+name).Scan(&got); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if got != want[name] {
			bad = append(bad, fmt.Sprintf("%s has %d rows, want %d", name, got, want[name]))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("in the target, %s", strings.Join(bad, "; "))
	}
	return nil
}

// buildTdsextract builds the CLI into a temporary directory.
func buildTdsextract() (string, error) {
	dir, err := os.MkdirTemp("", "tdsx-bench-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "tdsextract")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tdsextract/tdsextract/cmd/tdsextract")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// child runs cmd and measures its wall time and peak resident set.
func child(cmd *exec.Cmd, env []string) (migrateSample, error) {
	cmd.Env = append(append(os.Environ(), "BENCH_SOURCE_PASSWORD="+benchPass), env...)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(t0)
	if err != nil {
		return migrateSample{}, fmt.Errorf("%v\n%s", err, out)
	}
	ps := cmd.ProcessState
	return migrateSample{wall: wall, maxRSS: peakRSS(ps), cpu: ps.UserTime() + ps.SystemTime()}, nil
}

// pgloaderWith is the WITH clause of both targets' load files.
const pgloaderWith = "include drop, create tables, create indexes, reset sequences, foreign keys"

func pgloaderChild(bin, addr, including, target string) (migrateSample, error) {
	tmp, err := os.MkdirTemp(shmDir(), "tdsx-pgloader-")
	if err != nil {
		return migrateSample{}, err
	}
	defer os.RemoveAll(tmp)
	host, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(tmp, "freetds.conf")
	if err := os.WriteFile(conf, []byte("[global]\n\ttds version = 7.4\n\tclient charset = UTF-8\n\tencryption = off\n"), 0o644); err != nil {
		return migrateSample{}, err
	}
	load := filepath.Join(tmp, "load")
	cmd := fmt.Sprintf(`LOAD DATABASE
  FROM mssql://%s:%s@%s:%s/sample
  INTO %s
  WITH %s
  %s;
`, benchUser, benchPass, host, port, strings.Split(target, "?")[0], pgloaderWith, including)
	if err := os.WriteFile(load, []byte(cmd), 0o644); err != nil {
		return migrateSample{}, err
	}
	return child(exec.Command(bin, "--no-ssl-cert-verification", "--root-dir", filepath.Join(tmp, "root"), load),
		[]string{"FREETDSCONF=" + conf, "TDSVER=7.4", "HOME=" + tmp, "TMPDIR=" + tmp, "LANG=C.UTF-8"})
}

// freshDatabase drops and creates name and returns its URL.
func freshDatabase(ctl *pgx.Conn, pgURL, name string) (string, error) {
	ctx := context.Background()
	if _, err := ctl.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := ctl.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := neturl.Parse(pgURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// migrateMarkdown is the suite's table, with the ratios per target and
// row count.
func migrateMarkdown(rs []MigrateResult) string {
	var b strings.Builder
	b.WriteString("| target | rows | rows, all tables | leg | wall s (median) | rows/s | peak RSS MiB (median) | client CPU s (median) | PostgreSQL CPU s (median) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rs {
		cpu := "-"
		if r.PGCPUMedianS > 0 {
			cpu = fmt.Sprintf("%.2f", r.PGCPUMedianS)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %.2f | %.0f | %.0f | %.2f | %s |\n", r.Table, r.Rows, r.TotalRows, r.Leg, r.WallMedianS, r.RowsPerSec, r.RSSMedianMB, r.ClientCPUMedianS, cpu)
	}
	type key struct {
		table string
		rows  int64
	}
	by := map[key]map[string]MigrateResult{}
	var ks []key
	for _, r := range rs {
		k := key{r.Table, r.Rows}
		if by[k] == nil {
			by[k] = map[string]MigrateResult{}
			ks = append(ks, k)
		}
		by[k][r.Leg] = r
	}
	sort.SliceStable(ks, func(i, j int) bool {
		return ks[i].table < ks[j].table || ks[i].table == ks[j].table && ks[i].rows < ks[j].rows
	})
	b.WriteString("\n")
	for _, k := range ks {
		t, p, base := by[k]["tdsextract migrate"], by[k]["pgloader"], by[k][baselineLeg]
		if t.WallMedianS > 0 && p.WallMedianS > 0 {
			fmt.Fprintf(&b, "- %s, %d rows: tdsextract's wall time is %.3f of pgloader's (%.1fx faster); peak RSS %.2f of pgloader's\n",
				k.table, k.rows, t.WallMedianS/p.WallMedianS, p.WallMedianS/t.WallMedianS, t.RSSMedianMB/p.RSSMedianMB)
		}
		if t.PGCPUMedianS > 0 {
			// The server's own work, spread over every core, bounds any
			// client's wall time from below.
			fmt.Fprintf(&b, "- %s, %d rows: PostgreSQL alone used %.2f s of CPU for tdsextract's migration: at least %.2f s of wall time on %d cores whatever the client costs",
				k.table, k.rows, t.PGCPUMedianS, t.PGCPUMedianS/float64(runtime.NumCPU()), runtime.NumCPU())
			if p.WallMedianS > 0 {
				fmt.Fprintf(&b, ", %.3f of pgloader's wall time", t.PGCPUMedianS/float64(runtime.NumCPU())/p.WallMedianS)
			}
			b.WriteString("\n")
		}
		if t.WallMedianS > 0 && base.WallMedianS > 0 {
			fmt.Fprintf(&b, "- %s, %d rows: this build's wall time is %.3f of the baseline's (medians); per repetition pair %s\n",
				k.table, k.rows, t.WallMedianS/base.WallMedianS, pairRatios(t.WallS, base.WallS))
		}
	}
	return b.String()
}

// pairRatios is a/b for each repetition both legs ran, back to back, and
// their median: on a noisy machine the pairs say more than two medians.
func pairRatios(a, b []float64) string {
	var rs []float64
	var parts []string
	for i := range min(len(a), len(b)) {
		rs = append(rs, a[i]/b[i])
		parts = append(parts, fmt.Sprintf("%.3f", a[i]/b[i]))
	}
	if len(rs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s, median %.3f", strings.Join(parts, " "), median(rs))
}

// migrateConditions describes a run for the results file: the command,
// the commit, the load average before and after, pgloader's version and
// every target's load-file clauses, so that the figures can be read
// (and the pgloader side repeated) without the harness's source.
func migrateConditions(targets []migrateTarget, commit, loadBefore string, pgSettings []string) string {
	var b strings.Builder
	b.WriteString("# tdsextract migrate beside pgloader\n\n")
	fmt.Fprintf(&b, "`go run ./bench %s` at %s, %s/%s, %d CPUs; load average %s before the run, %s after.\n",
		shellArgs(os.Args[1:]), commit, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadBefore, loadAverage())
	b.WriteString("Each leg is a child process migrating the target from one sample server (in the harness's process)\n" +
		"into a fresh database of one PostgreSQL, legs alternating; medians of the repetitions after a discarded\n" +
		"first; peak RSS is the child's ru_maxrss and client CPU its user and system time. Every table's row\n" +
		"count is checked after every repetition.\n" +
		"PostgreSQL CPU is the server's user and system time during a leg (every backend, parallel worker,\n" +
		"autovacuum and background process, read from /proc once the leg's database is dropped, which\n" +
		"also stops the autovacuum its load set off from running into the next leg; a server given with\n" +
		"-pg is not measured).\n")
	if len(pgSettings) > 0 {
		fmt.Fprintf(&b, "The throwaway PostgreSQL 15 ran with %s.\n", strings.Join(pgSettings, ", "))
	}
	v, _ := exec.Command("pgloader", "--version").Output()
	line, _, _ := strings.Cut(string(v), "\n")
	fmt.Fprintf(&b, "pgloader (%s) reads SQL Server through FreeTDS (tds version 7.4); its load file is\n"+
		"`LOAD DATABASE FROM mssql://... INTO postgresql://... WITH %s` and, per target:\n\n", strings.TrimSpace(line), pgloaderWith)
	for _, t := range targets {
		fmt.Fprintf(&b, "- %s (tdsextract: `--include '%s'`): `%s`\n", t.name, t.include, strings.Join(strings.Fields(t.pgloader), " "))
	}
	b.WriteString("\n")
	return b.String()
}

// headCommit is the work tree's commit, with "+changes" when it has
// uncommitted changes (the binary measured is built from the work tree).
func headCommit() string {
	c, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	commit := strings.TrimSpace(string(c))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		commit += "+changes"
	}
	return commit
}

// loadAverage is /proc/loadavg's three figures, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func writeMigrateResults(rs []MigrateResult, conditions, md, out string) {
	table := migrateMarkdown(rs)
	fmt.Print(table)
	if b, err := json.MarshalIndent(rs, "", "  "); err == nil && out != "" {
		_ = os.WriteFile(out, append(b, '\n'), 0o644)
	}
	if md != "" {
		_ = os.WriteFile(md, []byte(conditions+table), 0o644)
	}
}

// shellArgs joins args as a shell would need them typed: an argument with
// a space or a quote in it is single-quoted.
func shellArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
