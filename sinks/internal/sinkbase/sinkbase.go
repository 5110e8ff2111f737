// Package sinkbase holds what the file sinks (csv, parquet) share besides
// their output files (package outfile): their factories and
// in-place hex for binary values.
package sinkbase

import (
	"slices"

	"github.com/tdsextract/tdsextract/decode"

	"github.com/tdsextract/tdsextract/sinks"
)

// Factory builds a file sink's factory: parse turns the options into a
// config (and so validates them), newSink builds the sink from it. When
// the sink is a sinks.Mapper, the factory's Mapping asks a sink built
// from the options, never opened (a file sink's constructor opens no file
// and starts nothing); a sink that can tell its mapping from its config
// alone sets Mapping itself.
func Factory[C any, S sinks.Sink](name, description string, parse func(map[string]any) (C, error), newSink func(C) (S, error)) sinks.Factory {
	build := func(options map[string]any) (S, error) {
		c, err := parse(options)
		if err != nil {
			var zero S
			return zero, err
		}
		return newSink(c)
	}
	f := sinks.Factory{
		Name:        name,
		Description: description,
		New: func(options map[string]any) (sinks.Sink, error) {
			s, err := build(options)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Validate: func(options map[string]any) error {
			_, err := parse(options)
			return err
		},
	}
	var zero S
	if _, ok := any(zero).(sinks.Mapper); ok {
		f.Mapping = func(options map[string]any, cols []decode.Column) ([]sinks.ColumnMapping, error) {
			s, err := build(options)
			if err != nil {
				return nil, err
			}
			return any(s).(sinks.Mapper).Mapping(cols), nil
		}
	}
	return f
}

const hexDigits = "0123456789abcdef"

// AppendHexInPlace replaces b[from:] by its lower-case hex, expanding in
// place from the end (no second buffer).
func AppendHexInPlace(b []byte, from int) []byte {
	n := len(b) - from
	if n == 0 {
		return b
	}
	b = slices.Grow(b, n)[:len(b)+n]
	j := len(b) - 1
	for i := from + n - 1; i >= from; i-- {
		c := b[i]
		b[j] = hexDigits[c&0x0F]
		b[j-1] = hexDigits[c>>4]
		j -= 2
	}
	return b
}
