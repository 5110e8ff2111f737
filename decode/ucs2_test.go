package decode

import (
	"bytes"
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
