package tdsserver_test

import (
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

func TestRawLoginResponse(t *testing.T) {
	s := startServer(t, tdsserver.Config{MaxPacketSize: 8192})
	rc := dialRaw(t, s, 32767, decode.UTF8SupportFeature(), decode.JSONSupportFeature())
	if rc.spid < 51 {
		t.Fatalf("SPID %d, want >= 51", rc.spid)
	}
	if rc.packetSize != 8192 {
		t.Fatalf("negotiated packet size %d, want min(32767, 8192)", rc.packetSize)
	}
	envs := map[byte]decode.EnvChange{}
	var ack *decode.LoginAck
	var feat *decode.FeatureExtAck
	for i := range rc.login {
		e := &rc.login[i]
		switch e.ev {
		case decode.EventEnvChange:
			envs[e.env.Type] = e.env
		case decode.EventLoginAck:
			ack = &e.ack
		case decode.EventFeatureExtAck:
			feat = &e.feat
		}
	}
	if ack == nil || ack.TDSVersion != 0x74000004 || ack.ProgName != "Microsoft SQL Server" || ack.ProgVersion[0] != 16 {
		t.Fatalf("LOGINACK %+v", ack)
	}
	if envs[decode.EnvDatabase].NewValue != "sample" || envs[decode.EnvLanguage].NewValue != "us_english" ||
		envs[decode.EnvCollation].Collation.SortID != 52 || envs[decode.EnvPacketSize].NewValue != "8192" {
		t.Fatalf("ENVCHANGEs %+v", envs)
	}
	if feat == nil {
		t.Fatal("no FEATUREEXTACK")
	}
	var ids []byte
	for _, f := range feat.Features {
		ids = append(ids, f.ID)
	}
	if !slices.Equal(ids, []byte{decode.FeatureUTF8Support, decode.FeatureJSONSupport}) {
		t.Fatalf("acknowledged features %v, want UTF8_SUPPORT and JSONSUPPORT only", ids)
	}
	if d := lastDone(t, rc.login); d.Status != 0 {
		t.Fatalf("login DONE status 0x%x", d.Status)
	}

	// A small requested size is honoured, and the server's packets respect it.
	rc2 := dialRaw(t, s, 512)
	if rc2.packetSize != 512 {
		t.Fatalf("packet size %d, want 512", rc2.packetSize)
	}
	rc2.sizes = map[int]int{}
	evs := rc2.batch("SELECT * FROM dbo.odbc5", 0)
	for size := range rc2.sizes {
		if size > 512 {
			t.Fatalf("packet of %d bytes with a negotiated size of 512", size)
		}
	}
	if n := countEv(evs, decode.EventRow); n != int(testRows["dbo.odbc5"]) {
		t.Fatalf("%d rows", n)
	}
	if rc2.spid == rc.spid {
		t.Fatalf("two connections share SPID %d", rc.spid)
	}
}

func TestRawJSONVectorNegotiation(t *testing.T) {
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	tm, _ := db.Table("dbo", "type_matrix")
	hasType := func(cols []decode.Column, typ byte) bool {
		for i := range cols {
			if cols[i].Type.Type == typ {
				return true
			}
		}
		return false
	}
	if !hasType(tm.Columns, decode.TypeJSON) || !hasType(tm.Columns, decode.TypeVector) {
		t.Fatal("type_matrix has no json or vector column to downgrade")
	}
	for _, native := range []bool{true, false} {
		var feats []decode.Feature
		if native {
			feats = []decode.Feature{decode.JSONSupportFeature(), decode.VectorSupportFeature(1)}
		}
		rc := dialRaw(t, s, 4096, feats...)
		evs := rc.batch("SELECT * FROM dbo.type_matrix", 0)
		want := tm.Downgrade(native, native)
		var cols []decode.Column
		var rows [][]any
		for _, e := range evs {
			switch e.ev {
			case decode.EventColMetadata:
				cols = e.cols
			case decode.EventRow:
				rows = append(rows, e.rowVals)
			}
		}
		if hasType(cols, decode.TypeJSON) != native || hasType(cols, decode.TypeVector) != native {
			t.Fatalf("native=%v: json/vector column types sent wrongly", native)
		}
		if int64(len(rows)) != want.Rows {
			t.Fatalf("%d rows, want %d", len(rows), want.Rows)
		}
		var exp []any
		for i, r := range rows {
			exp = want.Row(int64(i), exp)
			for c := range r {
				g, w := canonExpected(r[c], &cols[c].Type), canonExpected(exp[c], &want.Columns[c].Type)
				if g != w {
					t.Errorf("native=%v row %d %s: got %.100s, want %.100s", native, i, cols[c].Name, g, w)
				}
			}
		}
	}
}

func TestRawAttention(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 42, Rows: map[string]int64{"dbo.poc48": 20_000_000}})
	s := startServer(t, tdsserver.Config{DB: db})
	rc := dialRaw(t, s, 4096)

	// Between requests: answered at once with DONE(ATTN).
	rc.c.Write(decode.AppendAttention(nil, 0))
	evs := rc.events(rc.read(), nil)
	if d := lastDone(t, evs); d.Status&decode.DoneAttn == 0 || len(evs) != 1 {
		t.Fatalf("idle attention answered with %v", evNames(evs))
	}

	// In the middle of a 20-million-row result.
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.poc48"}
	rc.send(decode.PacketSQLBatch, 0, b.Encode(nil))
	var payload []byte
	var h decode.Header
	for i := 0; i < 50; i++ { // read some packets first
		if _, err := io.ReadFull(rc.br, rc.hdr[:]); err != nil {
			t.Fatal(err)
		}
		h.Decode(rc.hdr[:])
		start := len(payload)
		payload = append(payload, make([]byte, int(h.Length)-8)...)
		io.ReadFull(rc.br, payload[start:])
	}
	rc.c.Write(decode.AppendAttention(nil, 0))
	rest, err := rc.readErr() // the rest of the message, up to EOM
	if err != nil {
		t.Fatal(err)
	}
	evs = rc.events(append(payload, rest...), nil)
	d := lastDone(t, evs)
	if d.Status&decode.DoneAttn == 0 {
		t.Fatalf("result ended with %v, want DONE(ATTN)", evNames(evs[len(evs)-3:]))
	}
	rows := countEv(evs, decode.EventRow)
	t.Logf("%d rows streamed before the attention was honoured", rows)
	if rows >= 20_000_000 || rows < 50 {
		t.Fatalf("%d rows before the attention was honoured", rows)
	}
	if st := s.Stats(); st.Attentions != 2 {
		t.Fatalf("server counted %d attentions, want 2", st.Attentions)
	}
	// The connection is usable and no second DONE(ATTN) is pending.
	evs = rc.batch("SELECT COUNT_BIG(*) FROM sales.products", 0)
	if countEv(evs, decode.EventRow) != 1 || lastDone(t, evs).Status&decode.DoneAttn != 0 {
		t.Fatalf("after attention: %v", evNames(evs))
	}
}

