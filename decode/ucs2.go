package decode

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
)

// UTF-16LE string helpers for the protocol's own strings (names, messages,
// SQL text, LOGIN7 fields). MS-TDS 2.2.5.1.1: B_VARCHAR and US_VARCHAR
// lengths count UTF-16 code units, not bytes.

// errOddUTF16 reports UTF-16LE data with an odd number of bytes.
var errOddUTF16 = errors.New("decode: UTF-16LE data has an odd number of bytes")

// AppendUTF16LE appends s (UTF-8) encoded as UTF-16LE, without a length or
// terminator. Invalid UTF-8 bytes become U+FFFD. It does not allocate
// beyond growing dst.
func AppendUTF16LE(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c, 0)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		dst = appendUTF16Rune(dst, r)
	}
	return dst
}

// AppendUTF16 is AppendUTF16LE under the name used in CONTRACT.md.
func AppendUTF16(dst []byte, s string) []byte { return AppendUTF16LE(dst, s) }

func appendUTF16Rune(dst []byte, r rune) []byte {
	if r >= 0x10000 {
		r -= 0x10000
		hi := 0xD800 + (r>>10)&0x3FF
		lo := 0xDC00 + r&0x3FF
		return append(dst, byte(hi), byte(hi>>8), byte(lo), byte(lo>>8))
	}
	if r >= 0xD800 && r < 0xE000 { // a lone surrogate cannot come from valid UTF-8
		r = utf8.RuneError
	}
	return append(dst, byte(r), byte(r>>8))
}

// UTF16Len returns the number of UTF-16 code units needed for s.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// DecodeUTF16LE converts UTF-16LE bytes to a UTF-8 string. Unpaired
// surrogates become U+FFFD, so the result is always valid UTF-8; an odd
// byte count is an error. It is the nchar text decoder of the cell path.
func DecodeUTF16LE(b []byte) (string, error) {
	if len(b)&1 != 0 {
		return "", errOddUTF16
	}
	td := textDecoder{kind: textUTF16}
	var stack [256]byte
	out := stack[:]
	if n := td.maxOut(len(b)); n > len(out) {
		out = make([]byte, n)
	}
	return string(out[:td.utf16(out, b, true)]), nil
}

// TruncateUTF16 returns the longest prefix of s that needs at most max UTF-16
// code units, never splitting a surrogate pair: what fits an nvarchar(max)
// declared length, which counts code units. Encoders use it to keep
// B_VARCHAR (255) and US_VARCHAR (65535) length fields representable.
func TruncateUTF16(s string, max int) string {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max {
			return s[:i]
		}
		n += w
		i += size
	}
	return s
}

// appendBVarChar appends a B_VARCHAR (BYTELEN count of code units, then
// UTF-16LE), truncating s to 255 code units.
func appendBVarChar(dst []byte, s string) []byte {
	s = TruncateUTF16(s, 0xFF)
	dst = append(dst, byte(UTF16Len(s)))
	return AppendUTF16LE(dst, s)
}

// appendUSVarChar appends a US_VARCHAR (USHORT count of code units, then
// UTF-16LE), truncating s to max (at most 65535) code units.
func appendUSVarChar(dst []byte, s string, max int) []byte {
	if max > 0xFFFF {
		max = 0xFFFF
	}
	s = TruncateUTF16(s, max)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(UTF16Len(s)))
	return AppendUTF16LE(dst, s)
}

// MaxUTF16ToUTF8 is the room UTF16ToUTF8 needs in dst for n bytes of
// UTF-16LE: at most 3 UTF-8 bytes per code unit, plus room for a
// trailing odd byte's U+FFFD and the stores of the block converter.
func MaxUTF16ToUTF8(n int) int { return (n+1)/2*3 + 6 }

// UTF16ToUTF8 converts a whole UTF-16LE value src to UTF-8 in dst, which
// must hold MaxUTF16ToUTF8(len(src)) bytes, and returns the bytes written;
// dst beyond them may have been overwritten. The result is what the
// decoder delivers for the value through the BeginValue sequence: pairs
// combine, unpaired surrogates and a trailing odd byte become U+FFFD. It
// is the converter of UTF16Sink.
//
// Short ASCII values, the commonest text in nvarchar columns, take two
// or four overlapping loads and stores instead of the loop.
func UTF16ToUTF8(dst, src []byte) int {
	const nonASCII = 0xFF80FF80FF80FF80
	n := len(src)
	switch {
	case n&1 != 0:
	case n >= 8 && n <= 16:
		// Four units from each end (overlapping when n < 16).
		a := binary.LittleEndian.Uint64(src)
		b := binary.LittleEndian.Uint64(src[n-8:])
		if (a|b)&nonASCII == 0 {
			u := n / 2
			binary.LittleEndian.PutUint32(dst, pack4(a))
			binary.LittleEndian.PutUint32(dst[u-4:], pack4(b))
			return u
		}
	case n > 16 && n <= 32:
		// Eight units from each end.
		a := binary.LittleEndian.Uint64(src)
		b := binary.LittleEndian.Uint64(src[8:])
		c := binary.LittleEndian.Uint64(src[n-16:])
		e := binary.LittleEndian.Uint64(src[n-8:])
		if (a|b|c|e)&nonASCII == 0 {
			u := n / 2
			binary.LittleEndian.PutUint64(dst, uint64(pack4(a))|uint64(pack4(b))<<32)
			binary.LittleEndian.PutUint64(dst[u-8:], uint64(pack4(c))|uint64(pack4(e))<<32)
			return u
		}
	case n >= 4 && n < 8:
		a := binary.LittleEndian.Uint32(src)
		b := binary.LittleEndian.Uint32(src[n-4:])
		if (a|b)&0xFF80FF80 == 0 {
			u := n / 2
			binary.LittleEndian.PutUint16(dst, uint16(a|a>>8))
			binary.LittleEndian.PutUint16(dst[u-2:], uint16(b|b>>8))
			return u
		}
	}
	td := textDecoder{kind: textUTF16}
	return td.utf16(dst, src, true)
}

// pack4 packs four ASCII UTF-16LE code units (high bytes zero) loaded as
// one little-endian word into their four low bytes.
func pack4(v uint64) uint32 {
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	return uint32(v | v>>16)
}
