package session

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// alpnTDS8 is the ALPN protocol id of TDS 8.0 (MS-TDS 2.1, "tds/8.0").
const alpnTDS8 = "tds/8.0"

// tlsConfig builds the client TLS configuration: certificates are verified
// against the system pool or CAFile, with the host name checked against
// HostNameInCertificate or the host dialled; TrustServerCertificate (an
// explicit opt-in) disables verification.
//
// loginOnly is the TLS that protects only the LOGIN7 packet (encrypt=
// optional against a server without forced encryption, SQL Server's
// default): its certificate is not verified, as Microsoft's drivers do not
// verify it in that mode (Microsoft.Data.SqlClient: "Encryption only
// occurs for LOGIN packets. Certificate isn't validated."), because such
// servers mostly use the self-signed certificate SQL Server generates at
// start-up. It keeps the password from a passive listener, not from a man
// in the middle, who could as well answer that it supports no encryption
// at all: encrypt=optional is never safe against one. encrypt=mandatory
// (the default) and strict always verify.
func (c *Config) tlsConfig(host string, strict, loginOnly bool) (*tls.Config, error) {
	name := c.HostNameInCertificate
	if name == "" {
		name = host
	}
	tc := &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
	if strict {
		tc.NextProtos = []string{alpnTDS8}
	}
	if c.TrustServerCertificate || loginOnly {
		tc.InsecureSkipVerify = true //nolint:gosec // explicit user opt-in (TrustServerCertificate)
		return tc, nil
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("engine: TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("engine: TLS CA file %s holds no PEM certificate", c.CAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// preloginTunnel carries the TLS handshake of TDS 7.x inside PRELOGIN
// packets (MS-TDS 2.2.6.5, 3.2.5.2): writes are framed as PRELOGIN
// messages, reads strip the packet headers. After the handshake it passes
// bytes through untouched: TLS records then travel directly on TCP and the
// TDS packets are inside them.
type preloginTunnel struct {
	net.Conn
	passthrough bool
	pktRemain   int
	wbuf        []byte
}

func (t *preloginTunnel) Read(p []byte) (int, error) {
	if t.passthrough {
		return t.Conn.Read(p)
	}
	for t.pktRemain == 0 {
		var hdr [decode.HeaderLen]byte
		if _, err := io.ReadFull(t.Conn, hdr[:]); err != nil {
			return 0, err
		}
		var h decode.Header
		if err := h.Decode(hdr[:]); err != nil {
			return 0, err
		}
		if h.Type != decode.PacketPrelogin && h.Type != decode.PacketReply {
			return 0, fmt.Errorf("engine: TLS handshake: server sent packet type 0x%02X", h.Type)
		}
		t.pktRemain = int(h.Length) - decode.HeaderLen
	}
	if len(p) > t.pktRemain {
		p = p[:t.pktRemain]
	}
	n, err := t.Conn.Read(p)
	t.pktRemain -= n
	return n, err
}

func (t *preloginTunnel) Write(p []byte) (int, error) {
	if t.passthrough {
		return t.Conn.Write(p)
	}
	t.wbuf = decode.AppendMessage(t.wbuf[:0], decode.PacketPrelogin, 0, 0, decode.DefaultPacketSize, 1, p)
	if _, err := t.Conn.Write(t.wbuf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// errTLSRequired is returned when a mandatory/strict connection cannot be encrypted.
var errTLSRequired = errors.New("engine: the server does not support encryption, but encrypt is mandatory (set encrypt=optional or disable to allow plaintext)")

// TLSError is a TLS handshake with the server that failed for a reason a
// setting changes (an untrusted or mismatched certificate, no TLS version
// in common, a server that does not speak the TLS flavour asked for):
// Reason says what happened, Fix which connection-string keys address it.
// Retrying does not help, so it is not transient.
type TLSError struct {
	Reason string
	Fix    string
	Detail string // the TLS or x509 library's own words
	Err    error
}

func (e *TLSError) Error() string {
	s := "engine: TLS: " + e.Reason
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

func (e *TLSError) Unwrap() error   { return e.Err }
func (e *TLSError) Temporary() bool { return false }
func (e *TLSError) Transient() bool { return false }

// TLS alerts (RFC 8446 6.2) that mean "no version or cipher in common".
const (
	alertHandshakeFailure     tls.AlertError = 40
	alertProtocolVersion      tls.AlertError = 70
	alertInsufficientSecurity tls.AlertError = 71
)

// handshakeError explains a failed client TLS handshake (strict: TDS 8.0,
// TLS first on the TCP connection). Network failures stay *NetError.
func handshakeError(err error, strict bool) error {
	var (
		he  x509.HostnameError
		ua  x509.UnknownAuthorityError
		ci  x509.CertificateInvalidError
		ae  tls.AlertError
		rhe tls.RecordHeaderError
	)
	const trustHint = "or, for a test server only, skip verification with TrustServerCertificate=true (no protection against a man in the middle)"
	e := &TLSError{Err: err}
	switch {
	case errors.As(err, &he):
		e.Reason = "the server's certificate is not for the host name connected to"
		e.Fix = "connect with a name the certificate holds, or set hostNameInCertificate= to one of them, " + trustHint
		e.Detail = he.Error()
	case errors.As(err, &ua):
		e.Reason = "the server's certificate is not signed by an authority this machine trusts (SQL Server's self-signed certificate never is)"
		e.Fix = "give the CA that signed it, or the server's own certificate, with certificate=/path/to/ca.pem, " + trustHint
		e.Detail = ua.Error()
	case errors.As(err, &ci):
		e.Reason = "the server's certificate is not valid"
		if ci.Reason == x509.Expired {
			e.Reason = "the server's certificate has expired or is not yet valid"
		}
		e.Fix = "renew the server's certificate, " + trustHint
		e.Detail = ci.Error()
	case strict && (errors.As(err, &rhe) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		e.Reason = "the server did not answer TLS on a new connection, so it does not speak TDS 8.0 strict encryption (SQL Server 2022 and later with strict encryption configured do)"
		e.Fix = "use encrypt=mandatory, which negotiates TLS inside PRELOGIN"
		e.Detail = err.Error()
	case alertIn(err, &ae) && (ae == alertHandshakeFailure || ae == alertProtocolVersion || ae == alertInsufficientSecurity):
		e.Reason = "the server and tdsextract have no TLS version or cipher suite in common (tdsextract needs TLS 1.2 or later)"
		e.Fix = "enable TLS 1.2 on the server (SQL Server 2016 and later have it; older versions need an update)"
		e.Detail = err.Error()
	case alertIn(err, &ae):
		e.Reason = "the server refused the TLS handshake"
		e.Detail = err.Error()
	default:
		return &NetError{Op: "tls", Err: err}
	}
	return e
}

// alertIn finds the TLS alert the peer sent, if err is one. crypto/tls
// reports a received alert as a *net.OpError "remote error" around its
// unexported alert type (a uint8 whose number %d prints), and wraps
// tls.AlertError only on QUIC.
func alertIn(err error, ae *tls.AlertError) bool {
	if errors.As(err, ae) {
		return true
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	n, perr := strconv.ParseUint(fmt.Sprintf("%d", op.Err), 10, 8)
	if perr != nil {
		return false
	}
	*ae = tls.AlertError(n)
	return true
}

// probeStrict reports whether addr completes a TLS handshake with ALPN
// tds/8.0 on a new connection, as a strict (TDS 8.0) server does. It runs
// only after a TDS 7.x PRELOGIN went unanswered, to say what to change; it
// sends nothing after the handshake and trusts no certificate (it only
// learns whether the peer speaks TLS first).
func probeStrict(ctx context.Context, cfg *Config, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, err := cfg.dial(ctx, addr)
	if err != nil {
		return false
	}
	defer nc.Close()
	tc := tls.Client(nc, &tls.Config{
		ServerName:         cfg.Host,
		NextProtos:         []string{alpnTDS8},
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // a probe: nothing is sent over it
	})
	return tc.HandshakeContext(ctx) == nil
}