func TestRawResetConnection(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	rc := dialRaw(t, s, 4096)
	evs := rc.batch("SET ROWCOUNT 3", 0)
	if countEv(evs, decode.EventError) != 0 {
		t.Fatalf("SET ROWCOUNT: %v", evNames(evs))
	}
	evs = rc.batch("SELECT * FROM sales.products", 0)
	if n := countEv(evs, decode.EventRow); n != 3 {
		t.Fatalf("SET ROWCOUNT 3 gave %d rows", n)
	}
	evs = rc.batch("SELECT * FROM sales.products", decode.StatusResetConn)
	if evs[0].ev != decode.EventEnvChange || evs[0].env.Type != decode.EnvResetConnAck {
		t.Fatalf("reset not acknowledged first: %v", evNames(evs))
	}
	if n := countEv(evs, decode.EventRow); int64(n) != testRows["sales.products"] {
		t.Fatalf("after reset %d rows, want all %d (ROWCOUNT reset)", n, testRows["sales.products"])
	}
}

func rpc(t *testing.T, rc *rawClient, reqs ...decode.RPCRequest) []event {
	t.Helper()
	for i := range reqs {
		reqs[i].OutstandingRequests = 1
	}
	b, err := decode.AppendRPCBatch(nil, reqs)
	if err != nil {
		t.Fatal(err)
	}
	rc.send(decode.PacketRPC, 0, b)
	return rc.events(rc.read(), nil)
}

