package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
)

// serverFlags are the sample-server flags. Their names are an interface
// other tools script against (CI jobs, sink authors' tests): keep them stable.
type serverFlags struct {
	listen, user, password, encrypt, cert, key, writeCA, database string
	seed                                                          int64
	rows                                                          []string
	packetSize                                                    int
	snapshot                                                      bool
	f                                                             tdsserver.Faults
}

func (sf *serverFlags) register(cmd *cobra.Command, listenDefault string) {
	fl := cmd.Flags()
	fl.StringVar(&sf.listen, "listen", listenDefault, "address to listen on (loopback only is recommended)")
	fl.StringVar(&sf.user, "user", tdsserver.DefaultUser, "SQL login name")
	fl.StringVar(&sf.password, "password", tdsserver.DefaultPassword, "SQL login password")
	fl.StringVar(&sf.database, "database", defaultDatabase, "database name")
	fl.StringVar(&sf.encrypt, "encrypt", "off", "TLS policy: off (login-only TLS), on, required, notsup, strict (TDS 8.0)")
	fl.StringVar(&sf.cert, "cert", "", "PEM certificate chain (default: a generated self-signed CA and certificate)")
	fl.StringVar(&sf.key, "key", "", "PEM private key for --cert")
	fl.StringVar(&sf.writeCA, "write-ca", "", "write the generated CA certificate (PEM) to this file for clients")
	fl.Int64Var(&sf.seed, "seed", 1, "seed of the generated data (same seed, same rows)")
	fl.StringSliceVar(&sf.rows, "rows", nil, "row count overrides, e.g. --rows poc48=1000000000,sales.orders=10000")
	fl.IntVar(&sf.packetSize, "packet-size", 32767, "largest packet size the server agrees to (512..32767)")
	fl.BoolVar(&sf.snapshot, "snapshot-isolation", true, "ALLOW_SNAPSHOT_ISOLATION of the database; false: a read under SNAPSHOT isolation fails with error 3952 (SQL Server's default)")
	fl.Int64Var(&sf.f.CloseAfterBytes, "fault-close-after-bytes", 0, "close the connection after N bytes of a query response")
	fl.Int64Var(&sf.f.CloseAfterRows, "fault-close-after-rows", 0, "close the connection after N rows of a result set")
	fl.Int64Var(&sf.f.StallAfterRows, "fault-stall-after-rows", 0, "stall after N rows (for --fault-stall)")
	fl.DurationVar(&sf.f.Stall, "fault-stall", 0, "how long to stall (with --fault-stall-after-rows)")
	fl.Int64Var(&sf.f.TrickleBytesPerSec, "fault-trickle", 0, "send responses at BYTES_PER_SEC")
	fl.BoolVar(&sf.f.SplitTokens, "fault-split-tokens", false, "split every token across tiny packets")
	fl.Int64Var(&sf.f.MalformedAtRow, "fault-malformed-at-row", 0, "send a structurally invalid token at row N")
	fl.Int64Var(&sf.f.HostileLengthAtRow, "fault-hostile-length-at-row", 0, "announce a huge PLP length or column count at row N")
	fl.StringVar(&sf.f.Table, "fault-table", "", "apply faults only to queries on this table")
}

