package session

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Timeout is a request's network-wait budget (docs/ARCHITECTURE.md). It has
// exactly two kinds of value, each with one representation:
//
//   - NoTimeout (the zero value): the request may wait on the network
//     forever. Only an explicit NoTimeout means that.
//   - a budget (TimeoutOf(d)): the total time the request may spend blocked
//     in network reads and writes. Time the consumer spends between rows is
//     never charged. TimeoutOf(0), or a budget spent to zero, is an
//     exhausted budget: it still is a budget, and the next read that has to
//     wait for the network times out at once. It never turns into
//     NoTimeout.
//
// Use Spend to charge time used before the request (a reconnect, a login):
// the remainder of a budget is again a budget, possibly exhausted. A request
// whose budget is exhausted before it starts is not sent at all (its write
// would be the first wait); rows already buffered are always delivered.
type Timeout struct {
	d      time.Duration
	budget bool
}

// NoTimeout is the Timeout that never fires.
var NoTimeout = Timeout{}

// TimeoutOf returns a budget of d; d <= 0 gives an exhausted budget.
func TimeoutOf(d time.Duration) Timeout {
	if d < 0 {
		d = 0
	}
	return Timeout{d: d, budget: true}
}

// IsNone reports whether t is NoTimeout.
func (t Timeout) IsNone() bool { return !t.budget }

// Budget returns the remaining budget and true, or 0 and false for NoTimeout.
func (t Timeout) Budget() (time.Duration, bool) { return t.d, t.budget }

// Exhausted reports whether t is a budget with nothing left.
func (t Timeout) Exhausted() bool { return t.budget && t.d == 0 }

// Spend returns t with d charged: NoTimeout stays NoTimeout, a budget
// saturates at an exhausted budget (never at NoTimeout).
func (t Timeout) Spend(d time.Duration) Timeout {
	if !t.budget || d <= 0 {
		return t
	}
	if d >= t.d {
		return Timeout{d: 0, budget: true}
	}
	return Timeout{d: t.d - d, budget: true}
}

// String returns "none" or the budget as a Go duration.
func (t Timeout) String() string {
	if !t.budget {
		return "none"
	}
	return t.d.String()
}

// ParseTimeout parses a configured timeout: "none" (also "off",
// "unlimited") is NoTimeout; a Go duration ("30s", "5m") or a plain number
// of seconds is a budget. Zero is rejected: an exhausted budget is never a
// sensible configuration and "0" means "none" in some tools and "fail at
// once" in others, so the configuration has to say which.
func ParseTimeout(s string) (Timeout, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "none", "off", "unlimited", "infinite":
		return NoTimeout, nil
	case "":
		return Timeout{}, errors.New(`engine: empty timeout (write "none" for no timeout, or a duration)`)
	}
	d, ok := parseSeconds(v)
	if !ok {
		return Timeout{}, fmt.Errorf("engine: timeout %q: want \"none\" or a duration such as 30s", s)
	}
	if d == 0 {
		return Timeout{}, fmt.Errorf(`engine: timeout %q: zero is ambiguous; write "none" for no timeout`, s)
	}
	return TimeoutOf(d), nil
}

