package parquet

import (
	"fmt"
	"reflect"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

// orderedGroup is a group node whose fields keep the order they were given
// in: parquet.Group is a map and sorts its fields by name, but a table's
// columns must keep the source order.
type orderedGroup []pq.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return pq.NewSchema("", g).String() }
func (g orderedGroup) Type() pq.Type               { return pq.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []pq.Field          { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return reflect.TypeOf(map[string]any{}) }

// namedField gives a node its name in the parent group.
type namedField struct {
	pq.Node
	name string
}

func (f namedField) Name() string { return f.name }
func (f namedField) Value(base reflect.Value) reflect.Value {
	return base.MapIndex(reflect.ValueOf(f.name))
}

// kind is how the sink stores and writes one source column.
type kind uint8

const (
	kBool kind = iota
	kInt32
	kInt64
	kFloat
	kDouble
	kDecInt32
	kDecInt64
	kDecFixed
	kMoneyInt64 // smallmoney: DECIMAL(10,4) INT64
	kMoneyFixed // money: DECIMAL(19,4) FIXED_LEN_BYTE_ARRAY(9)
	kDate
	kTimeNanos
	kTimeMicros
	kTSNanos
	kTSMicros
	kTSMillis
	kDTONanos
	kDTOMicros
	kUUID
	kString
	kBytes
	kGeo // geography or geometry in SQL Server's serialization, written as WKB
	kFixedBytes
	kVector
	kVariant
)

// isVar reports kinds stored in the byte arena.
func (k kind) isVar() bool {
	switch k {
	case kDecFixed, kMoneyFixed, kUUID, kString, kBytes, kFixedBytes, kVector, kVariant, kGeo:
		return true
	}
	return false
}

// decimalBytes[p] is the minimal FIXED_LEN_BYTE_ARRAY length whose signed
// range holds every DECIMAL(p, s) unscaled value (10^p - 1).
var decimalBytes = func() [39]int {
	var t [39]int
	for p := 1; p <= 38; p++ {
		// 10^p - 1 < 2^(8n-1)  <=>  p*log2(10) < 8n-1
		for n := 1; n <= 16; n++ {
			if float64(p)*3.321928094887362 < float64(8*n-1) {
				t[p] = n
				break
			}
		}
	}
	return t
}()

// truncatedWhy is the mapping's note for a scale-7 datetime2 or
// datetimeoffset column written as MICROS.
const truncatedWhy = "scale 7 written as TIMESTAMP MICROS: the 100 ns digit is truncated (timestamp_unit: nanos keeps it, for values within 1677-09-21 .. 2262-04-11)"

// colPlan is the mapping of one source column, decided once per result set.
type colPlan struct {
	kind     kind
	optional bool
	fixedLen int  // FIXED_LEN_BYTE_ARRAY length
	leaf     int  // index of the column's (first) leaf
	offset   bool // datetimeoffset with a companion offset column at leaf+1
	vtype    bool // sql_variant with a companion base-type column at leaf+1
	node     pq.Node
	target   string
	lossy    string
}

// plan maps one source column by its logical kind (decode.Kind), once
// per result set; the cell calls then switch on the plan's kind only.
func (cfg *Config) plan(c *decode.Column) colPlan {
	ti := &c.Type
	p := colPlan{optional: c.Nullable() || c.Flags&decode.ColFlagNullableUnknown != 0}
	nanos := cfg.TimestampUnit == "nanos"
	set := func(k kind, n pq.Node, target string) {
		p.kind, p.node, p.target = k, n, target
	}
	fixed := func(n int) {
		p.fixedLen = n
		set(kFixedBytes, pq.Leaf(pq.FixedLenByteArrayType(n)), fmt.Sprintf("FIXED_LEN_BYTE_ARRAY(%d)", n))
	}
	switch k := c.Kind(); k {
	case decode.KindBit:
		set(kBool, pq.Leaf(pq.BooleanType), "BOOLEAN")
	case decode.KindTinyInt:
		set(kInt32, pq.Uint(8), "INT32 (INT(8, unsigned))")
	case decode.KindSmallInt:
		set(kInt32, pq.Int(16), "INT32 (INT(16, signed))")
	case decode.KindInt:
		set(kInt32, pq.Int(32), "INT32")
	case decode.KindBigInt:
		set(kInt64, pq.Int(64), "INT64")
	case decode.KindReal:
		set(kFloat, pq.Leaf(pq.FloatType), "FLOAT")
	case decode.KindFloat:
		set(kDouble, pq.Leaf(pq.DoubleType), "DOUBLE")
	case decode.KindDecimal:
		prec, scale := int(ti.Precision), int(ti.Scale)
		if prec < 1 || prec > 38 {
			prec = 38
		}
		switch {
		case prec <= 9:
			set(kDecInt32, pq.Decimal(scale, prec, pq.Int32Type), fmt.Sprintf("DECIMAL(%d,%d) INT32", prec, scale))
		case prec <= 18:
			set(kDecInt64, pq.Decimal(scale, prec, pq.Int64Type), fmt.Sprintf("DECIMAL(%d,%d) INT64", prec, scale))
		default:
			p.fixedLen = decimalBytes[prec]
			set(kDecFixed, pq.Decimal(scale, prec, pq.FixedLenByteArrayType(p.fixedLen)), fmt.Sprintf("DECIMAL(%d,%d) FIXED_LEN_BYTE_ARRAY(%d)", prec, scale, p.fixedLen))
		}
	case decode.KindSmallMoney:
		set(kMoneyInt64, pq.Decimal(4, 10, pq.Int64Type), "DECIMAL(10,4) INT64")
	case decode.KindMoney:
		p.fixedLen = decimalBytes[19]
		set(kMoneyFixed, pq.Decimal(4, 19, pq.FixedLenByteArrayType(p.fixedLen)), "DECIMAL(19,4) FIXED_LEN_BYTE_ARRAY(9)")
	case decode.KindDate:
		set(kDate, pq.Date(), "DATE")
	case decode.KindTime:
		// TIME NANOS holds every time(7) value (at most 86,400 s), so
		// time keeps its 100 ns digit whatever timestamp_unit says.
		if ti.Scale >= 7 {
			set(kTimeNanos, pq.TimeAdjusted(pq.Nanosecond, false), "TIME(NANOS, not UTC-adjusted)")
		} else {
			set(kTimeMicros, pq.TimeAdjusted(pq.Microsecond, false), "TIME(MICROS, not UTC-adjusted)")
		}
	case decode.KindSmallDateTime, decode.KindDateTime:
		set(kTSMillis, pq.TimestampAdjusted(pq.Millisecond, false), "TIMESTAMP(MILLIS, not UTC-adjusted)")
	case decode.KindDateTime2:
		if ti.Scale >= 7 && nanos {
			set(kTSNanos, pq.TimestampAdjusted(pq.Nanosecond, false), "TIMESTAMP(NANOS, not UTC-adjusted)")
		} else {
			set(kTSMicros, pq.TimestampAdjusted(pq.Microsecond, false), "TIMESTAMP(MICROS, not UTC-adjusted)")
			if ti.Scale >= 7 {
				p.lossy = truncatedWhy
			}
		}
	case decode.KindDateTimeOffset:
		if ti.Scale >= 7 && nanos {
			set(kDTONanos, pq.TimestampAdjusted(pq.Nanosecond, true), "TIMESTAMP(NANOS, UTC-adjusted)")
		} else {
			set(kDTOMicros, pq.TimestampAdjusted(pq.Microsecond, true), "TIMESTAMP(MICROS, UTC-adjusted)")
			if ti.Scale >= 7 {
				p.lossy = truncatedWhy
			}
		}
		if *cfg.OffsetColumn {
			p.offset = true
			p.target += " + " + c.Name + "__offset_minutes INT16"
		} else if p.lossy == "" {
			p.lossy = "the original UTC offset is dropped (offset_column: false); only the instant is kept"
		}
	case decode.KindUniqueIdentifier:
		p.fixedLen = 16
		set(kUUID, pq.UUID(), "FIXED_LEN_BYTE_ARRAY(16) UUID")
	case decode.KindJSON:
		set(kString, pq.JSON(), "BYTE_ARRAY JSON")
	case decode.KindRowVersion:
		fixed(8)
	case decode.KindBinary:
		if ti.Size >= 1 && ti.Size <= 8000 {
			fixed(int(ti.Size))
		} else {
			set(kBytes, pq.Leaf(pq.ByteArrayType), "BYTE_ARRAY")
		}
	case decode.KindGeography, decode.KindGeometry:
		set(kGeo, pq.Leaf(pq.ByteArrayType), geoTarget)
	case decode.KindHierarchyID, decode.KindUDT:
		set(kBytes, pq.Leaf(pq.ByteArrayType), "BYTE_ARRAY ("+ti.UDTName+" bytes; WKB when the engine selects STAsBinary())")
	case decode.KindVector:
		set(kVector, pq.List(pq.Leaf(pq.FloatType)), "LIST<FLOAT>")
	case decode.KindVariant:
		set(kVariant, pq.String(), "BYTE_ARRAY STRING (text of the base value)")
		if *cfg.VariantTypeColumn {
			p.vtype = true
			p.target += " + " + c.Name + "__type STRING (base type)"
		} else {
			p.lossy = "sql_variant is written as the text of its base value; the base type is dropped (variant_type_column: false)"
		}
	default:
		switch k.Class() {
		case decode.ClassText: // char, varchar, text and the N- types, xml
			set(kString, pq.String(), "BYTE_ARRAY STRING")
		case decode.ClassBinary: // varbinary, image
			set(kBytes, pq.Leaf(pq.ByteArrayType), "BYTE_ARRAY")
		default:
			set(kBytes, pq.Leaf(pq.ByteArrayType), "BYTE_ARRAY (raw bytes of an unknown type)")
		}
	}
	return p
}

// Mapping describes each column's Parquet type (the pre-flight report).
func (s *Sink) Mapping(cols []decode.Column) []sinks.ColumnMapping { return s.cfg.mapping(cols) }

// mapping is the pre-flight report of a sink with config cfg (defaults
// applied).
func (cfg *Config) mapping(cols []decode.Column) []sinks.ColumnMapping {
	out := make([]sinks.ColumnMapping, len(cols))
	if len(cols) > 0 {
		out[0].Note = cfg.memoryNote(cols)
	}
	for i := range cols {
		p := cfg.plan(&cols[i])
		out[i].Target, out[i].Lossy, out[i].Why = p.target, p.lossy != "", p.lossy
		if p.kind == kTSNanos || p.kind == kDTONanos {
			out[i].Why = "TIMESTAMP NANOS covers 1677-09-21 .. 2262-04-11 only: a value outside fails the run (timestamp_unit: micros covers every date)"
		}
		if cfg.partitionIndex(cols[i].Name) >= 0 {
			if err := partitionable(&cols[i], &p); err != nil {
				out[i].Lossy, out[i].Why = true, err.Error()
			} else if cfg.PartitionColumnsInFile {
				out[i].Target += " + hive partition directory " + cols[i].Name + "=<value>"
			} else {
				out[i].Target = "hive partition directory " + cols[i].Name + "=<value> (not stored in the files)"
			}
		}
	}
	return out
}

// buildSchema builds the file schema in source column order, each leaf
// with its chosen encoding and, where compression does not pay, no
// compression (enc is indexed by leaf; nil: parquet-go's defaults).
func buildSchema(name string, cols []decode.Column, plans []colPlan, enc []choice) *pq.Schema {
	var g orderedGroup
	leafNode := func(n pq.Node, leaf int, optional bool) pq.Node {
		if leaf < len(enc) {
			if e := enc[leaf]; e.enc != nil {
				n = pq.Encoded(n, e.enc)
			}
			if enc[leaf].raw {
				n = pq.Compressed(n, &pq.Uncompressed)
			}
		}
		if optional {
			return pq.Optional(n)
		}
		return pq.Required(n)
	}
	for i := range plans {
		p := &plans[i]
		if p.leaf < 0 { // a partition column kept out of the files
			continue
		}
		n := p.node
		if p.kind == kVector {
			// a LIST group: its element keeps parquet-go's defaults
			if p.optional {
				n = pq.Optional(n)
			} else {
				n = pq.Required(n)
			}
		} else {
			n = leafNode(n, p.leaf, p.optional)
		}
		g = append(g, namedField{Node: n, name: cols[i].Name})
		if p.offset {
			g = append(g, namedField{Node: leafNode(pq.Int(16), p.leaf+1, p.optional), name: cols[i].Name + "__offset_minutes"})
		}
		if p.vtype {
			g = append(g, namedField{Node: leafNode(pq.String(), p.leaf+1, true), name: cols[i].Name + "__type"})
		}
	}
	return pq.NewSchema(name, g)
}

// memoryNote says what a run over cols costs in memory with cfg, and how
// to lower it: (parallel+2) row groups' worth (the batch being filled,
// the ones encoding, and the encoders' pages), however wide the table,
// since a wide table's row groups hold fewer rows.
func (cfg *Config) memoryNote(cols []decode.Column) string {
	c := *cfg
	c.applyDefaults()
	var row int64 // bytes a row holds in a batch at least
	for i := range cols {
		p := c.plan(&cols[i])
		row += 8 + int64(p.fixedLen)
		if p.optional {
			row++
		}
		if p.offset {
			row += 2
		}
	}
	n := int64(c.Parallel + 2)
	note := fmt.Sprintf("memory: about %s (%d × row_group_bytes %s: the row group being filled, %d encoding, their pages); a row holds at least %d bytes, so a row group has at most %d rows",
		sinks.FormatSize(n*c.RowGroupBytes), n, sinks.FormatSize(c.RowGroupBytes), c.Parallel, row, c.RowGroupBytes/max(row, 1))
	if len(c.PartitionBy) > 0 {
		note += fmt.Sprintf(", plus up to partition_buffer_bytes %s buffered across the open partitions", sinks.FormatSize(c.PartitionBufferBytes))
	}
	if lower := c.RowGroupBytes / 4; lower >= 1<<20 {
		note += fmt.Sprintf("; to lower it, --set parquet.row_group_bytes=%s (about %s)", sinks.FormatSize(lower), sinks.FormatSize(n*lower))
	}
	return note
}