func (sf *serverFlags) config() (tdsserver.Config, error) {
	rows := map[string]int64{}
	for _, r := range sf.rows {
		name, n, ok := strings.Cut(r, "=")
		if !ok {
			return tdsserver.Config{}, &usageError{fmt.Errorf("--rows %q: use table=N", r)}
		}
		v, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		if err != nil || v < 0 {
			return tdsserver.Config{}, &usageError{fmt.Errorf("--rows %q: N must be a non-negative integer", r)}
		}
		rows[strings.TrimSpace(name)] = v
	}
	if err := sf.f.Validate(); err != nil {
		return tdsserver.Config{}, &usageError{err}
	}
	if sf.packetSize < 512 || sf.packetSize > 32767 {
		return tdsserver.Config{}, &usageError{fmt.Errorf("--packet-size %d: must be within 512..32767", sf.packetSize)}
	}
	if (sf.cert == "") != (sf.key == "") {
		return tdsserver.Config{}, &usageError{errors.New("--cert and --key go together")}
	}
	enc := tdsserver.Encryption(strings.ToLower(sf.encrypt))
	switch enc {
	case tdsserver.EncryptOff, tdsserver.EncryptOn, tdsserver.EncryptRequired, tdsserver.EncryptNotSup, tdsserver.EncryptStrict:
	default:
		return tdsserver.Config{}, &usageError{fmt.Errorf("--encrypt %q: use off, on, required, notsup or strict", sf.encrypt)}
	}
	dbc := sampledb.Config{Seed: sf.seed, Rows: rows, Database: sf.database, NoSnapshot: !sf.snapshot}
	if err := dbc.Validate(); err != nil {
		return tdsserver.Config{}, &usageError{fmt.Errorf("--rows: %w", err)}
	}
	db := sampledb.New(dbc)
	cfg := tdsserver.Config{
		Addr:          sf.listen,
		DB:            db,
		Database:      sf.database,
		Users:         map[string]string{sf.user: sf.password},
		Encryption:    enc,
		CertFile:      sf.cert,
		KeyFile:       sf.key,
		MaxPacketSize: sf.packetSize,
		Faults:        sf.f,
	}
	return cfg, nil
}

// connString is a connection string (without the password) that the
// running server accepts with its encryption mode: what `sample-server`
// prints for clients. ca is the file --write-ca wrote, or "".
func (sf *serverFlags) connString(addr, database, ca string) string {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every address: connect to loopback
	}
	q := url.Values{"database": {database}}
	tlsFull := true
	switch tdsserver.Encryption(strings.ToLower(sf.encrypt)) {
	case tdsserver.EncryptOff:
		// Login-only TLS, as SQL Server without forced encryption: the
		// certificate is not verified in that mode.
		q.Set("encrypt", "optional")
		tlsFull = false
	case tdsserver.EncryptNotSup:
		q.Set("encrypt", "disable")
		tlsFull = false
	case tdsserver.EncryptStrict:
		q.Set("encrypt", "strict")
	default: // on, required
		q.Set("encrypt", "mandatory")
	}
	if tlsFull {
		switch {
		case ca != "":
			q.Set("certificate", ca)
		case sf.cert != "":
			q.Set("certificate", sf.cert) // a chain file also serves as its own trust anchor
		default:
			q.Set("TrustServerCertificate", "true")
		}
		if sf.cert == "" {
			// The generated certificate is for localhost, 127.0.0.1 and ::1.
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				q.Set("hostNameInCertificate", "localhost")
			}
		}
	}
	return "sqlserver://" + url.User(sf.user).String() + "@" + net.JoinHostPort(host, port) + "?" + q.Encode()
}

