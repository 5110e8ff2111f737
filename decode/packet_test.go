package decode

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"
)

// wireSpec loads testdata/spec/<name>.hex: whitespace-separated hex bytes,
// '#' lines are comments (MS-TDS §4 example bytes, see each file's header).
func wireSpec(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "spec", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// wireHexBytes parses annotated hex: whitespace-separated bytes, anything
// after "//" on a line is a comment.
func wireHexBytes(t testing.TB, s string) []byte {
	t.Helper()
	var sb strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatalf("bad hex fixture: %v", err)
	}
	return b
}

// wireOnePacket checks that b is exactly one packet with EOM and returns its
// type and payload.
func wireOnePacket(t testing.TB, b []byte) (byte, []byte) {
	t.Helper()
	typ, payload, packets := wireReassemble(t, b)
	if packets != 1 {
		t.Fatalf("%d packets, want 1", packets)
	}
	return typ, payload
}

// wireMessage reads the named fixture as one message of type typ, checks
// that it survives re-splitting at every packet size, and returns its
// payload.
func wireMessage(t *testing.T, name string, typ byte) []byte {
	t.Helper()
	got, payload := wireOnePacket(t, wireSpec(t, name))
	if got != typ {
		t.Fatalf("%s: packet type %#x, want %#x", name, got, typ)
	}
	wireResplit(t, typ, payload)
	return payload
}

// wireRequest is a client message with the Decode of its payload.
type wireRequest[M any] interface {
	*M
	Decode(payload []byte) error
}

// wireExact decodes payload, checks the message equals want and that
// encode, given the decoded message, writes payload again byte for byte.
func wireExact[M any, P wireRequest[M]](t *testing.T, payload []byte, want M, encode func(P, []byte) ([]byte, error)) {
	t.Helper()
	var got M
	if err := P(&got).Decode(payload); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if re, err := encode(&got, nil); err != nil || !bytes.Equal(re, payload) {
		t.Fatalf("Encode: %v\n got % x\nwant % x", err, re, payload)
	}
}

// infallible adapts an Encode that cannot fail to wireExact's encode.
func infallible[P any](encode func(P, []byte) []byte) func(P, []byte) ([]byte, error) {
	return func(m P, dst []byte) ([]byte, error) { return encode(m, dst), nil }
}

// wireReassemble splits a stream of packets by their headers and joins
// their payloads: each Length within the bytes given, one type throughout,
// EOM on the last packet and on no other, packet ids counting from 1.
func wireReassemble(t testing.TB, stream []byte) (typ byte, payload []byte, packets int) {
	t.Helper()
	for rest := stream; len(rest) > 0; packets++ {
		var h Header
		if err := h.Decode(rest); err != nil {
			t.Fatalf("packet %d: header: %v", packets, err)
		}
		if int(h.Length) > len(rest) {
			t.Fatalf("packet %d: length %d, %d bytes left", packets, h.Length, len(rest))
		}
		if packets == 0 {
			typ = h.Type
		} else if h.Type != typ {
			t.Fatalf("packet %d: type %#x inside a message of type %#x", packets, h.Type, typ)
		}
		if h.PacketID != byte(1+packets) {
			t.Fatalf("packet %d has id %d", packets, h.PacketID)
		}
		payload = append(payload, rest[HeaderLen:h.Length]...)
		rest = rest[h.Length:]
		if eom := h.Status&StatusEOM != 0; eom != (len(rest) == 0) {
			t.Fatalf("packet %d: EOM %v with %d bytes left", packets, eom, len(rest))
		}
	}
	return typ, payload, packets
}

// wireSplitSizes are the packet sizes every message is re-split at; 9 is
// one payload byte per packet.
var wireSplitSizes = []int{MinPacketSize, DefaultPacketSize, MaxPacketSize, HeaderLen + 1}

// wireResplit splits payload at each size, reassembles it and checks the
// result is identical, in as few packets as the size allows.
func wireResplit(t *testing.T, typ byte, payload []byte) {
	t.Helper()
	for _, size := range wireSplitSizes {
		stream := AppendMessage(nil, typ, 0, 0x33, size, 1, payload)
		for rest := stream; len(rest) > 0; {
			var h Header
			if err := h.Decode(rest); err != nil {
				t.Fatalf("size %d: %v", size, err)
			}
			if int(h.Length) > size {
				t.Fatalf("size %d: packet of %d bytes", size, h.Length)
			}
			rest = rest[min(int(h.Length), len(rest)):]
		}
		gotTyp, got, packets := wireReassemble(t, stream)
		if gotTyp != typ || !bytes.Equal(got, payload) {
			t.Fatalf("size %d: reassembled %d bytes of type %#x, want %d of %#x", size, len(got), gotTyp, len(payload), typ)
		}
		want := 1
		if room := size - HeaderLen; len(payload) > room {
			want = (len(payload) + room - 1) / room
		}
		if packets != want {
			t.Fatalf("size %d: %d packets, want %d", size, packets, want)
		}
	}
}

