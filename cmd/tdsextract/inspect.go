package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
)

func newInspectCmd(g *globalOpts) *cobra.Command {
	var src sourceFlags
	var query, name string
	var tables, to, sets []string
	cmd := &cobra.Command{
		Use:   "inspect [job.yaml]",
		Short: "Show columns, SQL Server types and each sink's mapping, flagging lossy columns",
		Long: `inspect shows, for each table, the SELECT a run sends, its columns with their
SQL Server types, and how each sink maps them with the options the run uses,
flagging lossy mappings and saying why. Given a job file it inspects the job's
extracts (their columns, convert overrides and sinks with their options);
otherwise the --table flags or the --query, with the --to sinks and their
--set options. A query is described by the server (SET FMTONLY ON), not run.
To list the tables of a database, use tdsextract tables.`,
		Example: `  tdsextract inspect configs/parquet.yaml
  tdsextract inspect --source 'sqlserver://sa@127.0.0.1:14330?database=sample&encrypt=disable' \
      --password-env PW --table dbo.type_matrix --to parquet --set parquet.timestamp_unit=nanos
  tdsextract inspect --source ... --password-env PW --query 'SELECT id, total FROM sales.orders'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &usageError{errors.New("inspect takes at most one job file: tdsextract inspect job.yaml")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var job *engine.JobConfig
			if len(args) == 1 {
				if src != (sourceFlags{}) || len(tables) > 0 || query != "" || len(to) > 0 || len(sets) > 0 {
					return &usageError{errors.New("inspect takes a job file or --source/--table/--query/--to/--set, not both")}
				}
				var err error
				if job, err = loadJob(args[0]); err != nil {
					return err
				}
			} else {
				source, err := src.config("inspect")
				if err != nil {
					return &usageError{errors.New("inspect needs a job file or --source (or TDSEXTRACT_SOURCE_CONNECTION)")}
				}
				if len(tables) == 0 && query == "" {
					return &usageError{errors.New("inspect needs --table or --query (tdsextract tables lists the tables)")}
				}
				if len(to) == 0 {
					to = builtinSinkNames(sinksWithoutRequired(g.registry))
				}
				opts, err := sinkSets(g.registry, to, sets)
				if err != nil {
					return err
				}
				job = &engine.JobConfig{Name: "inspect", Source: source}
				for _, t := range to {
					job.Sinks = append(job.Sinks, engine.SinkConfig{Type: t, Options: opts[t]})
				}
				for _, t := range tables {
					job.Extracts = append(job.Extracts, engine.ExtractConfig{Table: t})
				}
				if query != "" {
					if name == "" {
						name = "query"
					}
					job.Extracts = append(job.Extracts, engine.ExtractConfig{Name: name, Query: query})
				}
			}
			plan, err := engine.Resolve(job, g.registry)
			if err != nil {
				err = &engine.JobError{Kind: engine.KindConfig, Err: err}
			} else {
				err = inspect(cmd.Context(), g.stdout, plan)
			}
			if len(args) == 0 {
				err = nameFlags(err, job) // the job is the flags'
			}
			return err
		},
	}
	f := cmd.Flags()
	src.register(cmd)
	f.StringSliceVar(&tables, "table", nil, "table to inspect (schema.table); repeat for several")
	f.StringVar(&query, "query", "", "a SELECT to describe (the server describes its result without running it)")
	f.StringVar(&name, "name", "", "extract name for --query (default query)")
	f.StringSliceVar(&to, "to", nil, "sinks whose mapping to show (default: every built-in sink that needs no option; name postgres here with --set postgres.connection=...)")
	f.StringArrayVar(&sets, "set", nil, "a sink option as the run would set it, sink.option=value (repeatable)")
	return cmd
}

// inspect prints each table extract of plan: the SELECT the run sends,
// then per column its type and each sink's mapping of the column as the
// sink will receive it (the zero-row form of the same SELECT, described
// by the server), with the options the run resolves.
func inspect(ctx context.Context, w io.Writer, plan *engine.Plan) error {
	conn, err := session.Connect(ctx, plan.Session)
	if err != nil {
		return &engine.JobError{Kind: engine.KindConnect, Err: engine.ConnectHint(err)}
	}
	defer conn.Close()
	lossy := 0
	for _, ex := range plan.Extracts {
		inspectOne := inspectTable
		if !ex.IsTable() {
			inspectOne = inspectQuery
		}
		n, err := inspectOne(ctx, w, conn, ex)
		if err != nil {
			return err
		}
		lossy += n
	}
	if lossy > 0 {
		fmt.Fprintf(w, "%d lossy column mappings; change the sink's options or override the columns with `convert` in the job file.\n", lossy)
	}
	return nil
}

func inspectTable(ctx context.Context, w io.Writer, conn *session.Conn, ex *engine.ExtractPlan) (lossy int, err error) {
	fail := func(kind engine.ErrorKind, err error) (int, error) {
		return 0, &engine.JobError{Kind: kind, Extract: ex.Name, Err: err}
	}
	tab, err := catalog.LoadTable(ctx, conn, ex.Schema, ex.Table, ex.Timeout)
	if err != nil {
		return fail(engine.KindExtract, err)
	}
	proj, err := ex.Project(tab)
	if err != nil {
		return fail(engine.KindConfig, err)
	}
	wire, err := catalog.Describe(ctx, conn, proj.DescribeSQL(), ex.Timeout)
	if err != nil {
		return fail(engine.KindExtract, err)
	}
	if len(wire) != len(proj.Items) {
		return fail(engine.KindExtract, fmt.Errorf("the server described %d columns for %d selected", len(wire), len(proj.Items)))
	}
	fmt.Fprintf(w, "%s  (%d columns, about %d rows)\n  select: %s\n", tab.FullName(), len(proj.Items), tab.RowCount, proj.SQL(ex.Where))
	if n := spatialNote(ex, proj); n != "" {
		fmt.Fprintf(w, "  %s\n", n)
	}
	if inc := ex.Incremental; inc != nil {
		last := "none yet: the next run exports every row"
		if st, err := incremental.Load(inc.StateFile); err != nil {
			last = err.Error()
		} else if st.Watermark != nil {
			last = fmt.Sprintf("%s after %d runs", *st.Watermark, st.Runs)
		}
		fmt.Fprintf(w, "  incremental: the window [%s] > %s AND [%s] <= %s (the column's maximum when a run starts) is ANDed in; state %s, watermark %s\n",
			inc.Column, incremental.ParamLo, inc.Column, incremental.ParamHi, inc.StateFile, last)
	}
	cols := make([]inspectColumn, len(proj.Items))
	for i, it := range proj.Items {
		c := it.Column
		cols[i] = inspectColumn{name: c.Name, typ: c.SQLType(), nullable: c.Nullable}
		if it.Expr != "" {
			cols[i].typ += " as " + it.Expr
		}
	}
	lossy, err = printMappings(w, ex, tab.Name, cols, wire)
	if err != nil {
		return fail(engine.KindConfig, err)
	}
	printKeys(w, tab)
	fmt.Fprintln(w)
	return lossy, nil
}

// spatialNote says why geography and geometry columns go through their
// default conversion although some of the extract's sinks read them as
// stored ("" when none does so): the one SELECT serves every sink.
func spatialNote(ex *engine.ExtractPlan, proj *catalog.Projection) string {
	if ex.Reads().Spatial {
		return ""
	}
	converted := false
	for _, it := range proj.Items {
		k := it.Column.Kind()
		converted = converted || it.Converted && (k == decode.KindGeography || k == decode.KindGeometry)
	}
	var raw, conv []string
	for _, sp := range ex.Sinks {
		if sp.Factory.ReadsSpatial {
			raw = append(raw, sp.Type)
		} else {
			conv = append(conv, sp.Type)
		}
	}
	if !converted || len(raw) == 0 {
		return ""
	}
	return fmt.Sprintf("spatial: geography and geometry go through STAsBinary() (WKB without the SRID) for %s; an extract whose sinks are only %s selects them as stored, and %s converts them itself with their SRID",
		strings.Join(conv, ", "), strings.Join(raw, ", "), strings.Join(raw, ", "))
}

// inspectColumn is a row of inspect's column table.
type inspectColumn struct {
	name, typ string
	nullable  bool
}

// printMappings prints the column table, one column of each sink's
// mapping of the wire columns, then why each lossy mapping is lossy.
func printMappings(w io.Writer, ex *engine.ExtractPlan, owner string, cols []inspectColumn, wire []decode.Column) (lossy int, err error) {
	type sinkMap struct {
		name string
		m    []sinks.ColumnMapping
	}
	var maps []sinkMap
	var without []string
	for _, sp := range ex.Sinks {
		if sp.Factory.Mapping == nil {
			without = append(without, sp.Type)
			continue
		}
		m, err := sp.Factory.Mapping(sp.Options, wire)
		if err != nil {
			return 0, fmt.Errorf("sink %s: %w", sp.Type, err)
		}
		maps = append(maps, sinkMap{sp.Type, m})
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	hdr := "  #\tcolumn\tsql server type\tnull"
	for _, m := range maps {
		hdr += "\t" + m.name
	}
	fmt.Fprintln(tw, hdr+"\t")
	var notes []string
	for i, c := range cols {
		null := "not null"
		if c.nullable {
			null = "null"
		}
		line := fmt.Sprintf("  %d\t%s\t%s\t%s", i+1, c.name, c.typ, null)
		for _, m := range maps {
			mp := m.m[i]
			if mp.Note != "" {
				notes = append(notes, fmt.Sprintf("  %s -> %s: %s", owner, m.name, mp.Note))
			}
			cell := mp.Target
			if mp.Lossy {
				cell += " (LOSSY)"
				lossy++
				notes = append(notes, fmt.Sprintf("  %s.%s -> %s: %s", owner, c.name, m.name, mp.Why))
			}
			line += "\t" + cell
		}
		fmt.Fprintln(tw, line+"\t")
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if len(without) > 0 {
		fmt.Fprintf(w, "  (%s cannot describe a mapping before running)\n", strings.Join(without, ", "))
	}
	return lossy, nil
}

// inspectQuery describes a query extract as the server describes its
// first result set under SET FMTONLY ON: the columns and types a run
// would receive, without running the query or reading a row.
func inspectQuery(ctx context.Context, w io.Writer, conn *session.Conn, ex *engine.ExtractPlan) (int, error) {
	q := strings.TrimRight(strings.TrimSpace(ex.Query), "; \t\r\n")
	wire, err := catalog.Describe(ctx, conn, "SET FMTONLY ON;\n"+q+"\n;SET FMTONLY OFF;", ex.Timeout)
	if err != nil {
		return 0, &engine.JobError{Kind: engine.KindExtract, Extract: ex.Name, Err: fmt.Errorf("describing the query: %w", err)}
	}
	fmt.Fprintf(w, "%s  (a query, %d columns)\n  select: %s\n", ex.Name, len(wire), q)
	cols := make([]inspectColumn, len(wire))
	for i := range wire {
		cols[i] = inspectColumn{name: wire[i].Name, typ: decode.SQLTypeName(&wire[i]), nullable: wire[i].Nullable()}
	}
	lossy, err := printMappings(w, ex, ex.Name, cols, wire)
	if err != nil {
		return 0, &engine.JobError{Kind: engine.KindConfig, Extract: ex.Name, Err: err}
	}
	fmt.Fprintln(w)
	return lossy, nil
}

// printKeys prints what the catalog knows of the table beyond its
// columns' types: keys, identity, computed columns, foreign keys.
func printKeys(w io.Writer, t *catalog.Table) {
	cols := func(c []string) string { return "(" + strings.Join(c, ", ") + ")" }
	if k := t.PrimaryKey; k != nil {
		kind := "nonclustered"
		if k.Clustered {
			kind = "clustered"
		}
		fmt.Fprintf(w, "  primary key %s %s, %s\n", k.Name, cols(k.Columns), kind)
	}
	for _, k := range t.Uniques {
		fmt.Fprintf(w, "  unique %s %s\n", k.Name, cols(k.Columns))
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if id := c.Identity; id != nil {
			fmt.Fprintf(w, "  identity %s: seed %v, increment %v, last value %v\n", c.Name, id.Seed, id.Increment, lastValue(id))
		}
		if cc := c.Computed; cc != nil {
			p := ""
			if cc.Persisted {
				p = ", persisted"
			}
			fmt.Fprintf(w, "  computed %s = %s%s\n", c.Name, cc.Definition, p)
		}
	}
	for _, fk := range t.ForeignKeys {
		fmt.Fprintf(w, "  foreign key %s %s -> %s.%s %s on delete %s\n", fk.Name, cols(fk.Columns), fk.RefSchema, fk.RefTable,
			cols(fk.RefColumns), strings.ToLower(fk.OnDelete.String()))
	}
}

func lastValue(id *catalog.Identity) string {
	if id.Last == nil {
		return "none yet"
	}
	return id.Last.String()
}

// sinksWithoutRequired are the registered sinks that need no option (a
// server to load, for one): inspect's default. Sinks such as postgres
// are inspected when named with --to, their required options given with
// --set (their mapping does not contact the server).
func sinksWithoutRequired(reg *sinks.Registry) []string {
	var out []string
	for _, n := range reg.Names() {
		f, _ := reg.Lookup(n)
		need := false
		for _, o := range f.Options {
			need = need || o.Required
		}
		if !need {
			out = append(out, n)
		}
	}
	return out
}
