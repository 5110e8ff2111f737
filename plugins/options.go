package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tdsextract/tdsextract/plugins/internal/pluginpb"
	"github.com/tdsextract/tdsextract/sinks"
)

// Defaults of the host options.
const (
	DefaultBatchRows       = 65536
	DefaultBatchBytes      = 16 << 20
	DefaultBatchesInFlight = 3
	DefaultTimeout         = 5 * time.Minute
	// maxBatchBytes keeps every offset of a batch within Arrow's int32
	// offsets, with room to spare.
	maxBatchBytes = 1 << 30
	// maxRingBytes bounds the memory of one plugin sink's batches.
	maxRingBytes = 16 << 30
)

// hostSpec declares the options every plugin sink takes from the host
// side; the plugin's own options go in "options". Discovered plugins
// (type plugin:NAME) take the same without "path".
func hostSpec(withPath bool) sinks.Spec {
	var s sinks.Spec
	if withPath {
		s = append(s, sinks.Option{Name: "path", Type: sinks.String, Required: true,
			Doc: "the plugin executable: a path (./my-sink, /opt/sinks/my-sink), or a bare name found in the plugins directory"})
	}
	return append(s,
		sinks.Option{Name: "sha256", Type: sinks.String,
			Doc: "the executable's SHA-256 in hex; when given, a file that does not match is refused before it runs"},
		sinks.Option{Name: "options", Type: sinks.Object,
			Doc: "the plugin's own options (a map), checked against the options the plugin declares"},
		sinks.Option{Name: "batch_rows", Type: sinks.Int, Default: int64(DefaultBatchRows), Range: &sinks.Range{Min: 1, Max: 1 << 24},
			Doc: "most rows in one Arrow batch"},
		sinks.Option{Name: "batch_bytes", Type: sinks.Size, Default: int64(DefaultBatchBytes), Range: &sinks.Range{Min: 64 << 10, Max: maxBatchBytes},
			Doc: "the memory of one batch (a slot of the shared memory); a batch ends before it is full, and a single row must fit"},
		sinks.Option{Name: "batches_in_flight", Type: sinks.Int, Default: int64(DefaultBatchesInFlight), Range: &sinks.Range{Min: 1, Max: 64},
			Doc: "batches the plugin may hold at once; memory is batches_in_flight × batch_bytes, whatever the table's size"},
		sinks.Option{Name: "transport", Type: sinks.Enum, Values: []string{"auto", "shm", "grpc"}, Default: "auto",
			Doc: "how batches reach the plugin: shm (shared memory, Linux), grpc (as bytes over the plugin's gRPC channel), or auto (shm where available, else grpc, reported in the log)"},
		sinks.Option{Name: "timeout", Type: sinks.Duration, Default: DefaultTimeout,
			Doc: "the longest the host waits for the plugin to start, take a batch, prepare or publish; 0 waits as long as the extract runs"},
		sinks.Option{Name: "timestamp_nanos", Type: sinks.Bool, Default: false,
			Doc: "send datetime2(7) and datetimeoffset(7) as nanosecond timestamps (exact, but 1677-09-21 .. 2262-04-11 only) instead of microseconds"},
		sinks.Option{Name: "offset_column", Type: sinks.Bool, Default: true,
			Doc: "add after each datetimeoffset column an int16 field <name>__offset_minutes with the value's original offset"},
		sinks.Option{Name: "variant_type_column", Type: sinks.Bool, Default: true,
			Doc: "add after each sql_variant column a utf8 field <name>__type with each value's base type"},
	)
}

// hostOptions are the resolved host options of one plugin sink.
type hostOptions struct {
	path, sha256    string
	plugin          map[string]any
	batchRows       int
	batchBytes      int
	batchesInFlight int
	transport       string
	timeout         time.Duration
	schema          schemaOptions
}

