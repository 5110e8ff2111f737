// Command bench is tdsextract's A/B fetch harness (how it measures:
// docs/ARCHITECTURE.md, Measuring): it times tdsextract's fetch-and-decode path
// against go-mssqldb (database/sql, scanning every column into interface
// values, and into typed targets as the go-mssqldb-typed leg) and FreeTDS
// (freebcp queryout to tmpfs) on the same test-server tables, in one
// invocation, with a checksum over every decoded value that must match on
// every leg, at least 9 repetitions with the first discarded, and legs
// interleaved (A B C, C B A, ...).
//
// Modes: "memory" replays pre-recorded server bytes to both Go decoders
// through an in-memory connection (decode alone); "loopback" reads from the
// test server over TCP on 127.0.0.1. The raw leg only reads the same bytes
// (a memmove in memory mode, a socket read on loopback): the ceiling. The
// tdsextract-walk and tdsextract-discard legs split tdsextract's own time
// (breakdown.go).
//
//	go run ./bench -out bench/results/latest.json          # the standard set
//	go run ./bench -shapes odbc5 -modes loopback -reps 15
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/cputime"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
)

// Result is one leg of one shape and mode (the JSON schema of latest.json).
type Result struct {
	Shape     string  `json:"shape"`
	Mode      string  `json:"mode"`
	Leg       string  `json:"leg"`
	Rows      int64   `json:"rows"`
	WireBytes int64   `json:"wire_bytes"`
	Reps      int     `json:"reps"`
	MedianMs  float64 `json:"median_ms"`
	MinMs     float64 `json:"min_ms"`
	MaxMs     float64 `json:"max_ms"`
	RowsPerS  float64 `json:"rows_per_s"`
	MBPerS    float64 `json:"mb_per_s"`
	// AllocsPerRow and BytesPerRow count heap allocations and bytes per
	// row in the timed part, for the whole process: over loopback with the
	// in-process test server they include the server's (wide601: about 950
	// B/row); memory mode, or -server with a server in another process,
	// gives the client's alone.
	AllocsPerRow *float64 `json:"allocs_per_row,omitempty"`
	BytesPerRow  *float64 `json:"bytes_per_row,omitempty"`
	// NsPerRow and NsPerCell are the median time per row and per cell
	// (Columns cells a row).
	NsPerRow  float64 `json:"ns_per_row"`
	NsPerCell float64 `json:"ns_per_cell"`
	Columns   int     `json:"columns"`
	// CPUMs is the median CPU time of the timed part, every thread of this
	// process (the test server too, when it runs in-process) and of its
	// finished children (freebcp): over CPUMs/MedianMs cores were busy.
	CPUMs float64 `json:"cpu_ms"`
	// OrderBias is the median time of the reps run in reverse leg order
	// over that of the reps in forward order: far from 1, what ran just
	// before the leg moved its time.
	OrderBias float64 `json:"order_bias"`
	// FileBytes is the size of the file a parquet-mode leg wrote.
	FileBytes int64  `json:"file_bytes,omitempty"`
	Checksum  string `json:"checksum"`
	// CPUNsPerRow is CPUMs per row; PluginPeakRSS the plugin process's
	// peak resident memory (the plugin suite).
	CPUNsPerRow   float64 `json:"cpu_ns_per_row,omitempty"`
	PluginPeakRSS int64   `json:"plugin_peak_rss,omitempty"`
	RatioToTDSX   *Ratio  `json:"ratio_vs_tdsextract,omitempty"`
	// CPURatioToTDSX is this leg's CPU time over tdsextract's, per
	// interleaved pair (the PostgreSQL suite).
	CPURatioToTDSX *Ratio    `json:"cpu_ratio_vs_tdsextract,omitempty"`
	AllMs          []float64 `json:"all_ms"`
}

// Ratio is this leg's time over tdsextract's, per interleaved pair.
type Ratio struct {
	OfMedians float64 `json:"of_medians"`
	PairMed   float64 `json:"pair_median"`
	PairMin   float64 `json:"pair_min"`
	PairMax   float64 `json:"pair_max"`
}

// shapeRows are the standard row counts (odbc5: 200,000, the row count of
// the ODBC comparison it reproduces).
var shapeRows = map[string]int64{
	"poc48": 200000, "odbc5": 200000, "wide601": 3000, "lob": 20000, "temporal": 200000, "lineitem": 200000,
}

// tableShapes are sample tables shaped like the tables exports meet (the
// parquet mode runs them, named schema.table): sales.orders has an
// ascending identity key, a repeated customer key, order dates rising
// with the key, a status of six values, a nullable city of a few dozen
// and money amounts; sales.order_lines an ascending key, the order key
// in runs, a product key of 200 values, small quantities, prices and
// discounts.
var tableShapes = map[string]int64{"sales.orders": 200000, "sales.order_lines": 200000}

// tableOf is the table a shape is read from.
func tableOf(shape string) string {
	if strings.Contains(shape, ".") {
		return shape
	}
	return "dbo." + shape
}

