package sinks

import (
	"fmt"

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
