package sinks

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/internal/textdist"
)

// OptionType is the type of a sink option's value.
type OptionType uint8

const (
	// String is any text.
	String OptionType = iota + 1
	// Int is a whole number; given as a number or as its decimal text.
	Int
	// Bool is true or false; also given as "true"/"false", "yes"/"no",
	// "on"/"off" or 1/0.
	Bool
	// Duration is a Go duration such as "30s" or "15m".
	Duration
	// Size is a byte count: a whole number, or text with a unit such as
	// "64MiB", "256KiB", "1GB" (powers of 1024 for KiB/MiB/GiB, of 1000
	// for KB/MB/GB).
	Size
	// Enum is one of the option's Values (compared case-insensitively and
	// normalised to the spelling in Values).
	Enum
	// List is a list of strings; also given as one comma-separated string.
	List
	// Object is a nested map or list of maps, checked by the sink itself.
	Object
)

func (t OptionType) String() string {
	switch t {
	case String:
		return "string"
	case Int:
		return "int"
	case Bool:
		return "bool"
	case Duration:
		return "duration"
	case Size:
		return "size"
	case Enum:
		return "enum"
	case List:
		return "list"
	case Object:
		return "object"
	}
	return "unknown"
}

// Option declares one option of a sink: from the declarations come the
// validation of a job file, the defaults, `tdsextract sinks NAME` and the
// option tables of the documentation, so the four cannot disagree.
type Option struct {
	// Name is the key in the sink's options, lower case with underscores.
	Name string
	Type OptionType
	// Default is the value used when the option is not given, in the
	// option's Go type (string, int64, bool, time.Duration, int64 bytes for
	// Size, []string for List), or nil when there is none. A default that
	// depends on other options or the machine is nil here and described
	// in DefaultDoc.
	Default any
	// DefaultDoc describes a default that Default cannot hold, e.g.
	// "1 on up to 2 CPUs, else 2".
	DefaultDoc string
	// Values are the allowed values of an Enum.
	Values []string
	// Aliases are other spellings of an Enum's values, each mapped to the
	// value it stands for (e.g. "\r\n" for "crlf"); they are accepted, never
	// shown.
	Aliases map[string]string
	// Range bounds an Int or Size, both ends included; nil for none.
	Range *Range
	// Doc says what the option does, in one or two sentences.
	Doc string
	// Required options must be given.
	Required bool
	// Secret options (passwords, connection strings) are never shown:
	// errors name the key only.
	Secret bool
}

// Range is the allowed interval of an Int or Size option.
type Range struct{ Min, Max int64 }

// Spec is the declared options of a sink, in documentation order.
type Spec []Option

// Check reports the first mistake in the spec itself: a name given twice
// or not lower case, a default of the wrong Go type, outside the range or
// not one of an Enum's values. Registry.Register checks every factory's
// spec, so a mistake is found when the binary starts, not by a user.
func (s Spec) Check() error {
	seen := map[string]bool{}
	for i := range s {
		o := &s[i]
		if o.Name == "" || o.Name != strings.ToLower(o.Name) || strings.ContainsAny(o.Name, " .-") || seen[o.Name] {
			return fmt.Errorf("sinks: option %q: names are unique, lower case, with underscores", o.Name)
		}
		seen[o.Name] = true
		if o.Type == Enum && len(o.Values) == 0 {
			return fmt.Errorf("sinks: option %q: an enum needs values", o.Name)
		}
		if o.Range != nil && o.Type != Int && o.Type != Size {
			return fmt.Errorf("sinks: option %q: only int and size options have a range", o.Name)
		}
		if o.Default == nil {
			continue
		}
		d, err := o.convert(o.Default)
		if err != nil {
			return fmt.Errorf("sinks: option %q: default %v: %v", o.Name, o.Default, err)
		}
		if !reflect.DeepEqual(d, o.Default) {
			return fmt.Errorf("sinks: option %q: default %#v is not in the option's Go type (%T)", o.Name, o.Default, d)
		}
	}
	return nil
}

