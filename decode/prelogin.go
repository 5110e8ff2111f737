package decode

import (
	"encoding/binary"
	"strconv"
)

// PRELOGIN (MS-TDS 2.2.6.5): an option table of (token BYTE, offset USHORT
// big-endian, length USHORT big-endian) entries ended by 0xFF, then the
// option data. Offsets are relative to the start of the payload.

// PRELOGIN option tokens.
const (
	PreloginVersion         byte = 0x00
	PreloginEncryption      byte = 0x01
	PreloginInstOpt         byte = 0x02
	PreloginThreadID        byte = 0x03
	PreloginMARS            byte = 0x04
	PreloginTraceID         byte = 0x05
	PreloginFedAuthRequired byte = 0x06
	PreloginNonce           byte = 0x07
	PreloginTerminator      byte = 0xFF
)

// Encryption option values (2.2.6.5 "Encryption"). EncryptClientCert is
// OR-ed with one of the others.
const (
	EncryptOff        byte = 0x00
	EncryptOn         byte = 0x01
	EncryptNotSup     byte = 0x02
	EncryptReq        byte = 0x03
	EncryptClientCert byte = 0x80
)

// Prelogin is a PRELOGIN message, request or response.
type Prelogin struct {
	// Version is UL_VERSION as on the wire: major, minor, build (big-endian).
	Version  [4]byte
	SubBuild uint16 // US_SUBBUILD (little-endian, the spec's default byte order)

	Encryption byte

	// Instance is the INSTOPT data up to its terminating NUL. A server
	// answers with a single byte: "" (0x00, the instance matches) or "\x01"
	// (it does not); Encode writes "\x01" back as that single byte.
	Instance string

	ThreadID    uint32 // UL_THREADID, little-endian (spec example 4.1: B8 0D 00 00)
	HasThreadID bool   // THREADID present

	// EmptyThreadID: THREADID present with length 0, as servers send it.
	EmptyThreadID bool

	MARS byte

	// TraceID is GUID_CONNID(16) + ActivityID(16) + ActivitySequence(4), or nil.
	TraceID []byte

	FedAuthRequired    byte
	HasFedAuthRequired bool

	Nonce []byte // 32 bytes or nil
}

// Decode parses a PRELOGIN payload. Every option's data must lie inside the
// payload after the option table, the table must end with 0xFF, each known
// option must have its defined length, VERSION is required and no option may
// appear twice. Unknown option tokens are skipped. Decode copies what it
// keeps: p holds no reference into payload.
func (p *Prelogin) Decode(payload []byte) error {
	*p = Prelogin{}
	const where = "PRELOGIN"
	// Pass 1: find the table end so data offsets can be checked against it.
	tableEnd := -1
	for i := 0; i < len(payload); i += 5 {
		if payload[i] == PreloginTerminator {
			tableEnd = i + 1
			break
		}
		if i+5 > len(payload) {
			break
		}
	}
	if tableEnd < 0 {
		return protoErr(0, where, len(payload), "option table has no 0xFF terminator")
	}
	var seen [8]bool
	for i := 0; i < tableEnd-1; i += 5 {
		tok := payload[i]
		off := int(binary.BigEndian.Uint16(payload[i+1:]))
		n := int(binary.BigEndian.Uint16(payload[i+3:]))
		if off+n > len(payload) {
			return protoErr(0, where, i+1, "option 0x"+wireHex(tok)+" data ["+strconv.Itoa(off)+", "+strconv.Itoa(off+n)+") lies outside the "+strconv.Itoa(len(payload))+"-byte payload")
		}
		if n > 0 && off < tableEnd {
			return protoErr(0, where, i+1, "option 0x"+wireHex(tok)+" data overlaps the option table")
		}
		if tok >= byte(len(seen)) {
			continue // unknown option: skip (forward compatibility)
		}
		if seen[tok] {
			return protoErr(0, where, i, "option 0x"+wireHex(tok)+" appears twice")
		}
		seen[tok] = true
		data := payload[off : off+n]
		bad := func(want string) error {
			return protoErr(0, where, i+3, "option 0x"+wireHex(tok)+" has length "+strconv.Itoa(n)+", want "+want)
		}
		switch tok {
		case PreloginVersion:
			if n != 6 {
				return bad("6")
			}
			copy(p.Version[:], data)
			p.SubBuild = binary.LittleEndian.Uint16(data[4:])
		case PreloginEncryption:
			if n != 1 {
				return bad("1")
			}
			p.Encryption = data[0]
		case PreloginInstOpt:
			for j, c := range data {
				if c == 0 {
					data = data[:j]
					break
				}
			}
			p.Instance = string(data)
		case PreloginThreadID:
			switch n {
			case 0:
				p.HasThreadID, p.EmptyThreadID = true, true
			case 4:
				p.HasThreadID = true
				p.ThreadID = binary.LittleEndian.Uint32(data)
			default:
				return bad("0 or 4")
			}
		case PreloginMARS:
			if n != 1 {
				return bad("1")
			}
			p.MARS = data[0]
		case PreloginTraceID:
			if n != 36 && n != 0 {
				return bad("36")
			}
			if n == 36 {
				p.TraceID = append([]byte(nil), data...)
			}
		case PreloginFedAuthRequired:
			if n != 1 {
				return bad("1")
			}
			p.FedAuthRequired = data[0]
			p.HasFedAuthRequired = true
		case PreloginNonce:
			if n != 32 {
				return bad("32")
			}
			p.Nonce = append([]byte(nil), data...)
		}
	}
	if !seen[PreloginVersion] {
		return protoErr(0, where, 0, "VERSION option missing")
	}
	return nil
}

// Encode appends the PRELOGIN payload: VERSION, ENCRYPTION, INSTOPT,
// THREADID (if HasThreadID), MARS, TRACEID (if 36 bytes), FEDAUTHREQUIRED
// (if HasFedAuthRequired) and NONCEOPT (if 32 bytes), in that order.
func (p *Prelogin) Encode(dst []byte) []byte {
	type opt struct {
		tok  byte
		data []byte
	}
	var opts [8]opt
	no := 0
	add := func(tok byte, b []byte) {
		opts[no] = opt{tok, b}
		no++
	}
	ver := make([]byte, 0, 6)
	ver = append(ver, p.Version[:]...)
	ver = binary.LittleEndian.AppendUint16(ver, p.SubBuild)
	add(PreloginVersion, ver)
	add(PreloginEncryption, []byte{p.Encryption})
	if p.Instance == "\x01" {
		add(PreloginInstOpt, []byte{1})
	} else {
		add(PreloginInstOpt, append([]byte(p.Instance), 0))
	}
	if p.HasThreadID {
		if p.EmptyThreadID {
			add(PreloginThreadID, nil)
		} else {
			add(PreloginThreadID, binary.LittleEndian.AppendUint32(nil, p.ThreadID))
		}
	}
	add(PreloginMARS, []byte{p.MARS})
	if len(p.TraceID) == 36 {
		add(PreloginTraceID, p.TraceID)
	}
	if p.HasFedAuthRequired {
		add(PreloginFedAuthRequired, []byte{p.FedAuthRequired})
	}
	if len(p.Nonce) == 32 {
		add(PreloginNonce, p.Nonce)
	}
	off := no*5 + 1
	for _, o := range opts[:no] {
		dst = append(dst, o.tok)
		dst = binary.BigEndian.AppendUint16(dst, uint16(off))
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(o.data)))
		off += len(o.data)
	}
	dst = append(dst, PreloginTerminator)
	for _, o := range opts[:no] {
		dst = append(dst, o.data...)
	}
	return dst
}
