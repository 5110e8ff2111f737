package tdsserver_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// rawClient is a minimal TDS client built from the decode package's
// encoders, for what database/sql clients cannot show: packet framing,
// SPIDs, exact token sequences, attention timing, reset-connection, and a
// bytes-only reader for the benchmark. It does not do TLS (it says NOT_SUP).
type rawClient struct {
	t          testing.TB
	c          net.Conn
	br         *bufio.Reader
	packetSize int
	spid       uint16 // from the server's packet headers
	login      []event
	hdr        [8]byte
	packets    int // packets of the last message read
	sizes      map[int]int
}

// event is one decoded token, flattened for assertions.
type event struct {
	ev      decode.Event
	done    decode.Done
	msg     decode.Message
	env     decode.EnvChange
	ack     decode.LoginAck
	feat    decode.FeatureExtAck
	rv      decode.ReturnValue
	status  int32
	cols    []decode.Column
	rowVals []any
}

func dialRaw(t testing.TB, s *tdsserver.Server, packetSize uint32, features ...decode.Feature) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &rawClient{t: t, c: c, br: bufio.NewReaderSize(c, 1<<16), packetSize: 4096}
	pre := decode.Prelogin{Version: [4]byte{1, 0, 0, 0}, Encryption: decode.EncryptNotSup}
	rc.send(decode.PacketPrelogin, 0, pre.Encode(nil))
	var reply decode.Prelogin
	if err := reply.Decode(rc.read()); err != nil {
		t.Fatal(err)
	}
	if reply.Encryption != decode.EncryptNotSup {
		t.Fatalf("server answered encryption 0x%02x to NOT_SUP", reply.Encryption)
	}
	l := decode.Login7{TDSVersion: 0x74000004, PacketSize: packetSize, UserName: testUser, Password: testPassword,
		HostName: "raw", AppName: "rawclient", Database: "sample", ClientLCID: 0x409, Features: features}
	p, err := l.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	rc.send(decode.PacketLogin7, 0, p)
	var req []byte
	for _, f := range features {
		req = append(req, f.ID)
	}
	rc.login = rc.events(rc.read(), req)
	for _, e := range rc.login {
		if e.ev == decode.EventError {
			t.Fatalf("login: %d %s", e.msg.Number, e.msg.Text)
		}
		if e.ev == decode.EventEnvChange && e.env.Type == decode.EnvPacketSize {
			n, ok := e.env.PacketSize()
			if !ok {
				t.Fatalf("bad packet size ENVCHANGE %+v", e.env)
			}
			rc.packetSize = n
		}
	}
	return rc
}

func (rc *rawClient) send(typ, status byte, payload []byte) {
	rc.t.Helper()
	b := decode.AppendMessage(nil, typ, status, 0, rc.packetSize, 1, payload)
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

// read reads one message and returns its payload.
func (rc *rawClient) read() []byte {
	rc.t.Helper()
	p, err := rc.readErr()
	if err != nil {
		rc.t.Fatal(err)
	}
	return p
}

func (rc *rawClient) readErr() ([]byte, error) {
	var payload []byte
	rc.packets = 0
	for {
		if _, err := io.ReadFull(rc.br, rc.hdr[:]); err != nil {
			return payload, err
		}
		var h decode.Header
		if err := h.Decode(rc.hdr[:]); err != nil {
			return payload, err
		}
		if h.Type != decode.PacketReply {
			return payload, fmt.Errorf("packet type 0x%02x", h.Type)
		}
		if h.SPID == 0 {
			return payload, errors.New("server sent SPID 0")
		}
		rc.spid = h.SPID
		rc.packets++
		if rc.sizes != nil {
			rc.sizes[int(h.Length)]++
		}
		start := len(payload)
		payload = append(payload, make([]byte, int(h.Length)-8)...)
		if _, err := io.ReadFull(rc.br, payload[start:]); err != nil {
			return payload, err
		}
		if h.Status&decode.StatusEOM != 0 {
			return payload, nil
		}
	}
}

// events decodes a whole response.
func (rc *rawClient) events(payload []byte, requested []byte) []event {
	rc.t.Helper()
	evs, err := decodeEvents(payload, requested)
	if err != nil {
		rc.t.Fatalf("decode response: %v", err)
	}
	return evs
}

func decodeEvents(payload []byte, requested []byte) ([]event, error) {
	s := decode.NewStream(decode.StreamOptions{RequestedFeatures: requested})
	var capt decode.Capture
	s.SetSink(&capt)
	var out []event
	for len(payload) > 0 {
		n, ev, err := s.Next(payload)
		if err != nil {
			return out, err
		}
		payload = payload[n:]
		e := event{ev: ev}
		switch ev {
		case decode.EventDone:
			e.done = s.Done
		case decode.EventError, decode.EventInfo:
			e.msg = s.Message
		case decode.EventEnvChange:
			e.env = s.EnvChange
		case decode.EventLoginAck:
			e.ack = s.LoginAck
		case decode.EventFeatureExtAck:
			e.feat = s.FeatureExtAck
		case decode.EventReturnValue:
			e.rv = s.ReturnValue
		case decode.EventReturnStatus:
			e.status = s.ReturnStatus
		case decode.EventColMetadata:
			e.cols = append([]decode.Column(nil), s.Columns...)
		case decode.EventRow:
			e.rowVals = capt.Rows[len(capt.Rows)-1]
		}
		out = append(out, e)
	}
	return out, nil
}

func (rc *rawClient) batch(sql string, status byte) []event {
	rc.t.Helper()
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: sql}
	rc.send(decode.PacketSQLBatch, status, b.Encode(nil))
	return rc.events(rc.read(), nil)
}

func countEv(evs []event, ev decode.Event) int {
	n := 0
	for _, e := range evs {
		if e.ev == ev {
			n++
		}
	}
	return n
}

func lastDone(t testing.TB, evs []event) decode.Done {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].ev != decode.EventDone {
		t.Fatalf("response does not end with a DONE: %v", evNames(evs))
	}
	return evs[len(evs)-1].done
}

func evNames(evs []event) []string {
	var s []string
	for _, e := range evs {
		switch e.ev {
		case decode.EventDone:
			s = append(s, fmt.Sprintf("%s(0x%x,%d)", tokName(e.done.Token), e.done.Status, e.done.RowCount))
		case decode.EventEnvChange:
			s = append(s, fmt.Sprintf("EnvChange(%d)", e.env.Type))
		case decode.EventError, decode.EventInfo:
			s = append(s, fmt.Sprintf("%s(%d)", e.ev, e.msg.Number))
		default:
			s = append(s, e.ev.String())
		}
	}
	return s
}

func tokName(t byte) string {
	switch t {
	case decode.TokenDone:
		return "DONE"
	case decode.TokenDoneProc:
		return "DONEPROC"
	case decode.TokenDoneInProc:
		return "DONEINPROC"
	}
	return fmt.Sprintf("0x%02x", t)
}
