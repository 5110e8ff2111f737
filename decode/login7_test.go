package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestWireLogin7Spec decodes MS-TDS 4.2 and re-encodes it byte for byte.
func TestWireLogin7Spec(t *testing.T) {
	payload := wireMessage(t, "4.2-login7-request", PacketLogin7)
	want := Login7{
		TDSVersion: TDSVersion72, PacketSize: 4096, ClientProgVer: 0x07000000, ClientPID: 0x100,
		OptionFlags1: 0xE0, OptionFlags2: 0x03, ClientLCID: 0x409,
		HostName: "skostov1", UserName: "sa", AppName: "OSQL-32", CltIntName: "ODBC",
		ClientID: [6]byte{0x00, 0x50, 0x8B, 0xE2, 0xB7, 0x8F},
	}
	wireExact(t, payload, want, (*Login7).Encode)
}

func TestWireLogin7Password(t *testing.T) {
	// 2.2.6.4: swap nibbles then XOR 0xA5; "sa" = 73 00 61 00 -> 92 A5 B3 A5.
	b := []byte{0x73, 0x00, 0x61, 0x00}
	obfuscatePassword(b)
	if want := []byte{0x92, 0xA5, 0xB3, 0xA5}; !bytes.Equal(b, want) {
		t.Fatalf("obfuscated % x", b)
	}
	for i := 0; i < 256; i++ {
		x := []byte{byte(i)}
		obfuscatePassword(x)
		deobfuscatePassword(x)
		if x[0] != byte(i) {
			t.Fatalf("byte %#x does not round trip", i)
		}
	}
}

func TestWireLogin7RoundTrip(t *testing.T) {
	l := Login7{
		TDSVersion: TDSVersion74, PacketSize: 32767, ClientProgVer: 7, ClientPID: 4242, ConnectionID: 0,
		OptionFlags1: 0xE0, OptionFlags2: 0x03 | Login7OptionFlags2IntSecurity, TypeFlags: Login7TypeFlagsReadOnlyIntent,
		OptionFlags3: Login7OptionFlags3ChangePassword, ClientTimeZone: -60, ClientLCID: 0x409,
		HostName: "host-é", UserName: "user", Password: "p@ss𝄞wörd", AppName: "tdsextract", ServerName: "srv,1433",
		CltIntName: "tdsextract", Language: "us_english", Database: "master", ClientID: [6]byte{1, 2, 3, 4, 5, 6},
		SSPI: []byte{0x60, 0x28}, AtchDBFile: "C:\\x.mdf", ChangePassword: "new-secret",
		Features: []Feature{
			UTF8SupportFeature(), JSONSupportFeature(), VectorSupportFeature(1),
			FedAuthSecurityTokenFeature([]byte("eyJ0eXAi.token"), true),
		},
	}
	b, err := l.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	wantFlags := l
	wantFlags.OptionFlags3 |= Login7OptionFlags3Extension
	var got Login7
	if err := got.Decode(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantFlags) {
		t.Fatalf("got %+v\nwant %+v", got, wantFlags)
	}
	// The password is not on the wire in clear text.
	if bytes.Contains(b, AppendUTF16LE(nil, "p@ss")) || bytes.Contains(b, AppendUTF16LE(nil, "new-secret")) {
		t.Fatal("password in clear text")
	}
	// ibExtension points at a DWORD holding the FeatureExt offset, which ends with 0xFF.
	ib := binary.LittleEndian.Uint16(b[56:])
	if cb := binary.LittleEndian.Uint16(b[58:]); cb != 4 {
		t.Fatalf("cbExtension %d", cb)
	}
	fe := binary.LittleEndian.Uint32(b[ib:])
	if b[fe] != FeatureUTF8Support || b[len(b)-1] != FeatureTerminator {
		t.Fatalf("FeatureExt at %d starts with %#x, message ends with %#x", fe, b[fe], b[len(b)-1])
	}
	// FEDAUTH security token data: Options (library 0x01 << 1 | echo), L_VARBYTE token.
	fa := l.Features[3].Data
	if fa[0] != 0x03 || binary.LittleEndian.Uint32(fa[1:]) != 14 || string(fa[5:]) != "eyJ0eXAi.token" {
		t.Fatalf("FEDAUTH data % x", fa)
	}
	wireResplit(t, PacketLogin7, b)

	// Without features fExtension is cleared and ibExtension ignored.
	l.Features = nil
	l.OptionFlags3 |= Login7OptionFlags3Extension
	b, err = l.Encode(nil)
	if err != nil || b[27]&Login7OptionFlags3Extension != 0 {
		t.Fatalf("fExtension kept: %v %#x", err, b[27])
	}
	// Large SSPI uses cbSSPILong.
	l.SSPI = bytes.Repeat([]byte{7}, 70000)
	b, err = l.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint16(b[80:]) != 0xFFFF || binary.LittleEndian.Uint32(b[90:]) != 70000 {
		t.Fatal("cbSSPILong not used")
	}
	if err := got.Decode(b); err != nil || len(got.SSPI) != 70000 {
		t.Fatalf("long SSPI: %v %d", err, len(got.SSPI))
	}
}

