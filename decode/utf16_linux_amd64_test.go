package decode

import (
	"math/rand"
	"syscall"
	"testing"
)

// TestUTF16BlocksGuardPage runs the SIMD block converter with its source
// and destination each ending at an inaccessible page, over every source
// length to 200 bytes and every destination length up to three bytes a
// unit and more: a read or write one byte too far faults. The text is the
// widest (U+FFFF: three bytes a unit), the narrowest (ASCII), the widest
// 2-byte character and a random mix.
func TestUTF16BlocksGuardPage(t *testing.T) {
	ps := syscall.Getpagesize()
	m, err := syscall.Mmap(-1, 0, 4*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(m)
	if err := syscall.Mprotect(m[ps:2*ps], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(m[3*ps:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	for _, unit := range []func() uint16{
		func() uint16 { return 0xFFFF },
		func() uint16 { return 'a' },
		func() uint16 { return 0x7FF },
		func() uint16 { return uint16([]int{'a', 0x3A9, 0x4E2D}[r.Intn(3)]) },
	} {
		for sl := 0; sl <= 200; sl++ {
			src := m[ps-sl : ps : ps]
			for i := 0; i+1 < sl; i += 2 {
				u := unit()
				src[i], src[i+1] = byte(u), byte(u>>8)
			}
			if sl%2 == 1 {
				src[sl-1] = 0xFF
			}
			for dl := 0; dl <= 3*(sl/2)+40; dl++ {
				dst := m[3*ps-dl : 3*ps : 3*ps]
				c, w := utf16Blocks(dst, src)
				if got, want := string(dst[:w]), utf16Ref(src[:c]); got != want || c%16 != 0 {
					t.Fatalf("src %d dst %d: consumed %d, %q, want %q", sl, dl, c, got, want)
				}
			}
		}
	}
}