func TestRawRPC(t *testing.T) {
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	rc := dialRaw(t, s, 4096)
	tb, _ := db.Table("dbo", "odbc5")

	// sp_prepare: RETURNSTATUS, RETURNVALUE @handle (int), DONEPROC.
	evs := rpc(t, rc, decode.RPCRequest{ProcID: decode.ProcIDPrepare, Params: []decode.RPCParam{
		decode.Output(decode.NullParam("@handle", decode.TypeInfo{Type: decode.TypeIntN, Size: 4})),
		decode.NVarCharParam("@params", "@lo int, @hi int"),
		decode.NVarCharParam("@stmt", "SELECT id, name FROM dbo.odbc5 WHERE id BETWEEN @lo AND @hi ORDER BY id"),
	}})
	var handle int64 = -1
	for _, e := range evs {
		if e.ev == decode.EventReturnValue {
			if e.rv.Name != "@handle" || e.rv.Type.Type != decode.TypeIntN || e.rv.Status != 0x01 {
				t.Fatalf("RETURNVALUE %+v", e.rv)
			}
			var capt decode.Capture
			capt.Columns([]decode.Column{{Type: e.rv.Type}}, []decode.Mode{0})
			if _, err := decode.DecodeCell(e.rv.Value, &e.rv.Type, 0, &capt); err != nil {
				t.Fatal(err)
			}
			capt.EndRow()
			handle = capt.Rows[0][0].(int64)
		}
	}
	if handle < 0 || evs[len(evs)-1].done.Token != decode.TokenDoneProc || countEv(evs, decode.EventReturnStatus) != 1 {
		t.Fatalf("sp_prepare: %v", evNames(evs))
	}

	// Two sp_execute calls batched in one message, then sp_unprepare.
	exec := func(lo, hi int64) decode.RPCRequest {
		return decode.RPCRequest{ProcID: decode.ProcIDExecute, Params: []decode.RPCParam{
			decode.IntParam("", handle), decode.IntParam("", lo), decode.IntParam("", hi)}}
	}
	evs = rpc(t, rc, exec(5, 7), exec(100, 100))
	var got [][]any
	var procs []decode.Done
	for _, e := range evs {
		switch {
		case e.ev == decode.EventRow:
			got = append(got, e.rowVals)
		case e.ev == decode.EventDone && e.done.Token == decode.TokenDoneProc:
			procs = append(procs, e.done)
		}
	}
	if len(procs) != 2 || procs[0].Status&decode.DoneMore == 0 || procs[1].Status&decode.DoneMore != 0 {
		t.Fatalf("batched RPCs: %v", evNames(evs))
	}
	wantIDs := []int64{5, 6, 7, 100}
	if len(got) != len(wantIDs) {
		t.Fatalf("rows %v", got)
	}
	for i, id := range wantIDs {
		r := tb.Row(id-1, nil)
		if got[i][0] != id || canonExpected(got[i][1], nil) != canonExpected(r[2], nil) {
			t.Fatalf("row %d: got %v, want id %d name %v", i, got[i], id, r[2])
		}
	}
	evs = rpc(t, rc, decode.RPCRequest{ProcID: decode.ProcIDUnprepare, Params: []decode.RPCParam{decode.IntParam("", handle)}})
	if countEv(evs, decode.EventError) != 0 {
		t.Fatalf("sp_unprepare: %v", evNames(evs))
	}
	evs = rpc(t, rc, exec(1, 2))
	if countEv(evs, decode.EventError) != 1 || evs[len(evs)-1].done.Status&decode.DoneError == 0 {
		t.Fatalf("sp_execute after sp_unprepare: %v", evNames(evs))
	}

	// sp_executesql by name, and an unknown procedure.
	evs = rpc(t, rc, decode.RPCRequest{ProcName: "sp_executesql", Params: []decode.RPCParam{
		decode.NVarCharParam("", "SELECT COUNT_BIG(*) FROM dbo.odbc5 WHERE id <= @n"),
		decode.NVarCharParam("", "@n bigint"),
		decode.IntParam("@n", 42),
	}}, decode.RPCRequest{ProcName: "no_such_proc"})
	var count any
	for _, e := range evs {
		if e.ev == decode.EventRow {
			count = e.rowVals[0]
		}
	}
	if count != int64(42) {
		t.Fatalf("sp_executesql count = %v (%v)", count, evNames(evs))
	}
	if countEv(evs, decode.EventError) != 1 {
		t.Fatalf("unknown procedure: %v", evNames(evs))
	}
	for _, e := range evs {
		if e.ev == decode.EventError && e.msg.Number != 2812 {
			t.Fatalf("unknown procedure: error %d %s", e.msg.Number, e.msg.Text)
		}
	}
}

func TestRawRouting(t *testing.T) {
	target := startServer(t, tdsserver.Config{})
	gw := startServer(t, tdsserver.Config{RouteTo: target.Addr()})
	rc := dialRaw(t, gw, 4096)
	var route *decode.EnvChange
	for i := range rc.login {
		if rc.login[i].ev == decode.EventEnvChange && rc.login[i].env.Type == decode.EnvRouting {
			route = &rc.login[i].env
		}
	}
	if route == nil || route.Routing.Server != "127.0.0.1" || int(route.Routing.Port) != target.Port() {
		t.Fatalf("routing ENVCHANGE %+v", route)
	}
	if _, err := rc.readErr(); !errors.Is(err, io.EOF) {
		t.Fatalf("gateway kept the connection open: %v", err)
	}
}

