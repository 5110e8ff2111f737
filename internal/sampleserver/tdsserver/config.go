package tdsserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// Encryption is the server's TLS policy (see doc.go for the PRELOGIN matrix).
type Encryption string

const (
	// EncryptOff is a SQL Server without "force encryption": TLS for the
	// LOGIN7 packet only when the client says OFF, full TLS when the client
	// asks for it (ON/REQ), no TLS for a client that does not support it.
	EncryptOff Encryption = "off"
	// EncryptOn answers ON: full TLS for every client that can do TLS; a
	// client that says NOT_SUP is served in plaintext.
	EncryptOn Encryption = "on"
	// EncryptRequired answers REQ: full TLS; a NOT_SUP client is disconnected.
	EncryptRequired Encryption = "required"
	// EncryptNotSup answers NOT_SUP: no TLS at all.
	EncryptNotSup Encryption = "notsup"
	// EncryptStrict is TDS 8.0: TLS (ALPN "tds/8.0") on the raw TCP
	// connection before PRELOGIN; clients that do not start TLS fail.
	EncryptStrict Encryption = "strict"
)

// Defaults.
const (
	DefaultUser     = "sa"
	DefaultPassword = "Sample-Passw0rd"
	DefaultSPIDBase = 51 // real servers hand user sessions SPIDs above 50
)

// Config configures a Server. The zero value (plus DB) is a loopback server
// on an ephemeral port with the default login and login-only TLS.
type Config struct {
	// Addr is the listen address; "" means 127.0.0.1:0 (an ephemeral port).
	Addr string
	// DB is the sample database served. Required.
	DB *sampledb.DB
	// Database is the name clients use for DB at login; default DB.Name()
	// ("sample"). "master" and "tempdb" are also accepted at login.
	Database string
	// Users maps user name to password for SQL authentication.
	// Default: {"sa": "Sample-Passw0rd"}.
	Users map[string]string
	// AccessTokens maps a federated-authentication access token (the
	// LOGIN7 FEDAUTH feature, security-token library) to the user name it
	// authenticates. Without entries, FEDAUTH logins fail with 18456.
	AccessTokens map[string]string

	// Encryption is the TLS policy; "" means EncryptOff.
	Encryption Encryption
	// CertFile and KeyFile name a PEM certificate chain and key. When both
	// are empty, the server generates a CA and an ECDSA P-256 certificate
	// for 127.0.0.1, ::1 and localhost, valid for a day; CACertPEM/WriteCA
	// give the CA to clients.
	CertFile, KeyFile string

	// MaxPacketSize is the largest packet size the server agrees to in
	// LOGIN7 negotiation (512..32767); 0 means 32767.
	MaxPacketSize int
	// SPIDBase is the SPID of the first connection; later connections count
	// up from it. 0 means 51. SPIDs are never 0 (FreeTDS asks @@spid then).
	SPIDBase uint16

	// Faults injects failures into query responses (never into login).
	Faults Faults
	// RouteTo, when set ("host:port"), makes the server answer every
	// successful LOGIN7 with a routing ENVCHANGE (type 20) to that address
	// and close the connection, as an Azure SQL gateway does.
	RouteTo string

	// Logger receives connection-level events at debug level and protocol
	// errors at warn level; nil discards them.
	Logger *slog.Logger
}

// Faults are failure knobs for client tests. Each applies to every query
// response, or, when Table is set, only to queries reading that table.
// Rows are counted per result set; bytes per response message. Zero values
// disable a knob. See doc.go for the exact wire behaviour of each.
type Faults struct {
	// Table limits the faults to queries whose result reads this table
	// ("name" or "schema.name", case-insensitive); it must name a table
	// or catalog view of the database.
	Table string
	// CloseAfterBytes closes the TCP connection once this many bytes of a
	// query response (packet headers included) have been written.
	CloseAfterBytes int64
	// CloseAfterRows closes the connection after this many rows of a result
	// set have been written (the packets holding them are flushed first).
	CloseAfterRows int64
	// StallAfterRows flushes the rows written so far, then sends nothing for
	// Stall (an ATTENTION or Close ends the stall early), then continues.
	StallAfterRows int64
	Stall          time.Duration
	// TrickleBytesPerSec limits the response rate to this many bytes per
	// second, written in small pieces.
	TrickleBytesPerSec int64
	// SplitTokens frames responses in tiny packets (1 to 13 payload bytes,
	// varying) so that every token and most values straddle packets.
	SplitTokens bool
	// MalformedAtRow replaces row N (1-based) with a structurally invalid
	// token (an undefined token id) and ends the message there.
	MalformedAtRow int64
	// HostileLengthAtRow replaces row N (1-based) with a row announcing a
	// huge PLP total (2^62 bytes, first chunk 2^32-16) when the result has a
	// (max)/xml/json column, else with a COLMETADATA announcing 65534
	// columns; the message then ends.
	HostileLengthAtRow int64
}

