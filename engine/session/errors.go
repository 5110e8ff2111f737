package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// ServerError is an ERROR token (MS-TDS 2.2.7.10) returned by the server.
type ServerError struct {
	Number  int32
	State   uint8
	Class   uint8 // severity; 11..16 user errors, 17+ resource/system errors, 20+ fatal to the connection
	Message string
	Server  string
	Proc    string
	Line    int32
}

func (e *ServerError) Error() string {
	if e.Proc != "" {
		return fmt.Sprintf("mssql: %s (error %d, severity %d, state %d, procedure %s, line %d)", e.Message, e.Number, e.Class, e.State, e.Proc, e.Line)
	}
	return fmt.Sprintf("mssql: %s (error %d, severity %d, state %d, line %d)", e.Message, e.Number, e.Class, e.State, e.Line)
}

// transientNumbers are the SQL Server error numbers a retry can cure:
// deadlock victim, login failures during failover, Azure SQL throttling and
// reconfiguration, network errors surfaced as server messages.
var transientNumbers = map[int32]bool{
	64:    true, // connection was successfully established but then an error occurred
	233:   true, // no process is on the other end of the pipe
	1205:  true, // deadlock victim
	4060:  true, // cannot open database (failover in progress)
	4221:  true, // login to read-secondary failed due to long wait on HADR_DATABASE_WAIT_FOR_TRANSITION_TO_VERSIONING
	10053: true, // transport-level error (software caused connection abort)
	10054: true, // transport-level error (connection reset by peer)
	10060: true, // network timeout
	10928: true, // Azure: resource limit reached
	10929: true, // Azure: minimum guarantee not available
	40143: true, // Azure: service encountered an error processing your request
	40197: true, // Azure: service error processing request (reconfiguration)
	40501: true, // Azure: service is currently busy
	40540: true, // Azure: service encountered an error
	40613: true, // Azure: database not currently available
	49918: true, // Azure: not enough resources to process request
	49919: true, // Azure: too many create/update operations
	49920: true, // Azure: too many operations in progress
}

// Temporary reports whether retrying the request may succeed.
func (e *ServerError) Temporary() bool { return transientNumbers[e.Number] }

// TimeoutError reports that a request's budget (Timeout) ran out
// while waiting on the network. When Drained is true the request was
// cancelled with ATTENTION and the connection remains usable; otherwise it
// was closed.
type TimeoutError struct {
	Op      string        // "read", "write", "login"
	Budget  time.Duration // the budget the request started with
	Drained bool
	Err     error // the underlying i/o timeout
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("engine: %s: request timeout: budget of %v spent waiting on the network", e.Op, e.Budget)
	if !e.Drained {
		s += " (connection closed)"
	}
	return s
}

func (e *TimeoutError) Unwrap() error     { return e.Err }
func (e *TimeoutError) Timeout() bool     { return true }
func (e *TimeoutError) Temporary() bool   { return true }
func (e *TimeoutError) Is(err error) bool { return err == context.DeadlineExceeded }

// ConnectTimeoutError reports that dial, TLS and login did not finish
// within the connect timeout (Config.ConnectTimeout, DefaultConnectTimeout
// when unset). It is not a request timeout: no query had started.
type ConnectTimeoutError struct {
	Limit time.Duration
	Err   error // what the connect was waiting for when the time ran out
}

func (e *ConnectTimeoutError) Error() string {
	return fmt.Sprintf("engine: connect timeout: no session within %v (dial, TLS and login); check that the address is the server's and that it answers, or raise the connect timeout (source.connect_timeout, --connect-timeout, or \"connect timeout\" in the connection string; default %v)",
		e.Limit, DefaultConnectTimeout)
}

func (e *ConnectTimeoutError) Unwrap() error     { return e.Err }
func (e *ConnectTimeoutError) Timeout() bool     { return true }
func (e *ConnectTimeoutError) Temporary() bool   { return true }
func (e *ConnectTimeoutError) Is(err error) bool { return err == context.DeadlineExceeded }

// NetError is a network failure of a session (connection reset, EOF in the
// middle of a response, dial failure). The connection is closed.
type NetError struct {
	Op  string // "dial", "read", "write", "tls", "browser"
	Err error
}

func (e *NetError) Error() string { return "engine: " + e.Op + ": " + e.Err.Error() }
func (e *NetError) Unwrap() error { return e.Err }

// Temporary reports whether the failure is of a kind that a reconnect and
// retry may cure: resets, aborts, refused connections, unexpected EOF and
// timeouts. TLS verification failures and DNS "no such host" are not.
func (e *NetError) Temporary() bool { return transientNetErr(e.Err) }

func transientNetErr(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return false
}

// IsTransient reports whether err says that a retry may succeed: the
// first error in its chain with a Temporary() method (this package's
// errors, or net's) decides.
func IsTransient(err error) bool {
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) {
		return tmp.Temporary()
	}
	return false
}

// ErrConnBroken is returned by a Conn whose session was closed by an
// earlier failure (protocol error, failed drain, network error).
var ErrConnBroken = errors.New("engine: connection is closed after an earlier failure")

// ErrConnBusy is returned when a Conn is used by two requests at once.
var ErrConnBusy = errors.New("engine: connection is busy with another request")