// Lookup returns the option named name.
func (s Spec) Lookup(name string) (Option, bool) {
	for _, o := range s {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// OptionError is one problem with one option. Key is the option's name
// (empty for a problem with the options as a whole).
type OptionError struct {
	Key string
	Msg string
}

func (e *OptionError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

// Resolve checks options against the spec and returns them normalised:
// every declared option present, given or defaulted, in its Go type
// (Enum values in their declared spelling, Size as int64 bytes, Duration
// as time.Duration, List as []string); options without a default that
// were not given are absent. Unknown keys, wrong types and values outside
// an Enum are errors; Resolve reports every problem, joined, each an
// *OptionError naming its key, never a secret option's value.
func (s Spec) Resolve(options map[string]any) (map[string]any, error) {
	var errs []error
	out := make(map[string]any, len(s))
	var unknown []string
	for k := range options {
		if _, ok := s.Lookup(k); !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		msg := "unknown option"
		if near := s.nearest(k); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		errs = append(errs, &OptionError{Key: k, Msg: msg})
	}
	for _, o := range s {
		v, given := options[o.Name]
		if !given || v == nil {
			if o.Required {
				errs = append(errs, &OptionError{Key: o.Name, Msg: "required: " + o.Doc})
			} else if o.Default != nil {
				out[o.Name] = o.Default
			}
			continue
		}
		nv, err := o.convert(v)
		if err != nil {
			errs = append(errs, &OptionError{Key: o.Name, Msg: err.Error()})
			continue
		}
		out[o.Name] = nv
	}
	return out, errors.Join(errs...)
}

// nearest returns the declared name closest to k when it is a likely typo
// (at most two edits away), else "".
func (s Spec) nearest(k string) string {
	best, bestD := "", 3
	for _, o := range s {
		if d := textdist.Distance(strings.ToLower(k), o.Name, 0); d < bestD {
			best, bestD = o.Name, d
		}
	}
	return best
}

// describe is how an error shows a given value: never a secret's.
func (o *Option) describe(v any) string {
	if o.Secret {
		return "the value"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

func (o *Option) convert(v any) (any, error) {
	switch o.Type {
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
		switch v.(type) {
		case int, int64, float64, bool:
			return fmt.Sprint(v), nil
		}
		return nil, fmt.Errorf("want text, got %s", kindOf(v))
	case Int:
		n, err := toInt(v)
		if err != nil {
			return nil, fmt.Errorf("%s is not a whole number", o.describe(v))
		}
		return n, o.inRange(n)
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int, int64:
			if n, _ := toInt(x); n == 0 || n == 1 {
				return n == 1, nil
			}
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "yes", "on", "1":
				return true, nil
			case "false", "no", "off", "0":
				return false, nil
			}
		}
		return nil, fmt.Errorf("%s: use true or false", o.describe(v))
	case Duration:
		switch x := v.(type) {
		case time.Duration:
			return x, nil
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(x))
			if err == nil && d >= 0 {
				return d, nil
			}
		}
		return nil, fmt.Errorf("%s is not a duration such as 30s or 15m", o.describe(v))
	case Size:
		n, err := ParseSize(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", o.describe(v), err)
		}
		return n, o.inRange(n)
	case Enum:
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		for _, a := range o.Values {
			if strings.EqualFold(strings.TrimSpace(s), a) {
				return a, nil
			}
		}
		for alias, a := range o.Aliases {
			if s == alias || strings.EqualFold(strings.TrimSpace(s), alias) {
				return a, nil
			}
		}
		if _, text := v.(string); !text {
			// YAML reads 1_0 as the number 10 and yes as true: say so.
			return nil, fmt.Errorf("%s (%s, not text): use %s, in quotes", o.describe(v), kindOf(v), orList(o.Values))
		}
		return nil, fmt.Errorf("%s: use %s", o.describe(v), orList(o.Values))
	case List:
		switch x := v.(type) {
		case string:
			if strings.TrimSpace(x) == "" {
				return []string{}, nil
			}
			parts := strings.Split(x, ",")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			return parts, nil
		case []string:
			return x, nil
		case []any:
			out := make([]string, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("item %d: want text, got %s", i+1, kindOf(e))
				}
				out[i] = s
			}
			return out, nil
		}
		return nil, fmt.Errorf("want a list, got %s", kindOf(v))
	case Object:
		switch v.(type) {
		case map[string]any, []any, []map[string]any:
			return v, nil
		}
		return nil, fmt.Errorf("want a map or a list, got %s", kindOf(v))
	}
	return nil, fmt.Errorf("option type %v is not known", o.Type)
}

// inRange checks n against the option's range.
func (o *Option) inRange(n int64) error {
	if o.Range == nil || n >= o.Range.Min && n <= o.Range.Max {
		return nil
	}
	return fmt.Errorf("%s is outside %s", o.intText(n), o.rangeText())
}

// intText shows an Int or Size value as the documentation does.
func (o *Option) intText(n int64) string {
	if o.Type == Size {
		return FormatSize(n)
	}
	return strconv.FormatInt(n, 10)
}

// rangeText shows the range; a range up to the largest int64 is shown as
// its lower bound alone.
func (o *Option) rangeText() string {
	if o.Range.Max == math.MaxInt64 {
		return ">= " + o.intText(o.Range.Min)
	}
	return o.intText(o.Range.Min) + " .. " + o.intText(o.Range.Max)
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case bool:
		return "a boolean"
	case int, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

func orList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), nil
		}
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	}
	return 0, fmt.Errorf("not a whole number")
}

