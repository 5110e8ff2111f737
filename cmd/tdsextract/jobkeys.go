package main

import (
	"errors"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/textdist"
)

var (
	// mapstructure's report: one line per problem, each naming the
	// struct or key path it is about.
	invalidKeys = regexp.MustCompile(`'([^']*)' has invalid keys: ([^\n]+)`)
	problem     = regexp.MustCompile(`(?m)^'([^']*)' ([^\n]+)$`)
	expected    = regexp.MustCompile(`^expected type '([^']*)', got unconvertible type '([^']*)'`)
	cannotParse = regexp.MustCompile(`^cannot parse value as '([^']*)'`)
)

// typeWords names a Go type of a job key, or of a decoded YAML value, as a
// job file's author knows it.
func typeWords(t string) string {
	switch {
	case t == "string" || strings.HasSuffix(t, ".Secret"):
		return "text"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping (key: value lines)"
	}
	return t
}

// valueProblem rewrites mapstructure's account of a value that does not
// fit its key, never quoting the value.
func valueProblem(s string) string {
	if m := expected.FindStringSubmatch(s); m != nil {
		return "want " + typeWords(m[1]) + ", got " + typeWords(m[2])
	}
	if m := cannotParse.FindStringSubmatch(s); m != nil {
		return "want " + typeWords(m[1])
	}
	return "this value does not fit the key; see the configuration reference in README.md"
}

// jobDecodeErrors turns the error of decoding a job file strictly into
// one *engine.ConfigError per problem, each naming the file and the key
// (source.pasword_env, extracts[0].wher) with a suggestion for a
// misspelt key; a value is never quoted (it may be a connection string).
func jobDecodeErrors(file string, err error) error {
	msg := err.Error()
	var errs []error
	for _, m := range invalidKeys.FindAllStringSubmatch(msg, -1) {
		path := keyPath(m[1])
		keys := strings.Split(m[2], ", ")
		sort.Strings(keys)
		for _, k := range keys {
			k = strings.TrimSpace(k)
			text := "unknown key"
			if near := nearestKey(path, k); near != "" {
				text += ` (did you mean "` + near + `"?)`
			}
			errs = append(errs, &engine.ConfigError{File: file, Field: joinKey(path, k), Msg: text + "; see the configuration reference in README.md"})
		}
	}
	for _, m := range problem.FindAllStringSubmatch(msg, -1) {
		if strings.HasPrefix(m[2], "has invalid keys: ") {
			continue
		}
		errs = append(errs, &engine.ConfigError{File: file, Field: keyPath(m[1]), Msg: valueProblem(m[2])})
	}
	if len(errs) == 0 {
		return &engine.ConfigError{File: file, Msg: "cannot decode the job file: see the configuration reference in README.md"}
	}
	return errors.Join(errs...)
}

// keyPath is a mapstructure name as a job key path: "" for the top level
// (which mapstructure names by its Go type).
func keyPath(name string) string {
	if name == "" || strings.Contains(name, "JobConfig") {
		return ""
	}
	return name
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var indexSuffix = regexp.MustCompile(`\[\d+\]$`)

// nearestKey is the key of the job struct at path closest to k (within
// two edits), or "".
func nearestKey(path, k string) string {
	t := reflect.TypeFor[engine.JobConfig]()
	if path != "" {
		for _, seg := range strings.Split(path, ".") {
			seg = indexSuffix.ReplaceAllString(seg, "")
			f, ok := fieldByKey(t, seg)
			if !ok {
				return ""
			}
			t = f.Type
			for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Struct {
				return ""
			}
		}
	}
	best, bestD := "", 3
	for i := 0; i < t.NumField(); i++ {
		name := tagName(t.Field(i))
		if name == "" {
			continue
		}
		if d := textdist.Distance(strings.ToLower(k), name, 0); d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if tagName(t.Field(i)) == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
	if name == "-" {
		return ""
	}
	return name
}
