package session

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// Conn is one TDS session. It runs one request at a time; it is not safe
// for concurrent use (a second concurrent Query fails with ErrConnBusy).
//
// The read path: after login a goroutine of the session reads the socket
// ahead into a small ring of chunks (readahead.go), so receiving overlaps
// with decoding. Packets are copied from there into one reusable buffer
// with their 8-byte headers stripped on the way, the decoder runs over the
// buffered payload, and only when it needs more bytes does the session go
// to its reader (fill), which is the only place the request deadline is
// involved: it is armed only when no chunk is ready, so rows served from
// buffered bytes never touch a timer (docs/ARCHITECTURE.md).
// The buffer is compacted when its tail gets short and grows only up to
// the residency cap plus two packets. Config.ReadAhead < 0 makes the
// request goroutine read the socket itself.
type Conn struct {
	cfg       Config
	raw       net.Conn // the TCP connection
	transport net.Conn // what TDS packets travel over: raw, or TLS over raw; read ahead after login
	encrypted bool     // transport is TLS
	ra        *readAheadConn
	wire      atomic.Int64 // bytes received (WireBytes)
	w         waiter

	// Read side: c.buf[c.r:c.wpos] holds message payload bytes (packet
	// headers removed) not yet consumed by the decoder.
	buf       []byte
	r, wpos   int
	maxBuf    int
	pktRemain int     // payload bytes of the current packet still on the wire
	hdr       [8]byte // the next packet header, possibly partly read
	hdrN      int
	eom       bool // the current packet is the last of its message
	inMsg     bool // a packet header of the current message has been read

	// Write side.
	wbuf       []byte
	payload    []byte
	packetSize int
	attnPacket [decode.HeaderLen]byte

	stream        *decode.Stream
	discard       decode.Discard // drains and login responses
	cancelTimeout time.Duration
	attentions    int    // ATTENTION packets sent (tests)
	txn           uint64 // transaction descriptor from ENVCHANGE begin-transaction (0: autocommit)
	features      []byte // FeatureExt ids requested at login

	done   <-chan struct{} // the current request's ctx.Done()
	busy   atomic.Bool
	broken error // non-nil once the session is unusable

	// Session facts from login.
	spid          uint16
	serverName    string
	serverVersion [4]byte
	tdsVersion    uint32
	database      string
	collation     decode.Collation
	routedFrom    string
	routeTo       string // "server|port" from a routing ENVCHANGE
	port          int
}

// Info describes the session established by Connect.
type Info struct {
	SPID          uint16 // from the server's packet headers
	Server        string // LOGINACK program name, e.g. "Microsoft SQL Server"
	ServerVersion [4]byte
	TDSVersion    uint32 // as LOGINACK reports it (0x74000004 for 7.4)
	Database      string
	PacketSize    int    // negotiated
	Encrypted     bool   // the whole session is under TLS
	RoutedFrom    string // "host:port" of a gateway that routed us here, if any
	Collation     decode.Collation
}

// Info returns facts about the session.
func (c *Conn) Info() Info {
	return Info{
		SPID: c.spid, Server: c.serverName, ServerVersion: c.serverVersion, TDSVersion: c.tdsVersion,
		Database: c.database, PacketSize: c.packetSize, Encrypted: c.encrypted,
		RoutedFrom: c.routedFrom, Collation: c.collation,
	}
}

// Close ends the session.
func (c *Conn) Close() error {
	if c.broken == nil {
		c.broken = ErrConnBroken
	}
	if c.raw == nil {
		return nil
	}
	if c.ra != nil {
		c.ra.stop()
	}
	err := c.raw.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// fail records a fatal session error, closes the connection and returns err.
func (c *Conn) fail(err error) error {
	if c.broken == nil {
		c.broken = fmt.Errorf("%w: %w", ErrConnBroken, err)
	}
	if c.ra != nil {
		c.ra.stop()
	}
	if c.raw != nil {
		_ = c.raw.Close()
	}
	return err
}

// Broken reports whether the session was closed by a failure.
func (c *Conn) Broken() bool { return c.broken != nil }

// setRaw installs the TCP connection, metered (see meteredConn) when it is
// a *net.TCPConn, and returns what was installed. Either way the bytes
// read from it are counted for WireBytes.
func (c *Conn) setRaw(nc net.Conn) net.Conn {
	c.raw = countingConn{Conn: nc, n: &c.wire}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		if m, err := newMeteredConn(tc, &c.w.b, &c.wire); err == nil {
			c.raw = m
			c.w.metered = true
		}
	}
	return c.raw
}

// WireBytes returns the bytes this session has received from the network
// so far, login included (TLS records as they arrived). It may be called
// from any goroutine.
func (c *Conn) WireBytes() int64 { return c.wire.Load() }

// countingConn counts the bytes read from a connection that is not a
// *net.TCPConn (a custom Dialer's): one atomic add per read call, never
// per row.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// initIO sets up the buffers for a new transport.
func (c *Conn) initIO(transport net.Conn) {
	c.transport = transport
	c.encrypted = transport != c.raw
	c.w.conn = transport
	// Login waits are bounded by the socket deadline Connect sets from its
	// context; requests install their own budget.
	c.w.start(NoTimeout)
	if c.w.clock == nil {
		c.w.clock = time.Now
	}
	if c.buf == nil {
		c.buf = make([]byte, 2*maxPacketSize)
	}
	c.r, c.wpos, c.pktRemain, c.hdrN, c.eom, c.inMsg = 0, 0, 0, 0, false, false
	if c.packetSize == 0 {
		c.packetSize = decode.DefaultPacketSize
	}
	decode.AppendAttention(c.attnPacket[:0], 0)
}

