package parquet

import (
	"math"
	"math/bits"
	"sync"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/rle"
)

// The encoding of every column is chosen the way the best writers choose
// it, by measurement: from a sample of the first row group of the run,
// each candidate encoding that fits the column's physical type is applied
// and its output compressed with the run's codec, and the smallest wins.
// Candidates: PLAIN for every type; RLE_DICTIONARY (a dictionary page plus
// bit-packed indices) for every type but BOOLEAN; DELTA_BINARY_PACKED for
// INT32 and INT64 (sorted keys, dates, timestamps close together);
// BYTE_STREAM_SPLIT for FLOAT and DOUBLE; DELTA_LENGTH_BYTE_ARRAY for
// BYTE_ARRAY. Booleans stay PLAIN (bit-packed; zstd takes it from there).
// A column whose best candidate does not shrink by compression by at
// least 3% is written uncompressed: random GUIDs and wide decimals cost
// the compressor's time for nothing.
//
// The sample is sampleBlocks runs of consecutive rows spread over the
// batch, so runs and sort order (what delta encoding lives on) survive
// while the values come from the whole row group. The dictionary's size
// is extrapolated from the sample to the row group by how fast distinct
// values still appear (the distinct count in the first half of the sample
// against the whole), and a dictionary that would outgrow dictMaxBytes is
// not chosen; parquet-go falls back to PLAIN for the rest of a column
// chunk whose dictionary outgrows it after all.
const (
	// 8192 values chose as well as 16384 on the sample tables (files
	// within 0.5% of the size either way) at half the cost: the trials
	// run once per file, and at 200,000 rows of sales.order_lines they
	// were 15% of the extract's CPU.
	sampleValues = 8192
	sampleBlocks = 8
	// sampleBytes bounds a sample by its size over all columns: a wide
	// table samples fewer rows (never fewer than sampleMinRows), since
	// every sampled value is encoded and compressed three or four times.
	// On wide601 (601 columns, about 6 KB a row) the trials took about a
	// fifth of an extract's CPU when they sampled its whole first batch
	// (about 5,500 rows); with 1,024 rows its one-thread extract ran 27%
	// faster (2 A/B runs of the bench harness, 9 reps each) and its file
	// grew 0.05%. No table of up to 512 bytes a row is affected.
	sampleBytes   = 4 << 20
	sampleMinRows = 1024
	dictMaxBytes  = 1 << 20
	// minGain is how much smaller than PLAIN another encoding must be to
	// be chosen (PLAIN is the cheapest to write and to read).
	minGain = 0.97
)

// choice is the encoding of one leaf column.
type choice struct {
	enc encoding.Encoding // nil: parquet-go's default for the type
	raw bool              // write the column chunk uncompressed
}

// leafSample is the sampled values of one leaf, in one of three forms.
type leafSample struct {
	ints   []int64  // INT32 / INT64
	floats []uint64 // FLOAT / DOUBLE bits
	bytes  []byte   // BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY, back to back
	offs   []uint32 // start offsets into bytes, len = values + 1
	width  int      // 4 or 8 for ints and floats; the fixed length of FLBA
	kind   pq.Kind
}

func (ls *leafSample) n() int {
	switch {
	case ls.ints != nil:
		return len(ls.ints)
	case ls.floats != nil:
		return len(ls.floats)
	case len(ls.offs) > 0:
		return len(ls.offs) - 1
	}
	return 0
}

// sampleRows returns the row ranges of the sample of at most limit rows
// of a batch of n rows.
func sampleRows(n, limit int) [][2]int {
	if n <= limit {
		return [][2]int{{0, n}}
	}
	per := limit / sampleBlocks
	step := n / sampleBlocks
	out := make([][2]int, sampleBlocks)
	for k := range out {
		out[k] = [2]int{k * step, k*step + per}
	}
	return out
}

// sampleLimit is how many of the first nrows rows of cols the trials
// sample: sampleValues, or fewer for rows so wide that sampleValues of
// them would exceed sampleBytes.
func sampleLimit(cols []colBuf, nrows int) int {
	if nrows <= 0 {
		return sampleValues
	}
	var bytes int64
	for i := range cols {
		if c := &cols[i]; c.kind.isVar() && nrows <= len(c.off) {
			bytes += int64(arenaStart(c.off, nrows))
		} else {
			bytes += 8 * int64(nrows)
		}
	}
	perRow := max(bytes/int64(nrows), 1)
	return int(min(int64(sampleValues), max(int64(sampleMinRows), sampleBytes/perRow)))
}

