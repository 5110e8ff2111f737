package sinks

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// DecodeOptions decodes a component's options (plain values from YAML,
// environment or flags) into dst, a pointer to the component's config
// struct with `mapstructure` tags. Unknown keys are an error that names
// them; durations and numbers given as strings are converted.
func DecodeOptions(options map[string]any, dst any) error {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           dst,
		ErrorUnused:      true,
		WeaklyTypedInput: true,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
	})
	if err != nil {
		return fmt.Errorf("sinks: options decoder: %w", err)
	}
	return dec.Decode(options)
}

// StructOptions is the inverse of DecodeOptions for a config built in Go
// code: the fields of the struct cfg points to (by their mapstructure
// tags) that are not the zero value, pointers followed. A sink whose New
// takes a typed config resolves StructOptions(&c) against its spec, so a
// Go caller and a job file get the same defaults and the same checks, and
// a zero field means "the default" as an absent key does.
func StructOptions(cfg any) map[string]any {
	out := map[string]any{}
	v := reflect.Indirect(reflect.ValueOf(cfg))
	t := v.Type()
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("mapstructure"), ",")
		f := v.Field(i)
		if tag == "" || tag == "-" || !t.Field(i).IsExported() || f.IsZero() {
			continue
		}
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		out[tag] = f.Interface()
	}
	return out
}
