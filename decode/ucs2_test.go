package decode

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestWireUTF16(t *testing.T) {
	cases := []struct {
		s   string
		hex string
	}{
		{"", ""},
		{"A", "41 00"},
		{"é€", "E9 00 AC 20"},
		{"𝄞", "34 D8 1E DD"}, // U+1D11E as a surrogate pair
		{"a\x00b", "61 00 00 00 62 00"},
	}
	for _, c := range cases {
		want := wireHexBytes(t, c.hex)
		if got := AppendUTF16LE(nil, c.s); !bytes.Equal(got, want) {
			t.Errorf("%q: % x", c.s, got)
		}
		if got := AppendUTF16(nil, c.s); !bytes.Equal(got, want) {
			t.Errorf("AppendUTF16 %q: % x", c.s, got)
		}
		if got, err := DecodeUTF16LE(want); err != nil || got != c.s {
			t.Errorf("decode % x: %q %v", want, got, err)
		}
		if n := UTF16Len(c.s); n != len(want)/2 {
			t.Errorf("UTF16Len(%q) = %d", c.s, n)
		}
	}
	// Lone and reversed surrogates decode to U+FFFD; output is valid UTF-8.
	for _, h := range []string{"34 D8", "1E DD", "1E DD 34 D8", "34 D8 41 00"} {
		got, err := DecodeUTF16LE(wireHexBytes(t, h))
		if err != nil || !utf8.ValidString(got) || !bytes.ContainsRune([]byte(got), utf8.RuneError) {
			t.Errorf("% s: %q %v", h, got, err)
		}
	}
	if _, err := DecodeUTF16LE([]byte{0x41}); err == nil {
		t.Error("odd length accepted")
	}
	// Invalid UTF-8 input encodes as U+FFFD.
	if got := AppendUTF16LE(nil, "a\xffb"); !bytes.Equal(got, []byte{0x61, 0, 0xFD, 0xFF, 0x62, 0}) {
		t.Errorf("invalid UTF-8: % x", got)
	}
	// Agreement with unicode/utf16 over all planes.
	var rs []rune
	for r := rune(0); r < 0x110000; r += 0x3F1 {
		if r < 0xD800 || r >= 0xE000 {
			rs = append(rs, r)
		}
	}
	s := string(rs)
	enc := AppendUTF16LE(nil, s)
	u := utf16.Encode(rs)
	if len(enc) != 2*len(u) {
		t.Fatalf("length %d vs %d", len(enc), 2*len(u))
	}
	for i, v := range u {
		if enc[2*i] != byte(v) || enc[2*i+1] != byte(v>>8) {
			t.Fatalf("unit %d differs", i)
		}
	}
	if got, _ := DecodeUTF16LE(enc); got != s {
		t.Fatal("round trip over all planes differs")
	}
}

func TestWireTruncUTF16(t *testing.T) {
	if got := TruncateUTF16("ab𝄞c", 3); got != "ab" {
		t.Fatalf("%q: surrogate pair split", got)
	}
	if got := TruncateUTF16("ab𝄞c", 4); got != "ab𝄞" {
		t.Fatalf("%q", got)
	}
	b := appendBVarChar(nil, string(bytes.Repeat([]byte("x"), 300)))
	if b[0] != 255 || len(b) != 1+510 {
		t.Fatalf("B_VARCHAR of 300 chars: len byte %d, %d bytes", b[0], len(b))
	}
}

func TestWireUTF16NoAllocAppend(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendUTF16LE(buf[:0], "héllo 𝄞") }); n != 0 {
		t.Fatalf("AppendUTF16LE allocates %v", n)
	}
}

