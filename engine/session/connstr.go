package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/secret"
)

// EncryptMode is the connection's encryption policy. Certificates are
// verified unless TrustServerCertificate opts out.
type EncryptMode uint8

const (
	// EncryptMandatory (the zero value, the default): TLS for the whole
	// session, negotiated inside PRELOGIN (TDS 7.x); fails if the server
	// does not support encryption. Connection-string values: true, yes,
	// mandatory.
	EncryptMandatory EncryptMode = iota
	// EncryptOptional: TLS if the server wants it; otherwise only the
	// LOGIN7 packet is encrypted, as SQL Server does for ENCRYPT_OFF.
	// Values: false, no, optional.
	EncryptOptional
	// EncryptDisable: no TLS at all (the client announces NOT_SUP); a
	// server that requires encryption refuses the connection. Value: disable.
	EncryptDisable
	// EncryptStrict: TDS 8.0, TLS on the TCP connection before PRELOGIN
	// with ALPN "tds/8.0". Value: strict.
	EncryptStrict
)

// String returns the mode's canonical connection-string value.
func (m EncryptMode) String() string {
	switch m {
	case EncryptMandatory:
		return "mandatory"
	case EncryptOptional:
		return "optional"
	case EncryptDisable:
		return "disable"
	case EncryptStrict:
		return "strict"
	}
	return fmt.Sprintf("EncryptMode(%d)", uint8(m))
}

// ParseEncryptMode parses an encrypt value: disable; false/no/optional;
// true/yes/mandatory; strict (case-insensitive).
func ParseEncryptMode(s string) (EncryptMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "disable", "disabled":
		return EncryptDisable, nil
	case "false", "no", "optional", "0":
		return EncryptOptional, nil
	case "true", "yes", "mandatory", "1", "":
		return EncryptMandatory, nil
	case "strict":
		return EncryptStrict, nil
	}
	return 0, fmt.Errorf("engine: invalid encrypt value %q (want disable, optional/false, mandatory/true or strict)", s)
}

// Packet size bounds (MS-TDS 2.2.6.4 LOGIN7 PacketSize), decode's.
const (
	minPacketSize = decode.MinPacketSize
	maxPacketSize = decode.MaxPacketSize
)

// Defaults that are documented parts of the configuration contract.
const (
	// DefaultPort is SQL Server's TCP port when neither a port nor an
	// instance name is given.
	DefaultPort = 1433
	// DefaultBrowserPort is the SQL Server Browser's UDP port (MC-SQLR).
	DefaultBrowserPort = 1434
	// DefaultConnectTimeout bounds dialing plus the login handshake when
	// Config.ConnectTimeout is zero (the value SqlClient and ODBC use).
	DefaultConnectTimeout = 15 * time.Second
	// DefaultCancelTimeout bounds the ATTENTION drain after a timeout or a
	// cancellation; when it expires the connection is closed instead.
	DefaultCancelTimeout = 5 * time.Second
	// DefaultConnectRetryInterval is the wait between connect attempts
	// when Config.ConnectRetryInterval is zero (ADO.NET's default).
	DefaultConnectRetryInterval = 10 * time.Second
	// MaxConnectRetryCount and MaxConnectRetryInterval are ADO.NET's
	// bounds for ConnectRetryCount (0..255) and ConnectRetryInterval
	// (1..60 seconds).
	MaxConnectRetryCount    = 255
	MaxConnectRetryInterval = 60 * time.Second
	// AccessTokenEnv is the environment variable Connect reads an Entra ID
	// access token from when the Config has neither AccessToken nor a
	// password source.
	AccessTokenEnv = "TDSEXTRACT_ACCESS_TOKEN"
)

