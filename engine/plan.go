package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/partition"
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
	// StateDir and Manifest are the job's keys ("" for the defaults, see
	// JobConfig).
	StateDir, Manifest string
	Retry              RetryPolicy
	Extracts           []*ExtractPlan
	// Units are the pieces of work, in order: one per extract until the
	// plan is expanded (Runner.Expand), then one per key range of every
	// partitioned extract, each with its own predicate and parameters,
	// run and published on its own.
	Units []Unit
	// Expanded is set once the partitioned extracts are split.
	Expanded bool
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
	// Incremental is the watermark of an incremental extract (nil for a
	// full export) and Consistency its sessions' isolation; inc is the
	// window while a run executes (incremental.go).
	Incremental *incremental.Spec
	Consistency Consistency
	inc         *windowOnce
	// frozen is the window of the checkpointed run the plan belongs to,
	// as its planner fixed it (nil for a run that freezes none).
	frozen *incremental.Frozen
	// Partition, when set, splits the extract into key-range units when
	// the plan is expanded (Runner.Expand reads the key's MIN and MAX).
	Partition *partition.Spec
	// Parallel bounds the extract's units running at once (0: the job's).
	Parallel int
}

// IsTable reports whether the extract reads a table (not a query).
func (e *ExtractPlan) IsTable() bool { return e.Table != "" }

// Reads is what the extract's sinks take as the server stores it, as their
// factories declare: the one SELECT feeds every sink, so a column is
// selected unconverted only when all of them read it so.
func (e *ExtractPlan) Reads() catalog.Reads {
	r := catalog.Reads{Spatial: len(e.Sinks) > 0}
	for _, sp := range e.Sinks {
		r.Spatial = r.Spatial && sp.Factory.ReadsSpatial
	}
	return r
}

// Project is the select list of a table extract t: its columns, the
// default conversions its sinks need and its overrides. The run and
// `inspect` both build it here, so what inspect shows is what runs.
func (e *ExtractPlan) Project(t *catalog.Table) (*catalog.Projection, error) {
	return catalog.Project(t, e.Columns, e.Convert, e.Reads())
}

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
	// Range is the key range of a partitioned extract's unit: Where's
	// bounds, sent as parameters (Params).
	Range partition.Part
	// Part and Parts number the unit within its extract (0 of 1 for a
	// whole extract).
	Part, Parts int
}

// Params are the values of the unit's parameters (a range's bounds).
func (u Unit) Params() []session.Param { return u.Range.Params() }