// MarshalText implements encoding.TextMarshaler.
func (t Timeout) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseTimeout.
func (t *Timeout) UnmarshalText(b []byte) error {
	v, err := ParseTimeout(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// errBudgetExhausted fails a write whose budget was already exhausted; the
// socket was not touched.
var errBudgetExhausted = fmt.Errorf("engine: request budget exhausted: %w", os.ErrDeadlineExceeded)

// pastDeadline is a deadline that has already passed. It is what an
// exhausted budget arms: the zero time.Time would mean "no deadline", so
// a budget that ran out would silently turn into no timeout at all.
var pastDeadline = time.Unix(1, 0)

// budget is the running state of one request's Timeout. It is charged with
// the time spent blocked in network reads and writes, measured around each
// blocking call (not per row).
type budget struct {
	none      bool
	initial   time.Duration
	remaining time.Duration
}

func newBudget(t Timeout) budget {
	d, ok := t.Budget()
	return budget{none: !ok, initial: d, remaining: d}
}

func (b *budget) charge(d time.Duration) {
	if b.none || d <= 0 {
		return
	}
	if d >= b.remaining {
		b.remaining = 0
		return
	}
	b.remaining -= d
}

// deadline returns the deadline to arm for a wait starting at now; never
// the zero time for a budget.
func (b *budget) deadline(now time.Time) time.Time {
	if b.remaining <= 0 {
		return pastDeadline
	}
	return now.Add(b.remaining)
}

// isTimeout reports whether err is a deadline expiry of a net.Conn.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// waiter runs the blocking network calls of a session under the current
// request's budget. The read deadline is armed only here, i.e. only when
// the read buffer is exhausted and a read has to go to the network; rows
// served from buffered bytes never touch it.
type waiter struct {
	conn  net.Conn
	clock func() time.Time
	b     budget
	// rArmed / wArmed: a deadline is set on conn that must be cleared
	// before a wait without a budget. rFresh: the read deadline was armed
	// for the current budget (see read).
	rArmed, wArmed, rFresh bool
	// metered: conn is (or sits on) a meteredConn, which charges the
	// budget itself for the time reads actually wait; otherwise read
	// measures around each Read with the clock.
	metered bool
	// rearms counts SetReadDeadline calls and reads the network reads
	// (tests and benchmarks assert laziness with them).
	rearms, reads int
	// interrupt is set when a cancellation or a drain bound overrides the
	// budget; see cancel.go.
	interrupt interruptState
}

// start installs a request's budget. The read deadline is armed by the
// first read that has to go to the network, not here.
func (w *waiter) start(t Timeout) {
	w.b = newBudget(t)
	w.rFresh = false
}

// read is one conn.Read under the budget.
//
// The deadline armed for a budget is start+remaining of the read that armed
// it. Later reads keep it: since only time inside reads is charged, a kept
// deadline is never later than the exact one (start'+remaining'), only
// earlier by the consumer's time between reads. When it fires early, read
// charges the wait, re-arms for what is really left and goes on waiting;
// only a timeout with nothing left is returned. So the deadline costs one
// SetReadDeadline per request plus one per early expiry (at most one per
// budget's worth of wall time), instead of one per read, and none per row.
func (w *waiter) read(p []byte) (int, error) {
	if w.interrupt.pending() {
		return 0, errInterrupted
	}
	if w.b.none {
		if w.rArmed {
			_ = w.conn.SetReadDeadline(time.Time{})
			w.rArmed = false
			w.rearms++
		}
		w.reads++
		n, err := w.conn.Read(p)
		if err != nil && w.interrupt.pending() {
			return n, errInterrupted
		}
		return n, err
	}
	for {
		var start time.Time
		if !w.metered || !w.rFresh {
			start = w.clock()
		}
		if !w.rFresh {
			_ = w.conn.SetReadDeadline(w.b.deadline(start))
			w.rArmed, w.rFresh = true, true
			w.rearms++
		}
		// Re-check after arming: a cancellation that set its past deadline
		// before ours overwrote it has set the flag before that (cancel.go).
		if w.interrupt.pending() {
			return 0, errInterrupted
		}
		w.reads++
		n, err := w.conn.Read(p)
		if !w.metered {
			w.b.charge(w.clock().Sub(start))
		}
		if err == nil || n > 0 {
			return n, nil // a pending error recurs on the next read
		}
		if w.interrupt.pending() {
			return n, errInterrupted
		}
		if isTimeout(err) && w.b.remaining > 0 {
			w.rFresh = false // an early expiry of a kept deadline
			continue
		}
		return n, err
	}
}

// write writes all of p under the budget and reports how much was written.
func (w *waiter) write(p []byte) (int, error) {
	if !w.b.none && w.b.remaining <= 0 {
		// An exhausted budget fails the wait at once. Do not even try:
		// a timed-out Write leaves a TLS connection unusable for good.
		return 0, errBudgetExhausted
	}
	var start time.Time
	if !w.b.none {
		start = w.clock()
		_ = w.conn.SetWriteDeadline(w.b.deadline(start))
		w.wArmed = true
	} else if w.wArmed {
		_ = w.conn.SetWriteDeadline(time.Time{})
		w.wArmed = false
	}
	n, err := w.conn.Write(p)
	if !w.b.none {
		w.b.charge(w.clock().Sub(start))
	}
	return n, err
}
