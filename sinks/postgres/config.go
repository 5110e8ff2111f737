package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
)

// Table modes.
const (
	// ModeCreate creates the table; a table of that name is an error.
	ModeCreate = "create"
	// ModeAppend adds the rows to the table, creating it when missing.
	ModeAppend = "append"
	// ModeTruncate empties the table first (keeping its definition,
	// indexes and grants), creating it when missing.
	ModeTruncate = "truncate"
	// ModeReplace drops the table and creates it again from the mapping.
	ModeReplace = "replace"
)

// Policies for values PostgreSQL refuses.
const (
	RefuseFail    = "fail"
	RefuseReject  = "reject"
	RefuseReplace = "replace"
)

// Spec declares the sink's options: validation, defaults, the option table
// of doc.go and the README, and `tdsextract sinks postgres` come from it.
var Spec = sinks.Spec{
	{Name: "connection", Type: sinks.String, Required: true, Secret: true,
		Doc: "the PostgreSQL server: a URL `postgres://user@host:5432/db?sslmode=verify-full` or a keyword/value string `host=... port=... dbname=... user=... sslmode=...`; what it leaves out comes from the PG* environment variables as with libpq"},
	{Name: "password_env", Type: sinks.String, Default: "", Doc: "environment variable holding the password (instead of writing it in the connection)"},
	{Name: "password_file", Type: sinks.String, Default: "", Doc: "file whose first line is the password"},
	{Name: "schema", Type: sinks.String, Default: "", DefaultDoc: "the connection's current schema (usually public)",
		Doc: "target schema; a template where {schema}, {table} and {extract} are the source schema, table and extract name; created when missing"},
	{Name: "table", Type: sinks.String, Default: "{table}", Doc: "target table; a template as for schema ({table} is the extract name for a query)"},
	{Name: "mode", Type: sinks.Enum, Values: []string{ModeAppend, ModeCreate, ModeTruncate, ModeReplace}, Default: ModeAppend,
		Doc: "append: add the rows, creating the table when missing; create: the table must not exist; truncate: empty it first, keeping its definition; replace: drop it and create it from the mapping. Each is one transaction: readers see the old table or the new, never part"},
	{Name: "identifiers", Type: sinks.Enum, Values: []string{IdentLower, IdentPreserve}, Default: IdentLower,
		Doc: "lower: names folded to lower case (usable unquoted); preserve: names as the source spells them. Either way names are quoted in SQL when needed, and two columns that would get one name are an error before anything is written"},
	{Name: "columns", Type: sinks.Object, Doc: "per-column rules, a list of {source, name, type}: rename a column and/or override its PostgreSQL type (e.g. text, bigint, numeric(20,4))"},
	{Name: "refused_values", Type: sinks.Enum, Values: []string{RefuseFail, RefuseReject, RefuseReplace}, Default: RefuseFail,
		Doc: "what to do with a value PostgreSQL would refuse (a NUL character in text, `\\u0000` in jsonb, a string longer than an existing varchar(n), a number outside an existing column's range): fail the load naming the row and column; reject the row to reject_file; or replace NULs by nul_replacement (other refused values still fail)"},
	{Name: "nul_replacement", Type: sinks.String, Default: "", Doc: "what refused_values: replace puts in place of each NUL (default: nothing, the NUL is removed)"},
	{Name: "reject_file", Type: sinks.String, Default: "{extract}.rejects.jsonl",
		Doc: "where refused_values: reject writes the rejected rows (one JSON object a line: row number, key, column, reason); relative paths are beside the run summary (the job's summary_file), else in the working directory; a template as for schema"},
	{Name: "key_columns", Type: sinks.List, DefaultDoc: "the first column", Doc: "source columns that identify a row in the reject file"},
	{Name: "offset_column", Type: sinks.Bool, Default: true, Doc: "add after each datetimeoffset column a smallint `<name>__offset_minutes` with the original offset (timestamptz keeps the instant only)"},
	{Name: "variant_type_column", Type: sinks.Bool, Default: true, Doc: "add after each sql_variant column a text `<name>__type` with the base type of each value (the value is stored as its text)"},
	{Name: "not_null", Type: sinks.Bool, Default: true, Doc: "created tables declare NOT NULL where the source column is not nullable"},
	{Name: "freeze", Type: sinks.Bool, Default: true,
		Doc: "rows loaded into a table the load created or truncated (modes create, truncate, replace, a new table in append) are written frozen (COPY FREEZE): no later VACUUM rewrites every page to freeze them, and the first reads dirty no page; false for a plain COPY"},
	{Name: "buffer_size", Type: sinks.Size, Default: int64(DefaultBufferSize), Doc: "size of each COPY buffer the rows are encoded into"},
	{Name: "buffers", Type: sinks.Int, Default: int64(DefaultBuffers), Doc: "COPY buffers in flight: encoding fills one while the others are sent"},
	{Name: "connect_timeout", Type: sinks.Duration, Default: 30 * time.Second, Doc: "bound on connecting and logging in"},
	{Name: "application_name", Type: sinks.String, Default: "tdsextract", Doc: "application_name of the session (pg_stat_activity)"},
}

