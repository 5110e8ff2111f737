package session

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/internal/textdist"
)

// ConnStringError reports a malformed connection string. It says where the
// problem is (the byte offset in the string as given, and the key when the
// problem is in a known key's value) and what is expected, and never quotes
// the string: any part of it may be a password. An unquoted ';' inside a
// password splits it, so even what looks like a key may be the tail of a
// password, which is why unknown keys are not quoted either.
type ConnStringError struct {
	Offset int    // byte offset into the connection string
	Key    string // canonical name of the key concerned, or ""
	Msg    string // what is wrong and what to write instead; never text of the string
}

func (e *ConnStringError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("engine: connection string: %s at byte %d: %s", e.Key, e.Offset, e.Msg)
	}
	return fmt.Sprintf("engine: connection string: byte %d: %s", e.Offset, e.Msg)
}

// ParseConnString parses a connection string in either form:
//
//	sqlserver://user:pass@host:port/instance?database=db&encrypt=strict&connection+timeout=30
//	Server=tcp:host,1433;Database=db;User ID=u;Password={p;w};Encrypt=true
//
// In the URL form the user information is percent-decoded; a password may
// also contain raw '@', ':', '#', ';' and spaces (everything up to the last
// '@' before the query is user information; '/' and '?' must be
// percent-encoded, as %2F and %3F). In the ADO form a value may be quoted
// with {...} (a '}' doubled inside), "..." or '...' (the quote doubled
// inside) to carry ';'. Keys are case-insensitive and spaces and '_' in keys
// are ignored; unknown keys are an error. Supported keys (either form):
// server (ADO), database, user id, password, password env, password file,
// encrypt, TrustServerCertificate, certificate, hostNameInCertificate,
// connection timeout (seconds or a Go duration; 0 = no limit), packet size,
// read ahead, app name, workstation id, language, ApplicationIntent,
// instance, port (ADO).
//
// Errors are *ConnStringError: they name the byte offset and the key, never
// any text of the string.
func ParseConnString(s string) (Config, error) {
	p := connParser{s: s}
	if err := p.parse(); err != nil {
		return Config{}, err
	}
	if err := p.cfg.Validate(); err != nil {
		return Config{}, err
	}
	return p.cfg, nil
}

type connParser struct {
	s   string
	cfg Config
}

func (p *connParser) errAt(off int, key, msg string) error {
	return &ConnStringError{Offset: off, Key: key, Msg: msg}
}

const urlPrefix = "sqlserver://"

func (p *connParser) parse() error {
	s := p.s
	start := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
	end := len(strings.TrimRight(s, " \t\r\n"))
	if start >= end {
		return p.errAt(0, "", "empty: use sqlserver://user@host:port?database=db or Server=host,port;Database=db;User ID=user")
	}
	body := s[start:end]
	if len(body) >= len(urlPrefix) && strings.EqualFold(body[:len(urlPrefix)], urlPrefix) {
		return p.parseURL(start+len(urlPrefix), end)
	}
	if i := strings.Index(body, "://"); i > 0 && isScheme(body[:i]) {
		return p.errAt(start, "", "unsupported URL scheme: the URL form starts with sqlserver:// (JDBC and other URLs are not understood)")
	}
	if len(body) >= 9 && strings.EqualFold(body[:9], "sqlserver") && !strings.Contains(body[:min(len(body), 12)], "=") {
		return p.errAt(start, "", "a URL connection string starts with sqlserver:// (a colon and two slashes)")
	}
	return p.parseADO(start, end)
}

// isScheme reports whether s looks like a URL scheme (RFC 3986 3.1).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' || c == ':'):
		default:
			return false
		}
	}
	return true
}

