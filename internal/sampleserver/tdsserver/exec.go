package tdsserver

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sqlexec"
)

// resetSession starts a fresh SQL session: after login, and for the
// reset-connection status bits (SET options, prepared handles and the
// current database go back to the login's).
func (c *conn) resetSession() {
	s := sqlexec.NewSession(c.srv.cfg.DB)
	s.SPID = int16(c.spid)
	if c.database != "" && !strings.EqualFold(c.database, c.srv.cfg.Database) {
		s.Database = c.database // master or tempdb
	}
	c.sess = s
}

// put writes a token built in c.tok (whose storage it keeps for reuse).
func (c *conn) put(b []byte) {
	c.tok = b
	c.w.write(b)
}

// DONE's CurCmd after a SELECT and for DONEPROC (as SQL Server reports
// them; MS-TDS example 4.9).
const (
	curCmdSelect  uint16 = 0xC1
	curCmdExecute uint16 = 0xE0
	curCmdInsert  uint16 = 0xC3
)

// runBatch executes a SQLBatch and writes the whole response.
func (c *conn) runBatch(sql string) error {
	results, err := c.sess.Exec(sql, nil)
	c.armFaults(results)
	stop, werr := c.writeResults(results, false, err != nil)
	if werr != nil || stop {
		return werr
	}
	if err != nil {
		c.writeError(err)
		c.put((&decode.Done{Token: decode.TokenDone, Status: decode.DoneError}).Append(c.tok[:0]))
	} else if !c.wroteFinal {
		c.put((&decode.Done{Token: decode.TokenDone}).Append(c.tok[:0]))
	}
	return c.w.end()
}

// armFaults arms the byte-level fault knobs for this response when any of
// its results is one the faults apply to.
func (c *conn) armFaults(results []sqlexec.Result) {
	c.faults = c.srv.faults.Load() // one snapshot per request
	f := c.faults
	if !f.Enabled() {
		return
	}
	for i := range results {
		if f.appliesTo(results[i].Table) {
			c.w.applyFaults(f)
			return
		}
	}
}

// writeResults writes each result's tokens. In an RPC (inProc), DONEs are
// DONEINPROC and none is final; in a batch the last DONE is final when it
// ends the batch (c.wroteFinal). stop reports that an attention or a fault
// ended the message already.
func (c *conn) writeResults(results []sqlexec.Result, inProc, moreFollows bool) (stop bool, err error) {
	c.wroteFinal = false
	for i := range results {
		r := &results[i]
		for _, ec := range r.EnvChanges {
			c.put((&decode.EnvChange{Type: ec.Type, NewValue: ec.NewValue, OldValue: ec.OldValue}).Append(c.tok[:0]))
		}
		for _, in := range r.Infos {
			c.put((&decode.Message{Token: decode.TokenInfo, Number: in.Number, State: in.State, Class: in.Class,
				Text: in.Message, Server: serverName, Line: in.Line}).Append(c.tok[:0]))
		}
		var count uint64
		status := uint16(0)
		cmd := uint16(0)
		if r.Columns != nil {
			var rows rowSource
			if r.Rows != nil {
				rows = r.Rows
			}
			cols, rows := c.downgradeResult(r.Columns, rows)
			c.put(decode.AppendColMetadata(c.tok[:0], cols))
			var f *Faults
			if c.faults.appliesTo(r.Table) {
				f = c.faults
			}
			n, out, err := c.streamRows(cols, rows, f)
			if err != nil {
				return true, err
			}
			switch out {
			case ended:
				return true, nil
			case attention:
				c.attnAcked = c.attnRecv.Load()
				c.put((&decode.Done{Token: decode.TokenDone, Status: decode.DoneAttn | decode.DoneCount, CurCmd: curCmdSelect, RowCount: uint64(n)}).Append(c.tok[:0]))
				return true, c.w.end()
			}
			count, status, cmd = uint64(n), decode.DoneCount, curCmdSelect
			// A row that fails part way (a conversion error in a filter or
			// projection) ends the result with an ERROR, as SQL Server does,
			// never with a silently short result.
			if es, ok := rows.(sqlexec.ErrSource); ok && es.Err() != nil {
				c.writeError(es.Err())
				status |= decode.DoneError
			}
		} else if !r.Done {
			continue
		} else if r.Affected {
			count, status, cmd = uint64(r.RowCount), decode.DoneCount, curCmdInsert
		}
		last := i == len(results)-1
		tok := decode.TokenDone
		if inProc {
			tok = decode.TokenDoneInProc
			status |= decode.DoneMore
		} else if !last || moreFollows {
			status |= decode.DoneMore
		}
		c.put((&decode.Done{Token: tok, Status: status, CurCmd: cmd, RowCount: count}).Append(c.tok[:0]))
		if last && !inProc && !moreFollows {
			c.wroteFinal = true
		}
		if c.w.err != nil {
			return true, c.w.err
		}
	}
	return false, c.w.err
}

