package sampledb

import (
	"encoding/binary"
	"math"

	"github.com/tdsextract/tdsextract/decode"
)

// vfn says how a fast column's values are computed, as plain typed values;
// buildGen turns it into the generic-value function and the wire encoder for
// the column's TYPE_INFO, so the two cannot disagree about the value.
// Exactly one value function (or strs) is set.
type vfn struct {
	nullPM uint64 // NULL probability per 1024 (nullable columns only)

	i func(i int64, h uint64) int64 // integers, bit (0/1), money (×10^4), date (days), time (ticks)
	f func(i int64, h uint64) float64
	d func(i int64, h uint64) decode.Decimal // Lo/Hi/Neg; Scale and Precision come from the column
	t func(i int64, h uint64) decode.DateTime
	o func(i int64, h uint64) decode.DateTimeOffset
	g func(i int64, h uint64) decode.GUID
	// strs are the values of a character column (or max column); sidx picks
	// one (default: uniformly from the cell hash). Pools are pre-encoded.
	strs []string
	sidx func(i int64, h uint64) int
	// unknownPLP makes odd pool entries use the unknown-length PLP form.
	unknownPLP bool
	plpChunk   int // PLP chunk size (default 8000)
	// hashInt4 marks i as hashInt4 (encoded inline for INTN 4 columns).
	hashInt4 bool
	// bytes appends a binary value's bytes (binary/varbinary).
	bytes func(dst []byte, i int64, h uint64) []byte
}

// poolKey identifies an encoded pool so that columns with the same strings
// and the same wire type share one (wide601 has 30 columns per pool).
type poolKey struct {
	first   *string
	n       int
	typ     byte
	size    uint32
	coll    decode.Collation
	chunk   int
	unknown bool
}

// buildGen makes the generator of a fast column. cache (may be nil) shares
// encoded pools between columns.
func buildGen(ti *decode.TypeInfo, v vfn, cache map[poolKey]*pool) gen {
	g := gen{nullPM: v.nullPM}
	// The fixed-size kinds come in two wire forms: the N- form of a
	// nullable column carries a length byte before each value (pre).
	k := ti.Kind()
	pre := decode.FixedForm(*ti).Type != ti.Type
	switch {
	case k.Class() == decode.ClassInteger:
		f := v.i
		size := k.FixedSize()
		g.val = func(i int64, h uint64) any { return f(i, h) }
		if pre {
			g.enc = func(dst []byte, i int64, h uint64) []byte { return appendIntN(dst, size, f(i, h)) }
			if v.hashInt4 && size == 4 {
				g.kind = kindInt4
			}
		} else {
			g.enc = func(dst []byte, i int64, h uint64) []byte { return appendFixedInt(dst, size, f(i, h)) }
		}
	case k == decode.KindBit:
		f := v.i
		g.val = func(i int64, h uint64) any { return f(i, h) != 0 }
		g.enc = func(dst []byte, i int64, h uint64) []byte {
			if pre {
				dst = append(dst, 1)
			}
			if f(i, h) != 0 {
				return append(dst, 1)
			}
			return append(dst, 0)
		}
	case k == decode.KindReal:
		f := v.f
		g.val = func(i int64, h uint64) any { return float32(f(i, h)) }
		g.enc = func(dst []byte, i int64, h uint64) []byte {
			if pre {
				dst = append(dst, 4)
			}
			return appendU32(dst, math.Float32bits(float32(f(i, h))))
		}
	case k == decode.KindFloat:
		f := v.f
		g.val = func(i int64, h uint64) any { return f(i, h) }
		g.enc = func(dst []byte, i int64, h uint64) []byte {
			if pre {
				dst = append(dst, 8)
			}
			return appendU64(dst, math.Float64bits(f(i, h)))
		}
	case k.Class() == decode.ClassMoney:
		f := v.i
		small := k == decode.KindSmallMoney
		g.val = func(i int64, h uint64) any { return decode.Money(f(i, h)) }
		g.enc = func(dst []byte, i int64, h uint64) []byte {
			if small {
				if pre {
					dst = append(dst, 4)
				}
				return appendU32(dst, uint32(f(i, h)))
			}
			if pre {
				dst = append(dst, 8)
			}
			return appendMoney8(dst, f(i, h))
		}
	default:
		return buildWireGen(ti, v, cache, g)
	}
	return g
}

