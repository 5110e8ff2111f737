package decode

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// useSIMDUTF16 enables utf16Block8: PSHUFB is SSSE3, which GOAMD64=v1 does
// not promise (AMD chips before 2011, K8 and K10, lack it).
var useSIMDUTF16 = cpu.X86.HasSSSE3

// u16Tab holds utf16Block8's shuffles. shuf2[m] compresses eight 16-bit
// lanes, each a 1-byte (ASCII, bit k of m set) or 2-byte UTF-8 sequence,
// into consecutive bytes; shuf3[m] compresses four 32-bit lanes of 1 to 3
// bytes, lane k's length being 1 + bit k + bit k+4 of m. len2 and len3 are
// the byte counts. utf16_amd64.s addresses the fields by offset.
type u16Tables struct {
	shuf2 [256][16]byte // offset 0
	len2  [256]uint8    // offset 4096
	shuf3 [256][16]byte // offset 4352
	len3  [256]uint8    // offset 8448
}

// u16Tab is built by its initializer, not by init, so that package-level
// variables that decode text can never see it empty.
var u16Tab = makeU16Tables()

func makeU16Tables() (t u16Tables) {
	for m := range 256 {
		k := 0
		for lane := range 8 {
			t.shuf2[m][k] = byte(2 * lane)
			k++
			if m&(1<<lane) == 0 {
				t.shuf2[m][k] = byte(2*lane + 1)
				k++
			}
		}
		for ; k < 16; k++ {
			t.shuf2[m][k] = 0x80 // PSHUFB writes zero
		}
		t.len2[m] = uint8(16 - bits.OnesCount8(uint8(m)))

		k = 0
		for lane := range 4 {
			n := 1 + m>>lane&1 + m>>(lane+4)&1
			for b := range n {
				t.shuf3[m][k] = byte(4*lane + b)
				k++
			}
		}
		t.len3[m] = uint8(k)
		for ; k < 16; k++ {
			t.shuf3[m][k] = 0x80
		}
	}
	return t
}

// utf16Block8 converts blocks of eight UTF-16LE code units without
// surrogates to UTF-8 with SSE: a block of ASCII is packed; a block below
// U+0800 is encoded lane by lane as 1 or 2 bytes and compressed with one
// shuffle; any other block is widened to 32-bit lanes four units at a
// time, each encoded as 1, 2 or 3 bytes and compressed likewise. It stops
// at the first block holding a surrogate or when fewer than eight units
// are left, and returns the units consumed and bytes written. It stores 16
// bytes at a time, up to 12 bytes past what it writes.
//
//go:noescape
func utf16Block8(dst, src *byte, units int, tab *u16Tables) (consumed, written int)

// utf16Blocks converts as much of src from its start as utf16Block8 can
// and returns the source and destination bytes it used (0, 0 when none).
func utf16Blocks(dst, src []byte) (int, int) {
	if !useSIMDUTF16 {
		return 0, 0
	}
	// A block starts at dst[w] with w at most three bytes per unit
	// consumed before it, writes at most 24 bytes and stores 16 bytes at
	// most 12 bytes in: units <= (len(dst)-4)/3 keeps every store inside
	// dst.
	units := min(len(src)/2, (len(dst)-4)/3)
	if units < 8 {
		return 0, 0
	}
	c, w := utf16Block8(&dst[0], &src[0], units, &u16Tab)
	return 2 * c, w
}
