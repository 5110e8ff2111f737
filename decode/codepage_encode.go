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
		start := len(dst)
		for i, r := range s {
			b, ok := cm.EncodeRune(r)
			if !ok {
				return dst[:start], &UnrepresentableError{CodePage: cp, Rune: r, Offset: i}
			}
			dst = append(dst, b)
		}
		return dst, nil
	}
	return encodeMBCS(dst, cp, s)
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
