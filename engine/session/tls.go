package session

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/tdsextract/tdsextract/decode"
)

// alpnTDS8 is the ALPN protocol id of TDS 8.0 (MS-TDS 2.1, "tds/8.0").
const alpnTDS8 = "tds/8.0"

// tlsConfig builds the client TLS configuration: certificates are verified
// against the system pool or CAFile, with the host name checked against
// HostNameInCertificate or the host dialled; TrustServerCertificate (an
// explicit opt-in) disables verification.
func (c *Config) tlsConfig(host string, strict bool) (*tls.Config, error) {
	name := c.HostNameInCertificate
	if name == "" {
		name = host
	}
	tc := &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
	if strict {
		tc.NextProtos = []string{alpnTDS8}
	}
	if c.TrustServerCertificate {
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
