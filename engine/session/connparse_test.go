package session

import (
	"errors"
	"strings"
	"testing"
)

// A malformed connection string is reported by position and key, never by
// its text: every part of it may be a password.
func TestConnStringErrorsNameThePositionNotTheText(t *testing.T) {
	cases := []struct {
		in      string
		secrets []string // none of these may appear in the error
		off     int
		key     string
		want    string // part of the message
	}{
		// The three cases a new user hit: the secret was echoed.
		{"sqlserver//sa:Secret123@db:1433", []string{"Secret123", "sa:", "db:1433"}, 0, "", "starts with sqlserver://"},
		{"Server=db;User ID=sa;Password=abc;xyz123;Database=d", []string{"abc", "xyz123"}, 34, "", "quote it: Password={...}"},
		{"Server=db;User ID=sa;Password=p;a@s:s# w o=rd", []string{"a@s", "s:s", "w o", "o=rd"}, 32, "", "quote it: Password={...}"},
		// URL form: a '?' in the password ends the authority.
		{"sqlserver://sa:pa?ss@db:1433", []string{"pa?", "ss@db"}, 15, "", "must be percent-encoded (%2F, %3F)"},
		{"sqlserver://sa:Secret123@db:1433:99", []string{"Secret123", "1433:99"}, 28, "", "bad port"},
		{"sqlserver://sa:Secret123@db?database=%zzSecret", []string{"Secret", "zz"}, 37, "Database", "bad percent-escape"},
		{"sqlserver://sa:Secret123@db?datbase=Secret", []string{"Secret", "datbase"}, 28, "", "did you mean Database?"},
		{"sqlserver://sa:Secret123@db?encrypt=Secret", []string{"Secret"}, 36, "Encrypt", "want disable, optional"},
		{"sqlserver://sa:Secret123@db?database=a;encrypt=true", []string{"Secret"}, 38, "", "separate parameters with '&'"},
		{"jdbc:sqlserver://db:1433;user=sa;password=Secret123", []string{"Secret123"}, 0, "", "unsupported URL scheme"},
		// ADO values are never quoted back.
		{"Server=db;Password={Secret123", []string{"Secret123"}, 19, "Password", "no closing \"}\""},
		{"Server=db;Password={Secret}123;Encrypt=true", []string{"Secret", "123"}, 27, "Password", "text after the closing"},
		{"Server=db,Secret123", []string{"Secret123"}, 10, "Server", "bad port"},
		{"Server=db;Packet Size=Secret", []string{"Secret"}, 22, "Packet Size", "within 512..32767"},
		{"Server=db;Connect Timeout=Secret", []string{"Secret"}, 26, "Connect Timeout", "whole seconds"},
		{"Server=db;TrustServerCertificate=Secret", []string{"Secret"}, 33, "TrustServerCertificate", "want true or false"},
		{"Server=db;ApplicationIntent=Secret", []string{"Secret"}, 28, "ApplicationIntent", "ReadOnly or ReadWrite"},
		{"Server=db;Read Ahead=Secret", []string{"Secret"}, 21, "Read Ahead", "chunks of 256 KiB"},
		{"Server=Sec ret", []string{"Sec ret", "Sec", "ret"}, 10, "Server", "not a host name"},
		{"Server=np:Secret", []string{"Secret"}, 7, "Server", "only TCP"},
		{"Server=db:1433:99", []string{"1433:99"}, 9, "Server", "IPv6 address goes in brackets"},
		{"Server=[Secret],1433", []string{"Secret"}, 8, "Server", "not an IPv6 address"},
		{"Server=db;Databse=Secret", []string{"Secret", "Databse"}, 10, "", "did you mean Database?"},
		// After an unquoted password no suggestion: it would say what the
		// password's tail resembles.
		{"Server=db;Password=ab;Databse=x", []string{"ab", "Databse"}, 22, "", "unknown key"},
		{"Database=Secret", []string{"Secret"}, 0, "", "no Server key"},
		{"Server=db;=Secret", []string{"Secret"}, 10, "", "'=' with no key"},
		{"  ", nil, 0, "", "empty"},
	}
	for _, tc := range cases {
		_, err := ParseConnString(tc.in)
		if err == nil {
			t.Errorf("%q: no error", tc.in)
			continue
		}
		msg := err.Error()
		for _, s := range tc.secrets {
			if strings.Contains(msg, s) {
				t.Errorf("%q: the error shows %q: %s", tc.in, s, msg)
			}
		}
		var ce *ConnStringError
		if !errors.As(err, &ce) {
			t.Errorf("%q: %T, want *ConnStringError: %v", tc.in, err, err)
			continue
		}
		if ce.Offset != tc.off || ce.Key != tc.key || !strings.Contains(msg, tc.want) {
			t.Errorf("%q:\n got byte %d key %q: %s\nwant byte %d key %q, containing %q", tc.in, ce.Offset, ce.Key, msg, tc.off, tc.key, tc.want)
		}
	}
}

