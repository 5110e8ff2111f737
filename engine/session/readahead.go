package session

import (
	"crypto/tls"
	"net"
	"os"
	"sync"
	"time"
)

// Read-ahead: after login, a session's reads are served by readAheadConn.
// A goroutine of its own reads the transport into a small ring of chunks
// while the request goroutine decodes the previous ones, so the kernel's
// copy (and TLS decryption) overlaps with decoding instead of adding to
// it: on loopback, the read calls cost the decoding thread about 11 ms of
// CPU per 200,000 odbc5 rows against 26 ms of decoding, and read-ahead
// took the bench harness's odbc5 loopback leg from about 43 to 32 ms. The
// price is a copy from the chunk into the packet buffer on the decoding
// thread, and a goroutine handoff per chunk: with 64 KiB chunks the
// handoffs (a futex wake each on this VM) made the in-memory poc48 leg 70%
// slower; with 256 KiB chunks it is within a few percent.
//
// The lazy deadline (docs/ARCHITECTURE.md) moves with the wait: the request
// goroutine waits only when no chunk is ready, and only that wait is
// charged to the budget and bounded by the read deadline; a chunk already
// read ahead is served without a clock read or a timer, just as buffered
// bytes are. The reader goroutine itself reads without a deadline; it ends
// when the connection is closed or fails, and memory is bounded by the
// ring (ReadAhead chunks of readAheadChunk bytes).

const (
	readAheadChunk         = 256 << 10
	defaultReadAheadChunks = 4
	maxReadAheadChunks     = 64 // 16 MiB
	// A *tls.Conn's Read returns at most one record, 16 KiB of plaintext,
	// so 256 KiB chunks would each hold one record over TLS: the ring
	// is made of record-sized chunks there, sixteen for each 256 KiB
	// chunk, so that it holds the bytes it is configured for.
	tlsRecordPlaintext = 16 << 10
)

type readAheadConn struct {
	net.Conn // the transport: writes, addresses and Close go straight to it

	full   chan []byte // chunks read, in order; closed after the last
	free   chan []byte // chunks the request goroutine is done with
	closed chan struct{}
	err    error // why the reader stopped; written before full is closed

	cur  []byte // unread part of the chunk being served
	held []byte // that chunk, to be returned to free

	b *budget // the session's current budget (waiter.b): charged for waits

	mu       sync.Mutex
	deadline time.Time     // read deadline, as SetReadDeadline set it
	kick     chan struct{} // wakes a wait when the deadline changes
	timer    *time.Timer
	closeMu  sync.Once
}

// newReadAheadConn starts reading conn ahead with n chunks of 256 KiB (or
// the same bytes in TLS-record-sized chunks).
func newReadAheadConn(conn net.Conn, n int, b *budget) *readAheadConn {
	size := readAheadChunk
	if _, ok := conn.(*tls.Conn); ok {
		size = tlsRecordPlaintext
		n *= readAheadChunk / tlsRecordPlaintext
	}
	r := &readAheadConn{
		Conn:   conn,
		full:   make(chan []byte, n),
		free:   make(chan []byte, n),
		closed: make(chan struct{}),
		kick:   make(chan struct{}, 1),
		b:      b,
	}
	for range n {
		r.free <- make([]byte, size)
	}
	go r.readLoop()
	return r
}

func (r *readAheadConn) readLoop() {
	defer close(r.full)
	for {
		var b []byte
		select {
		case b = <-r.free:
		case <-r.closed:
			r.err = net.ErrClosed
			return
		}
		n, err := r.Conn.Read(b[:cap(b)])
		if n > 0 {
			r.full <- b[:n] // never blocks: at most n chunks exist
		} else {
			r.free <- b
		}
		if err != nil {
			r.err = err
			return
		}
	}
}

// Read serves p from the chunks read ahead, waiting for the next one only
// when none is ready.
func (r *readAheadConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(r.cur) == 0 {
		if r.held != nil {
			r.free <- r.held[:cap(r.held)]
			r.held = nil
		}
		var (
			b  []byte
			ok bool
		)
		select {
		case b, ok = <-r.full:
		default:
			var err error
			if b, ok, err = r.wait(); err != nil {
				return 0, err
			}
		}
		if !ok {
			return 0, r.err
		}
		r.cur, r.held = b, b
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// wait blocks for the next chunk under the read deadline and charges the
// budget for the time waited.
func (r *readAheadConn) wait() ([]byte, bool, error) {
	if !r.b.none {
		start := time.Now()
		defer func() { r.b.charge(time.Since(start)) }()
	}
	for {
		r.mu.Lock()
		dl := r.deadline
		r.mu.Unlock()
		var expired <-chan time.Time
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return nil, false, r.timeoutErr()
			}
			if r.timer == nil {
				r.timer = time.NewTimer(d)
			} else {
				r.timer.Reset(d)
			}
			expired = r.timer.C
		}
		select {
		case b, ok := <-r.full:
			r.stopTimer()
			return b, ok, nil
		case <-expired:
			return nil, false, r.timeoutErr()
		case <-r.kick:
			r.stopTimer() // the deadline changed: look again
		}
	}
}

func (r *readAheadConn) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
	}
}

func (r *readAheadConn) timeoutErr() error {
	return &net.OpError{Op: "read", Net: "tcp", Source: r.LocalAddr(), Addr: r.RemoteAddr(), Err: os.ErrDeadlineExceeded}
}

// SetReadDeadline bounds the request goroutine's waits for a chunk; it may
// be called from another goroutine (cancellation) and wakes a wait in
// progress.
func (r *readAheadConn) SetReadDeadline(t time.Time) error {
	r.mu.Lock()
	r.deadline = t
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
	return nil
}

func (r *readAheadConn) SetDeadline(t time.Time) error {
	_ = r.SetReadDeadline(t)
	return r.Conn.SetWriteDeadline(t)
}

func (r *readAheadConn) Close() error {
	r.stop()
	return r.Conn.Close()
}

// stop ends the reader goroutine without closing the transport: once it is
// waiting for a free chunk at once, else when the caller closes the socket
// under its Read. A session stops its reader and closes the raw socket
// (Conn.Close): closing a TLS transport would first send close_notify, a
// write of its own, on a session that may be broken.
func (r *readAheadConn) stop() { r.closeMu.Do(func() { close(r.closed) }) }
