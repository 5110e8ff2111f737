package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/plugins/internal/pluginpb"
	"github.com/tdsextract/tdsextract/sinks"
)

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// A plugin whose executable does not match the job's sha256 is refused
// before it runs: the test plugin, which notes every start in a marker
// file, never starts.
func TestWrongChecksumRefusedBeforeRun(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	t.Setenv("TDSX_TESTPLUGIN_MARKER", marker)
	h, _ := testHost(t)
	good := sha256File(t, bins.testplugin)
	bad := strings.Repeat("0", 64)
	f := h.Factory()
	err := f.Validate(map[string]any{"path": "testplugin", "sha256": bad})
	if err == nil || !strings.Contains(err.Error(), "refused to run it: its SHA-256 is "+good+", not the "+bad) {
		t.Fatalf("wrong checksum: %v", err)
	}
	if _, err := f.New(map[string]any{"path": "testplugin", "sha256": bad}); err == nil {
		t.Fatal("New accepted a wrong checksum")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the plugin ran despite its wrong checksum (marker: %v)", err)
	}
	// The right checksum, in either case, runs it.
	if err := f.Validate(map[string]any{"path": "testplugin", "sha256": strings.ToUpper(good)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plugin did not run with its checksum: %v", err)
	}
	// A checksum that is not one is an option error.
	if err := f.Validate(map[string]any{"path": "testplugin", "sha256": "abc"}); err == nil || !strings.Contains(err.Error(), "sha256: want 64 hex digits") {
		t.Fatalf("malformed checksum: %v", err)
	}
}

// The plugin's own options are checked against what it declares (it runs
// once to say so) with every problem named by its place in the job; the
// host's are checked without it.
func TestPluginOptionsValidated(t *testing.T) {
	h, _ := testHost(t)
	f := h.Factory()
	err := f.Validate(map[string]any{"path": "testplugin", "batch_rows": 0,
		"options": map[string]any{"fial": "crash", "at": "never"}})
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, w := range []string{"batch_rows: 0 is outside"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	err = f.Validate(map[string]any{"path": "testplugin", "options": map[string]any{"fial": "crash", "at": "never"}})
	for _, w := range []string{`options.fial: unknown option (did you mean "fail"?)`, `options.at: "never": use "open", "batch", "prepare" or "publish"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	if err := f.Validate(map[string]any{"path": "no-such-plugin"}); err == nil || !strings.Contains(err.Error(), `no plugin "no-such-plugin" in the plugins directory`) {
		t.Errorf("missing plugin: %v", err)
	}
	if err := f.Validate(map[string]any{"path": "./" + filepath.Base(t.TempDir())}); err == nil {
		t.Error("a directory accepted as a plugin")
	}
	if err := f.Validate(map[string]any{"path": "testplugin", "transport": "carrier-pigeon"}); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Errorf("bad transport: %v", err)
	}
}

// Discover makes one plugin:NAME factory per executable of the plugins
// directory without running any; Describe and Options run one to list
// its options.
func TestDiscoverAndDescribe(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	t.Setenv("TDSX_TESTPLUGIN_MARKER", marker)
	h, _ := testHost(t)
	fs, err := h.Discover()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "plugin:arrowipc,plugin:jsonl,plugin:testplugin" {
		t.Fatalf("discovered %v", names)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("discovery ran a plugin")
	}
	d, err := h.Describe("testplugin", "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "testplugin" || !strings.Contains(d.SDK, "protocol 1") {
		t.Fatalf("description %+v", d)
	}
	if o, ok := d.Options.Lookup("after_batches"); !ok || o.Default != int64(1) || o.Type != sinks.Int {
		t.Fatalf("after_batches: %+v", o)
	}
	spec, err := h.Options(fs[2])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := spec.Lookup("options.fail"); !ok {
		t.Fatalf("options of plugin:testplugin: %s", spec.Markdown())
	}
	if _, ok := spec.Lookup("path"); ok {
		t.Fatal("plugin:NAME takes no path")
	}
	// plugin:NAME runs its executable like type plugin does.
	dir := t.TempDir()
	tb, _ := testDB().Table("dbo", "odbc5")
	st := runPlugin(t, fs[1], map[string]any{"options": map[string]any{"path": dir + "/"}}, tb)
	if !strings.HasSuffix(st.Files[0], "odbc5.jsonl") {
		t.Fatalf("files %v", st.Files)
	}
}

// The mapping `inspect` shows: the Arrow type of each column, lossy ones
// flagged with the reason and the option that avoids it.
func TestMapping(t *testing.T) {
	tb, _ := testDB().Table("dbo", "type_matrix")
	h, _ := testHost(t)
	f := h.Factory()
	m, err := f.Mapping(map[string]any{"path": "jsonl"}, tb.Columns)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sinks.ColumnMapping{}
	for i, c := range tb.Columns {
		got[decode.SQLTypeName(&c)] = m[i]
	}
	for typ, want := range map[string]string{
		"decimal(38,38)":    "arrow decimal(38, 38)",
		"datetime2(7)":      "arrow timestamp[us]",
		"datetimeoffset(7)": "arrow timestamp[us, tz=UTC] + c_datetimeoffset_7__offset_minutes int16",
		"uniqueidentifier":  "arrow fixed_size_binary[16]",
		"money":             "arrow decimal(19, 4)",
	} {
		if got[typ].Target != want {
			t.Errorf("%s -> %q, want %q", typ, got[typ].Target, want)
		}
	}
	if !got["datetime2(7)"].Lossy || !strings.Contains(got["datetime2(7)"].Why, "timestamp_nanos") || got["datetime2(3)"].Lossy {
		t.Errorf("datetime2 lossiness: %+v %+v", got["datetime2(7)"], got["datetime2(3)"])
	}
	m, _ = f.Mapping(map[string]any{"path": "jsonl", "timestamp_nanos": true}, tb.Columns)
	for i, c := range tb.Columns {
		if c.Kind() == decode.KindDateTime2 && c.Type.Scale == 7 && (m[i].Lossy || m[i].Target != "arrow timestamp[ns]") {
			t.Errorf("timestamp_nanos: %+v", m[i])
		}
	}
}

// The in-process adapter of go-plugin (plugin.TestPluginGRPCConn): the
// plugin side and the host side of the protocol in one process, over a
// real gRPC connection, with the batches in shared memory and as bytes.
func TestGRPCAdapter(t *testing.T) {
	db := testDB()
	tb, _ := db.Table("dbo", "type_matrix")
	for _, transport := range []string{"shm", "grpc"} {
		t.Run(transport, func(t *testing.T) {
			col := &collector{}
			p := col.plugin()
			client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{pluginName: &grpcPlugin{p: &p}})
			defer client.Close()
			raw, err := client.Dispense(pluginName)
			if err != nil {
				t.Fatal(err)
			}
			opts, err := parseHostOptions(hostSpec(false), map[string]any{"transport": transport, "batch_bytes": "256KiB",
				"batches_in_flight": 2, "options": map[string]any{"tag": "y"}})
			if err != nil {
				t.Fatal(err)
			}
			h, _ := testHost(t)
			c := &remoteConn{ref: pluginRef{name: "collect"}, opts: opts, log: h.logger(),
				proc: &process{rpc: raw.(pluginpb.SinkClient), out: &pluginOutput{log: h.logger()}}}
			if transport == "shm" {
				m, err := newSharedMemory(opts.batchesInFlight * opts.batchBytes)
				if err != nil {
					t.Fatal(err)
				}
				// In one process the plugin side maps the read-only
				// descriptor itself, not descriptor 3.
				c.shm, c.fd = m, uint32(m.ro.Fd())
			}
			s := newHostSink(opts, c)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s.ctx, s.started = ctx, true
			c.ctx = ctx
			sinktest.StreamTable(t, tb, s, tb.Rows, false)
			st, err := s.Publish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Rows != tb.Rows || col.opts["tag"] != "y" || col.info.Name != "" {
				t.Fatalf("stats %+v options %v info %+v", st, col.opts, col.info)
			}
			compareRows(t, tb, col.schema, col.rows, false)
			if r := c.ring; r == nil || r.bytes != (transport == "grpc") {
				t.Fatalf("transport: ring %+v", r)
			}
		})
	}
}
