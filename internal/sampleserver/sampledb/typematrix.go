package sampledb

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/tdsextract/tdsextract/decode"
)

// type_matrix rows. Rows 0..5 are the edge rows; every later row holds
// ordinary values derived from the seed, and its sql_variant column cycles
// through the variant base types.
const (
	tmMin     = 0 // minimum of every type; offsets -14:00
	tmMax     = 1 // maximum of every type; offsets +14:00; max-length strings
	tmZero    = 2 // zero, empty strings, empty binary, hierarchyid root
	tmNull    = 3 // NULL in every nullable column
	tmUnicode = 4 // supplementary-plane characters, non-ASCII text
	tmNeg     = 5 // negative money, negative decimals, fractional seconds
	tmRows    = 40
)

// UDT sample values, in SQL Server's serialization (MS-SSCLRT):
//
//	geography::Point(47.651, -122.349, 4326) = 0xE6100000 01 0C <lat f64> <long f64>
//	  (SRID 4326 LE, version 1, flags 0x0C = valid + single point; latitude first)
//	geometry::Point(1, 2, 0)                 = 0x00000000 01 0C <x f64> <y f64>
//	hierarchyid '/'     = 0x (zero bytes)
//	hierarchyid '/1/'   = 0x58, '/2/' = 0x68, '/3/' = 0x78
//	hierarchyid '/1/1/' = 0x5AC0, '/1/2/' = 0x5B40 (ORDPATH, L1 labels 0..3: 01xx + 1)
var (
	GeographyPoint = udtPoint(4326, 47.651, -122.349)
	GeometryPoint  = udtPoint(0, 1, 2)
	HierarchyIDs   = map[string][]byte{"/": {}, "/1/": {0x58}, "/2/": {0x68}, "/3/": {0x78},
		"/1/1/": {0x5A, 0xC0}, "/1/2/": {0x5B, 0x40}}
)

func udtPoint(srid uint32, a, b float64) []byte {
	out := binary.LittleEndian.AppendUint32(nil, srid)
	out = append(out, 1, 0x0C)
	out = binary.LittleEndian.AppendUint64(out, math.Float64bits(a))
	return binary.LittleEndian.AppendUint64(out, math.Float64bits(b))
}

// max38 is 10^38-1 (the largest decimal(38,s) magnitude).
var max38Hi, max38Lo = func() (uint64, uint64) {
	v := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	v.Sub(v, big.NewInt(1))
	lo := new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return new(big.Int).Rsh(v, 64).Uint64(), lo
}()

// tmCol is one type_matrix column: its declared type, the client feature it
// needs (if any) and its value for row r (nil = NULL) given the row hash.
type tmCol struct {
	name, typ, feature string
	coll               decode.Collation
	val                func(r int, h uint64) any
}

