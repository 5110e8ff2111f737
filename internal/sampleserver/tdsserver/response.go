package tdsserver

import (
	"errors"
	"time"
)

// errFaultClose reports that a fault knob closed the connection on purpose.
var errFaultClose = errors.New("tdsserver: connection closed by a fault knob")

// flushAt is how many bytes of complete packets the writer collects before
// one write system call: big enough that syscalls do not dominate, small
// enough that ATTENTION is noticed quickly and memory stays bounded.
const flushAt = 128 << 10

// respWriter frames one server message (type 0x04 packets) directly in its
// buffer: payload bytes are copied once, into place behind a reserved
// header; complete packets are written in large batches. A packet is closed
// only when more payload arrives, so the last packet is never empty and EOM
// lands on it.
type respWriter struct {
	c    *conn
	buf  []byte
	open int // offset of the open packet's header in buf
	size int // packet size (header included)
	id   byte

	// Fault state for the current message (nil when no byte-level fault applies).
	split   bool  // SplitTokens
	trickle int64 // bytes per second
	closeAt int64 // close after this many bytes of the message (0 = never)
	sent    int64 // bytes of this message written to the socket
	err     error // sticky: the connection is gone
}

// begin starts a new message with the given packet size.
func (w *respWriter) begin(size int) {
	w.buf = w.buf[:0]
	w.size = size
	w.id = 1
	w.sent = 0
	w.split, w.trickle, w.closeAt = false, 0, 0
	w.openPacket()
}

// applyFaults arms the byte-level knobs for the current message.
func (w *respWriter) applyFaults(f *Faults) {
	w.split = f.SplitTokens
	w.trickle = f.TrickleBytesPerSec
	w.closeAt = f.CloseAfterBytes
}

func (w *respWriter) openPacket() {
	w.open = len(w.buf)
	w.buf = append(w.buf, pktReply, 0, 0, 0, byte(w.c.spid>>8), byte(w.c.spid), w.id, 0)
	w.id++
}

// capacity is the packet size for the open packet.
func (w *respWriter) capacity() int {
	if w.split {
		// 1..13 payload bytes, varying, so that tokens and values straddle
		// packets at every possible offset.
		return 8 + 1 + int(w.id)*7%13
	}
	return w.size
}

// closePacket fills in the open packet's header.
func (w *respWriter) closePacket(eom bool) {
	p := w.buf[w.open:]
	n := len(p)
	p[1] = 0
	if eom {
		p[1] = statusEOM
	}
	p[2], p[3] = byte(n>>8), byte(n)
}

// write appends payload bytes to the message.
func (w *respWriter) write(b []byte) {
	for len(b) > 0 {
		// room < 0 when SplitTokens was armed after the open packet took
		// more (the reset-connection ENVCHANGE): close it as it is.
		room := w.capacity() - (len(w.buf) - w.open)
		if room <= 0 {
			w.closePacket(false)
			if w.open >= flushAt {
				w.flush()
			}
			w.openPacket()
			continue
		}
		n := min(room, len(b))
		w.buf = append(w.buf, b[:n]...)
		b = b[n:]
	}
	if w.open >= flushAt {
		w.flush()
	}
}

// flush writes the complete packets (everything before the open one).
func (w *respWriter) flush() error {
	if w.open == 0 {
		return w.err
	}
	w.send(w.buf[:w.open])
	n := copy(w.buf, w.buf[w.open:])
	w.buf = w.buf[:n]
	w.open = 0
	return w.err
}

// flushPending closes the open packet early (if it has payload) and writes
// everything, so that a stall or a close happens after the client could
// read all rows so far.
func (w *respWriter) flushPending() error {
	if len(w.buf)-w.open > 8 {
		w.closePacket(false)
		w.openPacket()
	}
	return w.flush()
}

// end closes the message (EOM) and writes it.
func (w *respWriter) end() error {
	w.closePacket(true)
	w.send(w.buf)
	w.buf = w.buf[:0]
	w.open = 0
	return w.err
}

// send writes b to the socket, applying CloseAfterBytes and trickle.
func (w *respWriter) send(b []byte) {
	if w.err != nil {
		return
	}
	if w.closeAt > 0 && w.sent+int64(len(b)) >= w.closeAt {
		b = b[:w.closeAt-w.sent]
		w.rawSend(b)
		if w.err == nil {
			w.c.closeTransport()
			w.err = errFaultClose
		}
		return
	}
	w.rawSend(b)
}

func (w *respWriter) rawSend(b []byte) {
	if w.trickle <= 0 {
		w.writeSock(b)
		return
	}
	// Pieces of about 1/20 s worth of bytes, then sleep 50 ms.
	piece := max(int(w.trickle/20), 1)
	for len(b) > 0 && w.err == nil {
		n := min(piece, len(b))
		w.writeSock(b[:n])
		b = b[n:]
		if len(b) > 0 {
			if !w.c.sleep(time.Duration(int64(n) * int64(time.Second) / w.trickle)) {
				w.err = errFaultClose
			}
		}
	}
}

func (w *respWriter) writeSock(b []byte) {
	if len(b) == 0 {
		return
	}
	n, err := w.c.rw.Write(b)
	w.sent += int64(n)
	w.c.srv.stats.bytesSent.Add(int64(n))
	if err != nil {
		w.err = err
	}
}