// ID names the unit in the job, stably across runs of the same plan:
// the extract's name, and for a part of several "#NNNN/NNNN" (1-based).
func (u Unit) ID() string {
	if u.Parts <= 1 {
		return u.Extract.Name
	}
	return fmt.Sprintf("%s#%04d/%04d", u.Extract.Name, u.Part+1, u.Parts)
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
	p := &Plan{Job: job.Name, File: job.File, Parallel: DefaultParallel, SummaryFile: job.SummaryFile, StateDir: job.StateDir, Manifest: job.Manifest}
	p.Session = r.source(&job.Source)
	p.Retry = r.retry(&job.Retry)
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
	switch {
	case job.Migrate != nil && len(job.Extracts) > 0:
		r.add("migrate", "a job either migrates (migrate:) or runs extracts (extracts:), not both")
	case job.Migrate != nil:
		if job.Migrate.Target == "" {
			r.add("migrate.target", "missing: the PostgreSQL server, e.g. postgres://user@host:5432/db")
		}
	case len(job.Extracts) == 0:
		r.add("extracts", "no extract: add at least one table or query (or a migrate: section)")
	}
	names := map[string]int{}
	for i := range job.Extracts {
		ex := r.extract(i, &job.Extracts[i], jobSinks, reg, defTimeout, lookup)
		if ex == nil {
			continue
		}
		r.incremental(ex, &job.Extracts[i], job)
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
	file   string
	errs   []error
	states map[string]string // incremental state file -> the extract using it (incremental.go)
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
	if e.Parallel < 0 {
		r.add(f+".parallel", "must be 1 or more")
	}
	ex.Parallel = e.Parallel
	if e.Partition != nil {
		ex.Partition = r.partition(f+".partition", e.Partition)
		if ex.Partition != nil && e.Table == "" {
			r.add(f+".partition", "partitions split a table; a query extract cannot be partitioned")
		}
	}
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

// partition reads an extract's partition key: "auto", or a map with
// column and count, or predicates (auto: true is the same as "auto").
func (r *resolver) partition(field string, v any) *partition.Spec {
	if s, ok := v.(string); ok {
		if strings.EqualFold(strings.TrimSpace(s), "auto") {
			return &partition.Spec{Auto: true, Count: partition.DefaultCount}
		}
		r.add(field, "%q: use auto, or a map such as {column: id, count: 8} or {predicates: [...]}", s)
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.add(field, "use auto, or a map such as {column: id, count: 8} or {predicates: [...]}")
		return nil
	}
	spec := &partition.Spec{Count: partition.DefaultCount}
	bad := false
	for k, val := range m {
		switch strings.ToLower(k) {
		case "auto":
			b, ok := val.(bool)
			if !ok {
				r.add(field+".auto", "must be true or false")
				bad = true
			}
			spec.Auto = b
		case "column":
			s, ok := val.(string)
			if !ok || strings.TrimSpace(s) == "" {
				r.add(field+".column", "must name a column")
				bad = true
			}
			spec.Column = strings.TrimSpace(s)
		case "count":
			spec.Count = r.wholeIn(field+".count", val, partition.MaxCount, &bad)
		case "predicates":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				r.add(field+".predicates", "must be a non-empty list of predicates")
				bad = true
			}
			for i, p := range list {
				s, ok := p.(string)
				if !ok || strings.TrimSpace(s) == "" {
					r.add(fmt.Sprintf("%s.predicates[%d]", field, i), "must be a predicate (SQL text)")
					bad = true
				}
				spec.Predicates = append(spec.Predicates, s)
			}
		case "boundaries":
			str, isStr := val.(string)
			b, ok := partition.ParseBoundaries(strings.ToLower(strings.TrimSpace(str)))
			if !ok || !isStr {
				r.add(field+".boundaries", "must be minmax, sample or auto")
				bad = true
			}
			spec.Boundaries = b
		case "sample_rows":
			spec.SampleRows = r.wholeIn(field+".sample_rows", val, partition.MaxSampleRows, &bad)
		default:
			r.add(field+"."+k, "unknown key (partition takes auto, column, count, boundaries, sample_rows and predicates)")
			bad = true
		}
	}
	n := 0
	for _, set := range []bool{spec.Auto, spec.Column != "", spec.Predicates != nil} {
		if set {
			n++
		}
	}
	if n != 1 && !bad {
		r.add(field, "set exactly one of auto, column and predicates")
		bad = true
	}
	if spec.Predicates != nil && (spec.Boundaries != "" || spec.SampleRows != 0) {
		r.add(field, "boundaries and sample_rows place the cuts of auto or column; predicates are the parts as written")
		bad = true
	}
	if spec.SampleRows != 0 && spec.Boundaries != partition.BoundariesSample && spec.Boundaries != partition.BoundariesAuto {
		r.add(field+".sample_rows", "applies with boundaries: sample or auto")
		bad = true
	}
	if spec.Boundaries == partition.BoundariesMinMax {
		// The default is kept as "", so a plan's fingerprint does not
		// change with whether it was written out.
		spec.Boundaries = ""
	}
	if bad {
		return nil
	}
	return spec
}

// wholeIn reads a whole number from 1 to hi, reporting field and setting
// *bad when v is not one.
func (r *resolver) wholeIn(field string, v any, hi int, bad *bool) int {
	n, ok := toInt(v)
	if !ok || n < 1 || n > hi {
		r.add(field, "must be a whole number from 1 to %d", hi)
		*bad = true
	}
	return n
}

// toInt reads a whole number as YAML or a flag gives it.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		return int(x), true
	case float64:
		if x == float64(int(x)) {
			return int(x), true
		}
	case string:
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(x), &n); err == nil {
			return n, true
		}
	}
	return 0, false
}

// RetryPolicy is a resolved RetryConfig.
type RetryPolicy struct {
	Attempts     int
	Initial, Max time.Duration
}

// The retry defaults.
const (
	DefaultRetryAttempts = 3
	DefaultRetryInitial  = time.Second
	DefaultRetryMax      = 30 * time.Second
)

func (r *resolver) retry(c *RetryConfig) RetryPolicy {
	p := RetryPolicy{Attempts: DefaultRetryAttempts, Initial: DefaultRetryInitial, Max: DefaultRetryMax}
	switch {
	case c.Attempts < 0:
		r.add("retry.attempts", "must be 1 or more")
	case c.Attempts > 0:
		p.Attempts = c.Attempts
	}
	dur := func(field, s string, def time.Duration) time.Duration {
		if s == "" {
			return def
		}
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			r.add(field, "%q is not a duration such as 500ms or 10s", s)
			return def
		}
		return d
	}
	p.Initial = dur("retry.initial", c.Initial, DefaultRetryInitial)
	p.Max = dur("retry.max", c.Max, DefaultRetryMax)
	if p.Max < p.Initial {
		r.add("retry.max", "%s is less than retry.initial (%s)", p.Max, p.Initial)
	}
	return p
}
