package decode

import (
	"encoding/binary"
	"strconv"
)

// Non-row tokens of the server's token stream (MS-TDS 2.2.7). Each Decode
// takes src starting AFTER the token byte and returns the bytes consumed
// after it; it returns ErrNeedMore when src does not yet hold the whole
// token and never reads past src. Each Append writes the token byte too.
// Decoded strings and byte slices are copies: a decoded token holds no
// reference into src.

// Token ids (2.2.7).
const (
	TokenAltMetadata        byte = 0x88
	TokenAltRow             byte = 0xD3
	TokenColInfo            byte = 0xA5
	TokenColMetadata        byte = 0x81
	TokenDataClassification byte = 0xA3
	TokenDone               byte = 0xFD
	TokenDoneProc           byte = 0xFE
	TokenDoneInProc         byte = 0xFF
	TokenEnvChange          byte = 0xE3
	TokenError              byte = 0xAA
	TokenFeatureExtAck      byte = 0xAE
	TokenFedAuthInfo        byte = 0xEE
	TokenInfo               byte = 0xAB
	TokenLoginAck           byte = 0xAD
	TokenNBCRow             byte = 0xD2
	TokenOffset             byte = 0x78
	TokenOrder              byte = 0xA9
	TokenReturnStatus       byte = 0x79
	TokenReturnValue        byte = 0xAC
	TokenRow                byte = 0xD1
	TokenSessionState       byte = 0xE4
	TokenSSPI               byte = 0xED
	TokenTabName            byte = 0xA4
)

// usLenToken checks a USHORT-length-prefixed token: it returns the body and
// the total bytes consumed, or ErrNeedMore.
func usLenToken(src []byte) (body []byte, n int, err error) {
	if len(src) < 2 {
		return nil, 0, ErrNeedMore
	}
	l := int(binary.LittleEndian.Uint16(src))
	if len(src) < 2+l {
		return nil, 0, ErrNeedMore
	}
	return src[2 : 2+l], 2 + l, nil
}

// patchUSLen writes the USHORT body length at dst[at:] (the body starts at at+2).
// It reports false when the body does not fit 16 bits.
func patchUSLen(dst []byte, at int) bool {
	l := len(dst) - at - 2
	binary.LittleEndian.PutUint16(dst[at:], uint16(l))
	return l <= 0xFFFF
}

// ---------------------------------------------------------------- DONE

// Done is a DONE, DONEPROC or DONEINPROC token (2.2.7.6-8).
type Done struct {
	Token    byte // TokenDone, TokenDoneProc or TokenDoneInProc; Decode leaves it to the caller
	Status   uint16
	CurCmd   uint16
	RowCount uint64
}

// DONE status bits. Unknown bits are accepted (real servers set 0x80,
// DONE_RPCINBATCH, on DONEPROC between batched RPCs).
const (
	DoneMore       uint16 = 0x01
	DoneError      uint16 = 0x02
	DoneInXact     uint16 = 0x04
	DoneCount      uint16 = 0x10
	DoneAttn       uint16 = 0x20
	DoneRPCInBatch uint16 = 0x80
	DoneSrvError   uint16 = 0x100
)

// doneLen is the DONE body since TDS 7.2 (ULONGLONG row count).
const doneLen = 12

// Decode parses the 12-byte body. It does not allocate.
func (d *Done) Decode(src []byte) (int, error) {
	if len(src) < doneLen {
		return 0, ErrNeedMore
	}
	d.Status = binary.LittleEndian.Uint16(src)
	d.CurCmd = binary.LittleEndian.Uint16(src[2:])
	d.RowCount = binary.LittleEndian.Uint64(src[4:])
	return doneLen, nil
}

// Append appends the token (TokenDone when d.Token is not a DONE token).
func (d Done) Append(dst []byte) []byte {
	t := d.Token
	if t != TokenDoneProc && t != TokenDoneInProc {
		t = TokenDone
	}
	dst = append(dst, t)
	dst = binary.LittleEndian.AppendUint16(dst, d.Status)
	dst = binary.LittleEndian.AppendUint16(dst, d.CurCmd)
	return binary.LittleEndian.AppendUint64(dst, d.RowCount)
}

// ---------------------------------------------------------------- ERROR / INFO

// Message is an ERROR (0xAA) or INFO (0xAB) token (2.2.7.10, 2.2.7.13).
type Message struct {
	Token  byte // TokenError or TokenInfo; Decode leaves it to the caller
	Number int32
	State  uint8
	Class  uint8 // severity: >= 11 is an error
	Text   string
	Server string
	Proc   string
	Line   int32
}

