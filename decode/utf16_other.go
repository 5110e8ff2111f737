//go:build !amd64

package decode

// useSIMDUTF16 and utf16Blocks are the SIMD block converter of
// utf16_amd64.go; elsewhere every unit goes through the scalar decoder.
const useSIMDUTF16 = false

func utf16Blocks(dst, src []byte) (int, int) { return 0, 0 }
