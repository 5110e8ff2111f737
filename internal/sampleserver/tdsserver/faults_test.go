package tdsserver_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// readUntilEOF reads packets until the server closes, returning the payload
// bytes and the total bytes (headers included) received.
func (rc *rawClient) readUntilEOF() (payload []byte, total int64, err error) {
	for {
		if _, err := io.ReadFull(rc.br, rc.hdr[:]); err != nil {
			return payload, total, err
		}
		total += 8
		var h decode.Header
		if err := h.Decode(rc.hdr[:]); err != nil {
			return payload, total, err
		}
		start := len(payload)
		payload = append(payload, make([]byte, int(h.Length)-8)...)
		n, err := io.ReadFull(rc.br, payload[start:])
		total += int64(n)
		if err != nil {
			return payload[:start+n], total, err
		}
	}
}

// rowsUntilError decodes as far as possible: rows seen and the error that
// stopped decoding (decode.ErrNeedMore when the bytes simply ended).
func rowsUntilError(payload []byte) (rows int, err error) {
	s := decode.NewStream(decode.StreamOptions{})
	for len(payload) > 0 {
		n, ev, err := s.Next(payload)
		if err != nil {
			return rows, err
		}
		if ev == decode.EventRow {
			rows++
		}
		payload = payload[n:]
	}
	return rows, nil
}

func TestFaultsValidate(t *testing.T) {
	bad := []tdsserver.Faults{
		{CloseAfterRows: -1},
		{StallAfterRows: 5},
		{Stall: time.Second},
		{MalformedAtRow: 3, HostileLengthAtRow: 4},
		{Table: "odbc5"},
		{TrickleBytesPerSec: -5},
	}
	for _, f := range bad {
		if f.Validate() == nil {
			t.Errorf("%+v: Validate accepted it", f)
		}
	}
	good := []tdsserver.Faults{{}, {StallAfterRows: 5, Stall: time.Second}, {Table: "dbo.odbc5", SplitTokens: true}}
	for _, f := range good {
		if err := f.Validate(); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	if _, err := tdsserver.Start(tdsserver.Config{DB: newDB(), Faults: bad[0]}); err == nil {
		t.Fatal("Start accepted invalid faults")
	}
}

// A fault table that names no table would silently never fire: Start and
// SetFaults refuse it and list the tables there are.
func TestFaultTableMustExist(t *testing.T) {
	nosuch := tdsserver.Faults{Table: "nosuch", SplitTokens: true}
	_, err := tdsserver.Start(tdsserver.Config{DB: newDB(), Faults: nosuch})
	if err == nil || !strings.Contains(err.Error(), `"nosuch": no such table`) || !strings.Contains(err.Error(), "sales.orders") {
		t.Fatalf("Start: %v", err)
	}
	s := startServer(t, tdsserver.Config{})
	if err := s.SetFaults(nosuch); err == nil {
		t.Fatal("SetFaults accepted a table that does not exist")
	}
	for _, name := range []string{"odbc5", "dbo.ODBC5", "[orders]", "sales.order_lines", "sys.tables"} {
		if err := s.SetFaults(tdsserver.Faults{Table: name, SplitTokens: true}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFaultCloseAfterRows(t *testing.T) {
	s := startServer(t, tdsserver.Config{Faults: tdsserver.Faults{CloseAfterRows: 777, Table: "odbc5"}})
	rc := dialRaw(t, s, 4096)
	// Another table is not affected.
	evs := rc.batch("SELECT * FROM dbo.poc48", 0)
	if n := countEv(evs, decode.EventRow); int64(n) != testRows["dbo.poc48"] {
		t.Fatalf("poc48: %d rows", n)
	}
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.odbc5"}
	rc.send(decode.PacketSQLBatch, 0, b.Encode(nil))
	payload, _, err := rc.readUntilEOF()
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read: %v", err)
	}
	rows, derr := rowsUntilError(payload)
	if rows != 777 || derr != nil {
		t.Fatalf("%d rows (%v) before the close, want exactly 777 and a clean cut", rows, derr)
	}
}

func TestFaultCloseAfterBytes(t *testing.T) {
	s := startServer(t, tdsserver.Config{Faults: tdsserver.Faults{CloseAfterBytes: 10000}})
	rc := dialRaw(t, s, 4096)
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.odbc5"}
	rc.send(decode.PacketSQLBatch, 0, b.Encode(nil))
	_, total, err := rc.readUntilEOF()
	if err == nil || total != 10000 {
		t.Fatalf("received %d bytes (%v), want exactly 10000 then EOF", total, err)
	}
}

func TestFaultSplitTokens(t *testing.T) {
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db, Faults: tdsserver.Faults{SplitTokens: true}})
	rc := dialRaw(t, s, 4096)
	rc.sizes = map[int]int{}
	evs := rc.batch("SELECT * FROM dbo.type_matrix", 0)
	for size := range rc.sizes {
		if size > 8+13 {
			t.Fatalf("a %d-byte packet with split tokens", size)
		}
	}
	tm, _ := db.Table("dbo", "type_matrix")
	if n := countEv(evs, decode.EventRow); int64(n) != tm.Rows || rc.packets < 100 {
		t.Fatalf("%d rows in %d packets", n, rc.packets)
	}
	// An independent client reads the tiny packets too, cell by cell.
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	readAndCompare(t, conn, "SELECT * FROM dbo.type_matrix", tm.Downgrade(false, false), 0, tm.Rows, true)
	od, _ := db.Table("dbo", "odbc5")
	readAndCompare(t, conn, "SELECT * FROM dbo.odbc5", od, 0, od.Rows, false)
}

func TestFaultMalformedAtRow(t *testing.T) {
	s := startServer(t, tdsserver.Config{Faults: tdsserver.Faults{MalformedAtRow: 100}})
	rc := dialRaw(t, s, 4096)
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.odbc5"}
	rc.send(decode.PacketSQLBatch, 0, b.Encode(nil))
	rows, err := rowsUntilError(rc.read())
	var pe *decode.ProtocolError
	if rows != 99 || !errors.As(err, &pe) {
		t.Fatalf("%d rows, error %v; want 99 rows then a protocol error", rows, err)
	}
	// go-mssqldb fails the query too.
	conn := openMSSQL(t, s, map[string]string{"encrypt": "disable"})
	r, err := conn.Query("SELECT * FROM dbo.odbc5")
	if err == nil {
		n := 0
		for r.Next() {
			n++
		}
		err = r.Err()
		r.Close()
		if n != 99 {
			t.Errorf("go-mssqldb read %d rows", n)
		}
	}
	if err == nil {
		t.Fatal("go-mssqldb accepted a malformed token")
	}
}

func TestFaultHostileLength(t *testing.T) {
	s := startServer(t, tdsserver.Config{Faults: tdsserver.Faults{HostileLengthAtRow: 5}})
	for _, table := range []string{"dbo.lob", "dbo.odbc5"} {
		rc := dialRaw(t, s, 4096)
		b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM " + table}
		rc.send(decode.PacketSQLBatch, 0, b.Encode(nil))
		payload := rc.read()
		rows, err := rowsUntilError(payload)
		if rows != 4 || err == nil {
			t.Fatalf("%s: %d rows, error %v; want 4 rows, then a refused length", table, rows, err)
		}
		if table == "dbo.lob" && !errors.Is(err, decode.ErrTooLarge) {
			t.Errorf("%s: error %v, want ErrTooLarge", table, err)
		}
	}
}

func TestFaultStallAndTimeout(t *testing.T) {
	s := startServer(t, tdsserver.Config{Faults: tdsserver.Faults{StallAfterRows: 50, Stall: time.Hour}})
	conn := mssqlConn(t, s)
	ctx := context.Background()
	// A cancel after a while, as a client-side query timeout would do
	// (go-mssqldb turns a context deadline into a broken connection, but
	// a cancellation into an ATTENTION).
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	rows, err := conn.QueryContext(qctx, "SELECT * FROM dbo.poc48")
	n := 0
	if err == nil {
		for rows.Next() {
			n++
		}
		err = rows.Err()
		rows.Close()
	}
	if n != 50 || err == nil {
		t.Fatalf("read %d rows, error %v; want 50 rows then the cancellation", n, err)
	}
	if a := s.Stats().Attentions; a < 1 {
		t.Fatalf("server saw %d attentions, want the client's cancel", a)
	}
	// The stall ended with the attention; the connection still works.
	var c int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT_BIG(*) FROM sales.products").Scan(&c); err != nil {
		t.Fatalf("after timeout: %v", err)
	}
}

