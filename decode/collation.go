package decode

import (
	"encoding/binary"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/transform"
)

// CodePageUTF8 is the code page number CodePage reports for UTF-8 data: a
// collation with the fUTF8 flag (SQL Server 2019+) or a Unicode-only locale.
const CodePageUTF8 = 65001

// CodePage returns the Windows code page of char, varchar and text data under
// the collation (MS-TDS 2.2.5.1.2): CodePageUTF8 for UTF-8 collations, the
// code page of the SQL sort order when SortID is non-zero (SQL collations),
// else the ANSI code page of the Windows locale LCID. Unknown locales map to
// 1252, as SQL Server's own default.
func (c Collation) CodePage() int {
	if c.UTF8() {
		return CodePageUTF8
	}
	if c.SortID != 0 {
		if cp := sortIDCodePage(c.SortID); cp != 0 {
			return cp
		}
	}
	lcid := c.LCID()
	if cp, ok := lcidCodePage[lcid]; ok {
		return cp
	}
	// The upper 4 bits of the 20-bit LCID select an alternate sort of the
	// same language (e.g. 0x10411 Japanese Unicode); the code page is the
	// language's.
	if cp, ok := lcidCodePage[lcid&0xFFFF]; ok {
		return cp
	}
	return 1252
}

// sortIDCodePage maps SQL collation sort ids (the SortId byte of a SQL_*
// collation) to code pages; 0 for an id it does not know.
func sortIDCodePage(id byte) int {
	switch {
	case id >= 30 && id <= 34:
		return 437
	case id >= 40 && id <= 44, id == 49, id >= 55 && id <= 61:
		return 850
	case id >= 50 && id <= 54, id >= 71 && id <= 75, id >= 183 && id <= 186, id >= 210 && id <= 217:
		return 1252
	case id >= 80 && id <= 96:
		return 1250
	case id >= 104 && id <= 108:
		return 1251
	case id >= 112 && id <= 114, id == 121, id == 124:
		return 1253
	case id >= 128 && id <= 130:
		return 1254
	case id >= 136 && id <= 138:
		return 1255
	case id >= 144 && id <= 146:
		return 1256
	case id >= 152 && id <= 160:
		return 1257
	case id == 192, id == 193, id == 200:
		return 932
	case id == 194, id == 195, id == 201:
		return 949
	case id == 196, id == 197, id == 202:
		return 950
	case id == 198, id == 199, id == 203:
		return 936
	case id >= 204 && id <= 206:
		return 874
	}
	return 0
}

// lcidCodePage maps Windows locale ids to their ANSI code page. Locales not
// listed use 1252. Unicode-only locales (no ANSI code page) map to UTF-8:
// their varchar data can only be ASCII, which UTF-8 validation passes.
var lcidCodePage = map[uint32]int{
	// Thai
	0x001E: 874, 0x041E: 874,
	// Japanese
	0x0411: 932,
	// Chinese (PRC, Singapore)
	0x0804: 936, 0x1004: 936,
	// Korean
	0x0012: 949, 0x0412: 949,
	// Chinese (Taiwan, Hong Kong, Macao)
	0x0404: 950, 0x0C04: 950, 0x1404: 950, 0x7C04: 950,
	// Central European
	0x041C: 1250, 0x041A: 1250, 0x0405: 1250, 0x040E: 1250, 0x104E: 1250, 0x0415: 1250,
	0x0418: 1250, 0x041B: 1250, 0x0424: 1250, 0x0442: 1250, 0x081A: 1250, 0x141A: 1250,
	// Cyrillic
	0x0423: 1251, 0x0402: 1251, 0x042F: 1251, 0x0419: 1251, 0x0C1A: 1251, 0x0422: 1251,
	0x043F: 1251, 0x0444: 1251, 0x082C: 1251, 0x0843: 1251, 0x0440: 1251, 0x0450: 1251,
	0x046D: 1251, 0x0485: 1251, 0x201A: 1251,
	// Greek
	0x0408: 1253,
	// Turkish, Azeri (Latin), Uzbek (Latin)
	0x041F: 1254, 0x042C: 1254, 0x0443: 1254,
	// Hebrew
	0x040D: 1255,
	// Arabic, Farsi, Urdu, Uighur, Dari
	0x0401: 1256, 0x0801: 1256, 0x0C01: 1256, 0x1001: 1256, 0x1401: 1256, 0x1801: 1256,
	0x1C01: 1256, 0x2001: 1256, 0x2401: 1256, 0x2801: 1256, 0x2C01: 1256, 0x3001: 1256,
	0x3401: 1256, 0x3801: 1256, 0x3C01: 1256, 0x4001: 1256, 0x0429: 1256, 0x0420: 1256,
	0x0480: 1256, 0x048C: 1256,
	// Baltic
	0x0425: 1257, 0x0426: 1257, 0x0427: 1257, 0x0827: 1257,
	// Vietnamese
	0x042A: 1258,
	// Unicode-only locales: Hindi, Sindhi, Divehi, Georgian, Armenian,
	// Bengali, Tibetan, Marathi, Sanskrit, Konkani, Manipuri, Tamil, ...
	0x0439: CodePageUTF8, 0x045A: CodePageUTF8, 0x0465: CodePageUTF8, 0x043A: CodePageUTF8,
	0x0445: CodePageUTF8, 0x044D: CodePageUTF8, 0x0451: CodePageUTF8, 0x0453: CodePageUTF8,
	0x0454: CodePageUTF8, 0x0461: CodePageUTF8, 0x0463: CodePageUTF8, 0x0481: CodePageUTF8,
	0x0437: CodePageUTF8, 0x042B: CodePageUTF8, 0x0449: CodePageUTF8, 0x044E: CodePageUTF8,
	0x044F: CodePageUTF8, 0x0457: CodePageUTF8,
}