// writeError writes an ERROR token for err.
func (c *conn) writeError(err error) {
	var se *sqlexec.Error
	m := decode.Message{Token: decode.TokenError, Number: 50000, State: 1, Class: 16, Server: serverName, Line: 1}
	if errors.As(err, &se) {
		m.Number, m.State, m.Class, m.Text, m.Line = se.Number, se.State, se.Class, se.Message, se.Line
	} else {
		m.Text = err.Error()
	}
	if m.Class < 11 {
		m.Class = 16
	}
	c.put(m.Append(c.tok[:0]))
}

// ---- RPC ----

// runRPCs executes every RPC of the message (several when batched).
func (c *conn) runRPCs(payload []byte) error {
	reqs, err := decode.DecodeRPCBatch(payload)
	if err != nil {
		// Malformed: close the connection, as SQL Server does.
		c.srv.cfg.Logger.Warn("tdsserver: bad RPC request", "spid", c.spid, "err", err,
			"payload", hex.EncodeToString(payload[:min(len(payload), 512)]))
		return err
	}
	for i := range reqs {
		c.srv.stats.queries.Add(1)
		c.srv.stats.rpcs.Add(1)
		last := i == len(reqs)-1
		stop, err := c.runRPC(&reqs[i], last)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	return c.w.end()
}

// runRPC executes one RPC and writes its tokens up to its DONEPROC.
func (c *conn) runRPC(r *decode.RPCRequest, last bool) (stop bool, err error) {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(r.ProcName, "sys."), "dbo."))
	id := r.ProcID
	if id == 0 {
		switch name {
		case "sp_executesql":
			id = decode.ProcIDExecuteSQL
		case "sp_prepare":
			id = decode.ProcIDPrepare
		case "sp_execute":
			id = decode.ProcIDExecute
		case "sp_prepexec":
			id = decode.ProcIDPrepExec
		case "sp_unprepare":
			id = decode.ProcIDUnprepare
		}
	}
	params := make([]sqlexec.Param, len(r.Params))
	for i := range r.Params {
		p := &r.Params[i]
		v, err := paramValue(p)
		if err != nil {
			return c.rpcError(&sqlexec.Error{Number: 8016, State: 1, Class: 16, Line: 1,
				Message: fmt.Sprintf("The incoming tabular data stream (TDS) remote procedure call (RPC) protocol stream is incorrect. Parameter %d (\"%s\"): %v", i+1, p.Name, err)}, last)
		}
		params[i] = sqlexec.Param{Name: p.Name, Value: v, Type: p.Type}
	}
	str := func(i int) (string, bool) {
		if i >= len(params) {
			return "", false
		}
		s, ok := params[i].Value.(string)
		return s, ok
	}
	handleOut := -1 // index of the @handle output parameter
	var handle int32
	var results []sqlexec.Result
	var execErr error
	sess := c.sess
	switch id {
	case decode.ProcIDExecuteSQL:
		sql, ok := str(0)
		if !ok {
			return c.rpcError(procArgError("sp_executesql", "@statement"), last)
		}
		rest := params[1:]
		if len(rest) > 0 {
			rest = rest[1:] // the declaration list
		}
		results, execErr = sess.Exec(sql, rest)
	case decode.ProcIDPrepExec, decode.ProcIDPrepare:
		// @handle int OUTPUT, @params nvarchar, @stmt nvarchar, values...
		decl, _ := str(1)
		sql, ok := str(2)
		if !ok {
			return c.rpcError(procArgError(procName(id), "@stmt"), last)
		}
		handle = sess.Prepare(sql, decl)
		handleOut = 0
		if id == decode.ProcIDPrepExec {
			results, execErr = sess.Execute(handle, params[3:])
		}
	case decode.ProcIDExecute:
		h, ok := intParam(params, 0)
		if !ok {
			return c.rpcError(procArgError("sp_execute", "@handle"), last)
		}
		results, execErr = sess.Execute(int32(h), params[1:])
	case decode.ProcIDUnprepare:
		h, ok := intParam(params, 0)
		if !ok {
			return c.rpcError(procArgError("sp_unprepare", "@handle"), last)
		}
		sess.Unprepare(int32(h))
	default:
		n := r.ProcName
		if n == "" {
			n = fmt.Sprintf("procedure id %d", r.ProcID)
		}
		return c.rpcError(&sqlexec.Error{Number: 2812, State: 62, Class: 16, Line: 1,
			Message: fmt.Sprintf("Could not find stored procedure '%s'.", n)}, last)
	}
	c.armFaults(results)
	stop, err = c.writeResults(results, true, false)
	if err != nil || stop {
		return true, err
	}
	if execErr != nil {
		c.writeError(execErr)
	}
	c.put((&decode.ReturnStatus{Value: 0}).Append(c.tok[:0]))
	if handleOut >= 0 && handleOut < len(r.Params) {
		p := &r.Params[handleOut]
		pname := p.Name
		if pname == "" {
			pname = "@handle"
		}
		rv := decode.ReturnValue{Ordinal: uint16(handleOut), Name: pname, Status: 0x01,
			Type:  decode.TypeInfo{Type: decode.TypeIntN, Size: 4},
			Value: []byte{4, byte(handle), byte(handle >> 8), byte(handle >> 16), byte(handle >> 24)}}
		c.put(rv.Append(c.tok[:0]))
	}
	status := uint16(0)
	if execErr != nil {
		status |= decode.DoneError
	}
	if !last {
		status |= decode.DoneMore
	}
	c.put((&decode.Done{Token: decode.TokenDoneProc, Status: status, CurCmd: curCmdExecute}).Append(c.tok[:0]))
	return false, c.w.err
}

