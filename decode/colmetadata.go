package decode

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// MaxColumns bounds the column count of a COLMETADATA token: SQL Server
// returns at most 4096 columns from a SELECT (wide tables with sparse
// columns hold up to 30,000, but a result set is still capped at 4096).
// A larger count is rejected before anything is allocated from it.
const MaxColumns = 4096

// ColMetadata is a COLMETADATA token (MS-TDS 2.2.7.4).
type ColMetadata struct {
	Columns []Column
	// CekTable holds the raw CekTable bytes (EkValueCount and EK_INFO
	// entries) when column encryption was negotiated; nil otherwise.
	CekTable []byte
}

// Decode parses a COLMETADATA token from src, which starts after the token
// byte, and returns the bytes it took. columnEncryption says whether the
// COLUMNENCRYPTION feature was negotiated (then a CekTable follows the count
// and encrypted columns carry CryptoMetaData). The Columns slice is reused
// across calls. It returns ErrNeedMore if src is short.
func (c *ColMetadata) Decode(src []byte, columnEncryption bool) (n int, err error) {
	r := msgReader{b: src, token: TokenColMetadata, where: "COLMETADATA", base: 1}
	count := int(r.u16())
	if r.err != nil {
		return 0, r.err
	}
	c.Columns = c.Columns[:0]
	c.CekTable = nil
	if count == 0xFFFF {
		// NoMetaData: no columns follow (and no CekTable).
		return r.off, nil
	}
	if count > MaxColumns {
		return 0, protoErr(TokenColMetadata, "COLMETADATA", 1, "column count "+strconv.Itoa(count)+" exceeds "+strconv.Itoa(MaxColumns))
	}
	if columnEncryption {
		start := r.off
		skipCekTable(&r)
		if r.err != nil {
			return 0, r.err
		}
		c.CekTable = append([]byte(nil), src[start:r.off]...)
	}
	if cap(c.Columns) < count {
		c.Columns = make([]Column, 0, count)
	}
	for i := 0; i < count; i++ {
		c.Columns = append(c.Columns, Column{})
		col := &c.Columns[i]
		col.UserType = r.u32()
		col.Flags = r.u16()
		if r.err != nil {
			return 0, r.err
		}
		tn, err := DecodeTypeInfo(src[r.off:], &col.Type)
		if err != nil {
			return 0, rebase(err, "COLMETADATA column "+strconv.Itoa(i)+" TYPE_INFO", 1+r.off)
		}
		r.off += tn
		switch col.Type.Type {
		case TypeText, TypeNText, TypeImage:
			parts := int(r.u8())
			if r.err != nil {
				return 0, r.err
			}
			if parts > 0 {
				col.TableName = make([]string, 0, min(parts, 4))
			}
			for j := 0; j < parts && r.err == nil; j++ {
				col.TableName = append(col.TableName, r.usvarchar())
			}
		}
		if col.Flags&ColFlagEncrypted != 0 {
			if !columnEncryption {
				return 0, protoErr(TokenColMetadata, "COLMETADATA column "+strconv.Itoa(i), 1+r.off,
					"encrypted column but column encryption was not negotiated")
			}
			if err := skipCryptoMetaData(&r); err != nil {
				return 0, rebase(err, "COLMETADATA column "+strconv.Itoa(i)+" CryptoMetaData", 1+r.off)
			}
		}
		col.Name = r.bvarchar()
		if r.err != nil {
			return 0, r.err
		}
	}
	return r.off, nil
}

// rebase moves a nested decoder's *ProtocolError into the token's frame.
func rebase(err error, where string, off int) error {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return &ProtocolError{Token: TokenColMetadata, Where: where, Offset: int64(off) + pe.Offset, Msg: pe.Msg, Err: pe.Err}
	}
	return err
}

// skipCekTable walks a CekTable (2.2.7.4): EkValueCount USHORT, then per
// entry DatabaseId, CekId, CekVersion (ULONG), CekMDVersion (8 bytes), Count
// BYTE and Count EncryptionKeyValues (EncryptedKey US_VARBYTE, KeyStoreName
// B_VARCHAR, KeyPath US_VARCHAR, AsymmetricAlgo B_VARCHAR).
func skipCekTable(r *msgReader) {
	n := int(r.u16())
	for i := 0; i < n && r.err == nil; i++ {
		r.bytes(4 + 4 + 4 + 8)
		k := int(r.u8())
		for j := 0; j < k && r.err == nil; j++ {
			r.bytes(int(r.u16()))
			r.bytes(2 * int(r.u8()))
			r.bytes(2 * int(r.u16()))
			r.bytes(2 * int(r.u8()))
		}
	}
}

// skipCryptoMetaData walks a column's CryptoMetaData (2.2.7.4): Ordinal
// USHORT, UserType ULONG, BaseTypeInfo TYPE_INFO, EncryptionAlgo BYTE,
// AlgoName B_VARCHAR when EncryptionAlgo is 0 (custom), EncryptionAlgoType
// BYTE, NormVersion BYTE. Values of an encrypted column are its ciphertext,
// decoded as the column's TYPE_INFO says (varbinary).
func skipCryptoMetaData(r *msgReader) error {
	r.u16()
	r.u32()
	if r.err != nil {
		return r.err
	}
	var ti TypeInfo
	n, err := DecodeTypeInfo(r.b[r.off:], &ti)
	if err != nil {
		return err
	}
	r.off += n
	if algo := r.u8(); algo == 0 && r.err == nil {
		r.bytes(2 * int(r.u8()))
	}
	r.u8()
	r.u8()
	return r.err
}

// AppendColMetadata appends a COLMETADATA token (token byte included) for
// cols, without CekTable; no columns gives the NoMetaData form (count
// 0xFFFF). Names longer than 255 UTF-16 code units are truncated.
func AppendColMetadata(dst []byte, cols []Column) []byte {
	dst = append(dst, TokenColMetadata)
	if len(cols) == 0 {
		return binary.LittleEndian.AppendUint16(dst, 0xFFFF)
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(cols)))
	for i := range cols {
		c := &cols[i]
		dst = binary.LittleEndian.AppendUint32(dst, c.UserType)
		dst = binary.LittleEndian.AppendUint16(dst, c.Flags&^ColFlagEncrypted)
		dst = AppendTypeInfo(dst, &c.Type)
		switch c.Type.Type {
		case TypeText, TypeNText, TypeImage:
			parts := c.TableName[:min(len(c.TableName), 0xFF)]
			dst = append(dst, byte(len(parts)))
			for _, part := range parts {
				dst = appendUSVarChar(dst, part, 0xFFFF)
			}
		}
		dst = appendBVarChar(dst, c.Name)
	}
	return dst
}
