package postgres

import (
	"errors"
	"io"
	"sync/atomic"
)

// copyPipe carries the COPY stream from the decoding goroutine to the
// goroutine running pgconn's CopyFrom, which calls Read with its own
// 64 KiB message buffer and sends each filled buffer as one CopyData
// message.
//
// The sink encodes rows into buffers it owns (buffer_size each, buffers of
// them) and hands complete ones over; Read copies them into pgconn's
// buffer: the one memmove of the owned-buffer design. Encoding the rows
// straight into pgconn's buffer instead (the hand-off design: Read passes
// its buffer to the decoder and waits until it is full) saves that
// memmove but serialises decoding and sending, since pgconn has one
// buffer and writes it to the socket before calling Read again: the
// decoder then waits for every socket write. Both were built and measured
// (BenchmarkHandoff in handoff_test.go; the README's Performance section has the figures): the owned
// buffers won, so they are what the sink uses.
//
// While buffers are free the decoder never waits; when all are in flight
// it waits for one (PostgreSQL is the slower side, and memory stays
// bounded at buffers × buffer_size plus the largest row).
type copyPipe struct {
	copyState
	full chan []byte   // filled buffers in stream order; closed at the end
	free chan []byte   // buffers the reader is done with
	stop chan struct{} // closed by abort: Read fails, pgconn sends CopyFail

	cur []byte // reader side: the buffer being copied out
	off int
}

// copyStream is how the sink hands COPY data to CopyFrom's reader. The
// sink uses copyPipe; the hand-off design it was measured against
// (handoff_test.go) is another copyStream.
type copyStream interface {
	io.Reader
	// send hands over b, complete tuples (after take, a prefix of the
	// buffer take returned, or a buffer the sink grew); false when the
	// COPY has already ended.
	send(b []byte) bool
	// take returns the next empty buffer to encode into (capacity at
	// least size unless it is pgconn's own); false when the COPY has ended.
	take(size int) ([]byte, bool)
	// end closes the stream (Read returns io.EOF after the last send);
	// abort makes Read fail. Exactly one of them is called, once.
	end()
	abort()
	state() *copyState
}

// copyState is the outcome of CopyFrom.
type copyState struct {
	done   chan struct{} // closed when CopyFrom has returned
	err    error         // CopyFrom's error, set before done is closed
	rows   int64         // rows CopyFrom reports, set before done is closed
	failed atomic.Bool   // CopyFrom returned with an error (checked per row)
}

func (c *copyState) state() *copyState { return c }

// finish records CopyFrom's outcome.
func (c *copyState) finish(rows int64, err error) {
	c.rows, c.err = rows, err
	if err != nil {
		c.failed.Store(true)
	}
	close(c.done)
}

// errAborted is what Read returns after abort: pgconn turns it into a
// CopyFail, and PostgreSQL ends the COPY with an error.
var errAborted = errors.New("postgres: load aborted")

func newCopyPipe(n, size int) *copyPipe {
	p := &copyPipe{
		copyState: copyState{done: make(chan struct{})},
		full:      make(chan []byte, n),
		free:      make(chan []byte, n),
		stop:      make(chan struct{}),
	}
	for i := 0; i < n; i++ {
		p.free <- make([]byte, 0, size)
	}
	return p
}

// Read implements io.Reader for pgconn.CopyFrom.
func (p *copyPipe) Read(dst []byte) (int, error) {
	for p.off == len(p.cur) {
		if p.cur != nil {
			p.free <- p.cur[:0] // cap n: never blocks
			p.cur = nil
		}
		select {
		case c, ok := <-p.full:
			if !ok {
				return 0, io.EOF
			}
			p.cur, p.off = c, 0
		case <-p.stop:
			return 0, errAborted
		}
	}
	n := copy(dst, p.cur[p.off:])
	p.off += n
	return n, nil
}

// send hands a filled buffer to the reader. After the COPY has ended the
// buffer is dropped (the error is reported by the sink).
func (p *copyPipe) send(b []byte) bool {
	select {
	case p.full <- b:
		return true
	case <-p.done:
		return false
	}
}

// take returns an empty buffer of at least size bytes, waiting while all
// are in flight; ok is false when the COPY has ended.
func (p *copyPipe) take(size int) (b []byte, ok bool) {
	select {
	case b = <-p.free:
	case <-p.done:
		return nil, false
	}
	// Buffers grow for rows bigger than a buffer; one far too large for
	// the rows that follow is given back to the garbage collector.
	if cap(b) > 4*size {
		b = make([]byte, 0, size)
	}
	return b[:0], true
}

// end closes the stream: Read returns io.EOF after the last buffer.
func (p *copyPipe) end() { close(p.full) }

// abort makes Read fail.
func (p *copyPipe) abort() { close(p.stop) }