// variantSamples are the sql_variant values of the rows after the edge rows.
func variantSamples() []decode.Variant {
	ti := func(decl string) decode.TypeInfo {
		t, _, err := parseSQLType(decl, CollSQLLatin1, false)
		if err != nil {
			panic(err)
		}
		switch t.Kind() {
		case decode.KindVarChar, decode.KindChar, decode.KindNVarChar, decode.KindNChar, decode.KindVarBinary, decode.KindBinary:
		default:
			// In a sql_variant only character and binary base types carry
			// a maximum length in their properties (MS-TDS 2.2.5.5.4);
			// the others have no declared size, as the decoder reports.
			t.Size = 0
		}
		return t
	}
	d := func(p, s uint8, v int64) decode.Decimal { x := dec(v); x.Precision, x.Scale = p, s; return x }
	return []decode.Variant{
		{Type: ti("int"), Value: int64(-123456)},
		{Type: ti("bigint"), Value: int64(math.MaxInt64)},
		{Type: ti("smallint"), Value: int64(-32768)},
		{Type: ti("tinyint"), Value: int64(255)},
		{Type: ti("bit"), Value: true},
		{Type: ti("float"), Value: 3.141592653589793},
		{Type: ti("real"), Value: float32(-2.5)},
		{Type: ti("money"), Value: decode.Money(-12345678)},
		{Type: ti("smallmoney"), Value: decode.Money(99990000)},
		{Type: ti("decimal(10,2)"), Value: d(10, 2, -1234567)},
		{Type: ti("numeric(38,0)"), Value: decode.Decimal{Lo: max38Lo, Hi: max38Hi, Precision: 38}},
		{Type: ti("datetime"), Value: decode.DateTime{Days: decode.DateFromCivil(2024, 2, 29), Ticks: 45296_0000000}},
		{Type: ti("smalldatetime"), Value: decode.DateTime{Days: decode.DateFromCivil(2079, 6, 6), Ticks: (23*60 + 59) * 600000000}},
		{Type: ti("date"), Value: decode.Date(decode.DateFromCivil(1969, 7, 20))},
		{Type: ti("time(7)"), Value: decode.Time(decode.TicksPerDay - 1)},
		{Type: ti("datetime2(3)"), Value: decode.DateTime{Days: decode.DateFromCivil(2000, 1, 1), Ticks: 1230000}},
		{Type: ti("datetimeoffset(7)"), Value: decode.DateTimeOffset{UTC: decode.DateTime{Days: decode.DateFromCivil(2020, 12, 31), Ticks: 1}, OffsetMin: -330}},
		{Type: ti("uniqueidentifier"), Value: decode.GUID{0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}},
		{Type: ti("varchar(20)"), Value: "variant café"},
		{Type: ti("nvarchar(20)"), Value: "вариант 😀"},
		{Type: ti("char(8)"), Value: "fixed   "},
		{Type: ti("nchar(6)"), Value: "日本語   "},
		{Type: ti("binary(4)"), Value: []byte{0xDE, 0xAD, 0xBE, 0xEF}},
		{Type: ti("varbinary(10)"), Value: []byte{0, 1, 2}},
	}
}

