package engine

import (
	"path/filepath"
	"strings"
	"testing"
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
		},
	}
	_, err = Resolve(bad, specRegistry(t))
	for _, want := range []string{"bad.yaml: extracts[0].incremental: an incremental extract needs a table",
		"extracts[1].incremental.column: missing", `extracts[2].consistency: "serializable": use none or snapshot`,
		`extracts[3].sinks[0].options.path: "out/v.csv" names one file`,
		"extracts[4].incremental.state: .tdsextract/bad/v.watermark.json is also the state file of extracts[3]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
