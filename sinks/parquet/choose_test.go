package parquet

import "testing"

// The trials sample sampleValues rows of a narrow table, fewer of a wide
// one (about sampleBytes in all, never fewer than sampleMinRows), and the
// ranges of a batch bigger than the sample spread over it in blocks.
func TestSampleLimit(t *testing.T) {
	fixed := func(n int) []colBuf { return make([]colBuf, n) } // kind 0: fixed-width
	str := func(rows, width int) colBuf {
		c := colBuf{}
		c.kind = kString
		for r := 1; r <= rows; r++ {
			c.off = append(c.off, r*width)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		cols []colBuf
		rows int
		want int
	}{
		{"six integers", fixed(6), 20000, sampleValues},
		{"64 integers, 512 bytes a row", fixed(64), 20000, sampleValues},
		{"300 integers", fixed(300), 6000, sampleBytes / (300 * 8)},
		{"601 integers", fixed(601), 6000, sampleMinRows},
		{"2 KB strings", append(fixed(2), str(6000, 2048)), 6000, sampleBytes / (16 + 2048)},
		{"64 KB values", []colBuf{str(3000, 64<<10)}, 3000, sampleMinRows},
		{"no rows yet", fixed(601), 0, sampleValues},
	} {
		if got := sampleLimit(tc.cols, tc.rows); got != tc.want {
			t.Errorf("%s: sample of %d rows, want %d", tc.name, got, tc.want)
		}
	}
	if r := sampleRows(5000, 8192); len(r) != 1 || r[0] != [2]int{0, 5000} {
		t.Errorf("a batch smaller than the sample: %v", r)
	}
	r := sampleRows(5000, 800)
	n := 0
	for _, rg := range r {
		n += rg[1] - rg[0]
		if rg[1] > 5000 {
			t.Errorf("range %v beyond the batch", rg)
		}
	}
	if len(r) != sampleBlocks || n != 800 || r[len(r)-1][0] < 4000 {
		t.Errorf("800 of 5000 rows: %v", r)
	}
}