// Decode parses the token body. Bytes inside Length after LineNumber are skipped.
func (m *Message) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	r := msgReader{b: body, token: m.Token, where: "ERROR/INFO", base: 2, proto: true}
	if r.token == 0 {
		r.token = TokenError
	}
	m.Number = int32(r.u32())
	m.State = r.u8()
	m.Class = r.u8()
	m.Text = r.usvarchar()
	m.Server = r.bvarchar()
	m.Proc = r.bvarchar()
	m.Line = int32(r.u32())
	if r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// Append appends the token: m.Token if it is TokenError or TokenInfo,
// otherwise ERROR for Class > 10 and INFO below. Text is truncated so the
// token's 16-bit Length holds.
func (m Message) Append(dst []byte) []byte {
	t := m.Token
	if t != TokenError && t != TokenInfo {
		t = TokenInfo
		if m.Class > 10 {
			t = TokenError
		}
	}
	dst = append(dst, t, 0, 0)
	at := len(dst) - 2
	dst = binary.LittleEndian.AppendUint32(dst, uint32(m.Number))
	dst = append(dst, m.State, m.Class)
	room := (0xFFFF - 4 - 2 - 2 - 1 - 2*UTF16Len(TruncateUTF16(m.Server, 255)) - 1 - 2*UTF16Len(TruncateUTF16(m.Proc, 255)) - 4) / 2
	dst = appendUSVarChar(dst, m.Text, room)
	dst = appendBVarChar(dst, m.Server)
	dst = appendBVarChar(dst, m.Proc)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(m.Line))
	patchUSLen(dst, at)
	return dst
}

// ---------------------------------------------------------------- LOGINACK

// LoginAck is a LOGINACK token (2.2.7.14).
type LoginAck struct {
	Interface byte // 1 = SQL_TSQL
	// TDSVersion is the big-endian read of the wire DWORD: 0x74000004 for
	// 7.4 (wire 74 00 00 04), the same number Login7.TDSVersion uses.
	TDSVersion uint32
	// ProgName is the server name; trailing U+0000 characters (real servers
	// send "Microsoft SQL Server" plus two NULs) are removed.
	ProgName    string
	ProgVersion [4]byte // major, minor, build high, build low
}

// Decode parses the token body.
func (a *LoginAck) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	r := msgReader{b: body, token: TokenLoginAck, where: "LOGINACK", base: 2, proto: true}
	a.Interface = r.u8()
	if !r.short(4) {
		a.TDSVersion = binary.BigEndian.Uint32(body[r.off:])
		r.off += 4
	}
	name := r.bvarchar()
	for len(name) > 0 && name[len(name)-1] == 0 {
		name = name[:len(name)-1]
	}
	a.ProgName = name
	copy(a.ProgVersion[:], r.bytes(4))
	if r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// Append appends the token.
func (a LoginAck) Append(dst []byte) []byte {
	dst = append(dst, TokenLoginAck, 0, 0)
	at := len(dst) - 2
	dst = append(dst, a.Interface)
	dst = binary.BigEndian.AppendUint32(dst, a.TDSVersion)
	dst = appendBVarChar(dst, a.ProgName)
	dst = append(dst, a.ProgVersion[:]...)
	patchUSLen(dst, at)
	return dst
}

// ---------------------------------------------------------------- ENVCHANGE

// ENVCHANGE types (2.2.7.9).
const (
	EnvDatabase        byte = 1
	EnvLanguage        byte = 2
	EnvCharset         byte = 3
	EnvPacketSize      byte = 4
	EnvUnicodeLCID     byte = 5
	EnvCompareFlags    byte = 6
	EnvCollation       byte = 7
	EnvBeginTxn        byte = 8
	EnvCommitTxn       byte = 9
	EnvRollbackTxn     byte = 10
	EnvEnlistDTC       byte = 11
	EnvDefectTxn       byte = 12
	EnvMirrorPartner   byte = 13
	EnvPromoteTxn      byte = 15
	EnvTxnManagerAddr  byte = 16
	EnvTxnEnded        byte = 17
	EnvResetConnAck    byte = 18
	EnvUserInstance    byte = 19
	EnvRouting         byte = 20
	EnvEnhancedRouting byte = 21
)

// Routing is the value of ENVCHANGE types 20 and 21.
type Routing struct {
	Protocol byte   // 0 = TCP (the only value allowed)
	Port     uint16 // TCP port, non-zero
	Server   string
	Database string // type 21 only
}

// EnvChange is an ENVCHANGE token. String types (1-6, 13, 19) fill
// NewValue/OldValue; binary types (7-12, 15-18) fill NewBytes/OldBytes;
// type 7 also fills Collation; types 20/21 fill Routing. Unknown types are
// skipped by their length with the raw body in NewBytes.
type EnvChange struct {
	Type               byte
	NewValue, OldValue string
	NewBytes, OldBytes []byte
	Collation          Collation
	Routing            Routing
}

