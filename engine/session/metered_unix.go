//go:build unix

package session

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// meteredConn is the session's TCP connection. Its Read does the
// non-blocking read itself through syscall.RawConn, so it knows exactly
// when a read has to wait for the network: the request budget is charged
// only for those waits, and a read served from bytes the kernel already
// holds costs no clock reads at all (on a VM a clock read can cost a few
// hundred ns; a 200,000-row response takes over a thousand reads). Under
// TLS it sits below crypto/tls, so TLS reads are metered the same way.
type meteredConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	b    *budget       // the session's current budget (waiter.b)
	wire *atomic.Int64 // bytes received (Conn.WireBytes)
	fn   func(fd uintptr) bool

	// State of the Read in progress.
	p         []byte
	n         int
	err       error
	waiting   bool
	waitStart time.Time
}

func newMeteredConn(tc *net.TCPConn, b *budget, wire *atomic.Int64) (*meteredConn, error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	m := &meteredConn{TCPConn: tc, rc: rc, b: b, wire: wire}
	m.fn = m.readFD // bound once: no closure allocation per Read
	return m, nil
}

func (m *meteredConn) readFD(fd uintptr) bool {
	if m.waiting {
		m.b.charge(time.Since(m.waitStart))
		m.waiting = false
	}
	for {
		n, err := syscall.Read(int(fd), m.p)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if !m.b.none {
				m.waiting, m.waitStart = true, time.Now()
			}
			return false // RawConn.Read waits for readability (or the deadline)
		}
		m.n, m.err = n, err
		return true
	}
}

func (m *meteredConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	m.p, m.n, m.err = p, 0, nil
	err := m.rc.Read(m.fn)
	if m.waiting { // the wait ended by the deadline or a close
		m.b.charge(time.Since(m.waitStart))
		m.waiting = false
	}
	m.p = nil
	if err == nil && m.err != nil {
		err = os.NewSyscallError("read", m.err)
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: m.LocalAddr(), Addr: m.RemoteAddr(), Err: err}
	}
	if m.n <= 0 {
		return 0, io.EOF
	}
	m.wire.Add(int64(m.n))
	return m.n, nil
}

// meteredSockets: sessions over TCP read through meteredConn.
const meteredSockets = true
