package decode

import (
	"encoding/binary"
	"strconv"
)

// LOGIN7 (MS-TDS 2.2.6.4): a little-endian fixed part, then (offset, length)
// pairs pointing into a variable data area, then optionally the FeatureExt
// block reached through ibExtension (TDS 7.4).

// TDS versions as Login7.TDSVersion and LoginAck.TDSVersion hold them: the
// number whose big-endian bytes are what a server sends in LOGINACK (and a
// client sends little-endian in LOGIN7: 04 00 00 74 for 7.4).
const (
	TDSVersion70  uint32 = 0x70000000
	TDSVersion71  uint32 = 0x71000001
	TDSVersion72  uint32 = 0x72090002
	TDSVersion73A uint32 = 0x730A0003
	TDSVersion73B uint32 = 0x730B0003
	TDSVersion74  uint32 = 0x74000004
)

// LOGIN7 option bits used by this package (2.2.6.4, least significant bit order).
const (
	Login7OptionFlags3ChangePassword byte = 0x01
	Login7OptionFlags3Extension      byte = 0x10 // fExtension: ibExtension points at the FeatureExt offset
	Login7OptionFlags2IntSecurity    byte = 0x80
	Login7TypeFlagsReadOnlyIntent    byte = 0x20
)

// FeatureExt identifiers (2.2.6.4 and 2.2.7.11).
const (
	FeatureSessionRecovery      byte = 0x01
	FeatureFedAuth              byte = 0x02
	FeatureColumnEncryption     byte = 0x04
	FeatureGlobalTransactions   byte = 0x05
	FeatureAzureSQLSupport      byte = 0x08
	FeatureDataClassification   byte = 0x09
	FeatureUTF8Support          byte = 0x0A
	FeatureAzureSQLDNSCaching   byte = 0x0B
	FeatureJSONSupport          byte = 0x0D
	FeatureVectorSupport        byte = 0x0E
	FeatureEnhancedRouting      byte = 0x0F
	FeatureTerminator           byte = 0xFF
	FedAuthLibrarySecurityToken byte = 0x01
)

// Login7MaxLen is the largest LOGIN7 message (2.2.6.4: 128K-1 bytes).
const Login7MaxLen = 128*1024 - 1

// login7FixedLen is the fixed part up to and including cbSSPILong (TDS 7.2+).
const login7FixedLen = 94

// login7FixedLen71 is the fixed part of TDS 7.0/7.1 (no ibChangePassword/cbSSPILong).
const login7FixedLen71 = 86

// Login7 is a LOGIN7 message. Strings are UTF-8 here and UTF-16LE on the wire.
type Login7 struct {
	// TDSVersion is the little-endian read of the wire DWORD (0x74000004 for 7.4).
	TDSVersion                                          uint32
	PacketSize, ClientProgVer, ClientPID, ConnectionID  uint32
	OptionFlags1, OptionFlags2, TypeFlags, OptionFlags3 byte
	ClientTimeZone                                      int32
	ClientLCID                                          uint32
	HostName, UserName, Password, AppName, ServerName   string
	CltIntName, Language, Database                      string
	ClientID                                            [6]byte
	SSPI                                                []byte
	AtchDBFile, ChangePassword                          string
	// Features is the FeatureExt block (TDS 7.4); Encode sets fExtension
	// when it is not empty and clears it otherwise.
	Features []Feature
}

// Feature is one FeatureExt option (LOGIN7) or FeatureAckOpt (FEATUREEXTACK).
type Feature struct {
	ID   byte
	Data []byte
}

// FedAuthSecurityTokenFeature returns the FEDAUTH FeatureExt for the
// security-token library (bFedAuthLibrary 0x01, 2.2.6.4): Options byte
// (library in bits 1-7, fFedAuthEcho in bit 0, as spec example 4.3 shows),
// then the token as L_VARBYTE. echo must be true iff the server's PRELOGIN
// answer had FEDAUTHREQUIRED = 0x01.
func FedAuthSecurityTokenFeature(token []byte, echo bool) Feature {
	return FedAuthSecurityTokenFeatureNonce(token, nil, echo)
}

// FedAuthSecurityTokenFeatureNonce is FedAuthSecurityTokenFeature with the
// 32-byte nonce the server sent in PRELOGIN echoed after the token.
func FedAuthSecurityTokenFeatureNonce(token, nonce []byte, echo bool) Feature {
	opt := FedAuthLibrarySecurityToken << 1
	if echo {
		opt |= 1
	}
	d := make([]byte, 0, 5+len(token)+len(nonce))
	d = append(d, opt)
	d = binary.LittleEndian.AppendUint32(d, uint32(len(token)))
	d = append(d, token...)
	d = append(d, nonce...)
	return Feature{ID: FeatureFedAuth, Data: d}
}