// parseURL parses p.s[start:end], the part after "sqlserver://".
func (p *connParser) parseURL(start, end int) error {
	s := p.s
	authEnd := end
	if q := strings.IndexByte(s[start:end], '?'); q >= 0 {
		authEnd = start + q
	}
	hostStart := start
	if at := strings.LastIndexByte(s[start:authEnd], '@'); at >= 0 {
		userinfo := s[start : start+at]
		hostStart = start + at + 1
		user, pass, hasPass := strings.Cut(userinfo, ":")
		p.cfg.User = unescapeLenient(user)
		if hasPass {
			p.cfg.Password = secret.Secret(unescapeLenient(pass))
		}
	}
	hostEnd := authEnd
	if sl := strings.IndexByte(s[hostStart:authEnd], '/'); sl >= 0 {
		hostEnd = hostStart + sl
		inst, ok := percentDecode(s[hostEnd+1:authEnd], false)
		if !ok {
			return p.errAt(hostEnd+1, "Instance", "bad percent-escape (write a '%' as %25)")
		}
		p.cfg.Instance = strings.TrimSuffix(inst, "/")
	}
	if err := p.setHostPort(s[hostStart:hostEnd], hostStart, ':', ""); err != nil {
		if hostStart == start && strings.IndexByte(s[start:end], '@') >= 0 {
			// "sqlserver://sa:pa?ss@host": the '?' (or '/') ended the
			// authority inside the password.
			ce := err.(*ConnStringError)
			ce.Msg += "; a password containing '/' or '?' must be percent-encoded (%2F, %3F)"
		}
		return err
	}
	if authEnd < end {
		return p.parseQuery(authEnd+1, end)
	}
	return nil
}

// parseQuery parses the URL query p.s[start:end]: key=value pairs joined
// by '&', '+' for a space, percent-escapes.
func (p *connParser) parseQuery(start, end int) error {
	s := p.s
	for i := start; i < end; {
		j := i
		for j < end && s[j] != '&' && s[j] != ';' {
			j++
		}
		if j < end && s[j] == ';' {
			return p.errAt(j, "", "';' in the query: separate parameters with '&' (a ';' inside a value is written %3B)")
		}
		if j > i {
			if err := p.queryPair(i, j); err != nil {
				return err
			}
		}
		i = j + 1
	}
	return nil
}

func (p *connParser) queryPair(start, end int) error {
	pair := p.s[start:end]
	rawKey, rawVal, _ := strings.Cut(pair, "=")
	key, ok := percentDecode(rawKey, true)
	if !ok {
		return p.errAt(start, "", "bad percent-escape in a parameter name")
	}
	valStart := start + len(rawKey) + 1
	k := lookupKey(key)
	if k == nil {
		// The suggestion looks at the name as written: a percent-escaped
		// name may be a pasted secret, and what it decodes to is not shown.
		return p.errAt(start, "", "unknown parameter"+suggestKey(strings.ReplaceAll(rawKey, "+", " "), false))
	}
	if k.ignored {
		return nil
	}
	if k.adoOnly {
		return p.errAt(start, k.name, "not a URL parameter: put the host (and port) after sqlserver://")
	}
	val, ok := percentDecode(rawVal, true)
	if !ok {
		return p.errAt(valStart, k.name, "bad percent-escape (write a '%' as %25)")
	}
	return p.set(k, val, valStart)
}