// CodePageEncoding returns the golang.org/x/text encoding of a code page that
// CodePage can return, or nil for CodePageUTF8 and unknown code pages.
func CodePageEncoding(cp int) encoding.Encoding {
	switch cp {
	case 437:
		return charmap.CodePage437
	case 850:
		return charmap.CodePage850
	case 874:
		return charmap.Windows874
	case 1250:
		return charmap.Windows1250
	case 1251:
		return charmap.Windows1251
	case 1252:
		return charmap.Windows1252
	case 1253:
		return charmap.Windows1253
	case 1254:
		return charmap.Windows1254
	case 1255:
		return charmap.Windows1255
	case 1256:
		return charmap.Windows1256
	case 1257:
		return charmap.Windows1257
	case 1258:
		return charmap.Windows1258
	case 932:
		return japanese.ShiftJIS
	case 936:
		return simplifiedchinese.GBK
	case 949:
		return korean.EUCKR
	case 950:
		return traditionalchinese.Big5
	}
	return nil
}

// sbcsTable is a single-byte code page as UTF-8: entry b holds the UTF-8
// encoding of byte b (1 to 3 bytes; undefined bytes decode to U+FFFD).
type sbcsTable [256]struct {
	b [3]byte
	n uint8
}

var (
	sbcsMu     sync.Mutex
	sbcsTables = map[int]*sbcsTable{}
)

// sbcsFor returns the table of a single-byte code page, built once.
func sbcsFor(cp int, cm *charmap.Charmap) *sbcsTable {
	sbcsMu.Lock()
	defer sbcsMu.Unlock()
	if t := sbcsTables[cp]; t != nil {
		return t
	}
	t := new(sbcsTable)
	for i := 0; i < 256; i++ {
		r := cm.DecodeByte(byte(i))
		var b [4]byte
		n := utf8.EncodeRune(b[:], r)
		if n > 3 { // cannot happen for the BMP tables of x/text
			n = utf8.EncodeRune(b[:], utf8.RuneError)
		}
		copy(t[i].b[:], b[:n])
		t[i].n = uint8(n)
	}
	sbcsTables[cp] = t
	return t
}

// Text decoder kinds.
const (
	textUTF8  uint8 = iota // UTF-8 collations, json, Unicode-only locales: validated pass-through
	textSBCS               // single-byte code page: table lookup
	textMBCS               // double-byte code page: x/text transformer
	textUTF16              // nchar/nvarchar/ntext/xml: UTF-16LE
)

// textDecoder turns one column's text bytes into UTF-8, part by part. It is
// made once per column per COLMETADATA and reset per value, so decoding a
// value allocates nothing. Bytes of a character split between parts (PLP
// chunks, streamed parts) are carried over to the next part; at the end of
// the value an incomplete character becomes U+FFFD. Output is always valid
// UTF-8: invalid input becomes U+FFFD.
type textDecoder struct {
	kind   uint8
	ncarry uint8
	carry  [4]byte
	tmp    [8]byte // carried bytes joined with the next part's first bytes
	hi     uint16  // UTF-16: pending high surrogate, 0 if none
	ready  bool    // made by init for coll
	coll   Collation
	sb     *sbcsTable
	mb     transform.Transformer
}

