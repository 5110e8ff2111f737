package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/sinks"
)

func newSinksCmd(g *globalOpts) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "sinks [NAME]",
		Short: "List the sinks, or the options of one (--markdown for the README's table)",
		Example: `  tdsextract sinks
  tdsextract sinks csv
  tdsextract sinks csv --markdown`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &usageError{errors.New("sinks takes at most one sink name: tdsextract sinks csv")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				listSinks(g.stdout, g.registry)
				return nil
			}
			f, ok := g.registry.Lookup(args[0])
			if !ok {
				return &usageError{fmt.Errorf("unknown sink %q (known: %s)", args[0], strings.Join(g.registry.Names(), ", "))}
			}
			// A plugin:NAME sink's own options: the plugin runs to list them.
			f, err := g.pluginOptions(f)
			if err != nil {
				return &engine.JobError{Kind: engine.KindConfig, Err: err}
			}
			if markdown {
				if f.Options == nil {
					return &usageError{fmt.Errorf("sink %s does not declare its options as a spec; its package documentation lists them", f.Name)}
				}
				fmt.Fprint(g.stdout, f.Options.Markdown())
				return nil
			}
			describeSink(g.stdout, f)
			return nil
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the options as the Markdown table of the README")
	return cmd
}

// listSinks prints one line per registered sink, descriptions aligned.
func listSinks(w io.Writer, reg *sinks.Registry) {
	width := 0
	for _, n := range reg.Names() {
		width = max(width, len(n))
	}
	for _, n := range reg.Names() {
		f, _ := reg.Lookup(n)
		fmt.Fprintf(w, "%-*s  %s\n", width, n, f.Description)
	}
	fmt.Fprintln(w, "\n`tdsextract sinks NAME` lists a sink's options; give them in a job's sinks[].options or as --set NAME.option=value.")
}

// describeSink prints a sink's options from its spec: name, type and
// default on one line, the meaning wrapped below.
func describeSink(w io.Writer, f sinks.Factory) {
	fmt.Fprintf(w, "%s: %s\n", f.Name, f.Description)
	switch {
	case f.Options == nil:
		fmt.Fprintln(w, "\nIts options are not declared as a spec; its package documentation lists them.")
		return
	case len(f.Options) == 0:
		fmt.Fprintln(w, "\nIt takes no options.")
		return
	}
	fmt.Fprintln(w)
	for i := range f.Options {
		o := &f.Options[i]
		typ := strings.ReplaceAll(o.TypeText(), `\|`, "|")
		fmt.Fprintf(w, "%s  (%s; default %s)\n", o.Name, typ, o.DefaultText())
		for _, line := range wrap(o.Doc, 72) {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
}

// wrap breaks s into lines of at most width bytes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
