package decode

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The token stream of a server response (MS-TDS 2.2.7): Stream decodes it
// from buffered bytes, one token (or one row) per Next call, delivering row
// cells to a CellSink and resuming exactly where it stopped when the buffer
// ran dry: a row that straddles packets is finished after the refill, not
// decoded again.

// DefaultResidencyCap is the default bound on the bytes one token, or one
// non-streamed value, may need resident: 4 MiB.
const DefaultResidencyCap = 4 << 20

// Event says what a Next call decoded.
type Event uint8

// Events.
const (
	EventNone Event = iota
	EventColMetadata
	EventRow
	EventDone
	EventError
	EventInfo
	EventEnvChange
	EventLoginAck
	EventFeatureExtAck
	EventReturnStatus
	EventReturnValue
	EventOrder
	EventTabName
	EventColInfo
	EventSessionState
	EventDataClassification
	EventFedAuthInfo
	EventSSPI
)

var eventNames = [...]string{"None", "ColMetadata", "Row", "Done", "Error", "Info", "EnvChange",
	"LoginAck", "FeatureExtAck", "ReturnStatus", "ReturnValue", "Order", "TabName", "ColInfo",
	"SessionState", "DataClassification", "FedAuthInfo", "SSPI"}

func (e Event) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return "Event(" + strconv.Itoa(int(e)) + ")"
}

// StreamOptions configure a Stream.
type StreamOptions struct {
	// ResidencyCap is the most bytes one token, or one value that is not
	// streamed, may need resident; 0 = DefaultResidencyCap. PLP values and
	// text/ntext/image data stream part by part whatever their size.
	ResidencyCap int
	// ColumnEncryption: COLUMNENCRYPTION was negotiated, so COLMETADATA
	// carries a CekTable.
	ColumnEncryption bool
	// RequestedFeatures are the FeatureExt ids the client sent in LOGIN7;
	// a FEATUREEXTACK acknowledging any other feature is a protocol error.
	RequestedFeatures []byte
	// DataClassificationRank: DATACLASSIFICATION was acknowledged with
	// version 2, whose token carries sensitivity ranks.
	DataClassificationRank bool
	// MaxValueSize bounds one streamed value (a PLP total, the running sum
	// of an unknown-length PLP value, a text/image length); 0 = MaxValueSize.
	MaxValueSize int64
	// RowBatch lets one Next call complete up to this many rows that follow
	// each other in buf (ROW and NBCROW tokens), reporting them as one
	// EventRow with their count in Stream.EventRows; 0 or 1 = one row per
	// EventRow. It saves the return to the caller's loop and the token
	// dispatch between rows. When the next row is not wholly resident,
	// Next returns the rows it completed as the event and resumes the row
	// in progress on the next call.
	RowBatch int
}

// RowBatchSize is the StreamOptions.RowBatch the engine's sessions decode
// result sets with, and the benchmarks that stand for them. Measured
// (sinks/parquet BenchmarkParquetCellPath, thread CPU, medians of 5 A/B
// pairs against one row per call): sales.order_lines 31.3 to 25.6 ns a
// row, sales.orders 60.8 to 55.0, dbo.lineitem 127.5 to 123.8; decoding
// into decode.Nop, order_lines 34 to 29. Beyond a few dozen rows the loop's
// cost is gone and cancellation only waits longer.
const RowBatchSize = 32

// Stream decodes a server's token stream. It is not safe for concurrent use.
// The exported fields hold the last decoded token of each kind; each is
// valid until the next Next call that returns the same Event (Columns until
// the next EventColMetadata).
type Stream struct {
	Columns       []Column
	Done          Done
	Message       Message
	EnvChange     EnvChange
	LoginAck      LoginAck
	FeatureExtAck FeatureExtAck
	ReturnStatus  int32
	// EventRows is how many rows the last Next call completed: for
	// EventRow 1, or up to StreamOptions.RowBatch; for an error, the rows
	// completed before it (whose EndRow returned nil); otherwise 0.
	EventRows          int
	ReturnValue        ReturnValue
	Order              Order
	TabName            TabName
	ColInfo            ColInfo
	SessionState       SessionState
	DataClassification DataClassification
	FedAuthInfo        FedAuthInfo
	SSPI               SSPI
	// Rows counts the rows decoded since NewStream or Reset.
	Rows int64

	opts  StreamOptions
	cap   int
	sink  CellSink
	meta  ColMetadata
	plan  []colPlan
	tds   []textDecoder
	modes []Mode
	bits  []byte // NBCROW null bitmap, reused
	cd    cellDecoder

	inRow  bool
	nbc    bool
	col    int   // next column of the row in progress
	rowTok byte  // ROW or NBCROW in progress
	base   int64 // stream offset of the next unconsumed byte
	err    error // sticky
}

