package decode

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// useSIMDUTF16 enables utf16Block8 (PSHUFB is SSSE3; every x86-64 CPU
// since 2006 has it, but GOAMD64=v1 does not promise it).
var useSIMDUTF16 = cpu.X86.HasSSSE3

// u16Shuf[m] compresses eight UTF-16 lanes, each holding a 1-byte (ASCII,
// bit k of m set) or 2-byte UTF-8 sequence, into consecutive bytes;
// u16Len[m] is how many bytes that gives.
var (
	u16Shuf [256][16]byte
	u16Len  [256]uint8
)

func init() {
	for m := range 256 {
		k := 0
		for lane := range 8 {
			u16Shuf[m][k] = byte(2 * lane)
			k++
			if m&(1<<lane) == 0 {
				u16Shuf[m][k] = byte(2*lane + 1)
				k++
			}
		}
		for ; k < 16; k++ {
			u16Shuf[m][k] = 0x80 // PSHUFB writes zero
		}
		u16Len[m] = uint8(16 - bits.OnesCount8(uint8(m)))
	}
}

// utf16Block8 converts blocks of eight UTF-16LE code units below U+0800 to
// UTF-8 with SSE: a block of ASCII is packed, any other block is encoded
// lane by lane as 1 or 2 bytes and compressed with one shuffle. It stops
// at the first block holding a unit at or above U+0800 (3-byte characters,
// surrogates) or when fewer than eight units are left, and returns the
// units consumed and bytes written. A block stores 16 bytes at dst+written.
//
//go:noescape
func utf16Block8(dst, src *byte, units int, shuf *[256][16]byte, lens *[256]uint8) (consumed, written int)

// utf16Blocks converts as much of src from its start as utf16Block8 can
// and returns the source and destination bytes it used (0, 0 when none).
func utf16Blocks(dst, src []byte) (int, int) {
	if !useSIMDUTF16 {
		return 0, 0
	}
	// A block starts at dst[w] with w at most two bytes per unit consumed
	// before it, and stores 16 bytes: units <= len(dst)/2 keeps every
	// store inside dst.
	units := min(len(src)/2, len(dst)/2)
	if units < 8 {
		return 0, 0
	}
	c, w := utf16Block8(&dst[0], &src[0], units, &u16Shuf, &u16Len)
	return 2 * c, w
}
