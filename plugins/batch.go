package plugins

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/tdsextract/tdsextract/decode"
)

// slotRing is where a hostSink gets the memory of its batches and hands
// them on: the ring of shared-memory slots of a plugin process, heap
// slots sent as bytes, or heap slots read in process.
type slotRing interface {
	// acquire returns a free slot, waiting for one when all are in flight.
	acquire() (slot int, mem []byte, err error)
	// send hands a filled slot on: its first n bytes are one encapsulated
	// Arrow IPC record batch message of rows rows. The slot is not written
	// again until acquire returns it.
	send(slot int, n int, rows int64) error
	// release gives back a slot that holds no batch.
	release(slot int)
}

// fieldBuf is one Arrow field's buffers in the batch being filled.
type fieldBuf struct {
	kind     wkind
	nullable bool
	width    int
	fixedLen int
	unit     tsUnit
	scale    uint8 // decimal: the column's scale
	aux      int   // index of the companion field, or -1

	valid []byte // validity bitmap (nil for NOT NULL fields)
	vals  []byte // values, int32 offsets (variable width) or bits (boolean)
	data  []byte // variable width: the data region
	dlen  int    // bytes used in data
	vpos  int    // the value in progress: its start in data, or bytes written (fixed-size kinds)
	nulls int

	// offValid, offVals, offData are the buffers' offsets in the body.
	offValid, offVals, offData int

	// spill holds a value that did not fit its data region; the row then
	// moves to the next batch (hostSink.rotate).
	spill    []byte
	spilling bool

	est float64 // bytes a row takes in data, from earlier batches
}

func (f *fieldBuf) present(r int) {
	if f.valid != nil {
		f.valid[r>>3] |= 1 << (r & 7)
	}
}

// stagedField is one field of the row that moves to the next batch.
type stagedField struct {
	null       bool
	start, end int
}

// fail records the sink's first error, naming the plugin; EndRow returns
// it and decoding stops.
func (w *hostSink) fail(err error) {
	if w.err == nil {
		w.err = w.wrap("writing batches", err)
	}
}

func (w *hostSink) mismatch(col int, call string) {
	w.fail(fmt.Errorf("column %d %q (%s): unexpected %s value", col+1, w.cols[col].Name, decode.SQLTypeName(&w.cols[col]), call))
}

// ---- layout ----

// regionSkew follows every region of a batch: a field's buffers are
// written a row at a time, all at once, and regions whose sizes are
// multiples of 4 KiB would put every field's current line in the same L1
// cache set (48 fields of poc48 thrashed an 8-way set: the validity bit
// store alone took a sixth of the in-process leg's time). One line of
// padding after each region spreads them over the sets.
const regionSkew = 64

// regions returns the bytes of the fixed regions for rows rows, and when
// set is true assigns their offsets.
func (w *hostSink) regions(rows int, set bool) int {
	off := 0
	bits := align64((rows+7)/8) + regionSkew
	for i := range w.f {
		f := &w.f[i]
		if f.nullable {
			if set {
				f.offValid = off
			}
			off += bits
		}
		if set {
			f.offVals = off
		}
		switch {
		case f.kind == wBool:
			off += bits
		case f.kind.isVar():
			off += align64((rows+1)*4) + regionSkew
		case f.fixedLen > 0:
			off += align64(rows*f.fixedLen) + regionSkew
		default:
			off += align64(rows*f.width) + regionSkew
		}
	}
	return off
}