// Config is everything needed to open a session. Build it with
// ParseConnString or as a literal; Connect validates it.
type Config struct {
	Host     string
	Port     int    // 0: DefaultPort, or the SQL Browser's answer when Instance is set
	Instance string // named instance, resolved through the SQL Browser when Port is 0
	Database string
	User     string

	// Password, or where to read it: PasswordEnv names an environment
	// variable, PasswordFile a file (one trailing newline is removed).
	// At most one of the three may be set.
	Password     secret.Secret
	PasswordEnv  string
	PasswordFile string

	// AccessToken is an Entra ID (Azure AD) access token sent as the
	// FEDAUTH security token. When no credential is configured at all,
	// Connect takes it from the environment variable AccessTokenEnv.
	AccessToken secret.Secret

	Encrypt                EncryptMode
	TrustServerCertificate bool   // skip certificate verification: explicit opt-in only
	CAFile                 string // PEM roots to verify the server against; empty: system pool
	HostNameInCertificate  string // name expected in the certificate; empty: Host

	// ConnectTimeout bounds dial + PRELOGIN + TLS + login (and one routing
	// hop). Zero means DefaultConnectTimeout; negative means no limit
	// beyond the caller's context.
	ConnectTimeout time.Duration
	// CancelTimeout bounds the ATTENTION round trip; zero means DefaultCancelTimeout.
	CancelTimeout time.Duration

	// ConnectRetryCount is how many more connect attempts follow one that
	// failed transiently: a refused, reset or unreachable connection, a
	// dial or login the network cut short, a server error that says to
	// retry (4060 database unavailable during a failover, Azure's 40613,
	// 40501, ...; see IsTransient). A login the server refuses (18456, or
	// any other error that retrying cannot cure), a certificate that does
	// not verify or an unknown host is reported at once. Every attempt and
	// every wait lie within the connect timeout: when less of it is left
	// than the interval, the last error is returned instead of waiting.
	// Zero (the default) makes one attempt. Connection string key:
	// ConnectRetryCount (0..255, as in ADO.NET, whose default of 1 we do
	// not copy: a connect that failed is reported at once unless retries
	// were asked for).
	ConnectRetryCount int
	// ConnectRetryInterval is the wait before each retry; zero means
	// DefaultConnectRetryInterval, at most MaxConnectRetryInterval.
	// Connection string key: ConnectRetryInterval, in seconds (1..60).
	ConnectRetryInterval time.Duration

	// PacketSize requested at login; zero requests the maximum, 32767
	// (larger packets measured much less wall time). The server may grant less (ENVCHANGE packet size).
	PacketSize     int
	AppName        string
	Workstation    string // LOGIN7 HostName; empty: os.Hostname()
	Language       string
	ReadOnlyIntent bool // ApplicationIntent=ReadOnly (read-only routing)

	// ResidencyCap is the most bytes one token or one value part may need
	// resident in the read buffer, so that a server announcing a huge
	// length cannot make the session grow; larger values stream. Zero: the
	// decoder default, decode.DefaultResidencyCap.
	ResidencyCap int

	// ReadAhead is how many 256 KiB chunks a goroutine of the session
	// reads ahead of the decoder after login (see readahead.go): zero
	// means 4 (1 MiB), at most 64; a negative value turns read-ahead off,
	// so that the request goroutine reads the socket itself. Connection
	// string key: readAhead=off|on|N.
	ReadAhead int

	// BrowserPort is the SQL Browser's UDP port; zero: DefaultBrowserPort.
	BrowserPort int
	// Dialer opens the TCP connection; nil uses net.Dialer.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Validate checks the configuration without touching the network or the
// environment.
func (c *Config) Validate() error {
	if c.Host == "" {
		return errors.New("engine: config: no server host")
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("engine: config: port %d out of range", c.Port)
	}
	if c.PacketSize != 0 && (c.PacketSize < minPacketSize || c.PacketSize > maxPacketSize) {
		return fmt.Errorf("engine: config: packet size %d outside [%d, %d]", c.PacketSize, minPacketSize, maxPacketSize)
	}
	if c.Encrypt > EncryptStrict {
		return fmt.Errorf("engine: config: invalid encrypt mode %d", c.Encrypt)
	}
	n := 0
	for _, set := range []bool{c.Password != "", c.PasswordEnv != "", c.PasswordFile != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("engine: config: more than one of password, password env and password file is set")
	}
	if c.ResidencyCap < 0 {
		return errors.New("engine: config: negative residency cap")
	}
	if c.ReadAhead > maxReadAheadChunks {
		return fmt.Errorf("engine: config: read-ahead of %d chunks exceeds %d", c.ReadAhead, maxReadAheadChunks)
	}
	if c.ConnectRetryCount < 0 || c.ConnectRetryCount > MaxConnectRetryCount {
		return fmt.Errorf("engine: config: connect retry count %d outside 0..%d", c.ConnectRetryCount, MaxConnectRetryCount)
	}
	if c.ConnectRetryInterval < 0 || c.ConnectRetryInterval > MaxConnectRetryInterval {
		return fmt.Errorf("engine: config: connect retry interval %v outside (0, %v]", c.ConnectRetryInterval, MaxConnectRetryInterval)
	}
	return nil
}

// resolveSecrets returns a copy of c with Password filled from PasswordEnv
// or PasswordFile and, when no credential is configured, AccessToken from
// the AccessTokenEnv environment variable.
func (c Config) resolveSecrets() (Config, error) {
	switch {
	case c.PasswordEnv != "":
		v, ok := os.LookupEnv(c.PasswordEnv)
		if !ok {
			return c, fmt.Errorf("engine: config: password environment variable %s is not set", c.PasswordEnv)
		}
		c.Password, c.PasswordEnv = secret.Secret(v), ""
	case c.PasswordFile != "":
		b, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return c, fmt.Errorf("engine: config: password file: %w", err)
		}
		s := strings.TrimSuffix(string(b), "\n")
		s = strings.TrimSuffix(s, "\r")
		c.Password, c.PasswordFile = secret.Secret(s), ""
	}
	if c.AccessToken == "" && c.Password == "" && c.User == "" {
		if v := os.Getenv(AccessTokenEnv); v != "" {
			c.AccessToken = secret.Secret(strings.TrimSpace(v))
		}
	}
	return c, nil
}

