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
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The migrate suite: `tdsextract migrate` beside pgloader, each a child
// process migrating the same table of the same sample server into its
// own fresh database of one PostgreSQL, repetitions interleaved, the
// first of each discarded. Wall time and the child's peak resident set
// (getrusage's ru_maxrss) are reported as medians and as ratios, at every
// row count asked for, so that memory flat in the row count shows.

// migrateSample is one repetition of one leg.
type migrateSample struct {
	wall   time.Duration
	maxRSS int64 // bytes
}

// MigrateResult is one leg at one row count.
type MigrateResult struct {
	Table       string  `json:"table"`
	Rows        int64   `json:"rows"`
	Leg         string  `json:"leg"`
	Reps        int     `json:"reps"`
	WallMedianS float64 `json:"wall_median_s"`
	RSSMedianMB float64 `json:"peak_rss_median_mib"`
	RowsPerSec  float64 `json:"rows_per_s"`
}

// runMigrateSuite runs the suite on table at each row count; addrFor
// starts (or names) a sample server with that many rows.
func runMigrateSuite(table string, rowCounts []int64, reps int, pgURL string, addrFor func(rows int64) (string, func())) ([]MigrateResult, error) {
	bin, err := buildTdsextract()
	if err != nil {
		return nil, err
	}
	pgloader, err := exec.LookPath("pgloader")
	if err != nil {
		return nil, fmt.Errorf("pgloader not installed (apt-get install pgloader)")
	}
	ctl, err := pgx.Connect(context.Background(), pgURL)
	if err != nil {
		return nil, err
	}
	defer ctl.Close(context.Background())
	var out []MigrateResult
	for _, n := range rowCounts {
		addr, stop := addrFor(n)
		legs := []struct {
			name string
			db   string
			run  func(target string) (migrateSample, error)
		}{
			{"tdsextract migrate", "bench_migrate_tdsx", func(target string) (migrateSample, error) {
				return child(exec.Command(bin, "--quiet", "migrate", "--source", fmt.Sprintf("sqlserver://%s@%s?database=sample&encrypt=disable", benchUser, addr),
					"--password-env", "BENCH_SOURCE_PASSWORD", "--include", "dbo."+table, "--target", target), nil)
			}},
			{"pgloader", "bench_migrate_pgl", func(target string) (migrateSample, error) {
				return pgloaderChild(pgloader, addr, table, target)
			}},
		}
		samples := make([][]migrateSample, len(legs))
		for r := 0; r < reps; r++ {
			for i, l := range legs {
				target, err := freshDatabase(ctl, pgURL, l.db)
				if err != nil {
					stop()
					return nil, err
				}
				s, err := l.run(target)
				if err != nil {
					stop()
					return nil, fmt.Errorf("%s: %w", l.name, err)
				}
				var got int64
				c, err := pgx.Connect(context.Background(), target)
				if err == nil {
					err = c.QueryRow(context.Background(), "SELECT count(*) FROM dbo."+table).Scan(&got)
					c.Close(context.Background())
				}
				if err != nil || got != n {
					stop()
					return nil, fmt.Errorf("%s: %d rows in the target, want %d (%v)", l.name, got, n, err)
				}
				if r > 0 { // the first repetition warms caches: discarded
					samples[i] = append(samples[i], s)
				}
				fmt.Fprintf(os.Stderr, "bench: migrate %s %d rows rep %d: %s %.2fs %.0f MiB\n", table, n, r, l.name, s.wall.Seconds(), float64(s.maxRSS)/(1<<20))
			}
		}
		stop()
		for i, l := range legs {
			var walls, rss []float64
			for _, s := range samples[i] {
				walls, rss = append(walls, s.wall.Seconds()), append(rss, float64(s.maxRSS)/(1<<20))
			}
			w := median(walls)
			out = append(out, MigrateResult{Table: table, Rows: n, Leg: l.name, Reps: len(walls), WallMedianS: w,
				RSSMedianMB: median(rss), RowsPerSec: float64(n) / w})
		}
	}
	return out, nil
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
	return migrateSample{wall: wall, maxRSS: peakRSS(cmd.ProcessState)}, nil
}

func pgloaderChild(bin, addr, table, target string) (migrateSample, error) {
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
  WITH include drop, create tables, create indexes, reset sequences, foreign keys
  INCLUDING ONLY TABLE NAMES LIKE '%s' IN SCHEMA 'dbo';
`, benchUser, benchPass, host, port, strings.Split(target, "?")[0], table)
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

// migrateMarkdown is the suite's table, with the ratios per row count.
func migrateMarkdown(rs []MigrateResult) string {
	var b strings.Builder
	b.WriteString("| table | rows | leg | wall s (median) | rows/s | peak RSS MiB (median) |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %d | %s | %.2f | %.0f | %.0f |\n", r.Table, r.Rows, r.Leg, r.WallMedianS, r.RowsPerSec, r.RSSMedianMB)
	}
	by := map[int64]map[string]MigrateResult{}
	var ns []int64
	for _, r := range rs {
		if by[r.Rows] == nil {
			by[r.Rows] = map[string]MigrateResult{}
			ns = append(ns, r.Rows)
		}
		by[r.Rows][r.Leg] = r
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
	b.WriteString("\n")
	for _, n := range ns {
		t, p := by[n]["tdsextract migrate"], by[n]["pgloader"]
		if t.WallMedianS > 0 && p.WallMedianS > 0 {
			fmt.Fprintf(&b, "- %d rows: tdsextract's wall time is %.3f of pgloader's (%.1fx faster); peak RSS %.2f of pgloader's\n",
				n, t.WallMedianS/p.WallMedianS, p.WallMedianS/t.WallMedianS, t.RSSMedianMB/p.RSSMedianMB)
		}
	}
	return b.String()
}

func writeMigrateResults(rs []MigrateResult, md, out string) {
	table := migrateMarkdown(rs)
	fmt.Print(table)
	if b, err := json.MarshalIndent(rs, "", "  "); err == nil && out != "" {
		_ = os.WriteFile(out, append(b, '\n'), 0o644)
	}
	if md != "" {
		_ = os.WriteFile(md, []byte(table), 0o644)
	}
}