func TestWireLogin7Reject(t *testing.T) {
	base := Login7{TDSVersion: TDSVersion74, HostName: "h", UserName: "u", Password: "p", Features: []Feature{UTF8SupportFeature()}}
	good, err := base.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	le := binary.LittleEndian
	cases := []struct {
		name string
		b    []byte
		msg  string
	}{
		{"empty", nil, "shorter than its Length"},
		{"Length beyond message", mut(func(b []byte) []byte { le.PutUint32(b, uint32(len(b)+1)); return b }), "exceeds"},
		{"Length below fixed part", mut(func(b []byte) []byte { le.PutUint32(b, 60); return b }), "fixed part"},
		{"Length above 128K", append(mut(func(b []byte) []byte { le.PutUint32(b, 200000); return b }), make([]byte, 200000)...), "128K-1"},
		{"HostName 129 chars", mut(func(b []byte) []byte { le.PutUint16(b[38:], 129); return b }), "limit is 128"},
		{"AtchDBFile 261 chars", mut(func(b []byte) []byte { le.PutUint16(b[84:], 261); return b }), "limit is 260"},
		{"UserName inside fixed part", mut(func(b []byte) []byte { le.PutUint16(b[40:], 10); return b }), "outside the variable part"},
		{"UserName past end", mut(func(b []byte) []byte { le.PutUint16(b[40:], uint16(len(b)-1)); return b }), "outside the variable part"},
		{"cbExtension 3", mut(func(b []byte) []byte { le.PutUint16(b[58:], 3); return b }), "cbExtension"},
		{"ibFeatureExtLong past end", mut(func(b []byte) []byte { le.PutUint32(b[le.Uint16(b[56:]):], uint32(len(b))); return b }), "ibFeatureExtLong"},
		{"FeatureExt without terminator", mut(func(b []byte) []byte { b[len(b)-1] = 0x0B; return b }), "terminator"},
		{"feature length past end", mut(func(b []byte) []byte { le.PutUint32(b[len(b)-6:], 100); return b }), "past the end"},
	}
	for _, c := range cases {
		var l Login7
		err := l.Decode(c.b)
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Where, "LOGIN7") || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want LOGIN7 error with %q", c.name, err, c.msg)
		}
	}
	// Encode limits.
	for _, l := range []Login7{
		{HostName: strings.Repeat("h", 129)},
		{Password: strings.Repeat("p", 129)},
		{AtchDBFile: strings.Repeat("f", 261)},
		{Features: []Feature{{ID: FeatureTerminator}}},
	} {
		if _, err := l.Encode(nil); err == nil {
			t.Errorf("Encode accepted %+v", l)
		}
	}
}

func FuzzLogin7(f *testing.F) {
	_, p := wireOnePacket(f, wireSpec(f, "4.2-login7-request"))
	f.Add(p)
	l := Login7{TDSVersion: TDSVersion74, HostName: "h", UserName: "u", Password: "pw", Database: "db", SSPI: []byte{1},
		Features: []Feature{UTF8SupportFeature(), FedAuthSecurityTokenFeature([]byte("tok"), false)}}
	b, _ := l.Encode(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		wireAllocCheck(t, len(data), func() {
			var l Login7
			if err := l.Decode(data); err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			re, err := l.Encode(nil)
			if err != nil {
				return // e.g. a TDS 7.1 message with data our 7.2 layout cannot place
			}
			var l2 Login7
			if err := l2.Decode(re); err != nil {
				t.Fatalf("re-encoded LOGIN7 rejected: %v", err)
			}
			l.OptionFlags3 = (l.OptionFlags3 &^ Login7OptionFlags3Extension)
			if len(l.Features) > 0 {
				l.OptionFlags3 |= Login7OptionFlags3Extension
			}
			if !reflect.DeepEqual(l, l2) {
				t.Fatalf("round trip:\n%+v\n%+v", l, l2)
			}
		})
	})
}