// TestDecodeUTF16Blocks checks the block decoder against unicode/utf16 on
// random mixes of every class of code unit (ASCII, 2- and 3-byte, high and
// low surrogates, pairs), at every offset within a block, whole and cut
// into parts at any byte (odd cuts included), and every BMP unit in each
// lane of a block and in the tail.
func TestDecodeUTF16Blocks(t *testing.T) {
	ref := utf16Ref
	decodeParts := func(b []byte, cuts ...int) string {
		td := &textDecoder{kind: textUTF16}
		var out []byte
		prev := 0
		for k, c := range append(cuts, len(b)) {
			part := b[prev:c]
			prev = c
			dst := make([]byte, td.maxOut(len(part)))
			n := td.decode(dst, part, k == len(cuts))
			out = append(out, dst[:n]...)
		}
		return string(out)
	}
	classes := []func(r *rand.Rand) uint16{
		func(r *rand.Rand) uint16 { return uint16(r.Intn(0x80)) },
		func(r *rand.Rand) uint16 { return uint16(0x80 + r.Intn(0x800-0x80)) },
		func(r *rand.Rand) uint16 { return uint16(0x800 + r.Intn(0xD800-0x800)) },
		func(r *rand.Rand) uint16 { return uint16(0xE000 + r.Intn(0x2000)) },
		func(r *rand.Rand) uint16 { return uint16(0xD800 + r.Intn(0x400)) }, // high
		func(r *rand.Rand) uint16 { return uint16(0xDC00 + r.Intn(0x400)) }, // low
	}
	r := rand.New(rand.NewSource(7))
	for iter := 0; iter < 40000; iter++ {
		n := r.Intn(41)
		// Half the strings mostly mix ASCII and 2-byte characters, as
		// European text does, so whole SIMD blocks occur; the others
		// mix every class.
		pick := func() int { return r.Intn(len(classes)) }
		if iter%2 == 0 {
			n = r.Intn(90)
			pick = func() int {
				if r.Intn(30) == 0 {
					return r.Intn(len(classes))
				}
				return r.Intn(2)
			}
		}
		var b []byte
		for range n {
			var u uint16
			if iter%2 == 1 && r.Intn(8) == 0 {
				// A well-formed pair.
				hi, lo := classes[4](r), classes[5](r)
				b = append(b, byte(hi), byte(hi>>8), byte(lo), byte(lo>>8))
				continue
			}
			u = classes[pick()](r)
			b = append(b, byte(u), byte(u>>8))
		}
		if r.Intn(6) == 0 {
			b = append(b, byte(r.Intn(256)))
		}
		want := ref(b)
		if got := decodeParts(b); got != want {
			t.Fatalf("% x: %q, want %q", b, got, want)
		}
		if len(b) > 0 {
			c1 := r.Intn(len(b) + 1)
			c2 := c1 + r.Intn(len(b)-c1+1)
			if got := decodeParts(b, c1, c2); got != want {
				t.Fatalf("% x cut at %d,%d: %q, want %q", b, c1, c2, got, want)
			}
		}
	}
	// Every BMP unit in each lane of a block of ASCII, and in the tail.
	for u := 0; u < 0x10000; u++ {
		for lane := range 6 {
			b := []byte("a\x00b\x00c\x00d\x00e\x00f\x00")
			b[2*lane], b[2*lane+1] = byte(u), byte(u>>8)
			if got, want := decodeParts(b), ref(b); got != want {
				t.Fatalf("U+%04X in lane %d: %q, want %q", u, lane, got, want)
			}
		}
	}
}

// TestUTF16Blocks checks the SIMD block converter on its own: it converts
// exactly the leading whole blocks without surrogates, gives the same bytes
// as unicode/utf16, and never writes past its destination.
func TestUTF16Blocks(t *testing.T) {
	if !useSIMDUTF16 {
		t.Skip("no SIMD block converter on this machine")
	}
	r := rand.New(rand.NewSource(11))
	for iter := 0; iter < 60000; iter++ {
		n := r.Intn(70)
		// Mostly ASCII and 2-byte units; a third of the strings also
		// 3-byte ones, and now and then a surrogate or an edge value.
		wide := iter%3 == 0
		src := make([]byte, 0, 2*n)
		for range n {
			var u uint16
			switch k := r.Intn(40); {
			case k < 16:
				u = uint16(r.Intn(0x80))
			case k < 30 || !wide && k < 38:
				u = uint16(0x80 + r.Intn(0x800-0x80))
			case k < 38:
				u = uint16(0x800 + r.Intn(0xD800-0x800))
			case k < 39:
				u = uint16(0xD800 + r.Intn(0x2800))
			default:
				u = uint16([]int{0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFF, 0}[r.Intn(12)])
			}
			src = append(src, byte(u), byte(u>>8))
		}
		dl := r.Intn(3*n + 8)
		if r.Intn(2) == 0 {
			dl = 3*n + 6
		}
		buf := make([]byte, dl+32)
		for i := range buf {
			buf[i] = 0xEE
		}
		c, w := utf16Blocks(buf[:dl], src)
		for i := dl; i < len(buf); i++ {
			if buf[i] != 0xEE {
				t.Fatalf("% x (dst %d): wrote past the destination at %d", src, dl, i)
			}
		}
		if c%16 != 0 || c > len(src) {
			t.Fatalf("% x: consumed %d bytes", src, c)
		}
		for i := 0; i < c; i += 2 {
			if u := uint16(src[i]) | uint16(src[i+1])<<8; u&0xF800 == 0xD800 {
				t.Fatalf("% x: converted the surrogate %04X", src, u)
			}
		}
		if got, want := string(buf[:w]), utf16Ref(src[:c]); got != want {
			t.Fatalf("% x: %q, want %q", src, got, want)
		}
		// It stops only for a lack of units or room, or at a block with a
		// surrogate.
		if units := min(len(src)/2, (dl-4)/3); c/2+8 <= units {
			stop := false
			for i := c; i < c+16; i += 2 {
				stop = stop || (uint16(src[i])|uint16(src[i+1])<<8)&0xF800 == 0xD800
			}
			if !stop {
				t.Fatalf("% x (dst %d): stopped at %d", src, dl, c)
			}
		}
	}
}

