package session

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestTransientClassification(t *testing.T) {
	for _, n := range []int32{1205, 4060, 4221, 10053, 10054, 10060, 10928, 10929, 40143, 40197, 40501, 40540, 40613, 49918, 49919, 49920, 233, 64} {
		err := fmt.Errorf("engine: query: %w", &ServerError{Number: n, Class: 16, Message: "x"})
		if !IsTransient(err) {
			t.Errorf("error %d should be transient", n)
		}
		var tmp interface{ Temporary() bool }
		if !errors.As(err, &tmp) || !tmp.Temporary() {
			t.Errorf("error %d: errors.As Temporary", n)
		}
	}
	for _, n := range []int32{18456, 208, 102, 547, 2627} {
		if IsTransient(&ServerError{Number: n}) {
			t.Errorf("error %d should not be transient", n)
		}
	}
	transient := []error{
		&NetError{Op: "read", Err: syscall.ECONNRESET},
		&NetError{Op: "read", Err: &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}},
		&NetError{Op: "read", Err: io.ErrUnexpectedEOF},
		&NetError{Op: "write", Err: syscall.EPIPE},
		&NetError{Op: "dial", Err: syscall.ECONNREFUSED},
		&NetError{Op: "read", Err: os.ErrDeadlineExceeded},
		&TimeoutError{Op: "read", Drained: true, Err: os.ErrDeadlineExceeded},
	}
	for _, err := range transient {
		if !IsTransient(fmt.Errorf("wrapped: %w", err)) {
			t.Errorf("%v should be transient", err)
		}
	}
	permanent := []error{
		&NetError{Op: "tls", Err: x509.UnknownAuthorityError{}},
		&NetError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}},
		errors.New("plain"),
		context.Canceled,
	}
	for _, err := range permanent {
		if IsTransient(err) {
			t.Errorf("%v should not be transient", err)
		}
	}
	te := &TimeoutError{Op: "read", Err: os.ErrDeadlineExceeded}
	if !errors.Is(te, context.DeadlineExceeded) || !errors.Is(te, os.ErrDeadlineExceeded) {
		t.Error("TimeoutError should match deadline errors")
	}
	se := &ServerError{Number: 208, State: 1, Class: 16, Message: "Invalid object name 'x'.", Line: 1}
	if got := se.Error(); got[:7] != "mssql: " {
		t.Errorf("ServerError text %q", got)
	}
}
