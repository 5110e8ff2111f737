package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/sinks"
)

// The incremental and consistency keys resolve to the plan, the state file
// defaulting under the job's state directory; every misuse is reported
// with its key.
func TestResolveIncremental(t *testing.T) {
	job := &JobConfig{
		Name:   "nightly",
		Source: SourceConfig{Connection: "sqlserver://sa@127.0.0.1:1433?database=x"},
		Sinks:  []SinkConfig{{Type: "mem"}},
		Extracts: []ExtractConfig{
			{Table: "dbo.events", Incremental: &IncrementalConfig{Column: "rv"}, Consistency: "Snapshot"},
			{Table: "sales.orders", Incremental: &IncrementalConfig{Column: "order_id", State: "/var/lib/x/orders.json", Overlap: "100"}},
		},
	}
	p, err := Resolve(job, specRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Extracts[0], p.Extracts[1]
	if a.Incremental == nil || a.Incremental.Column != "rv" || a.Incremental.StateFile != filepath.Join(".tdsextract", "nightly", "events.watermark.json") || a.Consistency != ConsistencySnapshot {
		t.Errorf("extract 0: %+v %+v", a.Incremental, a.Consistency)
	}
	if b.Incremental.StateFile != "/var/lib/x/orders.json" || b.Incremental.Overlap != "100" || b.Consistency != ConsistencyNone {
		t.Errorf("extract 1: %+v", b.Incremental)
	}
	job.StateDir = "/srv/state"
	if p, err = Resolve(job, specRegistry(t)); err != nil || p.Extracts[0].Incremental.StateFile != filepath.Join("/srv/state", "events.watermark.json") {
		t.Errorf("state_dir: %v %+v", err, p)
	}

	bad := &JobConfig{
		File:   "bad.yaml",
		Source: SourceConfig{Connection: "sqlserver://sa@127.0.0.1:1433?database=x"},
		Sinks:  []SinkConfig{{Type: "mem"}},
		Extracts: []ExtractConfig{
			{Name: "q", Query: "SELECT 1", Incremental: &IncrementalConfig{Column: "id"}},
			{Table: "dbo.t", Incremental: &IncrementalConfig{}},
			{Table: "dbo.u", Consistency: "serializable"},
			{Table: "dbo.v", Incremental: &IncrementalConfig{Column: "id"}, Sinks: []SinkConfig{{Type: "mem", Options: map[string]any{"path": "out/v.csv"}}}},
			{Name: "v2", Table: "dbo.v", Incremental: &IncrementalConfig{Column: "id", State: ".tdsextract/bad/v.watermark.json"}},
			{Name: "v3", Table: "dbo.v", Incremental: &IncrementalConfig{Column: "id"}, Sinks: []SinkConfig{{Type: "skipper", Options: map[string]any{"if_exists": "skip"}}}},
		},
	}
	reg, err := sinks.NewRegistry(
		sinks.Factory{Name: "mem", Options: sinks.Spec{{Name: "path", Type: sinks.String, Default: "out/", Doc: "where"}},
			New: func(map[string]any) (sinks.Sink, error) { return &nopSink{}, nil }},
		sinks.Factory{Name: "skipper", Options: sinks.Spec{{Name: "if_exists", Type: sinks.Enum, Values: []string{"replace", "skip"}, Default: "replace", Doc: "when"}},
			New: func(map[string]any) (sinks.Sink, error) { return &nopSink{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Resolve(bad, reg)
	for _, want := range []string{"bad.yaml: extracts[0].incremental: an incremental extract needs a table",
		"extracts[1].incremental.column: missing", `extracts[2].consistency: "serializable": use none or snapshot`,
		`extracts[3].sinks[0].options.path: "out/v.csv" names one file`,
		"extracts[4].incremental.state: .tdsextract/bad/v.watermark.json is also the state file of extracts[3]",
		"extracts[5].sinks[0].options.if_exists: skip would leave"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
