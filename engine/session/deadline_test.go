package session

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// fakeClock is a manual clock shared by a fakeConn and the waiter.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// step is one scripted arrival: after wait (fake time), data is readable.
type step struct {
	wait time.Duration
	data []byte
}

// fakeConn is a net.Conn over a script, in fake time. A Read that would
// wait past the read deadline advances the clock to the deadline and fails
// with os.ErrDeadlineExceeded, as a real socket does; an expired deadline
// fails a Read at once. A Read with nothing scripted and no deadline fails
// the test instead of hanging.
type fakeConn struct {
	net.Conn
	t        *testing.T
	clk      *fakeClock
	script   []step
	deadline time.Time
	sets     int
	reads    int
	written  []byte
}

func (f *fakeConn) SetReadDeadline(t time.Time) error  { f.deadline = t; f.sets++; return nil }
func (f *fakeConn) SetWriteDeadline(t time.Time) error { return nil }
func (f *fakeConn) SetDeadline(t time.Time) error      { return f.SetReadDeadline(t) }
func (f *fakeConn) Write(p []byte) (int, error) {
	f.written = append(f.written, p...)
	return len(p), nil
}
func (f *fakeConn) Close() error { return nil }

func (f *fakeConn) Read(p []byte) (int, error) {
	f.reads++
	armed := !f.deadline.IsZero()
	if armed && !f.clk.now.Before(f.deadline) {
		return 0, os.ErrDeadlineExceeded
	}
	if len(f.script) == 0 {
		if !armed {
			f.t.Fatal("read would block forever: no data scripted and no deadline")
		}
		f.clk.now = f.deadline
		return 0, os.ErrDeadlineExceeded
	}
	s := &f.script[0]
	if s.wait > 0 {
		if armed && f.clk.now.Add(s.wait).After(f.deadline) {
			s.wait -= f.deadline.Sub(f.clk.now)
			f.clk.now = f.deadline
			return 0, os.ErrDeadlineExceeded
		}
		f.clk.Advance(s.wait)
		s.wait = 0
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	if len(s.data) == 0 {
		f.script = f.script[1:]
	}
	return n, nil
}

func newFakeSession(t *testing.T, tm Timeout, script ...step) (*Conn, *fakeConn, *fakeClock) {
	clk := &fakeClock{now: time.Unix(1_000_000, 0)}
	fc := &fakeConn{t: t, clk: clk, script: script}
	c := &Conn{maxBuf: 1 << 20}
	c.w.clock = clk.Now
	c.initIO(fc)
	c.w.start(tm)
	return c, fc, clk
}

// packet returns one reply packet carrying payload.
func packet(payload []byte, eom bool) []byte {
	st := byte(0)
	if eom {
		st = decode.StatusEOM
	}
	h := decode.Header{Type: decode.PacketReply, Status: st, Length: uint16(decode.HeaderLen + len(payload)), SPID: 55, PacketID: 1}
	return append(h.Append(nil), payload...)
}

func TestTimeoutValues(t *testing.T) {
	if !NoTimeout.IsNone() || (Timeout{}) != NoTimeout {
		t.Fatal("zero value must be NoTimeout")
	}
	ex := TimeoutOf(0)
	if ex.IsNone() || !ex.Exhausted() {
		t.Fatal("TimeoutOf(0) must be an exhausted budget, not none")
	}
	if TimeoutOf(-time.Second) != ex {
		t.Fatal("negative budget must be the exhausted budget")
	}
	b := TimeoutOf(time.Second)
	if got := b.Spend(300 * time.Millisecond); got != TimeoutOf(700*time.Millisecond) {
		t.Fatalf("spend: %v", got)
	}
	// The reconnect trap: spending more than the budget leaves an
	// exhausted budget, never NoTimeout; sub-second spends are not rounded.
	if got := b.Spend(1500 * time.Millisecond); got != ex || got.IsNone() {
		t.Fatalf("overspend: %v", got)
	}
	if got := TimeoutOf(time.Second).Spend(100 * time.Millisecond); got.IsNone() || got == ex {
		t.Fatalf("100ms of a 1s budget: %v", got)
	}
	if NoTimeout.Spend(time.Hour) != NoTimeout {
		t.Fatal("none stays none")
	}
	for in, want := range map[string]Timeout{"none": NoTimeout, "30s": TimeoutOf(30 * time.Second), "45": TimeoutOf(45 * time.Second), "1m30s": TimeoutOf(90 * time.Second), "OFF": NoTimeout} {
		got, err := ParseTimeout(in)
		if err != nil || got != want {
			t.Errorf("ParseTimeout(%q) = %v, %v", in, got, err)
		}
		var u Timeout
		txt, _ := want.MarshalText()
		if err := u.UnmarshalText(txt); err != nil || u != want {
			t.Errorf("text round trip of %v: %v %v", want, u, err)
		}
	}
	for _, bad := range []string{"", "0", "0s", "-1s", "soon"} {
		if _, err := ParseTimeout(bad); err == nil {
			t.Errorf("ParseTimeout(%q): no error", bad)
		}
	}
}

func TestBudgetNeverArmsZeroTime(t *testing.T) {
	b := newBudget(TimeoutOf(0))
	if d := b.deadline(time.Now()); d.IsZero() || d.After(time.Now()) {
		t.Fatalf("exhausted budget armed %v", d)
	}
	b = newBudget(TimeoutOf(time.Second))
	b.charge(2 * time.Second)
	if b.none || b.remaining != 0 || b.deadline(time.Now()).IsZero() {
		t.Fatalf("overcharged budget: %+v", b)
	}
}

// TestDeadlineChargesOnlyNetworkWaits: the consumer's time between reads is
// never charged; waits are.
func TestDeadlineChargesOnlyNetworkWaits(t *testing.T) {
	p := make([]byte, 100)
	c, fc, clk := newFakeSession(t, TimeoutOf(time.Second),
		step{300 * time.Millisecond, packet(p, false)},
		step{300 * time.Millisecond, packet(p, false)},
		step{300 * time.Millisecond, packet(p, false)},
		step{300 * time.Millisecond, packet(p, true)},
	)
	for i := 0; i < 3; i++ {
		for c.wpos < (i+1)*100 {
			if err := c.fill(false); err != nil {
				t.Fatalf("packet %d: %v", i, err)
			}
		}
		clk.Advance(10 * time.Second) // a slow consumer, far longer than the budget
	}
	if got := c.w.b.remaining; got != 100*time.Millisecond {
		t.Fatalf("remaining %v, want 100ms", got)
	}
	// Armed once, then re-armed once after each of the first two consumer
	// pauses (the kept deadline had expired meanwhile).
	if fc.sets != 3 {
		t.Fatalf("%d deadline sets", fc.sets)
	}
	err := c.fill(false)
	for err == nil {
		err = c.fill(false)
	}
	if !isTimeout(err) {
		t.Fatalf("4th packet: want timeout, got %v", err)
	}
	if c.w.b.remaining != 0 || c.w.b.none {
		t.Fatalf("after timeout: %+v", c.w.b)
	}
}

// TestExhaustedBudgetStillTimesOut: an exhausted budget fails a wait at
// once instead of turning into "no timeout".
func TestExhaustedBudgetStillTimesOut(t *testing.T) {
	c, fc, clk := newFakeSession(t, TimeoutOf(0), step{time.Hour, packet([]byte{1}, true)})
	start := clk.now
	err := c.fill(false)
	if !isTimeout(err) {
		t.Fatalf("want timeout, got %v", err)
	}
	if clk.now != start {
		t.Fatalf("exhausted budget waited %v", clk.now.Sub(start))
	}
	if fc.deadline.IsZero() {
		t.Fatal("exhausted budget disarmed the deadline")
	}
	// The same through Spend, as after a reconnect that used everything.
	c, _, _ = newFakeSession(t, TimeoutOf(time.Second).Spend(2*time.Second), step{time.Hour, packet([]byte{1}, true)})
	if err := c.fill(false); !isTimeout(err) {
		t.Fatalf("spent budget: want timeout, got %v", err)
	}
	// Partly spent by a login: still a budget of what is left.
	c, _, clk = newFakeSession(t, TimeoutOf(time.Second).Spend(800*time.Millisecond), step{time.Hour, packet([]byte{1}, true)})
	start = clk.now
	if err := c.fill(false); !isTimeout(err) {
		t.Fatalf("partly spent budget: want timeout, got %v", err)
	}
	if w := clk.now.Sub(start); w != 200*time.Millisecond {
		t.Fatalf("partly spent budget waited %v, want 200ms", w)
	}
}

// TestNoTimeoutNeverArms: NoTimeout never sets a deadline and waits as long
// as the network takes.
func TestNoTimeoutNeverArms(t *testing.T) {
	c, fc, _ := newFakeSession(t, NoTimeout,
		step{time.Hour, packet(make([]byte, 10), false)},
		step{24 * time.Hour, packet(make([]byte, 10), true)})
	for !c.msgDone() {
		if err := c.fill(false); err != nil {
			t.Fatal(err)
		}
	}
	if fc.sets != 0 || c.w.rearms != 0 {
		t.Fatalf("NoTimeout set a deadline %d times", fc.sets)
	}
	if c.wpos != 20 {
		t.Fatalf("payload %d bytes", c.wpos)
	}
}

// TestPacketReassembly: headers are stripped across arbitrary splits, and
// the deadline is armed once for the request, not per read.
func TestPacketReassembly(t *testing.T) {
	var stream []byte
	var want []byte
	for i := 0; i < 50; i++ {
		p := make([]byte, 1+i*37%500)
		for j := range p {
			p[j] = byte(i + j)
		}
		want = append(want, p...)
		stream = append(stream, packet(p, i == 49)...)
	}
	for _, chunk := range []int{1, 3, 7, 8, 9, 100, 4096, len(stream)} {
		var script []step
		for b := stream; len(b) > 0; {
			n := min(chunk, len(b))
			script = append(script, step{data: b[:n]})
			b = b[n:]
		}
		c, fc, _ := newFakeSession(t, TimeoutOf(time.Minute), script...)
		for !c.msgDone() {
			if err := c.fill(false); err != nil {
				t.Fatalf("chunk %d: %v", chunk, err)
			}
		}
		if string(c.buf[:c.wpos]) != string(want) {
			t.Fatalf("chunk %d: payload mismatch", chunk)
		}
		if fc.sets != 1 {
			t.Fatalf("chunk %d: %d deadline sets for %d reads, want 1", chunk, fc.sets, fc.reads)
		}
		if err := c.fill(false); !errors.Is(err, errMessageEnded) {
			t.Fatalf("chunk %d: read past the message: %v", chunk, err)
		}
		if c.spid != 55 {
			t.Fatalf("spid %d", c.spid)
		}
	}
}

func TestPacketErrors(t *testing.T) {
	bad := packet([]byte{1, 2}, true)
	bad[0] = decode.PacketSQLBatch
	c, _, _ := newFakeSession(t, TimeoutOf(time.Minute), step{data: bad})
	var pe *decode.ProtocolError
	if err := c.fill(false); !errors.As(err, &pe) {
		t.Fatalf("wrong packet type: %v", err)
	}
	c, _, _ = newFakeSession(t, TimeoutOf(time.Minute), step{data: []byte{4, 0, 0, 3, 0, 0, 0, 0}})
	if err := c.fill(false); !errors.As(err, &pe) {
		t.Fatalf("short length: %v", err)
	}
	// EOF in the middle of a packet is unexpected.
	c, _, _ = newFakeSession(t, TimeoutOf(time.Minute), step{data: packet(make([]byte, 20), true)[:15]})
	if err := c.fill(false); err != nil {
		t.Fatal(err)
	}
	c.w.conn = eofConn{}
	if err := c.fill(false); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("EOF mid packet: %v", err)
	}
	if !IsTransient(&NetError{Op: "read", Err: io.ErrUnexpectedEOF}) {
		t.Fatal("EOF mid-stream must be transient")
	}
}