// layout places a batch in mem: as many rows as fit (at most batchRows)
// given what variable-width values took in earlier batches, then the data
// regions, shared in proportion to those sizes but each at least minData.
func (w *hostSink) layout() error {
	body := len(w.mem) - w.header
	var perRow, need float64
	nvar := 0
	for i := range w.f {
		if w.f[i].kind.isVar() {
			perRow += w.f[i].est*w.slack + 1
			need += float64(w.minData[i]) + 64 + regionSkew
			nvar++
		}
	}
	fits := func(r int) bool { return float64(w.regions(r, false))+float64(r)*perRow+need <= float64(body) }
	lo, hi := 1, w.batchRows
	if !fits(lo) {
		return w.rowTooBig()
	}
	for lo < hi { // the largest r that fits
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	w.cap = lo
	fixed := w.regions(w.cap, true)
	b := w.mem[w.header:]
	if nvar > 0 {
		free := body - fixed - (64+regionSkew)*nvar
		for i := range w.f {
			free -= w.minData[i]
		}
		var weight float64
		for i := range w.f {
			if w.f[i].kind.isVar() {
				weight += w.f[i].est + 1
			}
		}
		off := fixed
		for i := range w.f {
			f := &w.f[i]
			if !f.kind.isVar() {
				continue
			}
			n := w.minData[i] + int(float64(free)*(f.est+1)/weight)
			f.offData = off
			f.data = b[off : off+n]
			off = align64(off+n) + regionSkew
		}
	}
	bits := (w.cap + 7) / 8
	for i := range w.f {
		f := &w.f[i]
		f.dlen, f.nulls, f.spilling = 0, 0, false
		if f.nullable {
			f.valid = b[f.offValid : f.offValid+bits]
			clear(f.valid)
		} else {
			f.valid = nil
		}
		switch {
		case f.kind == wBool:
			f.vals = b[f.offVals : f.offVals+bits]
			clear(f.vals)
		case f.kind.isVar():
			f.vals = b[f.offVals : f.offVals+(w.cap+1)*4]
			binary.LittleEndian.PutUint32(f.vals, 0)
		case f.fixedLen > 0:
			f.vals = b[f.offVals : f.offVals+w.cap*f.fixedLen]
		default:
			f.vals = b[f.offVals : f.offVals+w.cap*f.width]
		}
	}
	w.row = 0
	return nil
}

func (w *hostSink) rowTooBig() error {
	need := w.header + w.regions(1, false)
	for i := range w.minData {
		need += w.minData[i] + 64
	}
	return fmt.Errorf("a row needs about %s of batch memory but batch_bytes is %s: raise batch_bytes", fmtBytes(need), fmtBytes(len(w.mem)))
}

func fmtBytes(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// start takes a free slot and lays out the next batch in it.
func (w *hostSink) start() error {
	slot, mem, err := w.ring.acquire()
	if err != nil {
		return err
	}
	w.slot, w.mem = slot, mem
	return w.layout()
}

// seal writes the metadata of the batch's first rows rows into the slot's
// header and returns the message's length.
func (w *hostSink) seal(rows int) (int, error) {
	m := &w.meta
	m.nodes, m.buffers = m.nodes[:0], m.buffers[:0]
	end := 0
	buf := func(off, n int) {
		if n == 0 {
			m.buffers = append(m.buffers, ipcBuffer{})
			return
		}
		m.buffers = append(m.buffers, ipcBuffer{int64(off), int64(n)})
		end = max(end, off+n)
	}
	bits := (rows + 7) / 8
	for i := range w.f {
		f := &w.f[i]
		m.nodes = append(m.nodes, ipcNode{int64(rows), int64(f.nulls)})
		if f.nullable {
			buf(f.offValid, bits)
		} else {
			buf(0, 0)
		}
		switch {
		case f.kind == wBool:
			buf(f.offVals, bits)
		case f.kind.isVar():
			buf(f.offVals, (rows+1)*4)
			buf(f.offData, int(binary.LittleEndian.Uint32(f.vals[rows*4:])))
		case f.kind == wVector:
			dims := int64(f.fixedLen / 4)
			m.nodes = append(m.nodes, ipcNode{int64(rows) * dims, 0})
			buf(0, 0)
			buf(f.offVals, rows*f.fixedLen)
		case f.fixedLen > 0:
			buf(f.offVals, rows*f.fixedLen)
		default:
			buf(f.offVals, rows*f.width)
		}
	}
	body := align8(end)
	if err := m.encode(w.mem[:w.header], int64(rows), int64(body)); err != nil {
		return 0, err
	}
	return w.header + body, nil
}

// rotate hands the batch on and starts the next. With move, the row in
// progress (w.row) did not fit: it is copied out, the batch handed on
// without it, and the row written again as the first of the next batch.
func (w *hostSink) rotate(move bool) error {
	rows := w.row
	if move {
		w.stageRow(rows)
		w.moved++
	}
	if rows > 0 {
		n, err := w.seal(rows)
		if err != nil {
			return err
		}
		w.learn(rows)
		if err := w.ring.send(w.slot, n, int64(rows)); err != nil {
			return err
		}
		w.rows += int64(rows)
		w.batches++
		if err := w.start(); err != nil {
			return err
		}
	} else if err := w.layout(); err != nil { // the row alone did not fit: lay the batch out anew
		return err
	}
	if move {
		if err := w.unstage(); err != nil {
			return err
		}
	}
	return nil
}

// learn updates the variable-width estimates from a batch of rows rows.
func (w *hostSink) learn(rows int) {
	for i := range w.f {
		f := &w.f[i]
		if f.kind.isVar() {
			obs := float64(binary.LittleEndian.Uint32(f.vals[rows*4:])) / float64(rows)
			f.est = 0.5*f.est + 0.5*obs
			if obs > f.est {
				f.est = obs
			}
		}
	}
}

// stageRow copies row r out of the batch (its spilled values from their
// spill buffers) and takes its NULLs out of the batch's counts.
func (w *hostSink) stageRow(r int) {
	w.stage = w.stage[:0]
	for i := range w.f {
		f := &w.f[i]
		st := &w.staged[i]
		st.null = f.valid != nil && f.valid[r>>3]&(1<<(r&7)) == 0
		if st.null {
			f.nulls--
		}
		st.start = len(w.stage)
		switch {
		case f.kind == wBool:
			w.stage = append(w.stage, (f.vals[r>>3]>>(r&7))&1)
		case f.kind.isVar() && f.spilling:
			w.stage = append(w.stage, f.spill...)
		case f.kind.isVar():
			from := binary.LittleEndian.Uint32(f.vals[r*4:])
			w.stage = append(w.stage, f.data[from:binary.LittleEndian.Uint32(f.vals[(r+1)*4:])]...)
		case f.fixedLen > 0:
			w.stage = append(w.stage, f.vals[r*f.fixedLen:(r+1)*f.fixedLen]...)
		default:
			w.stage = append(w.stage, f.vals[r*f.width:(r+1)*f.width]...)
		}
		st.end = len(w.stage)
		w.minData[i] = 0
		if f.kind.isVar() {
			w.minData[i] = st.end - st.start
		}
	}
}

// unstage writes the staged row as row 0 of the fresh batch, whose layout
// gave every region at least the staged value's size (minData).
func (w *hostSink) unstage() error {
	for i := range w.f {
		f := &w.f[i]
		st := &w.staged[i]
		b := w.stage[st.start:st.end]
		switch {
		case f.kind == wBool:
			f.vals[0] = b[0]
		case f.kind.isVar():
			copy(f.data, b)
			f.dlen = len(b)
			binary.LittleEndian.PutUint32(f.vals[4:], uint32(len(b)))
		default:
			copy(f.vals, b)
		}
		if st.null {
			f.nulls++
		} else {
			f.present(0)
		}
		w.minData[i] = 0
	}
	w.spill = false
	w.row = 0
	w.next()
	return nil
}

// next moves to the following row, handing the batch on when it is full.
func (w *hostSink) next() {
	w.row++
	if w.row == w.cap {
		if err := w.rotate(false); err != nil {
			w.fail(err)
		}
	}
}

// flush hands on the rows of the batch in progress, if any.
func (w *hostSink) flush() error {
	if w.err != nil {
		return w.err
	}
	if w.slot < 0 {
		return nil
	}
	if w.row == 0 {
		w.ring.release(w.slot)
		w.slot, w.mem = -1, nil
		return nil
	}
	rows := w.row
	n, err := w.seal(rows)
	if err != nil {
		return err
	}
	if err := w.ring.send(w.slot, n, int64(rows)); err != nil {
		return err
	}
	w.rows += int64(rows)
	w.batches++
	w.slot, w.mem, w.row = -1, nil, 0
	return nil
}

// ---- decode.CellSink: each value written once, into the batch ----

func (w *hostSink) nullField(i int) {
	f := &w.f[i]
	if !f.nullable {
		w.fail(fmt.Errorf("NULL in column %q, which the source declared NOT NULL", w.plans[i].field.Name))
		return
	}
	f.nulls++
	r := w.row
	switch {
	case f.kind.isVar():
		binary.LittleEndian.PutUint32(f.vals[(r+1)*4:], uint32(f.dlen))
	case f.kind == wBool:
	case f.fixedLen > 0:
		clear(f.vals[r*f.fixedLen : (r+1)*f.fixedLen])
	default:
		clear(f.vals[r*f.width : (r+1)*f.width])
	}
}

func (w *hostSink) Null(col int) {
	i := w.colf[col]
	w.nullField(i)
	if a := w.f[i].aux; a >= 0 {
		w.nullField(a)
	}
}

func (w *hostSink) Bool(col int, v bool) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wBool:
		if v {
			f.vals[w.row>>3] |= 1 << (w.row & 7)
		}
		f.present(w.row)
	case wVariant:
		w.variantText(f, strconv.AppendBool(w.vbuf[:0], v))
	default:
		w.mismatch(col, "bit")
	}
}

