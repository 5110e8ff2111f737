package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// Query is one request: a SQL batch, or, with Params, a parameterised
// sp_executesql RPC.
type Query struct {
	SQL    string
	Params []Param
	// Timeout is the request's network-wait budget (see Timeout). There is
	// no hidden default: the zero value is NoTimeout, and a job passes its
	// configured timeout explicitly.
	Timeout Timeout
	// OnMessage, if set, receives every INFO message (and every ERROR, which
	// also ends up in the returned error) as it arrives. The Message is
	// valid only during the call.
	OnMessage func(*decode.Message)
	// OnProgress, if set, is called each time the rows received pass a
	// multiple of ProgressRows, with that multiple (from the read loop,
	// between rows: no wrapper around the sink, so nothing per cell).
	OnProgress func(rows int64)
}

// ProgressRows is how often (in rows) Query.OnProgress is called: 8192, a
// multiple of cancelPollRows by construction, since the read loop checks
// it only when it polls for cancellation.
const ProgressRows = 128 * cancelPollRows

// Param is one sp_executesql parameter. Value is a Go value (nil, bool,
// integers, float32/64, string, []byte, time.Time) or one of decode's value
// types (Decimal, Money, Date, Time, DateTime, DateTimeOffset, GUID). Type,
// when set, fixes the SQL type; otherwise it is inferred from Value
// (string: nvarchar(4000) or (max), integers: bigint, time.Time:
// datetimeoffset(7), ...).
type Param struct {
	Name  string // with or without '@'; empty: @p1, @p2, ...
	Value any
	Type  *decode.TypeInfo
}

// Result summarises a request.
type Result struct {
	ResultSets int     // result sets with columns
	Rows       int64   // rows delivered to the sink
	RowCounts  []int64 // DONE row counts (statements that report one)
	Messages   []decode.Message
	// ReturnStatus of the procedure, when the server sent one.
	ReturnStatus    int32
	HasReturnStatus bool
}

// Query runs q and streams every result set into sink (Columns per result
// set, then the rows' cells). It returns when the response is complete.
//
// Errors: a server ERROR is returned as *ServerError (the request still ran
// to its end, the session is usable); a budget overrun as *TimeoutError; a
// cancelled ctx as an error wrapping ctx's cause. In both of the latter the
// request is cancelled with ATTENTION and the session stays usable unless
// the drain failed. Network and protocol failures close the session.
func (c *Conn) Query(ctx context.Context, q Query, sink decode.CellSink) (*Result, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	if !c.busy.CompareAndSwap(false, true) {
		return nil, ErrConnBusy
	}
	defer c.busy.Store(false)
	if err := context.Cause(ctx); ctx.Err() != nil {
		return nil, fmt.Errorf("engine: query not started: %w", err)
	}
	if c.pktRemain != 0 || c.r != c.wpos {
		return nil, c.fail(&decode.ProtocolError{Where: "response", Msg: "unread bytes after the previous response"})
	}
	c.r, c.wpos, c.inMsg = 0, 0, false
	res := &Result{}
	c.done = ctx.Done()
	defer func() { c.done = nil }()
	payload, err := c.buildRequest(&q)
	if err != nil {
		return nil, err
	}
	c.w.start(q.Timeout)
	w := c.watch(ctx)
	typ := decode.PacketSQLBatch
	if len(q.Params) > 0 {
		typ = decode.PacketRPC
	}
	if sent, err := c.writeMessage(typ, 0, payload); err != nil {
		cancelled := c.unwatch(w)
		// Nothing sent on a plain socket: the session is intact (an
		// exhausted budget fails here, at once, without touching the
		// socket). crypto/tls makes every failed Write permanent.
		intact := !sent && (!c.encrypted || errors.Is(err, errBudgetExhausted))
		if intact && (cancelled || isTimeout(err) || errors.Is(err, errInterrupted)) {
			c.w.rArmed, c.w.wArmed, c.w.rFresh = true, true, false
			if cancelled {
				return nil, fmt.Errorf("engine: query cancelled: %w", context.Cause(ctx))
			}
			return nil, &TimeoutError{Op: "write", Budget: c.w.b.initial, Drained: true, Err: err}
		}
		if cancelled {
			// The request may be partly sent; the session cannot be trusted.
			_ = c.fail(err)
			return nil, fmt.Errorf("engine: query cancelled while sending (connection closed): %w", context.Cause(ctx))
		}
		if isTimeout(err) {
			_ = c.fail(err)
			return nil, &TimeoutError{Op: "write", Budget: c.w.b.initial, Err: err}
		}
		return nil, c.netErr("write", err)
	}
	if sink == nil {
		sink = &c.discard
	}
	// A fresh Stream per request: a reused one would hand the previous
	// request's columns to the new sink in SetSink.
	c.stream = decode.NewStream(c.streamOptions())
	_ = c.stream.SetSink(sink) // no columns yet: cannot fail
	err = c.readResponse(&q, res)
	cancelled := c.unwatch(w)
	switch {
	case err == nil:
		return res, res.err()
	case errors.Is(err, errInterrupted) || (cancelled && isTimeout(err)):
		ok := c.cancelRequest()
		cause := context.Cause(ctx)
		if !ok {
			return res, fmt.Errorf("engine: query cancelled (connection closed: %v): %w", c.broken, cause)
		}
		return res, fmt.Errorf("engine: query cancelled: %w", cause)
	case isTimeout(err):
		te := &TimeoutError{Op: "read", Budget: c.w.b.initial, Err: err}
		te.Drained = c.cancelRequest()
		return res, te
	case errors.Is(err, errSinkFailed):
		sinkErr := errors.Unwrap(err)
		// The sink's error is sticky in the Stream; the row it came from
		// is complete, so the stream can go on from a token boundary.
		c.stream.Reset()
		if !c.cancelRequest() {
			return res, fmt.Errorf("%w (and the cancel failed: %v)", sinkErr, c.broken)
		}
		return res, sinkErr
	default:
		return res, c.netErr("read", err)
	}
}

