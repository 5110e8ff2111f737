package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// testRows keeps the integration tests fast: small row counts per table,
// except poc48, which the cancellation tests need large enough that a
// response cannot complete before the cancel.
var testRows = map[string]int64{
	"dbo.poc48": 200_000, "dbo.odbc5": 2000, "dbo.wide601": 200, "dbo.lob": 200,
	"dbo.lob_nvarchar": 20, "dbo.temporal": 2000, "dbo.lineitem": 2000,
}

var testDB = sampledb.New(sampledb.Config{Seed: 42, Rows: testRows})

// startServer starts a test server (TLS "on" with its generated CA unless
// mut changes it) and returns it with a matching client Config.
func startServer(t testing.TB, mut func(*tdsserver.Config)) (*tdsserver.Server, Config) {
	t.Helper()
	scfg := tdsserver.Config{Addr: "127.0.0.1:0", DB: testDB, Encryption: tdsserver.EncryptOn}
	if mut != nil {
		mut(&scfg)
	}
	srv, err := tdsserver.Start(scfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := srv.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	return srv, Config{
		Host: "127.0.0.1", Port: srv.Port(), User: tdsserver.DefaultUser, Password: tdsserver.DefaultPassword,
		Database: "sample", Encrypt: EncryptMandatory, CAFile: ca,
		ConnectTimeout: 20 * time.Second,
	}
}

// startFaulty starts a test server that injects faults.
func startFaulty(t testing.TB, faults tdsserver.Faults) (*tdsserver.Server, Config) {
	t.Helper()
	return startServer(t, func(s *tdsserver.Config) { s.Faults = faults })
}

// bothReadModes runs a session test with read-ahead (the default) and
// without (the request goroutine reads the socket itself).
func bothReadModes(t *testing.T, f func(t *testing.T, readAhead int)) {
	t.Run("readahead", func(t *testing.T) { f(t, 0) })
	t.Run("direct", func(t *testing.T) { f(t, -1) })
}

// connectFaulty starts a server with faults and connects to it with
// readAhead as the session's ReadAhead.
func connectFaulty(t *testing.T, faults tdsserver.Faults, readAhead int) (*tdsserver.Server, *Conn) {
	t.Helper()
	srv, cfg := startFaulty(t, faults)
	cfg.ReadAhead = readAhead
	return srv, mustConnect(t, cfg)
}

func mustConnect(t testing.TB, cfg Config) *Conn {
	t.Helper()
	c, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// checkTable reads schema.name completely and compares every row with
// sampledb's Row(i).
func checkTable(t *testing.T, c *Conn, tab *sampledb.Table) { checkTableTop(t, c, tab, tab.Rows) }

// checkTableTop reads the first rows of schema.name (SELECT TOP rows).
func checkTableTop(t *testing.T, c *Conn, tab *sampledb.Table, rows int64) {
	t.Helper()
	var cap decode.Capture
	sql := fmt.Sprintf("SELECT * FROM [%s].[%s]", tab.Schema, tab.Name)
	if rows < tab.Rows {
		sql = fmt.Sprintf("SELECT TOP %d * FROM [%s].[%s]", rows, tab.Schema, tab.Name)
	}
	res, err := c.Query(context.Background(), Query{SQL: sql, Timeout: TimeoutOf(time.Minute)}, &cap)
	if err != nil {
		t.Fatalf("%s: %v", tab.FullName(), err)
	}
	if cap.Err != nil {
		t.Fatalf("%s: sink protocol: %v", tab.FullName(), cap.Err)
	}
	if res.Rows != rows || int64(len(cap.Rows)) != rows {
		t.Fatalf("%s: %d rows (captured %d), want %d", tab.FullName(), res.Rows, len(cap.Rows), rows)
	}
	if len(res.RowCounts) == 0 || res.RowCounts[len(res.RowCounts)-1] != rows {
		t.Errorf("%s: DONE row counts %v", tab.FullName(), res.RowCounts)
	}
	var want []any
	for i := int64(0); i < rows; i++ {
		want = tab.Row(i, want)
		if !reflect.DeepEqual(cap.Rows[i], want) {
			for j := range want {
				if !reflect.DeepEqual(cap.Rows[i][j], want[j]) {
					t.Fatalf("%s row %d col %s: got %#v, want %#v", tab.FullName(), i, tab.Columns[j].Name, cap.Rows[i][j], want[j])
				}
			}
			t.Fatalf("%s row %d differs", tab.FullName(), i)
		}
	}
}

func TestIntegrationEverySampleTable(t *testing.T) { bothReadModes(t, testIntegrationEverySampleTable) }

func testIntegrationEverySampleTable(t *testing.T, readAhead int) {
	_, cfg := startServer(t, nil)
	cfg.ReadAhead = readAhead
	c := mustConnect(t, cfg)
	if !c.Info().Encrypted || c.Info().PacketSize != maxPacketSize {
		t.Fatalf("session: %+v", c.Info())
	}
	n := 0
	for _, tab := range testDB.Tables() {
		if tab.Rows > 50_000 {
			continue // poc48 is read by the packet-size test
		}
		t.Run(tab.FullName(), func(t *testing.T) { checkTable(t, c, tab) })
		n++
	}
	if n < 10 {
		t.Fatalf("only %d tables", n)
	}
}

func TestIntegrationPacketSizes(t *testing.T) {
	tab, _ := testDB.Table("dbo", "poc48")
	for _, size := range []int{512, 4096, 32767} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			_, cfg := startServer(t, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
			cfg.Encrypt, cfg.PacketSize = EncryptDisable, size
			c := mustConnect(t, cfg)
			if got := c.Info().PacketSize; got != size {
				t.Fatalf("negotiated %d", got)
			}
			checkTableTop(t, c, tab, 10_000)
		})
	}
	// The server grants less than asked: the ENVCHANGE wins.
	_, cfg := startServer(t, func(s *tdsserver.Config) { s.MaxPacketSize = 1024 })
	if c := mustConnect(t, cfg); c.Info().PacketSize != 1024 {
		t.Fatalf("negotiated %d, want 1024", c.Info().PacketSize)
	}
}

