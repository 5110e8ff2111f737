package parquet

import (
	"fmt"
	"math"
	"slices"
	"sync"

	pq "github.com/parquet-go/parquet-go"
)

// valueChunk is how many parquet.Values an encoder builds before handing
// them to a column writer (a reused slice: 8192 × 24 bytes).
const valueChunk = 8192

// leaf is one Parquet column of a row group: a source column's values, or
// its companion (datetimeoffset offsets, sql_variant base types).
type leaf struct {
	col  int
	part uint8 // partValue, partOffset, partType
	cost int64 // estimated work: bytes held
}

const (
	partValue uint8 = iota
	partOffset
	partType
)

// scratch is one encoding goroutine's reusable value buffer.
type scratch struct{ vals []pq.Value }

var scratches = sync.Pool{New: func() any { return &scratch{vals: make([]pq.Value, 0, valueChunk)} }}

// Encoding runs in jobs. A job writes rows [from, to) of every leaf of a
// batch into the row group's column writers: the leaves (largest first)
// are shared out to up to threads goroutines, each writing whole leaves
// (values, encoding, compression of the pages that fill). A batch being
// filled is streamed: every chunkBytes of rows, when the previous job has
// finished, the next rows go to a job, so the encoders work while the
// decoder fills the rest of the row group (a job reads a snapshot of the
// columns' slice headers: the decoder only appends past it). The final
// job, at handoff, writes the rest and flushes every leaf's last page, and
// the last goroutine to finish it reports on b.done. Column writers of one
// row group are independent; row groups are committed to the file later,
// in order, by the sink's goroutine.

// startJob encodes rows [b.sent, b.rows) of b. The caller owns b.idle's
// token (no job of b is running).
func (b *batch) startJob(threads int, final bool) {
	b.snapshot(final)
	b.launch(threads)
}

// snapshot takes the rows [b.sent, b.rows) of b for the next job: the
// columns' slice headers as they are now (the decoder only appends past
// them). It runs on the decoder's goroutine; launch may run elsewhere.
func (b *batch) snapshot(final bool) {
	b.snap = append(b.snap[:0], b.cols...)
	b.from, b.to, b.final = int(b.sent), int(b.rows), final
	b.sent = b.rows
}

// launch starts the job of the last snapshot on up to threads goroutines.
func (b *batch) launch(threads int) {
	b.leaves = b.leaves[:0]
	rows := int64(b.to - b.from)
	for i := range b.snap {
		c := &b.snap[i]
		if c.leaf < 0 { // a partition column kept out of the files
			continue
		}
		cost := int64(len(c.arena)) + 8*rows
		b.leaves = append(b.leaves, leaf{col: i, part: partValue, cost: cost})
		if c.offset {
			b.leaves = append(b.leaves, leaf{col: i, part: partOffset, cost: 2 * rows})
		}
		if c.vtype {
			b.leaves = append(b.leaves, leaf{col: i, part: partType, cost: int64(len(c.tarena)) + 8*rows})
		}
	}
	slices.SortStableFunc(b.leaves, func(x, y leaf) int {
		switch {
		case x.cost > y.cost:
			return -1
		case x.cost < y.cost:
			return 1
		}
		return 0
	})
	n := max(1, min(threads, len(b.leaves)))
	b.next.Store(0)
	b.running.Store(int32(n))
	for range n {
		go b.encodeLeaves()
	}
}

// encode starts the final job of a batch that was not streamed (or the
// rest of one that was, sent after waiting for its running job).
func (b *batch) encode(threads int) {
	if b.streaming {
		<-b.idle
	} else {
		b.encErr = nil
	}
	b.streaming = false
	b.startJob(threads, true)
}

