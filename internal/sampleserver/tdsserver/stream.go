package tdsserver

import (
	"encoding/binary"

	"github.com/tdsextract/tdsextract/decode"
)

// rowSource is what sqlexec's RowSource offers: AppendRows appends up to max
// encoded ROW (or NBCROW) tokens to dst and reports how many it appended and
// whether the source is exhausted.
type rowSource interface {
	AppendRows(dst []byte, max int, nbc bool) (out []byte, n int, done bool)
}

// outcome of streaming one result set.
type outcome uint8

const (
	streamed  outcome = iota // all rows sent
	attention                // stopped by ATTENTION: send DONE(ATTN), skip the rest
	ended                    // a fault ended the message (already written with EOM)
)

// blockTarget is the payload size one AppendRows call aims at.
const blockTarget = 64 << 10

// Token bytes of the injected faults.
const malformedToken = 0x5A // not a token id of MS-TDS 2.2.7

// streamRows writes the rows of one result set. f is nil when no fault
// applies. It returns the number of rows sent.
func (c *conn) streamRows(cols []decode.Column, rows rowSource, f *Faults) (int64, outcome, error) {
	if rows == nil {
		return 0, streamed, nil
	}
	nbc := c.useNBC(cols)
	var sent int64
	per := 64 // rows per block; adapted to the row width as we go
	stallDone := false
	for {
		limit := per
		if f != nil {
			event := nextRowEvent(f, sent, stallDone)
			if event == sent && event >= 0 {
				// A row fault fires now, after `sent` rows.
				switch {
				case f.CloseAfterRows > 0 && sent == f.CloseAfterRows:
					c.w.flushPending()
					c.closeTransport()
					return sent, ended, errFaultClose
				case f.MalformedAtRow > 0 && sent == f.MalformedAtRow-1:
					c.w.write([]byte{malformedToken, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01, 0x02, 0x03})
					return sent, ended, c.w.end()
				case f.HostileLengthAtRow > 0 && sent == f.HostileLengthAtRow-1:
					c.w.write(hostileRow(cols))
					return sent, ended, c.w.end()
				default: // the stall
					stallDone = true
					if err := c.w.flushPending(); err != nil {
						return sent, streamed, err
					}
					if !c.stall(f.Stall) {
						return sent, streamed, errFaultClose
					}
					if c.attentionPending() {
						return sent, attention, nil
					}
					continue
				}
			}
			if event > sent && int64(limit) > event-sent {
				limit = int(event - sent)
			}
		}
		out, n, done := rows.AppendRows(c.rowBuf[:0], limit, nbc)
		c.rowBuf = out[:0]
		if n > 0 {
			c.w.write(out)
			sent += int64(n)
			c.srv.stats.rowsSent.Add(int64(n))
			if bpr := len(out) / n; bpr > 0 {
				per = min(max(blockTarget/bpr, 1), 1<<16)
			}
		}
		if c.w.err != nil {
			return sent, streamed, c.w.err
		}
		if c.attentionPending() {
			return sent, attention, nil
		}
		if done {
			return sent, streamed, nil
		}
	}
}

// nextRowEvent returns the smallest row count >= sent at which a row fault
// fires, or -1.
func nextRowEvent(f *Faults, sent int64, stallDone bool) int64 {
	e := int64(-1)
	consider := func(at int64) {
		if at >= sent && (e < 0 || at < e) {
			e = at
		}
	}
	if f.CloseAfterRows > 0 {
		consider(f.CloseAfterRows)
	}
	if f.StallAfterRows > 0 && !stallDone {
		consider(f.StallAfterRows)
	}
	if f.MalformedAtRow > 0 {
		consider(f.MalformedAtRow - 1)
	}
	if f.HostileLengthAtRow > 0 {
		consider(f.HostileLengthAtRow - 1)
	}
	return e
}

// hostileRow is an NBCROW whose first PLP column announces 2^62 bytes with
// a first chunk of 2^32-16 bytes, or, without PLP columns, a COLMETADATA
// announcing 65534 columns. Either way the message ends a few bytes later:
// a client must refuse the length before allocating for it.
func hostileRow(cols []decode.Column) []byte {
	plp := -1
	for i := range cols {
		if cols[i].Type.IsPLP() {
			plp = i
			break
		}
	}
	if plp < 0 {
		b := []byte{decode.TokenColMetadata, 0xFE, 0xFF}
		// The start of a first column: UserType, Flags, INTN(4).
		b = append(b, 0, 0, 0, 0, 0x01, 0x00, decode.TypeIntN, 4, 1, 'c', 0)
		return b
	}
	b := []byte{decode.TokenNBCRow}
	bitmap := make([]byte, (len(cols)+7)/8)
	for i := range bitmap {
		bitmap[i] = 0xFF
	}
	bitmap[plp/8] &^= 1 << (plp % 8)
	b = append(b, bitmap...)
	b = binary.LittleEndian.AppendUint64(b, 1<<62)
	b = binary.LittleEndian.AppendUint32(b, 0xFFFFFFF0)
	for range 16 {
		b = append(b, 'A', 0)
	}
	return b
}

// useNBC chooses NBCROW (TDS 7.3+) for wide results with nullable columns,
// as SQL Server does when the null bitmap pays off; narrow results get ROW,
// so clients see both.
func (c *conn) useNBC(cols []decode.Column) bool {
	if c.tdsVersion < tds73A || len(cols) < 8 {
		return false
	}
	for i := range cols {
		if cols[i].Nullable() {
			return true
		}
	}
	return false
}