func envIsString(t byte) bool {
	switch t {
	case EnvDatabase, EnvLanguage, EnvCharset, EnvPacketSize, EnvUnicodeLCID, EnvCompareFlags, EnvMirrorPartner, EnvUserInstance:
		return true
	}
	return false
}

func envIsBytes(t byte) bool {
	switch t {
	case EnvCollation, EnvBeginTxn, EnvCommitTxn, EnvRollbackTxn, EnvEnlistDTC, EnvDefectTxn,
		EnvTxnManagerAddr, EnvTxnEnded, EnvResetConnAck:
		return true
	}
	return false
}

// PacketSize returns the new packet size of a type-4 ENVCHANGE (sent as a
// decimal string) and whether it is valid (512..32767).
func (e *EnvChange) PacketSize() (int, bool) {
	if e.Type != EnvPacketSize {
		return 0, false
	}
	n, err := strconv.Atoi(e.NewValue)
	if err != nil || n < MinPacketSize || n > MaxPacketSize {
		return 0, false
	}
	return n, true
}

// Decode parses the token body. For type 15 (promote transaction) the
// spec's Length covers only the type byte and the L_VARBYTE payload follows
// outside it; both that and a Length covering the payload are accepted.
func (e *EnvChange) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	*e = EnvChange{}
	const where = "ENVCHANGE"
	if len(body) < 1 {
		return 0, protoErr(TokenEnvChange, where, 0, "Length 0: no Type")
	}
	e.Type = body[0]
	r := msgReader{b: body, off: 1, token: TokenEnvChange, where: where + " type " + strconv.Itoa(int(e.Type)), base: 2, proto: true}
	switch t := e.Type; {
	case envIsString(t):
		e.NewValue = r.bvarchar()
		e.OldValue = r.bvarchar()
	case envIsBytes(t):
		e.NewBytes = r.copyBytes(int(r.u8()))
		e.OldBytes = r.copyBytes(int(r.u8()))
		if t == EnvCollation && r.err == nil {
			switch len(e.NewBytes) {
			case 0:
			case CollationLen:
				_ = e.Collation.Decode(e.NewBytes)
			default:
				r.fail(2, "collation of "+strconv.Itoa(len(e.NewBytes))+" bytes, want 5")
			}
		}
	case t == EnvPromoteTxn:
		if len(body) == 1 {
			// Payload outside Length: L_VARBYTE new value, then a 0x00 old value.
			rest := src[n:]
			if len(rest) < 4 {
				return 0, ErrNeedMore
			}
			l := uint64(binary.LittleEndian.Uint32(rest))
			if l > maxFeatureData {
				return 0, tooLarge(TokenEnvChange, where+" type 15", n, "DTC token length "+strconv.FormatUint(l, 10)+" is implausible")
			}
			if uint64(len(rest)) < 4+l+1 {
				return 0, ErrNeedMore
			}
			e.NewBytes = append([]byte(nil), rest[4:4+l]...)
			if rest[4+l] != 0 {
				return 0, protoErr(TokenEnvChange, where+" type 15", n+4+int(l), "old value must be empty")
			}
			return n + 4 + int(l) + 1, nil
		}
		e.NewBytes = r.copyBytes(int(r.u32()))
		// OldValue is 0x00 (MS-TDS 2.2.7.9), as in the form above.
		if r.rest() > 0 && r.u8() != 0 && r.err == nil {
			r.fail(r.off-1, "type 15 old value must be empty")
		}
	case t == EnvRouting || t == EnvEnhancedRouting:
		vl := int(r.u16())
		vstart := r.off
		e.Routing.Protocol = r.u8()
		e.Routing.Port = r.u16()
		e.Routing.Server = r.usvarchar()
		if t == EnvEnhancedRouting {
			e.Routing.Database = r.usvarchar()
		}
		if r.err == nil && r.off-vstart != vl {
			r.fail(vstart-2, "RoutingDataValueLength "+strconv.Itoa(vl)+" does not match the "+strconv.Itoa(r.off-vstart)+" bytes of routing data")
		}
		old := r.u16()
		if r.err == nil {
			switch {
			case e.Routing.Protocol != 0:
				r.fail(vstart, "routing protocol "+strconv.Itoa(int(e.Routing.Protocol))+" is not TCP (0)")
			case e.Routing.Port == 0:
				r.fail(vstart+1, "routing port 0")
			case old != 0:
				r.fail(r.off-2, "old routing value must be empty")
			}
		}
	default:
		// Unknown type: skip by Length (2.2.7.9), keeping the raw value bytes.
		e.NewBytes = append([]byte(nil), body[1:]...)
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// Append appends the token. Type 15 is written the way servers send it
// (Length 1, payload after it).
func (e EnvChange) Append(dst []byte) []byte {
	dst = append(dst, TokenEnvChange, 0, 0)
	at := len(dst) - 2
	dst = append(dst, e.Type)
	switch t := e.Type; {
	case envIsString(t):
		dst = appendBVarChar(dst, e.NewValue)
		dst = appendBVarChar(dst, e.OldValue)
	case envIsBytes(t):
		nb := e.NewBytes
		if t == EnvCollation && nb == nil && e.Collation != (Collation{}) {
			nb = e.Collation.Append(nil)
		}
		dst = appendBVarByte(dst, nb)
		dst = appendBVarByte(dst, e.OldBytes)
	case t == EnvPromoteTxn:
		patchUSLen(dst, at)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.NewBytes)))
		dst = append(dst, e.NewBytes...)
		return append(dst, 0)
	case t == EnvRouting || t == EnvEnhancedRouting:
		vat := len(dst)
		dst = append(dst, 0, 0, e.Routing.Protocol)
		dst = binary.LittleEndian.AppendUint16(dst, e.Routing.Port)
		// Host names are at most 255 characters and database names 128; the
		// caps keep the token's 16-bit Length representable.
		dst = appendUSVarChar(dst, e.Routing.Server, 16000)
		if t == EnvEnhancedRouting {
			dst = appendUSVarChar(dst, e.Routing.Database, 16000)
		}
		patchUSLen(dst, vat)
		dst = append(dst, 0, 0)
	default:
		dst = append(dst, e.NewBytes...)
	}
	patchUSLen(dst, at)
	return dst
}