type leg struct {
	name string
	// run performs one timed repetition and returns the elapsed time, rows,
	// checksum and allocations made during the timed part (-1 unknown).
	run func() (sample, error)
	// rowsOnly: the leg computes no checksum (the breakdown legs) and is
	// held to tdsextract's row count only.
	rowsOnly bool
	// cold: no untimed run of the leg just before each timed one (freebcp,
	// a process of its own; see the rep loop).
	cold bool
}

func main() {
	servePluginIfAsked()
	serveSampleIfAsked()
	var (
		out     = flag.String("out", "bench/results/latest.json", "JSON results file")
		md      = flag.String("md", "bench/results/latest.md", "also write the summary and the full markdown table here")
		shapes  = flag.String("shapes", "poc48,odbc5,wide601,lob,temporal,lineitem", "shapes to run (the parquet mode also runs sales.orders and sales.order_lines, tables shaped like real ones)")
		modes   = flag.String("modes", "memory,loopback", "memory, loopback, parquet (tdsextract's Parquet sink beside DuckDB's writer, parquet.go)")
		reps    = flag.Int("reps", 9, "repetitions per leg (the first is discarded; at least 9)")
		rowsF   = flag.Int64("rows", 0, "override the row count of every shape")
		noBCP   = flag.Bool("no-freebcp", false, "skip the freebcp leg")
		server  = flag.String("server", "", "host:port of a sample server already running in another process (tdsextract sample-server, default seed); default: one in this process")
		prof    = flag.String("cpuprofile", "", "write a CPU profile of the whole run here (look at one leg with pprof -focus)")
		migRows = flag.String("migrate-rows", "100000,1000000", "-suite migrate: row counts of the table (sales: of order_lines), comma-separated")
		suite   = flag.String("suite", "fetch", "fetch (decode into checksums), postgres (load PostgreSQL; shapes default poc48,odbc5,temporal,lineitem), migrate (tdsextract migrate beside pgloader: -shapes lineitem (default; any dbo table) or sales (the whole sales schema with its keys, indexes and foreign keys, order_lines at -migrate-rows and the other tables in proportion); wall time and peak RSS, results in bench/results/migrate.* for lineitem, migrate-<shapes>.* otherwise), plugins (the plugin boundary: shapes default poc48,lineitem, mode memory, results in bench/results/plugins.*) or partitions (one table as 1 and as 2 key-range units, the server's CPU share; -rows, results in bench/results/partitions.md)")
		pgURL   = flag.String("pg", "", "PostgreSQL for -suite postgres (superuser: the ceiling legs COPY server-side files); default: a throwaway PostgreSQL started for the run")
		noPGL   = flag.Bool("no-pgloader", false, "skip the pgloader leg of -suite postgres and -suite migrate")
		baseBin = flag.String("baseline", "", "-suite migrate: also run this tdsextract binary (built from another commit) as a leg, alternating with this build, for an A/B of two commits")
		pgSet   = flag.String("pg-set", "", "settings for the throwaway PostgreSQL of -suite postgres and migrate, name=value,... after the harness's own (fsync=off, synchronous_commit=off, full_page_writes=off), e.g. wal_level=minimal,max_wal_senders=0")
		migVar  = flag.String("migrate-variant", "", "-suite migrate: also run this build with these extra migrate flags (space-separated, e.g. \"--split-rows 0\") as a leg, alternating with the default one")
		pqSet   = flag.String("parquet-set", "", "parquet mode: sink options for tdsextract's legs, key=value,... (default: the sink's defaults)")
	)
	flag.Parse()
	if *suite == "plugins" {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["shapes"] {
			*shapes = "poc48,lineitem"
		}
		if !set["modes"] {
			*modes = "memory"
		}
		if !set["out"] {
			*out = "bench/results/plugins.json"
		}
		if !set["md"] {
			*md = "bench/results/plugins.md"
		}
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *reps < 9 {
		fmt.Fprintln(os.Stderr, "bench: -reps must be at least 9 (the first is a discarded warm-up; fewer leave no median worth quoting)")
		os.Exit(2)
	}
	if *suite == "migrate" {
		names := []string{"lineitem"}
		if flagSet("shapes") {
			names = strings.Split(*shapes, ",")
		}
		// lineitem alone keeps the file names it always had
		base := "bench/results/migrate"
		if len(names) != 1 || names[0] != "lineitem" {
			base += "-" + strings.Join(names, "-")
		}
		if !flagSet("out") {
			*out = base + ".json"
		}
		if !flagSet("md") {
			*md = base + ".md"
		}
		var counts []int64
		for _, f := range strings.Split(*migRows, ",") {
			var n int64
			if _, err := fmt.Sscan(f, &n); err != nil || n <= 0 {
				fail(fmt.Errorf("-migrate-rows: %q is not a row count", f))
			}
			counts = append(counts, n)
		}
		var targets []migrateTarget
		for _, name := range names {
			t := migrateTargetFor(strings.TrimSpace(name))
			cfg := sampledb.Config{Rows: t.rows(1)}
			if err := cfg.Validate(); err != nil {
				fail(fmt.Errorf("-shapes: %w", err))
			}
			targets = append(targets, t)
		}
		loadBefore, commit := loadAverage(), headCommit()
		url, dataDir, pgSettings := *pgURL, "", []string(nil)
		if url == "" {
			srv, err := pgtest.Launch(splitList(*pgSet)...)
			if err != nil {
				fail(fmt.Errorf("starting PostgreSQL: %w", err))
			}
			defer srv.Stop()
			url, dataDir, pgSettings = srv.URL, srv.DataDir, srv.Settings
			fmt.Fprintf(os.Stderr, "bench: PostgreSQL started with %s\n", strings.Join(srv.Settings, ", "))
		}
		addrFor := func(rows map[string]int64) (string, func()) {
			srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Rows: rows}),
				Encryption: tdsserver.EncryptNotSup})
			if err != nil {
				fail(err)
			}
			return srv.Addr(), func() { _ = srv.Close() }
		}
		var rs []MigrateResult
		for _, t := range targets {
			r, err := runMigrateSuite(t, counts, *reps, url, addrFor, migrateLegs{baseline: *baseBin, variant: strings.Fields(*migVar), pgloader: !*noPGL, pgDataDir: dataDir})
			if err != nil {
				fail(err)
			}
			rs = append(rs, r...)
		}
		writeMigrateResults(rs, migrateConditions(targets, commit, loadBefore, pgSettings), *md, *out)
		return
	}
	if *suite == "partitions" {
		n := *rowsF
		if n == 0 {
			n = 2_000_000
		}
		if !flagSet("md") {
			*md = "bench/results/partitions.md"
		}
		runPartitions(n, *reps, *md)
		return
	}
	rows := map[string]int64{}
	for s, n := range shapeRows {
		if *rowsF > 0 {
			n = *rowsF
		}
		rows["dbo."+s] = n
	}
	for s, n := range tableShapes {
		if *rowsF > 0 {
			n = *rowsF
		}
		rows[s] = n
	}
	addr := *server
	if addr == "" {
		srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Rows: rows}), Encryption: tdsserver.EncryptNotSup})
		if err != nil {
			fail(err)
		}
		defer srv.Close()
		addr = srv.Addr()
	}

	if *suite == "postgres" {
		shapeSet := *shapes
		if !flagSet("shapes") {
			shapeSet = "poc48,odbc5,temporal,lineitem"
		}
		url := *pgURL
		if url == "" {
			srv, err := pgtest.Launch(splitList(*pgSet)...)
			if err != nil {
				fail(fmt.Errorf("starting PostgreSQL: %w", err))
			}
			defer srv.Stop()
			url = srv.URL
			fmt.Fprintf(os.Stderr, "bench: PostgreSQL started with %s\n", strings.Join(srv.Settings, ", "))
		}
		var results []Result
		for _, shape := range strings.Split(shapeSet, ",") {
			for _, mode := range strings.Split(*modes, ",") {
				rs, err := runPGShape(addr, shape, mode, *reps, url, !*noPGL)
				if err != nil {
					fail(fmt.Errorf("%s/%s: %w", shape, mode, err))
				}
				results = append(results, rs...)
				printTable(os.Stderr, rs)
			}
		}
		writeResults(results, pgSummary(results)+"\n"+markdown(results), *md, *out)
		return
	}
	var results []Result
	for _, shape := range strings.Split(*shapes, ",") {
		for _, mode := range strings.Split(*modes, ",") {
			var rs []Result
			var err error
			if *suite == "plugins" {
				rs, err = runPluginShape(addr, shape, mode, *reps)
			} else if mode == "parquet" {
				rs, err = runParquet(addr, shape, *reps, parseSet(*pqSet))
			} else {
				rs, err = runShape(addr, shape, mode, *reps, !*noBCP)
			}
			if err != nil {
				fail(fmt.Errorf("%s/%s: %w", shape, mode, err))
			}
			results = append(results, rs...)
			printTable(os.Stderr, rs)
		}
	}
	table := summary(results) + "\n" + markdown(results)
	if strings.Contains(*modes, "parquet") {
		table = parquetSummary(results) + "\n" + table
	}
	if *suite == "plugins" {
		table = pluginSummary(results) + "\n" + markdown(results)
	}
	writeResults(results, table, *md, *out)
}

