package plugins

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

// Field metadata keys: every Arrow field of a batch schema says which SQL
// Server column it carries, so a plugin can create exact destination types
// (decimal precision, text length, time scale) without asking the source.
const (
	// MetaType is the column's type as T-SQL declares it: "decimal(38,10)",
	// "nvarchar(max)", "datetime2(7)", "geography".
	MetaType = "sqlserver.type"
	// MetaKind is the type's base name (sys.types): "decimal",
	// "nvarchar", "datetime2", "timestamp" for rowversion.
	MetaKind = "sqlserver.kind"
	// MetaPrecision and MetaScale are set for decimal/numeric (precision
	// and scale) and for time, datetime2 and datetimeoffset (the scale:
	// fractional second digits).
	MetaPrecision = "sqlserver.precision"
	MetaScale     = "sqlserver.scale"
	// MetaLength is the declared length of char, varchar, nchar, nvarchar
	// (in characters), binary, varbinary (in bytes) and vector (in
	// dimensions), or "max".
	MetaLength = "sqlserver.length"
	// MetaLossy, when present, says what the Arrow type loses of the
	// column's values (e.g. the 100 ns digit of datetime2(7) in
	// microseconds), as `tdsextract inspect` reports it.
	MetaLossy = "sqlserver.lossy"
	// MetaCompanionOf marks a field the host adds after a column: the
	// original offset of a datetimeoffset ("<name>__offset_minutes") or
	// the base type of a sql_variant ("<name>__type"). Its value is the
	// column's name.
	MetaCompanionOf = "sqlserver.companion_of"

	// Schema-level metadata: the extract.
	MetaExtract  = "tdsextract.extract"
	MetaSchema   = "tdsextract.schema"
	MetaTable    = "tdsextract.table"
	MetaProtocol = "tdsextract.protocol"
)

// wkind is how the host writes one Arrow field's values.
type wkind uint8

const (
	wBool    wkind = iota + 1 // boolean (bit-packed)
	wU8                       // uint8 (tinyint)
	wI16                      // int16
	wI32                      // int32
	wI64                      // int64
	wF32                      // float32
	wF64                      // float64
	wDec                      // decimal128 from decode.Decimal
	wMoney                    // decimal128(19,4) / (10,4) from money's int64
	wDate                     // date32: days since 1970-01-01
	wTime                     // time64[ns]
	wTS                       // timestamp: unit in fieldPlan.unit
	wDTO                      // timestamp with time zone UTC: unit in fieldPlan.unit
	wString                   // utf8
	wBinary                   // binary
	wFixed                    // fixed_size_binary(n): binary(n), rowversion (zero-padded)
	wGUID                     // fixed_size_binary(16), RFC 4122 byte order (extension arrow.uuid)
	wVector                   // fixed_size_list<float32>(dims)
	wVariant                  // utf8: the text of a sql_variant's base value
	wOffset                   // int16 companion: a datetimeoffset's offset minutes
	wVarType                  // utf8 companion: a sql_variant's base type name
)

// isVar reports fields with an offsets buffer and a data region.
func (k wkind) isVar() bool {
	return k == wString || k == wBinary || k == wVariant || k == wVarType
}

// tsUnit is a timestamp field's unit.
type tsUnit uint8

const (
	unitMilli tsUnit = iota + 1
	unitMicro
	unitNano
)

// fieldPlan is one Arrow field of the batch schema, decided once per
// extract from its column.
type fieldPlan struct {
	kind     wkind
	col      int // the source column
	nullable bool
	// width is the bytes a row takes in the values buffer: the value size
	// of fixed-width kinds, 4 (an int32 offset) for variable-width ones, 0
	// for booleans (bits). fixedLen is the value size of wFixed, wGUID and
	// wVector (dims × 4).
	width    int
	fixedLen int
	unit     tsUnit
	// est is the bytes a row of a variable-width field takes in its data
	// region, estimated from the declaration and then from what batches held.
	est    float64
	field  arrow.Field
	lossy  string
	target string
}

// nodes and buffers are how many IPC field nodes and buffers the field
// takes (a fixed-size list has a child node and the child's buffers).
func (p *fieldPlan) nodes() int {
	if p.kind == wVector {
		return 2
	}
	return 1
}

func (p *fieldPlan) buffers() int {
	switch {
	case p.kind == wVector:
		return 3 // list validity, element validity (absent), element values
	case p.kind.isVar():
		return 3 // validity, offsets, data
	}
	return 2 // validity, values
}

// schemaOptions are the host options that shape the schema.
type schemaOptions struct {
	timestampNanos    bool
	offsetColumn      bool
	variantTypeColumn bool
}

// epochDays is 1970-01-01 as days since 0001-01-01: Arrow's dates and
// timestamps count from the Unix epoch.
var epochDays = decode.DateFromCivil(1970, 1, 1)

