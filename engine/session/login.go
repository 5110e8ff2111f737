package session

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// clientVersion is what the client announces in PRELOGIN VERSION and
// LOGIN7 ClientProgVer (informational only).
var clientVersion = [4]byte{1, 0, 0, 0}

// maxLoginMessage bounds a PRELOGIN or login response message.
const maxLoginMessage = 1 << 20

// Connect dials the server, negotiates encryption, logs in and returns the
// session. Dialing and login are bounded by cfg.ConnectTimeout and ctx. A
// routing ENVCHANGE (Azure SQL gateways, read-only routing) is followed
// once to the server it names.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	c, _, err := ConnectWithin(ctx, cfg, NoTimeout)
	return c, err
}

// ConnectWithin is Connect for a request that has a budget t: the time the
// connect takes is charged to t (and bounds the connect), and the rest is
// returned for the request. The remainder of a budget is a budget, possibly
// exhausted, never NoTimeout: a reconnect must not turn a request with a
// deadline into one without.
func ConnectWithin(ctx context.Context, cfg Config, t Timeout) (*Conn, Timeout, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, t, err
	}
	cfg, err := cfg.resolveSecrets()
	if err != nil {
		return nil, t, err
	}
	limit := cfg.ConnectTimeout
	if limit == 0 {
		limit = DefaultConnectTimeout
	}
	// byBudget: the request's budget, not the connect timeout, bounds
	// this connect (a reconnect late in a request), and its expiry is the
	// request's timeout.
	byBudget := false
	if d, ok := t.Budget(); ok && (limit < 0 || d < limit) {
		if d == 0 {
			return nil, t, &TimeoutError{Op: "connect", Budget: d, Err: context.DeadlineExceeded}
		}
		limit, byBudget = d, true
	}
	outer := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	c, err := connectRouted(ctx, cfg)
	for n := 0; err != nil && n < cfg.ConnectRetryCount && retryConnect(ctx, err); n++ {
		wait := cfg.ConnectRetryInterval
		if wait == 0 {
			wait = DefaultConnectRetryInterval
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			break // the attempt after the wait could not finish in time
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
		case <-timer.C:
		}
		if ctx.Err() != nil {
			break
		}
		c, err = connectRouted(ctx, cfg)
	}
	remaining := t.Spend(time.Since(start))
	if err != nil {
		if limit > 0 && outer.Err() == nil && !expired(outer) && expired(ctx) {
			if byBudget {
				err = &TimeoutError{Op: "connect", Budget: limit, Err: err}
			} else {
				err = &ConnectTimeoutError{Limit: limit, Err: err}
			}
		}
		return nil, remaining, err
	}
	return c, remaining, nil
}

