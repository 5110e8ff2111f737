package decode

import (
	"encoding/binary"
	"strconv"
)

// TYPE_INFO (MS-TDS 2.2.5.6) and the wire length of one value
// (TYPE_VARBYTE, 2.2.5.2.3).

// TypeTVP is the table-valued parameter type (2.2.5.5.5); it only appears in
// RPC requests and is not supported by this package.
const TypeTVP byte = 0xF3

// CollationLen is the size of a COLLATION on the wire (2.2.5.1.2).
const CollationLen = 5

// Decode parses a 5-byte COLLATION: a little-endian DWORD (LCID, flags,
// version) then SortId. b must hold at least 5 bytes.
func (c *Collation) Decode(b []byte) error {
	if len(b) < CollationLen {
		return ErrNeedMore
	}
	c.Info = binary.LittleEndian.Uint32(b)
	c.SortID = b[4]
	return nil
}

// Append appends the 5-byte COLLATION.
func (c Collation) Append(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, c.Info)
	return append(dst, c.SortID)
}

// tiFixedLen returns the value size of a fixed-length type, or 0.
func tiFixedLen(t byte) int {
	switch t {
	case TypeInt1, TypeBit:
		return 1
	case TypeInt2:
		return 2
	case TypeInt4, TypeDateTim4, TypeFlt4, TypeMoney4:
		return 4
	case TypeMoney, TypeDateTime, TypeFlt8, TypeInt8:
		return 8
	}
	return 0
}

// tiValueLen returns the exact non-NULL value length of a BYTELEN type whose
// length is implied by its TYPE_INFO (date and time types), or 0.
func tiValueLen(ti *TypeInfo) int {
	switch ti.Type {
	case TypeDateN:
		return 3
	case TypeTimeN:
		return TimeLen(ti.Scale)
	case TypeDateTime2N:
		return TimeLen(ti.Scale) + 3
	case TypeDateTimeOffset:
		return TimeLen(ti.Scale) + 5
	}
	return 0
}

// tiDecimalSizeOK reports whether n is a valid DECIMALN/NUMERICN length.
func tiDecimalSizeOK(n int) bool { return n == 5 || n == 9 || n == 13 || n == 17 }

// DecodeTypeInfo decodes a TYPE_INFO as servers send it (COLMETADATA,
// RETURNVALUE, ALTMETADATA). It returns ErrNeedMore if src is short and a
// *ProtocolError (Where "TYPE_INFO", Offset relative to src) for an unknown
// type or an impossible declaration. For text, ntext and image it stops
// after the collation: the TableName that follows in COLMETADATA is not part
// of TYPE_INFO. Names (UDT, XML schema) are copied.
func DecodeTypeInfo(src []byte, ti *TypeInfo) (n int, err error) {
	return decodeTypeInfo(src, ti, false)
}

// DecodeParamTypeInfo decodes a TYPE_INFO as clients send it in an RPC
// parameter: identical except that UDT_INFO is UDT_INFO_IN_RPC (database,
// schema and type name only; no MAX_BYTE_SIZE, no assembly name).
func DecodeParamTypeInfo(src []byte, ti *TypeInfo) (n int, err error) {
	return decodeTypeInfo(src, ti, true)
}

