package decode

import (
	"errors"
	"strconv"
)

// ErrNeedMore reports that the bytes given do not yet hold the whole
// structure. It is not an error condition: the caller refills its buffer
// and calls again with the same start position; it is distinct from a
// malformed input (*ProtocolError) and from a value too large to hold.
var ErrNeedMore = errors.New("decode: need more bytes")

// ErrTooLarge is wrapped by a *ProtocolError when a token, a message or a
// value would need more resident bytes than the configured cap allows.
var ErrTooLarge = errors.New("decode: value or token exceeds the residency cap")

// ProtocolError is a structurally invalid TDS stream: the peer sent bytes
// that no conforming implementation sends. MS-TDS 3.2.5 requires the
// connection to be closed after one.
type ProtocolError struct {
	Token  byte   // the token being decoded, 0 if none (messages, packets)
	Where  string // e.g. "COLMETADATA column 3 TYPE_INFO", "LOGIN7", "packet header"
	Offset int64  // byte offset of the offending field, relative to what the decoder was given
	Msg    string
	Err    error // optional cause (ErrTooLarge, a UTF-16 error, ...)
}

// Error formats as "decode: protocol error in <Where> (token 0x81) at offset N: msg".
func (e *ProtocolError) Error() string {
	b := make([]byte, 0, 64+len(e.Where)+len(e.Msg))
	b = append(b, "decode: protocol error in "...)
	b = append(b, e.Where...)
	if e.Token != 0 {
		b = append(b, " (token 0x"...)
		const hex = "0123456789abcdef"
		b = append(b, hex[e.Token>>4], hex[e.Token&0xF], ')')
	}
	b = append(b, " at offset "...)
	b = strconv.AppendInt(b, e.Offset, 10)
	b = append(b, ": "...)
	b = append(b, e.Msg...)
	if e.Err != nil && e.Msg == "" {
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the cause, if any (for errors.Is(err, ErrTooLarge)).
func (e *ProtocolError) Unwrap() error { return e.Err }

// protoErr builds a *ProtocolError. It is only called on the error path,
// so the allocation never touches a per-row loop.
func protoErr(token byte, where string, off int, msg string) *ProtocolError {
	return &ProtocolError{Token: token, Where: where, Offset: int64(off), Msg: msg}
}

// tooLarge builds a *ProtocolError wrapping ErrTooLarge.
func tooLarge(token byte, where string, off int, msg string) *ProtocolError {
	return &ProtocolError{Token: token, Where: where, Offset: int64(off), Msg: msg, Err: ErrTooLarge}
}