// Defaults.
const (
	DefaultBufferSize = 256 << 10
	DefaultBuffers    = 4
)

// Config is the sink's options in their Go types.
type Config struct {
	Conn              ConnConfig
	Schema, Table     string
	Mode              string
	Identifiers       string
	Columns           []ColumnRule
	RefusedValues     string
	NulReplacement    string
	RejectFile        string
	KeyColumns        []string
	OffsetColumn      bool
	VariantTypeColumn bool
	NotNull           bool
	Freeze            bool
	BufferSize        int
	Buffers           int
	BeforeCommit      BeforeCommit
	OnRow             OnRow

	// stream replaces the owned-buffer pipe (the hand-off benchmark).
	stream func(buffers, size int) copyStream
}

// BeforeCommit, when set in a Config built in Go (the migrate command), runs
// in the load's transaction after the last row is in and before COMMIT,
// e.g. to create indexes or constraints that must appear with the data.
// An error rolls the whole load back.
type BeforeCommit func(ctx context.Context, tx Execer, t *Table) error

// OnRow, when set in a Config built in Go (the migrate command's
// checksum), sees every tuple as it goes into the COPY: the binary COPY
// encoding of one row (its 16-bit field count, then each field's 32-bit
// length and bytes). The slice is only valid until OnRow returns; a
// rejected row is not passed.
type OnRow func(tuple []byte)

// ConnConfig is how to reach PostgreSQL.
type ConnConfig struct {
	// Connection is a postgres:// URL or a keyword/value string.
	Connection secret.Secret
	// PasswordEnv and PasswordFile supply the password.
	PasswordEnv, PasswordFile string
	ConnectTimeout            time.Duration
	ApplicationName           string
}