func appendBVarByte(dst, b []byte) []byte {
	if len(b) > 0xFF {
		b = b[:0xFF]
	}
	dst = append(dst, byte(len(b)))
	return append(dst, b...)
}

// ---------------------------------------------------------------- FEATUREEXTACK

// FeatureExtAck is a FEATUREEXTACK token (2.2.7.11): acknowledgements up to
// the 0xFF terminator, with no overall length prefix.
type FeatureExtAck struct {
	Features []Feature
}

// Decode parses the token body.
func (f *FeatureExtAck) Decode(src []byte) (int, error) {
	feats, n, err := decodeFeatureListN(src, 0, TokenFeatureExtAck, "FEATUREEXTACK", true)
	if err != nil {
		return 0, err
	}
	f.Features = feats
	return n, nil
}

// Append appends the token.
func (f FeatureExtAck) Append(dst []byte) []byte {
	dst = append(dst, TokenFeatureExtAck)
	for _, x := range f.Features {
		dst = append(dst, x.ID)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(x.Data)))
		dst = append(dst, x.Data...)
	}
	return append(dst, FeatureTerminator)
}

// Check verifies the acknowledgements against the feature ids the client
// requested in LOGIN7: an ack for a feature not requested, or the same
// feature acknowledged twice, is a protocol error (2.2.7.11: "the client
// MUST consider it as a TDS Protocol error").
func (f *FeatureExtAck) Check(requested []byte) error {
	var seen [256]bool
	for _, x := range f.Features {
		ok := false
		for _, r := range requested {
			if r == x.ID {
				ok = true
				break
			}
		}
		if !ok {
			return protoErr(TokenFeatureExtAck, "FEATUREEXTACK", 0, "acknowledgement for feature 0x"+wireHex(x.ID)+" that the client did not request")
		}
		if seen[x.ID] {
			return protoErr(TokenFeatureExtAck, "FEATUREEXTACK", 0, "feature 0x"+wireHex(x.ID)+" acknowledged twice")
		}
		seen[x.ID] = true
	}
	return nil
}

// Ack returns the acknowledgement data for feature id and whether it is present.
func (f *FeatureExtAck) Ack(id byte) ([]byte, bool) {
	for _, x := range f.Features {
		if x.ID == id {
			return x.Data, true
		}
	}
	return nil, false
}

// ---------------------------------------------------------------- RETURNSTATUS

// ReturnStatus is a RETURNSTATUS token (2.2.7.18).
type ReturnStatus struct {
	Value int32
}

// Decode parses the 4-byte body.
func (s *ReturnStatus) Decode(src []byte) (int, error) {
	if len(src) < 4 {
		return 0, ErrNeedMore
	}
	s.Value = int32(binary.LittleEndian.Uint32(src))
	return 4, nil
}

// Append appends the token.
func (s ReturnStatus) Append(dst []byte) []byte {
	dst = append(dst, TokenReturnStatus)
	return binary.LittleEndian.AppendUint32(dst, uint32(s.Value))
}

// ---------------------------------------------------------------- RETURNVALUE

