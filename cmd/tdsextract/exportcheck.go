package main

import (
	"errors"
	"fmt"
	"strings"
)

// exportFlagsUnused refuses export flags that would have no effect, which
// a user would otherwise take as applied: --where, --columns and --verify
// shape --table extracts, not a --query; --target is the server of a sink
// that loads one, and none of the --to sinks does.
func exportFlagsUnused(changed func(flag string) bool, tables int, serverSinks int) error {
	var errs []string
	if tables == 0 {
		var set []string
		for _, f := range []string{"where", "columns", "verify"} {
			if changed(f) {
				set = append(set, "--"+f)
			}
		}
		if len(set) > 0 {
			errs = append(errs, fmt.Sprintf("%s shape(s) a --table extract; put it in the --query itself", strings.Join(set, ", ")))
		}
	}
	if changed("target") && serverSinks == 0 {
		errs = append(errs, "--target is the server of a sink that loads one (--to postgres); none of the --to sinks does")
	}
	if len(errs) > 0 {
		return &usageError{errors.New(strings.Join(errs, "; "))}
	}
	return nil
}