func tmColumns() []tmCol {
	variants := variantSamples()
	f32 := float32(math.MaxFloat32)
	dtx := func(y, m, d int, ticks int64) decode.DateTime {
		return decode.DateTime{Days: decode.DateFromCivil(y, m, d), Ticks: ticks}
	}
	pick := func(r int, h uint64, min, max, zero, neg any, other func(h uint64) any) any {
		switch r {
		case tmMin:
			return min
		case tmMax:
			return max
		case tmZero:
			return zero
		case tmNull:
			return nil
		case tmNeg:
			if neg != nil {
				return neg
			}
		}
		return other(h)
	}
	str := func(min, max, zero, uni string, pool []string) func(r int, h uint64) any {
		return func(r int, h uint64) any {
			if r == tmUnicode {
				return uni
			}
			return pick(r, h, min, max, zero, nil, func(h uint64) any { return pool[h%uint64(len(pool))] })
		}
	}
	latin := []string{"café", "Straße", "€ 5,00", "naïve", "Œuvre", "plain ascii", "façade", "Ångström"}
	uni := []string{"😀 emoji", "𝄞 clef", "日本語", "Привет", "Ελληνικά", "mixed é 😀"}
	decimals := func(p, s uint8) func(r int, h uint64) any {
		return func(r int, h uint64) any {
			mk := func(hi, lo uint64, neg bool) decode.Decimal {
				return decode.Decimal{Hi: hi, Lo: lo, Neg: neg, Precision: p, Scale: s}
			}
			var mhi, mlo uint64
			if p == 38 {
				mhi, mlo = max38Hi, max38Lo
			} else {
				mlo = uint64(math.Pow10(int(p))) - 1
			}
			return pick(r, h, mk(mhi, mlo, true), mk(mhi, mlo, false), mk(0, 0, false), mk(0, 1, true),
				func(h uint64) any { return mk(0, h%(mlo/7+1), h&1 == 0) })
		}
	}
	bin := func(min, max, zero []byte, n int) func(r int, h uint64) any {
		return func(r int, h uint64) any {
			return pick(r, h, min, max, zero, nil, func(h uint64) any { return fillBytes(nil, h, n) })
		}
	}
	ff := func(n int) []byte { return []byte(strings.Repeat("\xFF", n)) }
	ints := func(min, max int64) func(r int, h uint64) any {
		return func(r int, h uint64) any {
			return pick(r, h, min, max, int64(0), nil, func(h uint64) any { return min + int64(h%uint64(max-min)) })
		}
	}
	longLatin := strings.Repeat("0123456789abcdefghij", 500)  // 10000 bytes: several PLP chunks
	longUni := strings.Repeat("Unicode 😀 𝄞 日本語 текст ", 1000) // > 8000 bytes of UTF-16
	maxN50 := strings.Repeat("😀", 25)                         // 50 UTF-16 code units
	xmlDoc := `<order id="1"><line sku="A-1" qty="2"/><note>café &amp; 😀</note></order>`
	return []tmCol{
		{name: "c_tinyint", typ: "tinyint", val: ints(0, 255)},
		{name: "c_smallint", typ: "smallint", val: ints(math.MinInt16, math.MaxInt16)},
		{name: "c_int", typ: "int", val: ints(math.MinInt32, math.MaxInt32)},
		{name: "c_bigint", typ: "bigint", val: ints(math.MinInt64, math.MaxInt64)},
		{name: "c_bit", typ: "bit", val: func(r int, h uint64) any {
			return pick(r, h, false, true, false, nil, func(h uint64) any { return h&1 == 1 })
		}},
		{name: "c_real", typ: "real", val: func(r int, h uint64) any {
			return pick(r, h, -f32, f32, float32(0), float32(-1.17549435e-38), func(h uint64) any { return float32(int32(h)) / 1000 })
		}},
		{name: "c_float", typ: "float", val: func(r int, h uint64) any {
			return pick(r, h, -math.MaxFloat64, math.MaxFloat64, 0.0, -4.9e-324, func(h uint64) any { return float64(int64(h)) / 1e6 })
		}},
		{name: "c_money", typ: "money", val: func(r int, h uint64) any {
			return pick(r, h, decode.Money(math.MinInt64), decode.Money(math.MaxInt64), decode.Money(0), decode.Money(-1),
				func(h uint64) any { return decode.Money(int64(h>>24) - 1<<39) })
		}},
		{name: "c_smallmoney", typ: "smallmoney", val: func(r int, h uint64) any {
			return pick(r, h, decode.Money(math.MinInt32), decode.Money(math.MaxInt32), decode.Money(0), decode.Money(-12345),
				func(h uint64) any { return decode.Money(int32(h)) })
		}},
		{name: "c_datetime", typ: "datetime", val: func(r int, h uint64) any {
			// 9999-12-31 23:59:59.997 is 25919999/300 s = 863999966666.67 ticks, rounded.
			return pick(r, h, dtx(1753, 1, 1, 0), dtx(9999, 12, 31, 863999966667), dtx(1900, 1, 1, 0), dtx(1899, 12, 31, 10000000),
				func(h uint64) any { return roundTo300(dateTimeIn(h, day19000101, day20300101)) })
		}},
		{name: "c_smalldatetime", typ: "smalldatetime", val: func(r int, h uint64) any {
			return pick(r, h, dtx(1900, 1, 1, 0), dtx(2079, 6, 6, (23*60+59)*600000000), dtx(1900, 1, 1, 0), nil,
				func(h uint64) any {
					d := dateTimeIn(h, day19000101, decode.DateFromCivil(2079, 6, 1))
					d.Ticks -= d.Ticks % 600000000
					return d
				})
		}},
		{name: "c_decimal_38_0", typ: "decimal(38,0)", val: decimals(38, 0)},
		{name: "c_decimal_38_38", typ: "decimal(38,38)", val: decimals(38, 38)},
		{name: "c_decimal_18_4", typ: "decimal(18,4)", val: decimals(18, 4)},
		{name: "c_numeric_9_2", typ: "numeric(9,2)", val: decimals(9, 2)},
		{name: "c_uniqueidentifier", typ: "uniqueidentifier", val: func(r int, h uint64) any {
			var max decode.GUID
			for k := range max {
				max[k] = 0xFF
			}
			return pick(r, h, decode.GUID{}, max, decode.GUID{}, nil, func(h uint64) any { return guidFrom(h) })
		}},
		{name: "c_date", typ: "date", val: func(r int, h uint64) any {
			return pick(r, h, decode.Date(0), decode.Date(day99991231), decode.Date(day19000101), nil,
				func(h uint64) any { return decode.Date(uniform(h, int64(day99991231))) })
		}},
		{name: "c_time_0", typ: "time(0)", val: timeCol(0)},
		{name: "c_time_3", typ: "time(3)", val: timeCol(3)},
		{name: "c_time_7", typ: "time(7)", val: timeCol(7)},
		{name: "c_datetime2_0", typ: "datetime2(0)", val: dt2Col(0)},
		{name: "c_datetime2_3", typ: "datetime2(3)", val: dt2Col(3)},
		{name: "c_datetime2_7", typ: "datetime2(7)", val: dt2Col(7)},
		{name: "c_datetimeoffset_0", typ: "datetimeoffset(0)", val: dtoCol(0)},
		{name: "c_datetimeoffset_7", typ: "datetimeoffset(7)", val: dtoCol(7)},
		{name: "c_char_10", typ: "char(10)", val: str("          ", "ABCDEFGHIJ", "          ", "€uro café ", padAll(latin, 10, false))},
		{name: "c_varchar_50", typ: "varchar(50)", val: str("", strings.Repeat("x", 49)+"é", "", "Grüße aus Köln – €100", latin)},
		{name: "c_varchar_max", typ: "varchar(max)", val: str("", longLatin, "", "ß€ cp1252-only text", latin)},
		{name: "c_nchar_10", typ: "nchar(10)", val: str("          ", "日本語テキストです。", "          ", "😀😀😀😀😀", padAll(uni, 10, true))},
		{name: "c_nvarchar_50", typ: "nvarchar(50)", val: str("", maxN50, "", "𝄞 𐐷 😀 supplementary", uni)},
		{name: "c_nvarchar_max", typ: "nvarchar(max)", val: str("", longUni, "", "😀"+string([]rune(longUni)[:100]), uni)},
		{name: "c_binary_8", typ: "binary(8)", val: bin(make([]byte, 8), ff(8), make([]byte, 8), 8)},
		{name: "c_varbinary_50", typ: "varbinary(50)", val: bin([]byte{}, ff(50), []byte{}, 17)},
		{name: "c_varbinary_max", typ: "varbinary(max)", val: bin([]byte{}, fillBytes(nil, 77, 9000), []byte{}, 300)},
		{name: "c_text", typ: "text", val: str("", longLatin, "", "text: café €", latin)},
		{name: "c_ntext", typ: "ntext", val: str("", longUni, "", "ntext: 😀 日本語", uni)},
		{name: "c_image", typ: "image", val: bin([]byte{}, fillBytes(nil, 78, 9000), []byte{}, 64)},
		{name: "c_xml", typ: "xml", val: str("<a/>", "<doc>"+strings.Repeat("<i>x</i>", 1200)+"</doc>", "", xmlDoc, []string{"<a>1</a>", xmlDoc, `<r k="v"/>`})},
		{name: "c_geography", typ: "geography", val: func(r int, h uint64) any {
			return pick(r, h, GeographyPoint, GeographyPoint, GeographyPoint, nil, func(uint64) any { return GeographyPoint })
		}},
		{name: "c_geometry", typ: "geometry", val: func(r int, h uint64) any {
			return pick(r, h, GeometryPoint, GeometryPoint, GeometryPoint, nil, func(uint64) any { return GeometryPoint })
		}},
		{name: "c_hierarchyid", typ: "hierarchyid", val: func(r int, h uint64) any {
			paths := []string{"/1/", "/2/", "/3/", "/1/1/", "/1/2/"}
			return pick(r, h, HierarchyIDs["/"], HierarchyIDs["/1/2/"], HierarchyIDs["/"], nil,
				func(h uint64) any { return HierarchyIDs[paths[h%uint64(len(paths))]] })
		}},
		{name: "c_sql_variant", typ: "sql_variant", val: func(r int, h uint64) any {
			switch r {
			case tmNull:
				return nil
			case tmMin, tmMax, tmZero, tmUnicode, tmNeg:
				return variants[r]
			}
			return variants[r%len(variants)]
		}},
		{name: "c_rowversion", typ: "rowversion", val: func(r int, h uint64) any {
			return binary.BigEndian.AppendUint64(nil, 0x7D0+uint64(r))
		}},
		{name: "c_json", typ: "json", feature: "JSONSUPPORT", val: str("{}", `{"k":"`+strings.Repeat("v", 9000)+`"}`, "[]",
			`{"emoji":"😀","cafe":"café"}`, []string{`{"a":1,"b":[true,false,null]}`, `[1,2.5,"x"]`, `{"nested":{"x":{"y":-1}}}`})},
		{name: "c_vector_3", typ: "vector(3)", feature: "VECTORSUPPORT", val: func(r int, h uint64) any {
			return pick(r, h, []float32{-f32, -1, -math.SmallestNonzeroFloat32}, []float32{f32, 1, math.SmallestNonzeroFloat32},
				[]float32{0, 0, 0}, nil, func(h uint64) any {
					return []float32{float32(int16(h)) / 8, float32(int16(h>>16)) / 8, float32(int16(h>>32)) / 8}
				})
		}},
	}
}

