package decode

import (
	"encoding/binary"
	"strconv"
)

// RPC requests (MS-TDS 2.2.6.6).

// Well-known procedure ids sent with ProcIDSwitch (0xFFFF) instead of a name.
const (
	ProcIDCursor          uint16 = 1
	ProcIDCursorOpen      uint16 = 2
	ProcIDCursorPrepare   uint16 = 3
	ProcIDCursorExecute   uint16 = 4
	ProcIDCursorPrepExec  uint16 = 5
	ProcIDCursorUnprepare uint16 = 6
	ProcIDCursorFetch     uint16 = 7
	ProcIDCursorOption    uint16 = 8
	ProcIDCursorClose     uint16 = 9
	ProcIDExecuteSQL      uint16 = 10
	ProcIDPrepare         uint16 = 11
	ProcIDExecute         uint16 = 12
	ProcIDPrepExec        uint16 = 13
	ProcIDPrepExecRPC     uint16 = 14
	ProcIDUnprepare       uint16 = 15
)

// RPC option flags (OptionFlags, least significant bit order).
const (
	RPCWithRecompile uint16 = 0x01
	RPCNoMetaData    uint16 = 0x02
	RPCReuseMetaData uint16 = 0x04
)

// RPC parameter status flags (StatusFlags).
const (
	ParamByRef     byte = 0x01 // OUTPUT parameter
	ParamDefault   byte = 0x02 // use the parameter's default value
	ParamEncrypted byte = 0x08 // Always Encrypted (not supported here)
)

// RPC batch separators (2.2.6.6, TDS 7.2+).
const (
	rpcBatchFlag  byte = 0xFF
	rpcNoExecFlag byte = 0xFE
)

// maxProcNameChars is the ProcName limit (1046 bytes).
const maxProcNameChars = 1046 / 2

// RPCRequest is one RPC (RPCReqBatch) with the message's ALL_HEADERS.
type RPCRequest struct {
	TxnDescriptor       uint64
	OutstandingRequests uint32
	OtherHeaders        []StreamHeader
	// ProcName is used when ProcID is 0; otherwise the request names the
	// procedure by id (ProcIDSwitch).
	ProcID   uint16
	ProcName string
	Options  uint16
	Params   []RPCParam
	// NoExec reports that the request was followed by a NoExecFlag (0xFE)
	// separator instead of a BatchFlag (DecodeRPCBatch only).
	NoExec bool
}

// RPCParam is one parameter: name (with its '@', or empty for positional),
// status flags, TYPE_INFO (RPC form) and the value's complete wire bytes
// in their ROW form (length prefix and PLP framing included, as
// ValueWireLen measures them), so DecodeCell reads any parameter.
//
// text, ntext and image differ: in an RPC their value is LONGLEN + data,
// 0xFFFFFFFF for NULL, with no text pointer (MS-TDS 2.2.6.6, ParamLenData),
// while a ROW carries a text pointer and timestamp first. Decode converts
// such a value to the ROW form (a zero text pointer and timestamp), and
// Encode converts it back, so Value always has the ROW form.
type RPCParam struct {
	Name   string
	Status byte
	Type   TypeInfo
	Value  []byte
}

// Decode parses an RPC request message holding exactly one RPC (a trailing
// BatchFlag is ignored, as the spec requires). Use DecodeRPCBatch for
// messages that batch several RPCs. Values are copied.
func (r *RPCRequest) Decode(payload []byte) error {
	_, err := decodeRPC(payload, r, true)
	return err
}

// DecodeRPCBatch parses an RPC request message that may hold several RPCs
// separated by BatchFlag (0xFF) or NoExecFlag (0xFE). All share the
// message's ALL_HEADERS.
func DecodeRPCBatch(payload []byte) ([]RPCRequest, error) {
	var first RPCRequest
	return decodeRPC(payload, &first, false)
}

