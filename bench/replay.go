package main

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// The in-memory mode: both Go decoders read the same pre-built bytes. A
// recording proxy captures, once per client, the server's reply to each
// client message (PRELOGIN, LOGIN7, the query); a replayConn then plays
// those replies back from memory to a client that dials it, so the timed
// part involves no network and no server.

// script is the server's replies, one per client message, each a whole
// TDS message (all its packets).
type script struct {
	replies  [][]byte
	requests [][]byte // the client's messages, for replaying them to a server
}

// readPacket reads one TDS packet, its 8-byte header included.
func readPacket(r io.Reader) ([]byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[2:4]))
	if n < len(hdr) {
		return nil, errors.New("a TDS packet shorter than its header")
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	_, err := io.ReadFull(r, pkt[len(hdr):])
	return pkt, err
}

// endOfMessage reports whether pkt is the last packet of its message.
func endOfMessage(pkt []byte) bool { return pkt[1]&0x01 != 0 }

// relay passes packets from src to dst until either fails, appending each
// complete message (split at EOM) to *msgs under mu as its last packet
// goes through.
func relay(src io.Reader, dst io.Writer, mu *sync.Mutex, msgs *[][]byte) {
	var msg []byte
	for {
		pkt, err := readPacket(src)
		if err != nil {
			return
		}
		msg = append(msg, pkt...)
		if endOfMessage(pkt) {
			mu.Lock()
			*msgs = append(*msgs, msg)
			mu.Unlock()
			msg = nil
		}
		if _, err := dst.Write(pkt); err != nil {
			return
		}
	}
}

// record runs client against a proxy in front of serverAddr and returns
// the server's replies in order.
func record(serverAddr string, client func(proxyAddr string) error) (*script, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	sc := &script{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		s, err := net.Dial("tcp", serverAddr)
		if err != nil {
			return
		}
		defer s.Close()
		go func() { // client -> server, split into messages at EOM
			// The client hanging up ends the recording: closing the
			// server side ends the reply loop below at once.
			defer s.Close()
			relay(c, s, &mu, &sc.requests)
		}()
		relay(s, c, &mu, &sc.replies) // server -> client
	}()
	cerr := client(ln.Addr().String())
	ln.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	if cerr != nil {
		return nil, cerr
	}
	if len(sc.replies) < 3 {
		return nil, errors.New("bench: recorded fewer than 3 server messages")
	}
	return sc, nil
}

// replayConn is a net.Conn that answers each complete client message with
// the next recorded reply. Like a socket, a Read with nothing to read
// waits (for the next request or Close), and it is safe for one reader and
// one writer goroutine (tdsextract reads ahead on a goroutine of its own).
type replayConn struct {
	mu      sync.Mutex
	ready   *sync.Cond // pending or closed changed
	sc      *script
	next    int
	pending []byte // reply bytes not yet read
	inHdr   [8]byte
	inN     int // bytes of the current client packet header seen
	inLeft  int // payload bytes of the current client packet still to come
	closed  bool
}

func newReplayConn(sc *script) *replayConn {
	r := &replayConn{sc: sc}
	r.ready = sync.NewCond(&r.mu)
	return r
}

func (r *replayConn) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.pending) == 0 && !r.closed {
		r.ready.Wait()
	}
	if len(r.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// Write consumes client packets; at each EOM the next reply is queued.
func (r *replayConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	total := len(p)
	for len(p) > 0 {
		if r.inLeft > 0 {
			k := min(r.inLeft, len(p))
			r.inLeft -= k
			p = p[k:]
			if r.inLeft == 0 && r.inHdr[1]&0x01 != 0 {
				r.reply()
			}
			continue
		}
		k := copy(r.inHdr[r.inN:], p)
		r.inN += k
		p = p[k:]
		if r.inN == 8 {
			r.inN = 0
			r.inLeft = int(binary.BigEndian.Uint16(r.inHdr[2:4])) - 8
			if r.inLeft <= 0 {
				r.inLeft = 0
				if r.inHdr[1]&0x01 != 0 {
					r.reply()
				}
			}
		}
	}
	return total, nil
}

func (r *replayConn) reply() {
	if r.next < len(r.sc.replies) {
		r.pending = r.sc.replies[r.next]
		r.next++
		r.ready.Broadcast()
	}
}

func (r *replayConn) Close() error {
	r.mu.Lock()
	r.closed = true
	r.ready.Broadcast()
	r.mu.Unlock()
	return nil
}

func (r *replayConn) LocalAddr() net.Addr              { return replayAddr{} }
func (r *replayConn) RemoteAddr() net.Addr             { return replayAddr{} }
func (r *replayConn) SetDeadline(time.Time) error      { return nil }
func (r *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (r *replayConn) SetWriteDeadline(time.Time) error { return nil }

type replayAddr struct{}

func (replayAddr) Network() string { return "memory" }
func (replayAddr) String() string  { return "memory" }

// readMessage reads packets from c until one with EOM and returns the
// total bytes read.
func readMessage(c net.Conn, buf []byte) (int64, error) {
	var total int64
	for {
		if _, err := io.ReadFull(c, buf[:8]); err != nil {
			return total, err
		}
		n := int(binary.BigEndian.Uint16(buf[2:4]))
		if n < 8 || n > len(buf) {
			return total, errors.New("bench: bad packet length")
		}
		if _, err := io.ReadFull(c, buf[8:n]); err != nil {
			return total, err
		}
		total += int64(n)
		if buf[1]&0x01 != 0 {
			return total, nil
		}
	}
}
