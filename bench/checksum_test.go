package main

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// The checksum must see every value and its position: changing one value,
// swapping two, a NULL for a value or a float for an int changes it.
func TestChecksumSensitivity(t *testing.T) {
	base := func(mut func(i int, s *sum)) uint64 {
		var s sum
		for r := range 3 {
			for i := range 6 {
				if mut != nil {
					mut(r*6+i, &s)
					continue
				}
				s.int(int64(r*6 + i))
			}
			s.row()
		}
		return s.total
	}
	ref := base(nil)
	for name, mut := range map[string]func(int, *sum){
		"one value": func(i int, s *sum) { s.int(int64(i) + int64(b2i(i == 7))) },
		"swap": func(i int, s *sum) {
			switch i {
			case 3:
				i = 4
			case 4:
				i = 3
			}
			s.int(int64(i))
		},
		"null":        func(i int, s *sum) { ifElse(i == 5, s.null, func() { s.int(int64(i)) })() },
		"float for 0": func(i int, s *sum) { ifElse(i == 0, func() { s.float(0) }, func() { s.int(int64(i)) })() },
	} {
		if got := base(mut); got == ref {
			t.Errorf("%s: checksum unchanged (%x)", name, got)
		}
	}
	// Byte strings: every length up to 17 and every single-bit change
	// hash differently.
	seen := map[uint64]string{}
	p := []byte("abcdefghijklmnopq")
	for n := 0; n <= len(p); n++ {
		for bit := -1; bit < 8*n; bit++ {
			q := append([]byte(nil), p[:n]...)
			if bit >= 0 {
				q[bit/8] ^= 1 << (bit % 8)
			}
			var s sum
			s.bytes(0x04, q)
			s.row()
			if prev, dup := seen[s.total]; dup {
				t.Fatalf("%q and %q hash the same", prev, q)
			}
			seen[s.total] = string(q)
			var u sum
			u.str(0x04, string(q))
			u.row()
			if u.total != s.total {
				t.Fatalf("str and bytes disagree for %q", q)
			}
			// sumSink.Bytes on a view with spare capacity (its short-value
			// load reads past the length) hashes the same.
			view := append(append([]byte(nil), q...), "garbage!"...)[:len(q)]
			k := sumSink{kind: []byte{0x04}}
			k.Bytes(0, view)
			k.row()
			if k.total != s.total {
				t.Fatalf("sumSink.Bytes and bytes disagree for %q", q)
			}
		}
	}
}

func ifElse(c bool, a, b func()) func() {
	if c {
		return a
	}
	return b
}

// The tdsextract leg hashes decimals and money from their binary form; it
// must give what the go-mssqldb leg gets from their text (decimalText).
func TestChecksumDecimalForms(t *testing.T) {
	texts := []struct {
		s          string
		prec, scal uint8
	}{
		{"0", 18, 0}, {"0.00", 15, 2}, {"-0.00", 15, 2}, {"100", 18, 0}, {"1.00", 15, 2}, {"0.50", 15, 2},
		{"-12.3400", 19, 4}, {"1234567.89", 15, 2}, {"-999999999999999999.0000000000", 38, 10},
		{"12345678901234567890.1234567890", 38, 10}, {"-0.0000000010", 38, 10}, {"18446744073709551615.0", 38, 1},
		// A magnitude that needs all 64 bits of Lo with Hi zero, so the
		// binary path takes it: 18446744073709551615 at scale 1, and a
		// trailing zero to divide away from 2^64 - 6.
		{"1844674407370955161.5", 20, 1}, {"-184467440737095516.10", 20, 2},
	}
	for _, c := range texts {
		v, err := decode.DecimalFromString(c.s, c.prec, c.scal)
		if err != nil {
			t.Fatal(c.s, err)
		}
		var a, b sumSink
		a.Decimal(0, v)
		b.decimalText(decode.AppendDecimalText(nil, v))
		if a.h != b.h {
			t.Errorf("decimal %s: binary form hashes differently from its text", c.s)
		}
	}
	for _, m := range []int64{0, 1, -1, 10000, -10000, 12345, -922337203685477_5808, 922337203685477_5807, 1_0000_0000} {
		var a, b sumSink
		a.Money(0, m)
		b.decimalText(decode.AppendMoneyText(nil, m))
		if a.h != b.h {
			t.Errorf("money %d: binary form hashes differently from its text", m)
		}
	}
}