// buildWireGen is buildGen for the types whose encoding depends on the wire
// form itself (length prefixes, padding, PLP framing).
func buildWireGen(ti *decode.TypeInfo, v vfn, cache map[poolKey]*pool, g gen) gen {
	switch ti.Type {
	case decode.TypeDecimalN, decode.TypeNumericN:
		f, p, s, size := v.d, ti.Precision, ti.Scale, int(ti.Size)
		get := func(i int64, h uint64) decode.Decimal {
			d := f(i, h)
			d.Precision, d.Scale = p, s
			return d
		}
		g.val = func(i int64, h uint64) any { return get(i, h) }
		g.enc = func(dst []byte, i int64, h uint64) []byte { return appendDecimalN(dst, size, f(i, h)) }
	case decode.TypeDateN:
		f := v.i
		g.val = func(i int64, h uint64) any { return decode.Date(f(i, h)) }
		g.enc = func(dst []byte, i int64, h uint64) []byte { return appendDateN(dst, int32(f(i, h))) }
	case decode.TypeTimeN:
		f, sc := v.i, ti.Scale
		get := func(i int64, h uint64) int64 { t := f(i, h); return t - t%pow10[7-sc] }
		g.val = func(i int64, h uint64) any { return decode.Time(get(i, h)) }
		g.enc = func(dst []byte, i int64, h uint64) []byte {
			return appendTimeRaw(append(dst, byte(decode.TimeLen(sc))), sc, get(i, h))
		}
	case decode.TypeDateTime2N:
		f, sc := v.t, ti.Scale
		get := func(i int64, h uint64) decode.DateTime { t := f(i, h); t.Ticks -= t.Ticks % pow10[7-sc]; return t }
		g.val = func(i int64, h uint64) any { return get(i, h) }
		g.enc = func(dst []byte, i int64, h uint64) []byte { return appendDateTime2N(dst, sc, get(i, h)) }
	case decode.TypeDateTimeOffset:
		f, sc := v.o, ti.Scale
		get := func(i int64, h uint64) decode.DateTimeOffset {
			t := f(i, h)
			t.UTC.Ticks -= t.UTC.Ticks % pow10[7-sc]
			return t
		}
		g.val = func(i int64, h uint64) any { return get(i, h) }
		g.enc = func(dst []byte, i int64, h uint64) []byte { return appendDateTimeOffsetN(dst, sc, get(i, h)) }
	case decode.TypeGUID:
		f := v.g
		g.val = func(i int64, h uint64) any { return f(i, h) }
		g.enc = func(dst []byte, i int64, h uint64) []byte { return appendGUIDWire(append(dst, 16), f(i, h)) }
	case decode.TypeBigVarChar, decode.TypeBigChar, decode.TypeNVarChar, decode.TypeNChar:
		var enc func(dst []byte, s string) []byte
		vals := v.strs
		wide := ti.Type == decode.TypeNVarChar || ti.Type == decode.TypeNChar
		if ti.Type == decode.TypeBigChar || ti.Type == decode.TypeNChar {
			n := int(ti.Size)
			if wide {
				n /= 2
			}
			padded := make([]string, len(vals))
			for k, s := range vals {
				padded[k] = padUnits(s, n, wide)
			}
			vals = padded
		}
		switch {
		case ti.IsPLP():
			chunk := v.plpChunk
			if chunk == 0 {
				chunk = 8000
			}
			k := 0
			unknown := v.unknownPLP
			enc = func(dst []byte, s string) []byte {
				var b []byte
				if wide {
					b = appendUTF16(nil, s)
				} else {
					b = mustEncodeText(ti.Collation, s)
				}
				k++
				return appendPLP(dst, b, chunk, unknown && k%2 == 0)
			}
		case wide:
			enc = encNVarchar
		default:
			coll := ti.Collation
			enc = func(dst []byte, s string) []byte { return appendUShortBytes(dst, mustEncodeText(coll, s)) }
		}
		key := poolKey{n: len(v.strs), typ: ti.Type, size: ti.Size, coll: ti.Collation, chunk: v.plpChunk, unknown: v.unknownPLP}
		if len(v.strs) > 0 {
			key.first = &v.strs[0]
		}
		p := cache[key]
		if p == nil {
			p = newPool(vals, enc)
			if cache != nil {
				cache[key] = p
			}
		}
		idx := v.sidx
		if idx == nil {
			idx = func(_ int64, h uint64) int { return p.pick(h) }
			g.kind, g.pool = kindPool, p
		}
		g.val = func(i int64, h uint64) any { return p.vals[idx(i, h)] }
		g.enc = func(dst []byte, i int64, h uint64) []byte { return p.appendWire(dst, idx(i, h)) }
	case decode.TypeBigVarBinary, decode.TypeBigBinary:
		f := v.bytes
		plp := ti.IsPLP()
		chunk := v.plpChunk
		if chunk == 0 {
			chunk = 8000
		}
		g.val = func(i int64, h uint64) any { return f(nil, i, h) }
		g.enc = func(dst []byte, i int64, h uint64) []byte {
			if plp {
				p := len(dst)
				dst = appendU64(dst, 0)
				q := len(dst)
				dst = appendU32(dst, 0)
				dst = f(dst, i, h)
				n := len(dst) - q - 4
				if n > chunk {
					// Rare (values above one chunk): re-frame through appendPLP.
					b := append([]byte(nil), dst[q+4:]...)
					return appendPLP(dst[:p], b, chunk, false)
				}
				putU64(dst[p:], uint64(n))
				putU32(dst[q:], uint32(n))
				if n == 0 {
					return dst[:q+4] // empty value: total 0 then the terminator
				}
				return appendU32(dst, 0)
			}
			p := len(dst)
			dst = appendU16(dst, 0)
			dst = f(dst, i, h)
			n := len(dst) - p - 2
			dst[p], dst[p+1] = byte(n), byte(n>>8)
			return dst
		}
	default:
		panic("sampledb: no fast encoder for type " + string(rune(ti.Type)))
	}
	return g
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	for k := range 8 {
		b[k] = byte(v >> (8 * k))
	}
}

func putU32(b []byte, v uint32) {
	_ = b[3]
	for k := range 4 {
		b[k] = byte(v >> (8 * k))
	}
}

// fillBytes appends n pseudo-random bytes derived from h.
func fillBytes(dst []byte, h uint64, n int) []byte {
	k := 0
	for ; k+8 <= n; k += 8 {
		dst = binary.LittleEndian.AppendUint64(dst, mix(h+uint64(k)*golden))
	}
	if k < n {
		w := mix(h + uint64(k)*golden)
		for j := 0; k+j < n; j++ {
			dst = append(dst, byte(w>>(8*j)))
		}
	}
	return dst
}