func decodeTypeInfo(src []byte, ti *TypeInfo, rpc bool) (int, error) {
	*ti = TypeInfo{}
	r := msgReader{b: src, where: "TYPE_INFO"}
	ti.Type = r.u8()
	if r.err != nil {
		return 0, r.err
	}
	bad := func(off int, msg string) (int, error) {
		return 0, protoErr(0, "TYPE_INFO", off, "type 0x"+wireHex(ti.Type)+": "+msg)
	}
	switch t := ti.Type; t {
	case TypeNull, TypeInt1, TypeBit, TypeInt2, TypeInt4, TypeDateTim4, TypeFlt4,
		TypeMoney, TypeDateTime, TypeFlt8, TypeMoney4, TypeInt8:
		// FIXEDLENTYPE: nothing follows.
	case TypeIntN, TypeBitN, TypeFltN, TypeMoneyN, TypeDateTimeN, TypeGUID:
		sz := int(r.u8())
		if r.err != nil {
			return 0, r.err
		}
		ok := false
		switch t {
		case TypeIntN:
			ok = sz == 1 || sz == 2 || sz == 4 || sz == 8
		case TypeBitN:
			ok = sz == 1
		case TypeFltN, TypeMoneyN, TypeDateTimeN:
			ok = sz == 4 || sz == 8
		case TypeGUID:
			ok = sz == 16
		}
		if !ok {
			return bad(1, "impossible length "+strconv.Itoa(sz))
		}
		ti.Size = uint32(sz)
	case TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy:
		sz := int(r.u8())
		ti.Precision = r.u8()
		ti.Scale = r.u8()
		if r.err != nil {
			return 0, r.err
		}
		if !tiDecimalSizeOK(sz) {
			return bad(1, "impossible length "+strconv.Itoa(sz)+" (want 5, 9, 13 or 17)")
		}
		if ti.Precision < 1 || ti.Precision > 38 {
			return bad(2, "precision "+strconv.Itoa(int(ti.Precision))+" outside 1..38")
		}
		if ti.Scale > ti.Precision {
			return bad(3, "scale "+strconv.Itoa(int(ti.Scale))+" exceeds precision "+strconv.Itoa(int(ti.Precision)))
		}
		ti.Size = uint32(sz)
	case TypeDateN:
		// Nothing follows: the value is 0 or 3 bytes.
	case TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
		ti.Scale = r.u8()
		if r.err != nil {
			return 0, r.err
		}
		if ti.Scale > 7 {
			return bad(1, "scale "+strconv.Itoa(int(ti.Scale))+" exceeds 7")
		}
	case TypeChar, TypeVarChar, TypeBinary, TypeVarBinary:
		// Legacy BYTELEN_TYPEs (2.2.5.4.3): a 1-byte max length, no collation.
		ti.Size = uint32(r.u8())
	case TypeBigVarBinary, TypeBigBinary, TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		sz := int(r.u16())
		if r.err != nil {
			return 0, r.err
		}
		maxable := t == TypeBigVarBinary || t == TypeBigVarChar || t == TypeNVarChar
		switch {
		case sz == MaxVarLen && maxable:
		case sz > 8000:
			return bad(1, "max length "+strconv.Itoa(sz)+" exceeds 8000")
		case (t == TypeNVarChar || t == TypeNChar) && sz&1 != 0:
			return bad(1, "odd max length "+strconv.Itoa(sz)+" for a UTF-16 type")
		}
		ti.Size = uint32(sz)
		if t == TypeBigVarChar || t == TypeBigChar || t == TypeNVarChar || t == TypeNChar {
			ti.Collation.Info = r.u32()
			ti.Collation.SortID = r.u8()
		}
	case TypeText, TypeNText, TypeImage:
		sz := r.u32()
		if r.err != nil {
			return 0, r.err
		}
		if sz > 0x7FFFFFFF {
			return bad(1, "max length "+strconv.FormatUint(uint64(sz), 10)+" is negative")
		}
		ti.Size = sz
		if t != TypeImage {
			ti.Collation.Info = r.u32()
			ti.Collation.SortID = r.u8()
		}
	case TypeVariant:
		sz := r.u32()
		if r.err != nil {
			return 0, r.err
		}
		if sz > MaxVariantLen {
			return bad(1, "sql_variant max length "+strconv.FormatUint(uint64(sz), 10)+" exceeds 8009")
		}
		ti.Size = sz
	case TypeXML:
		present := r.u8()
		if r.err != nil {
			return 0, r.err
		}
		switch present {
		case 0:
		case 1:
			ti.XMLSchema = true
			ti.XMLDatabase = r.bvarchar()
			ti.XMLOwningSchema = r.bvarchar()
			ti.XMLCollection = r.usvarchar()
		default:
			return bad(1, "SCHEMA_PRESENT "+strconv.Itoa(int(present))+" is neither 0 nor 1")
		}
	case TypeUDT:
		if !rpc {
			sz := int(r.u16())
			if r.err != nil {
				return 0, r.err
			}
			if sz == 0 || (sz > 8000 && sz != MaxVarLen) {
				return bad(1, "MAX_BYTE_SIZE "+strconv.Itoa(sz)+" outside 1..8000 or 0xFFFF")
			}
			ti.Size = uint32(sz)
		}
		ti.UDTDatabase = r.bvarchar()
		ti.UDTSchema = r.bvarchar()
		ti.UDTName = r.bvarchar()
		if !rpc {
			ti.UDTAssembly = r.usvarchar()
		}
	case TypeJSON:
		// Nothing follows (2.2.5.6: no USHORTMAXLEN for JSONTYPE); values are PLP.
	case TypeVector:
		sz := int(r.u16())
		ti.Scale = r.u8()
		if r.err != nil {
			return 0, r.err
		}
		el := tiVectorElemSize(ti.Scale)
		if el == 0 {
			return bad(3, "unknown vector dimension type 0x"+wireHex(ti.Scale))
		}
		if sz < tiVectorHdrLen || sz > 8000 || (sz-tiVectorHdrLen)%el != 0 {
			return bad(1, "vector length "+strconv.Itoa(sz)+" is not 8 + a multiple of "+strconv.Itoa(el)+" up to 8000")
		}
		ti.Size = uint32(sz)
	case TypeTVP:
		return bad(0, "table-valued parameters are not supported")
	default:
		return bad(0, "unknown type")
	}
	if r.err != nil {
		return 0, r.err
	}
	return r.off, nil
}

