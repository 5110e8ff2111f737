package tdsserver

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sqlexec"
)

// Server identity as reported to clients.
var (
	// serverVersion is the PRELOGIN VERSION and LOGINACK ProgVersion:
	// SQL Server 2022 (16.0.4135).
	serverVersion = [4]byte{16, 0, 0x10, 0x27}
	progName      = "Microsoft SQL Server\x00\x00"
	serverName    = "TDSEXTRACT-SAMPLE"
	// defaultCollation is SQL_Latin1_General_CP1_CI_AS (LCID 0x409, sort 52).
	defaultCollation = decode.Collation{Info: 0x00D00409, SortID: 0x34}
)

// TDS versions as the uint32 values of LOGIN7 (little-endian on the wire)
// and LOGINACK (big-endian on the wire).
const (
	tds72  uint32 = 0x72090002
	tds73A uint32 = 0x730A0003
	tds73B uint32 = 0x730B0003
	tds74  uint32 = 0x74000004
)

type conn struct {
	srv  *Server
	raw  net.Conn // the TCP connection
	rw   net.Conn // current transport: raw or TLS
	br   *bufio.Reader
	spid uint16
	log  func(msg string, args ...any)

	packetSize int
	tdsVersion uint32
	database   string
	features   struct{ utf8, json, vector bool }

	w      respWriter
	rowBuf []byte
	tok    []byte // scratch for tokens

	faults     *Faults // the faults of the current request (Server.SetFaults may change them between requests)
	wroteFinal bool    // the batch's final DONE is written
	txn        uint64  // transactions begun (descriptor counter)

	closeOnce sync.Once
	readers   sync.WaitGroup // the request loop's reader goroutine

	// Attention bookkeeping: the reader numbers attentions as they arrive;
	// the request loop acknowledges up to a number with one DONE_ATTN.
	attnRecv  atomic.Int64
	attnAcked int64
	attnWake  chan struct{} // signalled on each attention (cap 1)

	sess *sqlexec.Session // nil until login succeeds (and for a routed login)
}

func newConn(s *Server, nc net.Conn, spid uint16) *conn {
	c := &conn{srv: s, raw: nc, rw: nc, spid: spid, packetSize: 4096, attnWake: make(chan struct{}, 1)}
	c.w.c = c
	lg := s.cfg.Logger.With("spid", spid, "remote", nc.RemoteAddr().String())
	c.log = lg.Debug
	return c
}

// closeTransport closes the TCP connection (idempotent).
func (c *conn) closeTransport() {
	c.closeOnce.Do(func() { c.raw.Close() })
}

// sleep waits d; false if the server closed meanwhile.
func (c *conn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.srv.done:
		return false
	}
}

// stall waits d or until an attention arrives; false if the server closed.
func (c *conn) stall(d time.Duration) bool {
	if c.attnRecv.Load() > c.attnAcked {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.attnWake:
		return true
	case <-c.srv.done:
		return false
	}
}