// ReturnValue is a RETURNVALUE token (2.2.7.19): an output parameter or a
// UDF result.
type ReturnValue struct {
	Ordinal  uint16
	Name     string
	Status   byte // 0x01 output parameter, 0x02 UDF return value
	UserType uint32
	Flags    uint16
	Type     TypeInfo
	// Value is the value's complete wire bytes (length prefix / PLP framing
	// included); decode it with DecodeCell.
	Value []byte
}

// Decode parses the token. The whole value must be resident (the token has
// no length prefix: ErrNeedMore until it is). Encrypted values (fEncrypted,
// Always Encrypted) are rejected as unsupported.
func (v *ReturnValue) Decode(src []byte) (int, error) {
	r := msgReader{b: src, token: TokenReturnValue, where: "RETURNVALUE"}
	v.Ordinal = r.u16()
	v.Name = r.bvarchar()
	v.Status = r.u8()
	v.UserType = r.u32()
	v.Flags = r.u16()
	if r.err != nil {
		return 0, r.err
	}
	if v.Flags&ColFlagEncrypted != 0 {
		return 0, protoErr(TokenReturnValue, "RETURNVALUE", r.off-2, "encrypted return values (Always Encrypted) are not supported")
	}
	tn, err := DecodeTypeInfo(src[r.off:], &v.Type)
	if err != nil {
		return 0, placeErr(err, TokenReturnValue, "RETURNVALUE TYPE_INFO", r.off)
	}
	r.off += tn
	vn, err := valueLen(src[r.off:], &v.Type)
	if err != nil {
		return 0, placeErr(err, TokenReturnValue, "RETURNVALUE value", r.off)
	}
	v.Value = append(v.Value[:0:0], src[r.off:r.off+vn]...)
	return r.off + vn, nil
}

// placeErr re-anchors a nested *ProtocolError at a token and offset;
// ErrNeedMore passes through.
func placeErr(err error, token byte, where string, off int) error {
	if pe, ok := err.(*ProtocolError); ok {
		return &ProtocolError{Token: token, Where: where, Offset: int64(off) + pe.Offset, Msg: pe.Msg, Err: pe.Err}
	}
	return err
}

// Append appends the token. Value must be one complete value of Type.
func (v ReturnValue) Append(dst []byte) []byte {
	dst = append(dst, TokenReturnValue)
	dst = binary.LittleEndian.AppendUint16(dst, v.Ordinal)
	dst = appendBVarChar(dst, v.Name)
	dst = append(dst, v.Status)
	dst = binary.LittleEndian.AppendUint32(dst, v.UserType)
	dst = binary.LittleEndian.AppendUint16(dst, v.Flags)
	dst = AppendTypeInfo(dst, &v.Type)
	return append(dst, v.Value...)
}

// ---------------------------------------------------------------- ORDER

// Order is an ORDER token (2.2.7.17): the 1-based column numbers of the ORDER BY.
type Order struct {
	Columns []uint16
}

// Decode parses the token body, reusing o.Columns' storage.
func (o *Order) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	if len(body)&1 != 0 {
		return 0, protoErr(TokenOrder, "ORDER", 0, "odd Length "+strconv.Itoa(len(body)))
	}
	o.Columns = o.Columns[:0]
	for i := 0; i < len(body); i += 2 {
		o.Columns = append(o.Columns, binary.LittleEndian.Uint16(body[i:]))
	}
	return n, nil
}

// Append appends the token.
func (o Order) Append(dst []byte) []byte {
	dst = append(dst, TokenOrder)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(2*len(o.Columns)))
	for _, c := range o.Columns {
		dst = binary.LittleEndian.AppendUint16(dst, c)
	}
	return dst
}

// ---------------------------------------------------------------- TABNAME

// TabName is a TABNAME token (2.2.7.23): one multi-part name per table.
type TabName struct {
	Tables [][]string // e.g. {{"dbo", "t"}}
}

// Decode parses the token body.
func (t *TabName) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	r := msgReader{b: body, token: TokenTabName, where: "TABNAME", base: 2, proto: true}
	t.Tables = nil
	for r.rest() > 0 && r.err == nil {
		np := int(r.u8())
		parts := make([]string, 0, min(np, r.rest()/2+1))
		for i := 0; i < np && r.err == nil; i++ {
			parts = append(parts, r.usvarchar())
		}
		t.Tables = append(t.Tables, parts)
	}
	if r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// Append appends the token.
func (t TabName) Append(dst []byte) []byte {
	dst = append(dst, TokenTabName, 0, 0)
	at := len(dst) - 2
	for _, parts := range t.Tables {
		dst = append(dst, byte(len(parts)))
		for _, p := range parts {
			dst = appendUSVarChar(dst, p, 0xFFFF)
		}
	}
	patchUSLen(dst, at)
	return dst
}

// ---------------------------------------------------------------- COLINFO

