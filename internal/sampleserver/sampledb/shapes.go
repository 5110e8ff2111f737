package sampledb

import (
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// Useful day numbers.
var (
	day19000101 = decode.DateFromCivil(1900, 1, 1)
	day19920101 = decode.DateFromCivil(1992, 1, 1)
	day19950617 = decode.DateFromCivil(1995, 6, 17)
	day19980802 = decode.DateFromCivil(1998, 8, 2)
	day20000101 = decode.DateFromCivil(2000, 1, 1)
	day20300101 = decode.DateFromCivil(2030, 1, 1)
	day99991231 = decode.DateFromCivil(9999, 12, 31)
)

// uniform returns a value in [0, n) from 32 bits of h.
func uniform(h uint64, n int64) int64 { return int64((h >> 32) * uint64(n) >> 32) }

// dec makes a Decimal from a signed 64-bit magnitude (scale set by the column).
func dec(v int64) decode.Decimal {
	if v < 0 {
		return decode.Decimal{Lo: uint64(-v), Neg: true}
	}
	return decode.Decimal{Lo: uint64(v)}
}

// bigDec makes a decimal with a magnitude below 2^126 (< 10^38) from h.
func bigDec(h uint64) decode.Decimal {
	h2 := mix(h + 1)
	switch h & 3 {
	case 0: // large: uses the high word
		return decode.Decimal{Lo: h2, Hi: mix(h+2) >> 2, Neg: h&4 != 0}
	case 1:
		return decode.Decimal{Lo: h2, Neg: h&4 != 0}
	}
	return decode.Decimal{Lo: h2 % 100000000000, Neg: h&4 != 0}
}

func guidFrom(h uint64) decode.GUID {
	var g decode.GUID
	a, b := mix(h+11), mix(h+12)
	for k := range 8 {
		g[k], g[8+k] = byte(a>>(8*k)), byte(b>>(8*k))
	}
	g[6] = g[6]&0x0F | 0x40 // version 4
	g[8] = g[8]&0x3F | 0x80 // RFC 4122 variant
	return g
}

// dateTimeIn returns a datetime in [day0, day1) with a random time of day.
func dateTimeIn(h uint64, day0, day1 int32) decode.DateTime {
	d := day0 + int32(uniform(h, int64(day1-day0)))
	return decode.DateTime{Days: d, Ticks: int64(mix(h+5) % decode.TicksPerDay)}
}

// alnumPool returns n strings of 0..maxLen characters [A-Za-z0-9].
func alnumPool(seed uint64, n, maxLen int) []string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]string, n)
	for k := range out {
		h := mix(seed + uint64(k)*golden)
		l := int(h % uint64(maxLen+1))
		b := make([]byte, l)
		for j := range b {
			b[j] = chars[(h>>(8+5*j))%uint64(len(chars))]
			if j%8 == 7 {
				h = mix(h)
			}
		}
		out[k] = string(b)
	}
	return out
}

// wordPool returns n strings of words joined by blanks, each at most maxLen bytes.
func wordPool(seed uint64, n, maxLen int, list []string) []string {
	out := make([]string, n)
	for k := range out {
		h := mix(seed + uint64(k)*golden)
		var sb strings.Builder
		for w := 0; ; w++ {
			word := list[(h>>uint(w%8*8))%uint64(len(list))]
			if w%8 == 7 {
				h = mix(h)
			}
			if sb.Len()+len(word)+1 > maxLen || w > 12 {
				break
			}
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(word)
		}
		out[k] = sb.String()
	}
	return out
}

// mixedPool returns n strings mixing ASCII words and non-ASCII samples, each
// at most maxRunes characters (for nvarchar columns).
func mixedPool(seed uint64, n, maxRunes int) []string {
	out := make([]string, n)
	for k := range out {
		h := mix(seed + uint64(k)*golden)
		s := words[h%uint64(len(words))] + " " + nonASCII[(h>>16)%uint64(len(nonASCII))]
		if h>>40&3 == 0 {
			s = nonASCII[(h>>24)%uint64(len(nonASCII))]
		}
		out[k] = decode.TruncateUTF16(s, maxRunes) // nvarchar(n) counts code units
	}
	return out
}

// nint is an int column generator: mostly small values, some full-range.
func nint(nullPM uint64) *vfn {
	return &vfn{nullPM: nullPM, hashInt4: true, i: func(_ int64, h uint64) int64 { return hashInt4(h) }}
}

// keyType is the type of a table's integer key: int, or bigint when the
// configured row count does not fit an int.
func (b *builder) keyType(table string) string {
	if b.rows(table) > 1<<31-1 {
		return "bigint"
	}
	return "int"
}

func keyGen() *vfn { return &vfn{i: func(i int64, _ uint64) int64 { return i + 1 }} }