// BenchmarkDecodeUTF16 converts UTF-16LE text to UTF-8 through the cell
// path's decoder: short mixed-script labels (16,384 of them, too many for
// the branch predictor to learn) and 64 documents of 2,048 code units in
// one script each.
//
//	go test ./decode -run '^$' -bench DecodeUTF16 -benchtime 200x
func BenchmarkDecodeUTF16(b *testing.B) {
	enc := func(s string) []byte { return AppendUTF16LE(nil, s) }
	words := []string{"carefully", "final", "deposits", "detect", "slyly", "regular", "accounts", "pending",
		"requests", "ironic", "packages", "express", "quickly", "bold", "foxes", "even", "special"}
	scripts := []string{"naïve café", "Straße", "Ελληνικά", "Привет, мир", "日本語テキスト", "中文字符", "한국어",
		"עברית", "العربية", "emoji 😀🚀", "Ünïcödé", "Ñandú", "Œuvre €5", "ﬁligree", "𝄞 music"}
	r := rand.New(rand.NewSource(3))
	var labels [][]byte
	for range 1 << 14 {
		s := words[r.Intn(len(words))] + " " + scripts[r.Intn(len(scripts))]
		if r.Intn(4) == 0 {
			s = scripts[r.Intn(len(scripts))]
		}
		labels = append(labels, enc(s))
	}
	doc := func(alphabet []rune) [][]byte {
		var docs [][]byte
		for range 64 {
			var s []rune
			for len(s) < 2048 {
				for range 3 + r.Intn(8) {
					s = append(s, alphabet[r.Intn(len(alphabet))])
				}
				s = append(s, []rune(" , . ")[r.Intn(5)])
			}
			docs = append(docs, enc(string(s[:2048])))
		}
		return docs
	}
	span := func(lo, hi rune) []rune {
		var a []rune
		for c := lo; c <= hi; c++ {
			a = append(a, c)
		}
		return a
	}
	sets := []struct {
		name string
		vals [][]byte
	}{
		{"labels", labels},
		{"ascii-doc", doc(span('a', 'z'))},
		{"latin1-doc", doc(append(span('a', 'z'), []rune("éèàçüöäß")...))},
		{"cyrillic-doc", doc(span('а', 'я'))},
		{"cjk-doc", doc(span('一', '丿'))},
		// An emoji (a surrogate pair) every 200 characters or so.
		{"emoji-doc", doc(append([]rune(strings.Repeat(string(span('a', 'z')), 8)), '😀'))},
	}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			td := &textDecoder{kind: textUTF16}
			var dst []byte
			total := 0
			for _, v := range set.vals {
				total += len(v)
			}
			b.SetBytes(int64(total))
			for b.Loop() {
				for _, v := range set.vals {
					if n := td.maxOut(len(v)); cap(dst) < n {
						dst = make([]byte, n)
					}
					td.decode(dst[:td.maxOut(len(v))], v, true)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(total/2), "ns/unit")
		})
	}
}

// FuzzDecodeUTF16 holds the UTF-16 decoder (SIMD blocks for long values
// included) to unicode/utf16 on any bytes, whole and cut into two parts at
// any byte.
func FuzzDecodeUTF16(f *testing.F) {
	for _, s := range []string{"", "naïve café Привет, мир 日本語 😀", strings.Repeat("Ελληνικά and ASCII ", 9), strings.Repeat("中文字符", 20)} {
		f.Add(AppendUTF16LE(nil, s), uint16(len(s)/3))
	}
	f.Add([]byte{0x00, 0xD8, 0x41}, uint16(1))
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		want := utf16Ref(b)
		c := int(cut) % (len(b) + 1)
		td := &textDecoder{kind: textUTF16}
		var out []byte
		for k, part := range [][]byte{b[:c], b[c:]} {
			dst := make([]byte, td.maxOut(len(part)))
			out = append(out, dst[:td.decode(dst, part, k == 1)]...)
		}
		if string(out) != want {
			t.Fatalf("% x cut at %d: %q, want %q", b, c, out, want)
		}
	})
}