// startReadAhead puts the read-ahead goroutine under the transport, once
// login is over (TLS in PRELOGIN packets and login-only TLS change the
// transport until then). The metered socket below stops charging the
// request budget: the reader goroutine's waits are not the request's;
// readAheadConn charges the request goroutine's own waits instead.
func (c *Conn) startReadAhead() {
	n := c.cfg.ReadAhead
	if n < 0 || c.ra != nil {
		return
	}
	if n == 0 {
		n = defaultReadAheadChunks
	}
	if m, ok := c.raw.(*meteredConn); ok {
		m.b = &budget{none: true}
	}
	c.ra = newReadAheadConn(c.transport, n, &c.w.b)
	c.transport = c.ra
	c.w.conn = c.ra
	c.w.metered = true
}

// errMessageEnded: the decoder needs more bytes but the server's message is
// complete: a truncated token stream.
var errMessageEnded = errors.New("engine: the server's message ended in the middle of a token")

// msgDone reports whether the current message has been read completely.
func (c *Conn) msgDone() bool { return c.inMsg && c.eom && c.pktRemain == 0 }

// fill appends payload bytes of the server's messages to c.buf[c.wpos:],
// reading from the network at least once. It is the only place the session
// waits for the network on the read side (the lazy deadline is armed
// inside c.w.read). With nextMessage false, a need for bytes past
// the end of the current message is errMessageEnded.
func (c *Conn) fill(nextMessage bool) error {
	if c.r > 0 && (c.r == c.wpos || len(c.buf)-c.wpos < c.packetSize) {
		c.wpos = copy(c.buf, c.buf[c.r:c.wpos])
		c.r = 0
	}
	if c.wpos == len(c.buf) {
		if len(c.buf) >= c.maxBuf {
			return &decode.ProtocolError{Where: "read buffer", Msg: fmt.Sprintf("a token needs more than %d resident bytes", c.maxBuf), Offset: -1}
		}
		n := min(2*len(c.buf), c.maxBuf)
		nb := make([]byte, n)
		copy(nb, c.buf[:c.wpos])
		c.buf = nb
	}
	for {
		if c.pktRemain == 0 {
			if c.msgDone() {
				if !nextMessage {
					return errMessageEnded
				}
				c.inMsg = false
			}
			if c.hdrN < decode.HeaderLen {
				n, err := c.w.read(c.hdr[c.hdrN:])
				c.hdrN += n
				if c.hdrN < decode.HeaderLen {
					if err == nil {
						continue
					}
					if errors.Is(err, io.EOF) && (c.hdrN > 0 || c.inMsg) {
						err = io.ErrUnexpectedEOF
					}
					return err
				}
			}
			var h decode.Header
			if err := h.Decode(c.hdr[:]); err != nil {
				return err
			}
			if h.Type != decode.PacketReply {
				return &decode.ProtocolError{Where: "packet header", Msg: fmt.Sprintf("server sent packet type 0x%02X, want 0x04", h.Type)}
			}
			if h.SPID != 0 && c.spid == 0 {
				c.spid = h.SPID
			}
			c.hdrN = 0
			c.inMsg = true
			c.pktRemain = int(h.Length) - decode.HeaderLen
			c.eom = h.Status&decode.StatusEOM != 0
			if c.pktRemain == 0 {
				if c.eom {
					return nil // an empty final packet: the caller sees msgDone
				}
				continue
			}
		}
		space := len(c.buf) - c.wpos
		want := min(space, c.pktRemain)
		end := c.wpos + want
		if want == c.pktRemain && space >= want+decode.HeaderLen {
			// Also read the next packet's header if it is already there:
			// it saves one read call per packet.
			end += decode.HeaderLen
		}
		n, err := c.w.read(c.buf[c.wpos:end])
		if n > c.pktRemain {
			c.hdrN = copy(c.hdr[:], c.buf[c.wpos+c.pktRemain:c.wpos+n])
			n = c.pktRemain
		}
		c.wpos += n
		c.pktRemain -= n
		if n > 0 {
			return nil // a pending error will recur on the next read
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// readMessage reads one whole server message (login phase) and returns its
// payload, valid until the next read. maxLen bounds it.
func (c *Conn) readMessage(maxLen int) ([]byte, error) {
	c.r, c.wpos = 0, 0
	saved := c.maxBuf
	c.maxBuf = max(maxLen, len(c.buf))
	defer func() { c.maxBuf = saved }()
	for !c.msgDone() {
		if err := c.fill(true); err != nil {
			return nil, err
		}
		if c.wpos > maxLen {
			return nil, &decode.ProtocolError{Where: "login response", Msg: fmt.Sprintf("message longer than %d bytes", maxLen)}
		}
	}
	c.inMsg = false
	p := c.buf[:c.wpos]
	c.r, c.wpos = 0, 0
	return p, nil
}

// writeMessage sends payload as one message of type typ. On failure it
// reports whether anything was sent: a request that failed before its
// first byte left leaves the session usable.
func (c *Conn) writeMessage(typ, status byte, payload []byte) (sent bool, err error) {
	c.wbuf = decode.AppendMessage(c.wbuf[:0], typ, status, 0, c.packetSize, 1, payload)
	n, err := c.w.write(c.wbuf)
	return n > 0, err
}

// netErr turns an i/o failure into a *NetError and breaks the session.
func (c *Conn) netErr(op string, err error) error {
	var pe *decode.ProtocolError
	if errors.As(err, &pe) {
		return c.fail(err)
	}
	return c.fail(&NetError{Op: op, Err: err})
}
