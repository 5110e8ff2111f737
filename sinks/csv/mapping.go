package csv

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

// Mapping describes the text each column becomes. CSV keeps every value
// exactly, so nothing is reported lossy; the target says how the value is
// written.
func (s *Sink) Mapping(cols []decode.Column) []sinks.ColumnMapping { return s.cfg.Mapping(cols) }

// Mapping is the mapping of a sink with this (resolved) configuration.
func (c *Config) Mapping(cols []decode.Column) []sinks.ColumnMapping {
	out := make([]sinks.ColumnMapping, len(cols))
	for i := range cols {
		out[i] = sinks.ColumnMapping{Target: c.target(&cols[i].Type)}
	}
	return out
}

func (c *Config) target(ti *decode.TypeInfo) string {
	switch ti.Kind().Class() {
	case decode.ClassBool:
		if c.BoolFormat == "1_0" {
			return "bool as 1/0"
		}
		return "bool as true/false"
	case decode.ClassInteger:
		return "integer text"
	case decode.ClassFloat:
		return "float text (shortest round-trip)"
	case decode.ClassDecimal:
		return fmt.Sprintf("exact decimal text (%d,%d)", ti.Precision, ti.Scale)
	case decode.ClassMoney:
		return "exact decimal text, 4 decimals"
	case decode.ClassDate:
		return "date YYYY-MM-DD"
	case decode.ClassTime:
		return fmt.Sprintf("time hh:mm:ss with %d fractional digits", ti.Scale)
	case decode.ClassDateTime:
		return fmt.Sprintf("timestamp YYYY-MM-DD hh:mm:ss with %d fractional digits", ti.DateTimeScale())
	case decode.ClassDateTimeOffset:
		return fmt.Sprintf("timestamp with %d fractional digits and its original offset", ti.Scale)
	case decode.ClassGUID:
		return "uuid, canonical lower-case"
	case decode.ClassVector:
		if c.Dialect == "postgres" {
			return "float array literal {..}"
		}
		return "JSON array of floats"
	case decode.ClassVariant:
		return "text of the base value"
	case decode.ClassBinary:
		switch c.BinaryFormat {
		case "hex_prefixed":
			return `bytes as \x hex`
		case "base64":
			return "bytes as base64"
		}
		return "bytes as hex"
	}
	return "UTF-8 text"
}
