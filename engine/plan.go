package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
)

// Plan is a job resolved once: every key checked, every default applied,
// every value typed (timeouts, verify modes, sink options resolved against
// their sink's spec), every ${VAR} expanded. The runner executes a plan
// unit by unit and never parses configuration text again.
type Plan struct {
	Job string
	// File is the job file, for messages ("" when the job was built in
	// code or from flags).
	File string
	// Session is the source connection; its ConnectTimeout bounds dial,
	// TLS and login.
	Session session.Config
	// Parallel is how many units run at once, each on its own session.
	Parallel    int
	SummaryFile string
	Extracts    []*ExtractPlan
	// Units are the pieces of work, in order. Today every extract is one
	// unit; a key-range partitioned extract will be several, each with its
	// own predicate, run and published on its own.
	Units []Unit
}

// ExtractPlan is one extract of a plan.
type ExtractPlan struct {
	// Name is unique in the job; sinks derive file names from it.
	Name string
	// Field is where the extract is in the job, "extracts[2]", for
	// messages.
	Field string
	// Schema and Table name a table extract; both are empty for a query.
	Schema, Table string
	// Query is a query extract's SQL, variables expanded.
	Query string
	// Columns, Where (variables expanded) and Convert shape a table
	// extract's SELECT (catalog.Project).
	Columns []string
	Where   string
	Convert []catalog.Override
	// Timeout is the request deadline of every query of the extract.
	Timeout session.Timeout
	Verify  VerifyMode
	Sinks   []SinkPlan
}

// IsTable reports whether the extract reads a table (not a query).
func (e *ExtractPlan) IsTable() bool { return e.Table != "" }

// SinkPlan is one sink of an extract: its factory and its options,
// already resolved against the factory's spec (defaults filled in).
type SinkPlan struct {
	Type    string
	Factory sinks.Factory
	Options map[string]any
}

// Unit is one piece of work: a SELECT streamed once into a fresh set of
// the extract's sinks, verified and published on its own. Units of one
// extract differ only in Where.
type Unit struct {
	Extract *ExtractPlan
	// Where is the unit's own predicate, ANDed with the extract's; "" for
	// a unit that is the whole extract.
	Where string
	// Part and Parts number the unit within its extract (0 of 1 for a
	// whole extract).
	Part, Parts int
}

// Predicate is the WHERE of the unit's SELECT: the extract's and the
// unit's predicates together, "" for none.
func (u Unit) Predicate() string {
	switch {
	case u.Where == "":
		return u.Extract.Where
	case u.Extract.Where == "":
		return u.Where
	}
	return "(" + u.Extract.Where + ") AND (" + u.Where + ")"
}

// VerifyMode is what is checked after an extract streamed.
type VerifyMode uint8

const (
	// VerifyNone checks nothing beyond the stream completing.
	VerifyNone VerifyMode = iota
	// VerifyCount compares the rows written with the source's
	// COUNT_BIG(*) over the same predicate; a mismatch publishes nothing.
	VerifyCount
)

func (v VerifyMode) String() string {
	if v == VerifyCount {
		return "count"
	}
	return "none"
}

// ParseVerify reads a verify key: "none" or "count" (any case); "" is
// the default, none.
func ParseVerify(s string) (VerifyMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return VerifyNone, nil
	case "count":
		return VerifyCount, nil
	}
	return VerifyNone, fmt.Errorf("%q: use none or count", s)
}

// The defaults of a job's keys. Resolve applies them; the README's
// configuration reference states them.
const (
	// DefaultParallel units run at once.
	DefaultParallel = 1
	// DefaultVerify is no verification.
	DefaultVerify = VerifyNone
)

// DefaultTimeout is the request deadline when none is configured: none.
// There is no hidden budget; the summary says "timeout none".
var DefaultTimeout = session.NoTimeout

// Resolve checks job against reg (sink types and options) and returns its
// plan. It needs no network. It reports every problem it finds, joined,
// each a *ConfigError naming the job file and the key. ${VAR} in where and
// query are expanded from the environment; an unset variable is an error.
func Resolve(job *JobConfig, reg *sinks.Registry) (*Plan, error) {
	return resolve(job, reg, os.LookupEnv)
}