func procName(id uint16) string {
	switch id {
	case decode.ProcIDPrepare:
		return "sp_prepare"
	case decode.ProcIDPrepExec:
		return "sp_prepexec"
	}
	return "sp_executesql"
}

func procArgError(proc, param string) *sqlexec.Error {
	return &sqlexec.Error{Number: 201, State: 4, Class: 16, Line: 1,
		Message: fmt.Sprintf("Procedure or function '%s' expects parameter '%s', which was not supplied.", proc, param)}
}

// rpcError ends one RPC with ERROR and DONEPROC(ERROR).
func (c *conn) rpcError(err error, last bool) (bool, error) {
	c.writeError(err)
	status := decode.DoneError
	if !last {
		status |= decode.DoneMore
	}
	c.put((&decode.Done{Token: decode.TokenDoneProc, Status: status}).Append(c.tok[:0]))
	return false, c.w.err
}

func intParam(ps []sqlexec.Param, i int) (int64, bool) {
	if i >= len(ps) {
		return 0, false
	}
	v, ok := ps[i].Value.(int64)
	return v, ok
}

// paramValue decodes an RPC parameter's wire bytes into a generic value
// with the project's own cell decoder.
func paramValue(p *decode.RPCParam) (any, error) {
	if p.Status&decode.ParamDefault != 0 && len(p.Value) == 0 {
		return nil, nil
	}
	var capt decode.Capture
	// Columns tells Capture the type, so text arrives as a string.
	if err := capt.Columns([]decode.Column{{Name: p.Name, Type: p.Type}}, []decode.Mode{decode.ModeValue}); err != nil {
		return nil, err
	}
	n, err := decode.DecodeCell(p.Value, &p.Type, 0, &capt)
	if err != nil {
		return nil, err
	}
	if n != len(p.Value) {
		return nil, fmt.Errorf("value has %d trailing bytes", len(p.Value)-n)
	}
	if err := capt.EndRow(); err != nil {
		return nil, err
	}
	if capt.Err != nil {
		return nil, capt.Err
	}
	if len(capt.Rows) != 1 || len(capt.Rows[0]) < 1 {
		return nil, errors.New("no value decoded")
	}
	return capt.Rows[0][0], nil
}

