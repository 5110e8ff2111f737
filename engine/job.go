package engine

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
)

// JobConfig is a job: one source, one or more extracts, each streamed once
// into one or more sinks. The CLI builds it from YAML, environment and flags
// (decoded strictly: an unknown key is an error) and hands it over as a
// plain struct; Validate checks it without touching the network.
type JobConfig struct {
	// Name labels the job in logs and the summary.
	Name string `mapstructure:"name"`
	// Source is the SQL Server to read from.
	Source SourceConfig `mapstructure:"source"`
	// Sinks are the default sinks of every extract that names none.
	Sinks []SinkConfig `mapstructure:"sinks"`
	// Extracts are the tables and queries to export, in order.
	Extracts []ExtractConfig `mapstructure:"extracts"`
	// Parallel is how many extracts run at once, each on its own session
	// (DESIGN.md §1: parallelism comes from sessions). Default 1.
	Parallel int `mapstructure:"parallel"`
	// SummaryFile, when set, receives the run summary as JSON.
	SummaryFile string `mapstructure:"summary_file"`
}

// SourceConfig names the source server.
type SourceConfig struct {
	// Connection is a connection string in URL form
	// (sqlserver://user@host:port?database=db&encrypt=mandatory) or ADO form
	// (Server=tcp:host,1433;Database=db;User ID=u;Encrypt=True).
	Connection secret.Secret `mapstructure:"connection"`
	// PasswordEnv and PasswordFile supply the password without writing it
	// into the job file.
	PasswordEnv  string `mapstructure:"password_env"`
	PasswordFile string `mapstructure:"password_file"`
	// Timeout is the default request deadline of every query: a budget
	// charged only while waiting on the network (DESIGN.md §5), e.g. "30m",
	// or "none". There is no hidden default: when it is empty the summary
	// reports "timeout none".
	Timeout string `mapstructure:"timeout"`
	// ConnectTimeout bounds dial, TLS and login, e.g. "15s".
	ConnectTimeout string `mapstructure:"connect_timeout"`
}

// ExtractConfig is one table or query.
type ExtractConfig struct {
	// Name identifies the extract; sinks derive file names from it.
	// Default: the table name ("schema.table" with "." kept).
	Name string `mapstructure:"name"`
	// Table is "schema.table" or "table" (schema dbo). Exactly one of
	// Table and Query is set.
	Table string `mapstructure:"table"`
	// Columns restricts and orders the exported columns of Table.
	Columns []string `mapstructure:"columns"`
	// Where is a SQL predicate appended to the SELECT of Table.
	Where string `mapstructure:"where"`
	// Query is a complete SELECT (or any batch producing result sets).
	Query string `mapstructure:"query"`
	// Convert overrides the SELECT expression of columns of Table; the
	// default converts spatial types with STAsBinary() and hierarchyid with
	// ToString() (DESIGN.md §7). A list, not a map, because column names
	// are case-sensitive and config keys are not.
	Convert []ConvertConfig `mapstructure:"convert"`
	// Timeout overrides the source's request deadline for this extract.
	Timeout string `mapstructure:"timeout"`
	// Verify is "none" (default) or "count": after the export, the rows
	// written must equal the source's COUNT_BIG(*) over the same predicate,
	// else the sinks publish nothing and the extract fails.
	Verify string `mapstructure:"verify"`
	// Sinks of this extract; default: the job's sinks.
	Sinks []SinkConfig `mapstructure:"sinks"`
}

// ConvertConfig replaces one column's SELECT expression.
type ConvertConfig struct {
	Column string `mapstructure:"column"`
	// Expr is the SQL expression; "raw" selects the column unconverted.
	Expr string `mapstructure:"expr"`
}

// SinkConfig is one destination: a registered sink type and its options.
type SinkConfig struct {
	Type    string         `mapstructure:"type"`
	Options map[string]any `mapstructure:"options"`
}

// ConfigError is a problem with the job's configuration. Field is the
// dotted path of the offending key, e.g. "extracts[1].table".
type ConfigError struct {
	Field string
	Msg   string
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return "config: " + e.Msg
	}
	return "config: " + e.Field + ": " + e.Msg
}