func decodeRPC(payload []byte, first *RPCRequest, single bool) ([]RPCRequest, error) {
	const where = "RPC"
	*first = RPCRequest{}
	n, err := decodeAllHeaders(payload, where, &first.TxnDescriptor, &first.OutstandingRequests, &first.OtherHeaders)
	if err != nil {
		return nil, err
	}
	var out []RPCRequest
	cur := first
	rd := msgReader{b: payload, off: n, where: where, proto: true}
	for {
		if err := decodeRPCBody(&rd, cur); err != nil {
			return nil, err
		}
		if !single {
			out = append(out, *cur)
		}
		if rd.rest() == 0 {
			return out, nil
		}
		sep := rd.u8() // decodeRPCBody stops only at a separator
		if rd.rest() == 0 {
			return out, nil // a trailing BatchFlag MUST be ignored
		}
		if single {
			return nil, protoErr(0, where, rd.off-1, "message holds more than one RPC; use DecodeRPCBatch")
		}
		if sep == rpcNoExecFlag {
			out[len(out)-1].NoExec = true
		}
		next := RPCRequest{TxnDescriptor: first.TxnDescriptor, OutstandingRequests: first.OutstandingRequests, OtherHeaders: first.OtherHeaders}
		cur = &next
	}
}

// decodeRPCBody parses NameLenProcID, OptionFlags and the parameters, up to
// the end of the payload or a batch separator (not consumed).
func decodeRPCBody(rd *msgReader, r *RPCRequest) error {
	nl := rd.u16()
	if nl == 0xFFFF {
		r.ProcID = rd.u16()
		if rd.err == nil && r.ProcID == 0 {
			rd.fail(rd.off-2, "ProcID 0")
		}
	} else {
		if int(nl) > maxProcNameChars {
			rd.fail(rd.off-2, "ProcName of "+strconv.Itoa(int(nl))+" characters exceeds 1046 bytes")
		}
		if nl == 0 && rd.err == nil {
			rd.fail(rd.off-2, "empty ProcName")
		}
		r.ProcName = rd.utf16(2 * int(nl))
	}
	r.Options = rd.u16()
	if rd.err != nil {
		return rd.err
	}
	for rd.rest() > 0 {
		c := rd.b[rd.off]
		if c == rpcBatchFlag || c == rpcNoExecFlag {
			return nil // next RPC; parameter names are at most 128 characters
		}
		var p RPCParam
		p.Name = rd.bvarchar()
		p.Status = rd.u8()
		if rd.err != nil {
			return rd.err
		}
		if p.Status&ParamEncrypted != 0 {
			return protoErr(0, "RPC parameter "+strconv.Itoa(len(r.Params)), rd.off-1, "encrypted parameters (Always Encrypted) are not supported")
		}
		tn, err := DecodeParamTypeInfo(rd.b[rd.off:], &p.Type)
		if err != nil {
			return rpcParamErr(err, len(r.Params), rd.off, "TYPE_INFO")
		}
		rd.off += tn
		if isLongLenText(p.Type.Type) {
			v, n, err := rpcTextToRow(rd.b[rd.off:])
			if err != nil {
				return rpcParamErr(err, len(r.Params), rd.off, "value")
			}
			rd.off += n
			p.Value = v
			r.Params = append(r.Params, p)
			continue
		}
		vn, err := valueLen(rd.b[rd.off:], &p.Type)
		if err != nil {
			return rpcParamErr(err, len(r.Params), rd.off, "value")
		}
		p.Value = rd.copyBytes(vn)
		r.Params = append(r.Params, p)
	}
	return nil
}

// rpcParamErr places a TYPE_INFO or value error of parameter i.
func rpcParamErr(err error, i, off int, what string) error {
	where := "RPC parameter " + strconv.Itoa(i) + " " + what
	if pe, ok := err.(*ProtocolError); ok {
		return &ProtocolError{Where: where, Offset: int64(off) + pe.Offset, Msg: pe.Msg, Err: pe.Err}
	}
	// ErrNeedMore inside a complete message: the parameter is truncated.
	return protoErr(0, where, off, "parameter runs past the end of the message")
}

