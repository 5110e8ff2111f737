package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/migrate"
	"github.com/tdsextract/tdsextract/plugins"
	"github.com/tdsextract/tdsextract/sinks"
)

// globalOpts are the flags every command shares.
type globalOpts struct {
	quiet     bool
	logFormat string
	logLevel  string
	stdout    io.Writer
	stderr    *os.File
	// registry holds the sinks every command can use.
	registry *sinks.Registry
	// pluginsDir is --plugins-dir; plugins runs the plugin sinks
	// (loadPlugins).
	pluginsDir string
	plugins    *plugins.Host
	// summaryToStderr: stdout carries data (export --out -).
	summaryToStderr bool
}

func (g *globalOpts) logger() *slog.Logger {
	lvl := slog.LevelInfo
	switch strings.ToLower(g.logLevel) {
	case "debug":
		lvl = slog.LevelDebug
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	}
	if g.quiet {
		lvl = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if strings.EqualFold(g.logFormat, "json") {
		return slog.New(slog.NewJSONHandler(g.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(g.stderr, opts))
}

func newRootCmd(stdout, stderr *os.File) *cobra.Command {
	g := &globalOpts{stdout: stdout, stderr: stderr, registry: builtinSinksTo(stdout)}
	root := &cobra.Command{
		Use:   "tdsextract",
		Short: "Move SQL Server result sets into Parquet, PostgreSQL and CSV at wire speed",
		Long: `tdsextract reads SQL Server over its own TDS implementation and streams every
value once, straight into the memory of its sinks (Parquet, PostgreSQL binary
COPY, CSV, plugins), with bounded memory, exact types and verified row counts.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := g.validateGlobal(); err != nil {
				return err
			}
			return g.loadPlugins()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{flagError(err)} })
	pf := root.PersistentFlags()
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "print nothing on success but what the command is for (no progress, no run summary); warnings and errors on stderr")
	pf.StringVar(&g.logFormat, "log-format", "text", "log format when not on a terminal: text or json")
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&g.pluginsDir, "plugins-dir", "", "directory of sink plugins, each a sink type plugin:NAME (env TDSEXTRACT_PLUGINS_DIR; default "+defaultPluginsDir()+")")

	setupRoot(root)
	root.AddCommand(newRunCmd(g), newPlanCmd(g), newCommitCmd(g), newExportCmd(g), newMigrateCmd(g), newInspectCmd(g), newTablesCmd(g), newSinksCmd(g), newSampleServerCmd(g), newDemoCmd(g), newVersionCmd(g))
	completeRoot(root)
	return root
}

// jobEnvKeys are the job keys that TDSEXTRACT_<KEY> environment variables
// override (dots become underscores: TDSEXTRACT_SOURCE_CONNECTION).
var jobEnvKeys = []string{
	"name", "parallel", "summary_file",
	"source.connection", "source.password_env", "source.password_file",
	"source.timeout", "source.connect_timeout",
}

// loadJob reads a YAML job file strictly: an unknown key is an error that
// names the key and the file. Environment variables override the keys in
// jobEnvKeys.
func loadJob(path string) (*engine.JobConfig, error) {
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return nil, &engine.ConfigError{File: path, Msg: fmt.Sprintf("cannot read the job file: %v", err)}
	}
	bindJobEnv(v)
	var job engine.JobConfig
	if err := v.UnmarshalExact(&job); err != nil {
		return nil, jobDecodeErrors(path, err)
	}
	job.File = path
	if job.Name == "" {
		// the summary and the logs name the job by its file, not ""
		job.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return &job, nil
}

func bindJobEnv(v *viper.Viper) {
	v.SetEnvPrefix("TDSEXTRACT")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	for _, k := range jobEnvKeys {
		_ = v.BindEnv(k)
	}
}

// runFlags are the flags of run that shape a checkpointed run.
type runFlags struct {
	resume, restart bool
	unit, runID     string
}

func (f *runFlags) add(cmd *cobra.Command, withShare bool) {
	if withShare {
		cmd.Flags().BoolVar(&f.resume, "resume", false, "keep checkpoints even for a job that would not, and finish an unfinished run (a checkpointed job resumes anyway)")
		cmd.Flags().BoolVar(&f.restart, "restart", false, "discard an unfinished run in the state directory and start over")
		cmd.Flags().StringVar(&f.unit, "unit", "", "run one share of the units: i/N (0 <= i < N), or N with i from JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or AWS_BATCH_JOB_ARRAY_INDEX")
	}
	cmd.Flags().StringVar(&f.runID, "run-id", "", "the run shared by several processes (default TDSEXTRACT_RUN_ID, SLURM_ARRAY_JOB_ID or AWS_BATCH_JOB_ID); its state is a subdirectory of state_dir")
}

// schedulerIndexEnv are the environment variables that carry an array
// task's index, in the order they are looked up.
var schedulerIndexEnv = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "AWS_BATCH_JOB_ARRAY_INDEX"}

// runIDEnv are the environment variables that name a run shared by the
// tasks of one scheduler job.
var runIDEnv = []string{"TDSEXTRACT_RUN_ID", "SLURM_ARRAY_JOB_ID", "AWS_BATCH_JOB_ID"}

// apply sets the runner's checkpoint options from the flags and the
// environment.
func (f *runFlags) apply(r *engine.Runner, lookup func(string) (string, bool)) error {
	r.Resume, r.Restart = f.resume, f.restart
	r.RunID = f.runID
	if r.RunID == "" {
		for _, k := range runIDEnv {
			if v, ok := lookup(k); ok && v != "" {
				// An AWS Batch array child's id is "<parent>:<index>": the
				// run is the parent's.
				r.RunID, _, _ = strings.Cut(v, ":")
				break
			}
		}
	}
	if f.unit == "" {
		return nil
	}
	spec := f.unit
	if !strings.Contains(spec, "/") {
		idx := ""
		for _, k := range schedulerIndexEnv {
			if v, ok := lookup(k); ok && v != "" {
				idx = v
				break
			}
		}
		if idx == "" {
			return &usageError{fmt.Errorf("--unit %s: no share index: give --unit i/%s, or set one of %s", spec, spec, strings.Join(schedulerIndexEnv, ", "))}
		}
		spec = idx + "/" + spec
	}
	sh, err := engine.ParseShare(spec)
	if err != nil {
		return &usageError{fmt.Errorf("--unit: %w", err)}
	}
	if r.RunID == "" {
		return &usageError{fmt.Errorf("--unit %s: processes sharing a run need its id: --run-id, or one of %s (the scheduler's job id)", f.unit, strings.Join(runIDEnv, ", "))}
	}
	r.Share = &sh
	return nil
}

func newRunCmd(g *globalOpts) *cobra.Command {
	var summaryJSON, backfill string
	var dryRun bool
	var parallel int
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run <job.yaml>",
		Short: "Run the extracts of a job file",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{errors.New("run needs exactly one job file: tdsextract run job.yaml")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := loadJob(args[0])
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("parallel") {
				if err := positive("parallel", parallel); err != nil {
					return err
				}
				job.Parallel = parallel
			}
			if summaryJSON != "" {
				job.SummaryFile = summaryJSON
			}
			if job.Migrate != nil {
				c, err := migrate.FromJob(job)
				if err != nil {
					return err
				}
				if _, err := engine.Resolve(job, g.registry); err != nil {
					return &engine.JobError{Kind: engine.KindConfig, Err: err}
				}
				if dryRun {
					fmt.Fprintf(g.stdout, "%s: valid (a migration)\n", args[0])
					return nil
				}
				return runMigrate(cmd.Context(), g, c, false, job.SummaryFile)
			}
			var bf *incremental.Range
			if backfill != "" {
				r, err := incremental.ParseRange(backfill)
				if err != nil {
					return &usageError{fmt.Errorf("--backfill: %w", err)}
				}
				bf = &r
			}
			if dryRun {
				plan, err := engine.Resolve(job, g.registry)
				if err != nil {
					return &engine.JobError{Kind: engine.KindConfig, Err: err}
				}
				fmt.Fprintf(g.stdout, "%s: valid (%d extracts, %d units)\n", args[0], len(plan.Extracts), len(plan.Units))
				return nil
			}
			return runJob(cmd.Context(), g, job, &rf, bf)
		},
	}
	cmd.Flags().StringVar(&summaryJSON, "summary-json", "", "also write the run summary as JSON to this file")
	cmd.Flags().StringVar(&backfill, "backfill", "", "re-export FROM..TO (rows FROM <= watermark < TO; FROM.. or ..TO) of every incremental extract, leaving its state as it is")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate the job file and exit")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "units to run at once (each on its own session)")
	rf.add(cmd, true)
	return cmd
}

// resolveJob loads and resolves a job file for plan and commit, and
// returns the runner the flags describe.
func resolveJob(g *globalOpts, path string, rf *runFlags) (*engine.Plan, *engine.Runner, error) {
	job, err := loadJob(path)
	if err != nil {
		return nil, nil, err
	}
	plan, err := engine.Resolve(job, g.registry)
	if err != nil {
		return nil, nil, &engine.JobError{Kind: engine.KindConfig, Err: err}
	}
	r := &engine.Runner{Registry: g.registry}
	if err := rf.apply(r, os.LookupEnv); err != nil {
		return nil, nil, err
	}
	return plan, r, nil
}

func newPlanCmd(g *globalOpts) *cobra.Command {
	var asJSON bool
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "plan <job.yaml>",
		Short: "Print the units a run of the job consists of",
		Long: `plan connects to the source, splits every partitioned extract into its key
ranges (MIN and MAX of the key, or a sample) and prints the units, numbered
from 0: the share i/N of "run --unit i/N" is every unit whose number modulo N
is i. An unfinished run in the state directory shows the units it planned.
For a job with incremental extracts that keeps checkpoints, plan starts the
run: it reads each window's high watermark once and writes the units and
windows to the state directory, so every "run --unit" exports the same
window; planning again while the run is open shows that window.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, r, err := resolveJob(g, args[0], &rf)
			if err != nil {
				return err
			}
			units, err := r.PlanUnits(cmd.Context(), plan)
			if err != nil {
				return err
			}
			type unitJSON struct {
				Index   int    `json:"index"`
				ID      string `json:"id"`
				Extract string `json:"extract"`
				Part    int    `json:"part"`
				Parts   int    `json:"parts"`
				Range   string `json:"range,omitempty"`
				// Window is an incremental extract's window, fixed for
				// the run when it was planned.
				Window string `json:"window,omitempty"`
			}
			var out []unitJSON
			for i, u := range units {
				uj := unitJSON{Index: i, ID: u.ID(), Extract: u.Extract.Name, Part: u.Part, Parts: max(1, u.Parts), Range: u.Range.String()}
				if f := u.Extract.FrozenWindow(); f != nil {
					uj.Window = f.Column + " in " + f.Describe()
				}
				out = append(out, uj)
			}
			if asJSON {
				b, err := json.MarshalIndent(out, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "unit\tid\trange")
			for _, u := range out {
				rng := u.Range
				if rng == "" {
					rng = "(whole extract)"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\n", u.Index, u.ID, rng)
			}
			tw.Flush()
			for _, ex := range plan.Extracts {
				if f := ex.FrozenWindow(); f != nil {
					fmt.Fprintf(g.stdout, "%s: %s in %s, fixed for this run (every unit and process exports it; the watermark moves when the run is committed)\n", ex.Name, f.Column, f.Describe())
				}
			}
			fmt.Fprintf(g.stdout, "%d units; run a share with: tdsextract run %s --unit i/N\n", len(out), args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the units as JSON")
	rf.add(cmd, false)
	return cmd
}

func newCommitCmd(g *globalOpts) *cobra.Command {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "commit <job.yaml>",
		Short: "Write the manifest of a run whose units are all finished",
		Long: `commit writes the job's manifest once every unit of the run in the state
directory is finished (by any process: "run --unit" shares write their
checkpoints there). It fails with exit code 6, writing nothing, while a unit
is missing, so a scheduler can run it again later.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, r, err := resolveJob(g, args[0], &rf)
			if err != nil {
				return err
			}
			path, err := r.Commit(cmd.Context(), plan)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "manifest %s\n", path)
			return nil
		},
	}
	rf.add(cmd, false)
	return cmd
}

// runJob runs a job with progress and prints the summary (not with
// --quiet). A failed extract is marked FAILED in the summary; its error is
// printed once, by execute, when the command ends. bf, when set, makes
// incremental extracts backfill that range instead of exporting their next
// window.
func runJob(ctx context.Context, g *globalOpts, job *engine.JobConfig, rf *runFlags, bf *incremental.Range) error {
	prog := newProgress(g)
	r := &engine.Runner{Registry: g.registry, Progress: prog, Backfill: bf}
	if rf != nil {
		if err := rf.apply(r, os.LookupEnv); err != nil {
			return err
		}
	}
	sum, err := r.Run(ctx, job)
	prog.Wait()
	if sum != nil && len(sum.Extracts) > 0 {
		if !g.quiet {
			printSummary(g.summaryOut(), sum)
		}
		if job.SummaryFile != "" {
			if werr := writeSummaryJSON(job.SummaryFile, sum); werr != nil && err == nil {
				err = &engine.JobError{Kind: engine.KindExtract, Err: werr}
			}
		}
	}
	return err
}

func writeSummaryJSON(path string, sum *engine.Summary) error { return writeJSON(path, sum) }

func printSummary(w io.Writer, sum *engine.Summary) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "extract\trows\twire MiB\tseconds\trows/s\tverified\ttimeout\t")
	for _, e := range sum.Extracts {
		if e.Name == "" {
			continue
		}
		ver := e.Verified
		if ver == "" {
			ver = "-"
		}
		if e.Error != "" {
			ver = "FAILED"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.0f\t%s\t%s\t\n", e.Name, e.Rows, float64(e.WireBytes)/(1<<20), e.Duration.Seconds(), e.RowsPerSec, ver, e.Timeout)
	}
	tw.Flush()
	for _, e := range sum.Extracts {
		for _, s := range e.Sinks {
			if s.Skipped != "" {
				fmt.Fprintf(w, "  %s -> %s: skipped: %s\n", e.Name, s.Type, s.Skipped)
				continue
			}
			rej := ""
			if s.Rejected > 0 {
				rej = fmt.Sprintf(" (%d rows rejected)", s.Rejected)
			}
			fmt.Fprintf(w, "  %s -> %s: %d rows%s, %s, %s\n", e.Name, s.Type, s.Rows, rej, mib(s.Bytes), strings.Join(s.Files, ", "))
		}
		if in := e.Incremental; in != nil {
			state := "state unchanged"
			switch {
			case in.Committed:
				state = "state saved to " + in.StateFile
			case in.Backfill:
				state = "backfill, state unchanged"
			case in.Pending:
				state = "state saved when the run is committed"
			}
			fmt.Fprintf(w, "  %s: %s in %s, %s\n", e.Name, in.Column, in.Window, state)
		}
		for _, u := range e.Units {
			switch {
			case u.Resumed:
				fmt.Fprintf(w, "  %s: %d rows, finished by an earlier run\n", u.Unit, u.Rows)
			case u.Error != "":
				// The error itself is printed once, when the command ends.
				fmt.Fprintf(w, "  %s: FAILED after %d attempt(s)\n", u.Unit, u.Attempts)
			default:
				fmt.Fprintf(w, "  %s: %d rows in %.2fs (%s)\n", u.Unit, u.Rows, u.Duration.Seconds(), u.Range)
			}
		}
		for _, rt := range e.Retries {
			// The error of each attempt is in the JSON summary; printed here
			// it would repeat the one the command ends with.
			fmt.Fprintf(w, "  retry: %s attempt %d failed transiently; retried after %s\n", rt.Unit, rt.Attempt, rt.Delay.Round(time.Millisecond))
		}
	}
	if sum.Manifest != "" {
		fmt.Fprintf(w, "manifest %s\n", sum.Manifest)
	} else if sum.StateDir != "" {
		fmt.Fprintf(w, "run %s: checkpoints in %s\n", sum.Run, sum.StateDir)
	}
	status := "ok"
	if !sum.OK {
		status = "FAILED"
	}
	fmt.Fprintf(w, "job %q %s in %.2fs\n", sum.Job, status, sum.Duration.Seconds())
}

func newExportCmd(g *globalOpts) *cobra.Command {
	var (
		src                             sourceFlags
		query, name, out, where, verify string
		tables, to, columns, sets       []string
		target                          string
		parallel                        int
		summaryJSON                     string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export tables or a query ad hoc, without a job file",
		Example: `  tdsextract export --source 'sqlserver://sa@127.0.0.1:1433?database=sample' \
      --password-env MSSQL_PASSWORD --table dbo.orders --to parquet --out ./out --timeout 30m
  tdsextract export --source ... --table sales.orders --to csv,parquet \
      --set csv.dialect=postgres --set csv.header=false --set parquet.compression=snappy
  tdsextract export --source 'sqlserver://sa@127.0.0.1:1433?database=sample' \
      --password-env MSSQL_PASSWORD --table dbo.orders --to postgres --target 'postgres://app@127.0.0.1:5432/dw'`,
		Args: noArgs("export"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			source, err := src.config("export")
			if err != nil {
				return err
			}
			if err := positive("parallel", parallel); err != nil {
				return err
			}
			if len(tables) == 0 && query == "" {
				return &usageError{errors.New("export needs --table or --query")}
			}
			// --name names the one extract: the query, or the one table.
			tableName := ""
			switch {
			case name != "" && query == "" && len(tables) > 1:
				return &usageError{fmt.Errorf("--name names one extract: give one --table (not %d) or --query", len(tables))}
			case query == "":
				tableName = name
			case name == "":
				name = "query"
			}
			if out == stdoutOut {
				if err := g.toStdout(to, sets, len(tables)+min(1, len(query))); err != nil {
					return err
				}
				sets = append(sets, "csv.path="+stdoutOut)
			}
			job := &engine.JobConfig{
				Name:        "export",
				Source:      source,
				Parallel:    parallel,
				SummaryFile: summaryJSON,
			}
			// A sink that loads a server (postgres) takes --target as its
			// connection instead of --out.
			server := map[string]bool{}
			for _, t := range to {
				f, _ := g.registry.Lookup(t)
				if _, ok := f.Options.Lookup("connection"); !ok {
					continue
				}
				server[t] = true
				if !slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, t+".connection=") }) {
					if target == "" {
						return &usageError{fmt.Errorf("--to %s needs --target (e.g. 'postgres://user@host:5432/db')", t)}
					}
					sets = append(sets, t+".connection="+target)
				}
			}
			if err := exportFlagsUnused(cmd.Flags().Changed, len(tables), len(server)); err != nil {
				return err
			}
			opts, err := sinkSets(g.registry, to, sets)
			if err != nil {
				return err
			}
			for _, t := range to {
				o, typ := opts[t], t
				switch _, given := o["path"]; {
				case isPluginSink(t):
					if typ, o, err = g.exportPluginSink(t, o, out); err != nil {
						return &engine.JobError{Kind: engine.KindConfig, Err: err}
					}
				case !given && !server[t]:
					o["path"] = out + string(os.PathSeparator)
				}
				job.Sinks = append(job.Sinks, engine.SinkConfig{Type: typ, Options: o})
			}
			for _, t := range tables {
				job.Extracts = append(job.Extracts, engine.ExtractConfig{Name: tableName, Table: t, Columns: columns, Where: where, Verify: verify})
			}
			if query != "" {
				job.Extracts = append(job.Extracts, engine.ExtractConfig{Name: name, Query: query})
			}
			return nameFlags(runJob(cmd.Context(), g, job, nil, nil), job)
		},
	}
	f := cmd.Flags()
	src.register(cmd)
	f.StringSliceVar(&tables, "table", nil, "table to export (schema.table); repeat for several")
	f.StringSliceVar(&columns, "columns", nil, "columns to export, in order (default all)")
	f.StringVar(&where, "where", "", "SQL predicate for the table")
	f.StringVar(&query, "query", "", "a SELECT to export instead of a table")
	f.StringVar(&name, "name", "", "extract name of the --query, or of the one --table (file and table names derive from it; default the table's name, or query)")
	f.StringSliceVar(&to, "to", []string{"csv"}, "sink types: "+strings.Join(g.registry.Names(), ", ")+", plugin:NAME (a plugin of the plugins directory) or plugin:./path/to/plugin")
	f.StringVar(&out, "out", "out", "output directory (the sinks' path option); - writes the CSV of one table or query to standard output")
	f.StringVar(&target, "target", "", "the server of a sink that loads one (postgres): a postgres:// URL or host=... dbname=... string; each table goes to the table of the same name (lower case) in the target's default schema, created when missing")
	f.StringArrayVar(&sets, "set", nil, "a sink option, sink.option=value (repeatable), e.g. --set csv.header=false --set parquet.compression=snappy; see tdsextract sinks NAME")
	f.StringVar(&verify, "verify", "none", "none or count (check row counts against COUNT_BIG(*))")
	f.IntVar(&parallel, "parallel", 1, "tables to export at once")
	f.StringVar(&summaryJSON, "summary-json", "", "also write the run summary as JSON to this file")
	return cmd
}
