package main

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/engine"
)

// sourceFlagOf names the flag of each source key of a job built from
// flags (sourceFlags).
var sourceFlagOf = map[string]string{
	"source.connection":      "--source",
	"source.password_env":    "--password-env",
	"source.password_file":   "--password-file",
	"source.timeout":         "--timeout",
	"source.connect_timeout": "--connect-timeout",
	"source":                 "--password-env/--password-file",
	"parallel":               "--parallel",
	"summary_file":           "--summary-json",
}

var (
	sinkKey    = regexp.MustCompile(`^sinks\[(\d+)\](?:\.(type|options\.(.+)))?$`)
	extractKey = regexp.MustCompile(`^extracts\[(\d+)\](?:\.([a-z_]+))?`)
)

// nameFlags rewrites the configuration errors of a job the command built
// from its flags (no job file) to name the flags, --to and --set csv.header
// rather than sinks[0].type and sinks[0].options.header: a user of export
// never wrote the job those keys are in.
func nameFlags(err error, job *engine.JobConfig) error {
	visit(err, func(e error) {
		var ce *engine.ConfigError
		if c, ok := e.(*engine.ConfigError); ok && c.File == "" {
			ce = c
		} else {
			return
		}
		if f, ok := sourceFlagOf[ce.Field]; ok {
			ce.Field = f
			return
		}
		if m := sinkKey.FindStringSubmatch(ce.Field); m != nil {
			i, _ := strconv.Atoi(m[1])
			typ := ""
			if i < len(job.Sinks) {
				typ = job.Sinks[i].Type
			}
			switch {
			case m[3] != "":
				ce.Field = "--set " + typ + "." + m[3]
			default:
				ce.Field = "--to " + typ
			}
			return
		}
		if m := extractKey.FindStringSubmatch(ce.Field); m != nil {
			i, _ := strconv.Atoi(m[1])
			what := "--query"
			if i < len(job.Extracts) && job.Extracts[i].Table != "" {
				what = "--table " + job.Extracts[i].Table
			}
			switch key := m[2]; key {
			case "", "table", "query", "sinks":
				ce.Field = what
			default:
				ce.Field = "--" + strings.ReplaceAll(key, "_", "-") + " (" + what + ")"
			}
		}
	})
	return err
}

// visit calls fn on err and every error it wraps or joins.
func visit(err error, fn func(error)) {
	for err != nil {
		fn(err)
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				visit(e, fn)
			}
			return
		}
		err = errors.Unwrap(err)
	}
}