func (c *Conn) streamOptions() decode.StreamOptions {
	// Up to RowBatchSize buffered rows a decoder call: the read loop's own
	// per-row cost (the return, the event switch, the flag) is paid once
	// per batch, and cancellation is looked at between batches.
	return decode.StreamOptions{ResidencyCap: c.cfg.ResidencyCap, RequestedFeatures: c.features, RowBatch: decode.RowBatchSize}
}

// cancelPollRows is how often (in rows) the read loop polls the context's
// Done channel directly, on top of the flag check after every batch.
const cancelPollRows = 64

// errSinkFailed wraps an error returned by the sink (EndRow, Columns).
var errSinkFailed = errors.New("engine: sink failed")

type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }
func (e *sinkError) Is(t error) bool {
	return t == errSinkFailed
}

// err returns the first server error of the response, if any.
func (r *Result) err() error {
	for i := range r.Messages {
		if m := &r.Messages[i]; m.Token == decode.TokenError {
			return serverError(m)
		}
	}
	return nil
}

// readResponse is the hot loop: decode what is buffered into the sink set on
// c.stream, and only when the decoder needs more bytes, wait for the network
// (fill arms the deadline).
// Nothing here allocates per row; the cost of cancellation is one atomic
// load per batch of at most decode.RowBatchSize rows.
func (c *Conn) readResponse(q *Query, res *Result) error {
	s := c.stream
	for {
		n, ev, err := s.Next(c.buf[c.r:c.wpos])
		c.r += n
		if err != nil {
			// the rows a batch completed before a sink's or the
			// stream's error were delivered
			res.Rows += int64(s.EventRows)
			if err == decode.ErrNeedMore || errors.Is(err, decode.ErrNeedMore) {
				if c.w.interrupt.pending() {
					return errInterrupted
				}
				if ferr := c.fill(false); ferr != nil {
					return ferr
				}
				continue
			}
			var pe *decode.ProtocolError
			if errors.As(err, &pe) {
				return err
			}
			return &sinkError{err}
		}
		switch ev {
		case decode.EventRow:
			prev := res.Rows
			res.Rows += int64(s.EventRows)
			if c.w.interrupt.pending() {
				return errInterrupted
			}
			// context.AfterFunc sets the flag from another goroutine, a
			// little later than cancel returns; polling Done whenever the
			// rows pass a multiple of cancelPollRows bounds how many rows
			// that can take.
			if res.Rows/cancelPollRows != prev/cancelPollRows {
				if c.done != nil {
					select {
					case <-c.done:
						return errInterrupted
					default:
					}
				}
				if q.OnProgress != nil && res.Rows/ProgressRows != prev/ProgressRows {
					q.OnProgress(res.Rows - res.Rows%ProgressRows)
				}
			}
		case decode.EventColMetadata:
			if len(s.Columns) > 0 {
				res.ResultSets++
			}
		case decode.EventDone:
			d := &s.Done
			if d.Status&decode.DoneCount != 0 {
				res.RowCounts = append(res.RowCounts, int64(d.RowCount))
			}
			// The response ends with a DONE (batch) or DONEPROC (RPC)
			// without DONE_MORE, at the end of the server's message; should
			// the message go on, so does the response.
			if d.Status&decode.DoneMore == 0 && d.Token != decode.TokenDoneInProc && c.msgDone() && c.r == c.wpos {
				return nil
			}
			if c.w.interrupt.pending() {
				return errInterrupted
			}
		case decode.EventError, decode.EventInfo:
			res.Messages = append(res.Messages, s.Message)
			if q.OnMessage != nil {
				q.OnMessage(&s.Message)
			}
		case decode.EventEnvChange:
			if err := c.envChange(&s.EnvChange); err != nil {
				return err
			}
		case decode.EventReturnStatus:
			res.ReturnStatus, res.HasReturnStatus = s.ReturnStatus, true
		}
	}
}