// ParseConfig checks options against Spec and returns the config.
func ParseConfig(options map[string]any) (Config, error) {
	r, err := Spec.Resolve(options)
	if err != nil {
		return Config{}, fmt.Errorf("postgres: %w", err)
	}
	c := Config{
		Conn: ConnConfig{
			Connection:      secret.Secret(optStr(r["connection"])),
			PasswordEnv:     optStr(r["password_env"]),
			PasswordFile:    optStr(r["password_file"]),
			ConnectTimeout:  r["connect_timeout"].(time.Duration),
			ApplicationName: optStr(r["application_name"]),
		},
		Schema:            optStr(r["schema"]),
		Table:             optStr(r["table"]),
		Mode:              optStr(r["mode"]),
		Identifiers:       optStr(r["identifiers"]),
		RefusedValues:     optStr(r["refused_values"]),
		NulReplacement:    optStr(r["nul_replacement"]),
		RejectFile:        optStr(r["reject_file"]),
		OffsetColumn:      r["offset_column"].(bool),
		VariantTypeColumn: r["variant_type_column"].(bool),
		NotNull:           r["not_null"].(bool),
		Freeze:            r["freeze"].(bool),
		BufferSize:        int(r["buffer_size"].(int64)),
		Buffers:           int(r["buffers"].(int64)),
	}
	if k, ok := r["key_columns"].([]string); ok {
		c.KeyColumns = k
	}
	if v, ok := r["columns"]; ok {
		items, ok := v.([]any)
		if !ok {
			return Config{}, fmt.Errorf("postgres: columns: want a list of {source, name, type}")
		}
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return Config{}, fmt.Errorf("postgres: columns[%d]: want {source, name, type}", i)
			}
			var rule ColumnRule
			if err := sinks.DecodeOptions(m, &rule); err != nil {
				return Config{}, fmt.Errorf("postgres: columns[%d]: %w", i, err)
			}
			c.Columns = append(c.Columns, rule)
		}
	}
	return c, c.Validate()
}

func optStr(v any) string {
	s, _ := v.(string)
	return s
}

// Validate checks a config built in Go or by ParseConfig.
func (c *Config) Validate() error {
	var errs []string
	if c.Conn.Connection == "" {
		errs = append(errs, "connection: required")
	} else if _, err := pgconn.ParseConfig(c.Conn.Connection.Reveal()); err != nil {
		errs = append(errs, "connection: cannot parse it (use postgres://user@host:5432/db?sslmode=... or host=... dbname=... user=...)")
	}
	if c.Conn.PasswordEnv != "" && c.Conn.PasswordFile != "" {
		errs = append(errs, "set only one of password_env and password_file")
	}
	if c.Table == "" {
		errs = append(errs, "table: empty")
	}
	switch c.Mode {
	case ModeAppend, ModeCreate, ModeTruncate, ModeReplace:
	default:
		errs = append(errs, fmt.Sprintf("mode %q: use append, create, truncate or replace", c.Mode))
	}
	switch c.Identifiers {
	case IdentLower, IdentPreserve:
	default:
		errs = append(errs, fmt.Sprintf("identifiers %q: use lower or preserve", c.Identifiers))
	}
	switch c.RefusedValues {
	case RefuseFail, RefuseReject, RefuseReplace:
	default:
		errs = append(errs, fmt.Sprintf("refused_values %q: use fail, reject or replace", c.RefusedValues))
	}
	if strings.ContainsRune(c.NulReplacement, 0) {
		errs = append(errs, "nul_replacement: cannot itself hold a NUL")
	}
	if c.RefusedValues == RefuseReject && c.RejectFile == "" {
		errs = append(errs, "reject_file: empty, but refused_values is reject")
	}
	for i, r := range c.Columns {
		if r.Source == "" || (r.Name == "" && r.Type == "") {
			errs = append(errs, fmt.Sprintf("columns[%d]: needs source and a name or a type", i))
		}
		if r.Type != "" {
			if _, err := ParseType(r.Type); err != nil {
				errs = append(errs, fmt.Sprintf("columns[%d]: %v", i, err))
			}
		}
	}
	if c.BufferSize < 4<<10 || c.BufferSize > 256<<20 {
		errs = append(errs, fmt.Sprintf("buffer_size %d: use 4 KiB .. 256 MiB", c.BufferSize))
	}
	if c.Buffers < 2 || c.Buffers > 64 {
		errs = append(errs, fmt.Sprintf("buffers %d: use 2 .. 64", c.Buffers))
	}
	if len(errs) > 0 {
		return fmt.Errorf("postgres: %s", strings.Join(errs, "; "))
	}
	return nil
}

func (c *Config) mapOptions() MapOptions {
	return MapOptions{Identifiers: c.Identifiers, Rules: c.Columns, OffsetColumn: c.OffsetColumn, VariantTypeColumn: c.VariantTypeColumn}
}