// Enabled reports whether any knob is set.
func (f *Faults) Enabled() bool {
	return f.CloseAfterBytes > 0 || f.CloseAfterRows > 0 || f.StallAfterRows > 0 ||
		f.TrickleBytesPerSec > 0 || f.SplitTokens || f.MalformedAtRow > 0 || f.HostileLengthAtRow > 0
}

// Validate checks the knobs for consistency.
func (f *Faults) Validate() error {
	var errs []error
	neg := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("tdsserver: fault %s must not be negative (got %d)", name, v))
		}
	}
	neg("close-after-bytes", f.CloseAfterBytes)
	neg("close-after-rows", f.CloseAfterRows)
	neg("stall-after-rows", f.StallAfterRows)
	neg("trickle", f.TrickleBytesPerSec)
	neg("malformed-at-row", f.MalformedAtRow)
	neg("hostile-length-at-row", f.HostileLengthAtRow)
	if f.Stall < 0 {
		errs = append(errs, errors.New("tdsserver: fault stall must not be negative"))
	}
	if f.StallAfterRows > 0 && f.Stall == 0 {
		errs = append(errs, errors.New("tdsserver: fault stall-after-rows needs a stall duration"))
	}
	if f.Stall > 0 && f.StallAfterRows == 0 {
		errs = append(errs, errors.New("tdsserver: fault stall needs stall-after-rows"))
	}
	if f.MalformedAtRow > 0 && f.HostileLengthAtRow > 0 {
		errs = append(errs, errors.New("tdsserver: faults malformed-at-row and hostile-length-at-row exclude each other"))
	}
	if f.Table != "" && !f.Enabled() {
		errs = append(errs, errors.New("tdsserver: fault table given without any fault"))
	}
	return errors.Join(errs...)
}

// appliesTo reports whether the faults apply to a result on table
// (schema-qualified or bare; "" for results that read no table).
func (f *Faults) appliesTo(table string) bool {
	if f == nil || !f.Enabled() {
		return false
	}
	if f.Table == "" {
		return true
	}
	return f.names(table)
}

// names reports whether Faults.Table names table (schema-qualified or
// bare; "" never matches).
func (f *Faults) names(table string) bool {
	if table == "" {
		return false
	}
	want := strings.ToLower(strings.Trim(f.Table, "[]"))
	got := strings.ToLower(table)
	if want == got {
		return true
	}
	if i := strings.LastIndexByte(got, '.'); i >= 0 && !strings.Contains(want, ".") {
		return got[i+1:] == want
	}
	return false
}

func (c *Config) validate() error {
	if c.DB == nil {
		return errors.New("tdsserver: Config.DB is required")
	}
	switch c.Encryption {
	case "", EncryptOff, EncryptOn, EncryptRequired, EncryptNotSup, EncryptStrict:
	default:
		return fmt.Errorf("tdsserver: unknown encryption %q (want off, on, required, notsup or strict)", c.Encryption)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("tdsserver: CertFile and KeyFile go together")
	}
	if c.MaxPacketSize != 0 && (c.MaxPacketSize < 512 || c.MaxPacketSize > 32767) {
		return fmt.Errorf("tdsserver: MaxPacketSize %d outside 512..32767", c.MaxPacketSize)
	}
	if c.RouteTo != "" {
		host, port, err := net.SplitHostPort(c.RouteTo)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || host == "" || n <= 0 || n > 65535 {
			return fmt.Errorf("tdsserver: RouteTo %q is not host:port", c.RouteTo)
		}
	}
	for u := range c.Users {
		if u == "" {
			return errors.New("tdsserver: empty user name")
		}
	}
	if err := c.Faults.Validate(); err != nil {
		return err
	}
	return c.checkFaultTable()
}

// checkFaultTable rejects a Faults.Table that names no table of the
// database (the faults would silently never fire).
func (c *Config) checkFaultTable() error {
	if c.Faults.Table == "" {
		return nil
	}
	var names []string
	for _, ts := range [][]*sampledb.Table{c.DB.Tables(), c.DB.Catalogs()} {
		for _, t := range ts {
			if c.Faults.names(t.Schema + "." + t.Name) {
				return nil
			}
			if !t.Catalog {
				names = append(names, t.Schema+"."+t.Name)
			}
		}
	}
	return fmt.Errorf("tdsserver: fault table %q: no such table (tables: %s, and the catalog views)", c.Faults.Table, strings.Join(names, ", "))
}

func (c *Config) withDefaults() Config {
	d := *c
	if d.Addr == "" {
		d.Addr = "127.0.0.1:0"
	}
	if d.Database == "" {
		d.Database = d.DB.Name()
	}
	if len(d.Users) == 0 {
		d.Users = map[string]string{DefaultUser: DefaultPassword}
	}
	if d.Encryption == "" {
		d.Encryption = EncryptOff
	}
	if d.MaxPacketSize == 0 {
		d.MaxPacketSize = 32767
	}
	if d.SPIDBase == 0 {
		d.SPIDBase = DefaultSPIDBase
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return d
}