// expired reports whether ctx's deadline has passed. The socket carries
// the same deadline, so a read can fail with an i/o timeout an instant
// before the context's own timer marks it done: the clock decides.
func expired(ctx context.Context) bool {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// connectRouted opens a session and follows one routing hop (read-only
// routing, Azure redirection).
func connectRouted(ctx context.Context, cfg Config) (*Conn, error) {
	c, err := connectOnce(ctx, cfg, "")
	if err == nil && c.routeTo != "" {
		from := net.JoinHostPort(cfg.Host, strconv.Itoa(c.port))
		route := c.routeTo
		_ = c.Close()
		rcfg := cfg
		host, port, instance := parseRoute(route)
		rcfg.Host, rcfg.Port, rcfg.Instance = host, port, instance
		c, err = connectOnce(ctx, rcfg, from)
		if err == nil && c.routeTo != "" {
			again := c.routeTo
			_ = c.Close()
			c, err = nil, fmt.Errorf("engine: server %s routed us again (to %s); only one routing hop is followed", route, again)
		}
	}
	return c, err
}

// retryConnect reports whether a failed connect attempt may be tried
// again: the failure is transient (IsTransient: a refused or dropped
// connection, a server error number that says to retry) and the connect's
// own deadline or cancellation did not end it. A refused login (18456) is
// not transient.
func retryConnect(ctx context.Context, err error) bool {
	return ctx.Err() == nil && IsTransient(err)
}

// parseRoute splits a routing target "host\instance:port" (as built by
// routeTo) into its parts.
func parseRoute(s string) (host string, port int, instance string) {
	hp, p, _ := strings.Cut(s, "|")
	port, _ = strconv.Atoi(p)
	host, instance, _ = strings.Cut(hp, `\`)
	return host, port, instance
}

func connectOnce(ctx context.Context, cfg Config, routedFrom string) (c *Conn, err error) {
	port := cfg.Port
	if port == 0 && cfg.Instance != "" {
		port, err = resolveInstancePort(ctx, cfg.Host, cfg.BrowserPort, cfg.Instance)
		if err != nil {
			return nil, err
		}
	}
	if port == 0 {
		port = DefaultPort
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	raw, err := cfg.dial(ctx, addr)
	if err != nil {
		return nil, &NetError{Op: "dial", Err: err}
	}
	c = &Conn{cfg: cfg, port: port, routedFrom: routedFrom}
	raw = c.setRaw(raw)
	c.cancelTimeout = cfg.CancelTimeout
	if c.cancelTimeout <= 0 {
		c.cancelTimeout = DefaultCancelTimeout
	}
	c.maxBuf = 2*maxPacketSize + residencyCap(cfg.ResidencyCap)
	c.initIO(raw)

	// The whole login runs under the context's deadline, set once on the
	// socket; cancellation sets a past deadline to interrupt it.
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(pastDeadline) })
	defer func() {
		if !stop() {
			// the callback ran (or is running): the context ended
			if err == nil {
				err = context.Cause(ctx)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("engine: connect to %s: %w (%w)", addr, context.Cause(ctx), err)
			}
			_ = raw.Close()
			c = nil
			return
		}
		_ = raw.SetDeadline(time.Time{})
		c.startReadAhead()
	}()
	if err = c.handshake(ctx, addr); err != nil {
		return c, err
	}
	return c, nil
}

// dial opens a TCP connection to addr with the Config's Dialer, or a
// net.Dialer.
func (c *Config) dial(ctx context.Context, addr string) (net.Conn, error) {
	if c.Dialer != nil {
		return c.Dialer(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

func residencyCap(n int) int {
	if n <= 0 {
		return decode.DefaultResidencyCap
	}
	return n
}

// handshake runs PRELOGIN, TLS and LOGIN7 on c.raw.
func (c *Conn) handshake(ctx context.Context, addr string) error {
	cfg := &c.cfg
	if cfg.Encrypt == EncryptStrict {
		tc, err := cfg.tlsConfig(cfg.Host, true, false)
		if err != nil {
			return err
		}
		tconn := tls.Client(c.raw, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			return handshakeError(err, true)
		}
		if p := tconn.ConnectionState().NegotiatedProtocol; p != "" && p != alpnTDS8 {
			return fmt.Errorf("engine: TLS: server negotiated ALPN %q, want %q", p, alpnTDS8)
		}
		c.initIO(tconn)
	}

	// PRELOGIN (2.2.6.5).
	pre := decode.Prelogin{Version: clientVersion, Instance: cfg.Instance, ThreadID: uint32(os.Getpid()), HasThreadID: true}
	switch cfg.Encrypt {
	case EncryptDisable:
		pre.Encryption = decode.EncryptNotSup
	case EncryptOptional:
		pre.Encryption = decode.EncryptOff
	default:
		pre.Encryption = decode.EncryptOn
	}
	if cfg.AccessToken != "" {
		pre.FedAuthRequired, pre.HasFedAuthRequired = 1, true
	}
	c.payload = pre.Encode(c.payload[:0])
	if _, err := c.writeMessage(decode.PacketPrelogin, 0, c.payload); err != nil {
		return &NetError{Op: "prelogin", Err: err}
	}
	msg, err := c.readMessage(maxLoginMessage)
	if err != nil {
		if cfg.Encrypt != EncryptStrict && ctx.Err() == nil && probeStrict(ctx, cfg, addr) {
			return &TLSError{
				Reason: "the server requires TDS 8.0 strict encryption: it closed the connection on a TDS 7.x PRELOGIN and answers TLS on a new connection",
				Fix:    "set encrypt=strict",
				Detail: err.Error(),
				Err:    err,
			}
		}
		return c.loginIOErr("prelogin", err)
	}
	var resp decode.Prelogin
	if err := resp.Decode(msg); err != nil {
		return fmt.Errorf("engine: prelogin response: %w", err)
	}
	if cfg.Instance != "" && resp.Instance == "\x01" {
		return fmt.Errorf("engine: server at %s is not instance %q", addr, cfg.Instance)
	}

	// Encryption (2.2.6.5 "Encryption" matrix).
	loginOnly := false
	if cfg.Encrypt != EncryptStrict {
		srv := resp.Encryption &^ decode.EncryptClientCert
		full := false
		switch {
		case srv == decode.EncryptReq || srv == decode.EncryptOn:
			if cfg.Encrypt == EncryptDisable {
				return errors.New("engine: the server requires encryption, but encrypt=disable (set encrypt=mandatory, or optional)")
			}
			full = true
		case srv == decode.EncryptNotSup:
			if cfg.Encrypt == EncryptMandatory {
				return errTLSRequired
			}
		case srv == decode.EncryptOff:
			switch cfg.Encrypt {
			case EncryptMandatory:
				return errors.New("engine: the server offered login-only encryption, but encrypt is mandatory")
			case EncryptOptional:
				full, loginOnly = true, true
			}
		default:
			return fmt.Errorf("engine: prelogin response: unknown encryption value 0x%02X", resp.Encryption)
		}
		if full {
			tc, err := cfg.tlsConfig(cfg.Host, false, loginOnly)
			if err != nil {
				return err
			}
			tun := &preloginTunnel{Conn: c.raw}
			tconn := tls.Client(tun, tc)
			if err := tconn.HandshakeContext(ctx); err != nil {
				return handshakeError(err, false)
			}
			tun.passthrough = true
			c.initIO(tconn)
		}
	}

	// LOGIN7 (2.2.6.4).
	l := c.login7(&resp)
	c.features = c.features[:0]
	for _, f := range l.Features {
		c.features = append(c.features, f.ID)
	}
	c.payload, err = l.Encode(c.payload[:0])
	if err != nil {
		return fmt.Errorf("engine: login: %w", err)
	}
	_, werr := c.writeMessage(decode.PacketLogin7, 0, c.payload)
	clear(c.payload) // the password is in there, merely scrambled
	if werr != nil {
		return &NetError{Op: "login", Err: werr}
	}
	if loginOnly {
		// ENCRYPT_OFF: only LOGIN7 travels under TLS; the server answers
		// in plaintext.
		c.initIO(c.raw)
	}
	return c.readLoginResponse()
}

func (c *Conn) login7(resp *decode.Prelogin) *decode.Login7 {
	cfg := &c.cfg
	ws := cfg.Workstation
	if ws == "" {
		ws, _ = os.Hostname()
	}
	app := cfg.AppName
	if app == "" {
		app = "tdsextract"
	}
	size := cfg.PacketSize
	if size == 0 {
		size = maxPacketSize
	}
	server := cfg.Host
	if cfg.Instance != "" {
		server += `\` + cfg.Instance
	}
	_, tz := time.Now().Zone()
	l := &decode.Login7{
		TDSVersion:    decode.TDSVersion74,
		PacketSize:    uint32(size),
		ClientProgVer: uint32(clientVersion[0])<<24 | uint32(clientVersion[1])<<16,
		ClientPID:     uint32(os.Getpid()),
		// OptionFlags1: fUseDB (0x20), fDatabase fatal (0x40), fSetLang (0x80).
		OptionFlags1: 0xE0,
		// OptionFlags2: fLanguage fatal (0x01), fODBC (0x02): the server
		// sets the ANSI session options ODBC and go-mssqldb get.
		OptionFlags2: 0x03,
		// OptionFlags3: fUnknownCollationHandling (0x08).
		OptionFlags3:   0x08,
		ClientTimeZone: int32(tz / 60),
		ClientLCID:     0x0409,
		HostName:       ws,
		AppName:        app,
		ServerName:     server,
		CltIntName:     "tdsextract",
		Language:       cfg.Language,
		Database:       cfg.Database,
		Features: []decode.Feature{
			decode.UTF8SupportFeature(),
			decode.JSONSupportFeature(),
			decode.VectorSupportFeature(1),
		},
	}
	if cfg.ReadOnlyIntent {
		l.TypeFlags |= decode.Login7TypeFlagsReadOnlyIntent
	}
	if cfg.AccessToken != "" {
		echo := resp.HasFedAuthRequired && resp.FedAuthRequired == 1
		l.Features = append(l.Features, decode.FedAuthSecurityTokenFeatureNonce(encodeUTF16(cfg.AccessToken.Reveal()), resp.Nonce, echo))
	} else {
		l.UserName = cfg.User
		l.Password = cfg.Password.Reveal()
	}
	return l
}

// encodeUTF16 returns s as UTF-16LE (the FEDAUTH token encoding).
func encodeUTF16(s string) []byte { return decode.AppendUTF16(nil, s) }

func (c *Conn) loginIOErr(op string, err error) error {
	var pe *decode.ProtocolError
	if errors.As(err, &pe) {
		return fmt.Errorf("engine: %s: %w", op, err)
	}
	if op == "prelogin" && errors.Is(err, io.EOF) {
		err = fmt.Errorf("the server closed the connection without answering PRELOGIN; is the port that of a SQL Server? (%w)", err)
	}
	return &NetError{Op: op, Err: err}
}

// readLoginResponse reads the login response token stream: LOGINACK,
// ENVCHANGEs (database, packet size, collation, routing), FEATUREEXTACK,
// INFO and ERROR messages, then DONE.
func (c *Conn) readLoginResponse() error {
	c.stream = decode.NewStream(c.streamOptions())
	_ = c.stream.SetSink(&c.discard) // no columns yet: cannot fail
	var loginErr *ServerError
	refused := false
	acked := false
	for {
		n, ev, err := c.stream.Next(c.buf[c.r:c.wpos])
		c.r += n
		if errors.Is(err, decode.ErrNeedMore) {
			if ferr := c.fill(false); ferr != nil {
				if loginErr != nil {
					return fmt.Errorf("engine: login: %w", loginErr)
				}
				return c.loginIOErr("login", ferr)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("engine: login response: %w", err)
		}
		s := c.stream
		switch ev {
		case decode.EventLoginAck:
			if err := checkLoginAckVersion(s.LoginAck.TDSVersion, c.cfg.Encrypt == EncryptStrict); err != nil {
				return fmt.Errorf("engine: login: %w", err)
			}
			acked = true
			c.serverName = strings.TrimRight(s.LoginAck.ProgName, "\x00")
			c.serverVersion = s.LoginAck.ProgVersion
			c.tdsVersion = s.LoginAck.TDSVersion
		case decode.EventEnvChange:
			if err := c.envChange(&s.EnvChange); err != nil {
				return err
			}
		case decode.EventError:
			if loginErr == nil {
				loginErr = serverError(&s.Message)
			}
			refused = refused || s.Message.Number == loginFailed
		case decode.EventDone:
			if s.Done.Status&decode.DoneMore != 0 {
				continue
			}
			if loginErr != nil && refused {
				return fmt.Errorf("engine: login: %w", &refusedLogin{loginErr})
			}
			if loginErr != nil {
				return fmt.Errorf("engine: login: %w", loginErr)
			}
			if !acked && c.routeTo == "" {
				return errors.New("engine: login: the server ended the login response without LOGINACK")
			}
			c.stream.Reset()
			c.r, c.wpos = 0, 0
			return nil
		}
	}
}

// loginAckVersions are the TDSVersion values a LOGINACK may carry (MS-TDS
// 2.2.7.14; 7.0 and 7.1 servers answer 0x07000000 and 0x07010000), with
// the name a message gives each.
var loginAckVersions = map[uint32]string{
	0x07000000:           "7.0 (SQL Server 7.0)",
	0x07010000:           "7.1 (SQL Server 2000)",
	decode.TDSVersion71:  "7.1 (SQL Server 2000 SP1)",
	decode.TDSVersion72:  "7.2 (SQL Server 2005)",
	decode.TDSVersion73A: "7.3A (SQL Server 2008)",
	decode.TDSVersion73B: "7.3B (SQL Server 2008 R2)",
	decode.TDSVersion74:  "7.4 (SQL Server 2012 or later)",
	tdsVersion80:         "8.0",
}

// tdsVersion80 is TDS 8.0 as go-mssqldb and SqlClient write it.
const tdsVersion80 uint32 = 0x08000000

// checkLoginAckVersion accepts the TDS versions the client can speak with
// a server that answered its LOGIN7 (which asks for 7.4): 7.4 or a server's
// older 7.2/7.3 (the server picks the highest version both sides know), and
// over a strict (TDS 8.0) connection also 8.0. A version the client did not
// ask for, one older than 7.2 (no PLP, no (max) types, different request
// headers), or a value no version defines is a protocol error: guessing
// how to read the rest of the session would risk wrong data.
func checkLoginAckVersion(v uint32, strict bool) error {
	name, defined := loginAckVersions[v]
	var msg string
	switch {
	case !defined:
		msg = fmt.Sprintf("the server announced TDS version 0x%08X, which no TDS version defines", v)
	case v == tdsVersion80 && !strict:
		msg = "the server announced TDS 8.0, which the client did not ask for: it asked for 7.4 (TDS 8.0 is encrypt=strict)"
	case v == tdsVersion80, v >= decode.TDSVersion72 && v <= decode.TDSVersion74:
		return nil
	default:
		msg = "the server announced TDS " + name + "; tdsextract needs TDS 7.2 (SQL Server 2005) or later"
	}
	return &decode.ProtocolError{Token: decode.TokenLoginAck, Where: "LOGINACK TDSVersion", Offset: -1, Msg: msg}
}

// envChange applies an ENVCHANGE to the session.
func (c *Conn) envChange(e *decode.EnvChange) error {
	switch e.Type {
	case decode.EnvDatabase:
		c.database = e.NewValue
	case decode.EnvPacketSize:
		n, ok := e.PacketSize()
		if !ok {
			return fmt.Errorf("engine: server set an invalid packet size %q", e.NewValue)
		}
		c.packetSize = n
	case decode.EnvCollation:
		c.collation = e.Collation
	case decode.EnvBeginTxn:
		c.txn = txnDescriptor(e.NewBytes)
	case decode.EnvCommitTxn, decode.EnvRollbackTxn, decode.EnvDefectTxn, decode.EnvTxnEnded:
		c.txn = 0
	case decode.EnvRouting:
		r := e.Routing
		if r.Protocol != 0 || r.Port == 0 || r.Server == "" {
			return fmt.Errorf("engine: invalid routing ENVCHANGE (protocol %d, port %d, server %q)", r.Protocol, r.Port, r.Server)
		}
		c.routeTo = r.Server + "|" + strconv.Itoa(int(r.Port))
	}
	return nil
}

func txnDescriptor(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// loginFailed is SQL Server's "Login failed for user" error, with which
// it ends every refused login (after 4060 for a database it cannot open).
const loginFailed = 18456

// refusedLogin is a login the server refused (it sent loginFailed): it is
// never retried, not even when the first error (4060, cannot open the
// database) is one that may pass. Unwrap gives the first error.
type refusedLogin struct{ err *ServerError }

func (e *refusedLogin) Error() string   { return e.err.Error() }
func (e *refusedLogin) Unwrap() error   { return e.err }
func (e *refusedLogin) Temporary() bool { return false }

func serverError(m *decode.Message) *ServerError {
	return &ServerError{Number: m.Number, State: m.State, Class: m.Class, Message: m.Text, Server: m.Server, Proc: m.Proc, Line: m.Line}
}
