package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// stdoutOut is `export --out -`: the CSV goes to standard output.
const stdoutOut = "-"

// toStdout checks an export to standard output: one extract, into the csv
// sink alone, unsplit (one stream holds one table's rows and one header).
// From then on the summary goes to stderr, so stdout holds only the CSV.
func (g *globalOpts) toStdout(to, sets []string, extracts int) error {
	var errs []string
	if len(to) != 1 || to[0] != "csv" {
		errs = append(errs, fmt.Sprintf("it takes --to csv alone (not %s)", strings.Join(to, ",")))
	}
	if extracts != 1 {
		errs = append(errs, fmt.Sprintf("it takes one --table or --query (not %d)", extracts))
	}
	for _, s := range sets {
		if strings.HasPrefix(s, "csv.path=") {
			errs = append(errs, "it sets csv.path itself (drop --set csv.path)")
		}
	}
	if len(errs) > 0 {
		return &usageError{errors.New("--out - writes CSV to standard output: " + strings.Join(errs, "; ") +
			"; for several tables or other sinks give --out DIR")}
	}
	g.summaryToStderr = true
	return nil
}

// summaryOut is where the run summary is printed: stdout, or stderr when
// stdout carries the data.
func (g *globalOpts) summaryOut() io.Writer {
	if g.summaryToStderr {
		return g.stderr
	}
	return g.stdout
}
