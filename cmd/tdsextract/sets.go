package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/sinks"
)

// sinkSets parses repeated --set sink.option=value flags into options per
// sink, for the sinks in to. Each value is text, resolved against the
// sink's spec as a job file's option is (so header=false is a bool and
// max_bytes=64MiB a size); every problem is reported, each naming its
// flag.
func sinkSets(reg *sinks.Registry, to, sets []string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, t := range to {
		out[t] = map[string]any{}
	}
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, &engine.ConfigError{Field: "--set " + flag, Msg: fmt.Sprintf(format, args...)})
	}
	for _, s := range sets {
		key, value, ok := strings.Cut(s, "=")
		sink, opt, dotted := strings.Cut(key, ".")
		if !ok || !dotted || sink == "" || opt == "" {
			bad(s, "write --set sink.option=value, e.g. --set csv.header=false")
			continue
		}
		opts, used := out[sink]
		if !used {
			if _, known := reg.Lookup(sink); !known {
				bad(s, "unknown sink %q (known: %s)", sink, strings.Join(reg.Names(), ", "))
			} else {
				bad(s, "sink %s is not one of this command's sinks (%s); add it with --to", sink, strings.Join(to, ", "))
			}
			continue
		}
		// A further dot sets a key of an object option: a plugin's own
		// options, --set plugin:jsonl.options.path=out/.
		if obj, key, nested := strings.Cut(opt, "."); nested && obj != "" && key != "" {
			m, _ := opts[obj].(map[string]any)
			if m == nil {
				m = map[string]any{}
				opts[obj] = m
			}
			m[key] = value
			continue
		}
		opts[opt] = value
	}
	// Resolve each sink's options now, so a mistake names the flag rather
	// than a key of a job the command built.
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, ok := reg.Lookup(n)
		if !ok {
			continue // reported by the plan, with the other sink names
		}
		if _, err := f.Resolve(out[n]); err != nil {
			for _, e := range flatten(err) {
				var oe *sinks.OptionError
				if errors.As(e, &oe) && oe.Key != "" {
					bad(n+"."+oe.Key, "%s", oe.Msg)
				} else {
					bad(n, "%v", e)
				}
			}
		}
	}
	return out, errors.Join(errs...)
}

// flatten lists the errors joined in err.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
