package decode

import (
	"encoding/binary"
	"strconv"
)

// SQLBatch (MS-TDS 2.2.6.7) and the ALL_HEADERS prefix (2.2.5.3) it shares
// with RPC requests and transaction manager requests.

// ALL_HEADERS header types (2.2.5.3).
const (
	HeaderQueryNotifications    uint16 = 1
	HeaderTransactionDescriptor uint16 = 2
	HeaderTraceActivity         uint16 = 3
)

// StreamHeader is one ALL_HEADERS entry other than the transaction
// descriptor, kept as raw HeaderData.
type StreamHeader struct {
	Type uint16
	Data []byte
}

// SQLBatch is a SQL batch request.
type SQLBatch struct {
	// TxnDescriptor is 0 in autocommit mode, otherwise the descriptor from
	// ENVCHANGE type 8; OutstandingRequests is 1 without MARS.
	TxnDescriptor       uint64
	OutstandingRequests uint32
	// OtherHeaders holds query-notification, trace-activity and unknown
	// headers (decoded, and encoded after the transaction descriptor).
	OtherHeaders []StreamHeader
	SQL          string
}

// Decode parses a SQLBatch payload (TDS 7.2+: ALL_HEADERS required, with a
// transaction descriptor header; other header types are accepted and kept).
func (b *SQLBatch) Decode(payload []byte) error {
	*b = SQLBatch{}
	n, err := decodeAllHeaders(payload, "SQLBatch", &b.TxnDescriptor, &b.OutstandingRequests, &b.OtherHeaders)
	if err != nil {
		return err
	}
	text := payload[n:]
	s, err := DecodeUTF16LE(text)
	if err != nil {
		return &ProtocolError{Where: "SQLBatch", Offset: int64(n), Msg: "SQLText: " + err.Error()}
	}
	b.SQL = s
	return nil
}

// Encode appends the SQLBatch payload (ALL_HEADERS then UTF-16LE text).
func (b *SQLBatch) Encode(dst []byte) []byte {
	dst = appendAllHeaders(dst, b.TxnDescriptor, b.OutstandingRequests, b.OtherHeaders)
	return AppendUTF16LE(dst, b.SQL)
}

// decodeAllHeaders parses ALL_HEADERS at the start of payload and returns
// its length. TotalLength must cover at least one header and lie inside the
// payload, every HeaderLength must lie inside TotalLength and the headers
// must exactly fill it, each type may appear once, and the transaction
// descriptor header (required, 2.2.5.3) must carry 12 bytes.
func decodeAllHeaders(payload []byte, where string, txn *uint64, outstanding *uint32, other *[]StreamHeader) (int, error) {
	where += " ALL_HEADERS"
	le := binary.LittleEndian
	if len(payload) < 4 {
		return 0, protoErr(0, where, 0, "message too short for ALL_HEADERS")
	}
	total := int64(le.Uint32(payload))
	if total < 4+6 || total > int64(len(payload)) {
		return 0, protoErr(0, where, 0, "TotalLength "+strconv.FormatInt(total, 10)+" outside [10, "+strconv.Itoa(len(payload))+"]")
	}
	off := 4
	haveTxn := false
	var seen [4]bool
	for off < int(total) {
		if int(total)-off < 6 {
			return 0, protoErr(0, where, off, "truncated header")
		}
		hl := int64(le.Uint32(payload[off:]))
		typ := le.Uint16(payload[off+4:])
		if hl < 6 || hl > total-int64(off) {
			return 0, protoErr(0, where, off, "HeaderLength "+strconv.FormatInt(hl, 10)+" does not fit TotalLength")
		}
		data := payload[off+6 : off+int(hl)]
		if int(typ) < len(seen) {
			if seen[typ] {
				return 0, protoErr(0, where, off+4, "header type "+strconv.Itoa(int(typ))+" appears twice")
			}
			seen[typ] = true
		}
		if typ == HeaderTransactionDescriptor {
			if len(data) != 12 {
				return 0, protoErr(0, where, off, "transaction descriptor header data is "+strconv.Itoa(len(data))+" bytes, want 12")
			}
			*txn = le.Uint64(data)
			*outstanding = le.Uint32(data[8:])
			haveTxn = true
		} else {
			*other = append(*other, StreamHeader{Type: typ, Data: append([]byte(nil), data...)})
		}
		off += int(hl)
	}
	if !haveTxn {
		return 0, protoErr(0, where, 0, "transaction descriptor header missing")
	}
	return int(total), nil
}

// appendAllHeaders appends ALL_HEADERS: the transaction descriptor header,
// then the other headers.
func appendAllHeaders(dst []byte, txn uint64, outstanding uint32, other []StreamHeader) []byte {
	le := binary.LittleEndian
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = le.AppendUint32(dst, 18)
	dst = le.AppendUint16(dst, HeaderTransactionDescriptor)
	dst = le.AppendUint64(dst, txn)
	dst = le.AppendUint32(dst, outstanding)
	for _, h := range other {
		if h.Type == HeaderTransactionDescriptor {
			continue
		}
		dst = le.AppendUint32(dst, uint32(6+len(h.Data)))
		dst = le.AppendUint16(dst, h.Type)
		dst = append(dst, h.Data...)
	}
	le.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}
