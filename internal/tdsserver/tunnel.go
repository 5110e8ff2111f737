package tdsserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
)

// tunnelConn is the net.Conn a TLS server runs on in the TDS 7.x flow. While
// the handshake runs, TLS records travel inside PRELOGIN (0x12) packets
// (MS-TDS 2.2.6.5, 3.2.5.2): Read unwraps packet payloads and Write wraps
// each write in one PRELOGIN message. After the handshake, Passthrough
// switches it to plain pass-through, so later records go raw on the socket.
type tunnelConn struct {
	net.Conn
	mu          sync.Mutex
	passthrough bool
	spid        uint16
	remain      int  // payload bytes left in the current packet
	eom         bool // the current packet is the last of its message
	hdr         [8]byte
	wbuf        []byte
}

func newTunnelConn(c net.Conn, spid uint16) *tunnelConn {
	return &tunnelConn{Conn: c, spid: spid}
}

func (t *tunnelConn) setPassthrough() {
	t.mu.Lock()
	t.passthrough = true
	t.mu.Unlock()
}

func (t *tunnelConn) Read(p []byte) (int, error) {
	t.mu.Lock()
	pass := t.passthrough
	t.mu.Unlock()
	if pass {
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
		t.eom = t.hdr[1]&statusEOM != 0
	}
	if len(p) > t.remain {
		p = p[:t.remain]
	}
	n, err := t.Conn.Read(p)
	t.remain -= n
	return n, err
}

func (t *tunnelConn) Write(p []byte) (int, error) {
	t.mu.Lock()
	pass := t.passthrough
	t.mu.Unlock()
	if pass {
		return t.Conn.Write(p)
	}
	// One message per write; 4096 is the packet size before LOGIN7.
	t.wbuf = appendPackets(t.wbuf[:0], pktReply, t.spid, 4096, 1, p, true)
	if _, err := t.Conn.Write(t.wbuf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// appendPackets frames payload as packets of at most size bytes; EOM is set
// on the last one when eom is true. An empty payload gives one header-only packet.
func appendPackets(dst []byte, typ byte, spid uint16, size int, id byte, payload []byte, eom bool) []byte {
	max := size - 8
	for {
		n := len(payload)
		last := n <= max
		if !last {
			n = max
		}
		st := byte(0)
		if last && eom {
			st = statusEOM
		}
		dst = append(dst, typ, st, byte((n+8)>>8), byte(n+8), byte(spid>>8), byte(spid), id, 0)
		dst = append(dst, payload[:n]...)
		payload = payload[n:]
		id++
		if last {
			return dst
		}
	}
}
