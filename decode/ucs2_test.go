package decode

import (
	"bytes"
	"math/rand"
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
	if got := truncUTF16("ab𝄞c", 3); got != "ab" {
		t.Fatalf("%q: surrogate pair split", got)
	}
	if got := truncUTF16("ab𝄞c", 4); got != "ab𝄞" {
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
	ref := func(b []byte) string {
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
	decodeParts := func(b []byte, cuts ...int) string {
		td := &textDecoder{kind: textUTF16}
		var out []byte
		prev := 0
		for k, c := range append(cuts, len(b)) {
			part := b[prev:c]
			prev = c
			dst := make([]byte, td.maxOut(len(part)))
			n := td.decodeUTF16(dst, part, k == len(cuts))
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
	for iter := 0; iter < 20000; iter++ {
		n := r.Intn(41)
		var b []byte
		for range n {
			var u uint16
			if r.Intn(8) == 0 {
				// A well-formed pair.
				hi, lo := classes[4](r), classes[5](r)
				b = append(b, byte(hi), byte(hi>>8), byte(lo), byte(lo>>8))
				continue
			}
			// Runs of one class, as real text has.
			u = classes[r.Intn(len(classes))](r)
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