func newSampleServerCmd(g *globalOpts) *cobra.Command {
	var sf serverFlags
	cmd := &cobra.Command{
		Use:   "sample-server",
		Short: "Serve the generated sample database over TDS (for trials, tests and benchmarks)",
		Long: `sample-server serves a deterministic sample database over real TDS 7.4/8.0:
the benchmark shapes (poc48, odbc5, wide601, lob, lob_nvarchar, temporal,
lineitem), type_matrix (every SQL Server type with edge values), the sales
schema (customers, products, orders, order_lines), the warehouse schema (sites,
stock, movements, the view low_stock and two sequences: what a migration must
find in a catalog), the finance schema (invoices and ledger, identities on
decimal(12,0) and numeric(20,0) keys, a datetimeoffset default, and six views
of UNION, UNION ALL, EXCEPT, INTERSECT, TOP (5) and a CTE) and text tables in
code pages 1252, 1251, 932 and UTF-8.
Login: sa / Sample-Passw0rd unless changed.`,
		Args: noArgs("sample-server"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := sf.config()
			if err != nil {
				return err
			}
			cfg.Logger = g.logger()
			srv, err := tdsserver.Start(cfg)
			if err != nil {
				return &engine.JobError{Kind: engine.KindConfig, Err: err}
			}
			defer srv.Close()
			ca := ""
			if sf.writeCA != "" {
				if err := srv.WriteCA(sf.writeCA); err != nil {
					return &engine.JobError{Kind: engine.KindConfig, Err: err}
				}
				if ca, err = filepath.Abs(sf.writeCA); err != nil {
					ca = sf.writeCA
				}
			}
			fmt.Fprintf(g.stdout, "sample server listening on %s (database %s, user %s, encryption %s)\n", srv.Addr(), cfg.Database, sf.user, cfg.Encryption)
			fmt.Fprintf(g.stdout, "connect with: %s\n", sf.connString(srv.Addr(), cfg.Database, ca))
			fmt.Fprintf(g.stdout, "  and the password given by --password, for example: TDSEXTRACT_PW=... tdsextract export --source '<that>' --password-env TDSEXTRACT_PW --table dbo.poc48\n")
			if sf.writeCA == "" && sf.cert == "" && cfg.Encryption != tdsserver.EncryptOff && cfg.Encryption != tdsserver.EncryptNotSup {
				fmt.Fprintf(g.stdout, "  (to verify the server instead of trusting it, start it with --write-ca ca.pem and connect with certificate=ca.pem)\n")
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	sf.register(cmd, "127.0.0.1:14330")
	return cmd
}

// demoTables are exported by `tdsextract demo`.
var demoTables = []string{
	"dbo.type_matrix", "dbo.poc48", "dbo.odbc5", "dbo.temporal", "dbo.lineitem",
	"sales.customers", "sales.products", "sales.orders", "sales.order_lines",
	"dbo.text_cp1252", "dbo.text_cp1251", "dbo.text_cp932", "dbo.text_utf8",
}

func newDemoCmd(g *globalOpts) *cobra.Command {
	var out string
	var to []string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the built-in sample server and export sample tables to ./out",
		Args:  noArgs("demo"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var sf serverFlags
			sf.listen, sf.user, sf.password, sf.database, sf.encrypt, sf.seed, sf.packetSize =
				"127.0.0.1:0", tdsserver.DefaultUser, tdsserver.DefaultPassword, defaultDatabase, "off", 1, 32767
			cfg, err := sf.config()
			if err != nil {
				return err
			}
			srv, err := tdsserver.Start(cfg)
			if err != nil {
				return &engine.JobError{Kind: engine.KindConfig, Err: err}
			}
			defer srv.Close()
			const pwEnv = "TDSEXTRACT_DEMO_PASSWORD"
			os.Setenv(pwEnv, sf.password)
			job := &engine.JobConfig{
				Name: "demo",
				Source: engine.SourceConfig{
					Connection:  secret.Secret(fmt.Sprintf("sqlserver://%s@%s?database=%s&encrypt=optional&TrustServerCertificate=true", sf.user, srv.Addr(), sf.database)),
					PasswordEnv: pwEnv,
					Timeout:     "5m",
				},
				Parallel:    2,
				SummaryFile: out + "/summary.json",
			}
			for _, t := range to {
				job.Sinks = append(job.Sinks, engine.SinkConfig{Type: t, Options: map[string]any{"path": out + "/" + t + "/"}})
			}
			for _, t := range demoTables {
				// every sink with its default options: they hold every
				// value of every sample table (0001-01-01, 9999-12-31
				// 23:59:59.9999999 included)
				ex := engine.ExtractConfig{Table: t, Verify: "count"}
				job.Extracts = append(job.Extracts, ex)
			}
			if !g.quiet {
				fmt.Fprintf(g.stdout, "demo: sample server on %s; exporting %d tables to %s (%s)\n", srv.Addr(), len(demoTables), out, strings.Join(to, ", "))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			return runJob(ctx, g, job, nil, nil)
		},
	}
	cmd.Flags().StringVar(&out, "out", "out", "output directory")
	cmd.Flags().StringSliceVar(&to, "to", []string{"csv", "parquet"}, "sinks to export to")
	return cmd
}

// defaultDatabase is the sample database's name.
const defaultDatabase = "sample"
