package decode

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// Encoding of char/varchar/text values into a collation's code page: the
// server side of collation.go (used by the test server and by RPC
// parameters). Code pages and their golang.org/x/text tables are the ones
// Collation.CodePage and CodePageEncoding name.

// UnrepresentableError reports a character that the target code page has no
// byte sequence for. SQL Server would store '?' instead; an encoder that
// means to reproduce a server's bytes must not guess, so it is an error.
type UnrepresentableError struct {
	CodePage int
	Rune     rune
	Offset   int // byte offset of the character in the UTF-8 input
}

func (e *UnrepresentableError) Error() string {
	return fmt.Sprintf("decode: character %U at byte %d cannot be represented in code page %d", e.Rune, e.Offset, e.CodePage)
}

// ErrInvalidUTF8 is returned when text to encode is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("decode: text to encode is not valid UTF-8")

// ErrUnknownCodePage is returned for a collation whose code page has no
// encoder.
var ErrUnknownCodePage = errors.New("decode: no encoder for the collation's code page")

// mbcsPools pool the x/text encoders of the double-byte code pages (an
// encoder carries state, so one per concurrent use). A fixed array, not a
// map keyed by code page, so that looking one up allocates nothing.
var mbcsPools [4]sync.Pool

func mbcsPool(cp int) *sync.Pool {
	mbcsInit.Do(initMBCSPools)
	var p *sync.Pool
	switch cp {
	case 932:
		p = &mbcsPools[0]
	case 936:
		p = &mbcsPools[1]
	case 949:
		p = &mbcsPools[2]
	default: // 950
		p = &mbcsPools[3]
	}
	return p
}

var mbcsInit sync.Once

func initMBCSPools() {
	for i, cp := range [4]int{932, 936, 949, 950} {
		enc := CodePageEncoding(cp)
		mbcsPools[i].New = func() any { return enc.NewEncoder() }
	}
}

// EncodeText appends s (UTF-8) converted to the code page of collation c
// (Collation.CodePage): UTF-8 collations and Unicode-only locales pass s
// through unchanged after validation; single-byte code pages map each
// character to its byte; 932 (Shift-JIS), 936 (GBK), 949 and 950 use the
// x/text encoders. A character the code page cannot represent gives an
// *UnrepresentableError, invalid UTF-8 ErrInvalidUTF8; on error dst is
// returned unchanged. ASCII text needs no table; nothing allocates when dst
// has room.
func EncodeText(dst []byte, c Collation, s string) ([]byte, error) {
	return encodeCodePage(dst, c.CodePage(), s)
}

// EncodeTextCodePage is EncodeText for an explicit code page number.
func EncodeTextCodePage(dst []byte, cp int, s string) ([]byte, error) {
	return encodeCodePage(dst, cp, s)
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func encodeCodePage(dst []byte, cp int, s string) ([]byte, error) {
	if isASCIIString(s) && (cp == CodePageUTF8 || CodePageEncoding(cp) != nil) {
		// Every supported code page is an ASCII superset.
		return append(dst, s...), nil
	}
	if !utf8.ValidString(s) {
		return dst, ErrInvalidUTF8
	}
	if cp == CodePageUTF8 {
		return append(dst, s...), nil
	}
	enc := CodePageEncoding(cp)
	if enc == nil {
		return dst, ErrUnknownCodePage
	}
	if cm, ok := enc.(*charmap.Charmap); ok {
		return encodeSBCS(dst, cp, cm, s)
	}
	return encodeMBCS(dst, cp, s)
}

// sbcsLow bounds the dense reverse tables of the single-byte code pages:
// every character of theirs lies below it except a few symbols (€ U+20AC is
// inside; ™ U+2122 too), which fall back to the x/text search.
const sbcsLow = 0x2200

// sbcsEncTable maps a rune below sbcsLow to its byte in one single-byte
// code page, 0 if the code page has none (no non-ASCII rune maps to 0x00).
type sbcsEncTable struct {
	once sync.Once
	tab  [sbcsLow]byte
}

// sbcsEnc holds the tables of 437, 850, 874 and 1250..1258, built on first
// use.
var sbcsEnc [12]sbcsEncTable

func sbcsEncFor(cp int, cm *charmap.Charmap) *sbcsEncTable {
	i := -1
	switch {
	case cp == 437:
		i = 0
	case cp == 850:
		i = 1
	case cp == 874:
		i = 2
	case cp >= 1250 && cp <= 1258:
		i = 3 + cp - 1250
	}
	if i < 0 {
		return nil
	}
	t := &sbcsEnc[i]
	t.once.Do(func() {
		for r := rune(0x80); r < sbcsLow; r++ {
			if b, ok := cm.EncodeRune(r); ok && b >= 0x80 {
				t.tab[r] = b
			}
		}
	})
	return t
}

// encodeSBCS encodes s into a single-byte code page: ASCII as is, other
// characters through the dense table or, above it, x/text's own search.
func encodeSBCS(dst []byte, cp int, cm *charmap.Charmap, s string) ([]byte, error) {
	t := sbcsEncFor(cp, cm)
	start := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		var b byte
		if t != nil && r < sbcsLow {
			b = t.tab[r]
		}
		if b == 0 {
			var ok bool
			if b, ok = cm.EncodeRune(r); !ok {
				return dst[:start], &UnrepresentableError{CodePage: cp, Rune: r, Offset: i}
			}
		}
		dst = append(dst, b)
		i += size
	}
	return dst, nil
}

// encodeMBCS runs a pooled x/text encoder over s, straight into dst's spare
// capacity.
func encodeMBCS(dst []byte, cp int, s string) ([]byte, error) {
	pool := mbcsPool(cp)
	e := pool.Get().(*encoding.Encoder)
	defer pool.Put(e)
	e.Reset()
	start := len(dst)
	// The encoder only reads src; viewing the string's bytes avoids a copy.
	src := unsafe.Slice(unsafe.StringData(s), len(s))
	off := 0
	// Double-byte code pages need at most 2 bytes per UTF-8 byte pair.
	if cap(dst)-len(dst) < len(s) {
		dst = growBytes(dst, len(s))
	}
	for {
		nDst, nSrc, err := e.Transform(dst[len(dst):cap(dst)], src[off:], true)
		dst = dst[:len(dst)+nDst]
		off += nSrc
		if err == nil {
			return dst, nil
		}
		if err == transform.ErrShortDst {
			dst = growBytes(dst, len(src)-off+8)
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[off:])
		return dst[:start], &UnrepresentableError{CodePage: cp, Rune: r, Offset: off}
	}
}

// growBytes returns dst with room for at least n more bytes.
func growBytes(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	return append(dst[:cap(dst)], make([]byte, n)...)[:len(dst)]
}
