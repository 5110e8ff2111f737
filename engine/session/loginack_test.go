package session

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// readClientMessage reads one whole client message (all packets to EOM).
func readClientMessage(r io.Reader) (typ byte, payload []byte, err error) {
	for {
		var hdr [decode.HeaderLen]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return 0, nil, err
		}
		n := int(binary.BigEndian.Uint16(hdr[2:])) - decode.HeaderLen
		if n < 0 {
			return 0, nil, errors.New("short packet")
		}
		part := make([]byte, n)
		if _, err := io.ReadFull(r, part); err != nil {
			return 0, nil, err
		}
		typ, payload = hdr[0], append(payload, part...)
		if hdr[1]&decode.StatusEOM != 0 {
			return typ, payload, nil
		}
	}
}

// scriptedLoginServer answers one connection's PRELOGIN (no encryption)
// and LOGIN7 with a LOGINACK announcing version, then DONE, and reports
// whether the client closed the connection afterwards.
func scriptedLoginServer(t *testing.T, version uint32) (addr string, closed <-chan bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := make(chan bool, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			done <- false
			return
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
		if typ, _, err := readClientMessage(nc); err != nil || typ != decode.PacketPrelogin {
			done <- false
			return
		}
		pre := decode.Prelogin{Version: [4]byte{16, 0, 0, 0}, Encryption: decode.EncryptNotSup}
		_, _ = nc.Write(decode.AppendMessage(nil, decode.PacketReply, 0, 51, decode.DefaultPacketSize, 1, pre.Encode(nil)))
		if typ, _, err := readClientMessage(nc); err != nil || typ != decode.PacketLogin7 {
			done <- false
			return
		}
		var b []byte
		b = decode.LoginAck{Interface: 1, TDSVersion: version, ProgName: "Microsoft SQL Server\x00\x00", ProgVersion: [4]byte{16, 0, 0x10, 0x27}}.Append(b)
		b = decode.Done{Token: decode.TokenDone}.Append(b)
		_, _ = nc.Write(decode.AppendMessage(nil, decode.PacketReply, 0, 51, decode.DefaultPacketSize, 1, b))
		// A client that accepted the login would now idle or send a
		// request; one that refused it closes the connection.
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = nc.Read(make([]byte, 1))
		done <- errors.Is(err, io.EOF)
	}()
	return ln.Addr().String(), done
}

// A LOGINACK must announce a TDS version the client asked for: anything
// else fails the login with a protocol error naming the version, and the
// connection is closed.
func TestLoginAckVersionChecked(t *testing.T) {
	cases := []struct {
		version uint32
		ok      bool
		want    string
	}{
		{decode.TDSVersion74, true, ""},
		{decode.TDSVersion73B, true, ""},
		{decode.TDSVersion73A, true, ""},
		{decode.TDSVersion72, true, ""},
		{0x07010000, false, "TDS 7.1 (SQL Server 2000); tdsextract needs TDS 7.2"},
		{decode.TDSVersion71, false, "TDS 7.1 (SQL Server 2000 SP1)"},
		{0x07000000, false, "TDS 7.0"},
		{0x08000000, false, "TDS 8.0, which the client did not ask for"},
		{0x75000005, false, "TDS version 0x75000005, which no TDS version defines"},
		{0, false, "TDS version 0x00000000"},
		{0x04000074, false, "TDS version 0x04000074"}, // 7.4 byte-swapped
	}
	for _, tc := range cases {
		addr, closed := scriptedLoginServer(t, tc.version)
		host, port, _ := net.SplitHostPort(addr)
		cfg, err := ParseConnString("sqlserver://sa:pw@" + host + ":" + port + "?encrypt=disable&connection+timeout=10")
		if err != nil {
			t.Fatal(err)
		}
		c, err := Connect(context.Background(), cfg)
		if tc.ok {
			if err != nil {
				t.Errorf("0x%08X: %v", tc.version, err)
				continue
			}
			if c.Info().TDSVersion != tc.version {
				t.Errorf("0x%08X: Info().TDSVersion = 0x%08X", tc.version, c.Info().TDSVersion)
			}
			c.Close()
			<-closed
			continue
		}
		var pe *decode.ProtocolError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "LOGINACK") {
			if c != nil {
				c.Close()
			}
			t.Errorf("0x%08X: err = %v; want a protocol error about LOGINACK containing %q", tc.version, err, tc.want)
			continue
		}
		if IsTransient(err) {
			t.Errorf("0x%08X: a protocol error at login is not transient", tc.version)
		}
		if !<-closed {
			t.Errorf("0x%08X: the client did not close the connection", tc.version)
		}
	}
}

// Over a strict (TDS 8.0) connection a LOGINACK may also announce 8.0.
func TestLoginAckVersion80OnlyWhenStrict(t *testing.T) {
	if err := checkLoginAckVersion(0x08000000, true); err != nil {
		t.Fatalf("strict: %v", err)
	}
	if err := checkLoginAckVersion(0x08000000, false); err == nil {
		t.Fatal("TDS 8.0 accepted over a TDS 7.x connection")
	}
}