func TestWireHeaderDecode(t *testing.T) {
	// MS-TDS 2.2.3.1: Type, Status, Length (BE, header included), SPID (BE), PacketID, Window.
	b := wireHexBytes(t, `
		04        // Type: tabular result
		01        // Status: EOM
		01 61     // Length 0x0161 = 353, big-endian
		00 77     // SPID 0x0077, big-endian
		01        // PacketID
		00        // Window`)
	var h Header
	if err := h.Decode(b); err != nil {
		t.Fatal(err)
	}
	want := Header{Type: PacketReply, Status: StatusEOM, Length: 353, SPID: 0x77, PacketID: 1}
	if h != want {
		t.Fatalf("got %+v want %+v", h, want)
	}
	if got := h.Append(nil); !bytes.Equal(got, b) {
		t.Fatalf("Append = % x", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = h.Decode(b) }); n != 0 {
		t.Fatalf("Header.Decode allocates %v times", n)
	}
	// Unknown status bits are accepted (2.2.3.1.2: MUST be ignored).
	b2 := append([]byte(nil), b...)
	b2[1] = 0xE1
	if err := h.Decode(b2); err != nil {
		t.Fatalf("status 0xE1: %v", err)
	}
}

func TestWireHeaderReject(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		need bool
	}{
		{"short", []byte{4, 1, 0, 8, 0, 0, 1}, true},
		{"empty", nil, true},
		{"unknown type 0x05", []byte{5, 1, 0, 8, 0, 0, 1, 0}, false},
		{"unknown type 0x00", []byte{0, 1, 0, 8, 0, 0, 1, 0}, false},
		{"length 7", []byte{4, 1, 0, 7, 0, 0, 1, 0}, false},
		{"length 0", []byte{4, 1, 0, 0, 0, 0, 1, 0}, false},
		{"length 32768", []byte{4, 1, 0x80, 0x00, 0, 0, 1, 0}, false},
		{"length 65535", []byte{4, 1, 0xFF, 0xFF, 0, 0, 1, 0}, false},
	}
	for _, c := range cases {
		var h Header
		err := h.Decode(c.b)
		if c.need {
			if err != ErrNeedMore {
				t.Errorf("%s: %v, want ErrNeedMore", c.name, err)
			}
			continue
		}
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Where != "packet header" {
			t.Errorf("%s: %v, want a packet header *ProtocolError", c.name, err)
		}
	}
	// Bounds accepted: 8 (header only) and 32767.
	for _, l := range []uint16{8, 512, 32767} {
		var h Header
		if err := h.Decode(Header{Type: PacketRPC, Length: l}.Append(nil)); err != nil {
			t.Errorf("length %d: %v", l, err)
		}
	}
}

func TestWireAppendMessage(t *testing.T) {
	// Empty payload: one header-only packet with EOM.
	got := AppendMessage(nil, PacketAttention, 0, 7, 4096, 1, nil)
	if want := wireHexBytes(t, "06 01 00 08 00 07 01 00"); !bytes.Equal(got, want) {
		t.Fatalf("empty: % x", got)
	}
	// 10 bytes at packet size 12: 4+4+2 payload bytes, ids 0xFF, 0x00, 0x01 (wrap),
	// RESETCONNECTION only on the first packet, IGNORE kept, EOM only on the last.
	p := []byte("0123456789")
	got = AppendMessage(nil, PacketSQLBatch, StatusResetConn|StatusIgnore|StatusEOM, 1, 12, 0xFF, p)
	want := wireHexBytes(t, `
		01 0A 00 0C 00 01 FF 00  30 31 32 33   // reset|ignore, id 0xFF
		01 02 00 0C 00 01 00 00  34 35 36 37   // ignore, id 0x00
		01 03 00 0A 00 01 01 00  38 39         // ignore|EOM, id 0x01`)
	if !bytes.Equal(got, want) {
		t.Fatalf("split:\n got % x\nwant % x", got, want)
	}
	// Sizes above the maximum are clamped; below 9 become 9.
	big := make([]byte, 40000)
	got = AppendMessage(nil, PacketBulkLoad, 0, 0, 65535, 1, big)
	var h Header
	if err := h.Decode(got); err != nil || h.Length != MaxPacketSize {
		t.Fatalf("clamp: %+v %v", h, err)
	}
	got = AppendMessage(nil, PacketBulkLoad, 0, 0, 1, 1, []byte{1, 2})
	if len(got) != 18 {
		t.Fatalf("tiny: %d bytes", len(got))
	}
}

func TestWireAttention(t *testing.T) {
	// MS-TDS 4.10.
	want := wireSpec(t, "4.10-attention")
	if got := AppendAttention(nil, 0); !bytes.Equal(got, want) {
		t.Fatalf("AppendAttention = % x, want % x", got, want)
	}
	typ, payload := wireOnePacket(t, want)
	if typ != PacketAttention || len(payload) != 0 {
		t.Fatalf("type %#x payload %d", typ, len(payload))
	}
}

func TestWireResplit(t *testing.T) {
	payload := make([]byte, 10000)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	wireResplit(t, PacketBulkLoad, payload)
	wireResplit(t, PacketSQLBatch, nil)
	wireResplit(t, PacketRPC, []byte{1})
}

