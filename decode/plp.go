package decode

import (
	"encoding/binary"
	"strconv"
)

// Streamed values: PLP (MS-TDS 2.2.5.2.3, the (max) types, xml, json, UDT)
// and the data of text/ntext/image (2.2.7.19). Their parts reach the sink as
// they become resident, so a value never needs more than its 8-byte length
// (or its text-pointer header) resident, and a chunk may straddle any number
// of refills: ErrNeedMore in the middle of a chunk resumes inside it.
//
// PLP validation rules:
//  1. total 0xFFFFFFFFFFFFFFFF is NULL and no chunk follows; 0xFFFFFFFFFFFFFFFE is unknown length;
//  2. chunks run until a zero-length terminator; with a known total, every chunk must fit in
//     what remains of it and the chunks must sum exactly to it;
//  3. chunk headers and chunk data may be split anywhere;
//  4. UTF-16 values have even byte counts (known total and final sum); a code unit or a
//     surrogate pair split between chunks is carried over, as is a multi-byte code-page or
//     UTF-8 character;
//  5. a known total and the running sum of an unknown-length value are bounded by
//     MaxValueSize (nothing is ever allocated from a declared length);
//  6. an empty value is a zero total followed by the terminator.

// MaxValueSize is the default bound on one value's length: SQL Server's
// limit for the (max) types and text/ntext/image, 2^31-1 bytes.
const MaxValueSize = 1<<31 - 1

// Phases of a streamed value.
const (
	lvChunkHeader uint8 = iota + 1 // PLP: expecting a 4-byte chunk length (0 = terminator)
	lvChunkData                    // PLP: inside a chunk, rem bytes left
	lvTextData                     // text/ntext/image: rem bytes of data left, no terminator
)

// longValue is the state of a streamed value in progress.
type longValue struct {
	active bool
	phase  uint8
	known  bool // total is known
	col    int
	p      *colPlan
	total  uint64
	got    uint64
	rem    uint64
	max    uint64 // bound on the value's length
}

// deliver reports whether the value's parts go to the sink (not skipped).
func (lv *longValue) deliver() bool { return lv.p.mode != ModeSkip }

// startPLP reads a PLP value's 8-byte total and streams what is resident.
func (d *cellDecoder) startPLP(buf []byte, pos int, p *colPlan, col int) (int, error) {
	if pos+8 > len(buf) {
		return pos, ErrNeedMore
	}
	total := binary.LittleEndian.Uint64(buf[pos:])
	if total == PLPNull {
		if p.mode != ModeSkip {
			d.sink.Null(col)
		}
		return pos + 8, nil
	}
	lv := &d.lv
	*lv = longValue{active: true, phase: lvChunkHeader, col: col, p: p, max: d.maxValue()}
	if total != PLPUnknown {
		if total > lv.max {
			lv.active = false
			return pos, d.failCause(col, pos, "PLP length "+strconv.FormatUint(total, 10)+" exceeds the value size limit", ErrTooLarge)
		}
		if p.utf16 && p.mode == ModeValue && total&1 != 0 {
			lv.active = false
			return pos, d.fail(col, pos, "odd PLP length "+strconv.FormatUint(total, 10)+" for UTF-16 data")
		}
		lv.known, lv.total = true, total
	}
	d.begin(p, col, total)
	return d.resume(buf, pos+8)
}

// begin starts a streamed value at the sink.
func (d *cellDecoder) begin(p *colPlan, col int, total uint64) {
	if p.mode == ModeSkip {
		return
	}
	size := int64(-1)
	if total != PLPUnknown {
		size = int64(total)
	}
	if p.td != nil && p.mode == ModeValue {
		p.td.reset()
	}
	d.sink.BeginValue(col, size)
}

// maxValue is the bound on one value's length.
func (d *cellDecoder) maxValue() uint64 {
	if d.maxVal > 0 {
		return uint64(d.maxVal)
	}
	return MaxValueSize
}