// resolveInstancePort asks the SQL Server Browser (MC-SQLR, UDP) for the TCP
// port of a named instance: CLNT_UCAST_INST (0x04, instance name, NUL) is
// answered by SVR_RESP (0x05, USHORT length, "ServerName;X;InstanceName;Y;
// ...;tcp;PORT;...;;").
func resolveInstancePort(ctx context.Context, host string, browserPort int, instance string) (int, error) {
	if browserPort == 0 {
		browserPort = DefaultBrowserPort
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", net.JoinHostPort(host, strconv.Itoa(browserPort)))
	if err != nil {
		return 0, fmt.Errorf("engine: SQL Browser: %w", err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultConnectTimeout)
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := make([]byte, 0, len(instance)+2)
	req = append(req, 0x04)
	req = append(req, instance...)
	req = append(req, 0)
	if _, err := conn.Write(req); err != nil {
		return 0, fmt.Errorf("engine: SQL Browser: %w", err)
	}
	buf := make([]byte, 65535+3)
	n, err := conn.Read(buf)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("engine: SQL Browser: %w", context.Cause(ctx))
		}
		return 0, fmt.Errorf("engine: SQL Browser did not answer for instance %q: %w", instance, err)
	}
	return parseSSRPResponse(buf[:n], instance)
}

// parseSSRPResponse extracts the tcp port of instance from an SVR_RESP.
func parseSSRPResponse(b []byte, instance string) (int, error) {
	if len(b) < 3 || b[0] != 0x05 {
		return 0, errors.New("engine: SQL Browser: malformed response")
	}
	size := int(b[1]) | int(b[2])<<8
	if size > len(b)-3 {
		return 0, errors.New("engine: SQL Browser: truncated response")
	}
	data := string(b[3 : 3+size])
	// One or more instance records, each "k;v;...;;".
	for _, rec := range strings.Split(data, ";;") {
		if rec == "" {
			continue
		}
		f := strings.Split(rec, ";")
		var name, port string
		for i := 0; i+1 < len(f); i += 2 {
			switch strings.ToLower(f[i]) {
			case "instancename":
				name = f[i+1]
			case "tcp":
				port = f[i+1]
			}
		}
		if !strings.EqualFold(name, instance) {
			continue
		}
		if port == "" {
			return 0, fmt.Errorf("engine: SQL Browser: instance %q has no TCP port", instance)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p <= 0 || p > 65535 {
			return 0, fmt.Errorf("engine: SQL Browser: bad port %q", port)
		}
		return p, nil
	}
	return 0, fmt.Errorf("engine: SQL Browser: instance %q not found", instance)
}