// parseSet reads key=value,key=value.
func parseSet(s string) map[string]any {
	out := map[string]any{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// flagSet reports whether the named flag was given.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// writeResults prints the tables and writes them and the JSON results.
func writeResults(results []Result, table, md, out string) {
	fmt.Print(table)
	if md != "" {
		_ = os.MkdirAll(filepath.Dir(md), 0o755)
		if err := os.WriteFile(md, []byte(table), 0o644); err != nil {
			fail(err)
		}
	}
	if out != "" {
		_ = os.MkdirAll(filepath.Dir(out), 0o755)
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench: FAILED:", err)
	os.Exit(1)
}

const benchUser, benchPass = tdsserver.DefaultUser, tdsserver.DefaultPassword

func engineConfig(addr string) session.Config {
	host, port, _ := net.SplitHostPort(addr)
	var p int
	fmt.Sscan(port, &p)
	return session.Config{Host: host, Port: p, Database: "sample", User: benchUser, Password: secret.Secret(benchPass),
		Encrypt: session.EncryptDisable, PacketSize: 32767}
}

func mssqlDSN(addr string) string {
	return fmt.Sprintf("sqlserver://%s:%s@%s?database=sample&encrypt=disable&packet+size=32767", benchUser, benchPass, addr)
}

type memDialer struct{ sc *script }

func (d memDialer) DialContext(context.Context, string, string) (net.Conn, error) {
	return newReplayConn(d.sc), nil
}

// recordClients records the server's replies to query twice, as
// tdsextract's session and as go-mssqldb's, for the memory mode's legs.
func recordClients(ctx context.Context, addr, query string) (tdsx, mssqlSc *script, err error) {
	tdsx, err = record(addr, func(p string) error { return tdsxQuery(p, query, &sumSink{}) })
	if err != nil {
		return nil, nil, fmt.Errorf("recording tdsextract: %w", err)
	}
	mssqlSc, err = record(addr, func(p string) error {
		db, err := sql.Open("sqlserver", mssqlDSN(p))
		if err != nil {
			return err
		}
		defer db.Close()
		_, _, err = scanAll(ctx, db, query, false)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("recording go-mssqldb: %w", err)
	}
	return tdsx, mssqlSc, nil
}

// replayConnect connects tdsextract's session to a replay of sc. It
// decodes alone, on one goroutine like the go-mssqldb leg: read-ahead
// overlaps network reads, and a replayed connection has none; it would
// only add a copy and a goroutine handoff per chunk (and their variance).
func replayConnect(ctx context.Context, addr string, sc *script) func() (*session.Conn, error) {
	return func() (*session.Conn, error) {
		cfg := engineConfig(addr)
		cfg.Dialer = func(context.Context, string, string) (net.Conn, error) { return newReplayConn(sc), nil }
		cfg.ReadAhead = -1
		return session.Connect(ctx, cfg)
	}
}

// replayConnector is go-mssqldb's connector to a replay of sc.
func replayConnector(addr string, sc *script) func() (*mssql.Connector, error) {
	return func() (*mssql.Connector, error) {
		c, err := mssql.NewConnector(mssqlDSN(addr))
		if err != nil {
			return nil, err
		}
		c.Dialer = memDialer{sc}
		return c, nil
	}
}

func runShape(addr, shape, mode string, reps int, withBCP bool) ([]Result, error) {
	ctx := context.Background()
	query := "SELECT * FROM dbo." + shape
	var legs []leg

	// tdsextract
	var tdsxConnect func() (*session.Conn, error)
	var mssqlConnector func() (*mssql.Connector, error)
	var rawReply []byte
	var wantText string
	switch mode {
	case "memory":
		scT, scM, err := recordClients(ctx, addr, query)
		if err != nil {
			return nil, err
		}
		rawReply = scT.replies[len(scT.replies)-1]
		// The replies differ only in their first packet: go-mssqldb's
		// query carries database/sql's reset-connection flag, acknowledged
		// by a 6-byte ENVCHANGE 18, and the SPIDs differ. Anything more is
		// worth a look.
		if m := scM.replies[len(scM.replies)-1]; len(m) != len(rawReply) && len(m) != len(rawReply)+6 {
			fmt.Fprintf(os.Stderr, "bench: note: %s replies differ between the clients' sessions (%d vs %d bytes)\n", shape, len(rawReply), len(m))
		}
		tdsxConnect = replayConnect(ctx, addr, scT)
		mssqlConnector = replayConnector(addr, scM)
		legs = append(legs, leg{name: "raw", run: func() (sample, error) {
			dst := make([]byte, 256<<10)
			rc := newReplayConn(scT)
			// Skip the login replies untimed: ask, then read the query reply.
			for i := 0; i < len(scT.replies)-1; i++ {
				rc.reply()
				if _, err := io.CopyN(io.Discard, rc, int64(len(scT.replies[i]))); err != nil {
					return sample{}, err
				}
			}
			rc.reply()
			want := int64(len(scT.replies[len(scT.replies)-1]))
			w := startWatch()
			var n int64
			for n < want {
				k, err := rc.Read(dst[:min(int64(len(dst)), want-n)])
				n += int64(k)
				if err != nil {
					break
				}
			}
			return w.stop().raw(n), nil
		}})
	case "loopback":
		tdsxConnect = func() (*session.Conn, error) { return session.Connect(ctx, engineConfig(addr)) }
		// The same client reading the socket itself, interleaved with the
		// rest: what read-ahead is worth, in every run.
		legs = append(legs, tdsxLeg("tdsextract-direct", func() (*session.Conn, error) {
			cfg := engineConfig(addr)
			cfg.ReadAhead = -1
			return session.Connect(ctx, cfg)
		}, query))
		mssqlConnector = func() (*mssql.Connector, error) { return mssql.NewConnector(mssqlDSN(addr)) }
		sc, err := record(addr, func(p string) error { return tdsxQuery(p, query, &sumSink{}) })
		if err != nil {
			return nil, err
		}
		rawReply = sc.replies[len(sc.replies)-1]
		// raw-server: replay tdsextract's own login and query to the test
		// server and read the reply packets without decoding them: the
		// ceiling of any client of this server on this machine.
		legs = append(legs, leg{name: "raw-server", run: func() (sample, error) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return sample{}, err
			}
			defer c.Close()
			buf := make([]byte, 64<<10)
			for _, req := range sc.requests[:len(sc.requests)-1] {
				if _, err := c.Write(req); err != nil {
					return sample{}, err
				}
				if _, err := readMessage(c, buf); err != nil {
					return sample{}, err
				}
			}
			w := startWatch()
			if _, err := c.Write(sc.requests[len(sc.requests)-1]); err != nil {
				return sample{}, err
			}
			n, err := readMessage(c, buf)
			return w.stop().raw(n), err
		}})
		rawLn, err := rawServer(rawReply)
		if err != nil {
			return nil, err
		}
		defer rawLn.Close()
		legs = append(legs, leg{name: "raw", run: func() (sample, error) {
			c, err := net.Dial("tcp", rawLn.Addr().String())
			if err != nil {
				return sample{}, err
			}
			defer c.Close()
			buf := make([]byte, 256<<10)
			w := startWatch()
			c.Write([]byte{1}) // go
			var n int64
			for {
				k, err := c.Read(buf)
				n += int64(k)
				if err != nil {
					break
				}
			}
			return w.stop().raw(n), nil
		}})
		if withBCP {
			// The expected text checksum, from an untimed tdsextract pass.
			ts := &textSink{}
			if err := tdsxQuery(addr, query, ts); err != nil {
				return nil, err
			}
			wantText = fmt.Sprintf("text:%016x", ts.crc)
			if l, ok := freebcpLeg(addr, query, ts.fkind); ok {
				legs = append(legs, l)
			}
		}
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	legs = append(legs, breakdownLegs(tdsxConnect, query)...)

	legs = append([]leg{
		tdsxLeg("tdsextract", tdsxConnect, query),
		mssqlLeg("go-mssqldb", mssqlConnector, query, false),
		mssqlLeg("go-mssqldb-typed", mssqlConnector, query, true),
	}, legs...)

	res, err := runReps(legs, reps)
	if err != nil {
		return nil, err
	}
	// Checksum parity between the Go legs (and freebcp's text checksum
	// against tdsextract's text pass).
	for i, l := range legs {
		goLeg := strings.HasPrefix(l.name, "tdsextract") || strings.HasPrefix(l.name, "go-mssqldb")
		if goLeg && (res[i].sum != res[0].sum && !l.rowsOnly || res[i].rows != res[0].rows) {
			return nil, fmt.Errorf("CHECKSUM MISMATCH: %s %s (%d rows) vs tdsextract %s (%d rows)", l.name, res[i].sum, res[i].rows, res[0].sum, res[0].rows)
		}
		if l.name == "freebcp" && (res[i].sum != wantText || res[i].rows != res[0].rows) {
			return nil, fmt.Errorf("CHECKSUM MISMATCH: freebcp %s (%d rows) vs tdsextract's text pass %s (%d rows)", res[i].sum, res[i].rows, wantText, res[0].rows)
		}
	}
	rowsN := res[0].rows
	var out []Result
	for i, l := range legs {
		o := res[i]
		r := legResult(shape, mode, l.name, &o, &res[0], i > 0, rowsN, int64(len(rawReply)))
		out = append(out, r)
	}
	return out, nil
}

// runReps runs every leg reps times, interleaved (A B C, C B A, ...), each
// once untimed before each timed run unless it is cold; the first rep is
// a discarded warm-up, and every later one must give the same checksum
// and rows.
func runReps(legs []leg, reps int) ([]legObs, error) {
	res := make([]legObs, len(legs))
	for r := 0; r < reps; r++ {
		for _, i := range repOrder(len(legs), r) {
			// Every in-process leg runs once untimed just before each
			// timed run, so it is timed warm from its own run, not from
			// whichever leg came before it: without this, a go-mssqldb
			// leg that followed the other go-mssqldb leg (its heap grown,
			// its code hot) took 0.7-0.9× the time it took after a leg
			// that allocates nothing, and the reps in reverse order
			// differed from those in forward order by up to 1.7×
			// (OrderBias).
			if r > 0 && !legs[i].cold {
				if _, err := legs[i].run(); err != nil {
					return nil, fmt.Errorf("leg %s (warm-up): %w", legs[i].name, err)
				}
			}
			sm, err := legs[i].run()
			if err != nil {
				return nil, fmt.Errorf("leg %s: %w", legs[i].name, err)
			}
			if r == 0 {
				res[i].rows, res[i].sum, res[i].cols = sm.rows, sm.sum, sm.cols
				continue // warm-up, discarded
			}
			if sm.sum != res[i].sum || sm.rows != res[i].rows {
				return nil, fmt.Errorf("leg %s: rep %d checksum %s/%d rows differs from %s/%d", legs[i].name, r, sm.sum, sm.rows, res[i].sum, res[i].rows)
			}
			res[i].record(r, sm, sm.rows)
		}
	}
	return res, nil
}

// repOrder is the order the legs run in at rep r: forward at even reps,
// reversed at odd ones, so that what runs before a leg alternates.
func repOrder(legs, r int) []int {
	order := make([]int, legs)
	for i := range order {
		order[i] = i
	}
	if r%2 == 1 {
		slices.Reverse(order)
	}
	return order
}

// record adds timed rep r (sample sm) to o, its allocations and heap bytes
// per row of rows (when the sample counted them and rows > 0).
func (o *legObs) record(r int, sm sample, rows int64) {
	ms := float64(sm.wall.Microseconds()) / 1000
	o.ms = append(o.ms, ms)
	if r%2 == 1 {
		o.rev = append(o.rev, ms)
	} else {
		o.fwd = append(o.fwd, ms)
	}
	o.cpu = append(o.cpu, float64(sm.cpu.Microseconds())/1000)
	if sm.allocs >= 0 && rows > 0 {
		o.allocs = append(o.allocs, float64(sm.allocs)/float64(rows))
		o.heap = append(o.heap, float64(sm.heap)/float64(rows))
	}
}

// legObs is what the reps of one leg measured.
type legObs struct {
	ms     []float64
	cpu    []float64
	rows   int64
	sum    string
	allocs []float64
	heap   []float64
	cols   int
	fwd    []float64 // ms of the reps run in forward order
	rev    []float64 // and in reverse order
}

// legResult summarises a leg's reps; first is the tdsextract leg, against
// which a later leg (compare) gets its per-pair time and CPU ratios.
func legResult(shape, mode, name string, o, first *legObs, compare bool, rowsN, wire int64) Result {
	r := Result{Shape: shape, Mode: mode, Leg: name, Rows: rowsN, WireBytes: wire, Reps: len(o.ms),
		MedianMs: median(o.ms), MinMs: slices.Min(o.ms), MaxMs: slices.Max(o.ms), Checksum: o.sum, AllMs: o.ms,
		CPUMs: median(o.cpu)}
	r.RowsPerS = float64(rowsN) / (r.MedianMs / 1000)
	r.OrderBias = median(o.rev) / median(o.fwd)
	// Legs of a few milliseconds swing 10-15% with 4 reps a side; a
	// note is worth reading past 20%.
	if math.Abs(r.OrderBias-1) > 0.2 {
		fmt.Fprintf(os.Stderr, "bench: note: %s/%s %s: its reps in reverse order took %.2f× those in forward order (what runs before a leg moves it)\n",
			shape, mode, name, r.OrderBias)
	}
	r.Columns = first.cols
	r.NsPerRow = r.MedianMs * 1e6 / float64(rowsN)
	if r.Columns > 0 {
		r.NsPerCell = r.NsPerRow / float64(r.Columns)
	}
	r.MBPerS = float64(wire) / 1e6 / (r.MedianMs / 1000)
	if len(o.allocs) > 0 {
		a, h := median(o.allocs), median(o.heap)
		r.AllocsPerRow, r.BytesPerRow = &a, &h
	}
	if compare {
		pr := make([]float64, len(o.ms))
		cr := make([]float64, len(o.cpu))
		for k := range o.ms {
			pr[k] = o.ms[k] / first.ms[k]
			cr[k] = o.cpu[k] / first.cpu[k]
		}
		r.RatioToTDSX = &Ratio{OfMedians: r.MedianMs / median(first.ms), PairMed: median(pr), PairMin: slices.Min(pr), PairMax: slices.Max(pr)}
		r.CPURatioToTDSX = &Ratio{OfMedians: r.CPUMs / median(first.cpu), PairMed: median(cr), PairMin: slices.Min(cr), PairMax: slices.Max(cr)}
	}
	return r
}

// mssqlLeg is go-mssqldb's fetch of query through database/sql, scanning
// into interface values or typed targets (scanAll).
func mssqlLeg(name string, connector func() (*mssql.Connector, error), query string, typed bool) leg {
	return leg{name: name, run: func() (sample, error) {
		conn, err := connector()
		if err != nil {
			return sample{}, err
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		ctx := context.Background()
		sc, err := db.Conn(ctx) // connects (untimed) without sending a query
		if err != nil {
			return sample{}, err
		}
		defer sc.Close()
		w := startWatch()
		n, crc, err := scanAll(ctx, sc, query, typed)
		return w.stop().of(n, fmt.Sprintf("%016x", crc)), err
	}}
}

// tdsxQuery runs query once on a new tdsextract session to addr (untimed:
// recordings and the text pass).
func tdsxQuery(addr, query string, sink decode.CellSink) error {
	c, err := session.Connect(context.Background(), engineConfig(addr))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Query(context.Background(), session.Query{SQL: query}, sink)
	return err
}

// tdsxLeg is tdsextract's fetch and decode of query into the checksum sink
// over a session from connect (connected untimed).
func tdsxLeg(name string, connect func() (*session.Conn, error), query string) leg {
	return leg{name: name, run: func() (sample, error) {
		s := &sumSink{}
		smp, err := timedQuery(connect, query, s)
		smp = smp.of(s.rows, fmt.Sprintf("%016x", s.total))
		smp.cols = len(s.kind)
		return smp, err
	}}
}

// timedQuery runs query into sink over a session from connect, timing the
// query alone (connecting and closing are untimed).
func timedQuery(connect func() (*session.Conn, error), query string, sink decode.CellSink) (sample, error) {
	c, err := connect()
	if err != nil {
		return sample{}, err
	}
	defer c.Close()
	w := startWatch()
	_, err = c.Query(context.Background(), session.Query{SQL: query}, sink)
	return w.stop(), err
}

// sample is one timed repetition of a leg.
type sample struct {
	wall, cpu time.Duration
	allocs    int64  // heap allocations of this process in the timed part; -1 unknown
	heap      int64  // heap bytes allocated in the timed part
	cols      int    // columns a row (set by the tdsextract legs)
	rows      int64  // -1: a raw leg, which counts bytes
	sum       string // the checksum, or the byte count of a raw leg
}

// of sets the rows and checksum of a decoding leg.
func (s sample) of(rows int64, sum string) sample { s.rows, s.sum = rows, sum; return s }

// raw sets a raw leg's byte count.
func (s sample) raw(n int64) sample {
	s.rows, s.sum, s.allocs = -1, fmt.Sprintf("%d bytes", n), -1
	return s
}

// watch times a leg's timed part: wall time, CPU time (Result.CPUMs) and
// heap allocations. Every leg starts from a collected heap.
type watch struct {
	t0 time.Time
	c0 time.Duration
	m0 uint64
	b0 uint64
}

// processCPU counts the harness's own CPU time and that of the external
// legs (freebcp) it has waited for.
func processCPU() time.Duration { return cputime.Process() + cputime.Children() }

func startWatch() watch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return watch{m0: m.Mallocs, b0: m.TotalAlloc, c0: processCPU(), t0: time.Now()}
}

func (w watch) stop() sample {
	wall := time.Since(w.t0)
	cpu := processCPU() - w.c0
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return sample{wall: wall, cpu: cpu, allocs: int64(m.Mallocs - w.m0), heap: int64(m.TotalAlloc - w.b0)}
}

// scanAll runs query through database/sql and hashes every column of every
// row: scanned into interface values (what generic Go code does, the
// go-mssqldb leg), or with typed into the typed targets of typedRow (what
// hand-written code for a known schema does, the go-mssqldb-typed leg).
func scanAll(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, typed bool) (int64, uint64, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return 0, 0, err
	}
	kinds := kindsOf(cts)
	var vals, ptrs []any
	var tr *typedRow
	if typed {
		tr = newTypedRow(kinds)
		ptrs = tr.dest
	} else {
		vals = make([]any, len(cts))
		ptrs = make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
	}
	var s sum
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, 0, err
		}
		if typed {
			if err := tr.hash(&s); err != nil {
				return n, 0, err
			}
		} else {
			for i, v := range vals {
				if err := s.goValue(kinds[i], v); err != nil {
					return n, 0, fmt.Errorf("column %s: %w", cts[i].Name(), err)
				}
			}
		}
		s.row()
		n++
	}
	return n, s.total, rows.Err()
}