func padAll(vals []string, n int, wide bool) []string {
	out := make([]string, len(vals))
	for k, s := range vals {
		out[k] = padUnits(s, n, wide)
	}
	return out
}

// roundTo300 rounds a datetime to the ticks a datetime value round-trips
// to (1/300 s, then back to 100 ns ticks rounded half up).
func roundTo300(dt decode.DateTime) decode.DateTime {
	t300 := (dt.Ticks*3 + 50000) / 100000
	d := dt.Days
	if t300 >= 300*86400 {
		d++
		t300 -= 300 * 86400
	}
	return decode.DateTime{Days: d, Ticks: (t300*100000 + 1) / 3}
}

func timeCol(scale uint8) func(r int, h uint64) any {
	last := decode.TicksPerDay - pow10[7-scale]
	return func(r int, h uint64) any {
		switch r {
		case tmMin, tmZero:
			return decode.Time(0)
		case tmMax:
			return decode.Time(last)
		case tmNull:
			return nil
		}
		t := int64(h % decode.TicksPerDay)
		return decode.Time(t - t%pow10[7-scale])
	}
}

func dt2Col(scale uint8) func(r int, h uint64) any {
	last := decode.TicksPerDay - pow10[7-scale]
	return func(r int, h uint64) any {
		switch r {
		case tmMin:
			return decode.DateTime{}
		case tmMax:
			return decode.DateTime{Days: day99991231, Ticks: last}
		case tmZero:
			return decode.DateTime{Days: day19000101}
		case tmNull:
			return nil
		}
		d := dateTimeIn(h, 0, day99991231+1)
		d.Ticks -= d.Ticks % pow10[7-scale]
		return d
	}
}