// tiVectorHdrLen is the vector value header (2.2.5.5.7).
const tiVectorHdrLen = 8

// tiVectorElemSize returns the element size of a vector dimension type:
// 0x00 float32 (MS-TDS v39); 0x01 float16 is what SQL Server 2025 sends when
// VECTORSUPPORT version 2 was negotiated (mssql-rs). 0 = unknown.
func tiVectorElemSize(dimType uint8) int {
	switch dimType {
	case 0x00:
		return 4
	case 0x01:
		return 2
	}
	return 0
}

// AppendTypeInfo appends ti as servers send it (COLMETADATA, RETURNVALUE).
// Fields that the type does not carry are ignored. It does not validate:
// use DecodeTypeInfo on the result to check a hand-built TypeInfo.
func AppendTypeInfo(dst []byte, ti *TypeInfo) []byte { return appendTypeInfo(dst, ti, false) }

// AppendParamTypeInfo appends ti as clients send it in an RPC parameter
// (UDT_INFO_IN_RPC for UDTs).
func AppendParamTypeInfo(dst []byte, ti *TypeInfo) []byte { return appendTypeInfo(dst, ti, true) }

func appendTypeInfo(dst []byte, ti *TypeInfo, rpc bool) []byte {
	dst = append(dst, ti.Type)
	le := binary.LittleEndian
	switch t := ti.Type; t {
	case TypeIntN, TypeBitN, TypeFltN, TypeMoneyN, TypeDateTimeN, TypeGUID,
		TypeChar, TypeVarChar, TypeBinary, TypeVarBinary:
		dst = append(dst, byte(ti.Size))
	case TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy:
		dst = append(dst, byte(ti.Size), ti.Precision, ti.Scale)
	case TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
		dst = append(dst, ti.Scale)
	case TypeBigVarBinary, TypeBigBinary:
		dst = le.AppendUint16(dst, uint16(ti.Size))
	case TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		dst = le.AppendUint16(dst, uint16(ti.Size))
		dst = ti.Collation.Append(dst)
	case TypeImage, TypeVariant:
		dst = le.AppendUint32(dst, ti.Size)
	case TypeText, TypeNText:
		dst = le.AppendUint32(dst, ti.Size)
		dst = ti.Collation.Append(dst)
	case TypeXML:
		if ti.XMLSchema {
			dst = append(dst, 1)
			dst = appendBVarChar(dst, ti.XMLDatabase)
			dst = appendBVarChar(dst, ti.XMLOwningSchema)
			dst = appendUSVarChar(dst, ti.XMLCollection, 0xFFFF)
		} else {
			dst = append(dst, 0)
		}
	case TypeUDT:
		if !rpc {
			dst = le.AppendUint16(dst, uint16(ti.Size))
		}
		dst = appendBVarChar(dst, ti.UDTDatabase)
		dst = appendBVarChar(dst, ti.UDTSchema)
		dst = appendBVarChar(dst, ti.UDTName)
		if !rpc {
			dst = appendUSVarChar(dst, ti.UDTAssembly, 0xFFFF)
		}
	case TypeVector:
		dst = le.AppendUint16(dst, uint16(ti.Size))
		dst = append(dst, ti.Scale)
	}
	return dst
}

