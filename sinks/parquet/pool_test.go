package parquet

import "testing"

// TestValuePool checks the pool's sizes: an array comes back only for a
// request it fits without more than doubling it, the smallest that fits
// first, and empty.
func TestValuePool(t *testing.T) {
	for takeValues(valuePoolMin) != nil { // drain what other tests left
	}
	for takeValues(1<<20) != nil {
	}
	small := make([]uint64, 5, valuePoolMin-1)
	giveValues(small) // too small to keep
	if takeValues(valuePoolMin-1) != nil {
		t.Fatal("an array under valuePoolMin was kept")
	}
	a := make([]uint64, 7, 3*valuePoolMin)
	b := make([]uint64, 9, 2*valuePoolMin)
	giveValues(a)
	if x := takeValues(valuePoolMin); x != nil {
		t.Fatalf("got an array of %d for %d: more than twice the request", cap(x), valuePoolMin)
	}
	giveValues(b)
	x := takeValues(2*valuePoolMin - 10)
	if cap(x) != 2*valuePoolMin || len(x) != 0 {
		t.Fatalf("got len %d cap %d, want the smallest fit, empty", len(x), cap(x))
	}
	if y := takeValues(3 * valuePoolMin); cap(y) != 3*valuePoolMin {
		t.Fatalf("got cap %d, want %d", cap(y), 3*valuePoolMin)
	}
	if takeValues(valuePoolMin) != nil {
		t.Fatal("the pool gave out an array twice")
	}
}
