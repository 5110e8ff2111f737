package decode

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestWireRPCSpec decodes MS-TDS 4.8 and re-encodes it byte for byte.
func TestWireRPCSpec(t *testing.T) {
	payload := wireMessage(t, "4.8-rpc-request", PacketRPC)
	want := RPCRequest{TxnDescriptor: 0x0100000000000000, ProcName: "foo3",
		Params: []RPCParam{{Status: ParamDefault, Type: TypeInfo{Type: TypeIntN, Size: 2}, Value: []byte{0}}}}
	wireExact(t, payload, want, (*RPCRequest).Encode)
}

func TestWireRPCFixture(t *testing.T) {
	// sp_executesql by ProcID with an nvarchar statement and an output parameter.
	b := wireHexBytes(t, `
		16 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00 // ALL_HEADERS, autocommit
		FF FF 0A 00              // ProcIDSwitch, ProcID 10 = sp_executesql
		00 00                    // OptionFlags
		00                       // param 1: no name
		00                       // status
		E7 40 1F 09 04 D0 00 34  // nvarchar(4000), collation
		02 00 31 00              // value "1"
		02 40 00 78 00           // param 2: "@x"
		01                       // fByRefValue (OUTPUT)
		26 08                    // INTN(8)
		00                       // NULL`)
	want := RPCRequest{OutstandingRequests: 1, ProcID: ProcIDExecuteSQL, Params: []RPCParam{
		{Type: TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: wireLatin1}, Value: []byte{2, 0, '1', 0}},
		{Name: "@x", Status: ParamByRef, Type: TypeInfo{Type: TypeIntN, Size: 8}, Value: []byte{0}},
	}}
	wireExact(t, b, want, (*RPCRequest).Encode)
}

func TestWireRPCRoundTrip(t *testing.T) {
	long := strings.Repeat("x€", 3000)
	r := RPCRequest{OutstandingRequests: 1, ProcID: ProcIDExecuteSQL, Options: RPCNoMetaData, Params: []RPCParam{
		NVarCharParam("", "SELECT @p1, @p2"),
		NVarCharParam("", "@p1 bigint, @p2 nvarchar(max) OUTPUT"),
		IntParam("@p1", -9223372036854775808),
		Output(NVarCharParam("@p2", long)),
		BitParam("@b", true),
		FloatParam("@f", 1.5),
		VarBinaryParam("@v", []byte{1, 2, 3}),
		VarBinaryParam("@vm", bytes.Repeat([]byte{9}, 9000)),
		NullParam("@n", TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: wireLatin1}),
		NullParam("@nm", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen, Collation: wireLatin1}),
		NullParam("@d", TypeInfo{Type: TypeDecimalN, Size: 17, Precision: 38, Scale: 2}),
		NullParam("@u", TypeInfo{Type: TypeUDT, UDTSchema: "sys", UDTName: "geography"}),
		{Name: "@t", Status: ParamDefault, Type: TypeInfo{Type: TypeTimeN, Scale: 7}, Value: []byte{5, 1, 2, 3, 4, 5}},
	}}
	if r.Params[3].Type.Size != MaxVarLen || r.Params[0].Type.Size != 8000 {
		t.Fatal("NVarCharParam sizes")
	}
	b, err := r.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got RPCRequest
	if err := got.Decode(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	wireResplit(t, PacketRPC, b)

	// By name, and a batch of three with a NoExec separator.
	batch := []RPCRequest{
		{OutstandingRequests: 1, ProcName: "dbo.p", Params: []RPCParam{IntParam("@a", 1)}},
		{OutstandingRequests: 1, ProcID: ProcIDUnprepare, NoExec: true, Params: []RPCParam{IntParam("", 7)}},
		{OutstandingRequests: 1, ProcName: "sp_who"},
	}
	bb, err := AppendRPCBatch(nil, batch)
	if err != nil {
		t.Fatal(err)
	}
	gotBatch, err := DecodeRPCBatch(bb)
	if err != nil || !reflect.DeepEqual(gotBatch, batch) {
		t.Fatalf("batch: %v\n got %+v\nwant %+v", err, gotBatch, batch)
	}
	if err := got.Decode(bb); err == nil || !strings.Contains(err.Error(), "DecodeRPCBatch") {
		t.Fatalf("single Decode of a batch: %v", err)
	}
	// A trailing BatchFlag is ignored.
	one, _ := batch[0].Encode(nil)
	if err := got.Decode(append(one, 0xFF)); err != nil || got.ProcName != "dbo.p" {
		t.Fatalf("trailing BatchFlag: %v", err)
	}
}