func TestIntegrationSplitTokens(t *testing.T) {
	_, cfg := startFaulty(t, tdsserver.Faults{SplitTokens: true, Table: "temporal"})
	c := mustConnect(t, cfg)
	tab, _ := testDB.Table("dbo", "temporal")
	checkTable(t, c, tab)
}

func TestIntegrationTLSModes(t *testing.T) {
	modes := []tdsserver.Encryption{tdsserver.EncryptOff, tdsserver.EncryptOn, tdsserver.EncryptRequired, tdsserver.EncryptNotSup, tdsserver.EncryptStrict}
	// ok[server][client]: "" fails; "tls" full TLS; "plain" unencrypted after login.
	want := map[tdsserver.Encryption]map[EncryptMode]string{
		tdsserver.EncryptOff:      {EncryptDisable: "plain", EncryptOptional: "plain", EncryptMandatory: "tls"},
		tdsserver.EncryptOn:       {EncryptDisable: "plain", EncryptOptional: "tls", EncryptMandatory: "tls"},
		tdsserver.EncryptRequired: {EncryptOptional: "tls", EncryptMandatory: "tls"},
		tdsserver.EncryptNotSup:   {EncryptDisable: "plain", EncryptOptional: "plain"},
		tdsserver.EncryptStrict:   {EncryptStrict: "tls"},
	}
	for _, sm := range modes {
		_, cfg := startServer(t, func(s *tdsserver.Config) { s.Encryption = sm })
		for _, cm := range []EncryptMode{EncryptDisable, EncryptOptional, EncryptMandatory, EncryptStrict} {
			t.Run(fmt.Sprintf("server_%s/client_%s", sm, cm), func(t *testing.T) {
				cfg := cfg
				cfg.Encrypt = cm
				cfg.ConnectTimeout = 5 * time.Second
				c, err := Connect(context.Background(), cfg)
				exp := want[sm][cm]
				if exp == "" {
					if err == nil {
						c.Close()
						t.Fatal("connected, want failure")
					}
					return
				}
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer c.Close()
				if got := c.Info().Encrypted; got != (exp == "tls") {
					t.Fatalf("encrypted = %v, want %s", got, exp)
				}
				var cap decode.Capture
				if _, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 10 * FROM dbo.odbc5"}, &cap); err != nil || len(cap.Rows) != 10 {
					t.Fatalf("query: %v, %d rows", err, len(cap.Rows))
				}
			})
		}
	}
}

