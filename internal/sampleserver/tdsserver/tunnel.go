package tdsserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"

	"github.com/tdsextract/tdsextract/decode"
)

// tunnelConn is the net.Conn a TLS server runs on in the TDS 7.x flow. While
// the handshake runs, TLS records travel inside PRELOGIN (0x12) packets
// (MS-TDS 2.2.6.5, 3.2.5.2): Read unwraps packet payloads and Write wraps
// each write in one PRELOGIN message. After the handshake, Passthrough
// switches it to plain pass-through, so later records go raw on the socket.
type tunnelConn struct {
	net.Conn
	passthrough atomic.Bool
	spid        uint16
	remain      int // payload bytes left in the current packet
	hdr         [8]byte
	wbuf        []byte
}

func newTunnelConn(c net.Conn, spid uint16) *tunnelConn {
	return &tunnelConn{Conn: c, spid: spid}
}

func (t *tunnelConn) setPassthrough() { t.passthrough.Store(true) }

func (t *tunnelConn) Read(p []byte) (int, error) {
	if t.passthrough.Load() {
		return t.Conn.Read(p)
	}
	for t.remain == 0 {
		if _, err := io.ReadFull(t.Conn, t.hdr[:]); err != nil {
			return 0, err
		}
		if t.hdr[0] != pktPrelogin {
			return 0, fmt.Errorf("tdsserver: packet type 0x%02x during the TLS handshake, want PRELOGIN", t.hdr[0])
		}
		n := int(binary.BigEndian.Uint16(t.hdr[2:4]))
		if n < 8 {
			return 0, fmt.Errorf("tdsserver: packet length %d during the TLS handshake", n)
		}
		t.remain = n - 8
	}
	if len(p) > t.remain {
		p = p[:t.remain]
	}
	n, err := t.Conn.Read(p)
	t.remain -= n
	return n, err
}

func (t *tunnelConn) Write(p []byte) (int, error) {
	if t.passthrough.Load() {
		return t.Conn.Write(p)
	}
	// One message per write; 4096 is the packet size before LOGIN7.
	t.wbuf = decode.AppendMessage(t.wbuf[:0], pktReply, 0, t.spid, decode.DefaultPacketSize, 1, p)
	if _, err := t.Conn.Write(t.wbuf); err != nil {
		return 0, err
	}
	return len(p), nil
}