// planFields maps the columns of a result set to Arrow fields: one per
// column, plus a companion after each datetimeoffset (its offset) and
// sql_variant (its base type) when those options are on.
func planFields(cols []decode.Column, o schemaOptions) ([]fieldPlan, error) {
	names := make(map[string]bool, len(cols))
	for i := range cols {
		if names[cols[i].Name] {
			return nil, fmt.Errorf("column name %q appears twice; alias the columns so every name is unique", cols[i].Name)
		}
		names[cols[i].Name] = true
	}
	var out []fieldPlan
	add := func(p fieldPlan) error {
		if p.kind == wOffset || p.kind == wVarType {
			if names[p.field.Name] {
				return fmt.Errorf("column %q clashes with the companion field of column %q; alias one of them", p.field.Name, cols[p.col].Name)
			}
		}
		out = append(out, p)
		return nil
	}
	for i := range cols {
		c := &cols[i]
		p := planColumn(c, o)
		p.col = i
		var err error
		switch {
		case p.kind == wDTO && o.offsetColumn:
			err = errors.Join(add(p), add(companion(c, i, wOffset, "__offset_minutes", arrow.PrimitiveTypes.Int16, p.nullable)))
		case p.kind == wVariant && o.variantTypeColumn:
			err = errors.Join(add(p), add(companion(c, i, wVarType, "__type", arrow.BinaryTypes.String, p.nullable)))
		default:
			err = add(p)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func companion(c *decode.Column, col int, k wkind, suffix string, t arrow.DataType, nullable bool) fieldPlan {
	p := fieldPlan{kind: k, col: col, nullable: nullable, width: 2, est: 16}
	what := "the original offset from UTC in minutes"
	if k == wVarType {
		p.width = 4
		what = "the base type of each value, as T-SQL spells it"
	}
	p.field = arrow.Field{Name: c.Name + suffix, Type: t, Nullable: nullable,
		Metadata: arrow.NewMetadata([]string{MetaCompanionOf}, []string{c.Name})}
	p.target = t.String() + " (" + what + ")"
	return p
}

// planColumn maps one column (DESIGN: the default type mapping), switching
// on its kind, never on the wire type.
func planColumn(c *decode.Column, o schemaOptions) fieldPlan {
	ti := &c.Type
	k := c.Kind()
	p := fieldPlan{nullable: c.Nullable() || c.Flags&decode.ColFlagNullableUnknown != 0}
	var t arrow.DataType
	set := func(kind wkind, typ arrow.DataType, width int) {
		p.kind, t, p.width = kind, typ, width
	}
	switch k {
	case decode.KindBit:
		set(wBool, arrow.FixedWidthTypes.Boolean, 0)
	case decode.KindTinyInt:
		set(wU8, arrow.PrimitiveTypes.Uint8, 1)
	case decode.KindSmallInt:
		set(wI16, arrow.PrimitiveTypes.Int16, 2)
	case decode.KindInt:
		set(wI32, arrow.PrimitiveTypes.Int32, 4)
	case decode.KindBigInt:
		set(wI64, arrow.PrimitiveTypes.Int64, 8)
	case decode.KindReal:
		set(wF32, arrow.PrimitiveTypes.Float32, 4)
	case decode.KindFloat:
		set(wF64, arrow.PrimitiveTypes.Float64, 8)
	case decode.KindDecimal:
		set(wDec, &arrow.Decimal128Type{Precision: int32(ti.Precision), Scale: int32(ti.Scale)}, 16)
	case decode.KindMoney:
		set(wMoney, &arrow.Decimal128Type{Precision: 19, Scale: 4}, 16)
	case decode.KindSmallMoney:
		set(wMoney, &arrow.Decimal128Type{Precision: 10, Scale: 4}, 16)
	case decode.KindDate:
		set(wDate, arrow.FixedWidthTypes.Date32, 4)
	case decode.KindTime:
		set(wTime, arrow.FixedWidthTypes.Time64ns, 8)
	case decode.KindDateTime, decode.KindSmallDateTime:
		// 1/300 s (datetime) and minutes (smalldatetime): milliseconds
		// hold them as SQL Server shows them (.000, .003, .007).
		p.unit = unitMilli
		set(wTS, &arrow.TimestampType{Unit: arrow.Millisecond}, 8)
	case decode.KindDateTime2, decode.KindDateTimeOffset:
		kind, zone := wTS, ""
		if k == decode.KindDateTimeOffset {
			kind, zone = wDTO, "UTC"
		}
		unit := arrow.Microsecond
		p.unit = unitMicro
		switch {
		case ti.Scale == 7 && o.timestampNanos:
			unit, p.unit = arrow.Nanosecond, unitNano
		case ti.Scale == 7:
			p.lossy = "the 100 ns digit is truncated (microseconds cover every SQL Server date); set timestamp_nanos: true for nanoseconds (1677-09-21 .. 2262-04-11 only)"
		}
		set(kind, &arrow.TimestampType{Unit: unit, TimeZone: zone}, 8)
		if kind == wDTO && !o.offsetColumn {
			p.lossy = joinLossy(p.lossy, "the original offset is dropped (the value is the UTC instant); set offset_column: true to keep it")
		}
	case decode.KindChar, decode.KindVarChar, decode.KindText, decode.KindNChar, decode.KindNVarChar,
		decode.KindNText, decode.KindXML, decode.KindJSON:
		set(wString, arrow.BinaryTypes.String, 4)
		p.est = sizeEstimate(ti, k)
	case decode.KindBinary:
		p.fixedLen = int(max(ti.Size, 1))
		set(wFixed, &arrow.FixedSizeBinaryType{ByteWidth: p.fixedLen}, p.fixedLen)
	case decode.KindRowVersion:
		p.fixedLen = 8
		set(wFixed, &arrow.FixedSizeBinaryType{ByteWidth: 8}, 8)
	case decode.KindUniqueIdentifier:
		p.fixedLen = 16
		set(wGUID, &arrow.FixedSizeBinaryType{ByteWidth: 16}, 16)
	case decode.KindVector:
		dims := decode.VectorDims(ti)
		p.fixedLen = dims * 4
		set(wVector, arrow.FixedSizeListOfNonNullable(int32(dims), arrow.PrimitiveTypes.Float32), 0)
	case decode.KindVariant:
		set(wVariant, arrow.BinaryTypes.String, 4)
		p.est = 16
	default: // varbinary, image, geography, geometry, hierarchyid, CLR types
		set(wBinary, arrow.BinaryTypes.Binary, 4)
		p.est = sizeEstimate(ti, k)
	}
	keys := []string{MetaType, MetaKind}
	vals := []string{decode.SQLTypeName(c), k.Name()}
	add := func(key, v string) { keys, vals = append(keys, key), append(vals, v) }
	if k == decode.KindDecimal {
		add(MetaPrecision, strconv.Itoa(int(ti.Precision)))
	}
	if k.HasScale() {
		add(MetaScale, strconv.Itoa(int(ti.Scale)))
	}
	if k.HasLength() {
		add(MetaLength, declaredLength(ti, k))
	}
	switch k {
	case decode.KindUniqueIdentifier:
		// The canonical extension type: readers that know it see UUIDs.
		add("ARROW:extension:name", "arrow.uuid")
		add("ARROW:extension:metadata", "")
	case decode.KindJSON:
		add("ARROW:extension:name", "arrow.json")
		add("ARROW:extension:metadata", "")
	}
	if p.lossy != "" {
		add(MetaLossy, p.lossy)
	}
	p.field = arrow.Field{Name: c.Name, Type: t, Nullable: p.nullable, Metadata: arrow.NewMetadata(keys, vals)}
	p.target = t.String()
	if k == decode.KindVariant {
		p.target = "utf8 (the base value as text)"
	}
	return p
}

func joinLossy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func declaredLength(ti *decode.TypeInfo, k decode.Kind) string {
	switch {
	case k == decode.KindVector:
		return strconv.Itoa(decode.VectorDims(ti))
	case ti.Size == decode.MaxVarLen:
		return "max"
	case k.IsUnicode():
		return strconv.Itoa(int(ti.Size / 2))
	}
	return strconv.Itoa(int(ti.Size))
}

// sizeEstimate is a first guess of the bytes a text (UTF-8) or binary
// value takes, before any batch has been seen: half the declared length,
// within 4..512.
func sizeEstimate(ti *decode.TypeInfo, k decode.Kind) float64 {
	n := float64(ti.Size)
	if ti.Size == decode.MaxVarLen || ti.Size > 8000 || k == decode.KindXML || k == decode.KindJSON {
		n = 1024
	}
	return min(max(n/2, 4), 512)
}

// buildSchema is the Arrow schema of an extract's batches.
func buildSchema(plans []fieldPlan, info sinks.ExtractInfo) *arrow.Schema {
	fields := make([]arrow.Field, len(plans))
	for i := range plans {
		fields[i] = plans[i].field
	}
	md := arrow.NewMetadata(
		[]string{MetaExtract, MetaSchema, MetaTable, MetaProtocol},
		[]string{info.Name, info.Schema, info.Table, strconv.Itoa(ProtocolVersion)})
	return arrow.NewSchema(fields, &md)
}

// mapping describes, for `inspect`, the Arrow type each column becomes.
func mapping(cols []decode.Column, o schemaOptions) []sinks.ColumnMapping {
	out := make([]sinks.ColumnMapping, len(cols))
	for i := range cols {
		p := planColumn(&cols[i], o)
		target := "arrow " + p.target
		switch {
		case p.kind == wDTO && o.offsetColumn:
			target += " + " + cols[i].Name + "__offset_minutes int16"
		case p.kind == wVariant && o.variantTypeColumn:
			target += " + " + cols[i].Name + "__type utf8"
		}
		out[i] = sinks.ColumnMapping{Target: target, Lossy: p.lossy != "", Why: p.lossy}
	}
	return out
}