func TestIntegrationCertificates(t *testing.T) {
	_, cfg := startServer(t, nil)
	cases := []struct {
		name string
		mut  func(*Config)
		ok   bool
	}{
		{"ca file", func(c *Config) {}, true},
		{"localhost name", func(c *Config) { c.Host = "localhost" }, true},
		{"system pool rejects the test CA", func(c *Config) { c.CAFile = "" }, false},
		{"trust server certificate opt-in", func(c *Config) { c.CAFile = ""; c.TrustServerCertificate = true }, true},
		{"wrong host name", func(c *Config) { c.HostNameInCertificate = "db.example.com" }, false},
		{"host name override", func(c *Config) { c.Host = "127.0.0.1"; c.HostNameInCertificate = "localhost" }, true},
		{"strict verifies too", func(c *Config) { c.Encrypt = EncryptStrict; c.CAFile = "" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfg
			tc.mut(&cfg)
			c, err := Connect(context.Background(), cfg)
			if c != nil {
				c.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestIntegrationWrongPassword(t *testing.T) {
	srv, cfg := startServer(t, nil)
	cfg.Password = "wrong;@# password"
	_, err := Connect(context.Background(), cfg)
	var se *ServerError
	if !errors.As(err, &se) || se.Number != 18456 {
		t.Fatalf("err = %v", err)
	}
	if IsTransient(err) {
		t.Fatal("a wrong password is not transient")
	}
	if strings.Contains(err.Error(), "wrong;@#") || strings.Contains(fmt.Sprintf("%+v", cfg), "wrong;@#") {
		t.Fatal("password leaked")
	}
	if srv.Stats().LoginFailures != 1 {
		t.Fatalf("stats %+v", srv.Stats())
	}
	// Password from the environment and from a file.
	t.Setenv("ENGINE_IT_PW", tdsserver.DefaultPassword)
	cfg.Password, cfg.PasswordEnv = "", "ENGINE_IT_PW"
	mustConnect(t, cfg)
}

func TestIntegrationAccessToken(t *testing.T) {
	_, cfg := startServer(t, func(s *tdsserver.Config) { s.AccessTokens = map[string]string{"eyJ0b2tlbi1vbmU": "sa"} })
	cfg.User, cfg.Password = "", ""
	t.Setenv(AccessTokenEnv, "eyJ0b2tlbi1vbmU")
	c := mustConnect(t, cfg)
	var cap decode.Capture
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 1 * FROM dbo.odbc5"}, &cap); err != nil {
		t.Fatal(err)
	}
	t.Setenv(AccessTokenEnv, "bad")
	if _, err := Connect(context.Background(), cfg); err == nil {
		t.Fatal("bad token accepted")
	}
}

func TestIntegrationRouting(t *testing.T) {
	target, cfg := startServer(t, nil)
	// The gateway does no TLS (each test server has its own CA); the routed
	// connection is verified against the target's CA.
	gw, _ := startServer(t, func(s *tdsserver.Config) { s.RouteTo = target.Addr(); s.Encryption = tdsserver.EncryptNotSup })
	gwCfg := cfg
	gwCfg.Port = gw.Port()
	gwCfg.Encrypt = EncryptOptional
	c := mustConnect(t, gwCfg)
	if c.Info().RoutedFrom == "" || c.port != target.Port() || !c.Info().Encrypted {
		t.Fatalf("not routed: %+v", c.Info())
	}
	tab, _ := testDB.Table("dbo", "odbc5")
	checkTable(t, c, tab)
	if target.Stats().Logins != 1 || gw.Stats().Logins != 1 {
		t.Fatalf("logins: gateway %d, target %d", gw.Stats().Logins, target.Stats().Logins)
	}
	// A route to a server that routes again is refused (one hop only).
	gw2, _ := startServer(t, func(s *tdsserver.Config) { s.RouteTo = gw.Addr(); s.Encryption = tdsserver.EncryptNotSup })
	gwCfg.Port = gw2.Port()
	if _, err := Connect(context.Background(), gwCfg); err == nil || !strings.Contains(err.Error(), "routed us again") {
		t.Fatalf("double routing: %v", err)
	}
}

func TestIntegrationServerErrorKeepsSession(t *testing.T) {
	_, cfg := startServer(t, nil)
	c := mustConnect(t, cfg)
	_, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.no_such_table"}, nil)
	var se *ServerError
	if !errors.As(err, &se) || se.Number != 208 || !strings.HasPrefix(se.Error(), "mssql: ") {
		t.Fatalf("err = %v", err)
	}
	var cap decode.Capture
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 5 * FROM dbo.odbc5"}, &cap); err != nil || len(cap.Rows) != 5 {
		t.Fatalf("after error: %v %d", err, len(cap.Rows))
	}
}

func TestIntegrationSeveralResultSetsAndMessages(t *testing.T) {
	_, cfg := startServer(t, nil)
	c := mustConnect(t, cfg)
	var infos int
	var cap decode.Capture
	res, err := c.Query(context.Background(), Query{
		SQL:       "SELECT TOP 3 * FROM dbo.odbc5; SELECT TOP 4 * FROM dbo.temporal; USE sample",
		OnMessage: func(m *decode.Message) { infos++ },
	}, &cap)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResultSets != 2 || cap.Sets != 2 || res.Rows != 7 || len(cap.Rows) != 4 {
		t.Fatalf("result %+v, capture sets %d rows %d", res, cap.Sets, len(cap.Rows))
	}
	if len(res.RowCounts) < 2 || res.RowCounts[0] != 3 || res.RowCounts[1] != 4 {
		t.Fatalf("row counts %v", res.RowCounts)
	}
	if infos != len(res.Messages) || c.Info().Database != "sample" {
		t.Fatalf("infos %d messages %d db %q", infos, len(res.Messages), c.Info().Database)
	}
}

func TestIntegrationRPCParams(t *testing.T) {
	_, cfg := startServer(t, nil)
	c := mustConnect(t, cfg)
	tab, _ := testDB.Table("dbo", "odbc5")
	key := tab.Columns[tab.KeyColumn()].Name
	var cap decode.Capture
	res, err := c.Query(context.Background(), Query{
		SQL:    fmt.Sprintf("SELECT * FROM dbo.odbc5 WHERE %s >= @lo AND %s < @hi", key, key),
		Params: []Param{{Name: "lo", Value: 11}, {Name: "@hi", Value: int64(21)}},
	}, &cap)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 10 || len(cap.Rows) != 10 {
		t.Fatalf("rows %d", res.Rows)
	}
	var want []any
	for i := range cap.Rows {
		r, _ := tab.RowForKey(int64(11 + i))
		want = tab.Row(r, want)
		if !reflect.DeepEqual(cap.Rows[i], want) {
			t.Fatalf("row %d: %v want %v", i, cap.Rows[i], want)
		}
	}
}

// sleepySink sleeps between rows: consumer time that must not be charged.
type sleepySink struct {
	decode.Capture
	every int
	sleep time.Duration
	n     int
	onRow func(n int)
}

func (s *sleepySink) EndRow() error {
	s.n++
	if s.every > 0 && s.n%s.every == 0 {
		time.Sleep(s.sleep)
	}
	if s.onRow != nil {
		s.onRow(s.n)
	}
	return s.Capture.EndRow()
}

func TestIntegrationSlowConsumerNotCharged(t *testing.T) {
	bothReadModes(t, testIntegrationSlowConsumerNotCharged)
}

func testIntegrationSlowConsumerNotCharged(t *testing.T, readAhead int) {
	_, cfg := startServer(t, nil)
	cfg.ReadAhead = readAhead
	c := mustConnect(t, cfg)
	// 20 sleeps of 60 ms = 1.2 s of consumer time against a 400 ms budget.
	sink := &sleepySink{every: 100, sleep: 60 * time.Millisecond}
	res, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 2000 * FROM dbo.odbc5", Timeout: TimeoutOf(400 * time.Millisecond)}, sink)
	if err != nil {
		t.Fatalf("slow consumer was charged: %v", err)
	}
	if res.Rows != 2000 {
		t.Fatalf("rows %d", res.Rows)
	}
}

func TestIntegrationStalledServerTimesOut(t *testing.T) {
	bothReadModes(t, testIntegrationStalledServerTimesOut)
}

func testIntegrationStalledServerTimesOut(t *testing.T, readAhead int) {
	srv, c := connectFaulty(t, tdsserver.Faults{StallAfterRows: 1000, Stall: 30 * time.Second, Table: "poc48"}, readAhead)
	const budget = time.Second
	start := time.Now()
	res, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48", Timeout: TimeoutOf(budget)}, &sleepySink{})
	took := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Drained || !IsTransient(err) {
		t.Fatalf("err = %v (%T)", err, err)
	}
	if res.Rows < 1000 {
		t.Fatalf("rows before the stall: %d", res.Rows)
	}
	// Budget plus a generous tolerance (a shared 2-core machine), far
	// below the 30 s stall.
	if took > budget+5*time.Second {
		t.Fatalf("timed out after %v with a %v budget", took, budget)
	}
	if srv.Stats().Attentions != 1 {
		t.Fatalf("attentions %d", srv.Stats().Attentions)
	}
	// The session survived: the next query works.
	var cap decode.Capture
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 3 * FROM dbo.odbc5", Timeout: TimeoutOf(time.Minute)}, &cap); err != nil || len(cap.Rows) != 3 {
		t.Fatalf("after timeout: %v %d", err, len(cap.Rows))
	}
}

func TestIntegrationNoTimeoutNeverFires(t *testing.T) {
	bothReadModes(t, testIntegrationNoTimeoutNeverFires)
}

func testIntegrationNoTimeoutNeverFires(t *testing.T, readAhead int) {
	_, c := connectFaulty(t, tdsserver.Faults{StallAfterRows: 100, Stall: 700 * time.Millisecond, Table: "odbc5"}, readAhead)
	res, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 500 * FROM dbo.odbc5", Timeout: NoTimeout}, nil)
	if err != nil || res.Rows != 500 {
		t.Fatalf("%v, %d rows", err, res.Rows)
	}
	if c.w.rArmed {
		t.Fatal("NoTimeout left a deadline armed")
	}
}

// TestIntegrationBudgetSpentOnLogin: a budget partly spent on connecting is
// still a budget (it times out a stalled read), and an exhausted one too.
func TestIntegrationBudgetSpentOnLogin(t *testing.T) {
	bothReadModes(t, testIntegrationBudgetSpentOnLogin)
}

func testIntegrationBudgetSpentOnLogin(t *testing.T, readAhead int) {
	_, cfg := startFaulty(t, tdsserver.Faults{StallAfterRows: 10, Stall: 30 * time.Second, Table: "odbc5"})
	cfg.ReadAhead = readAhead
	c, left, err := ConnectWithin(context.Background(), cfg, TimeoutOf(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, ok := left.Budget()
	if !ok || d >= 10*time.Second || d <= 0 {
		t.Fatalf("remaining %v", left)
	}
	left = left.Spend(d - 200*time.Millisecond) // pretend the login was slow
	start := time.Now()
	_, err = c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.odbc5", Timeout: left}, nil)
	var te *TimeoutError
	if !errors.As(err, &te) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	// Exhausted: fails at once, never waits for the stall.
	start = time.Now()
	_, err = c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.odbc5", Timeout: left.Spend(time.Hour)}, nil)
	if !errors.As(err, &te) || time.Since(start) > 5*time.Second {
		t.Fatalf("exhausted: err = %v after %v", err, time.Since(start))
	}
	var cap decode.Capture
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 3 * FROM dbo.temporal", Timeout: TimeoutOf(time.Minute)}, &cap); err != nil || len(cap.Rows) != 3 {
		t.Fatalf("after: %v", err)
	}
}

func TestIntegrationCancelMidTable(t *testing.T) { bothReadModes(t, testIntegrationCancelMidTable) }

func testIntegrationCancelMidTable(t *testing.T, readAhead int) {
	srv, cfg := startServer(t, nil)
	cfg.ReadAhead = readAhead
	c := mustConnect(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := &sleepySink{onRow: func(n int) {
		if n == 5000 {
			cancel()
		}
	}}
	start := time.Now()
	res, err := c.Query(ctx, Query{SQL: "SELECT * FROM dbo.poc48", Timeout: NoTimeout}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if res.Rows < 5000 || res.Rows > 5000+cancelPollRows {
		t.Fatalf("cancelled after %d rows, want 5000..%d (checked between rows)", res.Rows, 5000+cancelPollRows)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("cancel took %v", took)
	}
	if srv.Stats().Attentions != 1 || c.attentions != 1 {
		t.Fatalf("attentions: server %d, client %d", srv.Stats().Attentions, c.attentions)
	}
	tab, _ := testDB.Table("dbo", "odbc5")
	checkTable(t, c, tab)
}

func TestIntegrationCancelDuringWait(t *testing.T) { bothReadModes(t, testIntegrationCancelDuringWait) }

func testIntegrationCancelDuringWait(t *testing.T, readAhead int) {
	srv, c := connectFaulty(t, tdsserver.Faults{StallAfterRows: 100, Stall: 30 * time.Second, Table: "poc48"}, readAhead)
	ctx, cancel := context.WithCancel(context.Background())
	var rows atomic.Int64
	sink := &sleepySink{onRow: func(n int) {
		if rows.Add(1) == 100 {
			time.AfterFunc(200*time.Millisecond, cancel)
		}
	}}
	start := time.Now()
	_, err := c.Query(ctx, Query{SQL: "SELECT * FROM dbo.poc48", Timeout: TimeoutOf(time.Minute)}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("cancel took %v", took)
	}
	if srv.Stats().Attentions != 1 {
		t.Fatalf("attentions %d", srv.Stats().Attentions)
	}
	var cap decode.Capture
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT TOP 2 * FROM dbo.odbc5"}, &cap); err != nil || len(cap.Rows) != 2 {
		t.Fatalf("after cancel: %v", err)
	}
	// A context cancelled before the query does not touch the session.
	if _, err := c.Query(ctx, Query{SQL: "SELECT 1"}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("pre-cancelled: %v", err)
	}
}

func TestIntegrationConnectionDropIsTransient(t *testing.T) {
	bothReadModes(t, testIntegrationConnectionDropIsTransient)
}

func testIntegrationConnectionDropIsTransient(t *testing.T, readAhead int) {
	_, c := connectFaulty(t, tdsserver.Faults{CloseAfterRows: 50, Table: "odbc5"}, readAhead)
	_, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.odbc5"}, nil)
	if err == nil || !IsTransient(err) || !c.Broken() {
		t.Fatalf("err = %v (transient %v, broken %v)", err, IsTransient(err), c.Broken())
	}
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT 1"}, nil); !errors.Is(err, ErrConnBroken) {
		t.Fatalf("after drop: %v", err)
	}
}

func TestIntegrationMalformedClosesSession(t *testing.T) {
	_, cfg := startFaulty(t, tdsserver.Faults{MalformedAtRow: 10, Table: "odbc5"})
	c := mustConnect(t, cfg)
	_, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.odbc5"}, nil)
	var pe *decode.ProtocolError
	if !errors.As(err, &pe) || !c.Broken() {
		t.Fatalf("err = %v", err)
	}
}

func TestIntegrationHostileLengthBounded(t *testing.T) {
	bothReadModes(t, testIntegrationHostileLengthBounded)
}

func testIntegrationHostileLengthBounded(t *testing.T, readAhead int) {
	_, cfg := startFaulty(t, tdsserver.Faults{HostileLengthAtRow: 3, Table: "lob"})
	cfg.ResidencyCap = 1 << 20
	cfg.ReadAhead = readAhead
	c := mustConnect(t, cfg)
	var cap decode.Capture
	_, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.lob"}, &cap)
	if err == nil || !c.Broken() {
		t.Fatalf("err = %v", err)
	}
	if len(c.buf) > c.maxBuf {
		t.Fatalf("buffer grew to %d", len(c.buf))
	}
}

// TestIntegrationNamedInstance resolves a named instance through a fake SQL
// Browser on loopback UDP, then logs in on the port it names.
func TestIntegrationNamedInstance(t *testing.T) {
	srv, cfg := startServer(t, nil)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no UDP on loopback: %v", err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 2 || buf[0] != 0x04 || string(buf[1:n-1]) != "SQLEXPRESS" {
				continue
			}
			s := fmt.Sprintf("ServerName;H;InstanceName;SQLEXPRESS;IsClustered;No;Version;16.0;tcp;%d;;", srv.Port())
			_, _ = pc.WriteTo(append([]byte{0x05, byte(len(s)), byte(len(s) >> 8)}, s...), addr)
		}
	}()
	s := fmt.Sprintf(`Server=127.0.0.1\SQLEXPRESS;User ID=sa;Password=%s;Encrypt=true;Certificate=%s`, tdsserver.DefaultPassword, cfg.CAFile)
	icfg, err := ParseConnString(s)
	if err != nil {
		t.Fatal(err)
	}
	icfg.BrowserPort = pc.LocalAddr().(*net.UDPAddr).Port
	c := mustConnect(t, icfg)
	if c.port != srv.Port() {
		t.Fatalf("port %d, want %d", c.port, srv.Port())
	}
}

