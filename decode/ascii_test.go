package decode

import "testing"

// isASCII checks every byte, whatever the length and wherever the first
// non-ASCII byte is (the tail is covered by an overlapping load).
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		if !isASCII(b) {
			t.Fatalf("len %d: ASCII reported as not", n)
		}
		for i := range b {
			for _, c := range []byte{0x80, 0xC3, 0xFF} {
				old := b[i]
				b[i] = c
				if isASCII(b) {
					t.Fatalf("len %d: byte %#x at %d not seen", n, c, i)
				}
				b[i] = old
			}
		}
	}
}