// Encode appends the RPC request payload. Each parameter's Value must be
// exactly one value of its type (checked with ValueWireLen).
func (r *RPCRequest) Encode(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = appendAllHeaders(dst, r.TxnDescriptor, r.OutstandingRequests, r.OtherHeaders)
	dst, err := r.appendBody(dst)
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// AppendRPCBatch appends one message holding several RPCs separated by
// BatchFlag (or NoExecFlag when an RPC's NoExec is set); the first RPC's
// ALL_HEADERS fields are used.
func AppendRPCBatch(dst []byte, reqs []RPCRequest) ([]byte, error) {
	if len(reqs) == 0 {
		return dst, protoErr(0, "RPC", 0, "no RPC to encode")
	}
	start := len(dst)
	dst = appendAllHeaders(dst, reqs[0].TxnDescriptor, reqs[0].OutstandingRequests, reqs[0].OtherHeaders)
	for i := range reqs {
		if i > 0 {
			if reqs[i-1].NoExec {
				dst = append(dst, rpcNoExecFlag)
			} else {
				dst = append(dst, rpcBatchFlag)
			}
		}
		var err error
		if dst, err = reqs[i].appendBody(dst); err != nil {
			return dst[:start], err
		}
	}
	return dst, nil
}

func (r *RPCRequest) appendBody(dst []byte) ([]byte, error) {
	le := binary.LittleEndian
	if r.ProcID != 0 {
		dst = le.AppendUint16(dst, 0xFFFF)
		dst = le.AppendUint16(dst, r.ProcID)
	} else {
		n := UTF16Len(r.ProcName)
		if n == 0 || n > maxProcNameChars {
			return dst, protoErr(0, "RPC", 0, "ProcName must have 1.."+strconv.Itoa(maxProcNameChars)+" characters")
		}
		dst = le.AppendUint16(dst, uint16(n))
		dst = AppendUTF16LE(dst, r.ProcName)
	}
	dst = le.AppendUint16(dst, r.Options)
	for i := range r.Params {
		p := &r.Params[i]
		if UTF16Len(p.Name) > 128 {
			return dst, protoErr(0, "RPC parameter "+strconv.Itoa(i), 0, "name longer than 128 characters")
		}
		if p.Status&ParamEncrypted != 0 {
			return dst, protoErr(0, "RPC parameter "+strconv.Itoa(i), 0, "encrypted parameters are not supported")
		}
		n, err := valueLen(p.Value, &p.Type)
		if err != nil || n != len(p.Value) {
			msg := "Value is not exactly one value of its type"
			if err != nil && err != ErrNeedMore {
				msg += ": " + err.Error()
			}
			return dst, protoErr(0, "RPC parameter "+strconv.Itoa(i), 0, msg)
		}
		dst = appendBVarChar(dst, p.Name)
		dst = append(dst, p.Status)
		dst = AppendParamTypeInfo(dst, &p.Type)
		if isLongLenText(p.Type.Type) {
			dst = appendRPCText(dst, p.Value)
			continue
		}
		dst = append(dst, p.Value...)
	}
	return dst, nil
}

// DefaultParamCollation is the collation the parameter constructors use for
// character types: LCID 0x0409, SQL_Latin1_General_CP1_CI_AS (sort id 52),
// as on the wire in spec example 4.4 (09 04 D0 00 34).
var DefaultParamCollation = Collation{Info: 0x00D00409, SortID: 0x34}

// NVarCharParam returns an nvarchar parameter: nvarchar(4000) when s fits,
// nvarchar(max) (PLP, 8000-byte chunks) otherwise.
func NVarCharParam(name, s string) RPCParam {
	n := 2 * UTF16Len(s)
	p := RPCParam{Name: name, Type: TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: DefaultParamCollation}}
	if n <= 8000 {
		p.Value = AppendUShortUTF16(make([]byte, 0, 2+n), s)
		return p
	}
	p.Type.Size = MaxVarLen
	p.Value = AppendPLPUTF16(make([]byte, 0, n+16+4*(n/8000+1)), s, 8000)
	return p
}

// IntParam returns a bigint parameter (INTN of size 8).
func IntParam(name string, v int64) RPCParam {
	return RPCParam{Name: name, Type: TypeInfo{Type: TypeIntN, Size: 8}, Value: AppendIntN(nil, 8, v)}
}

// BitParam returns a bit parameter (BITN).
func BitParam(name string, v bool) RPCParam {
	return RPCParam{Name: name, Type: TypeInfo{Type: TypeBitN, Size: 1}, Value: AppendBitN(nil, v)}
}

// FloatParam returns a float parameter (FLTN of size 8).
func FloatParam(name string, v float64) RPCParam {
	return RPCParam{Name: name, Type: TypeInfo{Type: TypeFltN, Size: 8}, Value: AppendFltN(nil, 8, v)}
}