func (c *conn) serve() {
	defer func() {
		c.closeTransport() // unblocks the reader goroutine
		c.readers.Wait()
	}()
	defer func() {
		// A bug must cost one connection, not the whole server (the CLI's
		// sample-server serves many clients): log it loudly and close.
		if r := recover(); r != nil {
			c.srv.cfg.Logger.Error("tdsserver: panic serving a connection", "spid", c.spid, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	if err := c.handshakeAndLogin(); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errLoginFailed) {
			c.srv.cfg.Logger.Warn("tdsserver: login", "spid", c.spid, "err", err)
		}
		return
	}
	if c.sess == nil { // routed
		return
	}
	if err := c.requestLoop(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errFaultClose) {
		c.log("tdsserver: connection ended", "err", err)
	}
}

var errLoginFailed = errors.New("tdsserver: login failed")

// handshakeAndLogin runs PRELOGIN, TLS and LOGIN7 (MS-TDS 3.3.5.1-3.3.5.3).
func (c *conn) handshakeAndLogin() error {
	cfg := &c.srv.cfg
	c.raw.SetDeadline(time.Now().Add(30 * time.Second))
	defer c.raw.SetDeadline(time.Time{})

	strict := cfg.Encryption == EncryptStrict
	if strict {
		// TDS 8.0: TLS first, directly on TCP; PRELOGIN travels inside.
		tc := tls.Server(c.raw, c.tlsConfig(true))
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("tdsserver: strict TLS handshake: %w", err)
		}
		c.rw = tc
	}
	c.br = bufio.NewReaderSize(c.rw, 64<<10)

	m, err := readMessage(c.br, nil, 65535, pktPrelogin)
	if err != nil {
		return err
	}
	if m.typ != pktPrelogin {
		return fmt.Errorf("tdsserver: first message has type 0x%02x, want PRELOGIN", m.typ)
	}
	var pre decode.Prelogin
	if err := pre.Decode(m.payload); err != nil {
		return err
	}
	clientEnc := pre.Encryption &^ decode.EncryptClientCert
	reply := decode.Prelogin{Version: serverVersion, MARS: 0}
	if pre.HasFedAuthRequired {
		// 0: SQL authentication is allowed besides federated authentication.
		reply.HasFedAuthRequired = true
		reply.FedAuthRequired = 0
	}
	tlsMode := tlsNone // what the client and server agreed on
	switch cfg.Encryption {
	case EncryptStrict:
		reply.Encryption = decode.EncryptNotSup // ignored in TDS 8.0: the channel is already TLS
	case EncryptNotSup:
		reply.Encryption = decode.EncryptNotSup
	case EncryptOff:
		switch clientEnc {
		case decode.EncryptOff:
			reply.Encryption, tlsMode = decode.EncryptOff, tlsLoginOnly
		case decode.EncryptNotSup:
			reply.Encryption = decode.EncryptNotSup
		default:
			reply.Encryption, tlsMode = decode.EncryptOn, tlsFull
		}
	case EncryptOn:
		if clientEnc == decode.EncryptNotSup {
			reply.Encryption = decode.EncryptNotSup
		} else {
			reply.Encryption, tlsMode = decode.EncryptOn, tlsFull
		}
	case EncryptRequired:
		reply.Encryption, tlsMode = decode.EncryptReq, tlsFull
	}
	out := decode.AppendMessage(nil, pktReply, 0, c.spid, decode.DefaultPacketSize, 1, reply.Encode(nil))
	if _, err := c.rw.Write(out); err != nil {
		return err
	}
	if cfg.Encryption == EncryptRequired && clientEnc == decode.EncryptNotSup {
		// The client cannot encrypt and we insist: it will hang up; so do we.
		return fmt.Errorf("tdsserver: client does not support encryption, server requires it")
	}
	if cfg.Encryption == EncryptNotSup && (clientEnc == decode.EncryptOn || clientEnc == decode.EncryptReq) {
		return fmt.Errorf("tdsserver: client requires encryption, server does not support it")
	}

	if tlsMode != tlsNone {
		if c.br.Buffered() > 0 {
			return errors.New("tdsserver: client sent data before the TLS handshake")
		}
		tun := newTunnelConn(c.raw, c.spid)
		tc := tls.Server(tun, c.tlsConfig(false))
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("tdsserver: TLS handshake: %w", err)
		}
		tun.setPassthrough()
		c.rw = tc
		c.br = bufio.NewReaderSize(c.rw, 64<<10)
	}

	// LOGIN7 (or, rarely, another PRELOGIN: not supported).
	m, err = readMessage(c.br, nil, 65535, pktLogin7)
	if err != nil {
		return err
	}
	if m.typ != pktLogin7 {
		return fmt.Errorf("tdsserver: expected LOGIN7, got packet type 0x%02x", m.typ)
	}
	if tlsMode == tlsLoginOnly {
		// Encryption OFF: only the LOGIN7 packet was encrypted; the rest
		// of the connection is plaintext on the same socket.
		if c.br.Buffered() > 0 {
			return errors.New("tdsserver: client sent data after LOGIN7 before the response")
		}
		c.rw = c.raw
		c.br = bufio.NewReaderSize(c.rw, 64<<10)
	}
	var login decode.Login7
	if err := login.Decode(m.payload); err != nil {
		return err
	}
	return c.login(&login)
}