func parseHostOptions(spec sinks.Spec, options map[string]any) (hostOptions, error) {
	r, err := spec.Resolve(options)
	if err != nil {
		return hostOptions{}, err
	}
	o := hostOptions{
		batchRows:       int(r["batch_rows"].(int64)),
		batchBytes:      int(r["batch_bytes"].(int64)),
		batchesInFlight: int(r["batches_in_flight"].(int64)),
		transport:       r["transport"].(string),
		timeout:         r["timeout"].(time.Duration),
		schema: schemaOptions{
			timestampNanos:    r["timestamp_nanos"].(bool),
			offsetColumn:      r["offset_column"].(bool),
			variantTypeColumn: r["variant_type_column"].(bool),
		},
	}
	o.path, _ = r["path"].(string)
	o.sha256, _ = r["sha256"].(string)
	var errs []error
	switch v := r["options"].(type) {
	case nil:
	case map[string]any:
		o.plugin = v
	default:
		errs = append(errs, &sinks.OptionError{Key: "options", Msg: "want a map of the plugin's options"})
	}
	if ring := int64(o.batchesInFlight) * int64(o.batchBytes); ring > maxRingBytes || ring > math.MaxInt/2 {
		errs = append(errs, &sinks.OptionError{Key: "batches_in_flight", Msg: fmt.Sprintf("batches_in_flight × batch_bytes is %s, over the %s a plugin's batches may take", sinks.FormatSize(ring), sinks.FormatSize(min(maxRingBytes, math.MaxInt/2)))})
	}
	if o.sha256 != "" && (len(o.sha256) != 64 || !isHex(o.sha256)) {
		errs = append(errs, &sinks.OptionError{Key: "sha256", Msg: "want 64 hex digits (sha256sum prints them)"})
	}
	return o, errors.Join(errs...)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ---- option declarations over the wire ----

func optionsToProto(spec sinks.Spec) ([]*pluginpb.Option, error) {
	out := make([]*pluginpb.Option, len(spec))
	for i, o := range spec {
		p := &pluginpb.Option{Name: o.Name, Type: o.Type.String(), DefaultDoc: o.DefaultDoc, Values: o.Values,
			Doc: o.Doc, Required: o.Required, Secret: o.Secret}
		if o.Default != nil {
			d := o.Default
			if dur, ok := d.(time.Duration); ok {
				d = dur.String()
			}
			b, err := json.Marshal(d)
			if err != nil {
				return nil, fmt.Errorf("plugins: option %q: default: %w", o.Name, err)
			}
			p.DefaultJson = string(b)
		}
		out[i] = p
	}
	return out, nil
}

var optionTypes = map[string]sinks.OptionType{
	"string": sinks.String, "int": sinks.Int, "bool": sinks.Bool, "duration": sinks.Duration,
	"size": sinks.Size, "enum": sinks.Enum, "list": sinks.List, "object": sinks.Object,
}

func optionsFromProto(ps []*pluginpb.Option) (sinks.Spec, error) {
	spec := make(sinks.Spec, len(ps))
	for i, p := range ps {
		t, ok := optionTypes[p.Type]
		if !ok {
			return nil, fmt.Errorf("option %q has the unknown type %q", p.Name, p.Type)
		}
		o := sinks.Option{Name: p.Name, Type: t, DefaultDoc: p.DefaultDoc, Values: p.Values, Doc: p.Doc,
			Required: p.Required, Secret: p.Secret}
		if p.DefaultJson != "" {
			var v any
			if err := json.Unmarshal([]byte(p.DefaultJson), &v); err != nil {
				return nil, fmt.Errorf("option %q: default: %w", p.Name, err)
			}
			// Defaults in their Go types, as Spec.Resolve returns values.
			cv, err := sinks.Spec{{Name: "x", Type: t, Values: p.Values}}.Resolve(map[string]any{"x": v})
			if err != nil {
				return nil, fmt.Errorf("option %q: default %s: %w", p.Name, p.DefaultJson, err)
			}
			o.Default = cv["x"]
		}
		spec[i] = o
	}
	return spec, nil
}