func TestFaultTrickle(t *testing.T) {
	s := startServer(t, tdsserver.Config{Faults: tdsserver.Faults{TrickleBytesPerSec: 400_000}})
	rc := dialRaw(t, s, 4096)
	evs := rc.batch("SELECT TOP (200) * FROM dbo.odbc5 ORDER BY id", 0)
	if n := countEv(evs, decode.EventRow); n != 200 {
		t.Fatalf("%d rows", n)
	}
	if !strings.Contains(strings.Join(evNames(evs[len(evs)-1:]), ""), "DONE") {
		t.Fatal("no final DONE")
	}
}

func TestConfigValidate(t *testing.T) {
	db := newDB()
	for _, cfg := range []tdsserver.Config{
		{},
		{DB: db, Encryption: "sometimes"},
		{DB: db, CertFile: "cert.pem"},
		{DB: db, MaxPacketSize: 100},
		{DB: db, RouteTo: "nohostport"},
		{DB: db, Users: map[string]string{"": "x"}},
	} {
		if s, err := tdsserver.Start(cfg); err == nil {
			s.Close()
			t.Errorf("%+v: Start accepted it", cfg)
		}
	}
}

// TestSetFaults changes the knobs of a running server between requests.
func TestSetFaults(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	rc := dialRaw(t, s, 4096)
	if n := countEv(rc.batch("SELECT * FROM dbo.odbc5", 0), decode.EventRow); int64(n) != testRows["dbo.odbc5"] {
		t.Fatalf("%d rows before SetFaults", n)
	}
	if err := s.SetFaults(tdsserver.Faults{StallAfterRows: 1}); err == nil {
		t.Fatal("SetFaults accepted invalid faults")
	}
	if err := s.SetFaults(tdsserver.Faults{MalformedAtRow: 10}); err != nil {
		t.Fatal(err)
	}
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.odbc5"}
	rc.send(decode.PacketSQLBatch, 0, b.Encode(nil))
	if rows, err := rowsUntilError(rc.read()); rows != 9 || err == nil {
		t.Fatalf("after SetFaults: %d rows, %v", rows, err)
	}
	s.SetFaults(tdsserver.Faults{})
	if n := countEv(rc.batch("SELECT * FROM dbo.odbc5", 0), decode.EventRow); int64(n) != testRows["dbo.odbc5"] {
		t.Fatalf("%d rows after clearing the faults", n)
	}
}
