package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
)

func newTablesCmd(g *globalOpts) *cobra.Command {
	var src sourceFlags
	var exclude []string
	var views bool
	cmd := &cobra.Command{
		Use:   "tables [PATTERN...]",
		Short: "List the tables (and views) of the source database, with their columns and row counts",
		Long: `tables lists the tables of the database the connection string names, each with
its column count and the row count SQL Server keeps (cheap, possibly a little
stale). PATTERNs select tables: schema.table or table (any schema), * and ?
as wildcards, matched case-insensitively, [brackets] for a literal name; the
names it prints are what --table and a job's extracts[].table take.`,
		Example: `  tdsextract tables --source 'sqlserver://sa@127.0.0.1:14330?database=sample&encrypt=disable' --password-env PW
  tdsextract tables --source ... --password-env PW 'sales.*' --exclude '*_old' --views`,
		RunE: func(cmd *cobra.Command, args []string) error {
			source, err := src.config("tables")
			if err != nil {
				return err
			}
			filter := catalog.Filter{Include: args, Exclude: exclude}
			if err := filter.Validate(); err != nil {
				return &usageError{err}
			}
			cfg, timeout, err := engine.ResolveSource(&source)
			if err != nil {
				return nameFlags(&engine.JobError{Kind: engine.KindConfig, Err: err}, &engine.JobConfig{})
			}
			return listTables(cmd.Context(), g.stdout, cfg, catalog.Options{Filter: filter, Views: views, Timeout: timeout, NoWire: true})
		},
	}
	src.register(cmd)
	cmd.Flags().StringSliceVar(&exclude, "exclude", nil, "pattern of tables to leave out (repeatable)")
	cmd.Flags().BoolVar(&views, "views", false, "list the views too")
	return cmd
}

// listTables prints the tables opts selects; none is not an error, but
// says so.
func listTables(ctx context.Context, w io.Writer, cfg session.Config, opts catalog.Options) error {
	conn, err := session.Connect(ctx, cfg)
	if err != nil {
		return &engine.JobError{Kind: engine.KindConnect, Err: engine.ConnectHint(err)}
	}
	defer conn.Close()
	db, err := catalog.Load(ctx, conn, opts)
	if err != nil {
		return &engine.JobError{Kind: engine.KindExtract, Err: err}
	}
	if len(db.Tables) == 0 {
		fmt.Fprintln(w, "no table matches (patterns are schema.table or table, with * and ?)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "table\tkind\tcolumns\trows (approx.)\t")
	for _, t := range db.Tables {
		kind, rows := "table", strconv.FormatInt(t.RowCount, 10)
		if t.View {
			kind, rows = "view", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t\n", t.FullName(), kind, len(t.Columns), rows)
	}
	return tw.Flush()
}
