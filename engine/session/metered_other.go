//go:build !unix

package session

import (
	"errors"
	"net"
	"sync/atomic"
)

// meteredConn needs a non-blocking read of the socket from inside
// syscall.RawConn.Read, which only Unix sockets offer (Windows sockets are
// overlapped: a plain recv on one blocks). Here newMeteredConn declines and
// the session reads through countingConn; waiter.read then arms the same
// lazy deadline (once per request, only when the buffer is exhausted) and
// charges the budget with the clock around each network read. The
// semantics are the same; the cost is two clock reads per network read
// instead of per wait, and a read served from bytes the kernel already
// holds is charged its few microseconds.
type meteredConn struct {
	*net.TCPConn
	b *budget
}

func newMeteredConn(*net.TCPConn, *budget, *atomic.Int64) (*meteredConn, error) {
	return nil, errors.ErrUnsupported
}

// meteredSockets: sessions over TCP read through countingConn.
const meteredSockets = false