// ---- transaction manager requests (MS-TDS 2.2.6.9) ----

// TransMgr request types.
const (
	tmBeginXact    = 5
	tmCommitXact   = 7
	tmRollbackXact = 8
)

// runTransMgr answers BEGIN/COMMIT/ROLLBACK transaction requests with the
// ENVCHANGEs SQL Server sends (8 begin, 9 commit, 10 rollback); the sample
// database is read-only, so a transaction only changes @@TRANCOUNT.
func (c *conn) runTransMgr(payload []byte) error {
	c.srv.stats.queries.Add(1)
	hdr, err := skipAllHeaders(payload)
	if err != nil {
		return err
	}
	p := payload[hdr:]
	if len(p) < 2 {
		return errors.New("tdsserver: short transaction manager request")
	}
	sess := c.sess
	typ := uint16(p[0]) | uint16(p[1])<<8
	switch typ {
	case tmBeginXact:
		sess.TranCount++
		c.txn++
		d := c.txnDescriptor()
		c.put((&decode.EnvChange{Type: decode.EnvBeginTxn, NewBytes: d}).Append(c.tok[:0]))
	case tmCommitXact, tmRollbackXact:
		if sess.TranCount == 0 {
			c.writeError(&sqlexec.Error{Number: 3902, State: 1, Class: 16, Line: 1,
				Message: "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION."})
			c.put((&decode.Done{Token: decode.TokenDone, Status: decode.DoneError}).Append(c.tok[:0]))
			return c.w.end()
		}
		sess.TranCount = 0
		env := decode.EnvCommitTxn
		if typ == tmRollbackXact {
			env = decode.EnvRollbackTxn
		}
		c.put((&decode.EnvChange{Type: env, OldBytes: c.txnDescriptor()}).Append(c.tok[:0]))
	default:
		c.writeError(&sqlexec.Error{Number: 50000, State: 1, Class: 16, Line: 1,
			Message: fmt.Sprintf("tdsserver: transaction manager request %d is not supported", typ)})
		c.put((&decode.Done{Token: decode.TokenDone, Status: decode.DoneError}).Append(c.tok[:0]))
		return c.w.end()
	}
	c.put((&decode.Done{Token: decode.TokenDone}).Append(c.tok[:0]))
	return c.w.end()
}

func (c *conn) txnDescriptor() []byte {
	v := uint64(c.spid)<<32 | c.txn
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24), byte(v >> 32), byte(v >> 40), byte(v >> 48), byte(v >> 56)}
}

// skipAllHeaders returns the length of the ALL_HEADERS block (TDS 7.2+).
func skipAllHeaders(p []byte) (int, error) {
	if len(p) < 4 {
		return 0, errors.New("tdsserver: short ALL_HEADERS")
	}
	n := int(uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24)
	if n < 4 || n > len(p) {
		return 0, fmt.Errorf("tdsserver: ALL_HEADERS length %d outside the message", n)
	}
	return n, nil
}