func (w *hostSink) Int(col int, v int64) {
	f := &w.f[w.colf[col]]
	r := w.row
	switch f.kind {
	case wI32:
		binary.LittleEndian.PutUint32(f.vals[r*4:], uint32(v))
	case wI64:
		binary.LittleEndian.PutUint64(f.vals[r*8:], uint64(v))
	case wI16:
		binary.LittleEndian.PutUint16(f.vals[r*2:], uint16(v))
	case wU8:
		f.vals[r] = byte(v)
	case wVariant:
		w.variantText(f, strconv.AppendInt(w.vbuf[:0], v, 10))
		return
	default:
		w.mismatch(col, "integer")
		return
	}
	f.present(r)
}

func (w *hostSink) Float32(col int, v float32) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wF32:
		binary.LittleEndian.PutUint32(f.vals[w.row*4:], math.Float32bits(v))
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendFloat32Text(w.vbuf[:0], v))
	default:
		w.mismatch(col, "real")
	}
}

func (w *hostSink) Float64(col int, v float64) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wF64:
		binary.LittleEndian.PutUint64(f.vals[w.row*8:], math.Float64bits(v))
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendFloat64Text(w.vbuf[:0], v))
	default:
		w.mismatch(col, "float")
	}
}

// putDecimal128 stores a 128-bit two's complement value, little-endian.
func putDecimal128(b []byte, lo, hi uint64) {
	binary.LittleEndian.PutUint64(b, lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
}

func (w *hostSink) Decimal(col int, v decode.Decimal) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wDec:
		if v.Scale != f.scale {
			w.fail(fmt.Errorf("column %q: decimal value of scale %d in a column of another scale", w.cols[col].Name, v.Scale))
			return
		}
		lo, hi := v.Lo, v.Hi
		if v.Neg {
			lo, hi = ^lo+1, ^hi
			if lo == 0 {
				hi++
			}
		}
		putDecimal128(f.vals[w.row*16:], lo, hi)
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendDecimalText(w.vbuf[:0], v))
	default:
		w.mismatch(col, "decimal")
	}
}

