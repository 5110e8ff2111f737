package engine

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tdsextract/tdsextract/engine/catalog"
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
	// Parallel is how many extracts run at once, each on its own session:
	// parallelism comes from sessions, each decoding one result set.
	// Default 1.
	Parallel int `mapstructure:"parallel"`
	// SummaryFile, when set, receives the run summary as JSON.
	SummaryFile string `mapstructure:"summary_file"`
	// Migrate, when set, makes the job a migration of the source database
	// into PostgreSQL (package engine/migrate) instead of extracts.
	Migrate *MigrateConfig `mapstructure:"migrate"`
	// StateDir holds what a job keeps between runs: the run's checkpoints
	// (which units are finished, so a run started again does only what is
	// missing) and incremental extracts' watermark files. Unset, each has
	// its own default: checkpoints in
	// $XDG_STATE_HOME/tdsextract/<job>-<fingerprint> (a changed job starts
	// afresh), watermarks in .tdsextract/<job> under the working directory
	// (a watermark must outlive edits to the job). Checkpoints are kept
	// when an extract is partitioned, state_dir or manifest is set, or the
	// run resumes or runs a share (--resume, --unit, --run-id).
	StateDir string `mapstructure:"state_dir"`
	// Manifest is where the job-level manifest is written once every unit
	// is finished (default: manifest.json in the state directory).
	Manifest string `mapstructure:"manifest"`
	// Retry says how a unit that failed transiently is retried.
	Retry RetryConfig `mapstructure:"retry"`
	// File is the job file the configuration was read from, for messages
	// (set by whoever read it; not a key of the file).
	File string `mapstructure:"-"`
}

// RetryConfig is the retry policy of units that fail transiently (a lost
// connection, a deadlock victim, a failover; session.IsTransient): each
// retry runs the unit again from the start on a fresh connection, after a
// delay that doubles from Initial up to Max, with jitter.
type RetryConfig struct {
	// Attempts is the number of runs of a unit in all (default 3; 1 = no
	// retry).
	Attempts int `mapstructure:"attempts"`
	// Initial is the first delay (default 1s); Max caps the delay (default
	// 30s).
	Initial string `mapstructure:"initial"`
	Max     string `mapstructure:"max"`
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
	// charged only while waiting on the network, e.g. "30m",
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
	// ToString(), which no sink can read raw. A list, not a map, because
	// column names are case-sensitive and config keys are not.
	Convert []ConvertConfig `mapstructure:"convert"`
	// Timeout overrides the source's request deadline for this extract.
	Timeout string `mapstructure:"timeout"`
	// Partition splits a table extract into key ranges, each a unit of its
	// own (its own session, sinks, files and checkpoint): "auto" (the
	// leading clustered key column), or a map with column, count (default
	// 8) or predicates (a list of WHERE predicates, one unit each), and
	// boundaries (minmax, sample or auto) and sample_rows.
	Partition any `mapstructure:"partition"`
	// Parallel bounds how many units of this extract run at once; default
	// the job's parallel.
	Parallel int `mapstructure:"parallel"`
	// Verify is "none" (default) or "count": after the export, the rows
	// written must equal the source's COUNT_BIG(*) over the same predicate,
	// else the sinks publish nothing and the extract fails.
	Verify string `mapstructure:"verify"`
	// Sinks of this extract; default: the job's sinks.
	Sinks []SinkConfig `mapstructure:"sinks"`
	// Incremental exports only the rows past the last run's watermark
	// (incremental.go).
	Incremental *IncrementalConfig `mapstructure:"incremental"`
	// Consistency is "none" (default) or "snapshot": the extract's
	// queries in one SNAPSHOT transaction per session.
	Consistency string `mapstructure:"consistency"`
}

// MigrateConfig is the migrate: section of a job: the whole source
// database (or the tables Include and Exclude select) into PostgreSQL.
// The engine only checks its shape; package engine/migrate runs it.
type MigrateConfig struct {
	// Target is the PostgreSQL server: a postgres:// URL or a
	// keyword/value string.
	Target secret.Secret `mapstructure:"target"`
	// TargetPasswordEnv and TargetPasswordFile supply its password.
	TargetPasswordEnv  string `mapstructure:"target_password_env"`
	TargetPasswordFile string `mapstructure:"target_password_file"`
	// Include and Exclude select tables and views by schema.table
	// patterns with * and ? (default every table and view).
	Include []string `mapstructure:"include"`
	Exclude []string `mapstructure:"exclude"`
	// Parallel is how many tables load at once (default 4).
	Parallel int `mapstructure:"parallel"`
	// SplitRows: a table with more rows whose clustered key leads with
	// an integer column loads as key ranges of about this many rows
	// (0: the default, 1000000; negative: never split).
	SplitRows int64 `mapstructure:"split_rows"`
	// Verify is none (default), count or checksum.
	Verify string `mapstructure:"verify"`
	// Identifiers is lower (default) or preserve.
	Identifiers string `mapstructure:"identifiers"`
	// CaseInsensitive is none (default) or icu.
	CaseInsensitive string `mapstructure:"case_insensitive"`
	// Analyze runs ANALYZE on every table once it is loaded and indexed.
	Analyze bool `mapstructure:"analyze"`
	// Resume continues an earlier run recorded in the state table.
	Resume bool `mapstructure:"resume"`
	// StateTable is schema.table of the record of finished steps
	// (default public.tdsextract_migrate).
	StateTable string `mapstructure:"state_table"`
	// MaintenanceWorkMem is the PostgreSQL maintenance_work_mem of the
	// sessions that build keys and indexes, e.g. 1GB (default "server":
	// the server's setting).
	MaintenanceWorkMem string `mapstructure:"maintenance_work_mem"`
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

// ConfigError is a problem with the job's configuration. File is the job
// file (when the job came from one), Field the dotted path of the
// offending key, e.g. "extracts[1].sinks[0].options.dialect".
type ConfigError struct {
	File  string
	Field string
	Msg   string
}

func (e *ConfigError) Error() string {
	s := "config: "
	if e.File != "" {
		s += e.File + ": "
	}
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Validate checks the job against reg (sink types and their options)
// without touching the network: it is Resolve without keeping the plan,
// and returns every problem found, joined.
func (j *JobConfig) Validate(reg *sinks.Registry) error {
	_, err := Resolve(j, reg)
	return err
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