// ParseSize reads a byte count: a whole number, or a number with a unit
// (B, KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of
// 1024; case-insensitive, spaces allowed). Negative sizes are refused.
func ParseSize(v any) (int64, error) {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		i := 0
		for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
			i++
		}
		num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
		mult := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
			"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit]
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || mult == 0 {
			return 0, fmt.Errorf("not a size such as 65536, 64KiB or 128MiB")
		}
		n := f * mult
		if n > math.MaxInt64 || n != math.Trunc(n) {
			return 0, fmt.Errorf("not a whole number of bytes")
		}
		return int64(n), nil
	}
	n, err := toInt(v)
	if err != nil {
		return 0, fmt.Errorf("not a size such as 65536, 64KiB or 128MiB")
	}
	if n < 0 {
		return 0, fmt.Errorf("a size cannot be negative")
	}
	return n, nil
}

// DefaultText is the default as the documentation shows it.
func (o *Option) DefaultText() string {
	if o.DefaultDoc != "" {
		return o.DefaultDoc
	}
	switch d := o.Default.(type) {
	case nil:
		if o.Required {
			return "(required)"
		}
		return "(none)"
	case string:
		if d == "" {
			return `""`
		}
		return strconv.Quote(d)
	case []string:
		return "[" + strings.Join(d, ", ") + "]"
	case int64:
		if o.Type == Size {
			return FormatSize(d)
		}
	}
	return fmt.Sprint(o.Default)
}

// FormatSize shows a byte count in the largest binary unit that divides it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		v    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// TypeText is the option's type as the documentation shows it: the type
// name, or the allowed values of an Enum.
func (o *Option) TypeText() string {
	switch {
	case o.Type == Enum:
		return strings.Join(o.Values, " \\| ")
	case o.Range != nil:
		return o.Type.String() + ", " + o.rangeText()
	}
	return o.Type.String()
}

// Markdown renders the spec as the option table of the documentation
// (README and `tdsextract sinks NAME --markdown`). Defaults are code
// spans, so quotes and backslashes show as they are; write literal text
// in a Doc as `code` for the same reason.
func (s Spec) Markdown() string {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	var b strings.Builder
	b.WriteString("| option | type | default | meaning |\n| --- | --- | --- | --- |\n")
	for _, o := range s {
		def := o.DefaultText()
		if o.DefaultDoc == "" && (o.Default != nil || !o.Required) {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", o.Name, o.TypeText(), cell(def), cell(o.Doc))
	}
	return b.String()
}
