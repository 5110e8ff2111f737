package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/secret"
)

// sourceFlags are the source flags of every command that connects without
// a job file (export, inspect, tables): the same names, meanings and
// TDSEXTRACT_SOURCE_* environment variables as a job file's source keys.
type sourceFlags struct {
	connection, passwordEnv, passwordFile, connectTimeout, timeout string
}

func (s *sourceFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.connection, "source", "", "connection string (URL or ADO form); env TDSEXTRACT_SOURCE_CONNECTION")
	f.StringVar(&s.passwordEnv, "password-env", "", "environment variable holding the password; env TDSEXTRACT_SOURCE_PASSWORD_ENV")
	f.StringVar(&s.passwordFile, "password-file", "", "file whose first line is the password; env TDSEXTRACT_SOURCE_PASSWORD_FILE")
	f.StringVar(&s.connectTimeout, "connect-timeout", "", "bound on dial, TLS and login, e.g. 30s (default 15s); env TDSEXTRACT_SOURCE_CONNECT_TIMEOUT")
	f.StringVar(&s.timeout, "timeout", "", `request deadline: a network-wait budget per query such as 30m, or "none" (default none); env TDSEXTRACT_SOURCE_TIMEOUT`)
}

// config is the job source the flags describe, each unset flag taken from
// its TDSEXTRACT_SOURCE_* variable. Without a connection string it is a
// command-line error naming the command.
func (s *sourceFlags) config(command string) (engine.SourceConfig, error) {
	v := viper.New()
	bindJobEnv(v)
	or := func(flag, key string) string {
		if flag != "" {
			return flag
		}
		return v.GetString(key)
	}
	src := engine.SourceConfig{
		Connection:     secret.Secret(or(s.connection, "source.connection")),
		PasswordEnv:    or(s.passwordEnv, "source.password_env"),
		PasswordFile:   or(s.passwordFile, "source.password_file"),
		ConnectTimeout: or(s.connectTimeout, "source.connect_timeout"),
		Timeout:        or(s.timeout, "source.timeout"),
	}
	// A flag wins over the other password variable's environment value.
	switch {
	case s.passwordEnv != "":
		src.PasswordFile = s.passwordFile
	case s.passwordFile != "":
		src.PasswordEnv = ""
	}
	if src.Connection == "" {
		return src, &usageError{errors.New(command + " needs --source (or TDSEXTRACT_SOURCE_CONNECTION)")}
	}
	return src, nil
}