func (b *batch) encodeLeaves() {
	sc := scratches.Get().(*scratch)
	var err error
	defer func() {
		// parquet-go reports some invariant violations by panicking; turn
		// them into an error for this run rather than a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet-go: %v", r)
		}
		if err != nil {
			b.errMu.Lock()
			if b.encErr == nil {
				b.encErr = err
			}
			b.errMu.Unlock()
		}
		scratches.Put(sc)
		if b.running.Add(-1) == 0 {
			if b.final {
				clear(b.snap) // drop the references to old column arrays
				b.done <- b.encErr
			} else {
				b.idle <- struct{}{}
			}
		}
	}()
	cws := b.rg.ColumnWriters()
	for {
		j := int(b.next.Add(1)) - 1
		if j >= len(b.leaves) || b.failed() {
			return
		}
		l := b.leaves[j]
		c := &b.snap[l.col]
		name := c.name
		var w *pq.ColumnWriter
		switch l.part {
		case partValue:
			w = cws[c.leaf]
			err = b.writeColumn(sc, c, w)
		case partOffset:
			w, name = cws[c.leaf+1], c.name+"__offset_minutes"
			err = b.writeOffsets(sc, c, w)
		default:
			w, name = cws[c.leaf+1], c.name+"__type"
			err = b.writeTypes(sc, c, w)
		}
		if err == nil && b.final {
			// compress the column's last page here, in parallel, not in
			// the sequential row group flush
			err = w.Flush()
		}
		if err != nil {
			err = fmt.Errorf("column %q: %w", name, err)
			return
		}
	}
}

func (b *batch) failed() bool {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return b.encErr != nil
}

// flush hands the buffered values to the column writer.
func (sc *scratch) flush(w *pq.ColumnWriter) error {
	if len(sc.vals) == 0 {
		return nil
	}
	_, err := w.WriteRowValues(sc.vals)
	clear(sc.vals) // drop the pointers into the batch's arena
	sc.vals = sc.vals[:0]
	return err
}

// chunks writes rows [from, to) to w, up to valueChunk rows at a time:
// fill sets the Values of rows r0, r0+1, ... in vals (whose Values are
// zero on entry: a NULL is left as it is). fill runs once per chunk, so
// the per-value loop is fill's own, with no call or append per value.
func (sc *scratch) chunks(w *pq.ColumnWriter, from, to int, fill func(vals []pq.Value, r0 int)) error {
	for r0 := from; r0 < to; r0 += valueChunk {
		vals := sc.vals[:min(valueChunk, to-r0)]
		fill(vals, r0)
		_, err := w.WriteRowValues(vals)
		clear(vals) // zero for the next chunk, and drop the pointers into the batch's arena
		if err != nil {
			return err
		}
	}
	return nil
}

// writeColumn writes a column's values. The loop is chosen once per
// column by its physical representation and by whether the column is
// optional: a required column's loop has no level check (and sets no
// level: a Value's is 0), an optional one reads the levels from a slice.
// A row costs one Value.
func (b *batch) writeColumn(sc *scratch, c *colBuf, w *pq.ColumnWriter) error {
	switch c.kind {
	case kVector:
		return b.writeVector(sc, c, w)
	case kDecFixed, kMoneyFixed, kUUID, kFixedBytes, kString, kBytes, kVariant, kGeo:
		fixedLen := c.kind != kString && c.kind != kBytes && c.kind != kVariant && c.kind != kGeo
		return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
			start := arenaStart(c.off, r0)
			off := c.off[r0 : r0+len(vals)]
			switch {
			case !c.optional && fixedLen:
				for i, end := range off {
					vals[i] = pq.FixedLenByteArrayValue(c.arena[start:end])
					start = end
				}
			case !c.optional:
				for i, end := range off {
					vals[i] = pq.ByteArrayValue(c.arena[start:end])
					start = end
				}
			default:
				d := c.def[r0 : r0+len(vals)]
				for i, end := range off {
					if d[i] != 0 {
						if fixedLen {
							vals[i] = pq.FixedLenByteArrayValue(c.arena[start:end])
						} else {
							vals[i] = pq.ByteArrayValue(c.arena[start:end])
						}
						vals[i].SetDefinitionLevel(1)
					}
					start = end
				}
			}
		})
	case kBool:
		return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
			u := c.u64[r0 : r0+len(vals)]
			if !c.optional {
				for i, x := range u {
					vals[i] = pq.BooleanValue(x != 0)
				}
				return
			}
			d := c.def[r0 : r0+len(vals)]
			for i, x := range u {
				if d[i] != 0 {
					vals[i] = pq.BooleanValue(x != 0)
					vals[i].SetDefinitionLevel(1)
				}
			}
		})
	case kInt32, kDecInt32, kDate:
		return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
			u := c.u64[r0 : r0+len(vals)]
			if !c.optional {
				for i, x := range u {
					vals[i] = pq.Int32Value(int32(x))
				}
				return
			}
			d := c.def[r0 : r0+len(vals)]
			for i, x := range u {
				if d[i] != 0 {
					vals[i] = pq.Int32Value(int32(x))
					vals[i].SetDefinitionLevel(1)
				}
			}
		})
	case kFloat:
		return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
			u := c.u64[r0 : r0+len(vals)]
			if !c.optional {
				for i, x := range u {
					vals[i] = pq.FloatValue(math.Float32frombits(uint32(x)))
				}
				return
			}
			d := c.def[r0 : r0+len(vals)]
			for i, x := range u {
				if d[i] != 0 {
					vals[i] = pq.FloatValue(math.Float32frombits(uint32(x)))
					vals[i].SetDefinitionLevel(1)
				}
			}
		})
	case kDouble:
		return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
			u := c.u64[r0 : r0+len(vals)]
			if !c.optional {
				for i, x := range u {
					vals[i] = pq.DoubleValue(math.Float64frombits(x))
				}
				return
			}
			d := c.def[r0 : r0+len(vals)]
			for i, x := range u {
				if d[i] != 0 {
					vals[i] = pq.DoubleValue(math.Float64frombits(x))
					vals[i].SetDefinitionLevel(1)
				}
			}
		})
	}
	// every INT64-backed kind (the loops are written out per kind so that
	// each makes its Values inline)
	return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
		u := c.u64[r0 : r0+len(vals)]
		if !c.optional {
			for i, x := range u {
				vals[i] = pq.Int64Value(int64(x))
			}
			return
		}
		d := c.def[r0 : r0+len(vals)]
		for i, x := range u {
			if d[i] != 0 {
				vals[i] = pq.Int64Value(int64(x))
				vals[i].SetDefinitionLevel(1)
			}
		}
	})
}