// TestHostileClient sends malformed messages at every stage; the server
// must drop those connections (never panic, never hang) and keep serving.
func TestHostileClient(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	login := func() *rawClient { return dialRaw(t, s, 4096) }
	cases := map[string]func(c net.Conn){
		"garbage before PRELOGIN": func(c net.Conn) { c.Write([]byte("GET / HTTP/1.1\r\n\r\n")) },
		"short packet length": func(c net.Conn) {
			c.Write([]byte{0x12, 0x01, 0x00, 0x04, 0, 0, 1, 0})
		},
		"PRELOGIN option past the end": func(c net.Conn) {
			c.Write(decode.AppendMessage(nil, decode.PacketPrelogin, 0, 0, 4096, 1, []byte{0x00, 0x00, 0x40, 0x00, 0x06, 0xFF}))
		},
		"truncated message": func(c net.Conn) {
			c.Write([]byte{0x12, 0x00, 0x10, 0x00, 0, 0, 1, 0, 1, 2, 3})
		},
	}
	for name, send := range cases {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		send(c)
		if name == "truncated message" {
			c.(*net.TCPConn).CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("%s: server did not close the connection: %v", name, err)
		}
		c.Close()
	}
	// After login: a malformed SQLBatch, a malformed RPC, an unknown type.
	for name, msg := range map[string][]byte{
		"batch with a bad ALL_HEADERS": decode.AppendMessage(nil, decode.PacketSQLBatch, 0, 0, 4096, 1, []byte{0xFF, 0xFF, 0, 0, 1}),
		"RPC with a bad parameter":     decode.AppendMessage(nil, decode.PacketRPC, 0, 0, 4096, 1, append(make([]byte, 0), 0x16, 0, 0, 0, 0x12, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 0, 0, 0, 0xE7, 0x40, 0x1F)),
		"bulk load packet":             decode.AppendMessage(nil, decode.PacketBulkLoad, 0, 0, 4096, 1, []byte{1, 2, 3}),
	} {
		rc := login()
		rc.c.Write(msg)
		rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(rc.c); err != nil {
			t.Errorf("%s: server did not close the connection: %v", name, err)
		}
	}
	// The server still serves.
	rc := login()
	if evs := rc.batch("SELECT COUNT_BIG(*) FROM sales.products", 0); countEv(evs, decode.EventRow) != 1 {
		t.Fatalf("after hostile clients: %v", evNames(evs))
	}
}

func TestRawUseAndSet(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	rc := dialRaw(t, s, 4096)
	evs := rc.batch("SET NOCOUNT ON; USE master; USE [sample]", 0)
	var dbs []string
	for _, e := range evs {
		if e.ev == decode.EventEnvChange && e.env.Type == decode.EnvDatabase {
			dbs = append(dbs, e.env.OldValue+">"+e.env.NewValue)
		}
	}
	if !slices.Equal(dbs, []string{"sample>master", "master>sample"}) || countEv(evs, decode.EventInfo) != 2 {
		t.Fatalf("USE: %v %v", dbs, evNames(evs))
	}
	if d := lastDone(t, evs); d.Status&(decode.DoneMore|decode.DoneError) != 0 {
		t.Fatalf("final DONE status 0x%x", d.Status)
	}
	// FMTONLY: metadata, no rows (what freebcp relies on).
	evs = rc.batch("SET FMTONLY ON SELECT * FROM dbo.odbc5 SET FMTONLY OFF", 0)
	if countEv(evs, decode.EventColMetadata) != 1 || countEv(evs, decode.EventRow) != 0 {
		t.Fatalf("FMTONLY: %v", evNames(evs))
	}
	// An error stops the batch after the results before it.
	evs = rc.batch("SELECT TOP (2) * FROM sales.products; SELECT * FROM dbo.nosuch; SELECT 1", 0)
	if countEv(evs, decode.EventRow) != 2 || countEv(evs, decode.EventError) != 1 || lastDone(t, evs).Status&decode.DoneError == 0 {
		t.Fatalf("error in batch: %v", evNames(evs))
	}
}

// TestRawIgnoredRequest: a request abandoned with IGNORE|EOM is discarded
// (DONE with DONE_ERROR, nothing executed) and the connection goes on.
func TestRawIgnoredRequest(t *testing.T) {
	s := startServer(t, tdsserver.Config{})
	rc := dialRaw(t, s, 4096)
	b := decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM sales.products"}
	rc.send(decode.PacketSQLBatch, decode.StatusIgnore, b.Encode(nil))
	evs := rc.events(rc.read(), nil)
	if len(evs) != 1 || evs[0].done.Status&decode.DoneError == 0 || s.Stats().Queries != 0 {
		t.Fatalf("ignored request answered with %v (stats %+v)", evNames(evs), s.Stats())
	}
	if evs := rc.batch("SELECT COUNT_BIG(*) FROM sales.products", 0); countEv(evs, decode.EventRow) != 1 {
		t.Fatalf("after an ignored request: %v", evNames(evs))
	}
}
