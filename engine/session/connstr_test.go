package session

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConnStringURL(t *testing.T) {
	cases := []struct {
		in   string
		want Config
	}{
		{"sqlserver://sa:secret@db.example.com:1500?database=sales&encrypt=strict",
			Config{Host: "db.example.com", Port: 1500, User: "sa", Password: "secret", Database: "sales", Encrypt: EncryptStrict}},
		{"sqlserver://u:p@host/SQLEXPRESS?database=x",
			Config{Host: "host", Instance: "SQLEXPRESS", User: "u", Password: "p", Database: "x"}},
		{"sqlserver://u:p@[::1]:1444",
			Config{Host: "::1", Port: 1444, User: "u", Password: "p"}},
		{"sqlserver://u:p@host?readAhead=off",
			Config{Host: "host", User: "u", Password: "p", ReadAhead: -1}},
		{"SQLSERVER://u@host?TrustServerCertificate=true&encrypt=disable&connection+timeout=30&packet+size=4096&app+name=my+tool&hostNameInCertificate=cn.example&certificate=/etc/ca.pem",
			Config{Host: "host", User: "u", Encrypt: EncryptDisable, TrustServerCertificate: true, ConnectTimeout: 30 * time.Second,
				PacketSize: 4096, AppName: "my tool", HostNameInCertificate: "cn.example", CAFile: "/etc/ca.pem"}},
		// percent-encoded specials in the password
		{"sqlserver://sa:p%40ss%3Aw%23rd%3B%20x%2F%3F@host",
			Config{Host: "host", User: "sa", Password: "p@ss:w#rd; x/?"}},
		// raw specials: '@' ':' '#' ';' and spaces are taken literally
		{"sqlserver://sa:p@ss:w#rd; x@host:1433?database=d",
			Config{Host: "host", Port: 1433, User: "sa", Password: "p@ss:w#rd; x", Database: "d"}},
		{"sqlserver://sa:100%@host",
			Config{Host: "host", User: "sa", Password: "100%"}},
		{`sqlserver://sa:pw@host\INST`,
			Config{Host: "host", Instance: "INST", User: "sa", Password: "pw"}},
		{"sqlserver://sa:pw@host?encrypt=false&connection+timeout=0",
			Config{Host: "host", User: "sa", Password: "pw", Encrypt: EncryptOptional, ConnectTimeout: -1}},
		{"sqlserver://sa@host?password+env=MY_PW",
			Config{Host: "host", User: "sa", PasswordEnv: "MY_PW"}},
	}
	for _, tc := range cases {
		checkConnString(t, tc.in, tc.want)
	}
}

