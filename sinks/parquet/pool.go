package parquet

import "sync"

// valuePool keeps the fixed-width value arrays of the batches of sinks
// that have published, for the sinks that come after them in the process
// (the next extract of a run). A batch's columns grow to their row group
// size once per sink; without the pool every extract allocated them
// afresh, which the runtime zeroes first (about 10 MB for 200,000 rows of
// sales.order_lines, on the decoder's goroutine) and the collector then
// traces and frees. At most valuePoolBytes (one default row group) are
// kept; arrays under valuePoolMin values are not worth the bookkeeping.
var valuePool struct {
	sync.Mutex
	free  [][]uint64
	bytes int
}

const (
	valuePoolBytes = DefaultRowGroupBytes
	valuePoolMin   = 1 << 14
)

// takeValues returns an empty array with room for want values, from the
// pool when it holds one no more than twice that size, else nil.
func takeValues(want int) []uint64 {
	if want < valuePoolMin {
		return nil
	}
	valuePool.Lock()
	defer valuePool.Unlock()
	best := -1
	for i, x := range valuePool.free {
		if c := cap(x); c >= want && c <= 2*want && (best < 0 || c < cap(valuePool.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	x := valuePool.free[best]
	last := len(valuePool.free) - 1
	valuePool.free[best] = valuePool.free[last]
	valuePool.free[last] = nil
	valuePool.free = valuePool.free[:last]
	valuePool.bytes -= 8 * cap(x)
	return x[:0]
}

// giveValues returns an array nothing references any more to the pool.
func giveValues(x []uint64) {
	if cap(x) < valuePoolMin {
		return
	}
	valuePool.Lock()
	defer valuePool.Unlock()
	if valuePool.bytes+8*cap(x) > valuePoolBytes {
		return
	}
	valuePool.free = append(valuePool.free, x[:0])
	valuePool.bytes += 8 * cap(x)
}

// growValues is growTo for a column's value array, taking the new array
// from the pool when it can.
func growValues(x []uint64, want int) []uint64 {
	n := takeValues(want)
	if n == nil {
		return growTo(x, want)
	}
	n = n[:len(x)]
	copy(n, x)
	return n
}

// releaseValues gives the value arrays of the sink's idle batches to the
// pool, once it has published: no encoding job or trial still reads them
// (finishFile waited for every job, and the first file's opening for the
// trials).
func (s *Sink) releaseValues() {
	for _, b := range append(s.free, s.fill) {
		if b == nil || b.streaming {
			continue
		}
		for i := range b.cols {
			giveValues(b.cols[i].u64)
			b.cols[i].u64 = nil
		}
	}
}