func TestWireProtocolErrorFormat(t *testing.T) {
	e := &ProtocolError{Token: 0x81, Where: "COLMETADATA column 3 TYPE_INFO", Offset: 42, Msg: "bad"}
	if got, want := e.Error(), "decode: protocol error in COLMETADATA column 3 TYPE_INFO (token 0x81) at offset 42: bad"; got != want {
		t.Fatalf("%q", got)
	}
	e = &ProtocolError{Where: "LOGIN7", Offset: 0, Msg: "x"}
	if got, want := e.Error(), "decode: protocol error in LOGIN7 at offset 0: x"; got != want {
		t.Fatalf("%q", got)
	}
	if !errors.Is(tooLarge(1, "w", 0, "m"), ErrTooLarge) {
		t.Fatal("tooLarge does not wrap ErrTooLarge")
	}
}

// wireAllocCheck fails when f allocates far more than its input justifies:
// every decoder bounds what it allocates by the bytes it was given (a
// hostile length must not buy memory), so a generous linear bound catches
// a length field trusted for an allocation. It reads the runtime's cumulative heap-allocation
// counter (runtime/metrics, no stop-the-world) around f. The counter is
// process-wide and flushed per span, so a measurement over the limit is
// repeated: only a decoder that exceeds it three times in a row fails.
func wireAllocCheck(t *testing.T, inputLen int, f func()) {
	t.Helper()
	limit := uint64(64*inputLen + 256<<10)
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	var got uint64
	for try := 0; try < 3; try++ {
		metrics.Read(s)
		before := s[0].Value.Uint64()
		f()
		metrics.Read(s)
		if got = s[0].Value.Uint64() - before; got <= limit {
			return
		}
	}
	t.Fatalf("decoding %d bytes allocated %d bytes (limit %d)", inputLen, got, limit)
}

func FuzzPacketHeader(f *testing.F) {
	for _, name := range []string{"4.1-prelogin-request", "4.4-login-response", "4.10-attention", "4.17-featureextack-sessionrecovery-malformed"} {
		f.Add(wireSpec(f, name))
	}
	f.Add(AppendMessage(nil, PacketSQLBatch, 0, 0, 9, 1, []byte("abc")))
	f.Fuzz(func(t *testing.T, data []byte) {
		wireAllocCheck(t, len(data), func() {
			var h Header
			var payload []byte
			rest := data
			for len(rest) > 0 {
				if err := h.Decode(rest); err != nil {
					if err == ErrNeedMore && len(rest) >= HeaderLen {
						t.Fatal("ErrNeedMore with a whole header")
					}
					break
				}
				if got := h.Append(nil); !bytes.Equal(got, rest[:HeaderLen]) {
					t.Fatalf("header round trip % x vs % x", got, rest[:HeaderLen])
				}
				n := int(h.Length)
				if n > len(rest) {
					break
				}
				payload = append(payload, rest[HeaderLen:n]...)
				rest = rest[n:]
			}
			// Whatever the payloads add up to survives a re-split.
			typ, got, _ := wireReassemble(t, AppendMessage(nil, PacketSQLBatch, 0, 0, 512, 1, payload))
			if typ != PacketSQLBatch || !bytes.Equal(got, payload) {
				t.Fatal("re-split payload differs")
			}
		})
	})
}

func BenchmarkWireHeaderDecode(b *testing.B) {
	pkt := Header{Type: PacketReply, Status: StatusEOM, Length: 4096, SPID: 51, PacketID: 1}.Append(nil)
	var h Header
	b.ReportAllocs()
	b.SetBytes(HeaderLen)
	for i := 0; i < b.N; i++ {
		if err := h.Decode(pkt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWireAppendMessage(b *testing.B) {
	payload := make([]byte, 1<<20)
	dst := make([]byte, 0, 2<<20)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for i := 0; i < b.N; i++ {
		dst = AppendMessage(dst[:0], PacketBulkLoad, 0, 51, DefaultPacketSize, 1, payload)
	}
}

// A client cancels a running request with a header-only ATTENTION packet
// (MS-TDS 2.2.1.7, example 4.10).
func ExampleAppendAttention() {
	fmt.Printf("% x\n", AppendAttention(nil, 0))
	// Output: 06 01 00 08 00 00 01 00
}

// A SQL batch is encoded once and split into packets of the negotiated
// size; each packet's header gives its length, and the payloads of the
// packets up to the one with EOM are the message.
func ExampleAppendMessage() {
	payload := (&SQLBatch{OutstandingRequests: 1, SQL: "SELECT 1"}).Encode(nil)
	stream := AppendMessage(nil, PacketSQLBatch, 0, 0, 4096, 1, payload)

	var h Header
	err := h.Decode(stream)
	var b SQLBatch
	if err == nil {
		err = b.Decode(stream[HeaderLen:h.Length])
	}
	fmt.Println(len(stream), h.Status&StatusEOM != 0, b.SQL, err)
	// Output: 46 true SELECT 1 <nil>
}
