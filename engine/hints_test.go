package engine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/tdsextract/tdsextract/engine/session"
)

// A failed connect says what to check, and still is what it was.
func TestConnectHint(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("engine: login: %w", &session.ServerError{Number: 18456, Message: "Login failed for user 'sa'."}), "check the user name and the password"},
		{&session.ServerError{Number: 4060}, "check database= in the connection string"},
		{&session.NetError{Op: "dial", Err: refused}, "check the host and the port (default 1433"},
		{&session.NetError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}}, "the host name does not resolve"},
	} {
		got := ConnectHint(tc.err)
		if !strings.Contains(got.Error(), tc.want) || !strings.HasPrefix(got.Error(), tc.err.Error()) || !errors.Is(got, tc.err) {
			t.Errorf("%v: %v", tc.err, got)
		}
	}
	other := errors.New("engine: tls: ...")
	if ConnectHint(other) != other || ConnectHint(nil) != nil {
		t.Error("an error without a hint changed")
	}
}
