// Command tdsextract moves SQL Server result sets into Parquet, PostgreSQL,
// CSV and plugin sinks over its own TDS implementation.
//
// This is the only package that knows cobra and viper: it turns flags,
// environment and YAML job files into the engine's plain typed structs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/csv"
	"github.com/tdsextract/tdsextract/sinks/parquet"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// builtinSinks is the registry of the sinks built into the binary.
func builtinSinks() *sinks.Registry { return builtinSinksTo(os.Stdout) }

// builtinSinksTo is builtinSinks whose csv sink writes path "-" to stdout.
func builtinSinksTo(stdout io.Writer) *sinks.Registry {
	r, err := sinks.NewRegistry(csv.FactoryTo(stdout), parquet.Factory(), postgres.Factory())
	if err != nil {
		panic(err) // two built-in sinks with one name: a programming error
	}
	return r
}

// Exit codes. Each failure class has its own, so schedulers can tell a
// broken job file from an unreachable server from a failed export, and
// whether starting the same command again may help: 3, 5 and 6 are worth
// retrying (a checkpointed run resumes where it stopped), 1, 2 and 4 need
// a person.
const (
	exitOK       = 0
	exitInternal = 1 // a bug or an unclassified failure
	exitConfig   = 2 // bad flags or job configuration
	exitConnect  = 3 // the source or a sink's server cannot be reached or refused the login
	exitExtract  = 4 // extraction or writing failed
	// exitTransient: a unit failed transiently (connection lost, deadlock,
	// failover) after its retries; the run may succeed if started again.
	exitTransient = 5
	// exitIncomplete: commit found units not yet finished.
	exitIncomplete = 6
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() { os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr)) }

// usageError marks errors in the command line itself.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return exitConfig
	}
	var ce *engine.ConfigError
	if errors.As(err, &ce) {
		return exitConfig
	}
	// A joined error from a job: the most severe kind wins (config, then
	// connect, then extract), so the code names what to fix first.
	code := 0
	var visit func(error)
	visit = func(e error) {
		var je *engine.JobError
		if errors.As(e, &je) {
			c := exitExtract
			switch {
			case je.Kind == engine.KindConfig:
				c = exitConfig
			case je.Kind == engine.KindConnect:
				c = exitConnect
			case je.Kind == engine.KindIncomplete:
				c = exitIncomplete
			case je.Transient():
				c = exitTransient
			}
			if code == 0 || c < code {
				code = c
			}
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				visit(x)
			}
		}
	}
	visit(err)
	if code != 0 {
		return code
	}
	return exitInternal
}

func execute(ctx context.Context, args []string, stdout, stderr *os.File) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		printError(stderr, err)
	}
	return exitCode(err)
}

// printError prints err once, each of its lines (joined errors: every
// problem of a job file, every failed extract) as "tdsextract: ...".
func printError(w io.Writer, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.TrimSpace(line) != "" {
			fmt.Fprintf(w, "tdsextract: %s\n", line)
		}
	}
}
