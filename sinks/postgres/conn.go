package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/sinks"
)

// Execer runs a statement: a *pgx.Conn, or the load's transaction handed
// to a BeforeCommit hook.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// ParseConn parses the connection settings without connecting: the
// connection string (URL or keyword/value, PG* environment variables for
// what it leaves out), the password from password_env or password_file.
// Errors never show the connection string or the password.
func ParseConn(c ConnConfig) (*pgx.ConnConfig, error) {
	pc, err := pgx.ParseConfig(c.Connection.Reveal())
	if err != nil {
		// pgconn's message quotes the connection string with the password
		// masked; say what is wrong without any of it.
		var pe *pgconn.ParseConfigError
		msg := "cannot parse the connection string"
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			inner := strings.ReplaceAll(pe.Unwrap().Error(), c.Connection.Reveal(), "<the connection string>")
			msg += ": " + redact(inner, c)
		}
		return nil, fmt.Errorf("postgres: connection: %s (use postgres://user@host:5432/db?sslmode=... or host=... dbname=... user=...)", msg)
	}
	switch {
	case c.PasswordEnv != "":
		pw, ok := os.LookupEnv(c.PasswordEnv)
		if !ok {
			return nil, fmt.Errorf("postgres: password_env: environment variable %s is not set", c.PasswordEnv)
		}
		pc.Password = pw
	case c.PasswordFile != "":
		b, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("postgres: password_file: %v", err)
		}
		pw, _, _ := strings.Cut(string(b), "\n")
		pc.Password = strings.TrimSuffix(pw, "\r")
	}
	if c.ConnectTimeout > 0 {
		pc.ConnectTimeout = c.ConnectTimeout
	}
	if c.ApplicationName != "" {
		if _, set := pc.RuntimeParams["application_name"]; !set {
			pc.RuntimeParams["application_name"] = c.ApplicationName
		}
	}
	return pc, nil
}

// redact removes the password from a message that might quote it.
func redact(msg string, c ConnConfig) string {
	if pc, err := pgconn.ParseConfig(c.Connection.Reveal()); err == nil && pc.Password != "" {
		msg = strings.ReplaceAll(msg, pc.Password, "[REDACTED]")
	}
	return msg
}

// Connect opens a session. Failing to reach the server or to log in is a
// *sinks.ConnectError (the CLI's exit code 3) naming the server, never
// the password.
func Connect(ctx context.Context, c ConnConfig) (*pgx.Conn, error) {
	pc, err := ParseConn(c)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		where := net.JoinHostPort(pc.Host, fmt.Sprint(pc.Port))
		if strings.HasPrefix(pc.Host, "/") {
			where = pc.Host
		}
		msg := err.Error()
		if pc.Password != "" {
			msg = strings.ReplaceAll(msg, pc.Password, "[REDACTED]")
		}
		hint := "check the host, port and that the server accepts TCP connections"
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			hint = "the server refused the login: check the user, password, database and pg_hba.conf"
		} else if strings.Contains(msg, "SSL") || strings.Contains(msg, "tls") || strings.Contains(msg, "x509") {
			hint = "TLS failed: check sslmode, sslrootcert and the server's certificate"
		}
		return nil, &sinks.ConnectError{Sink: "postgres", Err: fmt.Errorf("postgres: connecting to %s as %q, database %q: %s (%s)", where, pc.User, pc.Database, msg, hint)}
	}
	return conn, nil
}