func (w *hostSink) Money(col int, v int64) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wMoney:
		putDecimal128(f.vals[w.row*16:], uint64(v), uint64(v>>63))
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendMoneyText(w.vbuf[:0], v))
	default:
		w.mismatch(col, "money")
	}
}

func (w *hostSink) Date(col int, days int32) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wDate:
		binary.LittleEndian.PutUint32(f.vals[w.row*4:], uint32(days-epochDays))
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendDateText(w.vbuf[:0], days))
	default:
		w.mismatch(col, "date")
	}
}

func (w *hostSink) Time(col int, ticks int64) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wTime:
		binary.LittleEndian.PutUint64(f.vals[w.row*8:], uint64(ticks*100))
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendTimeText(w.vbuf[:0], ticks, w.vscale))
	default:
		w.mismatch(col, "time")
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// timestamp converts to the field's unit: milliseconds rounded as SQL
// Server shows datetime, microseconds with the 100 ns digit truncated
// (never rounded: rounding could carry 9999-12-31 23:59:59.9999999 into
// year 10000), nanoseconds exact within their range.
func (w *hostSink) timestamp(col int, f *fieldBuf, v decode.DateTime) (int64, bool) {
	t := int64(v.Days-epochDays)*decode.TicksPerDay + v.Ticks
	switch f.unit {
	case unitMilli:
		return floorDiv(t+5000, 10000), true
	case unitMicro:
		return floorDiv(t, 10), true
	}
	if t > math.MaxInt64/100 || t < math.MinInt64/100 {
		y, m, d := decode.CivilFromDate(v.Days)
		w.fail(fmt.Errorf("column %q: %04d-%02d-%02d is outside Arrow's nanosecond timestamps (1677-09-21 .. 2262-04-11); set timestamp_nanos: false to send microseconds", w.cols[col].Name, y, m, d))
		return 0, false
	}
	return t * 100, true
}

