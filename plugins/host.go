package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/plugins/internal/pluginpb"
	"github.com/tdsextract/tdsextract/sinks"
)

// Host runs plugin sinks for tdsextract: it makes the factory of the
// "plugin" sink type (a plugin named by its path), finds plugins in a
// directory (one "plugin:NAME" factory each), and asks plugins what they
// are and which options they take.
type Host struct {
	// Dir is the plugins directory: `type: plugin:NAME` and a bare name
	// in `path:` find executables there. Empty: no directory.
	Dir string
	// Logger receives the plugins' output, each line with the plugin's
	// name, and the host's notes (e.g. the transport fallback). Nil:
	// slog.Default().
	Logger *slog.Logger

	mu        sync.Mutex
	described map[describeKey]*Description
}

// Description is what a plugin says about itself.
type Description struct {
	Name        string
	Description string
	Options     sinks.Spec
	// SDK names the plugin SDK and version the plugin was built with.
	SDK string
	// Path is the executable.
	Path string
}

// describeKey identifies an executable's version: a replaced file is
// described anew.
type describeKey struct {
	path  string
	size  int64
	mtime time.Time
}

func (h *Host) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// TypePrefix starts the sink types of discovered plugins: plugin:NAME.
const TypePrefix = "plugin:"

// Factory is the "plugin" sink type: the executable in option path.
func (h *Host) Factory() sinks.Factory {
	return h.factory("plugin", "a sink plugin: an executable named by path (see plugins/README.md)", "")
}