// UTF8SupportFeature requests UTF-8 char data (FeatureData 0x01).
func UTF8SupportFeature() Feature { return Feature{ID: FeatureUTF8Support, Data: []byte{1}} }

// JSONSupportFeature requests the json type (JSONSUPPORT_VERSION 1).
func JSONSupportFeature() Feature { return Feature{ID: FeatureJSONSupport, Data: []byte{1}} }

// VectorSupportFeature requests the vector type (VECTORSUPPORT_VERSION,
// 1 in MS-TDS v39).
func VectorSupportFeature(version byte) Feature {
	return Feature{ID: FeatureVectorSupport, Data: []byte{version}}
}

// obfuscatePassword applies the LOGIN7 password scrambling in place: swap
// the nibbles of every byte, then XOR 0xA5 (2.2.6.4 "Login Data Validation Rules").
func obfuscatePassword(b []byte) {
	for i, c := range b {
		b[i] = (c<<4 | c>>4) ^ 0xA5
	}
}

// deobfuscatePassword is the inverse: XOR 0xA5, then swap the nibbles.
func deobfuscatePassword(b []byte) {
	for i, c := range b {
		c ^= 0xA5
		b[i] = c<<4 | c>>4
	}
}

// login7Field describes one (offset, length) pair of the fixed part.
type login7Field struct {
	pos      int // position of ib in the fixed part
	maxChars int // 0: byte length (SSPI, extension)
	name     string
}

var login7Fields = [...]login7Field{
	{36, 128, "HostName"}, {40, 128, "UserName"}, {44, 128, "Password"}, {48, 128, "AppName"},
	{52, 128, "ServerName"}, {56, 0, "Extension"}, {60, 128, "CltIntName"}, {64, 128, "Language"},
	{68, 128, "Database"}, {78, 0, "SSPI"}, {82, 260, "AtchDBFile"}, {86, 128, "ChangePassword"},
}

