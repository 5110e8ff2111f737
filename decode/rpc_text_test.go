package decode

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// text, ntext and image parameters travel as LONGLEN + data in an RPC
// (MS-TDS 2.2.6.6 ParamLenData; FreeTDS's ODBC driver sends every
// sp_prepexec statement as ntext), not in the ROW form with a text pointer.
func TestRPCTextParamForm(t *testing.T) {
	ti := TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE, Collation: Collation{Info: 0x00D00409, SortID: 52}}
	stmt := AppendUTF16LE(nil, "SELECT 1")
	var body []byte
	body = binary.LittleEndian.AppendUint16(body, 0xFFFF) // ProcIDSwitch
	body = binary.LittleEndian.AppendUint16(body, ProcIDPrepExec)
	body = binary.LittleEndian.AppendUint16(body, 0) // OptionFlags
	param := func(name string, value []byte) {
		body = append(body, byte(UTF16Len(name)))
		body = AppendUTF16LE(body, name)
		body = append(body, 0) // status
		body = AppendParamTypeInfo(body, &ti)
		body = append(body, value...)
	}
	param("@stmt", append(binary.LittleEndian.AppendUint32(nil, uint32(len(stmt))), stmt...)) // LONGLEN + UTF-16
	param("@none", []byte{0xFF, 0xFF, 0xFF, 0xFF})                                            // NULL
	msg := appendAllHeaders(nil, 0, 1, nil)
	msg = append(msg, body...)

	var r RPCRequest
	if err := r.Decode(msg); err != nil {
		t.Fatal(err)
	}
	if len(r.Params) != 2 {
		t.Fatalf("%d params", len(r.Params))
	}
	var c Capture
	c.Columns([]Column{{Type: ti}}, make([]Mode, 1))
	for _, p := range r.Params {
		if _, err := DecodeCell(p.Value, &p.Type, 0, &c); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		c.EndRow()
	}
	if want := [][]any{{"SELECT 1"}, {nil}}; !reflect.DeepEqual(c.Rows, want) {
		t.Fatalf("values %v, want %v", c.Rows, want)
	}
	again, err := r.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, msg) {
		t.Fatalf("re-encoded\n% x\nwant\n% x", again, msg)
	}
	// A truncated value is a protocol error naming the parameter.
	if err := (&RPCRequest{}).Decode(msg[:len(msg)-6]); err == nil {
		t.Fatal("truncated ntext parameter accepted")
	}
}