func dtoCol(scale uint8) func(r int, h uint64) any {
	last := decode.TicksPerDay - pow10[7-scale]
	return func(r int, h uint64) any {
		switch r {
		case tmMin: // 0001-01-01 00:00:00 -14:00 local = 0001-01-01 14:00 UTC
			return decode.DateTimeOffset{UTC: decode.DateTime{Ticks: 14 * 36000000000}, OffsetMin: -840}
		case tmMax: // 9999-12-31 23:59:59.9999999 +14:00 local = 09:59:59.9999999 UTC
			return decode.DateTimeOffset{UTC: decode.DateTime{Days: day99991231, Ticks: last - 14*36000000000}, OffsetMin: 840}
		case tmZero:
			return decode.DateTimeOffset{UTC: decode.DateTime{Days: day19000101}}
		case tmNull:
			return nil
		}
		o := dtoFrom(h)
		o.UTC.Ticks -= o.UTC.Ticks % pow10[7-scale]
		return o
	}
}

// typeMatrix adds dbo.type_matrix.
func (b *builder) typeMatrix() {
	cols := tmColumns()
	defs := []colDef{{name: "id", sqlType: "int"}}
	for _, c := range cols {
		defs = append(defs, colDef{name: c.name, sqlType: c.typ, nullable: c.typ != "rowversion", coll: c.coll})
	}
	t := b.newTable("dbo", "type_matrix", defs)
	t.Rows = tmRows
	if n := b.rows("dbo.type_matrix"); n > 0 {
		t.Rows = n
	}
	t.setKey("id", true)
	t.Features = map[int]string{}
	for k, c := range cols {
		if c.feature != "" {
			t.Features[k+1] = c.feature
		}
	}
	salt := mix(uint64(b.db.seed) ^ strHash("dbo.type_matrix"))
	t.rowFn = func(i int64, dst []any) []any {
		dst = append(dst, i+1)
		r := int(i)
		if i >= tmRows {
			r = tmRows + int(i%tmRows)
		}
		for k, c := range cols {
			dst = append(dst, c.val(r, mix(salt^uint64(i)*golden+uint64(k))))
		}
		return dst
	}
}