// Discover returns a "plugin:NAME" factory for every executable in Dir
// (NAME is its file name without an .exe suffix), sorted by name. No
// plugin runs: each is asked for its options when a job is validated or
// its sinks are made. A missing directory holds no plugins.
func (h *Host) Discover() ([]sinks.Factory, error) {
	if h.Dir == "" {
		return nil, nil
	}
	es, err := os.ReadDir(h.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	var out []sinks.Factory
	for _, e := range es {
		path := filepath.Join(h.Dir, e.Name())
		if !isExecutable(path) {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".exe")
		out = append(out, h.factory(TypePrefix+name, "the sink plugin "+path, path))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func isExecutable(path string) bool {
	st, err := os.Stat(path) // follows links
	return err == nil && st.Mode().IsRegular() && (st.Mode().Perm()&0o111 != 0 || strings.HasSuffix(path, ".exe"))
}

// resolve finds the executable of a "plugin" sink's path option: a path
// as given (relative to the working directory), or a bare name in Dir.
func (h *Host) resolve(path string) (string, error) {
	if !strings.ContainsRune(path, os.PathSeparator) && !strings.ContainsRune(path, '/') {
		if h.Dir == "" {
			return "", fmt.Errorf("%q is a bare name but there is no plugins directory (--plugins-dir or TDSEXTRACT_PLUGINS_DIR); write ./%s for a file here", path, path)
		}
		p := filepath.Join(h.Dir, path)
		if !isExecutable(p) {
			return "", fmt.Errorf("no plugin %q in the plugins directory %s", path, h.Dir)
		}
		return p, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if !isExecutable(abs) {
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("plugin executable %s: %w", abs, err)
		}
		return "", fmt.Errorf("plugin %s is not an executable file", abs)
	}
	return abs, nil
}

// factory makes the factory of a plugin sink type; fixed is the
// executable of a discovered plugin ("": the path option names it).
func (h *Host) factory(name, description, fixed string) sinks.Factory {
	spec := hostSpec(fixed == "")
	parse := func(options map[string]any) (hostOptions, pluginRef, error) {
		o, err := parseHostOptions(spec, options)
		if err != nil {
			return o, pluginRef{}, err
		}
		ref := pluginRef{name: strings.TrimPrefix(name, TypePrefix), path: fixed, sha256: strings.ToLower(o.sha256)}
		if fixed == "" {
			if ref.path, err = h.resolve(o.path); err != nil {
				return o, ref, &sinks.OptionError{Key: "path", Msg: err.Error()}
			}
			ref.name = strings.TrimSuffix(filepath.Base(ref.path), ".exe")
		}
		return o, ref, nil
	}
	// check validates the plugin's own options against what it declares
	// (the plugin runs to say so, once per executable version).
	check := func(o hostOptions, ref pluginRef) error {
		d, err := h.describe(ref, o.timeout)
		if err != nil {
			return &PluginError{Plugin: ref.String(), Op: "describe", Err: err}
		}
		if _, err := d.Options.Resolve(o.plugin); err != nil {
			return prefixOptionErrors("options.", err)
		}
		return nil
	}
	return sinks.Factory{
		Name:        name,
		Description: description,
		Options:     spec,
		New: func(options map[string]any) (sinks.Sink, error) {
			o, ref, err := parse(options)
			if err == nil {
				err = check(o, ref)
			}
			if err != nil {
				return nil, err
			}
			return newHostSink(o, &remoteConn{ref: ref, opts: o, log: h.logger()}), nil
		},
		Validate: func(options map[string]any) error {
			o, ref, err := parse(options)
			if err != nil {
				return err
			}
			return check(o, ref)
		},
		Mapping: func(options map[string]any, cols []decode.Column) ([]sinks.ColumnMapping, error) {
			o, _, err := parse(options)
			if err != nil {
				return nil, err
			}
			return mapping(cols, o.schema), nil
		},
	}
}

// Describe runs a plugin executable (a path, or a name in Dir) to ask
// what it is and which options it takes. When sha256 is given the
// executable is checked against it first, and refused if it differs.
func (h *Host) Describe(path, sha256 string) (*Description, error) {
	p, err := h.resolve(path)
	if err != nil {
		return nil, err
	}
	ref := pluginRef{name: strings.TrimSuffix(filepath.Base(p), ".exe"), path: p, sha256: strings.ToLower(sha256)}
	d, err := h.describe(ref, DefaultTimeout)
	if err != nil {
		return nil, &PluginError{Plugin: ref.String(), Op: "describe", Err: err}
	}
	return d, nil
}

// Options lists every option of a discovered plugin's sink type
// (plugin:NAME): the host's, then the plugin's own under "options.", as
// `tdsextract sinks NAME` shows them. The plugin runs to say which.
func (h *Host) Options(f sinks.Factory) (sinks.Spec, error) {
	name, ok := strings.CutPrefix(f.Name, TypePrefix)
	if !ok {
		return f.Options, nil
	}
	d, err := h.Describe(name, "")
	if err != nil {
		return nil, err
	}
	return append(append(sinks.Spec(nil), f.Options...), prefixSpec("options.", d.Options)...), nil
}

func (h *Host) describe(ref pluginRef, timeout time.Duration) (*Description, error) {
	st, err := os.Stat(ref.path)
	if err != nil {
		return nil, err
	}
	key := describeKey{ref.path, st.Size(), st.ModTime()}
	h.mu.Lock()
	d, ok := h.described[key]
	h.mu.Unlock()
	if ok && ref.sha256 == "" {
		return d, nil
	}
	p, err := launch(ref, nil, h.logger(), timeout)
	if err != nil {
		return nil, err
	}
	defer p.kill()
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	resp, err := p.rpc.Describe(ctx, &pluginpb.DescribeRequest{})
	if err != nil {
		return nil, p.explain(err, timeout)
	}
	spec, err := optionsFromProto(resp.Options)
	if err != nil {
		return nil, fmt.Errorf("the plugin declares invalid options: %w", err)
	}
	d = &Description{Name: resp.Name, Description: resp.Description, Options: spec, SDK: resp.Sdk, Path: ref.path}
	h.mu.Lock()
	if h.described == nil {
		h.described = map[describeKey]*Description{}
	}
	h.described[key] = d
	h.mu.Unlock()
	return d, nil
}