// COLINFO status bits (2.2.7.3).
const (
	ColInfoExpression    byte = 0x04
	ColInfoKey           byte = 0x08
	ColInfoHidden        byte = 0x10
	ColInfoDifferentName byte = 0x20
)

// ColProperty is one column of a COLINFO token.
type ColProperty struct {
	ColNum, TableNum, Status byte
	Name                     string // base column name, only with ColInfoDifferentName
}

// ColInfo is a COLINFO token (2.2.7.3).
type ColInfo struct {
	Columns []ColProperty
}

// Decode parses the token body, reusing c.Columns' storage (the previous
// contents are overwritten).
func (c *ColInfo) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	r := msgReader{b: body, token: TokenColInfo, where: "COLINFO", base: 2, proto: true}
	c.Columns = c.Columns[:0]
	for r.rest() > 0 && r.err == nil {
		var p ColProperty
		p.ColNum = r.u8()
		p.TableNum = r.u8()
		p.Status = r.u8()
		if p.Status&ColInfoDifferentName != 0 {
			p.Name = r.bvarchar()
		}
		c.Columns = append(c.Columns, p)
	}
	if r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// Append appends the token.
func (c ColInfo) Append(dst []byte) []byte {
	dst = append(dst, TokenColInfo, 0, 0)
	at := len(dst) - 2
	for _, p := range c.Columns {
		dst = append(dst, p.ColNum, p.TableNum, p.Status)
		if p.Status&ColInfoDifferentName != 0 {
			dst = appendBVarChar(dst, p.Name)
		}
	}
	patchUSLen(dst, at)
	return dst
}

// ---------------------------------------------------------------- SESSIONSTATE

// SessionStateData is one StateId/StateValue pair.
type SessionStateData struct {
	ID    byte
	Value []byte
}

// SessionState is a SESSIONSTATE token (2.2.7.21), also the format of the
// SESSIONRECOVERY feature acknowledgement data (without the token header).
type SessionState struct {
	SeqNo  uint32
	Status byte // bit 0: fRecoverable
	States []SessionStateData
}

// Recoverable reports fRecoverable.
func (s *SessionState) Recoverable() bool { return s.Status&1 != 0 }

// Decode parses the token body (DWORD Length, SeqNo, Status, data set).
func (s *SessionState) Decode(src []byte) (int, error) {
	if len(src) < 4 {
		return 0, ErrNeedMore
	}
	l := uint64(binary.LittleEndian.Uint32(src))
	if l > maxFeatureData {
		return 0, tooLarge(TokenSessionState, "SESSIONSTATE", 0, "Length "+strconv.FormatUint(l, 10)+" is implausible")
	}
	if uint64(len(src)) < 4+l {
		return 0, ErrNeedMore
	}
	body := src[4 : 4+l]
	r := msgReader{b: body, token: TokenSessionState, where: "SESSIONSTATE", base: 4, proto: true}
	s.SeqNo = r.u32()
	s.Status = r.u8()
	if r.err != nil {
		return 0, r.err
	}
	states, err := decodeSessionStateSet(body[r.off:], 4+r.off, TokenSessionState, "SESSIONSTATE")
	if err != nil {
		return 0, err
	}
	s.States = states
	return 4 + int(l), nil
}

// DecodeSessionStateDataSet parses a SessionStateDataSet that fills b (as in
// the SESSIONRECOVERY FeatureExtAck data, spec example 4.17).
func DecodeSessionStateDataSet(b []byte) ([]SessionStateData, error) {
	return decodeSessionStateSet(b, 0, 0, "SessionStateDataSet")
}