// chooseEncodings decides the encoding of every leaf of the file schema
// from the first nrows rows of a batch's columns cols, for a row group of
// about rows rows. The trials of different columns run on up to threads
// goroutines.
func (s *Sink) chooseEncodings(cols []colBuf, nrows, rows, threads int) []choice {
	nleaves := 0
	for i := range cols {
		if c := &cols[i]; c.leaf >= 0 {
			nleaves = max(nleaves, c.leaf+1)
			if c.offset || c.vtype {
				nleaves = max(nleaves, c.leaf+2)
			}
		}
	}
	out := make([]choice, nleaves)
	ranges := sampleRows(nrows, sampleLimit(cols, nrows))
	type job struct{ col, part int }
	var jobs []job
	for i := range cols {
		c := &cols[i]
		if c.leaf < 0 {
			continue
		}
		jobs = append(jobs, job{i, 0})
		if c.offset || c.vtype {
			jobs = append(jobs, job{i, 1})
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range max(1, min(threads, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // the trials' compressed output, reused
			for {
				mu.Lock()
				j := next
				next++
				mu.Unlock()
				if j >= len(jobs) {
					return
				}
				c := &cols[jobs[j].col]
				ls := sampleLeaf(c, jobs[j].part, ranges)
				out[c.leaf+jobs[j].part] = s.chooseLeaf(ls, rows, &buf)
			}
		}()
	}
	wg.Wait()
	return out
}

// sampleLeaf gathers the non-NULL values of one leaf in the given rows.
func sampleLeaf(c *colBuf, part int, ranges [][2]int) *leafSample {
	ls := &leafSample{}
	present := func(r int) bool { return !c.optional || c.def[r] != 0 }
	if part == 1 && c.offset {
		ls.kind, ls.width, ls.ints = pq.Int32, 4, []int64{}
		for _, rg := range ranges {
			for r := rg[0]; r < rg[1]; r++ {
				if present(r) {
					ls.ints = append(ls.ints, int64(c.aux[r]))
				}
			}
		}
		return ls
	}
	arena, off := c.arena, c.off
	if part == 1 { // sql_variant base type names
		arena, off = c.tarena, c.toff
	}
	switch {
	case part == 1 || c.kind == kString || c.kind == kBytes || c.kind == kVariant || c.kind == kGeo:
		ls.kind = pq.ByteArray
	case c.kind.isVar() && c.kind != kVector:
		ls.kind, ls.width = pq.FixedLenByteArray, c.fixedLen
	case c.kind == kBool || c.kind == kVector:
		return ls // not sampled: PLAIN
	case c.kind == kFloat:
		ls.kind, ls.width, ls.floats = pq.Float, 4, []uint64{}
	case c.kind == kDouble:
		ls.kind, ls.width, ls.floats = pq.Double, 8, []uint64{}
	case c.kind == kInt32 || c.kind == kDecInt32 || c.kind == kDate:
		ls.kind, ls.width, ls.ints = pq.Int32, 4, []int64{}
	default:
		ls.kind, ls.width, ls.ints = pq.Int64, 8, []int64{}
	}
	for _, rg := range ranges {
		for r := rg[0]; r < rg[1]; r++ {
			if ls.kind == pq.ByteArray || ls.kind == pq.FixedLenByteArray {
				start := 0
				if r > 0 {
					start = off[r-1]
				}
				if off[r] > start || (part == 0 && present(r)) {
					if len(ls.offs) == 0 {
						ls.offs = append(ls.offs, 0)
					}
					ls.bytes = append(ls.bytes, arena[start:off[r]]...)
					ls.offs = append(ls.offs, uint32(len(ls.bytes)))
				}
				continue
			}
			if !present(r) {
				continue
			}
			if ls.floats != nil {
				ls.floats = append(ls.floats, c.u64[r])
			} else {
				ls.ints = append(ls.ints, int64(c.u64[r]))
			}
		}
	}
	return ls
}

// chooseLeaf runs the trials for one sampled leaf of a row group of rows;
// buf is scratch space for the compressed trial outputs.
func (s *Sink) chooseLeaf(ls *leafSample, rows int, buf *[]byte) choice {
	n := ls.n()
	if n == 0 {
		return choice{}
	}
	scale := float64(max(rows, n)) / float64(n) // sample -> row group
	type cand struct {
		enc       encoding.Encoding
		raw, comp float64 // estimated row-group bytes before and after compression
	}
	var cands []cand
	try := func(enc encoding.Encoding, data []byte) {
		if data == nil {
			return
		}
		c := cand{enc: enc, raw: float64(len(data)) * scale, comp: float64(s.compressedLen(data, buf)) * scale}
		cands = append(cands, c)
	}
	plain := ls.encode(&pq.Plain)
	try(&pq.Plain, plain)
	switch ls.kind {
	case pq.Int32, pq.Int64:
		try(&pq.DeltaBinaryPacked, ls.encode(&pq.DeltaBinaryPacked))
	case pq.Float, pq.Double:
		try(&pq.ByteStreamSplit, ls.encode(&pq.ByteStreamSplit))
	case pq.ByteArray:
		try(&pq.DeltaLengthByteArray, ls.encode(&pq.DeltaLengthByteArray))
	}
	if s.cfg.Dictionary == "all" && ls.kind == pq.ByteArray {
		// every string and binary column, as asked; parquet-go falls back
		// to PLAIN for the rest of a chunk whose dictionary outgrows
		// dictMaxBytes
		return choice{enc: &pq.RLEDictionary}
	}
	if s.cfg.Dictionary != "none" {
		if dict, idx, distinct, half := ls.dictionary(); dict != nil {
			// distinct values in the row group, extrapolated from how
			// fast they still appeared in the second half of the sample
			grow := 1.0
			if half > 0 && distinct > half && scale > 1 {
				alpha := math.Log2(float64(distinct) / float64(half))
				grow = math.Pow(scale, min(alpha, 1))
			}
			dictRaw := float64(len(dict)) * grow
			if dictRaw <= dictMaxBytes {
				dictComp := float64(s.compressedLen(dict, buf)) * grow
				c := cand{enc: &pq.RLEDictionary,
					raw:  dictRaw + float64(len(idx))*scale,
					comp: dictComp + float64(s.compressedLen(idx, buf))*scale}
				cands = append(cands, c)
			}
		}
	}
	best := cands[0] // PLAIN
	for _, c := range cands[1:] {
		if c.comp < minGain*best.comp {
			best = c
		}
	}
	return choice{enc: best.enc, raw: best.comp >= minGain*best.raw}
}

// compressedLen is the length of data compressed with the run's codec,
// which writes into *buf (kept for the next call).
func (s *Sink) compressedLen(data []byte, buf *[]byte) int {
	if s.codec == nil || s.codec == compress.Codec(&pq.Uncompressed) {
		return len(data)
	}
	out, err := s.codec.Encode((*buf)[:0], data)
	if err != nil {
		return len(data)
	}
	*buf = out
	return len(out)
}

// encode applies enc to the sample (nil when enc does not apply).
func (ls *leafSample) encode(enc encoding.Encoding) []byte {
	var out []byte
	var err error
	switch ls.kind {
	case pq.Int32:
		v := make([]int32, len(ls.ints))
		for i, x := range ls.ints {
			v[i] = int32(x)
		}
		out, err = enc.EncodeInt32(nil, v)
	case pq.Int64:
		out, err = enc.EncodeInt64(nil, ls.ints)
	case pq.Float:
		v := make([]float32, len(ls.floats))
		for i, x := range ls.floats {
			v[i] = math.Float32frombits(uint32(x))
		}
		out, err = enc.EncodeFloat(nil, v)
	case pq.Double:
		v := make([]float64, len(ls.floats))
		for i, x := range ls.floats {
			v[i] = math.Float64frombits(x)
		}
		out, err = enc.EncodeDouble(nil, v)
	case pq.ByteArray:
		out, err = enc.EncodeByteArray(nil, ls.bytes, ls.offs)
	case pq.FixedLenByteArray:
		out, err = enc.EncodeFixedLenByteArray(nil, ls.bytes, ls.width)
	}
	if err != nil {
		return nil
	}
	return out
}

// dictionary returns the sample dictionary-encoded: the dictionary page
// (the distinct values, PLAIN) and the indices (RLE/bit-packed at the
// dictionary's bit width), the distinct count, and the distinct count in
// the first half of the sample; dict is nil when every value is distinct.
func (ls *leafSample) dictionary() (dict, idx []byte, distinct, half int) {
	n := ls.n()
	index := make([]int32, n)
	first := &leafSample{kind: ls.kind, width: ls.width}
	if ls.ints != nil || ls.floats != nil {
		src := ls.floats
		if ls.ints != nil {
			src = make([]uint64, n)
			for i, v := range ls.ints {
				src[i] = uint64(v)
			}
		}
		ids := make(map[uint64]int32, n) // sized once: growing rehashes
		var uniq []uint64
		for i, v := range src {
			if i == n/2 {
				half = len(ids)
			}
			id, ok := ids[v]
			if !ok {
				id = int32(len(ids))
				ids[v] = id
				uniq = append(uniq, v)
			}
			index[i] = id
		}
		if ls.ints != nil {
			first.ints = make([]int64, len(uniq))
			for i, v := range uniq {
				first.ints[i] = int64(v)
			}
		} else {
			first.floats = uniq
		}
	} else {
		ids := make(map[string]int32, n)
		first.offs = append(first.offs, 0)
		for i := range n {
			if i == n/2 {
				half = len(ids)
			}
			v := ls.bytes[ls.offs[i]:ls.offs[i+1]]
			id, ok := ids[string(v)] // no allocation for a lookup
			if !ok {
				id = int32(len(ids))
				ids[string(v)] = id
				first.bytes = append(first.bytes, v...)
				first.offs = append(first.offs, uint32(len(first.bytes)))
			}
			index[i] = id
		}
	}
	distinct = first.n()
	if distinct >= n {
		return nil, nil, distinct, half
	}
	dict = first.encode(&pq.Plain)
	width := max(1, bits.Len32(uint32(distinct-1)))
	idx, err := (&rle.Encoding{BitWidth: width}).EncodeInt32(nil, index)
	if err != nil || dict == nil {
		return nil, nil, distinct, half
	}
	return dict, append([]byte{byte(width)}, idx...), distinct, half
}