// shapes adds the benchmark workload tables.
func (b *builder) shapes() {
	seed := uint64(b.db.seed)

	// poc48: 39 nullable INT (INTN 4) + 9 nullable VARCHAR(6).
	{
		defs := []colDef{{name: "id", sqlType: b.keyType("dbo.poc48"), nullable: true, v: keyGen()}}
		for k := 2; k <= 39; k++ {
			defs = append(defs, colDef{name: fmt.Sprintf("i%02d", k), sqlType: "int", nullable: true, v: nint(51)})
		}
		strs := alnumPool(seed^0x5A5A, 4096, 6)
		for k := 1; k <= 9; k++ {
			defs = append(defs, colDef{name: fmt.Sprintf("s%d", k), sqlType: "varchar(6)", nullable: true,
				v: &vfn{nullPM: 51, strs: strs}})
		}
		t := b.newTable("dbo", "poc48", defs)
		t.setKey("id", true)
		// id is the primary key and never NULL, but the shape keeps all 39
		// int columns INTN 4 (nullable wire type), so its metadata says
		// nullable; the catalog reports it NOT NULL.
		t.meta[0].nullable = false
	}

	// odbc5: int, bigint, varchar(50), nvarchar(50), float.
	{
		t := b.newTable("dbo", "odbc5", []colDef{
			{name: "id", sqlType: b.keyType("dbo.odbc5"), v: keyGen()},
			{name: "big", sqlType: "bigint", nullable: true, v: &vfn{nullPM: 20, i: func(i int64, h uint64) int64 {
				return int64(h>>1) - 1<<62
			}}},
			{name: "name", sqlType: "varchar(50)", nullable: true, v: &vfn{nullPM: 20, strs: wordPool(seed^0x0DBC, 2048, 50, words)}},
			{name: "label", sqlType: "nvarchar(50)", nullable: true, v: &vfn{nullPM: 20, strs: mixedPool(seed^0x0DBD, 2048, 50)}},
			{name: "score", sqlType: "float", nullable: true, v: &vfn{nullPM: 20, f: func(_ int64, h uint64) float64 {
				return float64(int64(h>>11)-1<<52) / 1e6
			}}},
		})
		t.setKey("id", true)
	}

	// wide601: id + 600 columns cycling over 20 types.
	{
		types := []string{"int", "bigint", "smallint", "tinyint", "bit", "real", "float", "decimal(18,0)",
			"decimal(38,4)", "numeric(9,2)", "money", "date", "time(7)", "datetime2(7)", "datetimeoffset(7)",
			"uniqueidentifier", "varchar(20)", "nvarchar(20)", "char(10)", "varbinary(16)"}
		vstr := wordPool(seed^0x601A, 1024, 20, words)
		nstr := mixedPool(seed^0x601B, 1024, 20)
		cstr := alnumPool(seed^0x601C, 512, 10)
		defs := []colDef{{name: "id", sqlType: b.keyType("dbo.wide601"), v: keyGen()}}
		for k := 1; k <= 600; k++ {
			ty := types[(k-1)%len(types)]
			v := wideGen(ty, vstr, nstr, cstr)
			v.nullPM = 102
			name := fmt.Sprintf("c%03d_%s", k, strings.NewReplacer("(", "", ")", "", ",", "_").Replace(ty))
			defs = append(defs, colDef{name: name, sqlType: ty, nullable: true, v: v})
		}
		t := b.newTable("dbo", "wide601", defs)
		t.setKey("id", true)
	}

	// lob: id + 24 x varbinary(max) of 128 bytes.
	{
		defs := []colDef{{name: "id", sqlType: b.keyType("dbo.lob"), v: keyGen()}}
		for k := 1; k <= 24; k++ {
			defs = append(defs, colDef{name: fmt.Sprintf("b%02d", k), sqlType: "varbinary(max)", nullable: true,
				v: &vfn{nullPM: 10, bytes: func(dst []byte, _ int64, h uint64) []byte { return fillBytes(dst, h, 128) }}})
		}
		t := b.newTable("dbo", "lob", defs)
		t.setKey("id", true)
	}

	// lob_nvarchar: id + nvarchar(max) of 64 KiB (32768 UTF-16 code units),
	// PLP chunks of 8000 bytes, every other pool entry with unknown length.
	{
		docs := make([]string, 8)
		for k := range docs {
			docs[k] = longText(seed^uint64(k+1)*0x10B, 32768)
		}
		t := b.newTable("dbo", "lob_nvarchar", []colDef{
			{name: "id", sqlType: b.keyType("dbo.lob_nvarchar"), v: keyGen()},
			{name: "doc", sqlType: "nvarchar(max)", nullable: true, v: &vfn{nullPM: 30, strs: docs, unknownPLP: true, plpChunk: 8000}},
		})
		t.setKey("id", true)
	}

	// temporal: datetime2(7), datetimeoffset(7), decimal(38,10), uniqueidentifier, money.
	{
		t := b.newTable("dbo", "temporal", []colDef{
			{name: "id", sqlType: b.keyType("dbo.temporal"), v: keyGen()},
			{name: "ts", sqlType: "datetime2(7)", nullable: true, v: &vfn{nullPM: 20, t: func(_ int64, h uint64) decode.DateTime {
				if h&15 == 0 {
					return dateTimeIn(h, 0, day99991231+1)
				}
				return dateTimeIn(h, day20000101, day20300101)
			}}},
			{name: "tso", sqlType: "datetimeoffset(7)", nullable: true, v: &vfn{nullPM: 20, o: func(_ int64, h uint64) decode.DateTimeOffset {
				return dtoFrom(h)
			}}},
			{name: "amount", sqlType: "decimal(38,10)", nullable: true, v: &vfn{nullPM: 20, d: func(_ int64, h uint64) decode.Decimal { return bigDec(h) }}},
			{name: "uid", sqlType: "uniqueidentifier", nullable: true, v: &vfn{nullPM: 20, g: func(_ int64, h uint64) decode.GUID { return guidFrom(h) }}},
			{name: "price", sqlType: "money", nullable: true, v: &vfn{nullPM: 20, i: func(_ int64, h uint64) int64 {
				return int64(h>>20) - 1<<43 // about ±879 million
			}}},
		})
		t.setKey("id", true)
	}

	b.lineitem()
}