// Decode parses a LOGIN7 payload, de-obfuscating Password and
// ChangePassword. Every (offset, length) pair must lie inside the message
// and after the fixed part, string lengths obey the spec's limits (128
// characters, 260 for AtchDBFile), and the FeatureExt block must be inside
// the message and end with its terminator. l holds no reference into payload.
func (l *Login7) Decode(payload []byte) error {
	*l = Login7{}
	const where = "LOGIN7"
	if len(payload) < 4 {
		return protoErr(0, where, 0, "message shorter than its Length field")
	}
	length := int(binary.LittleEndian.Uint32(payload))
	if length > len(payload) || length > Login7MaxLen {
		return protoErr(0, where, 0, "Length "+strconv.Itoa(length)+" exceeds the "+strconv.Itoa(len(payload))+"-byte message or the 128K-1 limit")
	}
	if length < 8 {
		return protoErr(0, where, 0, "Length "+strconv.Itoa(length)+" too small")
	}
	b := payload[:length]
	l.TDSVersion = binary.LittleEndian.Uint32(b[4:])
	fixed := login7FixedLen
	if l.TDSVersion>>24 < 0x72 { // TDS 7.0/7.1 (wire bytes xx xx xx 70/71)
		fixed = login7FixedLen71
	}
	if length < fixed {
		return protoErr(0, where, 0, "Length "+strconv.Itoa(length)+" shorter than the "+strconv.Itoa(fixed)+"-byte fixed part")
	}
	le := binary.LittleEndian
	l.PacketSize = le.Uint32(b[8:])
	l.ClientProgVer = le.Uint32(b[12:])
	l.ClientPID = le.Uint32(b[16:])
	l.ConnectionID = le.Uint32(b[20:])
	l.OptionFlags1, l.OptionFlags2, l.TypeFlags, l.OptionFlags3 = b[24], b[25], b[26], b[27]
	l.ClientTimeZone = int32(le.Uint32(b[28:]))
	l.ClientLCID = le.Uint32(b[32:])
	copy(l.ClientID[:], b[72:78])

	var vals [len(login7Fields)][]byte
	for i, f := range login7Fields {
		if f.pos+4 > fixed {
			continue
		}
		ib := int(le.Uint16(b[f.pos:]))
		cnt := int(le.Uint16(b[f.pos+2:]))
		nbytes := cnt
		if f.maxChars > 0 {
			if cnt > f.maxChars {
				return protoErr(0, where, f.pos+2, f.name+" has "+strconv.Itoa(cnt)+" characters, the limit is "+strconv.Itoa(f.maxChars))
			}
			nbytes = 2 * cnt
		}
		if f.name == "SSPI" && cnt == 0xFFFF && fixed >= login7FixedLen {
			if long := int(le.Uint32(b[90:])); long > 0 {
				nbytes = long
			}
		}
		if f.name == "Extension" && l.OptionFlags3&Login7OptionFlags3Extension == 0 {
			continue // ibUnused/cbUnused before 7.4: ignored
		}
		if nbytes == 0 {
			continue // "If the length is specified as 0, then the offset MUST be ignored."
		}
		if ib < fixed || ib+nbytes > length {
			return protoErr(0, where, f.pos, f.name+" data ["+strconv.Itoa(ib)+", "+strconv.Itoa(ib+nbytes)+") is outside the variable part ["+strconv.Itoa(fixed)+", "+strconv.Itoa(length)+")")
		}
		vals[i] = b[ib : ib+nbytes]
	}
	str := func(i int) (string, error) {
		s, err := DecodeUTF16LE(vals[i])
		if err != nil {
			return "", &ProtocolError{Where: where, Offset: int64(login7Fields[i].pos), Msg: login7Fields[i].name + ": " + err.Error()}
		}
		return s, nil
	}
	var err error
	dst := [...]*string{&l.HostName, &l.UserName, nil, &l.AppName, &l.ServerName, nil, &l.CltIntName, &l.Language, &l.Database, nil, &l.AtchDBFile, nil}
	for i, p := range dst {
		if p != nil {
			if *p, err = str(i); err != nil {
				return err
			}
		}
	}
	for _, i := range [...]int{2, 11} {
		pw := append([]byte(nil), vals[i]...)
		deobfuscatePassword(pw)
		s, err := DecodeUTF16LE(pw)
		if err != nil {
			return &ProtocolError{Where: where, Offset: int64(login7Fields[i].pos), Msg: login7Fields[i].name + ": " + err.Error()}
		}
		if i == 2 {
			l.Password = s
		} else {
			l.ChangePassword = s
		}
	}
	if len(vals[9]) > 0 {
		l.SSPI = append([]byte(nil), vals[9]...)
	}
	if ext := vals[5]; ext != nil {
		if len(ext) < 4 || len(ext) > 255 {
			return protoErr(0, where, 58, "cbExtension "+strconv.Itoa(len(ext))+" outside [4, 255]")
		}
		fe := int(le.Uint32(ext))
		if fe != 0 {
			if fe < fixed || fe >= length {
				return protoErr(0, where, int(le.Uint16(b[56:])), "ibFeatureExtLong "+strconv.Itoa(fe)+" is outside the message")
			}
			feats, err := decodeFeatureList(b[fe:], fe, 0, where+" FeatureExt", false)
			if err != nil {
				return err
			}
			l.Features = feats
		}
	}
	return nil
}

// decodeFeatureList parses FeatureOpt/FeatureAckOpt entries up to the 0xFF
// terminator. With needMore, running out of bytes is ErrNeedMore (a token in
// a stream); otherwise it is a protocol error (a complete message). It
// returns the features (data copied).
func decodeFeatureList(b []byte, base int, token byte, where string, needMore bool) ([]Feature, error) {
	feats, _, err := decodeFeatureListN(b, base, token, where, needMore)
	return feats, err
}

// decodeFeatureListN is decodeFeatureList that also returns the bytes
// consumed, terminator included.
func decodeFeatureListN(b []byte, base int, token byte, where string, needMore bool) ([]Feature, int, error) {
	var feats []Feature
	off := 0
	short := func() error {
		if needMore {
			return ErrNeedMore
		}
		return protoErr(token, where, base+off, "feature list ends without its 0xFF terminator")
	}
	for {
		if off >= len(b) {
			return nil, 0, short()
		}
		id := b[off]
		if id == FeatureTerminator {
			return feats, off + 1, nil
		}
		if len(b)-off < 5 {
			return nil, 0, short()
		}
		n := uint64(binary.LittleEndian.Uint32(b[off+1:]))
		if n > uint64(len(b)-off-5) {
			if needMore && n <= maxFeatureData {
				return nil, 0, ErrNeedMore
			}
			if n > maxFeatureData {
				return nil, 0, tooLarge(token, where, base+off+1, "feature 0x"+wireHex(id)+" data length "+strconv.FormatUint(n, 10)+" is implausible")
			}
			return nil, 0, protoErr(token, where, base+off+1, "feature 0x"+wireHex(id)+" data runs past the end of the message")
		}
		d := b[off+5 : off+5+int(n)]
		feats = append(feats, Feature{ID: id, Data: append([]byte(nil), d...)})
		off += 5 + int(n)
	}
}

