package tdsserver

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Packet types and status bits (MS-TDS 2.2.3.1). The decode package has the
// same constants; the server keeps its own few so that its I/O layer reads
// on its own terms (it never buffers more than one message of a client).
const (
	pktSQLBatch    byte = 0x01
	pktRPC         byte = 0x03
	pktReply       byte = 0x04
	pktAttention   byte = 0x06
	pktBulkLoad    byte = 0x07
	pktFedAuth     byte = 0x08
	pktTransMgr    byte = 0x0E
	pktLogin7      byte = 0x10
	pktSSPI        byte = 0x11
	pktPrelogin    byte = 0x12
	statusEOM      byte = 0x01
	statusIgnore   byte = 0x02
	statusReset    byte = 0x08
	statusResetTxn byte = 0x10
)

// maxRequest bounds a client message: requests are SQL text and parameters,
// nothing a test needs more than this for. Larger messages are refused
// before their bytes are buffered.
const maxRequest = 64 << 20

// message is one client message.
type message struct {
	typ     byte
	status  byte // status of the first packet (reset-connection bits)
	ignore  bool // the last packet carried IGNORE: the client abandoned it
	payload []byte
	err     error
}

// readMessage reads packets until EOM. buf is reused for the payload. If
// want is not zero, a first packet of another type fails at once, before
// its announced length is waited for.
func readMessage(r *bufio.Reader, buf []byte, maxPacket int, want byte) (message, error) {
	var hdr [8]byte
	m := message{payload: buf[:0]}
	first := true
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if !first && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return m, err
		}
		n := int(binary.BigEndian.Uint16(hdr[2:4]))
		if n < 8 || n > maxPacket {
			return m, fmt.Errorf("tdsserver: packet length %d outside 8..%d", n, maxPacket)
		}
		if first {
			if want != 0 && hdr[0] != want {
				return m, fmt.Errorf("tdsserver: packet type 0x%02x, want 0x%02x", hdr[0], want)
			}
			m.typ, m.status = hdr[0], hdr[1]
			first = false
		} else if hdr[0] != m.typ {
			return m, fmt.Errorf("tdsserver: packet type 0x%02x inside a message of type 0x%02x", hdr[0], m.typ)
		}
		if len(m.payload)+n-8 > maxRequest {
			return m, fmt.Errorf("tdsserver: request larger than %d bytes", maxRequest)
		}
		start := len(m.payload)
		m.payload = append(m.payload, make([]byte, n-8)...)
		if _, err := io.ReadFull(r, m.payload[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return m, err
		}
		if hdr[1]&statusEOM != 0 {
			m.ignore = hdr[1]&statusIgnore != 0
			return m, nil
		}
	}
}