// checkConnString checks that in parses, to want.
func checkConnString(t *testing.T, in string, want Config) {
	t.Helper()
	got, err := ParseConnString(in)
	if err != nil {
		t.Errorf("%q: %v", in, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q:\n got %#v\nwant %#v", in, got, want)
	}
}

func TestConnStringADO(t *testing.T) {
	cases := []struct {
		in   string
		want Config
	}{
		{"Server=tcp:db.example.com,1433;Database=sales;User ID=sa;Password=secret;Encrypt=true;TrustServerCertificate=false;Connect Timeout=20;Packet Size=8192;Application Name=tdsextract;",
			Config{Host: "db.example.com", Port: 1433, Database: "sales", User: "sa", Password: "secret", Encrypt: EncryptMandatory,
				ConnectTimeout: 20 * time.Second, PacketSize: 8192, AppName: "tdsextract"}},
		{"server=host;uid=u;pwd={a;b}}c};database=d",
			Config{Host: "host", User: "u", Password: "a;b}c", Database: "d"}},
		{"Server=host;Read Ahead=off", Config{Host: "host", ReadAhead: -1}},
		{"Server=host;ReadAhead=16", Config{Host: "host", ReadAhead: 16}},
		{"Server=host;readahead=on", Config{Host: "host"}},
		{"Server=host;ReadAhead=0", Config{Host: "host", ReadAhead: -1}},
		{"Server=host;ReadAhead=no", Config{Host: "host", ReadAhead: -1}},
		{"Server=host;ReadAhead=", Config{Host: "host"}},
		{`Server=host;User ID=u;Password="semi;colon ""quoted"" @:#";Encrypt=strict`,
			Config{Host: "host", User: "u", Password: `semi;colon "quoted" @:#`, Encrypt: EncryptStrict}},
		{`Server=host;User ID=u;Password='it''s; fine'`,
			Config{Host: "host", User: "u", Password: `it's; fine`}},
		{"Server=host;User ID=u;Password=p@ss:w#rd with spaces",
			Config{Host: "host", User: "u", Password: "p@ss:w#rd with spaces"}},
		{`Data Source=myhost\SQLEXPRESS;Initial Catalog=db;Integrated Security=false`,
			Config{Host: "myhost", Instance: "SQLEXPRESS", Database: "db"}},
		{`Data Source=myhost;Integrated Security=SSPI`,
			Config{}}, // Windows authentication: error
		{`Data Source=myhost\SQLEXPRESS;Initial Catalog=db;MultipleActiveResultSets=False`,
			Config{Host: "myhost", Instance: "SQLEXPRESS", Database: "db"}},
		{"Server=(local);Encrypt=optional;ApplicationIntent=ReadOnly",
			Config{Host: "localhost", Encrypt: EncryptOptional, ReadOnlyIntent: true}},
		{"Server=10.0.0.1,1500;Encrypt=disable;Password File=/run/secrets/pw",
			Config{Host: "10.0.0.1", Port: 1500, Encrypt: EncryptDisable, PasswordFile: "/run/secrets/pw"}},
		{"Server=tcp:[fe80::1],1433;Encrypt=no",
			Config{Host: "fe80::1", Port: 1433, Encrypt: EncryptOptional}},
		{"  Server = host ; Password = { spaced } ;  ",
			Config{Host: "host", Password: " spaced "}},
		{"Server=host;ConnectRetryCount=3;Connect Retry Interval=2",
			Config{Host: "host", ConnectRetryCount: 3, ConnectRetryInterval: 2 * time.Second}},
		{"Server=host;ConnectRetryCount=0", Config{Host: "host"}},
	}
	for _, tc := range cases {
		if reflect.DeepEqual(tc.want, Config{}) {
			if got, err := ParseConnString(tc.in); err == nil {
				t.Errorf("%q: want an error, got %#v", tc.in, got)
			}
			continue
		}
		checkConnString(t, tc.in, tc.want)
	}
}

func TestConnStringErrors(t *testing.T) {
	bad := []string{
		"",
		"Database=x",                         // no server
		"Server=host;Password={unterminated", // quote
		"Server=host;Password={a}b",          // text after quote
		"Server=host;Encrypt=maybe",          // bad encrypt
		"Server=host;Packet Size=100",        // out of range
		"Server=host;Read Ahead=65",          // more than 16 MiB
		"Server=host;Read Ahead=lots",
		"Server=host;Read Ahead=-2",
		"Server=np:host",                                // named pipes
		"Server=host,99999",                             // port
		"Server=host;Password=a;PasswordEnv=B",          // two password sources
		"Server=host;Bogus=1",                           // unknown key
		"Server=host;Integrated Security=true",          // Windows authentication
		"Server=host;noequals",                          // no '='
		"sqlserver://u:p@host?server=other",             // server is ADO only
		"sqlserver://u:p@host:notaport",                 // port
		"sqlserver://u:p@host?database=%zz",             // bad escape in query
		"Server=host;Connect Timeout=-5",                // negative
		"Server=host;TrustServerCertificate=yes please", // bool
		"Server=host;ConnectRetryCount=256",             // ADO.NET's bound
		"Server=host;ConnectRetryCount=-1",
		"Server=host;ConnectRetryCount=many",
		"Server=host;ConnectRetryInterval=0", // 1..60 seconds
		"Server=host;ConnectRetryInterval=61",
	}
	for _, s := range bad {
		if cfg, err := ParseConnString(s); err == nil {
			t.Errorf("%q: want an error, got %#v", s, cfg)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: error leaks input: %v", s, err)
		}
	}
}

func TestConnStringErrorDoesNotLeakPassword(t *testing.T) {
	_, err := ParseConnString("Server=host;Password=hunter2;Encrypt=maybe")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
}

func TestEncryptModeRoundTrip(t *testing.T) {
	for _, m := range []EncryptMode{EncryptMandatory, EncryptOptional, EncryptDisable, EncryptStrict} {
		got, err := ParseEncryptMode(m.String())
		if err != nil || got != m {
			t.Errorf("%v: got %v, %v", m, got, err)
		}
	}
}

func TestResolveSecrets(t *testing.T) {
	t.Setenv("ENGINE_TEST_PW", "from env;@#")
	c, err := Config{Host: "h", User: "u", PasswordEnv: "ENGINE_TEST_PW"}.resolveSecrets()
	if err != nil || c.Password.Reveal() != "from env;@#" {
		t.Fatalf("env: %v %q", err, c.Password.Reveal())
	}
	if _, err := (Config{Host: "h", PasswordEnv: "ENGINE_TEST_UNSET_XYZ"}).resolveSecrets(); err == nil {
		t.Fatal("unset env: no error")
	}
	f := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(f, []byte("file pw with spaces \r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Config{Host: "h", User: "u", PasswordFile: f}.resolveSecrets()
	if err != nil || c.Password.Reveal() != "file pw with spaces " {
		t.Fatalf("file: %v %q", err, c.Password.Reveal())
	}
	if _, err := (Config{Host: "h", PasswordFile: f + ".missing"}).resolveSecrets(); err == nil {
		t.Fatal("missing file: no error")
	}
	t.Setenv(AccessTokenEnv, "tok123")
	c, _ = Config{Host: "h"}.resolveSecrets()
	if c.AccessToken.Reveal() != "tok123" {
		t.Fatalf("token from env: %q", c.AccessToken.Reveal())
	}
	c, _ = Config{Host: "h", User: "sa", Password: "x"}.resolveSecrets()
	if c.AccessToken != "" {
		t.Fatal("token from env overrode a password login")
	}
}

func TestSSRPResponseParse(t *testing.T) {
	resp := func(s string) []byte {
		return append([]byte{0x05, byte(len(s)), byte(len(s) >> 8)}, s...)
	}
	two := "ServerName;H;InstanceName;A;IsClustered;No;Version;16.0.1000.6;tcp;1501;;" +
		"ServerName;H;InstanceName;SQLEXPRESS;IsClustered;No;Version;16.0.1000.6;tcp;1502;np;\\\\H\\pipe\\x;;"
	if p, err := parseSSRPResponse(resp(two), "sqlexpress"); err != nil || p != 1502 {
		t.Fatalf("got %d, %v", p, err)
	}
	for _, bad := range [][]byte{nil, {0x05}, {0x04, 0, 0}, resp(two)[:20], resp("ServerName;H;InstanceName;X;np;p;;"),
		resp("ServerName;H;InstanceName;SQLEXPRESS;tcp;0;;"), resp("ServerName;H;InstanceName;OTHER;tcp;1;;")} {
		if _, err := parseSSRPResponse(bad, "SQLEXPRESS"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestSSRPBrowser runs the Browser request against a fake responder on
// loopback UDP.
func TestSSRPBrowser(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no UDP on loopback: %v", err)
	}
	defer pc.Close()
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 1024)
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		got <- string(buf[:n])
		s := "ServerName;H;InstanceName;INST1;IsClustered;No;Version;16.0;tcp;41433;;"
		_, _ = pc.WriteTo(append([]byte{0x05, byte(len(s)), 0}, s...), addr)
	}()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := resolveInstancePort(ctx, "127.0.0.1", port, "INST1")
	if err != nil || p != 41433 {
		t.Fatalf("got %d, %v", p, err)
	}
	if req := <-got; req != "\x04INST1\x00" {
		t.Fatalf("request %q", req)
	}
	// No responder: the context bounds the wait.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := resolveInstancePort(ctx2, "127.0.0.1", port, "INST1"); err == nil {
		t.Fatal("no responder: no error")
	}
	_ = strconv.Itoa
}