// maxFeatureData bounds one feature's data (acks are small; a security
// token is a few KB; LOGIN7 itself is limited to 128K).
const maxFeatureData = 1 << 20

// Encode appends the LOGIN7 payload, obfuscating the passwords. It fails if
// a string exceeds its spec limit, if the variable part does not fit the
// 16-bit offsets, or if the message would exceed 128K-1 bytes.
func (l *Login7) Encode(dst []byte) ([]byte, error) {
	const where = "LOGIN7"
	start := len(dst)
	fixed := login7FixedLen
	dst = append(dst, make([]byte, fixed)...)
	le := binary.LittleEndian
	hdr := dst[start : start+fixed]
	le.PutUint32(hdr[4:], l.TDSVersion)
	le.PutUint32(hdr[8:], l.PacketSize)
	le.PutUint32(hdr[12:], l.ClientProgVer)
	le.PutUint32(hdr[16:], l.ClientPID)
	le.PutUint32(hdr[20:], l.ConnectionID)
	of3 := l.OptionFlags3 &^ Login7OptionFlags3Extension
	if len(l.Features) > 0 {
		of3 |= Login7OptionFlags3Extension
	}
	hdr[24], hdr[25], hdr[26], hdr[27] = l.OptionFlags1, l.OptionFlags2, l.TypeFlags, of3
	le.PutUint32(hdr[28:], uint32(l.ClientTimeZone))
	le.PutUint32(hdr[32:], l.ClientLCID)
	copy(hdr[72:78], l.ClientID[:])

	strs := [...]string{l.HostName, l.UserName, l.Password, l.AppName, l.ServerName, "", l.CltIntName, l.Language, l.Database, "", l.AtchDBFile, l.ChangePassword}
	extPos := -1
	for i, f := range login7Fields {
		ib := len(dst) - start
		var cnt int
		switch f.name {
		case "Extension":
			if len(l.Features) > 0 {
				extPos = len(dst)
				dst = append(dst, 0, 0, 0, 0) // patched with ibFeatureExtLong below
				cnt = 4
			}
		case "SSPI":
			continue // written after the strings so a large blob cannot push their 16-bit offsets out of range
		default:
			s := strs[i]
			cnt = UTF16Len(s)
			if cnt > f.maxChars {
				return dst[:start], protoErr(0, where, f.pos, f.name+" has "+strconv.Itoa(cnt)+" characters, the limit is "+strconv.Itoa(f.maxChars))
			}
			p := len(dst)
			dst = AppendUTF16LE(dst, s)
			if i == 2 || i == 11 {
				obfuscatePassword(dst[p:])
			}
		}
		if ib > 0xFFFF {
			return dst[:start], protoErr(0, where, f.pos, f.name+" offset does not fit 16 bits")
		}
		le.PutUint16(dst[start+f.pos:], uint16(ib))
		le.PutUint16(dst[start+f.pos+2:], uint16(cnt))
	}
	if ib := len(dst) - start; ib > 0xFFFF {
		return dst[:start], protoErr(0, where, 78, "SSPI offset does not fit 16 bits")
	} else {
		cnt := len(l.SSPI)
		if cnt >= 0xFFFF {
			le.PutUint32(dst[start+90:], uint32(cnt))
			cnt = 0xFFFF
		}
		le.PutUint16(dst[start+78:], uint16(ib))
		le.PutUint16(dst[start+80:], uint16(cnt))
		dst = append(dst, l.SSPI...)
	}
	if extPos >= 0 {
		le.PutUint32(dst[extPos:], uint32(len(dst)-start))
		for _, f := range l.Features {
			if f.ID == FeatureTerminator {
				return dst[:start], protoErr(0, where, 0, "feature id 0xFF is the terminator")
			}
			dst = append(dst, f.ID)
			dst = le.AppendUint32(dst, uint32(len(f.Data)))
			dst = append(dst, f.Data...)
		}
		dst = append(dst, FeatureTerminator)
	}
	total := len(dst) - start
	if total > Login7MaxLen {
		return dst[:start], protoErr(0, where, 0, "message of "+strconv.Itoa(total)+" bytes exceeds 128K-1")
	}
	le.PutUint32(dst[start:], uint32(total))
	return dst, nil
}