// failingSink fails EndRow at row n.
type failingSink struct {
	decode.Discard
	n, at int
}

var errSinkTest = errors.New("sink: disk full")

func (s *failingSink) EndRow() error {
	s.n++
	if s.n == s.at {
		return errSinkTest
	}
	return nil
}

type columnsFail struct{ decode.Discard }

func (columnsFail) Columns([]decode.Column, []decode.Mode) error { return errSinkTest }

func TestIntegrationSinkErrorCancels(t *testing.T) {
	srv, cfg := startServer(t, nil)
	c := mustConnect(t, cfg)
	res, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48", Timeout: TimeoutOf(time.Minute)}, &failingSink{at: 1000})
	if !errors.Is(err, errSinkTest) || res.Rows != 999 {
		t.Fatalf("err = %v, rows %d", err, res.Rows)
	}
	if srv.Stats().Attentions != 1 || c.Broken() {
		t.Fatalf("attentions %d broken %v", srv.Stats().Attentions, c.Broken())
	}
	tab, _ := testDB.Table("dbo", "temporal")
	checkTableTop(t, c, tab, 100)
	// A sink that refuses the columns: the same, before any row.
	res, err = c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48", Timeout: TimeoutOf(time.Minute)}, &columnsFail{})
	if !errors.Is(err, errSinkTest) || res.Rows != 0 || c.Broken() || srv.Stats().Attentions != 2 {
		t.Fatalf("columns: err = %v, rows %d, broken %v", err, res.Rows, c.Broken())
	}
	checkTableTop(t, c, tab, 100)
	// An exhausted budget fails a connect at once.
	if _, _, err := ConnectWithin(context.Background(), cfg, TimeoutOf(0)); !errors.As(err, new(*TimeoutError)) {
		t.Fatalf("exhausted connect: %v", err)
	}
	// Busy: a Conn runs one request at a time.
	c.busy.Store(true)
	if _, err := c.Query(context.Background(), Query{SQL: "SELECT 1"}, nil); !errors.Is(err, ErrConnBusy) {
		t.Fatalf("busy: %v", err)
	}
	c.busy.Store(false)
}

// OnProgress is called from the read loop every ProgressRows rows with the
// rows so far (the job runner's progress bars), nothing per cell; the
// session's WireBytes counts what arrived.
func TestIntegrationProgress(t *testing.T) {
	_, cfg := startServer(t, nil)
	c := mustConnect(t, cfg)
	var got []int64
	q := Query{SQL: "SELECT TOP 20000 * FROM dbo.poc48", OnProgress: func(n int64) { got = append(got, n) }}
	res, err := c.Query(context.Background(), q, nil)
	if err != nil || res.Rows != 20000 {
		t.Fatalf("%v, %d rows", err, res.Rows)
	}
	if want := []int64{ProgressRows, 2 * ProgressRows}; !slices.Equal(got, want) {
		t.Fatalf("progress calls %v, want %v", got, want)
	}
	// The session counts what it received (poc48 rows are over 200 bytes
	// on the wire), through the read-ahead goroutine too.
	if w := c.WireBytes(); w < 20000*200 {
		t.Fatalf("WireBytes %d after 20000 poc48 rows", w)
	}
}
