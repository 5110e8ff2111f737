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
	switch ti.Type {
	case decode.TypeBit, decode.TypeBitN:
		if c.BoolFormat == "1_0" {
			return "bool as 1/0"
		}
		return "bool as true/false"
	case decode.TypeInt1, decode.TypeInt2, decode.TypeInt4, decode.TypeInt8, decode.TypeIntN:
		return "integer text"
	case decode.TypeFlt4, decode.TypeFlt8, decode.TypeFltN:
		return "float text (shortest round-trip)"
	case decode.TypeDecimalN, decode.TypeNumericN, decode.TypeDecimalLegacy, decode.TypeNumericLegacy:
		return fmt.Sprintf("exact decimal text (%d,%d)", ti.Precision, ti.Scale)
	case decode.TypeMoney, decode.TypeMoney4, decode.TypeMoneyN:
		return "exact decimal text, 4 decimals"
	case decode.TypeDateN:
		return "date YYYY-MM-DD"
	case decode.TypeTimeN:
		return fmt.Sprintf("time hh:mm:ss with %d fractional digits", ti.Scale)
	case decode.TypeDateTime, decode.TypeDateTim4, decode.TypeDateTimeN, decode.TypeDateTime2N:
		return fmt.Sprintf("timestamp YYYY-MM-DD hh:mm:ss with %d fractional digits", ti.DateTimeScale())
	case decode.TypeDateTimeOffset:
		return fmt.Sprintf("timestamp with %d fractional digits and its original offset", ti.Scale)
	case decode.TypeGUID:
		return "uuid, canonical lower-case"
	case decode.TypeVector:
		if c.Dialect == "postgres" {
			return "float array literal {..}"
		}
		return "JSON array of floats"
	case decode.TypeVariant:
		return "text of the base value"
	}
	switch valueKind(ti) {
	case vBinary:
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