// dtoFrom returns a datetimeoffset with an offset across -14:00..+14:00 and
// a UTC instant whose local time is inside 0001-01-01..9999-12-31.
func dtoFrom(h uint64) decode.DateTimeOffset {
	var off int16
	switch h >> 60 {
	case 0:
		off = -840
	case 1:
		off = 840
	default:
		off = int16(uniform(mix(h+3), 113))*15 - 840 // quarter hours
	}
	dt := dateTimeIn(h, day20000101, day20300101)
	if h&31 == 0 {
		dt = dateTimeIn(h, 1, day99991231)
	}
	return decode.DateTimeOffset{UTC: dt, OffsetMin: off}
}

// wideGen returns the value function of one wide601 column type.
func wideGen(ty string, vstr, nstr, cstr []string) *vfn {
	switch ty {
	case "int":
		return nint(0)
	case "bigint":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(h) >> 3 }}
	case "smallint":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(int16(h >> 20)) }}
	case "tinyint":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(uint8(h >> 20)) }}
	case "bit":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(h >> 20 & 1) }}
	case "real":
		return &vfn{f: func(_ int64, h uint64) float64 { return float64(float32(int32(h>>20)) / 1024) }}
	case "float":
		return &vfn{f: func(_ int64, h uint64) float64 { return float64(int64(h>>11)-1<<52) / 1e9 }}
	case "decimal(18,0)":
		return &vfn{d: func(_ int64, h uint64) decode.Decimal {
			return decode.Decimal{Lo: (h >> 1) % 1000000000000000000, Neg: h&1 != 0}
		}}
	case "decimal(38,4)":
		return &vfn{d: func(_ int64, h uint64) decode.Decimal { return bigDec(h) }}
	case "numeric(9,2)":
		return &vfn{d: func(_ int64, h uint64) decode.Decimal { return dec(int64(h>>20)%1000000000 - 500000000) }}
	case "money":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(h>>16) - 1<<47 }}
	case "date":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(day19000101) + uniform(h, 80000) }}
	case "time(7)":
		return &vfn{i: func(_ int64, h uint64) int64 { return int64(h % decode.TicksPerDay) }}
	case "datetime2(7)":
		return &vfn{t: func(_ int64, h uint64) decode.DateTime { return dateTimeIn(h, day19000101, day20300101) }}
	case "datetimeoffset(7)":
		return &vfn{o: func(_ int64, h uint64) decode.DateTimeOffset { return dtoFrom(h) }}
	case "uniqueidentifier":
		return &vfn{g: func(_ int64, h uint64) decode.GUID { return guidFrom(h) }}
	case "varchar(20)":
		return &vfn{strs: vstr}
	case "nvarchar(20)":
		return &vfn{strs: nstr}
	case "char(10)":
		return &vfn{strs: cstr}
	case "varbinary(16)":
		return &vfn{bytes: func(dst []byte, _ int64, h uint64) []byte { return fillBytes(dst, h, int(h>>60)+1) }}
	}
	panic("sampledb: wide601 type " + ty)
}

// longText returns a string of exactly n UTF-16 code units: words with some
// non-ASCII text, including characters outside the BMP (2 code units each).
func longText(seed uint64, n int) string {
	var sb strings.Builder
	units := 0
	h := seed
	for units < n {
		h = mix(h + golden)
		w := words[h%uint64(len(words))]
		if h>>32&7 == 0 {
			w = nonASCII[(h>>8)%uint64(len(nonASCII))]
		}
		for _, r := range w + " " {
			u := 1
			if r >= 0x10000 {
				u = 2
			}
			if units+u > n {
				r, u = '.', 1
			}
			sb.WriteRune(r)
			units += u
			if units == n {
				break
			}
		}
	}
	return sb.String()
}