// NewStream returns a Stream with the given options.
func NewStream(opts StreamOptions) *Stream {
	s := &Stream{opts: opts, cap: opts.ResidencyCap}
	if s.cap <= 0 {
		s.cap = DefaultResidencyCap
	}
	s.cd.maxVal = opts.MaxValueSize
	return s
}

// SetSink sets the sink that receives rows; nil discards every value (rows
// are still counted). Set it before the COLMETADATA of the result set it
// should receive; if columns are current (and no row is in progress), the
// new sink gets its Columns call now and SetSink returns its error, which
// also stops the stream until Reset.
func (s *Stream) SetSink(sink CellSink) error {
	// the old sink's lent memory is not the new sink's: withdrawn at once,
	// so that the rest of a row in progress goes to the new sink's calls
	for i := range s.plan {
		s.plan[i].slot = nil
	}
	s.sink = sink
	s.cd.setSink(sink)
	if len(s.meta.Columns) > 0 && !s.inRow {
		if err := s.makePlans(0); err != nil {
			if s.err == nil {
				s.err = err
			}
			return err
		}
	}
	return nil
}

// Reset prepares the Stream for a new message, or for reuse after an
// error: row state, offsets and the sticky error are cleared; the current
// columns stay.
func (s *Stream) Reset() {
	s.inRow, s.nbc, s.col, s.rowTok = false, false, 0, 0
	s.base, s.err, s.Rows = 0, nil, 0
	s.cd.lv = longValue{}
	for i := range s.tds {
		s.tds[i].reset()
	}
}

// Next decodes from buf (message payload bytes, packet headers removed) and
// returns how many bytes it consumed and what it decoded. If the next token,
// row or value is not fully resident it returns (n, EventNone, ErrNeedMore)
// having consumed n >= 0 bytes (cells already delivered, streamed parts
// already passed on); the caller drops buf[:n], appends more payload and
// calls again: decoding resumes where it stopped, never delivering a cell
// twice. For EventRow the row's cells have been delivered and EndRow called.
// A *ProtocolError (or a sink's error) is sticky until Reset.
func (s *Stream) Next(buf []byte) (n int, ev Event, err error) {
	s.EventRows = 0
	if s.err != nil {
		return 0, EventNone, s.err
	}
	if s.inRow {
		return s.finish(s.row(buf, 0))
	}
	if len(buf) == 0 {
		return 0, EventNone, ErrNeedMore
	}
	tok := buf[0]
	// Rows are nearly every token: tested before the switch's search, and
	// a ROW (no null bitmap) starts here rather than in startRow's frame.
	if tok == TokenRow && len(s.plan) > 0 {
		s.nbc, s.inRow, s.col, s.rowTok = false, true, 0, tok
		return s.finish(s.row(buf, 1))
	}
	if tok == TokenRow || tok == TokenNBCRow {
		return s.finish(s.startRow(buf, tok))
	}
	switch tok {
	case TokenColMetadata:
		return s.finish(s.colMetadata(buf))
	case TokenDone, TokenDoneProc, TokenDoneInProc:
		n, err = s.Done.Decode(buf[1:])
		s.Done.Token = tok
		ev = EventDone
	case TokenError, TokenInfo:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.Message.Decode(buf[1:])
			s.Message.Token = tok
		}
		ev = EventError
		if tok == TokenInfo {
			ev = EventInfo
		}
	case TokenEnvChange:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.EnvChange.Decode(buf[1:])
		}
		ev = EventEnvChange
	case TokenLoginAck:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.LoginAck.Decode(buf[1:])
		}
		ev = EventLoginAck
	case TokenFeatureExtAck:
		n, err = s.FeatureExtAck.Decode(buf[1:])
		if err == nil {
			err = s.FeatureExtAck.Check(s.opts.RequestedFeatures)
		}
		ev = EventFeatureExtAck
	case TokenReturnStatus:
		if len(buf) < 5 {
			err = ErrNeedMore
		} else {
			s.ReturnStatus = int32(binary.LittleEndian.Uint32(buf[1:]))
			n = 4
		}
		ev = EventReturnStatus
	case TokenReturnValue:
		n, err = s.ReturnValue.Decode(buf[1:])
		ev = EventReturnValue
	case TokenOrder:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.Order.Decode(buf[1:])
		}
		ev = EventOrder
	case TokenTabName:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.TabName.Decode(buf[1:])
		}
		ev = EventTabName
	case TokenColInfo:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.ColInfo.Decode(buf[1:])
		}
		ev = EventColInfo
	case TokenSessionState:
		if n, err = s.peekLen(buf, 4); err == nil {
			n, err = s.SessionState.Decode(buf[1:])
		}
		ev = EventSessionState
	case TokenDataClassification:
		s.DataClassification.WithRank = s.opts.DataClassificationRank
		n, err = s.DataClassification.Decode(buf[1:])
		ev = EventDataClassification
	case TokenFedAuthInfo:
		if n, err = s.peekLen(buf, 4); err == nil {
			n, err = s.FedAuthInfo.Decode(buf[1:])
		}
		ev = EventFedAuthInfo
	case TokenSSPI:
		if n, err = s.peekLen(buf, 2); err == nil {
			n, err = s.SSPI.Decode(buf[1:])
		}
		ev = EventSSPI
	case TokenAltMetadata, TokenAltRow, TokenOffset:
		return s.fail(s.protoErr(tok, "token stream", 0, "token 0x"+wireHex(tok)+
			" (ALTMETADATA, ALTROW or OFFSET) is not supported in TDS 7.4"))
	default:
		return s.fail(s.protoErr(tok, "token stream", 0, "unknown token 0x"+wireHex(tok)))
	}
	if err != nil {
		if err == ErrNeedMore {
			if len(buf) >= s.cap {
				return s.fail(s.tooLarge(tok, len(buf)))
			}
			return 0, EventNone, ErrNeedMore
		}
		return s.fail(s.rebaseErr(err, tok, ""))
	}
	n++ // the token byte
	if n > s.cap {
		// Self-delimiting tokens are checked against the cap whether or not
		// they happened to be resident, so the outcome never depends on how
		// the stream was split.
		return s.fail(s.tooLarge(tok, n))
	}
	s.base += int64(n)
	return n, ev, nil
}