func TestWireRPCReject(t *testing.T) {
	hdr := "16 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00 "
	cases := []struct{ name, hex, msg string }{
		{"no body", hdr, "past the end"},
		{"ProcID 0", hdr + "FF FF 00 00 00 00", "ProcID 0"},
		{"empty ProcName", hdr + "00 00 00 00", "empty ProcName"},
		{"ProcName too long", hdr + "20 02 00 00", "1046"},
		{"ProcName past end", hdr + "05 00 41 00", "past the end"},
		{"param TYPE_INFO impossible", hdr + "FF FF 0A 00 00 00 00 00 26 03 00", "impossible length"},
		{"param value truncated", hdr + "FF FF 0A 00 00 00 00 00 26 04 04 01 00", "past the end"},
		{"param value too long", hdr + "FF FF 0A 00 00 00 00 00 A7 02 00 09 04 D0 00 34 03 00 41 42 43", "exceeds the declared"},
		{"encrypted param", hdr + "FF FF 0A 00 00 00 00 08 26 04 00", "encrypted"},
		{"TVP param", hdr + "FF FF 0A 00 00 00 00 00 F3", "table-valued"},
		{"missing ALL_HEADERS", "FF FF 0A 00 00 00", "TotalLength"},
	}
	for _, c := range cases {
		var r RPCRequest
		err := r.Decode(wireHexBytes(t, c.hex))
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Where, "RPC") || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: %v, want RPC error with %q", c.name, err, c.msg)
		}
	}
	// Encode checks that each Value is exactly one value.
	bad := []RPCRequest{
		{ProcID: 10, Params: []RPCParam{{Type: TypeInfo{Type: TypeIntN, Size: 4}, Value: []byte{4, 1, 2}}}},
		{ProcID: 10, Params: []RPCParam{{Type: TypeInfo{Type: TypeIntN, Size: 4}, Value: []byte{0, 0}}}},
		{ProcName: ""},
		{ProcID: 10, Params: []RPCParam{{Name: strings.Repeat("n", 129), Type: TypeInfo{Type: TypeIntN, Size: 4}, Value: []byte{0}}}},
	}
	for i, r := range bad {
		if _, err := r.Encode(nil); err == nil {
			t.Errorf("bad request %d encoded", i)
		}
	}
}

func FuzzRPC(f *testing.F) {
	_, p := wireOnePacket(f, wireSpec(f, "4.8-rpc-request"))
	f.Add(p)
	_, p = wireOnePacket(f, wireSpec(f, "4.6-sqlbatch-request"))
	f.Add(p)
	// Small seeds keep the engine's minimisation fast; PLP framing comes from a
	// hand-built varbinary(max) value in 2-byte chunks.
	r := RPCRequest{ProcID: ProcIDExecuteSQL, Params: []RPCParam{NVarCharParam("", "SELECT 1"), Output(IntParam("@o", 5)),
		{Name: "@b", Type: TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, Value: AppendPLP(nil, []byte{1, 2, 3}, 2)}}}
	b, _ := r.Encode(nil)
	f.Add(b)
	b, _ = AppendRPCBatch(nil, []RPCRequest{{ProcName: "a"}, {ProcID: 12, NoExec: true}, {ProcName: "c"}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		wireAllocCheck(t, len(data), func() {
			var sb SQLBatch
			if err := sb.Decode(data); err == nil {
				var sb2 SQLBatch
				if err := sb2.Decode(sb.Encode(nil)); err != nil || !reflect.DeepEqual(sb, sb2) {
					t.Fatalf("SQLBatch round trip: %v", err)
				}
			} else if pe := (*ProtocolError)(nil); !errors.As(err, &pe) {
				t.Fatalf("untyped error %v", err)
			}
			reqs, err := DecodeRPCBatch(data)
			if err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			re, err := AppendRPCBatch(nil, reqs)
			if err != nil {
				return // e.g. a UDT parameter whose names the RPC form cannot carry back
			}
			reqs2, err := DecodeRPCBatch(re)
			if err != nil || !reflect.DeepEqual(reqs, reqs2) {
				t.Fatalf("RPC round trip: %v\n%+v\n%+v", err, reqs, reqs2)
			}
		})
	})
}