// Downgrade returns the table as sent to a client that did (or did not)
// negotiate JSONSUPPORT and VECTORSUPPORT: SQL Server sends json as
// nvarchar(max) and vector as varchar(max) text (a JSON array in SQL
// Server's float format, e.g. "[1.0000000e+000,2.0000000e+000]") when the
// feature was not acknowledged. It returns t itself when nothing changes.
func (t *Table) Downgrade(jsonSupport, vectorSupport bool) *Table {
	key := 0
	if !jsonSupport {
		key |= 1
	}
	if !vectorSupport {
		key |= 2
	}
	change := false
	for c := range t.Columns {
		ty := t.Columns[c].Type.Type
		if (ty == decode.TypeJSON && key&1 != 0) || (ty == decode.TypeVector && key&2 != 0) {
			change = true
		}
	}
	if !change {
		return t
	}
	downgradeMu.Lock()
	defer downgradeMu.Unlock()
	if d, ok := downgraded[downKey{t, key}]; ok {
		return d
	}
	d := *t
	d.Columns = append([]decode.Column(nil), t.Columns...)
	d.meta = append([]colMeta(nil), t.meta...)
	d.Features = nil
	var conv []int // columns converted to text
	for c := range d.Columns {
		ty := d.Columns[c].Type.Type
		var decl string
		switch {
		case ty == decode.TypeJSON && key&1 != 0:
			decl = "nvarchar(max)"
		case ty == decode.TypeVector && key&2 != 0:
			decl = "varchar(max)"
		default:
			continue
		}
		ti, m, _ := parseSQLType(decl, CollSQLLatin1, d.Columns[c].Nullable())
		d.Columns[c].Type = ti
		d.meta[c] = m
		conv = append(conv, c)
	}
	base := t
	d.gens = nil
	d.static = nil
	d.rowFn = func(i int64, dst []any) []any {
		dst = base.Row(i, dst)
		for _, c := range conv {
			if f, ok := dst[c].([]float32); ok {
				dst[c] = VectorText(f)
			}
		}
		return dst
	}
	downgraded[downKey{t, key}] = &d
	return &d
}

type downKey struct {
	t   *Table
	key int
}

var (
	downgradeMu sync.Mutex
	downgraded  = map[downKey]*Table{}
)

// VectorText formats a vector as SQL Server converts it to text: a JSON
// array of floats in scientific notation with 7 decimals and a 3-digit
// exponent, e.g. "[1.0000000e+000,-2.5000000e-001]".
func VectorText(f []float32) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for k, v := range f {
		if k > 0 {
			sb.WriteByte(',')
		}
		s := strconv.FormatFloat(float64(v), 'e', 7, 32)
		p := strings.IndexByte(s, 'e')
		mant, exp := s[:p], s[p+1:]
		sign := exp[0]
		digits := strings.TrimLeft(exp[1:], "0")
		for len(digits) < 3 {
			digits = "0" + digits
		}
		sb.WriteString(mant)
		sb.WriteByte('e')
		sb.WriteByte(sign)
		sb.WriteString(digits)
	}
	sb.WriteByte(']')
	return sb.String()
}