func resolve(job *JobConfig, reg *sinks.Registry, lookup func(string) (string, bool)) (*Plan, error) {
	r := &resolver{file: job.File, lookup: lookup}
	if reg == nil {
		r.add("", "engine: no sink registry")
		return nil, r.err()
	}
	p := &Plan{Job: job.Name, File: job.File, Parallel: DefaultParallel, SummaryFile: job.SummaryFile}
	p.Session = r.source(&job.Source)
	switch {
	case job.Parallel < 0:
		r.add("parallel", "must be 1 or more")
	case job.Parallel > 0:
		p.Parallel = job.Parallel
	}
	defTimeout := r.timeout("source.timeout", job.Source.Timeout, DefaultTimeout)
	// The job's sinks are resolved once (their problems reported once) for
	// every extract that names none of its own.
	jobSinks := r.sinks("sinks", job.Sinks, reg)
	if len(job.Extracts) == 0 {
		r.add("extracts", "no extract: add at least one table or query")
	}
	names := map[string]int{}
	for i := range job.Extracts {
		ex := r.extract(i, &job.Extracts[i], jobSinks, reg, defTimeout, lookup)
		if ex == nil {
			continue
		}
		if prev, dup := names[strings.ToLower(ex.Name)]; dup {
			r.add(fmt.Sprintf("extracts[%d].name", i), "%q is also the name of extracts[%d]; names must be unique", ex.Name, prev)
		} else {
			names[strings.ToLower(ex.Name)] = i
		}
		p.Extracts = append(p.Extracts, ex)
		p.Units = append(p.Units, Unit{Extract: ex, Parts: 1})
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// resolver collects the problems of one job.
type resolver struct {
	file string
	errs []error
	// lookup reads the environment (nil: os.LookupEnv).
	lookup func(string) (string, bool)
}

func (r *resolver) add(field, format string, args ...any) {
	r.errs = append(r.errs, &ConfigError{File: r.file, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (r *resolver) err() error { return errors.Join(r.errs...) }

// source resolves the connection: the connection string, where the
// password comes from, the connect timeout.
func (r *resolver) source(src *SourceConfig) session.Config {
	var cfg session.Config
	if src.Connection == "" {
		r.add("source.connection", "missing: set it to a connection string such as sqlserver://user@host:1433?database=db (password via source.password_env)")
	} else {
		c, err := session.ParseConnString(string(src.Connection))
		if err != nil {
			r.add("source.connection", "%v", err)
		}
		cfg = c
	}
	switch {
	case src.PasswordEnv != "" && src.PasswordFile != "":
		r.add("source", "set only one of password_env and password_file")
	case src.PasswordEnv != "":
		cfg.Password, cfg.PasswordFile, cfg.PasswordEnv = "", "", src.PasswordEnv
	case src.PasswordFile != "":
		cfg.Password, cfg.PasswordEnv, cfg.PasswordFile = "", "", src.PasswordFile
	}
	r.credentials(src, &cfg)
	if src.ConnectTimeout != "" {
		d, err := time.ParseDuration(strings.TrimSpace(src.ConnectTimeout))
		switch {
		case err != nil:
			r.add("source.connect_timeout", "%q is not a duration such as 15s or 2m", src.ConnectTimeout)
		case d < 0:
			r.add("source.connect_timeout", "%q is negative", src.ConnectTimeout)
		default:
			cfg.ConnectTimeout = d
		}
	}
	return cfg
}

// credentials checks, before anything connects, that the password can be
// read: an unset password variable or an unreadable password file is a
// configuration error of the key that names it, not a failed connect.
func (r *resolver) credentials(src *SourceConfig, cfg *session.Config) {
	field := func(key string, fromSource bool) string {
		if fromSource {
			return "source." + key
		}
		return "source.connection"
	}
	switch {
	case cfg.PasswordEnv != "":
		lookup := r.lookup
		if lookup == nil {
			lookup = os.LookupEnv
		}
		if _, ok := lookup(cfg.PasswordEnv); !ok {
			r.add(field("password_env", src.PasswordEnv != ""), "environment variable %s is not set: export it before the run (or use password_file)", cfg.PasswordEnv)
		}
	case cfg.PasswordFile != "":
		f, err := os.Open(cfg.PasswordFile)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is named below
			}
			r.add(field("password_file", src.PasswordFile != ""), "cannot read %s: %v", cfg.PasswordFile, err)
			return
		}
		_ = f.Close()
	}
}

// ResolveSource resolves a job's source alone, for commands that connect
// without running extracts (inspect): the session config and the request
// deadline of source.timeout.
func ResolveSource(src *SourceConfig) (session.Config, session.Timeout, error) {
	r := &resolver{}
	cfg := r.source(src)
	t := r.timeout("source.timeout", src.Timeout, DefaultTimeout)
	return cfg, t, r.err()
}

// timeout reads a timeout key; "" is def.
func (r *resolver) timeout(field, s string, def session.Timeout) session.Timeout {
	if s == "" {
		return def
	}
	t, err := session.ParseTimeout(s)
	if err != nil {
		r.add(field, "%v", err)
		return def
	}
	return t
}

func (r *resolver) extract(i int, e *ExtractConfig, jobSinks []SinkPlan, reg *sinks.Registry, defTimeout session.Timeout,
	lookup func(string) (string, bool)) *ExtractPlan {
	f := fmt.Sprintf("extracts[%d]", i)
	ex := &ExtractPlan{Name: e.ExtractName(), Field: f, Columns: e.Columns}
	ok := true
	switch {
	case e.Table == "" && e.Query == "":
		r.add(f, "set table or query")
		ok = false
	case e.Table != "" && e.Query != "":
		r.add(f, "set table or query, not both")
		ok = false
	}
	if e.Query != "" && (len(e.Columns) > 0 || e.Where != "" || len(e.Convert) > 0) {
		r.add(f, "columns, where and convert apply to a table, not to a query")
	}
	if e.Table != "" {
		s, t, err := catalog.SplitTableName(e.Table)
		if err != nil {
			r.add(f+".table", "%v", err)
			ok = false
		}
		ex.Schema, ex.Table = s, t
	}
	if ex.Name == "" && e.Query != "" {
		r.add(f+".name", "a query extract needs a name")
		ok = false
	}
	expand := func(field, s string) string {
		v, err := ExpandVars(s, lookup)
		if err != nil {
			r.add(f+"."+field, "%v", err)
		}
		return v
	}
	ex.Where = expand("where", e.Where)
	ex.Query = expand("query", e.Query)
	ex.Timeout = r.timeout(f+".timeout", e.Timeout, defTimeout)
	v, err := ParseVerify(e.Verify)
	if err != nil {
		r.add(f+".verify", "%v", err)
	} else if v == VerifyCount && e.Query != "" {
		r.add(f+".verify", "count verification needs a table extract")
	}
	ex.Verify = v
	for k, c := range e.Convert {
		if c.Column == "" || c.Expr == "" {
			r.add(fmt.Sprintf("%s.convert[%d]", f, k), "needs column and expr")
		}
		ex.Convert = append(ex.Convert, catalog.Override{Column: c.Column, Expr: c.Expr})
	}
	switch {
	case len(e.Sinks) > 0:
		ex.Sinks = r.sinks(f+".sinks", e.Sinks, reg)
	case jobSinks != nil:
		ex.Sinks = jobSinks
	default:
		r.add(f+".sinks", "no sink for extract %q: add a sinks list here or for the job (e.g. type: csv)", ex.Name)
	}
	if !ok {
		return nil
	}
	return ex
}

// sinks resolves a sinks list; it is nil when the list is empty.
func (r *resolver) sinks(field string, list []SinkConfig, reg *sinks.Registry) []SinkPlan {
	var out []SinkPlan
	for k, s := range list {
		if sp, ok := r.sink(fmt.Sprintf("%s[%d]", field, k), s, reg); ok {
			out = append(out, sp)
		}
	}
	if len(list) > 0 && out == nil {
		out = []SinkPlan{} // given but broken: reported, not "no sinks"
	}
	return out
}

// sink resolves one sink: its type in the registry, its options against
// the factory's spec and checks.
func (r *resolver) sink(field string, s SinkConfig, reg *sinks.Registry) (SinkPlan, bool) {
	fac, ok := reg.Lookup(s.Type)
	if !ok {
		r.add(field+".type", "unknown sink type %q (known: %s)", s.Type, strings.Join(reg.Names(), ", "))
		return SinkPlan{}, false
	}
	opts, err := fac.Resolve(s.Options)
	if err != nil {
		r.optionErrors(field+".options", err)
		return SinkPlan{}, false
	}
	return SinkPlan{Type: s.Type, Factory: fac, Options: opts}, true
}

// optionErrors adds every problem in a sink's option error: each
// *sinks.OptionError under its own key.
func (r *resolver) optionErrors(field string, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			r.optionErrors(field, e)
		}
		return
	}
	var oe *sinks.OptionError
	if errors.As(err, &oe) {
		if oe.Key != "" {
			field += "." + oe.Key
		}
		r.add(field, "%s", oe.Msg)
		return
	}
	r.add(field, "%v", err)
}