// percentDecode decodes %XX escapes (and '+' as a space when plus is set);
// ok is false for a malformed escape.
func percentDecode(s string, plus bool) (string, bool) {
	if strings.IndexByte(s, '%') < 0 && (!plus || strings.IndexByte(s, '+') < 0) {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%':
			if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
				return "", false
			}
			b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
			i += 2
		case c == '+' && plus:
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescapeLenient percent-decodes s, keeping s literally when it is not
// valid percent-encoding (a raw password such as "100%").
func unescapeLenient(s string) string {
	if u, ok := percentDecode(s, false); ok {
		return u
	}
	return s
}

// setHostPort parses v, found at byte off, as "host", "host:port" (URL)
// or "host,port" (ADO), with an optional "\instance" after the host and an
// IPv6 address in brackets (in the ADO form also bare). key names the ADO
// key ("" in the URL form).
func (p *connParser) setHostPort(v string, off int, portSep byte, key string) error {
	lead := len(v) - len(strings.TrimLeft(v, " \t"))
	v, off = strings.TrimSpace(v), off+lead
	what := key
	if what == "" {
		what = "the host"
	}
	hostStart, hostEnd, portStart := 0, len(v), -1
	bracketed := v != "" && v[0] == '['
	if bracketed {
		rb := strings.IndexByte(v, ']')
		if rb < 0 {
			return p.errAt(off, key, "'[' without ']': an IPv6 address is written in brackets, e.g. [::1]")
		}
		hostStart, hostEnd = 1, rb
		if ip := net.ParseIP(v[1:rb]); ip == nil || ip.To4() != nil {
			return p.errAt(off+1, key, "not an IPv6 address inside the brackets")
		}
		if rb+1 < len(v) {
			if v[rb+1] != portSep {
				return p.errAt(off+rb+1, key, fmt.Sprintf("after the IPv6 address only %q and a port may follow", string(portSep)))
			}
			portStart = rb + 2
		}
	} else if i := strings.LastIndexByte(v, portSep); i >= 0 {
		hostEnd, portStart = i, i+1
		if portSep == ':' {
			// URL form: the first ':' ends the host; "host:1433:99" is a
			// bad port, not a host name to look up.
			i = strings.IndexByte(v, ':')
			hostEnd, portStart = i, i+1
		}
	}
	// "host\instance"
	if bs := strings.IndexByte(v[hostStart:hostEnd], '\\'); bs >= 0 {
		if inst := strings.TrimSpace(v[hostStart+bs+1 : hostEnd]); inst != "" {
			p.cfg.Instance = inst
		}
		hostEnd = hostStart + bs
	}
	host := strings.TrimSpace(v[hostStart:hostEnd])
	if host == "" {
		return p.errAt(off+hostStart, key, "no host name")
	}
	if !bracketed {
		bad := strings.IndexAny(host, " \t@/?#;,=\"'{}[]<>|:")
		if bad >= 0 && host[bad] == ':' && portSep == ',' {
			if ip := net.ParseIP(host); ip != nil {
				bad = -1 // a bare IPv6 address in the ADO form
			}
		}
		if bad >= 0 {
			msg := "not a host name or IP address"
			if host[bad] == ':' {
				msg += " (an IPv6 address goes in brackets: [::1],1433)"
			}
			return p.errAt(off+hostStart+bad, key, msg)
		}
	}
	switch strings.ToLower(host) {
	case ".", "(local)", "(localdb)":
		host = "localhost"
	}
	p.cfg.Host = host
	if portStart >= 0 {
		port, ok := parsePort(v[portStart:])
		if !ok {
			return p.errAt(off+portStart, key, what+" has a bad port: want one number 1..65535")
		}
		p.cfg.Port = port
	}
	return nil
}

func parsePort(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n > 0 && n <= 65535
}

// parseADO parses p.s[start:end] as key=value pairs separated by ';'.
func (p *connParser) parseADO(start, end int) error {
	s := p.s
	prev := "" // canonical name of the previous key when its value was unquoted
	i := start
	for i < end {
		for i < end && (s[i] == ';' || s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
		if i >= end {
			break
		}
		keyStart := i
		j := i
		for j < end && s[j] != '=' && s[j] != ';' {
			j++
		}
		if j == end || s[j] == ';' {
			return p.errAt(keyStart, "", "no '=' in this part: use key=value pairs separated by ';'"+quoteHint(prev))
		}
		rawKey := strings.TrimSpace(s[i:j])
		if rawKey == "" {
			return p.errAt(keyStart, "", "'=' with no key before it")
		}
		k := lookupKey(rawKey)
		if k == nil {
			if hint := quoteHint(prev); hint != "" && !plainKeyChars(rawKey) {
				return p.errAt(keyStart, "", "unknown key"+hint)
			}
			return p.errAt(keyStart, "", "unknown key"+suggestKey(rawKey, prev == "Password"))
		}
		i = j + 1
		for i < end && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		valStart := i
		var val string
		quoted := i < end && (s[i] == '{' || s[i] == '"' || s[i] == '\'')
		if quoted {
			open := s[i]
			closer := open
			if open == '{' {
				closer = '}'
			}
			var b strings.Builder
			j := i + 1
			closed := false
			for j < end {
				if s[j] == closer {
					if j+1 < end && s[j+1] == closer {
						b.WriteByte(closer)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return p.errAt(valStart, k.name, fmt.Sprintf("the quoted value has no closing %q (double a %q inside the value)", string(closer), string(closer)))
			}
			for j < end && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < end && s[j] != ';' {
				return p.errAt(j, k.name, fmt.Sprintf("text after the closing %q: a %q inside a quoted value is doubled", string(closer), string(closer)))
			}
			val, i = b.String(), j
		} else {
			j := strings.IndexByte(s[i:end], ';')
			if j < 0 {
				j = end - i
			}
			val = strings.TrimSpace(s[i : i+j])
			i += j
		}
		if k.ignored {
			prev = ""
			continue
		}
		valOff := valStart
		if quoted {
			valOff++
		}
		if err := p.set(k, val, valOff); err != nil {
			return err
		}
		prev = ""
		if !quoted {
			prev = k.name
		}
	}
	if p.cfg.Host == "" {
		return p.errAt(start, "", "no Server key: add Server=host (or host,port)")
	}
	return nil
}

// quoteHint is added to an error right after the unquoted value of key:
// a ';' inside that value may have split it.
func quoteHint(key string) string {
	if key == "" {
		return ""
	}
	return "; if the value of " + key + " before it contains ';', quote it: " + key + "={...} (double any '}' inside)"
}

// plainKeyChars reports whether s could be a key name: letters, digits,
// spaces and '_' only.
func plainKeyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '_') {
			return false
		}
	}
	return true
}

// suggestKey returns "; did you mean X?" for an unknown key within two
// edits of a known one. After an unquoted password it returns nothing: the
// "key" may be the tail of the password, and a suggestion would say what it
// resembles.
func suggestKey(raw string, afterSecret bool) string {
	if afterSecret || !plainKeyChars(raw) {
		return ""
	}
	n := normKey(raw)
	best, bestD := "", 3
	for i := range connKeys {
		for _, a := range connKeys[i].aliases {
			if d := textdist.Distance(n, a, bestD); d < bestD {
				best, bestD = connKeys[i].name, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// connKey is one connection-string key: its canonical name (the spelling
// errors use), its normalised aliases, and how its value is applied. set
// returns a message saying what is expected, never quoting the value.
type connKey struct {
	name    string
	aliases []string // lower case, without spaces and '_'
	adoOnly bool
	ignored bool // accepted for compatibility, no effect
	set     func(c *Config, v string) string
}

func normKey(k string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' || r == '\t' {
			return -1
		}
		return r
	}, k))
}

func lookupKey(raw string) *connKey {
	n := normKey(raw)
	for i := range connKeys {
		for _, a := range connKeys[i].aliases {
			if a == n {
				return &connKeys[i]
			}
		}
	}
	return nil
}

// set applies one key's value found at byte off.
func (p *connParser) set(k *connKey, val string, off int) error {
	if k.name == "Server" {
		lv := strings.ToLower(val)
		for _, proto := range []string{"np:", "lpc:", "admin:"} {
			if strings.HasPrefix(lv, proto) {
				return p.errAt(off, k.name, "only TCP is supported (not named pipes, shared memory or the admin connection): use tcp:host,port or host,port")
			}
		}
		if strings.HasPrefix(lv, "tcp:") {
			val, off = val[4:], off+4
		}
		return p.setHostPort(val, off, ',', k.name)
	}
	if msg := k.set(&p.cfg, val); msg != "" {
		return p.errAt(off, k.name, msg)
	}
	return nil
}

const encryptValues = "want disable, optional (false, no), mandatory (true, yes) or strict"

var connKeys = []connKey{
	{name: "Server", aliases: []string{"server", "datasource", "address", "addr", "networkaddress"}, adoOnly: true},
	{name: "Port", aliases: []string{"port"}, set: func(c *Config, v string) string {
		n, ok := parsePort(v)
		if !ok {
			return "want a port number 1..65535"
		}
		c.Port = n
		return ""
	}},
	{name: "Database", aliases: []string{"database", "initialcatalog"}, set: func(c *Config, v string) string { c.Database = v; return "" }},
	{name: "User ID", aliases: []string{"userid", "uid", "user", "username"}, set: func(c *Config, v string) string { c.User = v; return "" }},
	{name: "Password", aliases: []string{"password", "pwd"}, set: func(c *Config, v string) string { c.Password = secret.Secret(v); return "" }},
	{name: "Password Env", aliases: []string{"passwordenv"}, set: func(c *Config, v string) string { c.PasswordEnv = v; return "" }},
	{name: "Password File", aliases: []string{"passwordfile"}, set: func(c *Config, v string) string { c.PasswordFile = v; return "" }},
	{name: "Encrypt", aliases: []string{"encrypt"}, set: func(c *Config, v string) string {
		m, err := ParseEncryptMode(v)
		if err != nil {
			return encryptValues
		}
		c.Encrypt = m
		return ""
	}},
	{name: "TrustServerCertificate", aliases: []string{"trustservercertificate"}, set: func(c *Config, v string) string {
		b, ok := parseBool(v)
		if !ok {
			return "want true or false"
		}
		c.TrustServerCertificate = b
		return ""
	}},
	{name: "Certificate", aliases: []string{"certificate", "servercertificate", "cafile"}, set: func(c *Config, v string) string { c.CAFile = v; return "" }},
	{name: "HostNameInCertificate", aliases: []string{"hostnameincertificate"}, set: func(c *Config, v string) string { c.HostNameInCertificate = v; return "" }},
	{name: "Connect Timeout", aliases: []string{"connecttimeout", "connectiontimeout", "timeout", "dialtimeout", "logintimeout"}, set: func(c *Config, v string) string {
		d, ok := parseSeconds(v)
		if !ok {
			return "want whole seconds (0 = no limit) or a duration such as 30s"
		}
		if d == 0 {
			d = -1 // "0" means no limit in ADO and go-mssqldb
		}
		c.ConnectTimeout = d
		return ""
	}},
	{name: "ConnectRetryCount", aliases: []string{"connectretrycount"}, set: func(c *Config, v string) string {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > MaxConnectRetryCount {
			return fmt.Sprintf("want a whole number within 0..%d", MaxConnectRetryCount)
		}
		c.ConnectRetryCount = n
		return ""
	}},
	{name: "ConnectRetryInterval", aliases: []string{"connectretryinterval"}, set: func(c *Config, v string) string {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > int(MaxConnectRetryInterval/time.Second) {
			return fmt.Sprintf("want whole seconds within 1..%d", int(MaxConnectRetryInterval/time.Second))
		}
		c.ConnectRetryInterval = time.Duration(n) * time.Second
		return ""
	}},
	{name: "Packet Size", aliases: []string{"packetsize"}, set: func(c *Config, v string) string {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < minPacketSize || n > maxPacketSize {
			return fmt.Sprintf("want a number of bytes within %d..%d", minPacketSize, maxPacketSize)
		}
		c.PacketSize = n
		return ""
	}},
	{name: "Read Ahead", aliases: []string{"readahead"}, set: func(c *Config, v string) string {
		n, ok := parseReadAhead(v)
		if !ok {
			return fmt.Sprintf("want off, on or 1..%d chunks of 256 KiB", maxReadAheadChunks)
		}
		c.ReadAhead = n
		return ""
	}},
	{name: "App Name", aliases: []string{"appname", "applicationname"}, set: func(c *Config, v string) string { c.AppName = v; return "" }},
	{name: "Workstation ID", aliases: []string{"workstationid", "wsid"}, set: func(c *Config, v string) string { c.Workstation = v; return "" }},
	{name: "Language", aliases: []string{"language", "currentlanguage"}, set: func(c *Config, v string) string { c.Language = v; return "" }},
	{name: "ApplicationIntent", aliases: []string{"applicationintent"}, set: func(c *Config, v string) string {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "readonly":
			c.ReadOnlyIntent = true
		case "readwrite", "":
			c.ReadOnlyIntent = false
		default:
			return "want ReadOnly or ReadWrite"
		}
		return ""
	}},
	{name: "Instance", aliases: []string{"instance", "instancename"}, set: func(c *Config, v string) string { c.Instance = v; return "" }},
	{name: "Integrated Security", aliases: []string{"integratedsecurity", "trustedconnection"}, set: func(c *Config, v string) string {
		if b, ok := parseBool(v); ok && !b {
			return ""
		}
		return "Windows authentication is not supported: use a SQL login (User ID and a password source) or an Entra ID access token"
	}},
	// Accepted and without effect here: pooling and MARS belong to drivers
	// that keep connections; each extract runs on its own session.
	{name: "Persist Security Info", aliases: []string{"persistsecurityinfo"}, ignored: true},
	{name: "MultipleActiveResultSets", aliases: []string{"multipleactiveresultsets"}, ignored: true},
	{name: "Pooling", aliases: []string{"pooling", "minpoolsize", "maxpoolsize"}, ignored: true},
	{name: "MultiSubnetFailover", aliases: []string{"multisubnetfailover"}, ignored: true},
	{name: "ServerSPN", aliases: []string{"serverspn"}, ignored: true},
	{name: "Log", aliases: []string{"log"}, ignored: true},
}

// parseReadAhead reads the readAhead key: a boolean word (parseBool; an
// empty value is the default ring, on), or a number of 256 KiB chunks (0
// is off).
func parseReadAhead(s string) (int, bool) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, true
	}
	if n, err := strconv.Atoi(t); err == nil && n >= 0 && n <= maxReadAheadChunks {
		if n == 0 {
			return -1, true
		}
		return n, true
	}
	on, ok := parseBool(t)
	if !ok {
		return 0, false
	}
	if on {
		return 0, true
	}
	return -1, true
}

func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "1", "on":
		return true, true
	case "false", "no", "0", "off", "":
		return false, true
	}
	return false, false
}

// parseSeconds accepts an integer number of seconds or a Go duration.
func parseSeconds(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > 1<<31 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