// peekLen checks the length prefix (2 or 4 bytes) of a length-prefixed
// token against the residency cap and reports ErrNeedMore while the whole
// token is not resident. On success n is meaningless.
func (s *Stream) peekLen(buf []byte, size int) (int, error) {
	if len(buf) < 1+size {
		return 0, ErrNeedMore
	}
	var l uint64
	if size == 2 {
		l = uint64(binary.LittleEndian.Uint16(buf[1:]))
	} else {
		l = uint64(binary.LittleEndian.Uint32(buf[1:]))
	}
	if l+uint64(1+size) > uint64(s.cap) {
		// Offsets of token errors are relative to the byte after the token
		// (Next rebases them): -1 is the token byte.
		e := s.tooLarge(buf[0], int(min(l, 1<<40))+1+size)
		e.Offset = -1
		return 0, e
	}
	if uint64(len(buf)) < l+uint64(1+size) {
		return 0, ErrNeedMore
	}
	return 0, nil
}

func (s *Stream) protoErr(tok byte, where string, pos int, msg string) *ProtocolError {
	return &ProtocolError{Token: tok, Where: where, Offset: s.base + int64(pos), Msg: msg}
}

func (s *Stream) tooLarge(tok byte, n int) *ProtocolError {
	e := s.protoErr(tok, tokenName(tok), 0, "token of at least "+strconv.Itoa(n)+
		" bytes exceeds the residency cap of "+strconv.Itoa(s.cap))
	e.Err = ErrTooLarge
	return e
}

// rebaseErr moves a token decoder's error (offsets relative to the byte
// after the token) to stream offsets.
func (s *Stream) rebaseErr(err error, tok byte, where string) error {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		c := *pe
		if c.Token == 0 {
			c.Token = tok
		}
		if where != "" && c.Where == "" {
			c.Where = where
		}
		c.Offset += s.base + 1
		return &c
	}
	return s.protoErr(tok, tokenName(tok), 0, err.Error())
}

func (s *Stream) fail(err error) (int, Event, error) {
	s.err = err
	return 0, EventNone, err
}

// finish turns a row or COLMETADATA result into Next's results.
func (s *Stream) finish(n int, ev Event, err error) (int, Event, error) {
	s.base += int64(n)
	if err != nil && err != ErrNeedMore {
		s.err = err
	}
	return n, ev, err
}

