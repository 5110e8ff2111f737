package session

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// closedPort returns a loopback port nothing listens on (it was just
// released).
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}

// countDials makes cfg count its connection attempts.
func countDials(cfg *Config) *atomic.Int32 {
	n := new(atomic.Int32)
	cfg.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return n
}

// A refused connection is transient: Connect tries ConnectRetryCount more
// times, waiting ConnectRetryInterval before each, then reports the last
// failure.
func TestConnectRetryClosedPort(t *testing.T) {
	cfg := Config{Host: "127.0.0.1", Port: closedPort(t), User: "u", Password: "p", Encrypt: EncryptDisable,
		ConnectTimeout: 20 * time.Second, ConnectRetryCount: 2, ConnectRetryInterval: 100 * time.Millisecond}
	dials := countDials(&cfg)
	start := time.Now()
	_, err := Connect(context.Background(), cfg)
	var ne *NetError
	if !errors.As(err, &ne) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want a refused dial", err)
	}
	if n := dials.Load(); n != 3 {
		t.Fatalf("%d attempts, want 1 + 2 retries", n)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("two retries after %v: the interval was not waited", waited)
	}

	// Without retries (the default), one attempt.
	cfg.ConnectRetryCount = 0
	dials.Store(0)
	if _, err := Connect(context.Background(), cfg); err == nil || dials.Load() != 1 {
		t.Fatalf("no retries: %d attempts, %v", dials.Load(), err)
	}
}

// Every attempt and every wait lie within the connect timeout: when less
// than an interval is left, Connect gives up instead of waiting.
func TestConnectRetryBoundedByConnectTimeout(t *testing.T) {
	cfg := Config{Host: "127.0.0.1", Port: closedPort(t), User: "u", Password: "p", Encrypt: EncryptDisable,
		ConnectTimeout: 1500 * time.Millisecond, ConnectRetryCount: 50, ConnectRetryInterval: time.Second}
	dials := countDials(&cfg)
	_, err := Connect(context.Background(), cfg)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want the last refused dial", err)
	}
	// 0 s: refused; 1 s: refused, 0.5 s left: less than an interval.
	if n := dials.Load(); n != 2 {
		t.Fatalf("%d attempts within a 1.5 s connect timeout at 1 s intervals, want 2", n)
	}

	// A cancelled context ends the waiting at once.
	cfg.ConnectTimeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if _, err := Connect(ctx, cfg); err == nil {
		t.Fatal("connected to a closed port")
	}
	if ctx.Err() == nil {
		t.Fatal("Connect returned before the cancellation, still retrying")
	}
}

// A server that starts while the client is retrying is connected to.
func TestConnectRetryServerStartsLate(t *testing.T) {
	port := closedPort(t)
	cfg := Config{Host: "127.0.0.1", Port: port, User: tdsserver.DefaultUser, Password: tdsserver.DefaultPassword,
		Database: "sample", Encrypt: EncryptDisable, ConnectTimeout: 20 * time.Second,
		ConnectRetryCount: 100, ConnectRetryInterval: 100 * time.Millisecond}
	dials := countDials(&cfg)
	started := make(chan *tdsserver.Server, 1)
	time.AfterFunc(400*time.Millisecond, func() {
		srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:" + strconv.Itoa(port), DB: testDB, Encryption: tdsserver.EncryptNotSup})
		if err != nil {
			t.Error(err)
		}
		started <- srv
	})
	c, err := Connect(context.Background(), cfg)
	if srv := <-started; srv != nil {
		defer srv.Close()
	}
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	if n := dials.Load(); n < 2 {
		t.Fatalf("connected at attempt %d: the server was not late", n)
	}
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT 1"}, nil); err != nil {
		t.Fatal(err)
	}
}

// A login the server refuses is reported after one attempt, however many
// retries are allowed: a wrong password, and a database the server cannot
// open (4060, then 18456 "Login failed").
func TestConnectRetryNeverRetriesRefusedLogin(t *testing.T) {
	_, base := startServer(t, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
	base.Encrypt = EncryptDisable
	base.ConnectRetryCount, base.ConnectRetryInterval = 5, 50*time.Millisecond
	for _, tc := range []struct {
		name   string
		mut    func(*Config)
		number int32
	}{
		{"password", func(c *Config) { c.Password = "wrong" }, 18456},
		{"database", func(c *Config) { c.Database = "nosuchdb" }, 4060},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.mut(&cfg)
			dials := countDials(&cfg)
			_, err := Connect(context.Background(), cfg)
			var se *ServerError
			if !errors.As(err, &se) || se.Number != tc.number {
				t.Fatalf("err = %v, want server error %d", err, tc.number)
			}
			if IsTransient(err) {
				t.Fatalf("a refused login is transient: %v", err)
			}
			if n := dials.Load(); n != 1 {
				t.Fatalf("%d attempts for a refused login, want 1", n)
			}
		})
	}
}

// A server that accepts the connection and never answers ends the connect
// at the connect timeout, reported as a connect timeout (not as a request
// timeout, and not as the bare i/o error of the read that was waiting),
// whichever of the socket deadline and the context's timer fires first.
// A request budget shorter than the connect timeout is the request's
// timeout.
func TestConnectTimeoutIsReportedAsSuch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Never accepted: the kernel completes the handshake and holds the
	// connection in the backlog, where nothing ever answers.
	port := ln.Addr().(*net.TCPAddr).Port
	for _, enc := range []EncryptMode{EncryptDisable, EncryptOptional, EncryptStrict} {
		for i := 0; i < 3; i++ {
			cfg := Config{Host: "127.0.0.1", Port: port, User: "u", Password: "p", Encrypt: enc, ConnectTimeout: 80 * time.Millisecond}
			_, err := Connect(context.Background(), cfg)
			var ct *ConnectTimeoutError
			if !errors.As(err, &ct) || ct.Limit != 80*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("encrypt %v: %v (%T), want a ConnectTimeoutError", enc, err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "connect timeout: no session within 80ms") || strings.Contains(msg, "request timeout") ||
				!strings.Contains(msg, "source.connect_timeout") {
				t.Fatalf("message: %s", msg)
			}
		}
	}
	cfg := Config{Host: "127.0.0.1", Port: port, User: "u", Password: "p", Encrypt: EncryptDisable, ConnectTimeout: time.Minute}
	_, _, err = ConnectWithin(context.Background(), cfg, TimeoutOf(80*time.Millisecond))
	var te *TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "request timeout") {
		t.Fatalf("budget-bound connect: %v", err)
	}
	// A cancelled run is a cancellation, not a timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	_, err = Connect(ctx, cfg)
	if errors.As(err, new(*ConnectTimeoutError)) {
		t.Fatalf("the caller's deadline reported as the connect timeout: %v", err)
	}
}
