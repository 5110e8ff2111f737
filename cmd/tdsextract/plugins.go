package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tdsextract/tdsextract/plugins"
	"github.com/tdsextract/tdsextract/sinks"
)

// defaultPluginsDir is where plugin:NAME sinks are found when neither
// --plugins-dir nor TDSEXTRACT_PLUGINS_DIR says: the user's configuration
// directory (~/.config/tdsextract/plugins on Linux).
func defaultPluginsDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "tdsextract", "plugins")
}

// loadPlugins adds the plugin sink types to the registry: "plugin" (an
// executable named by its path option) and one plugin:NAME per
// executable of the plugins directory. No plugin runs here: a plugin
// runs when a job using it is resolved (to check its options) or run.
func (g *globalOpts) loadPlugins() error {
	if g.plugins != nil {
		return nil
	}
	dir := g.pluginsDir
	if dir == "" {
		dir = os.Getenv("TDSEXTRACT_PLUGINS_DIR")
	}
	if dir == "" {
		dir = defaultPluginsDir()
	}
	g.plugins = &plugins.Host{Dir: dir, Logger: g.logger()}
	found, err := g.plugins.Discover()
	if err != nil {
		return err
	}
	for _, f := range append([]sinks.Factory{g.plugins.Factory()}, found...) {
		if err := g.registry.Register(f); err != nil {
			return err
		}
	}
	return nil
}

// isPluginSink reports the plugin sink types.
func isPluginSink(typ string) bool {
	return typ == "plugin" || strings.HasPrefix(typ, plugins.TypePrefix)
}

// builtinSinkNames are the names that are not plugin sinks: what
// inspect maps when --to names none.
func builtinSinkNames(names []string) []string {
	var out []string
	for _, n := range names {
		if !isPluginSink(n) {
			out = append(out, n)
		}
	}
	return out
}

// exportPluginSink is the sink config of a plugin in `export --to`:
// plugin:NAME, or plugin:./path/to/executable for one outside the plugins
// directory. The output directory (--out) becomes the plugin's own path
// option when the plugin declares one and --set did not give it.
func (g *globalOpts) exportPluginSink(to string, opts map[string]any, out string) (typ string, _ map[string]any, _ error) {
	typ, name := "plugin", ""
	if rest, ok := strings.CutPrefix(to, plugins.TypePrefix); ok && strings.ContainsAny(rest, `/\`) {
		opts["path"] = rest
		name = rest
	} else if ok {
		typ, name = to, rest
	} else {
		name, _ = opts["path"].(string)
	}
	own, _ := opts["options"].(map[string]any)
	if own == nil {
		own = map[string]any{}
	}
	if _, given := own["path"]; !given && name != "" {
		sha, _ := opts["sha256"].(string)
		d, err := g.plugins.Describe(name, sha)
		if err != nil {
			return "", nil, err
		}
		if _, declared := d.Options.Lookup("path"); declared {
			own["path"] = out + string(os.PathSeparator)
		}
	}
	if len(own) > 0 {
		opts["options"] = own
	}
	return typ, opts, nil
}

// pluginOptions completes a plugin:NAME factory's options with the
// plugin's own (under "options."), for `tdsextract sinks NAME`.
func (g *globalOpts) pluginOptions(f sinks.Factory) (sinks.Factory, error) {
	if !strings.HasPrefix(f.Name, plugins.TypePrefix) {
		return f, nil
	}
	spec, err := g.plugins.Options(f)
	if err != nil {
		return f, err
	}
	f.Options = spec
	return f, nil
}