// writeVector writes LIST<FLOAT>: one value per element, repetition level
// 1 after the first; an empty list is one value at the list's level.
func (b *batch) writeVector(sc *scratch, c *colBuf, w *pq.ColumnWriter) error {
	base := 0
	if c.optional {
		base = 1
	}
	start := arenaStart(c.off, b.from)
	for r := b.from; r < b.to; r++ {
		end := c.off[r]
		switch {
		case c.optional && c.def[r] == 0:
			sc.vals = append(sc.vals, pq.Value{})
		case end == start:
			v := pq.Value{}
			v.SetDefinitionLevel(base)
			sc.vals = append(sc.vals, v)
		default:
			for k := start; k < end; k += 4 {
				bits := uint32(c.arena[k]) | uint32(c.arena[k+1])<<8 | uint32(c.arena[k+2])<<16 | uint32(c.arena[k+3])<<24
				v := pq.FloatValue(math.Float32frombits(bits))
				v.SetDefinitionLevel(base + 1)
				if k > start {
					v.SetRepetitionLevel(1)
				}
				sc.vals = append(sc.vals, v)
			}
		}
		start = end
		// whole rows only: a row may not span two pages
		if len(sc.vals) >= valueChunk {
			if err := sc.flush(w); err != nil {
				return err
			}
		}
	}
	return sc.flush(w)
}

func (b *batch) writeOffsets(sc *scratch, c *colBuf, w *pq.ColumnWriter) error {
	return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
		for i := range vals {
			if r := r0 + i; !c.optional || c.def[r] != 0 {
				vals[i] = pq.Int32Value(int32(c.aux[r]))
				if c.optional {
					vals[i].SetDefinitionLevel(1)
				}
			}
		}
	})
}

func (b *batch) writeTypes(sc *scratch, c *colBuf, w *pq.ColumnWriter) error {
	return sc.chunks(w, b.from, b.to, func(vals []pq.Value, r0 int) {
		start := arenaStart(c.toff, r0)
		for i := range vals {
			end := c.toff[r0+i]
			if end != start {
				vals[i] = pq.ByteArrayValue(c.tarena[start:end])
				vals[i].SetDefinitionLevel(1)
			}
			start = end
		}
	})
}

// arenaStart is where row r's value starts in an arena whose row ends are
// off.
func arenaStart(off []int, r int) int {
	if r == 0 {
		return 0
	}
	return off[r-1]
}
