package decode

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Per-cell decoding (MS-TDS 2.2.5.5 data type definitions, 2.2.7.19 ROW,
// 2.2.7.15 NBCROW). COLMETADATA makes one colPlan per column; the row loop
// switches on the plan's wire shape and, for fixed-size values, on its value
// kind. There is one decoder for every path: Stream rows, DecodeCell (RPC
// parameters, RETURNVALUE) and Capture all run through cellDecoder.cell.

// Wire shapes of a column's values (colPlan.shape).
const (
	shapeFixed   uint8 = iota // fixed-length type: exactly colPlan.size bytes, never NULL
	shapeByteLen              // BYTELEN: 1-byte length, 0 = NULL
	shapeUShort               // USHORTLEN: 2-byte length, 0xFFFF = NULL
	shapePLP                  // PLP (2.2.5.2.3)
	shapeTextPtr              // text/ntext/image: B_VARBYTE text pointer, timestamp, LONGLEN data
	shapeVariant              // sql_variant: LONGLEN (0 = NULL), base type, props, data
	shapeNull                 // NULLTYPE: no bytes, always NULL
)

// Value kinds: how the data bytes of a fixed-size value are interpreted
// (colPlan.vk), and how variable-length data is delivered.
const (
	vkInt       uint8 = iota // 1 (unsigned), 2, 4, 8 bytes LE
	vkBit                    // 1 byte
	vkFloat                  // 4 or 8 bytes IEEE LE
	vkMoney                  // 4 bytes smallmoney, 8 bytes money (high half first)
	vkDateTime               // 4 bytes smalldatetime, 8 bytes datetime
	vkGUID                   // 16 bytes mixed-endian
	vkDecimal                // sign byte + 4/8/12/16-byte LE magnitude
	vkDate                   // 3 bytes
	vkTime                   // 3..5 bytes by scale
	vkDateTime2              // time + date
	vkDTO                    // datetime2 + int16 offset
	vkBytes                  // variable-length: bytes as they are
	vkText                   // variable-length: text through colPlan.td (code page, UTF-8 or UTF-16)
	vkVector                 // USHORTLEN vector: validated header, float32 elements
)

// colPlan is the per-column decoding plan, made once per COLMETADATA.
type colPlan struct {
	shape uint8
	vk    uint8
	mode  Mode
	size  uint8      // shapeFixed: bytes; time kinds: length of the time part; fastDecimal: the value's length
	lens  uint32     // shapeByteLen: bit l set = length l allowed (besides 0 = NULL)
	max   uint32     // USHORTLEN/LONGLEN declared maximum length in bytes
	scale uint8      // time scale, or decimal scale
	prec  uint8      // decimal precision
	dmask uint64     // fastDecimal: the magnitude's bytes in a 64-bit load
	dmax  uint64     // fastDecimal: the largest magnitude of the precision
	utf16 bool       // byte counts must be even
	slot  **[]uint64 // the sink lent the column's memory (LendSink): its entry in the slots, or nil
	fast  uint8      // fastIntN, fastText, fastBytes or 0: the row loop's inlined cases
	td    *textDecoder
	ti    *TypeInfo
}

// planFastPaths enables the inlined row-loop cases; only the A/B benchmark
// that measures them turns it off (export_test.go).
var planFastPaths = true

// Inlined row-loop cases (colPlan.fast), set for ModeValue columns of the
// commonest shapes; anything unusual in a value falls back to cell().
const (
	fastNone    uint8 = iota
	fastIntN          // INTN
	fastText          // USHORTLEN char data (single-byte, double-byte or UTF-8 code page)
	fastBytes         // USHORTLEN binary
	fastSkip1         // skipped BYTELEN column
	fastSkip2         // skipped USHORTLEN column
	fastByteLen       // other BYTELEN fixed-size values (FLTN, DECIMALN, DATETIME2N, GUID, ...)
	fastFixed         // fixed-length types
	fastNText         // USHORTLEN nchar data (UTF-16)
	fastInt4          // int (fixed length)
	fastInt8          // bigint (fixed length)
	fastDecimal       // DECIMALN/NUMERICN of precision up to 19 (a 4- or 8-byte magnitude)
	fastDate          // DATEN
	fastDT8           // datetime (fixed length)
)

// makePlan fills p for one column of type ti with mode m. td must be
// non-nil storage for a text decoder; it is used when the type carries text.
// An unsupported type is an error naming it.
func makePlan(p *colPlan, ti *TypeInfo, m Mode, td *textDecoder) error {
	*p = colPlan{ti: ti, mode: m}
	fixed := func(vk, n uint8) { p.shape, p.vk, p.size = shapeFixed, vk, n }
	byteLen := func(vk uint8, lens ...uint8) {
		p.shape, p.vk = shapeByteLen, vk
		for _, l := range lens {
			// A value may be shorter than the declared length (e.g. an
			// INTN(8) column holding a 4-byte value), never longer.
			if ti.Size == 0 || uint32(l) <= ti.Size {
				p.lens |= 1 << l
			}
		}
	}
	text := func(c Collation) {
		td.init(c)
		p.td = td
		p.vk = vkText
	}
	utf16 := func() {
		*td = textDecoder{kind: textUTF16}
		p.td = td
		p.vk = vkText
		p.utf16 = true
	}
	switch ti.Type {
	case TypeNull:
		p.shape = shapeNull
	case TypeInt1:
		fixed(vkInt, 1)
	case TypeInt2:
		fixed(vkInt, 2)
	case TypeInt4:
		fixed(vkInt, 4)
	case TypeInt8:
		fixed(vkInt, 8)
	case TypeBit:
		fixed(vkBit, 1)
	case TypeFlt4:
		fixed(vkFloat, 4)
	case TypeFlt8:
		fixed(vkFloat, 8)
	case TypeMoney4:
		fixed(vkMoney, 4)
	case TypeMoney:
		fixed(vkMoney, 8)
	case TypeDateTim4:
		fixed(vkDateTime, 4)
	case TypeDateTime:
		fixed(vkDateTime, 8)
	case TypeIntN:
		byteLen(vkInt, 1, 2, 4, 8)
	case TypeBitN:
		byteLen(vkBit, 1)
	case TypeFltN:
		byteLen(vkFloat, 4, 8)
	case TypeMoneyN:
		byteLen(vkMoney, 4, 8)
	case TypeDateTimeN:
		byteLen(vkDateTime, 4, 8)
	case TypeGUID:
		byteLen(vkGUID, 16)
	case TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy:
		if ti.Precision < 1 || ti.Precision > 38 || ti.Scale > ti.Precision {
			return errPlan("decimal precision/scale out of range")
		}
		p.prec, p.scale = ti.Precision, ti.Scale
		byteLen(vkDecimal, 5, 9, 13, 17)
	case TypeDateN:
		byteLen(vkDate, 3)
	case TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
		if ti.Scale > 7 {
			return errPlan("time scale greater than 7")
		}
		p.scale = ti.Scale
		p.size = uint8(TimeLen(ti.Scale))
		switch ti.Type {
		case TypeTimeN:
			byteLen(vkTime, p.size)
		case TypeDateTime2N:
			byteLen(vkDateTime2, p.size+3)
		default:
			byteLen(vkDTO, p.size+5)
		}
	case TypeChar, TypeVarChar:
		// Legacy BYTELEN char types.
		text(ti.Collation)
		p.shape = shapeByteLen
		p.lens = ^uint32(0)
		p.max = 255
	case TypeBinary, TypeVarBinary:
		p.shape, p.vk, p.lens, p.max = shapeByteLen, vkBytes, ^uint32(0), 255
	case TypeBigVarBinary, TypeBigBinary, TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		switch ti.Type {
		case TypeBigVarChar, TypeBigChar:
			text(ti.Collation)
		case TypeNVarChar, TypeNChar:
			utf16()
		default:
			p.vk = vkBytes
		}
		if ti.Size == MaxVarLen && (ti.Type == TypeBigVarBinary || ti.Type == TypeBigVarChar || ti.Type == TypeNVarChar) {
			p.shape = shapePLP
		} else {
			if ti.Size > 8000 {
				return errPlan("declared length greater than 8000")
			}
			p.shape = shapeUShort
			p.max = ti.Size
		}
	case TypeXML:
		utf16()
		p.shape = shapePLP
	case TypeJSON:
		// JSON is UTF-8 (MS-TDS 2.2.5.5.6): validated like a UTF-8 collation.
		*td = textDecoder{kind: textUTF8}
		p.td, p.vk, p.shape = td, vkText, shapePLP
	case TypeUDT:
		p.shape, p.vk = shapePLP, vkBytes
	case TypeVector:
		if ti.Scale > 1 {
			return errPlan("unknown vector element type")
		}
		p.shape, p.vk, p.max, p.scale = shapeUShort, vkVector, ti.Size, ti.Scale
		if ti.Size > 8000 {
			return errPlan("declared length greater than 8000")
		}
	case TypeText:
		text(ti.Collation)
		p.shape = shapeTextPtr
	case TypeNText:
		utf16()
		p.shape = shapeTextPtr
	case TypeImage:
		p.shape, p.vk = shapeTextPtr, vkBytes
	case TypeVariant:
		p.shape = shapeVariant
		p.max = ti.Size
		if p.max == 0 || p.max > MaxVariantLen {
			p.max = MaxVariantLen
		}
	default:
		return errPlan("unsupported data type 0x" + wireHex(ti.Type))
	}
	if !planFastPaths {
		return nil
	}
	if m == ModeSkip {
		switch p.shape {
		case shapeByteLen:
			p.fast = fastSkip1
		case shapeUShort:
			p.fast = fastSkip2
		}
	}
	if m == ModeValue {
		switch {
		case ti.Type == TypeIntN:
			p.fast = fastIntN
		case ti.Type == TypeInt4:
			p.fast = fastInt4
		case ti.Type == TypeInt8:
			p.fast = fastInt8
		case ti.Type == TypeDateTime:
			p.fast = fastDT8
		case ti.Type == TypeDateN && p.lens&(1<<3) != 0:
			p.fast = fastDate
		case p.vk == vkDecimal && p.prec <= 19:
			// SQL Server sends a value of precision up to 9 as a sign byte
			// and 4 bytes, up to 19 as a sign byte and 8 bytes.
			l, mask := uint8(5), uint64(math.MaxUint32)
			if p.prec > 9 {
				l, mask = 9, math.MaxUint64
			}
			p.fast = fastByteLen
			if p.lens&(1<<l) != 0 {
				p.fast, p.size, p.dmask, p.dmax = fastDecimal, l, mask, maxMagnitude[p.prec][1]
			}
		case p.shape == shapeUShort && p.vk == vkBytes:
			p.fast = fastBytes
		case p.shape == shapeUShort && p.vk == vkText && p.utf16:
			p.fast = fastNText
		case p.shape == shapeUShort && p.vk == vkText:
			p.fast = fastText
		case p.shape == shapeByteLen && p.vk < vkBytes:
			p.fast = fastByteLen
		case p.shape == shapeFixed:
			p.fast = fastFixed
		}
	}
	return nil
}

// planError is a plan failure, turned into a *ProtocolError by the caller,
// which knows token, column and offset.
type planError string

func (e planError) Error() string { return string(e) }

func errPlan(msg string) error { return planError(msg) }

// cellDecoder decodes cells into a sink. It is embedded in Stream and built
// on the stack by DecodeCell.
type cellDecoder struct {
	sink    CellSink
	bs      BytesSink   // sink's fast path for whole values, or nil
	us      UTF16Sink   // sink's fast path for whole UTF-16 text, or nil
	ls      LendSink    // sink that lends its fixed-width column memory, or nil
	lv      longValue   // the streamed value in progress, if lv.active
	scratch []byte      // transcoding target when the sink declines Reserve
	vti     TypeInfo    // sql_variant base type, handed to Sink.Variant
	vtd     textDecoder // sql_variant char text decoder (kept while the collation repeats)
	vtd16   textDecoder // sql_variant nchar text decoder
	vplan   colPlan     // sql_variant base value plan

	maxVal int64 // bound on one value's length; 0 = MaxValueSize

	// Error context, set by the caller: the stream offset of buf[0], the
	// token being decoded and a name for it.
	base  int64
	tok   byte
	where string
}

// fail builds the protocol error of column col at buffer position pos.
func (d *cellDecoder) fail(col, pos int, msg string) error {
	return d.failCause(col, pos, msg, nil)
}

// failCause is fail with a cause for ProtocolError.Err (ErrTooLarge).
func (d *cellDecoder) failCause(col, pos int, msg string, cause error) *ProtocolError {
	w := d.where
	if w == "" {
		w = tokenName(d.tok) // rows: the where is derived from the token
	}
	if col >= 0 {
		w += " column " + strconv.Itoa(col)
	}
	return &ProtocolError{Token: d.tok, Where: w, Offset: d.base + int64(pos), Msg: msg, Err: cause}
}

// cell decodes the value of column col starting at buf[pos] and returns the
// position after it. With ErrNeedMore the returned position is where
// decoding stopped: the cell's start if nothing was delivered, or, for a
// streamed value (PLP, text/ntext/image), past the parts already delivered
// with d.lv.active set so that resume continues it. maxRes bounds the bytes
// one value may need resident (the residency cap).
func (d *cellDecoder) cell(buf []byte, pos int, p *colPlan, col int, maxRes int) (int, error) {
	switch p.shape {
	case shapeByteLen:
		if pos >= len(buf) {
			return pos, ErrNeedMore
		}
		l := int(buf[pos])
		end := pos + 1 + l
		if end > len(buf) {
			return pos, ErrNeedMore
		}
		if l == 0 {
			if p.mode != ModeSkip {
				d.sink.Null(col)
			}
			return end, nil
		}
		if l > 31 && p.lens != ^uint32(0) || l <= 31 && p.lens&(1<<uint(l)) == 0 {
			return pos, d.fail(col, pos, "invalid length "+strconv.Itoa(l)+" for data type 0x"+wireHex(p.ti.Type))
		}
		switch p.mode {
		case ModeValue:
			if p.vk >= vkBytes {
				d.whole(col, p.td, buf[pos+1:end])
				return end, nil
			}
			if err := d.value(p, col, buf[pos+1:end]); err != "" {
				return pos, d.fail(col, pos, err)
			}
		case ModeRaw:
			d.raw(col, buf[pos+1:end])
		}
		return end, nil

	case shapeFixed:
		end := pos + int(p.size)
		if end > len(buf) {
			return pos, ErrNeedMore
		}
		switch p.mode {
		case ModeValue:
			if err := d.value(p, col, buf[pos:end]); err != "" {
				return pos, d.fail(col, pos, err)
			}
		case ModeRaw:
			d.raw(col, buf[pos:end])
		}
		return end, nil

	case shapeUShort:
		if pos+2 > len(buf) {
			return pos, ErrNeedMore
		}
		l := int(binary.LittleEndian.Uint16(buf[pos:]))
		if l == 0xFFFF {
			if p.mode != ModeSkip {
				d.sink.Null(col)
			}
			return pos + 2, nil
		}
		if l+2 > maxRes {
			return pos, d.tooLarge(col, pos, l+2)
		}
		end := pos + 2 + l
		if end > len(buf) {
			return pos, ErrNeedMore
		}
		if uint32(l) > p.max {
			return pos, d.fail(col, pos, "value length "+strconv.Itoa(l)+" exceeds the declared maximum "+strconv.Itoa(int(p.max)))
		}
		if p.utf16 && l&1 != 0 {
			return pos, d.fail(col, pos, "odd byte count "+strconv.Itoa(l)+" for UTF-16 data")
		}
		switch p.mode {
		case ModeValue:
			v := buf[pos+2 : end]
			if p.vk == vkVector {
				if err := d.vector(p, col, v); err != "" {
					return pos, d.fail(col, pos, err)
				}
				return end, nil
			}
			d.whole(col, p.td, v)
		case ModeRaw:
			d.raw(col, buf[pos+2:end])
		}
		return end, nil

	case shapePLP:
		return d.startPLP(buf, pos, p, col)

	case shapeTextPtr:
		return d.startText(buf, pos, p, col, maxRes)

	case shapeVariant:
		if pos+4 > len(buf) {
			return pos, ErrNeedMore
		}
		l := binary.LittleEndian.Uint32(buf[pos:])
		if l == 0 {
			if p.mode != ModeSkip {
				d.sink.Null(col)
			}
			return pos + 4, nil
		}
		if l > p.max {
			return pos, d.fail(col, pos, "sql_variant length "+strconv.FormatUint(uint64(l), 10)+" exceeds the declared maximum")
		}
		if int(l)+4 > maxRes {
			return pos, d.tooLarge(col, pos, int(l)+4)
		}
		end := pos + 4 + int(l)
		if end > len(buf) {
			return pos, ErrNeedMore
		}
		switch p.mode {
		case ModeValue:
			if err := d.variant(col, buf[pos+4:end]); err != "" {
				return pos, d.fail(col, pos, err)
			}
		case ModeRaw:
			d.raw(col, buf[pos+4:end])
		}
		return end, nil
	}
	if p.shape == shapeNull {
		if p.mode != ModeSkip {
			d.sink.Null(col)
		}
		return pos, nil
	}
	return pos, d.fail(col, pos, "no plan for the column")
}

func (d *cellDecoder) tooLarge(col, pos, n int) error {
	return d.failCause(col, pos, "value of "+strconv.Itoa(n)+" bytes exceeds the residency cap", ErrTooLarge)
}

// setSink sets the sink and finds its optional fast paths.
func (d *cellDecoder) setSink(sink CellSink) {
	d.sink = sink
	d.bs, _ = sink.(BytesSink)
	d.us, _ = sink.(UTF16Sink)
	d.ls, _ = sink.(LendSink)
}

// raw delivers b as one variable-length value (ModeRaw).
func (d *cellDecoder) raw(col int, b []byte) { d.whole(col, nil, b) }

// whole delivers b, a complete resident variable-length value: bytes as
// they are when td is nil, else text decoded by td. A value that needs no
// transcoding goes to a BytesSink as one call, UTF-16 text to a UTF16Sink.
func (d *cellDecoder) whole(col int, td *textDecoder, b []byte) {
	if td != nil && td.kind == textUTF16 && d.us != nil {
		d.us.UTF16(col, b)
		return
	}
	asIs := td == nil || td.exact(b)
	if asIs && d.bs != nil {
		d.bs.Bytes(col, b)
		return
	}
	d.sink.BeginValue(col, int64(len(b)))
	if asIs {
		d.copyPart(col, b)
	} else {
		d.decodePart(col, td, b, true)
	}
	d.sink.EndValue(col)
}

// part delivers one part of a variable-length value: bytes as they are when
// td is nil, else text decoded by td (final flushes a character cut at the
// end).
func (d *cellDecoder) part(col int, td *textDecoder, b []byte, final bool) {
	if td == nil || td.exact(b) {
		d.copyPart(col, b)
		return
	}
	d.decodePart(col, td, b, final)
}

// copyPart delivers b as it is: copied into memory reserved from the sink,
// or, when the sink declines, handed over as a borrowed slice.
func (d *cellDecoder) copyPart(col int, b []byte) {
	if len(b) == 0 {
		return
	}
	if dst := d.sink.Reserve(col, len(b)); len(dst) >= len(b) {
		copy(dst, b)
		d.sink.Commit(col, len(b))
		return
	}
	d.sink.Write(col, b)
}

// decodePart delivers b decoded by td, into memory reserved from the sink
// or, when the sink declines, through d.scratch.
func (d *cellDecoder) decodePart(col int, td *textDecoder, b []byte, final bool) {
	if len(b) == 0 && (!final || td.ncarry == 0 && td.hi == 0) {
		return
	}
	n := td.maxOut(len(b))
	if dst := d.sink.Reserve(col, n); len(dst) >= n {
		m := td.decode(dst, b, final)
		d.sink.Commit(col, m)
		return
	}
	if cap(d.scratch) < n {
		d.scratch = make([]byte, n+n/4)
	}
	m := td.decode(d.scratch[:n], b, final)
	if m > 0 {
		d.sink.Write(col, d.scratch[:m])
	}
}

// value decodes the data bytes b of a fixed-size value (length already
// checked against the plan) through the typed calls. It returns a non-empty
// message for an impossible value.
func (d *cellDecoder) value(p *colPlan, col int, b []byte) string {
	s := d.sink
	switch p.vk {
	case vkInt:
		switch len(b) {
		case 1:
			s.Int(col, int64(b[0]))
		case 2:
			s.Int(col, int64(int16(binary.LittleEndian.Uint16(b))))
		case 4:
			s.Int(col, int64(int32(binary.LittleEndian.Uint32(b))))
		case 8:
			s.Int(col, int64(binary.LittleEndian.Uint64(b)))
		default:
			return "invalid integer length"
		}
	case vkBit:
		s.Bool(col, b[0] != 0)
	case vkFloat:
		if len(b) == 4 {
			s.Float32(col, math.Float32frombits(binary.LittleEndian.Uint32(b)))
		} else {
			s.Float64(col, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
	case vkMoney:
		if len(b) == 4 {
			s.Money(col, int64(int32(binary.LittleEndian.Uint32(b))))
		} else {
			// money: the high 32 bits come first (2.2.5.5.1.4).
			hi := int64(int32(binary.LittleEndian.Uint32(b)))
			lo := int64(binary.LittleEndian.Uint32(b[4:]))
			s.Money(col, hi<<32|lo)
		}
	case vkDateTime:
		dt, err := legacyDateTime(b)
		if err != "" {
			return err
		}
		s.DateTime(col, dt)
	case vkGUID:
		s.GUID(col, guidFromWire(b))
	case vkDecimal:
		// A sign byte and a magnitude of 4 or 8 bytes (precision up to
		// 19, the common case) is delivered here, without the general
		// path's call: that call and its two-value result cost a quarter
		// of the decoding of a row of small decimals. Anything the fast
		// path does not accept goes the general way, errors included.
		if len(b) == 5 || len(b) == 9 {
			var lo uint64
			if len(b) == 5 {
				lo = uint64(binary.LittleEndian.Uint32(b[1:]))
			} else {
				lo = binary.LittleEndian.Uint64(b[1:])
			}
			if m := &maxMagnitude[min(p.prec, 38)]; b[0] <= 1 && (m[0] > 0 || lo <= m[1]) {
				s.Decimal(col, Decimal{Lo: lo, Neg: b[0] == 0 && lo != 0, Scale: p.scale, Precision: p.prec})
				break
			}
		}
		v, err := decimalFromWire(b, p.prec, p.scale)
		if err != "" {
			return err
		}
		s.Decimal(col, v)
	case vkDate:
		days, err := dateFromWire(b)
		if err != "" {
			return err
		}
		s.Date(col, int32(days))
	case vkTime:
		t, err := timeFromWire(b, p.scale)
		if err != "" {
			return err
		}
		s.Time(col, t)
	case vkDateTime2:
		v, err := dateTime2FromWire(b, p.scale)
		if err != "" {
			return err
		}
		s.DateTime(col, v)
	case vkDTO:
		n := len(b) - 2
		v, err := dateTime2FromWire(b[:n], p.scale)
		if err != "" {
			return err
		}
		off := int16(binary.LittleEndian.Uint16(b[n:]))
		if off < -840 || off > 840 {
			return "datetimeoffset offset " + strconv.Itoa(int(off)) + " outside -840..840 minutes"
		}
		s.DateTimeOffset(col, DateTimeOffset{UTC: v, OffsetMin: off})
	default:
		return "value kind has no fixed-size form"
	}
	return ""
}

// Calendar constants of the value conversions.
const (
	cellMaxDate     = 3652058 // 9999-12-31 as days since 0001-01-01
	cellEpoch1900   = 693595  // 1900-01-01 as days since 0001-01-01
	cellMinDateTime = -53690  // 1753-01-01 as days since 1900-01-01
	cellMaxDateTime = 2958463 // 9999-12-31 as days since 1900-01-01
)

// legacyDateTime decodes datetime (8 bytes: days since 1900-01-01, 1/300 s
// ticks) and smalldatetime (4 bytes: days since 1900-01-01, minutes)
// (2.2.5.5.1.8).
func legacyDateTime(b []byte) (DateTime, string) {
	if len(b) == 4 {
		days := int32(binary.LittleEndian.Uint16(b))
		mins := int64(binary.LittleEndian.Uint16(b[2:]))
		if mins >= 1440 {
			return DateTime{}, "smalldatetime minutes " + strconv.Itoa(int(mins)) + " outside a day"
		}
		return DateTime{Days: days + cellEpoch1900, Ticks: mins * 600_000_000}, ""
	}
	days := int32(binary.LittleEndian.Uint32(b))
	t := int64(binary.LittleEndian.Uint32(b[4:]))
	if days < cellMinDateTime || days > cellMaxDateTime {
		return DateTime{}, "datetime day " + strconv.Itoa(int(days)) + " outside 1753-01-01..9999-12-31"
	}
	if t >= 300*86400 {
		return DateTime{}, "datetime ticks " + strconv.FormatInt(t, 10) + " outside a day"
	}
	// 1/300 s to 100 ns: t*100000/3, rounded half up as SQL Server does
	// when it converts datetime to datetime2(7) (.003 -> .0033333,
	// .007 -> .0066667).
	return DateTime{Days: days + cellEpoch1900, Ticks: (t*100000 + 1) / 3}, ""
}

func dateFromWire(b []byte) (int32, string) {
	days := int32(b[0]) | int32(b[1])<<8 | int32(b[2])<<16
	if days > cellMaxDate {
		return 0, dateAfterMax(days)
	}
	return days, ""
}

func dateAfterMax(days int32) string {
	return "date " + strconv.Itoa(int(days)) + " after 9999-12-31"
}

const errTimeOutsideDay = "time value outside a day"

// dateTime2FromWire decodes the time and date parts of a datetime2 (or
// of a datetimeoffset before its offset). Scales 5 to 7, whose time part
// is 5 bytes, take one 8-byte load for both parts instead of a loop over
// the time's bytes.
func dateTime2FromWire(b []byte, scale uint8) (DateTime, string) {
	if len(b) == 8 {
		w := binary.LittleEndian.Uint64(b)
		t := int64(w&(1<<40-1)) * timeScale10[scale&7]
		if t >= TicksPerDay {
			return DateTime{}, errTimeOutsideDay
		}
		days := int32(w >> 40)
		if days > cellMaxDate {
			return DateTime{}, dateAfterMax(days)
		}
		return DateTime{Days: days, Ticks: t}, ""
	}
	n := len(b) - 3
	t, err := timeFromWire(b[:n], scale)
	if err != "" {
		return DateTime{}, err
	}
	days, err := dateFromWire(b[n:])
	if err != "" {
		return DateTime{}, err
	}
	return DateTime{Days: days, Ticks: t}, ""
}

// timeScale10 holds 10^(7-scale): the 100 ns ticks of one unit of a time(scale).
var timeScale10 = [8]int64{10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1}

func timeFromWire(b []byte, scale uint8) (int64, string) {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	t := int64(v) * timeScale10[scale&7]
	if t >= TicksPerDay {
		return 0, errTimeOutsideDay
	}
	return t, ""
}

// guidFromWire turns the wire's mixed-endian GUID into RFC 4122 byte order.
func guidFromWire(b []byte) GUID {
	// Byte-swapped loads and stores rather than sixteen byte moves.
	var g GUID
	_ = b[15]
	binary.BigEndian.PutUint32(g[0:], binary.LittleEndian.Uint32(b))
	binary.BigEndian.PutUint16(g[4:], binary.LittleEndian.Uint16(b[4:]))
	binary.BigEndian.PutUint16(g[6:], binary.LittleEndian.Uint16(b[6:]))
	binary.LittleEndian.PutUint64(g[8:], binary.LittleEndian.Uint64(b[8:]))
	return g
}

// decimalFromWire decodes a DECIMALN/NUMERICN value: sign byte (1 = positive,
// 0 = negative) and a little-endian magnitude of 4, 8, 12 or 16 bytes
// (2.2.5.5.1.6). The magnitude must fit the precision.
func decimalFromWire(b []byte, prec, scale uint8) (Decimal, string) {
	var v Decimal
	switch b[0] {
	case 0:
		v.Neg = true
	case 1:
	default:
		return v, "decimal sign byte " + strconv.Itoa(int(b[0])) + " is neither 0 nor 1"
	}
	m := b[1:]
	switch len(m) {
	case 4:
		v.Lo = uint64(binary.LittleEndian.Uint32(m))
	case 8:
		v.Lo = binary.LittleEndian.Uint64(m)
	case 12:
		v.Lo = binary.LittleEndian.Uint64(m)
		v.Hi = uint64(binary.LittleEndian.Uint32(m[8:]))
	case 16:
		v.Lo = binary.LittleEndian.Uint64(m)
		v.Hi = binary.LittleEndian.Uint64(m[8:])
	default:
		return v, "invalid decimal length"
	}
	// a 64-bit magnitude fits every precision from 20 up; at 19 it can
	// exceed 10^19-1
	if (v.Hi != 0 || prec <= 19) && !fitsPrecision(v.Hi, v.Lo, prec) {
		return v, "decimal magnitude exceeds precision " + strconv.Itoa(int(prec))
	}
	if v.Hi == 0 && v.Lo == 0 {
		v.Neg = false // "-0" is 0
	}
	v.Scale, v.Precision = scale, prec
	return v, ""
}

// vector delivers a VECTOR value (0xF5): the 8-byte header A9 01 <dims u16>
// <element type> 00 00 00 is checked against the column metadata and the
// elements are delivered as little-endian float32 bytes (float16 elements
// are widened).
func (d *cellDecoder) vector(p *colPlan, col int, v []byte) string {
	if len(v) < 8 || v[0] != 0xA9 || v[1] != 0x01 || v[5] != 0 || v[6] != 0 || v[7] != 0 {
		return "malformed vector header"
	}
	dims := int(binary.LittleEndian.Uint16(v[2:]))
	et := v[4]
	if et != p.scale {
		return "vector element type " + strconv.Itoa(int(et)) + " differs from the column's " + strconv.Itoa(int(p.scale))
	}
	esz := 4
	if et == 1 {
		esz = 2
	}
	if len(v) != 8+dims*esz || uint32(len(v)) != p.max {
		return "vector length " + strconv.Itoa(len(v)) + " does not match " + strconv.Itoa(dims) + " dimensions and the column's length " + strconv.Itoa(int(p.max))
	}
	els := v[8:]
	if esz == 4 && d.bs != nil {
		d.bs.Bytes(col, els)
		return ""
	}
	d.sink.BeginValue(col, int64(len(v)))
	if esz == 4 {
		d.copyPart(col, els)
	} else {
		n := dims * 4
		dst := d.sink.Reserve(col, n)
		borrowed := len(dst) < n
		if borrowed {
			if cap(d.scratch) < n {
				d.scratch = make([]byte, n)
			}
			dst = d.scratch[:n]
		}
		for i := 0; i < dims; i++ {
			f := float16to32(binary.LittleEndian.Uint16(els[2*i:]))
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(f))
		}
		if borrowed {
			d.sink.Write(col, dst)
		} else {
			d.sink.Commit(col, n)
		}
	}
	d.sink.EndValue(col)
	return ""
}

// float16to32 widens an IEEE 754 binary16 value.
func float16to32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1F
	frac := uint32(h) & 0x3FF
	switch {
	case exp == 0x1F: // Inf, NaN
		return math.Float32frombits(sign | 0xFF<<23 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: frac * 2^-24.
		f := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// variant decodes a sql_variant value v (after its LONGLEN): base type,
// property bytes, properties, data (2.2.5.5.4). The sink gets Variant with
// the base type, then the base value's own call.
func (d *cellDecoder) variant(col int, v []byte) string {
	if len(v) < 2 {
		return "sql_variant shorter than its header"
	}
	bt, np := v[0], int(v[1])
	if 2+np > len(v) {
		return "sql_variant property bytes exceed the value"
	}
	props, data := v[2:2+np], v[2+np:]
	ti := &d.vti
	*ti = TypeInfo{Type: bt}
	want := 0
	switch bt {
	case TypeInt1, TypeBit, TypeInt2, TypeInt4, TypeInt8, TypeFlt4, TypeFlt8,
		TypeMoney, TypeMoney4, TypeDateTime, TypeDateTim4, TypeGUID, TypeDateN:
	case TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
		want = 1
		if np == 1 {
			ti.Scale = props[0]
		}
	case TypeDecimalN, TypeNumericN:
		want = 2
		if np == 2 {
			ti.Precision, ti.Scale = props[0], props[1]
		}
	case TypeBigVarBinary, TypeBigBinary:
		want = 2
		if np == 2 {
			ti.Size = uint32(binary.LittleEndian.Uint16(props))
		}
	case TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		want = 7
		if np == 7 {
			ti.Collation = Collation{Info: binary.LittleEndian.Uint32(props), SortID: props[4]}
			ti.Size = uint32(binary.LittleEndian.Uint16(props[5:]))
		}
	default:
		return "sql_variant base type 0x" + wireHex(bt) + " is not allowed"
	}
	if np != want {
		return "sql_variant base type 0x" + wireHex(bt) + " with " + strconv.Itoa(np) + " property bytes"
	}
	if ti.Size == MaxVarLen {
		return "sql_variant base type with (max) length"
	}
	p := &d.vplan
	var td *textDecoder
	switch bt {
	case TypeBigVarChar, TypeBigChar:
		td = &d.vtd
	case TypeNVarChar, TypeNChar:
		td = &d.vtd16
	}
	if err := makePlan(p, ti, ModeValue, td); err != nil {
		return "sql_variant: " + err.Error()
	}
	switch p.shape {
	case shapeFixed:
		if len(data) != int(p.size) {
			return "sql_variant data length does not match its base type"
		}
	case shapeByteLen:
		if len(data) > 31 || p.lens&(1<<uint(len(data))) == 0 {
			return "sql_variant data length does not match its base type"
		}
	case shapeUShort:
		if uint32(len(data)) > p.max {
			return "sql_variant data longer than its declared maximum"
		}
		if p.utf16 && len(data)&1 != 0 {
			return "odd byte count for UTF-16 data"
		}
	}
	d.sink.Variant(col, ti)
	if p.vk >= vkBytes {
		d.whole(col, p.td, data)
		return ""
	}
	return d.value(p, col, data)
}

// DecodeCell decodes one complete value of type ti from src (length prefix,
// PLP framing or text pointer included) into sink as column col, with
// ModeValue semantics, and returns the bytes it took. It is the decoder of
// RPC parameters and RETURNVALUE tokens. If src does not hold the whole value
// it returns ErrNeedMore and delivers nothing; a malformed value is a
// *ProtocolError (Offset relative to src). With a nil sink it only checks
// the value's framing and returns its length.
func DecodeCell(src []byte, ti *TypeInfo, col int, sink CellSink) (n int, err error) {
	var d cellDecoder
	var td textDecoder
	var p colPlan
	d.where = "value"
	if err := makePlan(&p, ti, ModeSkip, &td); err != nil {
		return 0, &ProtocolError{Where: "value TYPE_INFO", Msg: err.Error()}
	}
	if n, err = d.complete(src, &p, col); err != nil {
		return 0, err
	}
	if sink == nil {
		return n, nil
	}
	d.setSink(sink)
	p.mode = ModeValue
	if _, err = d.complete(src[:n], &p, col); err != nil {
		return 0, err
	}
	return n, nil
}

// complete decodes a value that must be whole in src.
func (d *cellDecoder) complete(src []byte, p *colPlan, col int) (int, error) {
	n, err := d.cell(src, 0, p, col, int(^uint(0)>>1))
	if err == ErrNeedMore {
		d.lv.active = false
	}
	return n, err
}