func (d *textDecoder) init(c Collation) {
	if d.ready && d.coll == c {
		d.reset()
		return
	}
	*d = textDecoder{ready: true, coll: c}
	cp := c.CodePage()
	switch enc := CodePageEncoding(cp); e := enc.(type) {
	case nil:
		d.kind = textUTF8
	case *charmap.Charmap:
		d.kind = textSBCS
		d.sb = sbcsFor(cp, e)
	default:
		d.kind = textMBCS
		d.mb = enc.NewDecoder()
	}
}

// reset prepares the decoder for a new value.
func (d *textDecoder) reset() {
	d.ncarry = 0
	d.hi = 0
	if d.mb != nil {
		d.mb.Reset()
	}
}

// maxOut is an upper bound of the UTF-8 bytes that decoding n more input
// bytes (plus any carried bytes) can produce, the final flush included.
func (d *textDecoder) maxOut(n int) int {
	if d.kind == textUTF16 {
		// A code unit gives at most 3 bytes (a pair 4 bytes for 2 units); a
		// carried high surrogate or odd byte flushes as one U+FFFD.
		return (n+1)/2*3 + 3 + 3
	}
	// One input byte gives at most 3 output bytes (U+FFFD or a BMP
	// character from a single byte; double-byte characters give at most 4
	// from 2 bytes). Carried bytes count like input.
	return (n+int(d.ncarry))*3 + 3
}

// decode converts src and writes UTF-8 into dst, which must hold maxOut(len(src))
// bytes. With final set it flushes an incomplete trailing character as U+FFFD.
// It returns the bytes written, m; dst beyond m may have been used as
// scratch (the SIMD UTF-16 path stores 16 bytes at a time).
func (d *textDecoder) decode(dst, src []byte, final bool) int {
	switch d.kind {
	case textSBCS:
		return d.sb.decode(dst, src)
	case textUTF16:
		return d.utf16(dst, src, final)
	case textMBCS:
		return d.decodeMBCS(dst, src, final)
	}
	return d.decodeUTF8(dst, src, final)
}

// exact reports whether src decodes to itself (so it can be copied with an
// exact reservation): ASCII for every code page, valid UTF-8 for UTF-8, when
// no bytes are carried from an earlier part.
func (d *textDecoder) exact(src []byte) bool {
	if d.ncarry != 0 || d.hi != 0 {
		return false
	}
	switch d.kind {
	case textUTF16:
		return false
	case textUTF8:
		return utf8.Valid(src)
	}
	return isASCII(src)
}