// PLP markers (2.2.5.2.3).
const (
	PLPNull    uint64 = 0xFFFFFFFFFFFFFFFF
	PLPUnknown uint64 = 0xFFFFFFFFFFFFFFFE
)

// ValueWireLen returns the number of bytes one value of type ti occupies on
// the wire at the start of src (TYPE_VARBYTE: length prefix, PLP chunks and
// terminator, or text pointer + timestamp + LONGLEN data, all included). It
// returns ErrNeedMore when src is short and a *ProtocolError (Where "value",
// Offset relative to src) for a length the type cannot have: a BYTELEN length
// outside the type's valid set, a USHORT/LONG length beyond the declared
// maximum, or PLP chunks that do not add up to the announced total.
func ValueWireLen(src []byte, ti *TypeInfo) (int, error) { return valueLen(src, ti) }

func valueLen(src []byte, ti *TypeInfo) (int, error) {
	le := binary.LittleEndian
	bad := func(off int, msg string) (int, error) {
		return 0, protoErr(0, "value", off, "type 0x"+wireHex(ti.Type)+": "+msg)
	}
	switch t := ti.Type; t {
	case TypeNull:
		return 0, nil
	case TypeInt1, TypeBit, TypeInt2, TypeInt4, TypeDateTim4, TypeFlt4,
		TypeMoney, TypeDateTime, TypeFlt8, TypeMoney4, TypeInt8:
		n := tiFixedLen(t)
		if len(src) < n {
			return 0, ErrNeedMore
		}
		return n, nil
	case TypeIntN, TypeBitN, TypeFltN, TypeMoneyN, TypeDateTimeN, TypeGUID,
		TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy,
		TypeDateN, TypeTimeN, TypeDateTime2N, TypeDateTimeOffset,
		TypeChar, TypeVarChar, TypeBinary, TypeVarBinary:
		if len(src) < 1 {
			return 0, ErrNeedMore
		}
		n := int(src[0])
		if n != 0 {
			ok := true
			switch t {
			case TypeIntN:
				ok = (n == 1 || n == 2 || n == 4 || n == 8) && n <= int(ti.Size)
			case TypeFltN, TypeMoneyN, TypeDateTimeN:
				ok = (n == 4 || n == 8) && n <= int(ti.Size)
			case TypeBitN:
				ok = n == 1
			case TypeGUID:
				ok = n == 16
			case TypeDecimalN, TypeNumericN, TypeDecimalLegacy, TypeNumericLegacy:
				ok = tiDecimalSizeOK(n) && n <= int(ti.Size)
			case TypeDateN, TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
				ok = n == tiValueLen(ti)
			default: // legacy char/binary
				ok = n <= int(ti.Size) || ti.Size == 0
			}
			if !ok {
				return bad(0, "impossible value length "+strconv.Itoa(n))
			}
		}
		if len(src) < 1+n {
			return 0, ErrNeedMore
		}
		return 1 + n, nil
	case TypeBigVarBinary, TypeBigBinary, TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		if ti.Size == MaxVarLen {
			return plpLen(src, ti)
		}
		if len(src) < 2 {
			return 0, ErrNeedMore
		}
		n := int(le.Uint16(src))
		if n == 0xFFFF {
			return 2, nil // CHARBIN_NULL
		}
		if n > int(ti.Size) {
			return bad(0, "value length "+strconv.Itoa(n)+" exceeds the declared maximum "+strconv.Itoa(int(ti.Size)))
		}
		if len(src) < 2+n {
			return 0, ErrNeedMore
		}
		return 2 + n, nil
	case TypeVector:
		if len(src) < 2 {
			return 0, ErrNeedMore
		}
		n := int(le.Uint16(src))
		if n == 0xFFFF {
			return 2, nil
		}
		if n > int(ti.Size) {
			return bad(0, "vector length "+strconv.Itoa(n)+" exceeds the declared "+strconv.Itoa(int(ti.Size)))
		}
		if len(src) < 2+n {
			return 0, ErrNeedMore
		}
		return 2 + n, nil
	case TypeText, TypeNText, TypeImage:
		// [TextPointer(B_VARBYTE) Timestamp(8)] LONGLEN data; NULL is a
		// zero-length text pointer with nothing after it (2.2.7.20).
		if len(src) < 1 {
			return 0, ErrNeedMore
		}
		tp := int(src[0])
		if tp == 0 {
			return 1, nil
		}
		hdr := 1 + tp + 8
		if len(src) < hdr+4 {
			return 0, ErrNeedMore
		}
		n := le.Uint32(src[hdr:])
		if n > 0x7FFFFFFF {
			return bad(hdr, "negative text length")
		}
		if ti.Size != 0 && n > ti.Size {
			return bad(hdr, "text length "+strconv.FormatUint(uint64(n), 10)+" exceeds the declared maximum")
		}
		if uint64(len(src)) < uint64(hdr+4)+uint64(n) {
			return 0, ErrNeedMore
		}
		return hdr + 4 + int(n), nil
	case TypeVariant:
		if len(src) < 4 {
			return 0, ErrNeedMore
		}
		n := le.Uint32(src)
		if n == 0 {
			return 4, nil
		}
		if n > ti.Size || n < 2 {
			return bad(0, "sql_variant length "+strconv.FormatUint(uint64(n), 10)+" outside 2.."+strconv.Itoa(int(ti.Size)))
		}
		if uint64(len(src)) < 4+uint64(n) {
			return 0, ErrNeedMore
		}
		return 4 + int(n), nil
	case TypeXML, TypeUDT, TypeJSON:
		return plpLen(src, ti)
	}
	return bad(0, "unknown type")
}

