package decode

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestWirePreloginSpec decodes MS-TDS 4.1.
func TestWirePreloginSpec(t *testing.T) {
	payload := wireMessage(t, "4.1-prelogin-request", PacketPrelogin)
	want := Prelogin{Version: [4]byte{9, 0, 0, 0}, Encryption: EncryptOn, HasThreadID: true, ThreadID: 0x0DB8, MARS: 1}
	// Our encoder writes the same options in the same order, so the bytes match.
	wireExact(t, payload, want, infallible((*Prelogin).Encode))
}

func TestWirePreloginRoundTrip(t *testing.T) {
	trace := bytes.Repeat([]byte{0x5A}, 36)
	nonce := bytes.Repeat([]byte{0xA5}, 32)
	cases := []Prelogin{
		{Version: [4]byte{16, 0, 0x10, 0x00}, SubBuild: 3, Encryption: EncryptNotSup, Instance: "MSSQLSERVER", TraceID: trace},
		{Version: [4]byte{1, 2, 3, 4}, Encryption: EncryptReq | EncryptClientCert, HasThreadID: true, EmptyThreadID: true, FedAuthRequired: 1, HasFedAuthRequired: true, Nonce: nonce},
		{Encryption: EncryptOff, Instance: "\x01"},
		{Encryption: EncryptOn, HasThreadID: true, ThreadID: 0xFFFFFFFF, MARS: 1},
	}
	for i, c := range cases {
		b := c.Encode(nil)
		var got Prelogin
		if err := got.Decode(b); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("case %d:\n got %+v\nwant %+v", i, got, c)
		}
		wireResplit(t, PacketPrelogin, b)
	}
}

func TestWirePreloginFixture(t *testing.T) {
	// A server answer (2.2.6.5): VERSION, ENCRYPTION, INSTOPT, THREADID (empty),
	// MARS, FEDAUTHREQUIRED, terminator, then the data.
	b := wireHexBytes(t, `
		00 00 1F 00 06   // VERSION at 31, 6 bytes
		01 00 25 00 01   // ENCRYPTION at 37
		02 00 26 00 01   // INSTOPT at 38
		03 00 27 00 00   // THREADID, empty (servers send it empty)
		04 00 27 00 01   // MARS at 39
		06 00 28 00 01   // FEDAUTHREQUIRED at 40
		FF               // TERMINATOR
		10 00 07 D0 00 00 // 16.0.2000, subbuild 0
		02               // ENCRYPT_NOT_SUP
		00               // instance matches
		00               // MARS off
		00               // federated authentication not required`)
	want := Prelogin{Version: [4]byte{16, 0, 7, 0xD0}, Encryption: EncryptNotSup, HasThreadID: true, EmptyThreadID: true, HasFedAuthRequired: true}
	wireExact(t, b, want, infallible((*Prelogin).Encode))
}

func TestWirePreloginReject(t *testing.T) {
	cases := []struct{ name, hex, msg string }{
		{"empty", "", "no 0xFF terminator"},
		{"no terminator", "00 00 05 00 06 00 00 00 00 00 00", "no 0xFF terminator"},
		{"truncated entry", "00 00 05 00", "no 0xFF terminator"},
		// go-mssqldb bad_server_test: overflowing option length.
		{"offset+length overflow", "00 00 06 FF FF FF 09 00 00 00 00 00", "outside"},
		{"offset past end", "00 00 40 00 06 FF", "outside"},
		{"missing data", "00 00 06 00 06 FF 09 00", "outside"},
		{"overlaps table", "00 00 00 00 06 FF", "overlaps"},
		{"version length 4", "00 00 06 00 04 FF 09 00 00 00", "want 6"},
		{"encryption length 2", "00 00 0B 00 06 01 00 11 00 02 FF 09 00 00 00 00 00 01 01", "want 1"},
		{"threadid length 3", "00 00 0B 00 06 03 00 11 00 03 FF 09 00 00 00 00 00 01 01 01", "want 0 or 4"},
		{"traceid length 35", "00 00 0B 00 06 05 00 11 00 23 FF 09 00 00 00 00 00" + strings.Repeat(" 00", 35), "want 36"},
		{"nonce length 31", "00 00 0B 00 06 07 00 11 00 1F FF 09 00 00 00 00 00" + strings.Repeat(" 00", 31), "want 32"},
		{"duplicate option", "00 00 0B 00 06 00 00 0B 00 06 FF 09 00 00 00 00 00", "twice"},
		{"no version", "01 00 06 00 01 FF 00", "VERSION option missing"},
	}
	for _, c := range cases {
		var p Prelogin
		err := p.Decode(wireHexBytes(t, c.hex))
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Where != "PRELOGIN" || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s: %v, want PRELOGIN error with %q", c.name, err, c.msg)
		}
	}
	// Unknown options are skipped.
	var p Prelogin
	if err := p.Decode(wireHexBytes(t, "09 00 0B 00 01 00 00 0C 00 06 FF 77 09 00 00 00 00 00")); err != nil {
		t.Fatalf("unknown option: %v", err)
	}
}

func FuzzPrelogin(f *testing.F) {
	_, p := wireOnePacket(f, wireSpec(f, "4.1-prelogin-request"))
	f.Add(p)
	f.Add((&Prelogin{Encryption: 2, Instance: "X", TraceID: make([]byte, 36), HasFedAuthRequired: true, Nonce: make([]byte, 32)}).Encode(nil))
	f.Add([]byte{0xFF})
	f.Fuzz(func(t *testing.T, data []byte) {
		wireAllocCheck(t, len(data), func() {
			var p Prelogin
			if err := p.Decode(data); err != nil {
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			var p2 Prelogin
			if err := p2.Decode(p.Encode(nil)); err != nil {
				t.Fatalf("re-encoded PRELOGIN rejected: %v", err)
			}
			// INSTOPT stops at its first NUL, so compare after that normalisation.
			if p2.Instance != p.Instance && p.Instance != "\x01" {
				t.Fatalf("instance %q vs %q", p2.Instance, p.Instance)
			}
			p2.Instance = p.Instance
			if !reflect.DeepEqual(p, p2) {
				t.Fatalf("round trip:\n%+v\n%+v", p, p2)
			}
		})
	})
}
