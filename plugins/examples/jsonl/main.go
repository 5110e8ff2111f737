// Command jsonl is a tdsextract sink plugin that writes each extract as
// JSON Lines: one JSON object per row, keys in column order. It is the
// plugin guide's example (plugins/README.md), as short as a complete
// plugin can be.
//
// Values: integers, floats and decimals as JSON numbers (decimals with
// their scale's digits, exactly); bit as true/false; date, time and
// timestamps as ISO 8601 text (UTC timestamps end in Z); uniqueidentifier
// as canonical text; binary as base64; vector as an array of numbers;
// NULL as null.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/tdsextract/tdsextract/plugins"
	"github.com/tdsextract/tdsextract/sinks"
)

func main() {
	plugins.Serve(plugins.Plugin{
		Name:        "jsonl",
		Description: "JSON Lines files: one JSON object per row",
		Options: sinks.Spec{
			{Name: "path", Type: sinks.String, Default: "out/",
				Doc: `a directory (existing, or ending in "/") that gets "<extract>.jsonl", or a file name where {extract}, {schema} and {table} are replaced`},
		},
		New: func() plugins.Sink { return &sink{} },
	})
}

type sink struct {
	out  *plugins.OutputFile
	w    *bufio.Writer // out.Buffered()
	keys [][]byte      // each column's `"name":`
	uuid []bool        // the column is a uniqueidentifier
	line []byte
	rows int64
}

func (s *sink) Open(_ context.Context, req plugins.OpenRequest) error {
	out, err := plugins.CreateOutput(plugins.OutputPath(req.Options["path"].(string), ".jsonl", req.Extract))
	if err != nil {
		return err
	}
	s.out, s.w = out, out.Buffered()
	for i, f := range req.Schema.Fields() {
		k := []byte{}
		if i > 0 {
			k = append(k, ',')
		}
		k = append(appendString(k, f.Name), ':')
		s.keys = append(s.keys, k)
		// The field metadata names the SQL Server type of each column.
		kind, _ := f.Metadata.GetValue(plugins.MetaKind)
		s.uuid = append(s.uuid, kind == "uniqueidentifier")
	}
	return nil
}

// WriteBatch writes the batch's rows. The batch's memory is only lent for
// the call, so everything is written out before returning.
func (s *sink) WriteBatch(_ context.Context, rec arrow.RecordBatch) error {
	for i := 0; i < int(rec.NumRows()); i++ {
		s.line = append(s.line[:0], '{')
		for j, col := range rec.Columns() {
			s.line = appendValue(append(s.line, s.keys[j]...), col, i, s.uuid[j])
		}
		s.line = append(s.line, '}', '\n')
		if _, err := s.w.Write(s.line); err != nil {
			return err
		}
	}
	s.rows += rec.NumRows()
	return nil
}

// Prepare flushes and syncs the file: a full disk fails here, before any
// sink of the extract publishes.
func (s *sink) Prepare(context.Context) error { return s.out.Sync() }

func (s *sink) Publish(context.Context) (plugins.Stats, error) {
	return s.out.PublishStats(s.rows)
}

func (s *sink) Abort(context.Context) error { return s.out.Abort() }

// appendValue appends row i of col as JSON.
func appendValue(b []byte, col arrow.Array, i int, uuid bool) []byte {
	if col.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := col.(type) {
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Uint8:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloat(b, a.Value(i), 64)
	case *array.Decimal128:
		return append(b, a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)...)
	case *array.Date32:
		return appendString(b, a.Value(i).FormattedString())
	case *array.Time64:
		return appendString(b, a.Value(i).ToTime(arrow.Nanosecond).Format("15:04:05.999999999"))
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		layout := "2006-01-02T15:04:05.999999999"
		if t.TimeZone != "" {
			layout += "Z07:00"
		}
		return appendString(b, a.Value(i).ToTime(t.Unit).Format(layout))
	case *array.String:
		return appendString(b, a.Value(i))
	case *array.Binary:
		return appendBase64(b, a.Value(i))
	case *array.FixedSizeBinary:
		if uuid {
			return appendUUID(b, a.Value(i))
		}
		return appendBase64(b, a.Value(i))
	case array.ExtensionArray: // uuid, json when arrow/extensions is linked in
		return appendValue(b, a.Storage(), i, uuid)
	case *array.FixedSizeList:
		n := int(a.DataType().(*arrow.FixedSizeListType).Len())
		vals := a.ListValues()
		b = append(b, '[')
		for k := i * n; k < (i+1)*n; k++ {
			if k > i*n {
				b = append(b, ',')
			}
			b = appendValue(b, vals, k, false)
		}
		return append(b, ']')
	}
	return appendString(b, col.ValueStr(i))
}

func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return appendString(b, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

func appendBase64(b, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

func appendUUID(b, v []byte) []byte {
	var t [36]byte
	hex.Encode(t[0:8], v[0:4])
	t[8] = '-'
	hex.Encode(t[9:13], v[4:6])
	t[13] = '-'
	hex.Encode(t[14:18], v[6:8])
	t[18] = '-'
	hex.Encode(t[19:23], v[8:10])
	t[23] = '-'
	hex.Encode(t[24:], v[10:16])
	return append(append(append(b, '"'), t[:]...), '"')
}

// appendString appends s as a JSON string (the host sends valid UTF-8).
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			b = append(b, s[i:i+n]...)
			i += n
			continue
		}
		i++
	}
	return append(b, '"')
}