// isASCII reports whether every byte of b is below 0x80.
func isASCII(b []byte) bool {
	if len(b) < 8 {
		var acc byte
		for _, c := range b {
			acc |= c
		}
		return acc < 0x80
	}
	// Eight bytes at a time; the last eight bytes (overlapping the loop's)
	// cover the tail with one load instead of a loop whose exit mispredicts
	// as lengths vary.
	acc := binary.LittleEndian.Uint64(b[len(b)-8:])
	for len(b) >= 8 {
		acc |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	return acc&0x8080808080808080 == 0
}

func (t *sbcsTable) decode(dst, src []byte) int {
	n := 0
	for _, c := range src {
		if c < 0x80 {
			dst[n] = c
			n++
			continue
		}
		e := &t[c]
		dst[n] = e.b[0]
		dst[n+1] = e.b[1]
		dst[n+2] = e.b[2]
		n += int(e.n)
	}
	return n
}

// decodeUTF8 copies valid UTF-8 and replaces each invalid byte by U+FFFD
// (utf8.DecodeRune semantics). A sequence cut at the end of a non-final part
// is carried over, so the output does not depend on where parts split.
func (d *textDecoder) decodeUTF8(dst, src []byte, final bool) int {
	n := 0
	for d.ncarry != 0 {
		var tmp [8]byte
		k := copy(tmp[:], d.carry[:d.ncarry])
		take := copy(tmp[k:], src)
		buf := tmp[:k+take]
		if !final && !utf8.FullRune(buf) {
			// Still incomplete, so at most 3 bytes: keep them all.
			d.ncarry = uint8(copy(d.carry[:], buf))
			return n
		}
		r, size := utf8.DecodeRune(buf)
		if r == utf8.RuneError && size <= 1 {
			n += utf8.EncodeRune(dst[n:], utf8.RuneError)
			size = 1
		} else {
			n += copy(dst[n:], buf[:size])
		}
		if size >= k {
			d.ncarry = 0
			src = src[size-k:]
			break
		}
		d.ncarry = uint8(copy(d.carry[:], buf[size:k]))
	}
	for len(src) > 0 {
		// Copy ASCII runs in one go.
		i := 0
		for i < len(src) && src[i] < utf8.RuneSelf {
			i++
		}
		if i > 0 {
			n += copy(dst[n:], src[:i])
			src = src[i:]
			if len(src) == 0 {
				break
			}
		}
		if !final && !utf8.FullRune(src) {
			d.ncarry = uint8(copy(d.carry[:], src))
			return n
		}
		r, size := utf8.DecodeRune(src)
		if r == utf8.RuneError && size <= 1 {
			n += utf8.EncodeRune(dst[n:], utf8.RuneError)
			size = 1
		} else {
			n += copy(dst[n:], src[:size])
		}
		src = src[size:]
	}
	return n
}

// decodeMBCS runs the column's x/text transformer. A lead byte cut at the end
// of a non-final part is carried over and decoded with the next part.
func (d *textDecoder) decodeMBCS(dst, src []byte, final bool) int {
	n := 0
	for d.ncarry != 0 {
		// tmp lives in the decoder: a stack array passed to the
		// transformer (an interface) would escape and allocate.
		tmp := &d.tmp
		k := copy(tmp[:], d.carry[:d.ncarry])
		take := copy(tmp[k:], src)
		nd, ns, _ := d.mb.Transform(dst[n:], tmp[:k+take], final && take == len(src))
		n += nd
		if ns < k {
			if take == len(src) && !final {
				// Not enough bytes yet: keep everything carried.
				d.ncarry = uint8(copy(d.carry[:], tmp[ns:k+take]))
				return n
			}
			if ns == 0 {
				// The transformer refused to progress on what it has even at
				// EOF: replace one byte and go on.
				n += utf8.EncodeRune(dst[n:], utf8.RuneError)
				ns = 1
			}
			d.ncarry = uint8(copy(d.carry[:], tmp[ns:k]))
			continue
		}
		d.ncarry = 0
		src = src[ns-k:]
	}
	for len(src) > 0 {
		nd, ns, err := d.mb.Transform(dst[n:], src, final)
		n += nd
		src = src[ns:]
		if err == nil || len(src) == 0 {
			break
		}
		if err == transform.ErrShortSrc && !final && len(src) <= len(d.carry) {
			d.ncarry = uint8(copy(d.carry[:], src))
			return n
		}
		if ns == 0 && nd == 0 {
			// No progress (malformed input the transformer will not skip):
			// replace one byte.
			n += utf8.EncodeRune(dst[n:], utf8.RuneError)
			src = src[1:]
		}
	}
	return n
}

// simdMinBytes is the shortest UTF-16 value decode hands to
// decodeUTF16Long: below 32 code units the SIMD call costs more than it
// saves (BenchmarkDecodeUTF16/labels).
const simdMinBytes = 64

// utf16 converts UTF-16LE to UTF-8 (decodeUTF16), through decodeUTF16Long
// when src is long enough and the machine has the SIMD block converter.
func (d *textDecoder) utf16(dst, src []byte, final bool) int {
	if len(src) >= simdMinBytes && useSIMDUTF16 {
		return d.decodeUTF16Long(dst, src, final)
	}
	return d.decodeUTF16(dst, src, final)
}

// decodeUTF16Long is decodeUTF16 for long values on machines with the SIMD
// block converter (utf16Blocks), which takes eight code units at a time:
// 4 times faster than one at a time over ASCII, 4 to 15 times over Latin,
// Greek, Cyrillic or CJK text (BenchmarkDecodeUTF16). The block a run
// stops at (one holding a surrogate: emoji, rare CJK) and the next go
// through decodeUTF16; after four such blocks in a row the rest of the
// value does too.
func (d *textDecoder) decodeUTF16Long(dst, src []byte, final bool) int {
	n := 0
	if d.ncarry != 0 {
		u := uint16(d.carry[0]) | uint16(src[0])<<8
		d.ncarry = 0
		src = src[1:]
		n += d.unit(dst[n:], u)
	}
	i := 0
	for fails := 0; fails < 4 && len(src)-i >= 16; {
		if d.hi != 0 {
			// A high surrogate is pending (the scalar chunk ended on
			// one): its partner goes through the scalar decoder, then
			// the blocks resume.
			n += d.decodeUTF16(dst[n:], src[i:i+2], false)
			i += 2
			continue
		}
		c, w := utf16Blocks(dst[n:], src[i:])
		i += c
		n += w
		if c == 0 {
			fails++
		} else {
			fails = 0
		}
		k := min(len(src)-i, 32) &^ 1
		n += d.decodeUTF16(dst[n:], src[i:i+k], false)
		i += k
	}
	return n + d.decodeUTF16(dst[n:], src[i:], final)
}

// decodeUTF16 converts UTF-16LE to UTF-8 one code unit at a time (four at a
// time over ASCII): surrogate pairs combine (also when split between
// parts), lone surrogates and a trailing odd byte become U+FFFD.
func (d *textDecoder) decodeUTF16(dst, src []byte, final bool) int {
	n := 0
	if d.ncarry != 0 && len(src) > 0 {
		u := uint16(d.carry[0]) | uint16(src[0])<<8
		d.ncarry = 0
		src = src[1:]
		n += d.unit(dst[n:], u)
	}
	i := 0
	for i+1 < len(src) {
		if d.hi == 0 {
			// Four ASCII code units at a time.
			for i+8 <= len(src) {
				v := binary.LittleEndian.Uint64(src[i:])
				if v&0xFF80FF80FF80FF80 != 0 {
					break
				}
				// Pack the four low bytes into one store.
				v = (v | v>>8) & 0x0000FFFF0000FFFF
				binary.LittleEndian.PutUint32(dst[n:], uint32(v|v>>16))
				n += 4
				i += 8
			}
			if i+1 >= len(src) {
				break
			}
		}
		u := uint16(src[i]) | uint16(src[i+1])<<8
		i += 2
		if d.hi == 0 {
			switch {
			case u < 0x80:
				dst[n] = byte(u)
				n++
				continue
			case u < 0x800:
				dst[n] = 0xC0 | byte(u>>6)
				dst[n+1] = 0x80 | byte(u)&0x3F
				n += 2
				continue
			case u < 0xD800 || u > 0xDFFF:
				dst[n] = 0xE0 | byte(u>>12)
				dst[n+1] = 0x80 | byte(u>>6)&0x3F
				dst[n+2] = 0x80 | byte(u)&0x3F
				n += 3
				continue
			}
		}
		n += d.unit(dst[n:], u)
	}
	if i < len(src) {
		d.carry[0] = src[i]
		d.ncarry = 1
	}
	if final {
		if d.hi != 0 {
			d.hi = 0
			n += utf8.EncodeRune(dst[n:], utf8.RuneError)
		}
		if d.ncarry != 0 {
			d.ncarry = 0
			n += utf8.EncodeRune(dst[n:], utf8.RuneError)
		}
	}
	return n
}

// unit decodes one UTF-16 code unit with the pending-surrogate state.
func (d *textDecoder) unit(dst []byte, u uint16) int {
	n := 0
	if d.hi != 0 {
		if u >= 0xDC00 && u <= 0xDFFF {
			r := (rune(d.hi)-0xD800)<<10 | (rune(u) - 0xDC00) + 0x10000
			d.hi = 0
			return utf8.EncodeRune(dst, r)
		}
		d.hi = 0
		n = utf8.EncodeRune(dst, utf8.RuneError)
	}
	switch {
	case u < 0x80:
		dst[n] = byte(u)
		return n + 1
	case u < 0x800:
		dst[n] = 0xC0 | byte(u>>6)
		dst[n+1] = 0x80 | byte(u)&0x3F
		return n + 2
	case u >= 0xD800 && u <= 0xDBFF:
		d.hi = u
		return n
	case u >= 0xDC00 && u <= 0xDFFF:
		return n + utf8.EncodeRune(dst[n:], utf8.RuneError)
	}
	dst[n] = 0xE0 | byte(u>>12)
	dst[n+1] = 0x80 | byte(u>>6)&0x3F
	dst[n+2] = 0x80 | byte(u)&0x3F
	return n + 3
}