const (
	tlsNone = iota
	tlsLoginOnly
	tlsFull
)

func (c *conn) tlsConfig(strict bool) *tls.Config {
	tc := &tls.Config{
		Certificates:           []tls.Certificate{c.srv.cert},
		SessionTicketsDisabled: true,
	}
	if strict {
		tc.NextProtos = []string{"tds/8.0"}
		tc.MinVersion = tls.VersionTLS12
	} else {
		// SQL Server speaks TLS 1.2 in the tunnelled 7.x handshake; TLS 1.3
		// only with TDS 8.0. Capping here keeps post-handshake messages out
		// of the PRELOGIN tunnel.
		tc.MaxVersion = tls.VersionTLS12
		tc.MinVersion = tls.VersionTLS10
	}
	return tc
}

// login authenticates and sends the login response.
func (c *conn) login(l *decode.Login7) error {
	cfg := &c.srv.cfg
	c.w.begin(4096)
	var requested []decode.Feature
	fedAuth := false
	var token []byte
	for _, f := range l.Features {
		switch f.ID {
		case decode.FeatureFedAuth:
			fedAuth = true
			token = parseFedAuthToken(f.Data)
		case decode.FeatureUTF8Support, decode.FeatureJSONSupport, decode.FeatureVectorSupport:
			requested = append(requested, f)
		}
	}

	user := l.UserName
	ok := false
	if fedAuth {
		user = "<token-identified principal>"
		wide, _ := decode.DecodeUTF16LE(token) // the token as UTF-16LE text ("" when odd-length)
		if name, found := cfg.AccessTokens[string(token)]; found && len(token) > 0 {
			user, ok = name, true
		} else if name, found := cfg.AccessTokens[wide]; found && len(token) > 0 {
			user, ok = name, true
		}
	} else {
		for u, pw := range cfg.Users {
			if strings.EqualFold(u, l.UserName) && pw == l.Password {
				ok, user = true, u
				break
			}
		}
	}
	db := l.Database
	dbOK := db == "" || strings.EqualFold(db, cfg.Database) || strings.EqualFold(db, "master") || strings.EqualFold(db, "tempdb")
	if !ok || !dbOK {
		c.srv.stats.loginFailures.Add(1)
		var b []byte
		if ok && !dbOK {
			b = (&decode.Message{Token: decode.TokenError, Number: 4060, State: 1, Class: 11, Server: serverName, Line: 1,
				Text: fmt.Sprintf("Cannot open database \"%s\" requested by the login. The login failed.", db)}).Append(b)
		}
		b = (&decode.Message{Token: decode.TokenError, Number: 18456, State: 1, Class: 14, Server: serverName, Line: 1,
			Text: fmt.Sprintf("Login failed for user '%s'.", user)}).Append(b)
		b = (&decode.Done{Token: decode.TokenDone, Status: decode.DoneError}).Append(b)
		c.w.write(b)
		c.w.end()
		return errLoginFailed
	}
	if db == "" || strings.EqualFold(db, cfg.Database) {
		db = cfg.Database
	}
	c.database = db

	c.tdsVersion = tds74
	switch l.TDSVersion {
	case tds72, tds73A, tds73B:
		c.tdsVersion = l.TDSVersion
	}
	size := int(l.PacketSize)
	if size == 0 {
		size = 4096
	}
	size = max(min(size, cfg.MaxPacketSize), 512)

	var b []byte
	ack := decode.LoginAck{Interface: 1, TDSVersion: c.tdsVersion, ProgName: progName, ProgVersion: serverVersion}
	if cfg.RouteTo != "" {
		host, portStr, err := net.SplitHostPort(cfg.RouteTo)
		port, perr := strconv.Atoi(portStr)
		if err != nil || perr != nil || port <= 0 || port > 65535 {
			return fmt.Errorf("tdsserver: bad RouteTo %q", cfg.RouteTo)
		}
		b = ack.Append(b)
		env := decode.EnvChange{Type: decode.EnvRouting}
		env.Routing.Protocol = 0 // TCP
		env.Routing.Port = uint16(port)
		env.Routing.Server = host
		b = env.Append(b)
		b = (&decode.Done{Token: decode.TokenDone}).Append(b)
		c.w.write(b)
		c.srv.stats.logins.Add(1)
		c.w.end()
		return nil // serve() closes
	}

	// The order of MS-TDS example 4.4 (a real server's login response).
	b = (&decode.EnvChange{Type: decode.EnvDatabase, NewValue: db, OldValue: "master"}).Append(b)
	b = (&decode.Message{Token: decode.TokenInfo, Number: 5701, State: 2, Class: 0, Server: serverName,
		Text: fmt.Sprintf("Changed database context to '%s'.", db)}).Append(b)
	b = (&decode.EnvChange{Type: decode.EnvCollation, Collation: defaultCollation}).Append(b)
	b = (&decode.EnvChange{Type: decode.EnvLanguage, NewValue: "us_english"}).Append(b)
	b = (&decode.EnvChange{Type: decode.EnvPacketSize, NewValue: strconv.Itoa(size), OldValue: "4096"}).Append(b)
	b = (&decode.Message{Token: decode.TokenInfo, Number: 5703, State: 1, Class: 0, Server: serverName,
		Text: "Changed language setting to us_english."}).Append(b)
	b = ack.Append(b)
	if l.OptionFlags3&0x10 != 0 || len(l.Features) > 0 {
		var acks decode.FeatureExtAck
		for _, f := range requested {
			switch f.ID {
			case decode.FeatureUTF8Support:
				c.features.utf8 = true
				acks.Features = append(acks.Features, decode.Feature{ID: f.ID, Data: []byte{1}})
			case decode.FeatureJSONSupport:
				c.features.json = true
				acks.Features = append(acks.Features, decode.Feature{ID: f.ID, Data: []byte{1}})
			case decode.FeatureVectorSupport:
				c.features.vector = true
				acks.Features = append(acks.Features, decode.Feature{ID: f.ID, Data: []byte{1}})
			}
		}
		if fedAuth {
			acks.Features = append(acks.Features, decode.Feature{ID: decode.FeatureFedAuth})
		}
		b = acks.Append(b)
	}
	b = (&decode.Done{Token: decode.TokenDone}).Append(b)
	c.w.write(b)
	if err := c.w.end(); err != nil {
		return err
	}
	c.packetSize = size
	c.srv.stats.logins.Add(1)
	c.resetSession()
	c.log("tdsserver: login", "user", user, "database", db, "packet_size", size,
		"utf8", c.features.utf8, "json", c.features.json, "vector", c.features.vector)
	return nil
}

// parseFedAuthToken extracts the token of a FEDAUTH feature with the
// security-token library (MS-TDS 2.2.6.4: options byte, DWORD length,
// token bytes, optional nonce).
func parseFedAuthToken(d []byte) []byte {
	if len(d) < 5 || d[0]>>1 != 0x01 {
		return nil
	}
	n := int(uint32(d[1]) | uint32(d[2])<<8 | uint32(d[3])<<16 | uint32(d[4])<<24)
	if n < 0 || n > len(d)-5 {
		return nil
	}
	return d[5 : 5+n]
}