// The parser accepts what it accepted before the errors were reworded.
func TestConnStringHostForms(t *testing.T) {
	cases := []struct {
		in         string
		host, inst string
		port       int
	}{
		{"Server=tcp:db.example.com,1433", "db.example.com", "", 1433},
		{"Server=fe80::1,1500", "fe80::1", "", 1500},
		{"Server=[fe80::1],1500", "fe80::1", "", 1500},
		{`Server=db\SQLEXPRESS,1501`, "db", "SQLEXPRESS", 1501},
		{"Server= db , 1433 ", "db", "", 1433},
		{"Server={db,1433};Password={x;y}", "db", "", 1433},
		{"sqlserver://[::1]", "::1", "", 0},
		{"sqlserver://db_1.corp:1433/INST", "db_1.corp", "INST", 1433},
		{"sqlserver://db?port=1444", "db", "", 1444},
	}
	for _, tc := range cases {
		cfg, err := ParseConnString(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if cfg.Host != tc.host || cfg.Instance != tc.inst || cfg.Port != tc.port {
			t.Errorf("%q: host %q instance %q port %d, want %q %q %d", tc.in, cfg.Host, cfg.Instance, cfg.Port, tc.host, tc.inst, tc.port)
		}
	}
}

// mapShape turns a fuzzed shape into a secret: every letter becomes lower
// or upper (keeping case), every digit becomes digit, punctuation stays.
// Two secrets mapped with different letters have the same structure (the
// same separators, quotes and escapes in the same places, numbers on the
// same side of every bound the parser checks, no key name or keyword), so
// the parser must treat them alike; an error that differs between them
// quotes the secret.
func mapShape(shape string, lower, upper, digit byte) string {
	b := []byte(shape)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = lower
		case c >= 'A' && c <= 'Z':
			b[i] = upper
		case c >= '0' && c <= '9':
			b[i] = digit
		}
	}
	return string(b)
}

// checkNoEcho parses tmpl with every \x01 replaced by a secret of the given
// shape, twice with differently mapped letters: the two errors must be the
// same, so that no error carries any alphanumeric part of the secret.
func checkNoEcho(t *testing.T, tmpl, shape string) {
	t.Helper()
	s1 := strings.ReplaceAll(tmpl, "\x01", mapShape(shape, 'x', 'X', '7'))
	s2 := strings.ReplaceAll(tmpl, "\x01", mapShape(shape, 'k', 'K', '8'))
	_, e1 := ParseConnString(s1)
	_, e2 := ParseConnString(s2)
	if (e1 == nil) != (e2 == nil) {
		t.Fatalf("the outcome depends on the secret's letters:\n%q: %v\n%q: %v", s1, e1, s2, e2)
	}
	if e1 == nil {
		return
	}
	if e1.Error() != e2.Error() {
		t.Fatalf("the error depends on the secret, so it shows part of it:\n%q: %v\n%q: %v", s1, e1, s2, e2)
	}
}