// drainToAttnAck discards the rest of the response up to the DONE with
// DONE_ATTN, across message boundaries.
func (c *Conn) drainToAttnAck() error {
	s := c.stream
	// Switching sinks in the middle of a row is allowed: the row's
	// remaining cells go to the discarding sink.
	if err := s.SetSink(&c.discard); err != nil {
		return err
	}
	attnSeen := false
	for {
		n, ev, err := s.Next(c.buf[c.r:c.wpos])
		c.r += n
		if err != nil {
			if errors.Is(err, decode.ErrNeedMore) {
				if ferr := c.fill(true); ferr != nil {
					return ferr
				}
				continue
			}
			return err
		}
		if ev == decode.EventDone && s.Done.Status&decode.DoneAttn != 0 {
			attnSeen = true
		}
		if attnSeen && c.msgDone() && c.r == c.wpos {
			s.Reset()
			return nil
		}
	}
}

// buildRequest encodes q's SQLBatch or sp_executesql RPC payload.
func (c *Conn) buildRequest(q *Query) ([]byte, error) {
	if len(q.Params) == 0 {
		b := decode.SQLBatch{TxnDescriptor: c.txn, OutstandingRequests: 1, SQL: q.SQL}
		c.payload = b.Encode(c.payload[:0])
		return c.payload, nil
	}
	params := make([]decode.RPCParam, 0, len(q.Params)+2)
	var decl strings.Builder
	user := make([]decode.RPCParam, 0, len(q.Params))
	for i := range q.Params {
		p, err := rpcParam(&q.Params[i], i)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			decl.WriteString(", ")
		}
		decl.WriteString(p.Name)
		decl.WriteByte(' ')
		decl.WriteString(decode.TypeDecl(&p.Type, 0))
		user = append(user, p)
	}
	params = append(params, decode.NVarCharParam("", q.SQL), decode.NVarCharParam("", decl.String()))
	params = append(params, user...)
	r := decode.RPCRequest{TxnDescriptor: c.txn, OutstandingRequests: 1, ProcID: decode.ProcIDExecuteSQL, Params: params}
	var err error
	c.payload, err = r.Encode(c.payload[:0])
	if err != nil {
		return nil, fmt.Errorf("engine: encode RPC: %w", err)
	}
	return c.payload, nil
}

