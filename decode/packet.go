package decode

import (
	"encoding/binary"
	"strconv"
)

// Packet layer (MS-TDS 2.2.3): every message travels as one or more packets,
// each an 8-byte header followed by up to PacketSize-8 bytes of payload.

// HeaderLen is the size of a packet header (2.2.3.1).
const HeaderLen = 8

// Packet types (2.2.3.1.1).
const (
	PacketSQLBatch     byte = 0x01
	PacketRPC          byte = 0x03
	PacketReply        byte = 0x04 // tabular result: every server message, including the PRELOGIN reply
	PacketAttention    byte = 0x06
	PacketBulkLoad     byte = 0x07
	PacketFedAuthToken byte = 0x08
	PacketTransMgr     byte = 0x0E
	PacketLogin7       byte = 0x10
	PacketSSPI         byte = 0x11
	PacketPrelogin     byte = 0x12
)

// Packet status bits (2.2.3.1.2). Other bits MUST be ignored by receivers.
const (
	StatusEOM               byte = 0x01
	StatusIgnore            byte = 0x02
	StatusResetConn         byte = 0x08
	StatusResetConnSkipTran byte = 0x10

	// statusFirstPacketOnlyMsk: "MUST only be set in the first packet of a message".
	statusFirstPacketOnlyMsk = StatusResetConn | StatusResetConnSkipTran
)

// Packet sizes (2.2.3.1.3 and ENVCHANGE type 4): the negotiated size, header
// included, lies in [MinPacketSize, MaxPacketSize]; DefaultPacketSize applies
// until the login response changes it.
const (
	MinPacketSize     = 512
	MaxPacketSize     = 32767
	DefaultPacketSize = 4096
)

// Header is a packet header. Length and SPID are big-endian on the wire.
type Header struct {
	Type, Status byte
	Length, SPID uint16 // Length includes the header
	PacketID     byte   // increments mod 256 per packet; receivers ignore it
	Window       byte   // reserved, 0
}

// Decode parses and validates a header from the first 8 bytes of b. It
// returns ErrNeedMore when b is shorter than 8 bytes and a *ProtocolError
// for an unknown type or a length outside [8, MaxPacketSize]. It never
// allocates on success.
func (h *Header) Decode(b []byte) error {
	if len(b) < HeaderLen {
		return ErrNeedMore
	}
	h.Type = b[0]
	h.Status = b[1]
	h.Length = binary.BigEndian.Uint16(b[2:])
	h.SPID = binary.BigEndian.Uint16(b[4:])
	h.PacketID = b[6]
	h.Window = b[7]
	if !knownPacketType(h.Type) {
		return protoErr(0, "packet header", 0, "unknown packet type 0x"+wireHex(h.Type))
	}
	if h.Length < HeaderLen || h.Length > MaxPacketSize {
		return protoErr(0, "packet header", 2, "packet length "+strconv.Itoa(int(h.Length))+" outside [8, 32767]")
	}
	return nil
}

// Append appends the 8-byte header.
func (h Header) Append(dst []byte) []byte {
	return append(dst, h.Type, h.Status, byte(h.Length>>8), byte(h.Length), byte(h.SPID>>8), byte(h.SPID), h.PacketID, h.Window)
}

func knownPacketType(t byte) bool {
	switch t {
	case PacketSQLBatch, PacketRPC, PacketReply, PacketAttention, PacketBulkLoad,
		PacketFedAuthToken, PacketTransMgr, PacketLogin7, PacketSSPI, PacketPrelogin:
		return true
	}
	return false
}

// AppendMessage appends payload split into packets of at most packetSize
// bytes (header included), PacketID starting at firstID (+1 mod 256), EOM on
// the last packet; an empty payload gives one header-only packet.
//
// status is applied to every packet except that EOM is set only on the last
// one and the RESETCONNECTION bits only on the first (2.2.3.1.2).
// packetSize is the negotiated size; values above MaxPacketSize are clamped.
// Values below MinPacketSize are accepted (tests use them to exercise
// reassembly down to one payload byte per packet) but never below 9.
func AppendMessage(dst []byte, typ byte, status byte, spid uint16, packetSize int, firstID byte, payload []byte) []byte {
	if packetSize > MaxPacketSize {
		packetSize = MaxPacketSize
	}
	if packetSize < HeaderLen+1 {
		packetSize = HeaderLen + 1
	}
	room := packetSize - HeaderLen
	status &^= StatusEOM
	id := firstID
	first := true
	for {
		n := len(payload)
		last := n <= room
		if !last {
			n = room
		}
		st := status
		if !first {
			st &^= statusFirstPacketOnlyMsk
		}
		if last {
			st |= StatusEOM
		}
		h := Header{Type: typ, Status: st, Length: uint16(HeaderLen + n), SPID: spid, PacketID: id}
		dst = h.Append(dst)
		dst = append(dst, payload[:n]...)
		payload = payload[n:]
		if last {
			return dst
		}
		id++
		first = false
	}
}

// AppendAttention appends an ATTENTION message: a header-only packet of type
// 0x06 with EOM (2.2.1.7; spec example 4.10 is 06 01 00 08 00 00 01 00).
func AppendAttention(dst []byte, spid uint16) []byte {
	return Header{Type: PacketAttention, Status: StatusEOM, Length: HeaderLen, SPID: spid, PacketID: 1}.Append(dst)
}

// msgReader is a bounds-checked little-endian reader with a sticky error,
// shared by the message and token decoders: read a whole structure, check
// the error once, never panic on input. Running out of
// bytes yields ErrNeedMore, or a *ProtocolError when proto is set (the
// structure's own length said the bytes were there).
type msgReader struct {
	b     []byte
	off   int
	err   error
	token byte
	where string
	base  int // added to offsets in errors
	proto bool
}

func (r *msgReader) short(n int) bool {
	if r.err != nil {
		return true
	}
	if n < 0 || len(r.b)-r.off < n {
		if r.proto {
			r.err = protoErr(r.token, r.where, r.base+r.off, "field runs past the end of its structure")
		} else {
			r.err = ErrNeedMore
		}
		return true
	}
	return false
}

func (r *msgReader) fail(off int, msg string) {
	if r.err == nil {
		r.err = protoErr(r.token, r.where, r.base+off, msg)
	}
}

func (r *msgReader) rest() int { return len(r.b) - r.off }

func (r *msgReader) u8() byte {
	if r.short(1) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *msgReader) u16() uint16 {
	if r.short(2) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *msgReader) u32() uint32 {
	if r.short(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

// bytes returns the next n bytes, borrowed from the input.
func (r *msgReader) bytes(n int) []byte {
	if r.short(n) {
		return nil
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v
}

// copyBytes returns a copy of the next n bytes (nil when n is 0).
func (r *msgReader) copyBytes(n int) []byte {
	b := r.bytes(n)
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

func (r *msgReader) utf16(nbytes int) string {
	start := r.off
	b := r.bytes(nbytes)
	if r.err != nil || len(b) == 0 {
		return ""
	}
	s, err := DecodeUTF16LE(b)
	if err != nil {
		r.fail(start, err.Error())
	}
	return s
}

// bvarchar reads a B_VARCHAR (2.2.5.1.1).
func (r *msgReader) bvarchar() string { return r.utf16(2 * int(r.u8())) }

// usvarchar reads a US_VARCHAR.
func (r *msgReader) usvarchar() string { return r.utf16(2 * int(r.u16())) }

// wireHex formats a byte as two lower-case hex digits (error messages).
func wireHex(b byte) string {
	const hex = "0123456789abcdef"
	return string([]byte{hex[b>>4], hex[b&0xF]})
}