// plpLen walks a PLP_BODY (2.2.5.2.3): NULL marker, or a total (known or
// unknown) followed by chunks and a zero terminator. A known total must
// equal the sum of the chunks.
func plpLen(src []byte, ti *TypeInfo) (int, error) {
	le := binary.LittleEndian
	if len(src) < 8 {
		return 0, ErrNeedMore
	}
	total := le.Uint64(src)
	if total == PLPNull {
		return 8, nil
	}
	off := 8
	var sum uint64
	for {
		if len(src)-off < 4 {
			return 0, ErrNeedMore
		}
		c := uint64(le.Uint32(src[off:]))
		if c == 0 {
			if total != PLPUnknown && sum != total {
				return 0, protoErr(0, "value", off, "type 0x"+wireHex(ti.Type)+": PLP chunks sum to "+strconv.FormatUint(sum, 10)+" bytes, the total announced "+strconv.FormatUint(total, 10))
			}
			return off + 4, nil
		}
		sum += c
		if total != PLPUnknown && sum > total {
			return 0, protoErr(0, "value", off, "type 0x"+wireHex(ti.Type)+": PLP chunks exceed the announced total "+strconv.FormatUint(total, 10))
		}
		if uint64(len(src)-off-4) < c {
			return 0, ErrNeedMore
		}
		off += 4 + int(c)
	}
}