// VarBinaryParam returns a varbinary(8000) parameter, or varbinary(max)
// when b is longer than 8000 bytes.
func VarBinaryParam(name string, b []byte) RPCParam {
	p := RPCParam{Name: name, Type: TypeInfo{Type: TypeBigVarBinary, Size: 8000}}
	if len(b) <= 8000 {
		p.Value = AppendUShortBytes(make([]byte, 0, 2+len(b)), b)
		return p
	}
	p.Type.Size = MaxVarLen
	p.Value = AppendPLP(nil, b, 8000)
	return p
}

// NullParam returns a NULL parameter of type ti.
func NullParam(name string, ti TypeInfo) RPCParam {
	return RPCParam{Name: name, Type: ti, Value: appendNullValue(nil, &ti)}
}

// Param returns a parameter of type ti holding v, one of the generic value
// types (see AppendValue), or nil for NULL.
func Param(name string, ti TypeInfo, v any) (RPCParam, error) {
	val, err := AppendValue(nil, &ti, v)
	if err != nil {
		return RPCParam{}, err
	}
	return RPCParam{Name: name, Type: ti, Value: val}, nil
}

// Output marks p as an OUTPUT parameter (fByRefValue) and returns it.
func Output(p RPCParam) RPCParam {
	p.Status |= ParamByRef
	return p
}

// appendNullValue appends the NULL encoding of type ti.
func appendNullValue(dst []byte, ti *TypeInfo) []byte {
	switch ti.Type {
	case TypeBigVarBinary, TypeBigBinary, TypeBigVarChar, TypeBigChar, TypeNVarChar, TypeNChar:
		if ti.Size == MaxVarLen {
			return binary.LittleEndian.AppendUint64(dst, PLPNull)
		}
		return append(dst, 0xFF, 0xFF)
	case TypeVector:
		return append(dst, 0xFF, 0xFF)
	case TypeXML, TypeUDT, TypeJSON:
		return binary.LittleEndian.AppendUint64(dst, PLPNull)
	case TypeVariant:
		return append(dst, 0, 0, 0, 0)
	case TypeText, TypeNText, TypeImage:
		return append(dst, 0)
	}
	if tiFixedLen(ti.Type) > 0 {
		return dst // fixed types have no NULL; callers must use the N types
	}
	return append(dst, 0)
}

func isLongLenText(t byte) bool { return t == TypeText || t == TypeNText || t == TypeImage }

// textPtrLen is the length of the dummy text pointer of a converted value.
const textPtrLen = 16

// rpcTextToRow reads a text/ntext/image parameter value in its RPC form
// (LONGLEN + data; 0xFFFFFFFF is NULL) from src and returns it in the ROW
// form (text pointer length, text pointer, 8-byte timestamp, LONGLEN,
// data; NULL is a zero text pointer length) and the bytes read.
func rpcTextToRow(src []byte) ([]byte, int, error) {
	if len(src) < 4 {
		return nil, 0, ErrNeedMore
	}
	n := binary.LittleEndian.Uint32(src)
	if n == 0xFFFFFFFF {
		return []byte{0}, 4, nil
	}
	if n > MaxValueSize {
		return nil, 0, protoErr(0, "", 0, "text value length "+strconv.FormatUint(uint64(n), 10)+" exceeds the value size limit")
	}
	if uint64(len(src)-4) < uint64(n) {
		return nil, 0, ErrNeedMore
	}
	v := make([]byte, 0, 1+textPtrLen+8+4+int(n))
	v = append(v, textPtrLen)
	v = append(v, make([]byte, textPtrLen+8)...)
	v = binary.LittleEndian.AppendUint32(v, n)
	v = append(v, src[4:4+n]...)
	return v, 4 + int(n), nil
}

// appendRPCText appends a text/ntext/image value given in its ROW form
// (checked by the caller with valueLen) in the RPC form.
func appendRPCText(dst, row []byte) []byte {
	if len(row) == 0 || row[0] == 0 {
		return binary.LittleEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	data := row[1+int(row[0])+8:] // text pointer and timestamp dropped
	return append(dst, data...)   // LONGLEN + data, as the RPC form wants
}