// colMetadata decodes COLMETADATA and makes the column plans.
func (s *Stream) colMetadata(buf []byte) (int, Event, error) {
	n, err := s.meta.Decode(buf[1:], s.opts.ColumnEncryption)
	if err != nil {
		if err == ErrNeedMore {
			if len(buf) >= s.cap {
				return 0, EventNone, s.tooLarge(TokenColMetadata, len(buf))
			}
			return 0, EventNone, ErrNeedMore
		}
		var pe *ProtocolError
		if errors.As(err, &pe) {
			c := *pe
			c.Offset += s.base
			return 0, EventNone, &c
		}
		return 0, EventNone, err
	}
	if 1+n > s.cap {
		return 0, EventNone, s.tooLarge(TokenColMetadata, 1+n)
	}
	s.Columns = s.meta.Columns
	if err := s.makePlans(0); err != nil {
		return 0, EventNone, err
	}
	return 1 + n, EventColMetadata, nil
}

// makePlans builds the per-column plans for the current columns, asking the
// sink for its modes.
func (s *Stream) makePlans(pos int) error {
	cols := s.meta.Columns
	nc := len(cols)
	if cap(s.modes) < nc {
		s.modes = make([]Mode, nc)
		s.plan = make([]colPlan, nc)
	}
	s.modes = s.modes[:nc]
	s.plan = s.plan[:nc]
	// Text decoders are pointed to by the plans: a fresh array per result
	// set (allocation per COLMETADATA, never per row).
	s.tds = make([]textDecoder, nc)
	if nb := (nc + 7) / 8; cap(s.bits) < nb {
		s.bits = make([]byte, nb)
	} else {
		s.bits = s.bits[:nb]
	}
	for i := range s.modes {
		s.modes[i] = ModeValue
	}
	if s.sink != nil && nc > 0 {
		if err := s.sink.Columns(cols, s.modes); err != nil {
			return err
		}
	}
	for i := range cols {
		m := s.modes[i]
		if s.sink == nil || m > ModeSkip {
			m = ModeSkip
		}
		if err := makePlan(&s.plan[i], &cols[i].Type, m, &s.tds[i]); err != nil {
			return s.protoErr(TokenColMetadata, "COLMETADATA column "+strconv.Itoa(i), pos, err.Error())
		}
	}
	if ls := s.cd.ls; ls != nil && nc > 0 {
		// the plans point into a fresh array per result set: the sink
		// may still hold the last one
		slots := make([]*[]uint64, nc)
		ls.Lend(slots)
		for i := range s.plan {
			if slots[i] != nil {
				s.plan[i].slot = &slots[i]
			}
		}
	}
	return nil
}

// startRow starts a ROW or NBCROW token.
func (s *Stream) startRow(buf []byte, tok byte) (int, Event, error) {
	if len(s.plan) == 0 {
		return 0, EventNone, s.protoErr(tok, tokenName(tok), 0, "row without column metadata")
	}
	pos, ok := s.beginRow(buf, 0, tok)
	if !ok {
		return 0, EventNone, ErrNeedMore
	}
	return s.row(buf, pos)
}

// beginRow starts the ROW or NBCROW token tok at buf[pos]: it copies an
// NBCROW's null bitmap and makes the row current, returning where its
// first cell begins; false, and nothing changed, when the bitmap is not
// wholly in buf.
func (s *Stream) beginRow(buf []byte, pos int, tok byte) (int, bool) {
	pos++
	nbc := tok == TokenNBCRow
	if nbc {
		if len(buf)-pos < len(s.bits) {
			return 0, false
		}
		pos += copy(s.bits, buf[pos:])
	}
	s.inRow, s.nbc, s.col, s.rowTok = true, nbc, 0, tok
	return pos, true
}

