//go:build unix

// The TLS tests give PostgreSQL a certificate owned by its own user, a Unix
// notion (file owner ids), like the throwaway server itself.

package postgres

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/sinks"
)

// sslmode: the test server is given a certificate for 127.0.0.1 signed by
// a CA of the test's; verify-full with that CA connects over TLS, with
// another CA it is refused (a ConnectError), disable still connects in
// plaintext.
func TestTLSModes(t *testing.T) {
	conn, url := pgConn(t)
	ctx := context.Background()
	dir := t.TempDir()
	caPEM, certPEM, keyPEM := testCerts(t)
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, caPEM, 0o644)
	otherCA, _, _ := testCerts(t)
	otherFile := filepath.Join(dir, "other.pem")
	os.WriteFile(otherFile, otherCA, 0o644)

	var data string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&data); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL wants the key owned by its own user with mode 0600: the
	// data directory's owner (this process's user, or the user pgtest runs
	// PostgreSQL as when the tests run as root).
	st, err := os.Stat(data)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	for name, body := range map[string][]byte{"test-server.crt": certPEM, "test-server.key": keyPEM} {
		p := filepath.Join(data, name)
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, int(sys.Uid), int(sys.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, conn, "ALTER SYSTEM SET ssl_cert_file = 'test-server.crt'")
	exec(t, conn, "ALTER SYSTEM SET ssl_key_file = 'test-server.key'")
	exec(t, conn, "ALTER SYSTEM SET ssl = on")
	exec(t, conn, "SELECT pg_reload_conf()")
	base := strings.Split(url, "?")[0]
	open := func(conn string) (*Sink, error) {
		s := newSink(t, conn, map[string]any{"table": "tls"})
		err := s.Open(ctx, sinks.ExtractInfo{Name: "tls"})
		return s, err
	}
	var s *Sink
	for i := 0; i < 50; i++ { // the reload is asynchronous
		if s, err = open(base + "?sslmode=verify-full&sslrootcert=" + caFile); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		var log string
		_ = conn.QueryRow(ctx, "SELECT pg_read_file($1)", filepath.Join(filepath.Dir(data), "postgres.log")).Scan(&log)
		if len(log) > 3000 {
			log = log[len(log)-3000:]
		}
		t.Fatalf("verify-full: %v\nserver log:\n%s", err, log)
	}
	var ssl bool
	if err := s.conn.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || !ssl {
		t.Fatalf("verify-full session is not encrypted: %v %v", ssl, err)
	}
	_ = s.Abort(ctx)

	s, err = open(base + "?sslmode=verify-full&sslrootcert=" + otherFile)
	var ce *sinks.ConnectError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("verify-full with another CA: %v", err)
	}
	_ = s.Abort(ctx)

	s, err = open("host=127.0.0.1 port=" + strings.Split(strings.Split(base, ":")[2], "/")[0] + " user=postgres dbname=postgres sslmode=disable")
	if err != nil {
		t.Fatalf("sslmode=disable: %v", err)
	}
	if err := s.conn.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || ssl {
		t.Fatalf("disable session: ssl %v %v", ssl, err)
	}
	_ = s.Abort(ctx)
}

// testCerts makes a CA and a server certificate for 127.0.0.1.
func testCerts(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}
