package sampledb

import (
	"encoding/binary"
	"unicode/utf16"

	"github.com/tdsextract/tdsextract/decode"
)

// Wire encoders of the fast path. They are deliberately written here, apart
// from decode's generic encoders (decode.AppendValue / AppendRow): the tests
// check that the two independent encodings of every generated row agree
// byte for byte, so a mistake in either shows up.

func appendU16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// appendFixedInt appends a little-endian integer of size bytes (fixed types).
func appendFixedInt(dst []byte, size int, v int64) []byte {
	switch size {
	case 1:
		return append(dst, byte(v))
	case 2:
		return appendU16(dst, uint16(v))
	case 4:
		return appendU32(dst, uint32(v))
	}
	return appendU64(dst, uint64(v))
}

// appendIntN appends an INTN value: length byte then the integer.
func appendIntN(dst []byte, size int, v int64) []byte {
	return appendFixedInt(append(dst, byte(size)), size, v)
}

// appendMoney8 appends money: high 4 bytes first, then low 4 bytes.
func appendMoney8(dst []byte, v int64) []byte {
	dst = appendU32(dst, uint32(uint64(v)>>32))
	return appendU32(dst, uint32(v))
}

// appendDecimalN appends a DECIMALN value of the column's length.
func appendDecimalN(dst []byte, size int, v decode.Decimal) []byte {
	dst = append(dst, byte(size))
	if v.Neg {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
	}
	switch size {
	case 5:
		return appendU32(dst, uint32(v.Lo))
	case 9:
		return appendU64(dst, v.Lo)
	case 13:
		return appendU32(appendU64(dst, v.Lo), uint32(v.Hi))
	}
	return appendU64(appendU64(dst, v.Lo), v.Hi)
}

var pow10 = [8]int64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000}

// appendTimeRaw appends ticks (100 ns) as a time(scale) value without a length byte.
func appendTimeRaw(dst []byte, scale uint8, ticks int64) []byte {
	v := uint64(ticks / pow10[7-scale])
	switch decode.TimeLen(scale) {
	case 3:
		return append(dst, byte(v), byte(v>>8), byte(v>>16))
	case 4:
		return appendU32(dst, uint32(v))
	}
	return append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32))
}

func appendDateRaw(dst []byte, days int32) []byte {
	return append(dst, byte(days), byte(days>>8), byte(days>>16))
}

func appendDateN(dst []byte, days int32) []byte { return appendDateRaw(append(dst, 3), days) }

func appendDateTime2N(dst []byte, scale uint8, v decode.DateTime) []byte {
	dst = append(dst, byte(decode.TimeLen(scale)+3))
	return appendDateRaw(appendTimeRaw(dst, scale, v.Ticks), v.Days)
}

func appendDateTimeOffsetN(dst []byte, scale uint8, v decode.DateTimeOffset) []byte {
	dst = append(dst, byte(decode.TimeLen(scale)+5))
	dst = appendDateRaw(appendTimeRaw(dst, scale, v.UTC.Ticks), v.UTC.Days)
	return appendU16(dst, uint16(v.OffsetMin))
}

// appendGUIDWire appends a GUID (RFC byte order) in the wire's mixed-endian order.
func appendGUIDWire(dst []byte, g decode.GUID) []byte {
	return append(dst, g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6],
		g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15])
}

// appendUShortBytes appends a USHORTLEN value.
func appendUShortBytes(dst []byte, b []byte) []byte {
	return append(appendU16(dst, uint16(len(b))), b...)
}

// appendUTF16 appends s as UTF-16LE.
func appendUTF16(dst []byte, s string) []byte {
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			dst = appendU16(appendU16(dst, uint16(r1)), uint16(r2))
			continue
		}
		dst = appendU16(dst, uint16(r))
	}
	return dst
}

const plpUnknownLen = 0xFFFFFFFFFFFFFFFE

// appendPLP appends b as a PLP value in chunks of at most chunk bytes, with a
// known total length, or the unknown-length marker when unknown is set.
func appendPLP(dst []byte, b []byte, chunk int, unknown bool) []byte {
	if unknown {
		dst = appendU64(dst, plpUnknownLen)
	} else {
		dst = appendU64(dst, uint64(len(b)))
	}
	for len(b) > 0 {
		n := min(len(b), chunk)
		dst = append(appendU32(dst, uint32(n)), b[:n]...)
		b = b[n:]
	}
	return appendU32(dst, 0)
}

// nullWire returns the bytes of a NULL of type ti inside a ROW token.
func nullWire(ti *decode.TypeInfo) []byte {
	if ti.IsPLP() {
		return []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	}
	switch ti.Type {
	case decode.TypeBigVarBinary, decode.TypeBigVarChar, decode.TypeBigBinary, decode.TypeBigChar,
		decode.TypeNVarChar, decode.TypeNChar, decode.TypeVector:
		return []byte{0xFF, 0xFF}
	case decode.TypeVariant:
		return []byte{0, 0, 0, 0}
	}
	return []byte{0} // BYTELEN types; text/ntext/image (textptr length 0)
}

// Row token bytes (MS-TDS 2.2.7.19, 2.2.7.17).
const (
	tokRow    = 0xD1
	tokNBCRow = 0xD2
)
