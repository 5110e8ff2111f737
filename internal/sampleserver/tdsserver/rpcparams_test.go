package tdsserver

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// rpcWithNText builds an sp_prepexec request as FreeTDS's ODBC driver sends
// it: @handle int OUTPUT (NULL), then ntext parameters in the RPC form.
func rpcWithNText(params, stmt []byte, nullParams bool) []byte {
	p := []byte{0x16, 0, 0, 0, 0x12, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0} // ALL_HEADERS
	p = append(p, 0xFF, 0xFF, 13, 0, 0, 0)                                              // ProcID 13, options
	p = append(p, 0, 1, decode.TypeIntN, 4, 0)                                          // @handle OUTPUT NULL
	ntext := func(v []byte, null bool) {
		p = append(p, 0, 0, decode.TypeNText, 0, 0, 0, 0, 0x09, 0x04, 0xD0, 0x00, 0x34)
		if null {
			p = append(p, 0xFF, 0xFF, 0xFF, 0xFF)
			return
		}
		n := len(v)
		p = append(p, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
		p = append(p, v...)
	}
	ntext(params, nullParams)
	ntext(stmt, false)
	return p
}

// FreeTDS's ODBC driver sends sp_prepexec with ntext parameters in the RPC
// form (LONGLEN + data); decode reads them and the server's parameter
// decoding turns them into strings.
func TestRPCTextParams(t *testing.T) {
	stmt := decode.AppendUTF16LE(nil, "SELECT 1")
	for _, null := range []bool{true, false} {
		payload := rpcWithNText(decode.AppendUTF16LE(nil, "@a int"), stmt, null)
		reqs, err := decode.DecodeRPCBatch(payload)
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != 1 || len(reqs[0].Params) != 3 {
			t.Fatalf("%+v", reqs)
		}
		v, err := paramValue(&reqs[0].Params[2])
		if err != nil || v != "SELECT 1" {
			t.Fatalf("stmt = %v, %v", v, err)
		}
		v, err = paramValue(&reqs[0].Params[1])
		if err != nil || (null && v != nil) || (!null && v != "@a int") {
			t.Fatalf("params = %v, %v (null %v)", v, err, null)
		}
	}
}

func FuzzRPCPayload(f *testing.F) {
	f.Add(rpcWithNText([]byte("a\x00"), []byte("b\x00"), false))
	f.Add(rpcWithNText(nil, []byte{}, true))
	f.Fuzz(func(t *testing.T, p []byte) {
		if reqs, err := decode.DecodeRPCBatch(p); err == nil {
			for i := range reqs {
				for j := range reqs[i].Params {
					paramValue(&reqs[i].Params[j])
				}
			}
		}
		parseFedAuthToken(p)
	})
}