// rpcParam converts a Param to its wire form.
func rpcParam(p *Param, i int) (decode.RPCParam, error) {
	name := p.Name
	if name == "" {
		name = "@p" + strconv.Itoa(i+1)
	} else if name[0] != '@' {
		name = "@" + name
	}
	v, ti, err := genericValue(p.Value)
	if err != nil {
		return decode.RPCParam{}, fmt.Errorf("engine: parameter %s: %w", name, err)
	}
	if p.Type != nil {
		ti = *p.Type
		if tv, ok := p.Value.(time.Time); ok {
			switch ti.Kind() {
			case decode.KindDateTimeOffset:
				v = decode.DateTimeOffsetFromTime(tv)
			case decode.KindDate:
				v = decode.Date(decode.DateTimeFromTime(tv).Days)
			case decode.KindTime:
				v = decode.Time(decode.DateTimeFromTime(tv).Ticks)
			default:
				v = decode.DateTimeFromTime(tv)
			}
		}
	} else if s, ok := v.(string); ok {
		rp := decode.NVarCharParam(name, s)
		return rp, nil
	} else if b, ok := v.([]byte); ok {
		rp := decode.VarBinaryParam(name, b)
		return rp, nil
	}
	rp, err := decode.Param(name, ti, v)
	if err != nil {
		return decode.RPCParam{}, fmt.Errorf("engine: parameter %s: %w", name, err)
	}
	return rp, nil
}

// genericValue maps a Go value to decode's generic value types and the
// TYPE_INFO inferred for it.
func genericValue(v any) (any, decode.TypeInfo, error) {
	switch x := v.(type) {
	case nil:
		return nil, decode.TypeInfo{Type: decode.TypeNVarChar, Size: 8000, Collation: decode.DefaultParamCollation}, nil
	case bool:
		return x, decode.TypeInfo{Type: decode.TypeBitN, Size: 1}, nil
	case int:
		return int64(x), paramBigInt, nil
	case int8:
		return int64(x), paramBigInt, nil
	case int16:
		return int64(x), paramBigInt, nil
	case int32:
		return int64(x), paramBigInt, nil
	case int64:
		return x, paramBigInt, nil
	case uint8:
		return int64(x), paramBigInt, nil
	case uint16:
		return int64(x), paramBigInt, nil
	case uint32:
		return int64(x), paramBigInt, nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return nil, decode.TypeInfo{}, fmt.Errorf("value %d overflows bigint", x)
		}
		return int64(x), paramBigInt, nil
	case uint64:
		if x > math.MaxInt64 {
			return nil, decode.TypeInfo{}, fmt.Errorf("value %d overflows bigint", x)
		}
		return int64(x), paramBigInt, nil
	case float32:
		return x, decode.TypeInfo{Type: decode.TypeFltN, Size: 4}, nil
	case float64:
		return x, decode.TypeInfo{Type: decode.TypeFltN, Size: 8}, nil
	case string:
		return x, decode.TypeInfo{Type: decode.TypeNVarChar, Size: 8000, Collation: decode.DefaultParamCollation}, nil
	case []byte:
		return x, decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 8000}, nil
	case time.Time:
		return decode.DateTimeOffsetFromTime(x), decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}, nil
	case decode.Decimal:
		p := x.Precision
		if p == 0 {
			p = 38
		}
		return x, decode.TypeInfo{Type: decode.TypeDecimalN, Size: 17, Precision: p, Scale: x.Scale}, nil
	case decode.Money:
		return x, decode.TypeInfo{Type: decode.TypeMoneyN, Size: 8}, nil
	case decode.Date:
		return x, decode.TypeInfo{Type: decode.TypeDateN}, nil
	case decode.Time:
		return x, decode.TypeInfo{Type: decode.TypeTimeN, Scale: 7}, nil
	case decode.DateTime:
		return x, decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}, nil
	case decode.DateTimeOffset:
		return x, decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}, nil
	case decode.GUID:
		return x, decode.TypeInfo{Type: decode.TypeGUID, Size: 16}, nil
	}
	return nil, decode.TypeInfo{}, fmt.Errorf("unsupported parameter type %T", v)
}

// paramBigInt is the type of every Go integer parameter: bigint, nullable.
var paramBigInt = decode.KindBigInt.Decl().TypeInfo(true, decode.Collation{})