// startText reads the header of a text/ntext/image value (text pointer
// B_VARBYTE, 8-byte timestamp, LONGLEN length; a zero-length text pointer
// is NULL) and streams what is resident of its data.
func (d *cellDecoder) startText(buf []byte, pos int, p *colPlan, col int, maxRes int) (int, error) {
	if pos >= len(buf) {
		return pos, ErrNeedMore
	}
	tp := int(buf[pos])
	if tp == 0 {
		if p.mode != ModeSkip {
			d.sink.Null(col)
		}
		return pos + 1, nil
	}
	h := pos + 1 + tp + 8 // text pointer and timestamp
	if h+4 > len(buf) {
		return pos, ErrNeedMore
	}
	l := int32(binary.LittleEndian.Uint32(buf[h:]))
	if l < 0 || uint64(l) > d.maxValue() {
		return pos, d.fail(col, pos, "text/image length "+strconv.Itoa(int(l))+" out of range")
	}
	if p.utf16 && p.mode == ModeValue && l&1 != 0 {
		return pos, d.fail(col, pos, "odd byte count "+strconv.Itoa(int(l))+" for UTF-16 data")
	}
	lv := &d.lv
	*lv = longValue{active: true, phase: lvTextData, col: col, p: p, known: true,
		total: uint64(l), rem: uint64(l), max: d.maxValue()}
	d.begin(p, col, uint64(l))
	return d.resume(buf, h+4)
}

// resume continues the streamed value d.lv from buf[pos]. It returns the
// position after the value, or ErrNeedMore with the position up to which
// bytes were consumed (parts already delivered are never delivered again).
func (d *cellDecoder) resume(buf []byte, pos int) (int, error) {
	lv := &d.lv
	p := lv.p
	var td *textDecoder
	if p.mode == ModeValue {
		td = p.td
	}
	for {
		switch lv.phase {
		case lvChunkHeader:
			if pos+4 > len(buf) {
				return pos, ErrNeedMore
			}
			cl := uint64(binary.LittleEndian.Uint32(buf[pos:]))
			if cl == 0 {
				if lv.known && lv.got != lv.total {
					lv.active = false
					return pos, d.fail(lv.col, pos, "PLP chunks sum to "+strconv.FormatUint(lv.got, 10)+
						" bytes, the declared length is "+strconv.FormatUint(lv.total, 10))
				}
				return d.finish(pos + 4)
			}
			if lv.known && cl > lv.total-lv.got {
				lv.active = false
				return pos, d.fail(lv.col, pos, "PLP chunk of "+strconv.FormatUint(cl, 10)+
					" bytes exceeds the declared length "+strconv.FormatUint(lv.total, 10))
			}
			if !lv.known && lv.got+cl > lv.max {
				lv.active = false
				return pos, d.failCause(lv.col, pos, "PLP value of unknown length exceeds the value size limit", ErrTooLarge)
			}
			pos += 4
			lv.rem = cl
			lv.phase = lvChunkData
		case lvChunkData, lvTextData:
			if lv.rem > 0 {
				avail := len(buf) - pos
				if avail <= 0 {
					return pos, ErrNeedMore
				}
				k := lv.rem
				if uint64(avail) < k {
					k = uint64(avail)
				}
				if lv.deliver() {
					d.part(lv.col, td, buf[pos:pos+int(k)], false)
				}
				pos += int(k)
				lv.got += k
				lv.rem -= k
				if lv.rem > 0 {
					return pos, ErrNeedMore
				}
			}
			if lv.phase == lvTextData {
				return d.finish(pos)
			}
			lv.phase = lvChunkHeader
		default:
			lv.active = false
			return pos, d.fail(lv.col, pos, "streamed value in an unknown state")
		}
	}
}

// finish ends the streamed value: the checks that need its full length,
// the flush of a character cut at its end, EndValue.
func (d *cellDecoder) finish(pos int) (int, error) {
	lv := &d.lv
	p := lv.p
	lv.active = false
	if p.utf16 && p.mode == ModeValue && lv.got&1 != 0 {
		return pos, d.fail(lv.col, pos, "odd byte count "+strconv.FormatUint(lv.got, 10)+" for UTF-16 data")
	}
	if p.mode == ModeSkip {
		return pos, nil
	}
	if p.mode == ModeValue && p.td != nil {
		d.part(lv.col, p.td, nil, true)
	}
	d.sink.EndValue(lv.col)
	return pos, nil
}
