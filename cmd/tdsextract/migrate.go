package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/migrate"
	"github.com/tdsextract/tdsextract/internal/atomicfile"
	"github.com/tdsextract/tdsextract/internal/secret"
)

func newMigrateCmd(g *globalOpts) *cobra.Command {
	var (
		source, passwordEnv, target, targetPasswordEnv, timeout string
		verify, identifiers, caseInsensitive, stateTable        string
		maintenanceWorkMem                                      string
		summaryJSON                                             string
		include, exclude                                        []string
		parallel                                                int
		splitRows                                               int64
		resume, dryRun, analyze                                 bool
	)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Migrate a SQL Server database (schema, data, keys, indexes, constraints, views) into PostgreSQL",
		Long: `migrate reads the source database's catalog and recreates it in PostgreSQL: schemas,
sequences and tables (identities restarted at the source's next value), then the data
through binary COPY, primary keys, unique constraints, indexes, checks and foreign keys,
--parallel steps at once, each as soon as what it needs is in, then views (--analyze
also gathers each table's statistics once it is indexed). Defaults, computed columns, checks, index
filters and views are translated from T-SQL; what does not translate is reported
with its original text and left out, never failing the run. --dry-run prints the
whole plan. A table that fails leaves the others; --resume continues a run.`,
		Example: `  tdsextract migrate --source 'sqlserver://sa@127.0.0.1:1433?database=sample' --password-env MSSQL_PASSWORD \
      --target 'postgres://app@127.0.0.1:5432/dw' --verify checksum
  tdsextract migrate --source ... --target ... --include 'sales.*' --exclude '*.audit_*' --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := viper.New()
			bindJobEnv(v)
			if source == "" {
				source = v.GetString("source.connection")
			}
			if passwordEnv == "" {
				passwordEnv = v.GetString("source.password_env")
			}
			if source == "" {
				return &usageError{errors.New("migrate needs --source (or TDSEXTRACT_SOURCE_CONNECTION)")}
			}
			if target == "" {
				return &usageError{errors.New("migrate needs --target, the PostgreSQL server (e.g. 'postgres://user@host:5432/db')")}
			}
			job := &engine.JobConfig{
				Name:   "migrate",
				Source: engine.SourceConfig{Connection: secret.Secret(source), PasswordEnv: passwordEnv, Timeout: timeout},
				Migrate: &engine.MigrateConfig{Target: secret.Secret(target), TargetPasswordEnv: targetPasswordEnv,
					Include: include, Exclude: exclude, Parallel: parallel, SplitRows: splitRows, Verify: verify, Identifiers: identifiers,
					CaseInsensitive: caseInsensitive, Resume: resume, StateTable: stateTable, MaintenanceWorkMem: maintenanceWorkMem,
					Analyze: analyze},
			}
			if splitRows == 0 {
				job.Migrate.SplitRows = -1 // the flag's 0 is never
			}
			c, err := migrate.FromJob(job)
			if err != nil {
				return err
			}
			return runMigrate(cmd.Context(), g, c, dryRun, summaryJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "SQL Server connection string (URL or ADO form); env TDSEXTRACT_SOURCE_CONNECTION")
	f.StringVar(&passwordEnv, "password-env", "", "environment variable holding the source password")
	f.StringVar(&target, "target", "", "PostgreSQL: a postgres:// URL or host=... dbname=... string")
	f.StringVar(&targetPasswordEnv, "target-password-env", "", "environment variable holding the PostgreSQL password")
	f.StringSliceVar(&include, "include", nil, "schema.table patterns to migrate (* and ?; repeatable; default everything)")
	f.StringSliceVar(&exclude, "exclude", nil, "schema.table patterns to leave out (repeatable)")
	f.IntVar(&parallel, "parallel", 4, "steps run at once, each on its own sessions: tables or key ranges loading, keys and indexes building, foreign keys validating")
	f.Int64Var(&splitRows, "split-rows", migrate.DefaultSplitRows, "a table with more rows whose clustered key leads with an integer, date/time or uniqueidentifier column loads as key ranges of about this many rows, in parallel (0: never)")
	f.StringVar(&verify, "verify", "none", "none, count (row counts) or checksum (every value, source stream vs read back)")
	f.StringVar(&identifiers, "identifiers", "lower", "lower (names folded, usable unquoted) or preserve")
	f.StringVar(&caseInsensitive, "case-insensitive", "none", "keys under a case-insensitive source collation: none (case-sensitive in PostgreSQL, reported), icu (a nondeterministic ICU collation) or citext (the citext extension's type)")
	f.BoolVar(&analyze, "analyze", false, "ANALYZE every table once it is loaded and indexed, so the planner has statistics when the run ends (otherwise autovacuum gathers them later)")
	f.BoolVar(&resume, "resume", false, "continue an earlier run: skip what it finished, load what is missing")
	f.BoolVar(&dryRun, "dry-run", false, "print the whole plan (DDL, lossy mappings, what is not translated) and exit")
	f.StringVar(&stateTable, "state-table", migrate.DefaultStateTable, "where the target records the steps a run finished")
	f.StringVar(&maintenanceWorkMem, "maintenance-work-mem", migrate.DefaultMaintenanceWorkMem, "PostgreSQL maintenance_work_mem of the sessions building keys and indexes, per build (server: the server's setting)")
	f.StringVar(&timeout, "timeout", "", `request deadline per source query, e.g. 30m, or "none"`)
	f.StringVar(&summaryJSON, "summary-json", "", "also write the summary as JSON to this file")
	return cmd
}

// runMigrate plans the migration and prints the plan (dry run) or runs it
// and prints the summary.
func runMigrate(ctx context.Context, g *globalOpts, c *migrate.Config, dryRun bool, summaryJSON string) error {
	plan, err := migrate.Discover(ctx, c)
	if err != nil {
		return migrateError(err)
	}
	if dryRun {
		return plan.Write(g.stdout)
	}
	sum, err := migrate.Run(ctx, c, plan)
	printMigrateSummary(g.stdout, sum)
	if summaryJSON != "" {
		if werr := writeJSON(summaryJSON, sum); werr != nil && err == nil {
			err = werr
		}
	}
	return migrateError(err)
}

// migrateError classes a migration's error for the exit code.
func migrateError(err error) error {
	if err == nil {
		return nil
	}
	var ce *migrate.ConnectError
	if errors.As(err, &ce) {
		return &engine.JobError{Kind: engine.KindConnect, Err: err}
	}
	var cfg *engine.ConfigError
	if errors.As(err, &cfg) {
		return err
	}
	return &engine.JobError{Kind: engine.KindExtract, Err: err}
}

func printMigrateSummary(w io.Writer, sum *migrate.Summary) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\trows\tMB\tseconds\tverified\t")
	for _, t := range sum.Tables {
		ver := t.Verified
		switch {
		case t.Error != "":
			ver = "FAILED"
		case t.Resumed:
			ver = "earlier run"
		case ver == "":
			ver = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%s\t\n", t.Target, t.Rows, float64(t.Bytes)/1e6, t.Duration.Seconds(), ver)
	}
	tw.Flush()
	counts := map[string]int{}
	for _, s := range sum.Steps {
		counts[s.Status]++
	}
	printMigratePhases(w, sum)
	fmt.Fprintf(w, "steps: %d done, %d done earlier, %d failed, %d not run\n", counts[migrate.StepDone], counts[migrate.StepEarlier],
		counts[migrate.StepFailed], counts[migrate.StepNotRun])
	for _, t := range sum.Tables {
		if t.Error != "" {
			fmt.Fprintf(w, "  table %s: FAILED: %s\n", t.Source, t.Error)
		}
	}
	for _, s := range sum.Steps {
		if s.Status == migrate.StepFailed || s.Status == migrate.StepNotRun {
			fmt.Fprintf(w, "  %s %s: %s: %s\n", s.Phase, s.Object, s.Status, s.Error)
		}
	}
	for _, it := range sum.Untranslated {
		fmt.Fprintf(w, "  not translated: %s %s: %s\n", it.What, it.Object, it.Detail)
		if it.Original != "" {
			fmt.Fprintf(w, "    source: %s\n", strings.Join(strings.Fields(it.Original), " "))
		}
	}
	for _, it := range sum.Lossy {
		fmt.Fprintf(w, "  lossy: %s %s: %s\n", it.What, it.Object, it.Detail)
	}
	if len(sum.Notes) > 0 {
		fmt.Fprintf(w, "  %d notes (see --dry-run or --summary-json)\n", len(sum.Notes))
	}
	status := "ok"
	if !sum.OK {
		status = "FAILED"
	}
	fmt.Fprintf(w, "migrate %s in %.2fs\n", status, sum.Duration.Seconds())
}

// printMigratePhases says where the time went: each phase's wall time
// (the verification inside the data), then the slowest steps: key ranges
// of split tables, keys, indexes and constraints (--summary-json holds
// every one).
func printMigratePhases(w io.Writer, sum *migrate.Summary) {
	var verify time.Duration
	for _, t := range sum.Tables {
		verify += t.VerifyDuration
	}
	var parts []string
	for _, p := range sum.Phases {
		f := fmt.Sprintf("%s %.2fs", p.Phase, p.Duration.Seconds())
		if p.Phase == migrate.PhaseData.String() && verify > 0 {
			f += fmt.Sprintf(" (verify %.2fs, summed over tables)", verify.Seconds())
		}
		parts = append(parts, f)
	}
	if len(parts) == 0 {
		return
	}
	// Each phase runs from its first step's start to its last one's end, and
	// phases overlap (keys build while other tables load), so they do not
	// add up to the run's time.
	fmt.Fprintf(w, "phases (first start to last end, overlapping): %s\n", strings.Join(parts, ", "))
	type timed struct {
		what string
		d    time.Duration
	}
	var slow []timed
	for _, t := range sum.Tables {
		for _, r := range t.Ranges {
			if !r.Resumed && r.Error == "" {
				slow = append(slow, timed{fmt.Sprintf("data %s (%d rows)", r.Object, r.Rows), r.Duration})
			}
		}
	}
	for _, s := range sum.Steps {
		if s.Status == migrate.StepDone && s.Duration > 0 && s.Phase != migrate.PhaseSchema.String() {
			slow = append(slow, timed{s.Phase + " " + s.Object, s.Duration})
		}
	}
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].d > slow[j].d })
	const shown = 8
	for i, t := range slow {
		if i == shown {
			fmt.Fprintf(w, "  ... %d more steps (see --summary-json)\n", len(slow)-shown)
			break
		}
		fmt.Fprintf(w, "  %.2fs %s\n", t.d.Seconds(), t.what)
	}
}

// writeJSON writes v as indented JSON, atomically (a reader never sees
// half a summary, and two runs never share a temporary name).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}
