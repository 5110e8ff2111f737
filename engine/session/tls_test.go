package session

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// Login-only TLS (encrypt=optional against a server that does not force
// encryption, SQL Server's default) does not verify the certificate, as
// Microsoft's drivers do not; a server that forces encryption is verified
// whatever encrypt says, and mandatory always is.
func TestLoginOnlyTLSDoesNotVerify(t *testing.T) {
	cases := []struct {
		server tdsserver.Encryption
		client EncryptMode
		trust  bool
		ok     bool
	}{
		{tdsserver.EncryptOff, EncryptOptional, false, true},
		{tdsserver.EncryptOff, EncryptMandatory, false, false},
		{tdsserver.EncryptOn, EncryptOptional, false, false},
		{tdsserver.EncryptRequired, EncryptOptional, false, false},
		{tdsserver.EncryptRequired, EncryptOptional, true, true},
	}
	for _, tc := range cases {
		_, cfg := startServer(t, func(s *tdsserver.Config) { s.Encryption = tc.server })
		cfg.CAFile = "" // the system pool does not trust the test CA
		cfg.Encrypt, cfg.TrustServerCertificate = tc.client, tc.trust
		c, err := Connect(context.Background(), cfg)
		if (err == nil) != tc.ok {
			t.Errorf("server %s, client %s, trust %v: err = %v, want ok=%v", tc.server, tc.client, tc.trust, err, tc.ok)
		}
		if err == nil {
			c.Close()
		}
	}
}

// writeCert writes a self-signed certificate valid from notBefore to
// notAfter and its key.
func writeCert(t *testing.T, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile, err := tdsserver.WriteSelfSigned(t.TempDir(), notBefore, notAfter)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// A failed TLS handshake says why and which keys fix it, once, instead of
// "tls: tls: failed to verify certificate".
func TestTLSErrorsSayWhatToDo(t *testing.T) {
	expiredCert, expiredKey := writeCert(t, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	cases := []struct {
		name   string
		server func(*tdsserver.Config)
		client func(*Config)
		want   []string
	}{
		{"untrusted", nil, func(c *Config) { c.CAFile = "" },
			[]string{"not signed by an authority this machine trusts", "certificate=", "TrustServerCertificate=true", "x509: certificate signed by unknown authority"}},
		{"untrusted, strict", func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptStrict }, func(c *Config) { c.CAFile = ""; c.Encrypt = EncryptStrict },
			[]string{"not signed by an authority", "certificate=", "TrustServerCertificate=true"}},
		{"other host name", nil, func(c *Config) { c.HostNameInCertificate = "db.example.com" },
			[]string{"not for the host name", "hostNameInCertificate=", "TrustServerCertificate=true", "db.example.com"}},
		{"expired", func(s *tdsserver.Config) { s.CertFile, s.KeyFile = expiredCert, expiredKey }, func(c *Config) { c.CAFile = expiredCert },
			[]string{"expired", "renew", "TrustServerCertificate=true"}},
		{"strict server, mandatory client", func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptStrict }, func(c *Config) { c.Encrypt = EncryptMandatory },
			[]string{"requires TDS 8.0 strict encryption", "set encrypt=strict"}},
		{"strict server, optional client", func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptStrict }, func(c *Config) { c.Encrypt = EncryptOptional },
			[]string{"requires TDS 8.0 strict encryption", "set encrypt=strict"}},
		{"strict server, disable client", func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptStrict }, func(c *Config) { c.Encrypt = EncryptDisable },
			[]string{"requires TDS 8.0 strict encryption", "set encrypt=strict"}},
		{"TDS 7 server, strict client", nil, func(c *Config) { c.Encrypt = EncryptStrict },
			[]string{"does not speak TDS 8.0 strict encryption", "use encrypt=mandatory"}},
		{"encryption required, disable client", func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptRequired }, func(c *Config) { c.Encrypt = EncryptDisable },
			[]string{"requires encryption", "encrypt=mandatory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := startServer(t, tc.server)
			cfg.ConnectTimeout = 10 * time.Second
			tc.client(&cfg)
			c, err := Connect(context.Background(), cfg)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q: %s", w, msg)
				}
			}
			if strings.Contains(msg, "tls: tls:") || strings.Count(msg, "failed to verify") > 1 {
				t.Errorf("error repeats itself: %s", msg)
			}
			if IsTransient(err) {
				t.Errorf("a configuration mismatch is not transient: %s", msg)
			}
		})
	}
}

// A server whose TLS is older than 1.2 gets a message that says so.
func TestTLSNoCommonVersion(t *testing.T) {
	certFile, keyFile := writeCert(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MaxVersion: tls.VersionTLS11, NextProtos: []string{alpnTDS8}})
	if err != nil {
		t.Fatal(err)
	}
	serveEach(t, ln, func(nc net.Conn) { _ = nc.(*tls.Conn).Handshake() })
	cfg := Config{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Encrypt: EncryptStrict, CAFile: certFile, ConnectTimeout: 10 * time.Second}
	_, err = Connect(context.Background(), cfg)
	var te *TLSError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "no TLS version or cipher suite in common") || !strings.Contains(err.Error(), "TLS 1.2") {
		t.Fatalf("err = %v", err)
	}
}

// A port that closes the connection without answering PRELOGIN and does
// not speak TLS either is not called a strict server.
func TestPreloginUnansweredIsNotCalledStrict(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveEach(t, ln, func(nc net.Conn) { _, _ = nc.Read(make([]byte, 512)) })
	cfg := Config{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Encrypt: EncryptMandatory, ConnectTimeout: 10 * time.Second}
	_, err = Connect(context.Background(), cfg)
	if err == nil || strings.Contains(err.Error(), "strict") || !strings.Contains(err.Error(), "without answering PRELOGIN") {
		t.Fatalf("err = %v", err)
	}
}

// serveEach runs handle on every connection ln accepts, then closes it,
// until the test ends.
func serveEach(t *testing.T, ln net.Listener, handle func(net.Conn)) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			handle(nc)
			nc.Close()
		}
	}()
}