var echoSeeds = [][2]string{
	{"sqlserver//sa:\x01@db:1433", "Secret123"},
	{"Server=db;User ID=sa;Password=\x01;Database=d", "abc;xyz123"},
	{"Server=db;User ID=sa;Password=\x01", "p;a@s:s# w o=rd"},
	{"\x01", "sqlserver//sa:Secret123@db:1433"},
	{"\x01", "Server=db;Password=abc;xyz123"},
	{"sqlserver://sa:\x01@db:1433?database=x", "pa?ss@w/rd"},
	{"sqlserver://sa:\x01@db:1433?database=x", "p%zz;d"},
	{"sqlserver://sa@db?database=\x01", "a;b%3Bc&d=e"},
	{"sqlserver://sa@db?app+name=\x01&encrypt=\x01", "x&y=1"},
	{"Server=db;Password={\x01}", "a}b"},
	{"Server=db;Password={\x01", "ab;c"},
	{"Server=db;Password=\"\x01\";Encrypt=true", "a\"b"},
	{"Server=\x01;Database=d", "db,1433,5"},
	{"Server=\x01", "tcp:[db]:x"},
	{"Server=db;Packet Size=\x01", "12a"},
	{"Server=db;Encrypt=\x01", "maybe"},
	{"Server=db;\x01=x", "Pasword"},
	{"Server=db;Password=\x01=\x01", " ; ="},
}

// A fixed table of shapes, run by every `go test`: the fuzz target's seeds
// and a deterministic sweep of shapes over templates.
func TestConnStringNeverEchoesSecrets(t *testing.T) {
	for _, s := range echoSeeds {
		checkNoEcho(t, s[0], s[1])
	}
	shapes := []string{"a", "ab1", "a;b", "a;b=c", "a@b:c", "a%2F", "a%zz", "}a", "a}}b", "'a", "\"a", "a&b=c", "[a]", "a,1", "1", "12345", "a b", "a\\b", "a/b?c", "tcp:a", "=a", ";", "a;;b=c;d"}
	tmpls := []string{
		"sqlserver://\x01", "sqlserver://sa:\x01@db", "sqlserver://\x01@db", "sqlserver://db/\x01", "sqlserver://db?\x01",
		"sqlserver://db?database=\x01", "sqlserver://db?password=\x01&encrypt=strict",
		"\x01", "Server=\x01", "Server=db;\x01", "Server=db;Password=\x01", "Server=db;Password=\x01;Encrypt=true",
		"Server=db;Password={\x01};Encrypt=true", "Server=db;Password='\x01'", "Server=db;Port=\x01", "Server=db;Encrypt=\x01",
		"Server=db;Connect Timeout=\x01", "Server=db;Read Ahead=\x01", "Data Source=\x01;Initial Catalog=\x01",
	}
	for _, tm := range tmpls {
		for _, sh := range shapes {
			checkNoEcho(t, tm, sh)
		}
	}
}

// FuzzConnStringNeverEchoes: whatever the connection string around it and
// whatever its shape, a secret never appears in a parse error. `make test`
// fuzzes it briefly, `make fuzz` for long.
func FuzzConnStringNeverEchoes(f *testing.F) {
	for _, s := range echoSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tmpl, shape string) {
		if !strings.Contains(tmpl, "\x01") || shape == "" || len(tmpl)+len(shape) > 1024 || glued(tmpl) {
			return
		}
		checkNoEcho(t, tmpl, shape)
	})
}

// glued reports whether a secret's place in tmpl touches a letter or digit
// of the template. The secret then makes one word with template text, such
// as a key half from each ("PA\x01etSiZe"), which the parser cannot tell
// from a mistyped key of its own: its "did you mean Packet Size?" depends
// on the word, so on the secret's letters, though it quotes none of them.
// A secret in a real string is a whole value or (after an unquoted ';') a
// whole key, between separators; suggestions after a password are already
// withheld (suggestKey).
func glued(tmpl string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '\x01' && (i > 0 && alnum(tmpl[i-1]) || i+1 < len(tmpl) && alnum(tmpl[i+1])) {
			return true
		}
	}
	return false
}
