package engine

import (
	"errors"
	"net"
	"syscall"

	"github.com/tdsextract/tdsextract/engine/session"
)

// ConnectHint adds what to check to a failed connect, as bcp and psql
// users expect to be told: a refused login, a database the login cannot
// open, nothing listening, a host name that does not resolve. Errors that
// say it themselves (TLS, the connect timeout) are left as they are;
// errors.As and errors.Is still see the original.
func ConnectHint(err error) error {
	var se *session.ServerError
	var dns *net.DNSError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Number == 4060:
		return &hinted{err, "check database= in the connection string, and that the login may open that database"}
	case errors.As(err, &se) && se.Number == 18456:
		return &hinted{err, "the server refused the login: check the user name and the password (from --password-env or --password-file, source.password_env or source.password_file), and that SQL Server accepts SQL logins; the server's error log says why, by the state number"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &hinted{err, "nothing accepts connections there: check the host and the port (default 1433; a named instance needs the SQL Browser on UDP 1434 or its port), that SQL Server listens on TCP/IP, and that no firewall is in the way"}
	case errors.As(err, &dns) && dns.IsNotFound:
		return &hinted{err, "the host name does not resolve: check it, or give the server's address"}
	}
	return err
}
