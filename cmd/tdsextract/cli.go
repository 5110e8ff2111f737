package main

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// exitCodesHelp is the exit-code table, printed by the root --help and
// kept in the README.
const exitCodesHelp = `Exit codes:
  0  success
  1  an internal error (a bug, or a failure of no other class)
  2  a command-line or configuration error (found before anything connects)
  3  the source, or a sink's server, cannot be reached or refused the login
  4  a failure while extracting or writing
  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM: nothing was published`

// commit is set at build time with -ldflags "-X main.commit=..." (make
// build); without it the module's build info says (go install, go build
// in a clone).
var commit = ""

// versionString is what `tdsextract version` and `--version` print.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return describeVersion(version, commit, bi)
}

// describeVersion is "<version> (commit <hash>[, modified], built <date>)"
// from the values stamped with -ldflags, falling back to the build info
// the go command records: the module version of `go install
// module@version`, and vcs.revision/vcs.time/vcs.modified of a build in a
// git clone.
func describeVersion(ldVersion, ldCommit string, bi *debug.BuildInfo) string {
	v, rev, when, modified := ldVersion, ldCommit, "", false
	if bi != nil {
		if (v == "" || v == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	var parts []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		c := "commit " + rev
		if modified {
			c += ", modified"
		}
		parts = append(parts, c)
	}
	if when != "" {
		parts = append(parts, "committed "+when)
	}
	if len(parts) == 0 {
		parts = append(parts, "commit unknown: build with make build or go install")
	}
	return fmt.Sprintf("tdsextract %s (%s)", v, strings.Join(parts, ", "))
}

func newVersionCmd(g *globalOpts) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the commit it was built from",
		Args:  noArgs("version"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(g.stdout, versionString())
			return nil
		},
	}
}

// setupRoot gives the root command what cobra leaves to it: --version, an
// unknown command as a command-line error (exit 2, like an unknown flag)
// with cobra's suggestion, and the exit codes in --help.
func setupRoot(root *cobra.Command) {
	root.Version = versionString()
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("{{.Version}}\n")
	root.Long += "\n\n" + exitCodesHelp
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q (see tdsextract --help)", args[0])
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg = fmt.Sprintf("unknown command %q: did you mean %q? (see tdsextract --help)", args[0], s[0])
		}
		return &usageError{errors.New(msg)}
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	// help and completion refuse what they do not know, as the root does.
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || (len(args) > 0 && cmd == root) || len(rest) > 0 {
				return &usageError{fmt.Errorf("no help topic %q (see tdsextract --help)", strings.Join(args, " "))}
			}
			return cmd.Help()
		},
	})
}

// completeRoot adds cobra's completion command (as cobra would when it
// runs), so that an unknown shell is refused rather than answered with
// the help and exit 0.
func completeRoot(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return &usageError{fmt.Errorf("completion: unknown shell %q: use bash, zsh, fish or powershell", args[0])}
				}
				return cmd.Help()
			}
			c.Args = cobra.ArbitraryArgs
		}
	}
}

// noArgs refuses positional arguments as a command-line error naming the
// command.
func noArgs(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &usageError{fmt.Errorf("%s takes no arguments (got %q); see tdsextract %s --help", name, args[0], name)}
		}
		return nil
	}
}

// validateGlobal checks the global flags before any command runs: a value
// that is not one of the documented ones is a command-line error, never
// silently the default.
func (g *globalOpts) validateGlobal() error {
	var errs []error
	switch strings.ToLower(g.logLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("--log-level %q: use debug, info, warn or error", g.logLevel))
	}
	switch strings.ToLower(g.logFormat) {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("--log-format %q: use text or json", g.logFormat))
	}
	if len(errs) > 0 {
		return &usageError{errors.Join(errs...)}
	}
	return nil
}

// positive checks an integer flag that counts something at once
// (--parallel): at least 1.
func positive(flag string, n int) error {
	if n < 1 {
		return &usageError{fmt.Errorf("--%s %d: must be at least 1", flag, n)}
	}
	return nil
}

// badFlagValue is pflag's report of a value its type cannot parse.
var badFlagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: (?:strconv\.Parse(Int|Uint|Float|Bool)|time: )`)

// flagError says what a flag takes instead of quoting strconv's error:
// --parallel "two": want a whole number.
func flagError(err error) error {
	m := badFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Int": "a whole number", "Uint": "a whole number of 0 or more", "Float": "a number", "Bool": "true or false", "": "a duration such as 30s or 5m"}[m[3]]
	flag := m[2]
	if i := strings.LastIndex(flag, "--"); i >= 0 {
		flag = flag[i:] // "-p, --parallel" names the long form
	}
	return fmt.Errorf("%s %q: want %s", flag, m[1], want)
}