func decodeSessionStateSet(b []byte, base int, token byte, where string) ([]SessionStateData, error) {
	r := msgReader{b: b, token: token, where: where, base: base, proto: true}
	var out []SessionStateData
	for r.rest() > 0 && r.err == nil {
		id := r.u8()
		n := int(r.u8())
		if n == 0xFF {
			n32 := r.u32()
			if uint64(n32) > uint64(r.rest()) {
				r.fail(r.off-4, "StateLen "+strconv.FormatUint(uint64(n32), 10)+" runs past the end")
				break
			}
			n = int(n32)
		}
		v := r.copyBytes(n)
		if r.err == nil {
			out = append(out, SessionStateData{ID: id, Value: v})
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// appendSessionStateSet appends a SessionStateDataSet.
func appendSessionStateSet(dst []byte, states []SessionStateData) []byte {
	for _, st := range states {
		dst = append(dst, st.ID)
		if len(st.Value) < 0xFF {
			dst = append(dst, byte(len(st.Value)))
		} else {
			dst = append(dst, 0xFF)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(st.Value)))
		}
		dst = append(dst, st.Value...)
	}
	return dst
}

// Append appends the token.
func (s SessionState) Append(dst []byte) []byte {
	dst = append(dst, TokenSessionState, 0, 0, 0, 0)
	at := len(dst) - 4
	dst = binary.LittleEndian.AppendUint32(dst, s.SeqNo)
	dst = append(dst, s.Status)
	dst = appendSessionStateSet(dst, s.States)
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// ---------------------------------------------------------------- DATACLASSIFICATION

// SensitivityLabel and InformationType are name/id pairs of DATACLASSIFICATION.
type SensitivityLabel struct{ Name, ID string }

// InformationType is an information type of DATACLASSIFICATION.
type InformationType struct{ Name, ID string }

// SensitivityProperty links a column to a label and an information type
// (indexes into the token's lists; 0xFFFF = none).
type SensitivityProperty struct {
	LabelIndex, InfoTypeIndex uint16
	Rank                      int32 // only when the token carries ranks
}

// DataClassification is a DATACLASSIFICATION token (2.2.7.5). It has no
// length prefix.
type DataClassification struct {
	// WithRank is an input to Decode (and Append): set it when the
	// DATACLASSIFICATION feature was acknowledged with version 2, which adds
	// SensitivityRank fields.
	WithRank  bool
	Labels    []SensitivityLabel
	InfoTypes []InformationType
	Rank      int32 // query rank (-1 not defined), only WithRank
	// Columns has one entry per result-set column (or none at all).
	Columns [][]SensitivityProperty
}

// Decode parses the token body.
func (d *DataClassification) Decode(src []byte) (int, error) {
	r := msgReader{b: src, token: TokenDataClassification, where: "DATACLASSIFICATION"}
	withRank := d.WithRank
	*d = DataClassification{WithRank: withRank}
	nl := int(r.u16())
	if r.err != nil {
		return 0, r.err
	}
	d.Labels = make([]SensitivityLabel, 0, min(nl, r.rest()/2))
	for i := 0; i < nl && r.err == nil; i++ {
		d.Labels = append(d.Labels, SensitivityLabel{Name: r.bvarchar(), ID: r.bvarchar()})
	}
	ni := int(r.u16())
	if r.err != nil {
		return 0, r.err
	}
	d.InfoTypes = make([]InformationType, 0, min(ni, r.rest()/2))
	for i := 0; i < ni && r.err == nil; i++ {
		d.InfoTypes = append(d.InfoTypes, InformationType{Name: r.bvarchar(), ID: r.bvarchar()})
	}
	if withRank {
		d.Rank = int32(r.u32())
	}
	nc := int(r.u16())
	if r.err != nil {
		return 0, r.err
	}
	d.Columns = make([][]SensitivityProperty, 0, min(nc, r.rest()/2))
	for c := 0; c < nc && r.err == nil; c++ {
		np := int(r.u16())
		per := 4
		if withRank {
			per = 8
		}
		props := make([]SensitivityProperty, 0, min(np, r.rest()/per))
		for i := 0; i < np && r.err == nil; i++ {
			at := r.off
			p := SensitivityProperty{LabelIndex: r.u16(), InfoTypeIndex: r.u16()}
			if withRank {
				p.Rank = int32(r.u32())
			}
			if r.err != nil {
				break
			}
			if p.LabelIndex != 0xFFFF && int(p.LabelIndex) >= len(d.Labels) {
				r.fail(at, "SensitivityLabelIndex "+strconv.Itoa(int(p.LabelIndex))+" out of range")
			}
			if p.InfoTypeIndex != 0xFFFF && int(p.InfoTypeIndex) >= len(d.InfoTypes) {
				r.fail(at+2, "InformationTypeIndex "+strconv.Itoa(int(p.InfoTypeIndex))+" out of range")
			}
			props = append(props, p)
		}
		d.Columns = append(d.Columns, props)
	}
	if r.err != nil {
		return 0, r.err
	}
	return r.off, nil
}

// Append appends the token (with ranks when d.WithRank).
func (d DataClassification) Append(dst []byte) []byte {
	le := binary.LittleEndian
	dst = append(dst, TokenDataClassification)
	dst = le.AppendUint16(dst, uint16(len(d.Labels)))
	for _, l := range d.Labels {
		dst = appendBVarChar(dst, l.Name)
		dst = appendBVarChar(dst, l.ID)
	}
	dst = le.AppendUint16(dst, uint16(len(d.InfoTypes)))
	for _, t := range d.InfoTypes {
		dst = appendBVarChar(dst, t.Name)
		dst = appendBVarChar(dst, t.ID)
	}
	if d.WithRank {
		dst = le.AppendUint32(dst, uint32(d.Rank))
	}
	dst = le.AppendUint16(dst, uint16(len(d.Columns)))
	for _, props := range d.Columns {
		dst = le.AppendUint16(dst, uint16(len(props)))
		for _, p := range props {
			dst = le.AppendUint16(dst, p.LabelIndex)
			dst = le.AppendUint16(dst, p.InfoTypeIndex)
			if d.WithRank {
				dst = le.AppendUint32(dst, uint32(p.Rank))
			}
		}
	}
	return dst
}

// ---------------------------------------------------------------- FEDAUTHINFO

// FEDAUTHINFO ids (2.2.7.12).
const (
	FedAuthInfoSTSURL byte = 0x01
	FedAuthInfoSPN    byte = 0x02
)

// FedAuthInfoOpt is one FEDAUTHINFO option.
type FedAuthInfoOpt struct {
	ID   byte
	Data []byte // UTF-16LE for STSURL and SPN
}

// FedAuthInfo is a FEDAUTHINFO token (2.2.7.12).
type FedAuthInfo struct {
	Options []FedAuthInfoOpt
}

// Option returns option id decoded as a UTF-16LE string.
func (f *FedAuthInfo) Option(id byte) (string, bool) {
	for _, o := range f.Options {
		if o.ID == id {
			s, err := DecodeUTF16LE(o.Data)
			return s, err == nil
		}
	}
	return "", false
}

// Decode parses the token body: TokenLength DWORD, CountOfInfoIDs DWORD,
// the option table, then the data each option points at (offsets measured
// from CountOfInfoIDs, which must lie after the table and inside the token).
func (f *FedAuthInfo) Decode(src []byte) (int, error) {
	const where = "FEDAUTHINFO"
	if len(src) < 4 {
		return 0, ErrNeedMore
	}
	l := uint64(binary.LittleEndian.Uint32(src))
	if l > maxFeatureData {
		return 0, tooLarge(TokenFedAuthInfo, where, 0, "TokenLength "+strconv.FormatUint(l, 10)+" is implausible")
	}
	if uint64(len(src)) < 4+l {
		return 0, ErrNeedMore
	}
	body := src[4 : 4+l]
	if len(body) < 4 {
		return 0, protoErr(TokenFedAuthInfo, where, 0, "TokenLength "+strconv.FormatUint(l, 10)+" below 4")
	}
	count := uint64(binary.LittleEndian.Uint32(body))
	if 4+9*count > uint64(len(body)) {
		return 0, protoErr(TokenFedAuthInfo, where, 4, "CountOfInfoIDs "+strconv.FormatUint(count, 10)+" does not fit TokenLength")
	}
	table := 4 + 9*int(count)
	f.Options = nil
	for i := 0; i < int(count); i++ {
		e := body[4+9*i:]
		id := e[0]
		dl := uint64(binary.LittleEndian.Uint32(e[1:]))
		do := uint64(binary.LittleEndian.Uint32(e[5:]))
		if do+dl > uint64(len(body)) || (dl > 0 && do < uint64(table)) {
			return 0, protoErr(TokenFedAuthInfo, where, 4+4+9*i+1, "option 0x"+wireHex(id)+" data lies outside the token")
		}
		f.Options = append(f.Options, FedAuthInfoOpt{ID: id, Data: append([]byte(nil), body[do:do+dl]...)})
	}
	return 4 + int(l), nil
}

// Append appends the token.
func (f FedAuthInfo) Append(dst []byte) []byte {
	le := binary.LittleEndian
	dst = append(dst, TokenFedAuthInfo, 0, 0, 0, 0)
	at := len(dst) - 4
	base := len(dst)
	dst = le.AppendUint32(dst, uint32(len(f.Options)))
	off := 4 + 9*len(f.Options)
	for _, o := range f.Options {
		dst = append(dst, o.ID)
		dst = le.AppendUint32(dst, uint32(len(o.Data)))
		dst = le.AppendUint32(dst, uint32(off))
		off += len(o.Data)
	}
	for _, o := range f.Options {
		dst = append(dst, o.Data...)
	}
	le.PutUint32(dst[at:], uint32(len(dst)-base))
	return dst
}

// ---------------------------------------------------------------- SSPI

// SSPI is an SSPI token (2.2.7.22): a US_VARBYTE security blob.
type SSPI struct {
	Data []byte
}

// Decode parses the token body.
func (s *SSPI) Decode(src []byte) (int, error) {
	body, n, err := usLenToken(src)
	if err != nil {
		return 0, err
	}
	s.Data = append(s.Data[:0:0], body...)
	return n, nil
}

// Append appends the token (Data is cut at 65535 bytes).
func (s SSPI) Append(dst []byte) []byte {
	d := s.Data
	if len(d) > 0xFFFF {
		d = d[:0xFFFF]
	}
	dst = append(dst, TokenSSPI)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(d)))
	return append(dst, d...)
}
