package session

import (
	"context"
	"errors"
	"sync/atomic"
)

// errInterrupted is returned by a wait that a context cancellation
// interrupted; the request turns it into the context's error after the
// ATTENTION round trip.
var errInterrupted = errors.New("engine: wait interrupted by cancellation")

// interruptState is the cancellation flag of the session. context.AfterFunc
// sets it and then sets a past read deadline to unblock a wait in progress;
// the request loop polls it between rows with one atomic load.
//
// Ordering argument: the callback stores the flag before it sets the past
// deadline, and a reader checks the flag after it arms its own deadline. If
// the reader's arming overwrote the callback's deadline, the flag was
// already set and the reader sees it; otherwise the past deadline is in
// place and the read returns at once.
type interruptState struct{ flag atomic.Bool }

func (s *interruptState) pending() bool { return s.flag.Load() }

// ctxWatch ties a context to the session for one request.
type ctxWatch struct {
	stop func() bool
	done chan struct{}
}

// watch arranges for ctx's cancellation to interrupt the session's waits.
// The returned watch must be released with unwatch before the session is
// used for anything else (the callback may be running).
func (c *Conn) watch(ctx context.Context) ctxWatch {
	if ctx.Done() == nil {
		return ctxWatch{}
	}
	done := make(chan struct{})
	conn := c.transport
	st := &c.w.interrupt
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		st.flag.Store(true)
		_ = conn.SetReadDeadline(pastDeadline)
		_ = conn.SetWriteDeadline(pastDeadline)
	})
	return ctxWatch{stop: stop, done: done}
}

// unwatch detaches the context and waits for a callback that already
// started, so that its deadline cannot land on a later wait. It reports
// whether the callback ran; the flag is cleared either way and the
// session's deadlines are marked dirty.
func (c *Conn) unwatch(w ctxWatch) bool {
	if w.stop == nil {
		return false
	}
	if w.stop() {
		return false
	}
	<-w.done
	c.w.interrupt.flag.Store(false)
	c.w.rArmed, c.w.wArmed, c.w.rFresh = true, true, false
	return true
}

// cancelRequest sends ATTENTION and drains the response to the DONE that
// acknowledges it (MS-TDS 3.2.5.x "Sent Attention State"), discarding
// everything received meanwhile. The drain is bounded by CancelTimeout; if
// it cannot complete the session is closed. It reports whether the
// session is still usable.
func (c *Conn) cancelRequest() bool {
	c.attentions++
	bound := c.cancelTimeout
	c.w.start(TimeoutOf(bound))
	if _, err := c.w.write(c.attnPacket[:]); err != nil {
		c.fail(err)
		return false
	}
	if err := c.drainToAttnAck(); err != nil {
		c.fail(err)
		return false
	}
	return true
}