type eofConn struct{ net.Conn }

func (eofConn) Read([]byte) (int, error)        { return 0, io.EOF }
func (eofConn) SetReadDeadline(time.Time) error { return nil }

// TestMeteredConnChargesOnlyWaits runs over a real loopback TCP pair, once
// through the metered socket (Unix: a read served from bytes the kernel
// already holds charges nothing, not even a clock read, so the budget stays
// exactly the same) and once through a plain net.Conn, as on Windows or
// with a custom dialer (the clock around each read charges it a few
// microseconds). In both a read that waits is charged at least the time it
// waited, consumer time between reads is never charged, and an exhausted
// budget still times out the next read that must wait.
func TestMeteredConnChargesOnlyWaits(t *testing.T) {
	for _, metered := range []bool{true, false} {
		t.Run(map[bool]string{true: "metered", false: "clocked"}[metered], func(t *testing.T) {
			if metered && !meteredSockets {
				t.Skipf("no metered sockets on %s", runtime.GOOS)
			}
			testChargesOnlyWaits(t, metered)
		})
	}
}

// plainConn hides the *net.TCPConn, so that setRaw cannot meter it.
type plainConn struct{ net.Conn }

func testChargesOnlyWaits(t *testing.T, metered bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP: %v", err)
	}
	defer ln.Close()
	srvc := make(chan net.Conn, 1)
	go func() {
		sc, err := ln.Accept()
		if err == nil {
			srvc <- sc
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc := <-srvc
	defer sc.Close()
	if !metered {
		nc = plainConn{nc}
	}
	c := &Conn{maxBuf: 1 << 20}
	c.initIO(c.setRaw(nc))
	defer c.Close()
	if c.w.metered != metered {
		t.Fatalf("metered %v, want %v", c.w.metered, metered)
	}
	c.w.start(TimeoutOf(time.Minute))
	if _, err := sc.Write(packet([]byte("hello"), false)); err != nil {
		t.Fatal(err)
	}
	// Wait until the bytes are in the client's kernel buffer, outside any read.
	time.Sleep(50 * time.Millisecond)
	before := c.w.b.remaining
	if err := c.fill(false); err != nil {
		t.Fatal(err)
	}
	if charged := before - c.w.b.remaining; (metered && charged != 0) || charged >= 50*time.Millisecond {
		t.Fatalf("a read that did not wait was charged %v", charged)
	}
	time.Sleep(100 * time.Millisecond) // consumer time: never charged
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = sc.Write(packet([]byte(" world"), false))
	}()
	before = c.w.b.remaining
	for c.wpos < 11 {
		if err := c.fill(false); err != nil {
			t.Fatal(err)
		}
	}
	charged := before - c.w.b.remaining
	if charged < 50*time.Millisecond || charged > 30*time.Second {
		t.Fatalf("a read that waited ~100ms was charged %v", charged)
	}
	// Exhausted budget: the next read that must wait fails at once.
	c.w.start(TimeoutOf(0))
	if string(c.buf[:c.wpos]) != "hello world" {
		t.Fatalf("payload %q", c.buf[:c.wpos])
	}
	if err := c.fill(false); !isTimeout(err) {
		t.Fatalf("exhausted budget: %v", err)
	}
}
