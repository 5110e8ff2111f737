package tdsserver

import (
	"bufio"
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
)

// requestLoop serves requests until the client hangs up. A reader goroutine
// reads client messages so that an ATTENTION is seen while a result streams
// (MS-TDS 3.3.5.7: the server stops, then sends DONE with DONE_ATTN).
func (c *conn) requestLoop() error {
	msgs := make(chan message, 8)
	stop := make(chan struct{})
	defer close(stop)
	br := c.br
	c.readers.Add(1)
	go func() {
		defer c.readers.Done()
		c.readLoop(br, msgs, stop)
	}()

	for m := range msgs {
		if m.err != nil {
			return m.err
		}
		var err error
		switch {
		case m.typ == pktAttention:
			err = c.answerAttention()
		case m.ignore:
			// The client abandoned a partly sent request (IGNORE|EOM): the
			// server discards it and answers with DONE(ERROR).
			c.w.begin(c.packetSize)
			c.put((&decode.Done{Token: decode.TokenDone, Status: decode.DoneError}).Append(c.tok[:0]))
			err = c.w.end()
		default:
			err = c.handleRequest(m)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readLoop reads client messages and hands them to the request loop. An
// ATTENTION is counted here, at once, so a streaming result notices it.
func (c *conn) readLoop(br *bufio.Reader, msgs chan<- message, stop <-chan struct{}) {
	defer close(msgs)
	for {
		m, err := readMessage(br, nil, 65535, 0)
		if err != nil {
			m.err = err
		} else if m.typ == pktAttention {
			c.srv.stats.attentions.Add(1)
			c.attnRecv.Add(1)
			select {
			case c.attnWake <- struct{}{}:
			default:
			}
		}
		select {
		case msgs <- m:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// attentionPending reports an attention not yet acknowledged.
func (c *conn) attentionPending() bool { return c.attnRecv.Load() > c.attnAcked }

// answerAttention acknowledges every attention received so far, unless a
// streaming result already did.
func (c *conn) answerAttention() error {
	if !c.attentionPending() {
		return nil
	}
	c.attnAcked = c.attnRecv.Load()
	c.w.begin(c.packetSize)
	c.put((&decode.Done{Token: decode.TokenDone, Status: decode.DoneAttn}).Append(c.tok[:0]))
	return c.w.end()
}

func (c *conn) handleRequest(m message) error {
	c.w.begin(c.packetSize)
	if m.status&(statusReset|statusResetTxn) != 0 {
		c.resetSession()
		c.put((&decode.EnvChange{Type: decode.EnvResetConnAck}).Append(c.tok[:0]))
	}
	switch m.typ {
	case pktSQLBatch:
		var b decode.SQLBatch
		if err := b.Decode(m.payload); err != nil {
			return err // malformed request: close, as SQL Server does
		}
		c.srv.stats.queries.Add(1)
		return c.runBatch(b.SQL)
	case pktRPC:
		return c.runRPCs(m.payload)
	case pktTransMgr:
		return c.runTransMgr(m.payload)
	default:
		return fmt.Errorf("tdsserver: unsupported request packet type 0x%02x", m.typ)
	}
}
