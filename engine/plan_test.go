package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/engine/partition"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
)

// specSink is a registry with one sink that declares its options.
func specRegistry(t *testing.T) *sinks.Registry {
	t.Helper()
	r, err := sinks.NewRegistry(sinks.Factory{
		Name: "mem",
		Options: sinks.Spec{
			{Name: "path", Type: sinks.String, Default: "out/", Doc: "where"},
			{Name: "flush", Type: sinks.Duration, Default: 5 * time.Second, Doc: "how often"},
			{Name: "mode", Type: sinks.Enum, Values: []string{"fast", "safe"}, Default: "safe", Doc: "how"},
		},
		Validate: func(o map[string]any) error {
			if o["mode"] == "fast" && o["flush"].(time.Duration) > time.Minute {
				return &sinks.OptionError{Key: "flush", Msg: "at most 1m in fast mode"}
			}
			return nil
		},
		New: func(map[string]any) (sinks.Sink, error) { return &nopSink{}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolvePlan(t *testing.T) {
	env := map[string]string{"SINCE": "42", "PW": "secret"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	job := &JobConfig{
		Name:   "j",
		File:   "job.yaml",
		Source: SourceConfig{Connection: "sqlserver://sa@127.0.0.1:1433?database=x", Timeout: "30m", ConnectTimeout: "7s", PasswordEnv: "PW"},
		Sinks:  []SinkConfig{{Type: "mem", Options: map[string]any{"mode": "FAST", "flush": "2s"}}},
		Extracts: []ExtractConfig{
			{Table: "sales.orders", Where: "id > ${SINCE}", Verify: "Count", Convert: []ConvertConfig{{Column: "g", Expr: "raw"}}},
			{Name: "q", Query: "SELECT 1", Timeout: "none", Sinks: []SinkConfig{{Type: "mem"}}},
		},
	}
	p, err := resolve(job, specRegistry(t), look)
	if err != nil {
		t.Fatal(err)
	}
	if p.Parallel != DefaultParallel || p.Session.ConnectTimeout != 7*time.Second || p.Session.PasswordEnv != "PW" || p.File != "job.yaml" {
		t.Errorf("plan: %+v", p)
	}
	if len(p.Units) != 2 || p.Units[0].Extract != p.Extracts[0] || p.Units[0].Parts != 1 {
		t.Fatalf("units %+v", p.Units)
	}
	a, b := p.Extracts[0], p.Extracts[1]
	if a.Name != "sales.orders" || a.Schema != "sales" || a.Table != "orders" || a.Where != "id > 42" || a.Verify != VerifyCount ||
		a.Timeout != session.TimeoutOf(30*time.Minute) || a.Field != "extracts[0]" || len(a.Convert) != 1 {
		t.Errorf("table extract %+v", a)
	}
	if b.IsTable() || b.Query != "SELECT 1" || !b.Timeout.IsNone() || b.Verify != VerifyNone {
		t.Errorf("query extract %+v", b)
	}
	// Options come resolved: typed, normalised, defaults filled in.
	if o := a.Sinks[0].Options; o["mode"] != "fast" || o["flush"] != 2*time.Second || o["path"] != "out/" {
		t.Errorf("resolved options %v", o)
	}
	if o := b.Sinks[0].Options; o["mode"] != "safe" || o["flush"] != 5*time.Second {
		t.Errorf("defaults %v", o)
	}
	// A unit's predicate joins the extract's.
	u := Unit{Extract: a, Where: "id < 100", Part: 0, Parts: 2}
	if got := u.Predicate(); got != "(id > 42) AND (id < 100)" {
		t.Errorf("predicate %q", got)
	}
}

// Resolve reports every problem at once, each naming the file and the key.
func TestResolveReportsEveryError(t *testing.T) {
	job := &JobConfig{
		File:     "bad.yaml",
		Parallel: -1,
		Source:   SourceConfig{Connection: "sqlserver://sa@127.0.0.1:1433?database=x", Timeout: "0", ConnectTimeout: "soon", PasswordEnv: "UNSET_PW"},
		Sinks:    []SinkConfig{{Type: "mem", Options: map[string]any{"mdoe": "fast", "flush": "1h", "mode": "fast"}}},
		Extracts: []ExtractConfig{
			{Table: "a", Sinks: []SinkConfig{{Type: "parquetx"}}},
			{Table: "a", Query: "SELECT 1"},
			{Query: "SELECT 1", Verify: "count", Sinks: []SinkConfig{{Type: "mem", Options: map[string]any{"mode": "slow", "flush": "x"}}}},
			{Table: "b", Where: "d > ${MISSING}", Verify: "sometimes", Timeout: "later"},
		},
	}
	_, err := resolve(job, specRegistry(t), func(string) (string, bool) { return "", false })
	if err == nil {
		t.Fatal("invalid job accepted")
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("not a ConfigError: %T", err)
	}
	msg := err.Error()
	if n := strings.Count(msg, "sinks[0].options.mdoe"); n != 1 {
		t.Errorf("the job's sinks reported %d times, want once:\n%s", n, msg)
	}
	for _, want := range []string{
		"bad.yaml: parallel", "bad.yaml: source.timeout",
		// found before anything connects, not a failed login
		"bad.yaml: source.password_env: environment variable UNSET_PW is not set", "bad.yaml: source.connect_timeout",
		"bad.yaml: extracts[0].sinks[0].type: unknown sink type \"parquetx\" (known: mem)",
		"bad.yaml: extracts[1]: set table or query, not both",
		"bad.yaml: extracts[2].name", "bad.yaml: extracts[2].verify: count verification needs a table extract",
		"bad.yaml: extracts[2].sinks[0].options.mode: \"slow\": use \"fast\" or \"safe\"",
		"bad.yaml: extracts[2].sinks[0].options.flush: \"x\" is not a duration",
		"bad.yaml: sinks[0].options.mdoe: unknown option (did you mean \"mode\"?)",
		"bad.yaml: extracts[3].where: environment variable(s) MISSING not set",
		"bad.yaml: extracts[3].verify", "bad.yaml: extracts[3].timeout",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%v", want, msg)
		}
	}
	// Cross-option checks run on resolved options and name their key.
	job = &JobConfig{Source: SourceConfig{Connection: "sqlserver://sa@h?database=x"},
		Extracts: []ExtractConfig{{Table: "t", Sinks: []SinkConfig{{Type: "mem", Options: map[string]any{"mode": "fast", "flush": "2m"}}}}}}
	if _, err := resolve(job, specRegistry(t), nil); err == nil || !strings.Contains(err.Error(), "extracts[0].sinks[0].options.flush: at most 1m in fast mode") {
		t.Errorf("cross-option check: %v", err)
	}
}

// A password the run cannot read is a configuration error of the key
// that names it: the connection string's own PasswordFile key too.
func TestResolvePasswordSource(t *testing.T) {
	missing := t.TempDir() + "/no-such-file"
	for _, tc := range []struct {
		src  SourceConfig
		want string
	}{
		{SourceConfig{Connection: "sqlserver://sa@h?database=x", PasswordFile: missing}, "source.password_file: cannot read " + missing},
		{SourceConfig{Connection: secret.Secret("Server=h;Database=x;User ID=sa;Password File=" + missing)}, "source.connection: cannot read " + missing},
		{SourceConfig{Connection: "Server=h;Database=x;User ID=sa;Password Env=UNSET_PW"}, "source.connection: environment variable UNSET_PW is not set"},
	} {
		job := &JobConfig{File: "j.yaml", Source: tc.src, Extracts: []ExtractConfig{{Table: "t", Sinks: []SinkConfig{{Type: "mem"}}}}}
		_, err := resolve(job, specRegistry(t), func(string) (string, bool) { return "", false })
		if err == nil || !strings.Contains(err.Error(), "j.yaml: "+tc.want) {
			t.Errorf("%+v: %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestParseVerify(t *testing.T) {
	for in, want := range map[string]VerifyMode{"": VerifyNone, "none": VerifyNone, "COUNT": VerifyCount} {
		if v, err := ParseVerify(in); err != nil || v != want {
			t.Errorf("%q: %v %v", in, v, err)
		}
	}
	if _, err := ParseVerify("rows"); err == nil {
		t.Error("rows accepted")
	}
	if VerifyCount.String() != "count" || VerifyNone.String() != "none" {
		t.Error("names")
	}
}

func TestResolvePartition(t *testing.T) {
	mk := func(p any) *JobConfig {
		return &JobConfig{File: "p.yaml", Source: SourceConfig{Connection: "sqlserver://sa@h?database=x"}, Sinks: []SinkConfig{{Type: "mem"}},
			Extracts: []ExtractConfig{{Table: "t", Partition: p}}}
	}
	for _, c := range []struct {
		p    any
		want string // "" for valid
	}{
		{"auto", ""},
		{map[string]any{"column": "id", "count": 4}, ""},
		{map[string]any{"predicates": []any{"a < 1", "a >= 1"}}, ""},
		{"sometimes", "extracts[0].partition: \"sometimes\""},
		{map[string]any{"column": "id", "count": 0}, "extracts[0].partition.count"},
		{map[string]any{"column": "id", "auto": true}, "exactly one of auto, column and predicates"},
		{map[string]any{"colum": "id"}, "extracts[0].partition.colum: unknown key"},
		{map[string]any{"predicates": []any{}}, "extracts[0].partition.predicates"},
		{map[string]any{"column": "ts", "count": 8, "boundaries": "sample"}, ""},
		{map[string]any{"auto": true, "boundaries": "Auto", "sample_rows": 5000}, ""},
		{map[string]any{"column": "ts", "boundaries": "quantile"}, "extracts[0].partition.boundaries: must be minmax, sample or auto"},
		{map[string]any{"column": "ts", "boundaries": 3}, "extracts[0].partition.boundaries"},
		{map[string]any{"column": "ts", "sample_rows": 100}, "sample_rows: applies with boundaries: sample or auto"},
		{map[string]any{"column": "ts", "boundaries": "sample", "sample_rows": 0}, "extracts[0].partition.sample_rows"},
		{map[string]any{"predicates": []any{"a < 1"}, "boundaries": "sample"}, "predicates are the parts as written"},
	} {
		p, err := resolve(mk(c.p), specRegistry(t), nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.p, err)
		case c.want == "" && p.Extracts[0].Partition == nil:
			t.Errorf("%v: no partition spec", c.p)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want %q", c.p, err, c.want)
		}
	}
	// minmax written out is the default: the same spec, the same
	// fingerprint.
	a, errA := resolve(mk(map[string]any{"column": "id"}), specRegistry(t), nil)
	b, errB := resolve(mk(map[string]any{"column": "id", "boundaries": "minmax"}), specRegistry(t), nil)
	if errA != nil || errB != nil || a.Fingerprint() != b.Fingerprint() {
		t.Errorf("boundaries: minmax changes the plan: %v %v", errA, errB)
	}
	if p, err := resolve(mk(map[string]any{"column": "id", "boundaries": "sample"}), specRegistry(t), nil); err != nil || p.Extracts[0].Partition.Boundaries != partition.BoundariesSample || p.Fingerprint() == a.Fingerprint() {
		t.Errorf("boundaries: sample not in the plan: %v", err)
	}
	job := &JobConfig{Source: SourceConfig{Connection: "sqlserver://sa@h?database=x"}, Sinks: []SinkConfig{{Type: "mem"}},
		Extracts: []ExtractConfig{{Name: "q", Query: "SELECT 1", Partition: "auto"}}}
	if _, err := resolve(job, specRegistry(t), nil); err == nil || !strings.Contains(err.Error(), "query extract cannot be partitioned") {
		t.Errorf("partitioned query: %v", err)
	}
}