func (w *hostSink) DateTime(col int, v decode.DateTime) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wTS:
		if t, ok := w.timestamp(col, f, v); ok {
			binary.LittleEndian.PutUint64(f.vals[w.row*8:], uint64(t))
			f.present(w.row)
		}
	case wVariant:
		w.variantText(f, decode.AppendDateTimeText(w.vbuf[:0], v, w.vscale))
	default:
		w.mismatch(col, "datetime")
	}
}

func (w *hostSink) DateTimeOffset(col int, v decode.DateTimeOffset) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wDTO:
		t, ok := w.timestamp(col, f, v.UTC)
		if !ok {
			return
		}
		binary.LittleEndian.PutUint64(f.vals[w.row*8:], uint64(t))
		f.present(w.row)
		if f.aux >= 0 {
			a := &w.f[f.aux]
			binary.LittleEndian.PutUint16(a.vals[w.row*2:], uint16(v.OffsetMin))
			a.present(w.row)
		}
	case wVariant:
		w.variantText(f, decode.AppendDateTimeOffsetText(w.vbuf[:0], v, w.vscale))
	default:
		w.mismatch(col, "datetimeoffset")
	}
}

func (w *hostSink) GUID(col int, v decode.GUID) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wGUID:
		copy(f.vals[w.row*16:w.row*16+16], v[:])
		f.present(w.row)
	case wVariant:
		w.variantText(f, decode.AppendGUIDText(w.vbuf[:0], v))
	default:
		w.mismatch(col, "uniqueidentifier")
	}
}

// Variant announces the base type of the sql_variant value that follows;
// the companion field gets its name.
func (w *hostSink) Variant(col int, ti *decode.TypeInfo) {
	f := &w.f[w.colf[col]]
	if f.kind != wVariant {
		w.mismatch(col, "sql_variant")
		return
	}
	w.vscale, w.vbin = ti.DateTimeScale(), ti.IsBinary()
	if f.aux >= 0 {
		w.putVar(&w.f[f.aux], w.variantName(ti))
	}
}

func (w *hostSink) variantName(ti *decode.TypeInfo) []byte {
	k := variantKey{ti.Type, ti.Size, ti.Precision, ti.Scale}
	n, ok := w.vnames[k]
	if !ok {
		if w.vnames == nil {
			w.vnames = map[variantKey]string{}
		}
		n = decode.TypeDecl(ti, 0)
		w.vnames[k] = n
	}
	w.vbuf = append(w.vbuf[:0], n...)
	return w.vbuf
}

// variantText stores the text of a sql_variant's base value.
func (w *hostSink) variantText(f *fieldBuf, text []byte) {
	w.vbuf = text
	w.putVar(f, text)
}

// putVar stores a whole variable-width value of row w.row.
func (w *hostSink) putVar(f *fieldBuf, p []byte) {
	if f.dlen+len(p) <= len(f.data) {
		copy(f.data[f.dlen:], p)
		f.dlen += len(p)
		binary.LittleEndian.PutUint32(f.vals[(w.row+1)*4:], uint32(f.dlen))
	} else {
		f.spill = append(f.spill[:0], p...)
		f.spilling = true
		w.spill = true
	}
	f.present(w.row)
}

func (w *hostSink) BeginValue(col int, size int64) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wString, wBinary:
		f.vpos = f.dlen
	case wFixed, wVector:
		f.vpos = 0
	case wVariant:
		w.vbuf = w.vbuf[:0]
	default:
		w.mismatch(col, "variable-length")
	}
}

