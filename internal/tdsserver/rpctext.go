package tdsserver

import (
	"encoding/binary"
	"errors"

	"github.com/tdsextract/tdsextract/decode"
)

// RPC parameters of type text, ntext and image carry their value as
// LONGLEN + data, 0xFFFFFFFF for NULL (MS-TDS 2.2.6.6 ParamLenData), with no
// text pointer, unlike the same types in a ROW (2.2.7.19). FreeTDS's ODBC
// driver sends every sp_prepexec statement as ntext. decode's RPC parser
// reads them in the ROW form; until it accepts the RPC form, the server
// rewrites such values into the ROW form (a dummy 16-byte text pointer and
// timestamp) and retries. textParamData accepts both forms, so the server
// keeps working when decode switches.

var errRPCShape = errors.New("tdsserver: malformed RPC request")

func isTextType(t byte) bool {
	return t == decode.TypeText || t == decode.TypeNText || t == decode.TypeImage
}

// rpcTextToRowForm rewrites text/ntext/image parameter values of an RPC
// request message from the RPC form to the ROW form. changed is false when
// there was nothing to rewrite.
func rpcTextToRowForm(p []byte) (out []byte, changed bool, err error) {
	hdr, err := skipAllHeaders(p)
	if err != nil {
		return nil, false, err
	}
	out = append(make([]byte, 0, len(p)+64), p[:hdr]...)
	i := hdr
	for i < len(p) {
		// ProcName or ProcIDSwitch + ProcID, then OptionFlags.
		if i+2 > len(p) {
			return nil, false, errRPCShape
		}
		nl := int(binary.LittleEndian.Uint16(p[i:]))
		j := i + 2
		if nl == 0xFFFF {
			j += 2
		} else {
			j += 2 * nl
		}
		j += 2
		if j > len(p) {
			return nil, false, errRPCShape
		}
		out = append(out, p[i:j]...)
		i = j
		for i < len(p) && p[i] != 0xFF && p[i] != 0xFE {
			start := i
			i += 1 + 2*int(p[i]) // B_VARCHAR name
			i++                  // status
			if i > len(p) {
				return nil, false, errRPCShape
			}
			var ti decode.TypeInfo
			tn, err := decode.DecodeParamTypeInfo(p[i:], &ti)
			if err != nil {
				return nil, false, err
			}
			i += tn
			out = append(out, p[start:i]...)
			if isTextType(ti.Type) {
				if i+4 > len(p) {
					return nil, false, errRPCShape
				}
				n := binary.LittleEndian.Uint32(p[i:])
				if n == 0xFFFFFFFF {
					out = append(out, 0) // NULL: empty text pointer
					i += 4
				} else {
					if uint64(i)+4+uint64(n) > uint64(len(p)) {
						return nil, false, errRPCShape
					}
					out = append(out, 16)
					out = append(out, make([]byte, 16+8)...)
					out = append(out, p[i:i+4+int(n)]...)
					i += 4 + int(n)
				}
				changed = true
				continue
			}
			vn, err := decode.DecodeCell(p[i:], &ti, 0, nil)
			if err != nil {
				return nil, false, err
			}
			out = append(out, p[i:i+vn]...)
			i += vn
		}
		if i < len(p) {
			out = append(out, p[i]) // batch separator
			i++
		}
	}
	return out, changed, nil
}

// textParamData returns the data of a text/ntext/image parameter value in
// either form, and whether it is NULL.
func textParamData(v []byte) (data []byte, null bool, err error) {
	le := binary.LittleEndian
	if len(v) >= 4 {
		n := le.Uint32(v)
		if n == 0xFFFFFFFF && len(v) == 4 {
			return nil, true, nil
		}
		if uint64(n)+4 == uint64(len(v)) {
			return v[4:], false, nil
		}
	}
	if len(v) == 1 && v[0] == 0 {
		return nil, true, nil
	}
	if len(v) >= 1 {
		h := 1 + int(v[0]) + 8
		if len(v) >= h+4 && uint64(le.Uint32(v[h:]))+uint64(h+4) == uint64(len(v)) {
			return v[h+4:], false, nil
		}
	}
	return nil, false, errors.New("malformed text value")
}

// textParamValue decodes a text/ntext/image parameter through the (max)
// type of the same kind, so code pages and UTF-16 are handled by decode.
func textParamValue(p *decode.RPCParam) (any, error) {
	data, null, err := textParamData(p.Value)
	if err != nil || null {
		return nil, err
	}
	ti := decode.TypeInfo{Size: decode.MaxVarLen, Collation: p.Type.Collation}
	switch p.Type.Type {
	case decode.TypeText:
		ti.Type = decode.TypeBigVarChar
	case decode.TypeNText:
		ti.Type = decode.TypeNVarChar
	default:
		ti.Type = decode.TypeBigVarBinary
	}
	plp := binary.LittleEndian.AppendUint64(nil, uint64(len(data)))
	if len(data) > 0 {
		plp = binary.LittleEndian.AppendUint32(plp, uint32(len(data)))
		plp = append(plp, data...)
	}
	plp = append(plp, 0, 0, 0, 0)
	q := decode.RPCParam{Name: p.Name, Type: ti, Value: plp}
	return paramValue(&q)
}
