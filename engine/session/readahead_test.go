package session

import (
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-acc
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// byteCountingConn counts the bytes read through it.
type byteCountingConn struct {
	net.Conn
	n atomic.Int64
}

func (c *byteCountingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// The stream read through readAheadConn is the stream sent, in order, and
// its end is the sender's close.
func TestReadAheadDeliversStream(t *testing.T) {
	client, server := tcpPair(t)
	want := make([]byte, 3<<20+12345)
	for i := range want {
		want[i] = byte(i * 7 / 3)
	}
	go func() { server.Write(want); server.Close() }()
	var b budget
	r := newReadAheadConn(client, 3, &b)
	defer r.Close()
	var got bytes.Buffer
	buf := make([]byte, 5000) // not a divisor of the chunk size
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("got %d bytes, want %d (or different content)", got.Len(), len(want))
	}
}

// Memory is bounded by the ring: a consumer that reads nothing holds at
// most n chunks, and the sender is pushed back by TCP.
func TestReadAheadBoundedAndClosable(t *testing.T) {
	client, server := tcpPair(t)
	stop := make(chan struct{})
	go func() {
		p := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := server.Write(p); err != nil {
				return
			}
		}
	}()
	defer close(stop)
	cc := &byteCountingConn{Conn: client}
	var b budget
	r := newReadAheadConn(cc, 4, &b)
	time.Sleep(300 * time.Millisecond)
	if n := cc.n.Load(); n > 4*readAheadChunk {
		t.Fatalf("read %d bytes ahead with a ring of %d", n, 4*readAheadChunk)
	}
	// Close ends the reader even while it waits for a free chunk.
	r.Close()
	done := make(chan struct{})
	go func() {
		for range r.full {
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reader goroutine did not end after Close")
	}
}

// The lazy deadline: a chunk already read ahead is served even with an
// expired deadline and without charging the budget; a read that must wait
// times out at the deadline and is charged for the wait; a deadline set
// from another goroutine (cancellation) wakes a wait in progress.
func TestReadAheadDeadline(t *testing.T) {
	client, server := tcpPair(t)
	b := newBudget(TimeoutOf(time.Hour))
	r := newReadAheadConn(client, 2, &b)
	defer r.Close()
	server.Write([]byte("hello"))
	time.Sleep(100 * time.Millisecond) // read ahead by now
	r.SetReadDeadline(pastDeadline)
	p := make([]byte, 16)
	if n, err := r.Read(p); err != nil || string(p[:n]) != "hello" {
		t.Fatalf("buffered read under an expired deadline: %q, %v", p[:n], err)
	}
	if b.remaining != time.Hour {
		t.Fatalf("a buffered read was charged: %v left", b.remaining)
	}
	if _, err := r.Read(p); !isTimeout(err) {
		t.Fatalf("read that must wait under an expired deadline: %v", err)
	}

	r.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	start := time.Now()
	if _, err := r.Read(p); !isTimeout(err) {
		t.Fatalf("want a timeout, got %v", err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Fatalf("timed out after %v, deadline 150ms", took)
	}
	if spent := time.Hour - b.remaining; spent < 100*time.Millisecond {
		t.Fatalf("wait charged %v", spent)
	}

	r.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		r.SetReadDeadline(pastDeadline)
	}()
	start = time.Now()
	if _, err := r.Read(p); !isTimeout(err) || time.Since(start) > 5*time.Second {
		t.Fatalf("deadline from another goroutine: %v after %v", err, time.Since(start))
	}

	// Data arriving later still comes through once the deadline is lifted.
	r.SetReadDeadline(time.Time{})
	server.Write([]byte("again"))
	if n, err := r.Read(p); err != nil || string(p[:n]) != "again" {
		t.Fatalf("after timeouts: %q, %v", p[:n], err)
	}
}

// A session's reader goroutine ends with the session, also when it closes
// mid-response with chunks unread.
func TestReadAheadEndsWithSession(t *testing.T) {
	_, cfg := startServer(t, nil)
	base := runtime.NumGoroutine()
	for range 3 {
		c := mustConnect(t, cfg)
		if c.ra == nil {
			t.Fatal("read-ahead not started")
		}
		full := c.ra.full
		// Read a little of a big result, then close with the rest pending.
		sink := &sleepySink{onRow: func(n int) {
			if n == 10 {
				c.Close()
			}
		}}
		_, _ = c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48"}, sink)
		c.Close()
		deadline := time.After(5 * time.Second)
	drain:
		for {
			select {
			case _, ok := <-full:
				if !ok {
					break drain
				}
			case <-deadline:
				t.Fatal("reader goroutine still running after Close")
			}
		}
	}
	for start := time.Now(); runtime.NumGoroutine() > base && time.Since(start) < 5*time.Second; {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Fatalf("%d goroutines after closing, %d before", n, base)
	}
}

// Over TLS a Read returns one record at most, so the ring is made of
// record-sized chunks holding the bytes configured: 4 × 256 KiB by default.
func TestReadAheadTLSChunks(t *testing.T) {
	_, cfg := startServer(t, nil)
	c := mustConnect(t, cfg)
	if !c.Info().Encrypted {
		t.Fatal("the test server, configured to encrypt, did not")
	}
	if got, want := cap(c.ra.full)*tlsRecordPlaintext, defaultReadAheadChunks*readAheadChunk; got != want {
		t.Fatalf("TLS ring holds %d bytes, want %d", got, want)
	}
}