// rawServer serves reply to every connection after one byte is received.
func rawServer(reply []byte) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var b [1]byte
				if _, err := c.Read(b[:]); err != nil {
					return
				}
				c.Write(reply)
			}()
		}
	}()
	return ln, nil
}

// freebcpLeg exports query with FreeTDS's freebcp to a file on tmpfs. Its
// checksum is a text checksum compared against a tdsextract text pass.
func freebcpLeg(addr, query string, fkind []byte) (leg, bool) {
	bin, err := exec.LookPath("freebcp")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: freebcp not installed; skipping the FreeTDS leg (apt-get install freetds-bin)")
		return leg{}, false
	}
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	tmp, err := os.MkdirTemp(dir, "tdsx-bench-")
	if err != nil {
		return leg{}, false
	}
	host, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(tmp, "freetds.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("[bench]\n\thost = %s\n\tport = %s\n\ttds version = 7.4\n\tencryption = off\n", host, port)), 0o644)
	file := filepath.Join(tmp, "out.bcp")
	return leg{name: "freebcp", cold: true, run: func() (sample, error) {
		cmd := exec.Command(bin, query, "queryout", file, "-S", "bench", "-U", benchUser, "-P", benchPass, "-D", "sample", "-c", "-t", "\t", "-r", "\n")
		cmd.Env = append(os.Environ(), "FREETDSCONF="+conf, "TDSVER=7.4")
		w := startWatch()
		outp, err := cmd.CombinedOutput()
		smp := w.stop()
		if err != nil {
			return sample{}, fmt.Errorf("freebcp: %v: %s", err, outp)
		}
		n, crc, err := textFileSum(file, fkind)
		os.Remove(file)
		smp = smp.of(n, fmt.Sprintf("text:%016x", crc))
		smp.allocs = -1 // freebcp's work is another process's
		return smp, err
	}}, true
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printTable(w io.Writer, rs []Result) { fmt.Fprint(w, markdown(rs)) }

func markdown(rs []Result) string {
	var b strings.Builder
	b.WriteString("| shape | mode | leg | rows | median ms | min ms | max ms | CPU ms | rows/s | ns/row | ns/cell | MB/s | allocs/row | B/row | time vs tdsextract (median of pairs, min..max) | rev/fwd | checksum |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
	for _, r := range rs {
		alloc, heap := "-", "-"
		if r.AllocsPerRow != nil {
			alloc = fmt.Sprintf("%.2f", *r.AllocsPerRow)
			heap = fmt.Sprintf("%.0f", *r.BytesPerRow)
		}
		ratio := "1"
		if r.RatioToTDSX != nil {
			ratio = fmt.Sprintf("%.2f× (%.2f..%.2f)", r.RatioToTDSX.PairMed, r.RatioToTDSX.PairMin, r.RatioToTDSX.PairMax)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.1f | %.0f | %s | %s | %s | %.2f | %s |\n",
			r.Shape, r.Mode, r.Leg, r.Rows, r.MedianMs, r.MinMs, r.MaxMs, r.CPUMs, r.RowsPerS, r.NsPerRow, r.NsPerCell, r.MBPerS,
			alloc, heap, ratio, r.OrderBias, r.Checksum)
	}
	return b.String()
}

// shapeMode identifies the results of one shape in one mode.
type shapeMode struct{ shape, mode string }

// byShape groups results by shape and mode (in first-seen order), each
// group by leg name.
func byShape(rs []Result) ([]shapeMode, map[shapeMode]map[string]Result) {
	var order []shapeMode
	by := map[shapeMode]map[string]Result{}
	for _, r := range rs {
		k := shapeMode{r.Shape, r.Mode}
		if by[k] == nil {
			by[k] = map[string]Result{}
			order = append(order, k)
		}
		by[k][r.Leg] = r
	}
	return order, by
}

// summary is one line per shape and mode: tdsextract's throughput and
// allocations, and how long each other leg takes relative to it.
func summary(rs []Result) string {
	var b strings.Builder
	b.WriteString("| shape | mode | tdsextract rows/s | allocs/row | go-mssqldb time (× tdsextract's) | go-mssqldb allocs/row | go-mssqldb typed (×) | freebcp time (×) | tdsextract / raw-server throughput | ms: walk / discard / tdsextract | checksum |\n")
	b.WriteString("|---|---|---:|---:|---|---:|---|---|---:|---|---|\n")
	var fetch []Result // the parquet mode has parquetSummary
	for _, r := range rs {
		if r.Mode != "parquet" {
			fetch = append(fetch, r)
		}
	}
	order, by := byShape(fetch)
	ratio := func(r Result, ok bool) string {
		if !ok || r.RatioToTDSX == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f (%.2f..%.2f)", r.RatioToTDSX.PairMed, r.RatioToTDSX.PairMin, r.RatioToTDSX.PairMax)
	}
	allocs := func(r Result, ok bool) string {
		if !ok || r.AllocsPerRow == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", *r.AllocsPerRow)
	}
	for _, k := range order {
		legs := by[k]
		t := legs["tdsextract"]
		m, okM := legs["go-mssqldb"]
		ty, okT := legs["go-mssqldb-typed"]
		f, okF := legs["freebcp"]
		share := "-"
		if rsv, ok := legs["raw-server"]; ok && t.MedianMs > 0 {
			share = fmt.Sprintf("%.0f%%", 100*rsv.MedianMs/t.MedianMs)
		}
		split := "-"
		if wk, ok := legs["tdsextract-walk"]; ok {
			split = fmt.Sprintf("%.1f / %.1f / %.1f", wk.MedianMs, legs["tdsextract-discard"].MedianMs, t.MedianMs)
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.shape, k.mode, t.RowsPerS, allocs(t, true),
			ratio(m, okM), allocs(m, okM), ratio(ty, okT), ratio(f, okF), share, split, t.Checksum)
	}
	return b.String()
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