// utf16Ref is what decoding UTF-16LE b must give: unicode/utf16's reading
// (a lone surrogate is U+FFFD) and U+FFFD for a trailing odd byte.
func utf16Ref(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	s := string(utf16.Decode(u))
	if len(b)%2 == 1 {
		s += "\uFFFD"
	}
	return s
}

// DecodeUTF16LE decodes names and other token strings: its decoder state
// and buffer must stay on the stack whichever path (scalar or SIMD) the
// text takes, leaving only the string itself.
func TestDecodeUTF16LEAllocs(t *testing.T) {
	for _, s := range []string{"c001_int", strings.Repeat("Привет, мир ", 6)} {
		b := AppendUTF16LE(nil, s)
		if len(b) > 160 {
			t.Fatalf("%d bytes: no longer fits the stack buffer", len(b))
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = DecodeUTF16LE(b) }); n > 1 {
			t.Errorf("%d bytes: %v allocations, want 1 (the string)", len(b), n)
		}
	}
}

// TestDecodeUTF16EveryLaneLong puts every BMP code unit in every lane of a
// block of a value long enough for the SIMD path, among ASCII, Greek and
// CJK neighbours in turn.
func TestDecodeUTF16EveryLaneLong(t *testing.T) {
	fills := []uint16{'a', 0x3A9, 0x4E2D}
	td := &textDecoder{kind: textUTF16}
	b := make([]byte, 2*40)
	dst := make([]byte, td.maxOut(len(b)))
	for u := 0; u < 0x10000; u++ {
		fill := fills[u%3]
		for i := 0; i < len(b); i += 2 {
			b[i], b[i+1] = byte(fill), byte(fill>>8)
		}
		lane := 8 + u%8 // the second block
		b[2*lane], b[2*lane+1] = byte(u), byte(u>>8)
		if got, want := string(dst[:td.decode(dst, b, true)]), utf16Ref(b); got != want {
			t.Fatalf("U+%04X in lane %d among U+%04X: %q, want %q", u, lane-8, fill, got, want)
		}
	}
}

// UTF16ToUTF8 (the UTF16Sink converter) must agree with utf16Ref on every
// length its short ASCII paths cover and around them, with each kind of
// code unit (ASCII, 2-byte, 3-byte, surrogates, 0x80 and 0x7F at the
// edges of the ASCII test) in every position, odd lengths included.
func TestUTF16ToUTF8(t *testing.T) {
	units := []uint16{'a', 0x7F, 0x80, 0xFF, 0x100, 0x3A9, 0x7FF, 0x800, 0x4E2D, 0xD83D, 0xDE00, 0xFFFF}
	for n := 0; n <= 41; n++ {
		for pos := 0; pos < max(n, 1); pos++ {
			for _, u := range units {
				b := make([]byte, n)
				for i := 0; i+1 < n; i += 2 {
					b[i] = 'A' + byte(i/2%26)
				}
				if pos+1 < n && pos%2 == 0 {
					b[pos], b[pos+1] = byte(u), byte(u>>8)
				} else if pos < n {
					b[pos] = byte(u) // a byte out of step: odd lengths, high bytes
				}
				dst := make([]byte, MaxUTF16ToUTF8(n))
				got := string(dst[:UTF16ToUTF8(dst, b)])
				if want := utf16Ref(b); got != want {
					t.Fatalf("% x: %q, want %q", b, got, want)
				}
			}
		}
	}
}

// FuzzUTF16ToUTF8 holds UTF16ToUTF8 to utf16Ref on any bytes, in a
// destination of exactly MaxUTF16ToUTF8 bytes.
func FuzzUTF16ToUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "new", "shipped", "Springfield", "delivered!!!!!!!", "café", "😀", strings.Repeat("Привет", 9)} {
		f.Add(AppendUTF16LE(nil, s))
	}
	f.Add([]byte{0x00, 0xD8, 0x41})
	f.Add([]byte{'a', 0, 'b', 0, 'c', 0, 'd', 0, 'e'})
	f.Fuzz(func(t *testing.T, b []byte) {
		dst := make([]byte, MaxUTF16ToUTF8(len(b)))
		if got, want := string(dst[:UTF16ToUTF8(dst, b)]), utf16Ref(b); got != want {
			t.Fatalf("% x: %q, want %q", b, got, want)
		}
	})
}