// row decodes cells of the row in progress from buf[pos].
func (s *Stream) row(buf []byte, pos int) (int, Event, error) {
	d := &s.cd
	d.base, d.tok = s.base, s.rowTok
	if d.where != "" { // a string store costs a write barrier check per row
		d.where = ""
	}
	var err error
	if d.lv.active {
		if pos, err = d.resume(buf, pos); err != nil {
			return pos, EventNone, err
		}
		s.col++
	}
	plan := s.plan
	sink := d.sink
	bs := d.bs
	us := d.us
	bits := s.bits
	nbc := s.nbc
	maxRes := s.cap
	col := s.col
	done := 0 // rows completed by this call (RowBatch)
nextRow:
	for ; col < len(plan); col++ {
		p := &plan[col]
		if nbc && col>>3 < len(bits) && bits[col>>3]&(1<<(col&7)) != 0 {
			if p.mode != ModeSkip {
				sink.Null(col)
			}
			continue
		}
		// The commonest cases inline; an unusual value (a length the plan
		// does not allow, non-ASCII text, a value not yet resident) goes to
		// cell(), which handles everything.
		switch p.fast {
		case fastIntN:
			if pos < len(buf) {
				l := int(buf[pos])
				if end := pos + 1 + l; end <= len(buf) {
					switch {
					case l == 0:
						sink.Null(col)
						pos = end
						continue
					case l == 4 && p.lens&(1<<4) != 0:
						if v := int64(int32(binary.LittleEndian.Uint32(buf[pos+1:]))); !lendPut(p.slot, uint64(v)) {
							sink.Int(col, v)
						}
						pos = end
						continue
					case l == 8 && p.lens&(1<<8) != 0:
						if v := binary.LittleEndian.Uint64(buf[pos+1:]); !lendPut(p.slot, v) {
							sink.Int(col, int64(v))
						}
						pos = end
						continue
					}
				}
			}
		case fastText, fastBytes, fastNText:
			if pos+2 <= len(buf) {
				l := int(binary.LittleEndian.Uint16(buf[pos:]))
				end := pos + 2 + l
				if l < 0xFFFF && uint32(l) <= p.max && l+2 <= maxRes && end <= len(buf) && (!p.utf16 || l&1 == 0) {
					v := buf[pos+2 : end]
					ascii := false
					if p.fast == fastText {
						if l <= 8 && pos+10 <= len(buf) {
							// A short value: one load, masked to its
							// length, instead of a loop whose exit
							// mispredicts as lengths vary.
							w := binary.LittleEndian.Uint64(buf[pos+2:])
							ascii = w&(^uint64(0)>>((8-l)*8))&0x8080808080808080 == 0
						} else {
							ascii = isASCII(v)
						}
					}
					switch {
					case p.fast == fastBytes || ascii:
						// No transcoding: the bytes are the value.
						if bs != nil {
							bs.Bytes(col, v)
							break
						}
						sink.BeginValue(col, int64(l))
						if l > 0 {
							if dst := sink.Reserve(col, l); len(dst) >= l {
								copy(dst, v)
								sink.Commit(col, l)
							} else {
								sink.Write(col, v)
							}
						}
						sink.EndValue(col)
					case p.fast == fastNText && us != nil:
						us.UTF16(col, v)
					default:
						d.whole(col, p.td, v)
					}
					pos = end
					continue
				}
			}
		case fastInt4:
			if pos+4 <= len(buf) {
				if v := int64(int32(binary.LittleEndian.Uint32(buf[pos : pos+4]))); !lendPut(p.slot, uint64(v)) {
					sink.Int(col, v)
				}
				pos += 4
				continue
			}
		case fastInt8:
			if pos+8 <= len(buf) {
				if v := binary.LittleEndian.Uint64(buf[pos : pos+8]); !lendPut(p.slot, v) {
					sink.Int(col, int64(v))
				}
				pos += 8
				continue
			}
		case fastDecimal:
			// One 8-byte load masked to the magnitude's length (the
			// 4-byte form when p.size is 5), checked against the
			// precision as decimalFromWire does; anything else, NULL
			// aside, goes to cell(), errors included. A lent column gets
			// the signed value when it fits an int64 (precision up to 18
			// always does).
			if pos+10 <= len(buf) {
				l := int(buf[pos])
				if l == int(p.size) {
					sign := buf[pos+1]
					lo := binary.LittleEndian.Uint64(buf[pos+2:pos+10]) & p.dmask
					if sign <= 1 && lo <= p.dmax {
						x := int64(lo)
						if sign == 0 {
							x = -x
						}
						if lo > math.MaxInt64 || !lendPut(p.slot, uint64(x)) {
							sink.Decimal(col, Decimal{Lo: lo, Neg: sign == 0 && lo != 0, Scale: p.scale, Precision: p.prec})
						}
						pos += 1 + l
						continue
					}
				} else if l == 0 {
					sink.Null(col)
					pos++
					continue
				}
			}
		case fastDT8:
			// legacyDateTime's 8-byte case: days since 1900-01-01 and
			// 1/300 s ticks, checked the same way
			if pos+8 <= len(buf) {
				days := int32(binary.LittleEndian.Uint32(buf[pos : pos+4]))
				t := int64(binary.LittleEndian.Uint32(buf[pos+4 : pos+8]))
				if days >= cellMinDateTime && days <= cellMaxDateTime && t < 300*86400 {
					sink.DateTime(col, DateTime{Days: days + cellEpoch1900, Ticks: (t*100000 + 1) / 3})
					pos += 8
					continue
				}
			}
		case fastDate:
			if pos+4 <= len(buf) {
				switch buf[pos] {
				case 3:
					if days := int32(buf[pos+1]) | int32(buf[pos+2])<<8 | int32(buf[pos+3])<<16; days <= cellMaxDate {
						sink.Date(col, days)
						pos += 4
						continue
					}
				case 0:
					sink.Null(col)
					pos++
					continue
				}
			}
		case fastByteLen:
			if pos < len(buf) {
				l := int(buf[pos])
				if end := pos + 1 + l; end <= len(buf) {
					if l == 0 {
						sink.Null(col)
						pos = end
						continue
					}
					// value() checks before it calls the sink, so on an
					// impossible value cell() below reports the error.
					if l <= 31 && p.lens&(1<<l) != 0 && d.value(p, col, buf[pos+1:end]) == "" {
						pos = end
						continue
					}
				}
			}
		case fastFixed:
			if end := pos + int(p.size); end <= len(buf) && d.value(p, col, buf[pos:end]) == "" {
				pos = end
				continue
			}
		case fastSkip1:
			if pos < len(buf) {
				if end := pos + 1 + int(buf[pos]); end <= len(buf) && (buf[pos] == 0 || p.lens&(1<<(buf[pos]&31)) != 0 && buf[pos] < 32) {
					pos = end
					continue
				}
			}
		case fastSkip2:
			if pos+2 <= len(buf) {
				l := int(binary.LittleEndian.Uint16(buf[pos:]))
				if l == 0xFFFF {
					pos += 2
					continue
				}
				if end := pos + 2 + l; uint32(l) <= p.max && l+2 <= maxRes && end <= len(buf) && (!p.utf16 || l&1 == 0) {
					pos = end
					continue
				}
			}
		}
		if pos, err = d.cell(buf, pos, p, col, maxRes); err != nil {
			s.col = col
			s.EventRows = done
			if err == ErrNeedMore && done > 0 {
				// the rows completed so far are the event; the row in
				// progress resumes on the next call
				return pos, EventRow, nil
			}
			return pos, EventNone, err
		}
	}
	s.col = col
	s.inRow = false
	s.Rows++
	if s.sink != nil {
		if err := s.sink.EndRow(); err != nil {
			s.EventRows = done
			return pos, EventNone, err
		}
	}
	done++
	// another row follows: decode it here, as Next would
	if done < s.opts.RowBatch && pos < len(buf) {
		if tok := buf[pos]; tok == TokenRow || tok == TokenNBCRow {
			if next, ok := s.beginRow(buf, pos, tok); ok {
				pos, nbc, d.tok, col = next, s.nbc, tok, 0
				goto nextRow
			}
		}
	}
	s.EventRows = done
	return pos, EventRow, nil
}

func tokenName(tok byte) string {
	switch tok {
	case TokenColMetadata:
		return "COLMETADATA"
	case 0xD1:
		return "ROW"
	case 0xD2:
		return "NBCROW"
	case 0xFD:
		return "DONE"
	case 0xFE:
		return "DONEPROC"
	case 0xFF:
		return "DONEINPROC"
	case 0xAA:
		return "ERROR"
	case 0xAB:
		return "INFO"
	case TokenEnvChange:
		return "ENVCHANGE"
	case TokenLoginAck:
		return "LOGINACK"
	case TokenFeatureExtAck:
		return "FEATUREEXTACK"
	case TokenReturnStatus:
		return "RETURNSTATUS"
	case TokenReturnValue:
		return "RETURNVALUE"
	case TokenOrder:
		return "ORDER"
	case TokenTabName:
		return "TABNAME"
	case TokenColInfo:
		return "COLINFO"
	case TokenSessionState:
		return "SESSIONSTATE"
	case TokenDataClassification:
		return "DATACLASSIFICATION"
	case TokenFedAuthInfo:
		return "FEDAUTHINFO"
	case TokenSSPI:
		return "SSPI"
	}
	return "token stream"
}