// Validate checks the job against reg (sink types and their options).
// It returns all problems found, joined.
func (j *JobConfig) Validate(reg *sinks.Registry) error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if j.Source.Connection == "" {
		add("source.connection", "missing: set it to a connection string such as sqlserver://user@host:1433?database=db (password via source.password_env)")
	} else if _, err := session.ParseConnString(string(j.Source.Connection)); err != nil {
		add("source.connection", "%v", err)
	}
	if j.Source.PasswordEnv != "" && j.Source.PasswordFile != "" {
		add("source", "set only one of password_env and password_file")
	}
	if _, err := parseTimeoutField(j.Source.Timeout); err != nil {
		add("source.timeout", "%v", err)
	}
	if j.Source.ConnectTimeout != "" {
		if _, err := parseDurationField(j.Source.ConnectTimeout); err != nil {
			add("source.connect_timeout", "%v", err)
		}
	}
	if j.Parallel < 0 {
		add("parallel", "must be 1 or more")
	}
	if len(j.Extracts) == 0 {
		add("extracts", "no extract: add at least one table or query")
	}
	names := map[string]int{}
	for i := range j.Extracts {
		e := &j.Extracts[i]
		f := fmt.Sprintf("extracts[%d]", i)
		switch {
		case e.Table == "" && e.Query == "":
			add(f, "set table or query")
		case e.Table != "" && e.Query != "":
			add(f, "set table or query, not both")
		}
		if e.Query != "" && (len(e.Columns) > 0 || e.Where != "" || len(e.Convert) > 0) {
			add(f, "columns, where and convert apply to a table, not to a query")
		}
		if e.Table != "" {
			if _, _, err := catalog.SplitTableName(e.Table); err != nil {
				add(f+".table", "%v", err)
			}
		}
		name := e.ExtractName()
		if name == "" {
			add(f+".name", "a query extract needs a name")
		} else if prev, dup := names[strings.ToLower(name)]; dup {
			add(f+".name", "%q is also the name of extracts[%d]; names must be unique", name, prev)
		} else {
			names[strings.ToLower(name)] = i
		}
		if _, err := parseTimeoutField(e.Timeout); err != nil {
			add(f+".timeout", "%v", err)
		}
		switch strings.ToLower(e.Verify) {
		case "", "none", "count":
		default:
			add(f+".verify", "%q: use none or count", e.Verify)
		}
		if strings.EqualFold(e.Verify, "count") && e.Query != "" {
			add(f+".verify", "count verification needs a table extract")
		}
		for k, c := range e.Convert {
			if c.Column == "" || c.Expr == "" {
				add(fmt.Sprintf("%s.convert[%d]", f, k), "needs column and expr")
			}
		}
		sinks := e.Sinks
		sf := f + ".sinks"
		if len(sinks) == 0 {
			sinks, sf = j.Sinks, "sinks"
		}
		if len(sinks) == 0 {
			add(sf, "no sink for extract %q: add a sinks list (e.g. type: csv)", name)
		}
		for k, s := range sinks {
			field := fmt.Sprintf("%s[%d]", sf, k)
			fac, ok := reg.Lookup(s.Type)
			if !ok {
				add(field+".type", "unknown sink type %q (known: %s)", s.Type, strings.Join(reg.Names(), ", "))
				continue
			}
			if fac.Validate != nil {
				if err := fac.Validate(s.Options); err != nil {
					add(field+".options", "%v", err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// ExtractName is the extract's name: Name, else the table name.
func (e *ExtractConfig) ExtractName() string {
	if e.Name != "" {
		return e.Name
	}
	if e.Table != "" {
		s, t, err := catalog.SplitTableName(e.Table)
		if err == nil {
			if strings.EqualFold(s, "dbo") {
				return t
			}
			return s + "." + t
		}
	}
	return ""
}

func parseTimeoutField(s string) (session.Timeout, error) {
	if s == "" {
		return session.NoTimeout, nil
	}
	return session.ParseTimeout(s)
}

func parseDurationField(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 15s or 2m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandVars replaces ${NAME} in s with the environment variable NAME, for
// incremental jobs whose scheduler passes a watermark. Only the braced form
// is expanded (SQL text may contain a bare $), and an unset variable is an
// error: an empty watermark would silently widen the export.
func ExpandVars(s string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable(s) %s not set (used as ${...} in the job)", strings.Join(missing, ", "))
	}
	return out, nil
}