// Reserve hands out the value's destination in the batch: the field's
// data region, or its fixed-size slot. It declines (nil) when n bytes do
// not fit; the parts then arrive through Write.
func (w *hostSink) Reserve(col int, n int) []byte {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wString, wBinary:
		if !f.spilling && n >= 0 && f.dlen+n <= len(f.data) {
			return f.data[f.dlen : f.dlen+n]
		}
	case wFixed, wVector:
		if n >= 0 && f.vpos+n <= f.fixedLen {
			at := w.row*f.fixedLen + f.vpos
			return f.vals[at : at+n]
		}
	}
	return nil
}

func (w *hostSink) Commit(col int, n int) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wString, wBinary:
		f.dlen += n
	case wFixed, wVector:
		f.vpos += n
	}
}

// Write takes a borrowed part: copied into the batch, or into the field's
// spill buffer once the value does not fit.
func (w *hostSink) Write(col int, p []byte) {
	f := &w.f[w.colf[col]]
	switch f.kind {
	case wString, wBinary:
		switch {
		case f.spilling:
			f.spill = append(f.spill, p...)
		case f.dlen+len(p) <= len(f.data):
			copy(f.data[f.dlen:], p)
			f.dlen += len(p)
		default:
			f.spill = append(append(f.spill[:0], f.data[f.vpos:f.dlen]...), p...)
			f.dlen = f.vpos
			f.spilling = true
		}
	case wFixed, wVector:
		if f.vpos+len(p) > f.fixedLen {
			w.fail(fmt.Errorf("column %q (%s): value longer than %d bytes", w.cols[col].Name, decode.SQLTypeName(&w.cols[col]), f.fixedLen))
			f.vpos = f.fixedLen
			return
		}
		copy(f.vals[w.row*f.fixedLen+f.vpos:], p)
		f.vpos += len(p)
	case wVariant:
		w.vbuf = append(w.vbuf, p...)
	}
}

func (w *hostSink) EndValue(col int) {
	f := &w.f[w.colf[col]]
	r := w.row
	switch f.kind {
	case wString, wBinary:
		if f.spilling {
			w.spill = true
		} else {
			binary.LittleEndian.PutUint32(f.vals[(r+1)*4:], uint32(f.dlen))
		}
	case wFixed:
		clear(f.vals[r*f.fixedLen+f.vpos : (r+1)*f.fixedLen]) // binary(n) is zero-padded, as SQL Server pads it
	case wVector:
		if f.vpos != f.fixedLen {
			w.fail(fmt.Errorf("column %q (%s): vector value of %d bytes, want %d", w.cols[col].Name, decode.SQLTypeName(&w.cols[col]), f.vpos, f.fixedLen))
		}
	case wVariant:
		if w.vbin {
			w.vhex = hex.AppendEncode(w.vhex[:0], w.vbuf)
			w.putVar(f, w.vhex)
			return
		}
		w.putVar(f, w.vbuf)
		return
	}
	f.present(r)
}

// Bytes takes a complete resident value in one call (decode.BytesSink).
func (w *hostSink) Bytes(col int, p []byte) {
	f := &w.f[w.colf[col]]
	r := w.row
	switch f.kind {
	case wString, wBinary:
		if f.dlen+len(p) <= len(f.data) {
			copy(f.data[f.dlen:], p)
			f.dlen += len(p)
			binary.LittleEndian.PutUint32(f.vals[(r+1)*4:], uint32(f.dlen))
		} else {
			f.spill = append(f.spill[:0], p...)
			f.spilling = true
			w.spill = true
		}
		f.present(r)
	default:
		w.BeginValue(col, int64(len(p)))
		w.Write(col, p)
		w.EndValue(col)
	}
}

// EndRow ends the row; a full batch is handed on, and a row that did not
// fit moves to the next batch.
func (w *hostSink) EndRow() error {
	if w.err != nil {
		return w.err
	}
	if w.spill {
		if err := w.rotate(true); err != nil {
			w.fail(err)
		}
		return w.err
	}
	w.next()
	return w.err
}
