package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	mssql "github.com/microsoft/go-mssqldb"

	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// The PostgreSQL suite (-suite postgres): loading a shape into
// PostgreSQL, every leg into its own table of the same definition, timed
// from the first byte of the query to the COMMIT, legs interleaved
// (forward and reverse order in turn), the first rep discarded:
//
//	tdsextract       the engine's session and decoder into the postgres sink
//	                 (binary COPY), from the test server (loopback) or from
//	                 the server's recorded bytes (memory)
//	go-mssqldb+pgx   database/sql rows scanned into []any, converted where
//	                 pgx needs it (GUID byte order, decimal text, real as
//	                 float32, the offset companion), sent with pgx.CopyFrom:
//	                 what a Go user writes today
//	pg-copy-file     PostgreSQL's own COPY FROM of a binary file of the same
//	                 rows (written by its COPY TO): the ceiling, no client
//	pg-copy-stdin    the same file's bytes sent from memory by pgconn's
//	                 CopyFrom: a client that only sends (the ceiling through
//	                 a socket)
//	pgloader         pgloader reading the test server through FreeTDS
//	                 (loopback only), creating its own table
//
// Each leg's table is checked after every rep: its row count and a
// checksum over the text of every row (PostgreSQL's own output) must
// equal the tdsextract leg's. pgloader's table has its own types: it is
// compared through a projection cast to the sink's types, and a mismatch
// is reported (pgloader rounds what the sink truncates), not fatal.
func runPGShape(addr, shape, mode string, reps int, pgURL string, withPgloader bool) ([]Result, error) {
	ctx := context.Background()
	query := "SELECT * FROM dbo." + shape
	ctl, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer ctl.Close(ctx)
	tdsxTable := "bench_tdsx_" + shape
	pgxTable := "bench_pgx_" + shape
	fileTable := "bench_file_" + shape
	stdinTable := "bench_stdin_" + shape

	var tdsxConnect func() (*session.Conn, error)
	var mssqlConnector func() (*mssql.Connector, error)
	switch mode {
	case "memory":
		scT, scM, err := recordClients(ctx, addr, query)
		if err != nil {
			return nil, err
		}
		tdsxConnect = replayConnect(ctx, addr, scT)
		mssqlConnector = replayConnector(addr, scM)
	case "loopback":
		tdsxConnect = func() (*session.Conn, error) { return session.Connect(ctx, engineConfig(addr)) }
		mssqlConnector = func() (*mssql.Connector, error) { return mssql.NewConnector(mssqlDSN(addr)) }
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}

	// tdsextract's table, created by the sink: the definition every
	// other leg's table copies.
	sinkLoad := func(sinkMode string) (sample, *postgres.Sink, error) {
		c, err := postgres.ParseConfig(map[string]any{"connection": pgURL, "table": tdsxTable, "mode": sinkMode})
		if err != nil {
			return sample{}, nil, err
		}
		s, err := postgres.New(c)
		if err != nil {
			return sample{}, nil, err
		}
		conn, err := tdsxConnect()
		if err != nil {
			return sample{}, nil, err
		}
		defer conn.Close()
		if err := s.Open(ctx, sinks.ExtractInfo{Name: shape, Schema: "dbo", Table: shape}); err != nil {
			return sample{}, nil, err
		}
		w := startWatch()
		res, err := conn.Query(ctx, session.Query{SQL: query}, s)
		if err != nil {
			_ = s.Abort(ctx)
			return sample{}, nil, err
		}
		st, err := s.Publish(ctx)
		smp := w.stop()
		if err != nil {
			return sample{}, nil, err
		}
		smp.rows, smp.cols = res.Rows, len(s.Target().Columns)
		_ = st
		return smp, s, nil
	}
	_, s0, err := sinkLoad("replace")
	if err != nil {
		return nil, fmt.Errorf("first tdsextract load: %w", err)
	}
	target := s0.Target()
	// PostgreSQL writes the file as its own user, so it lives in the shared
	// directory itself; the process id and the time keep two runs of the
	// harness (or of its tests) on one machine apart.
	file := filepath.Join(shmDir(), fmt.Sprintf("tdsx-bench-%s-%d-%d.pgcopy", shape, os.Getpid(), time.Now().UnixNano()))
	defer os.Remove(file)
	setup := []string{
		"DROP TABLE IF EXISTS " + pgxTable + ", " + fileTable + ", " + stdinTable,
		"CREATE TABLE " + pgxTable + " (LIKE " + tdsxTable + ")",
		"CREATE TABLE " + fileTable + " (LIKE " + tdsxTable + ")",
		"CREATE TABLE " + stdinTable + " (LIKE " + tdsxTable + ")",
		// PostgreSQL writes the file itself, as the server's user.
		"COPY " + tdsxTable + " TO '" + file + "' WITH (FORMAT binary)",
	}
	for _, q := range setup {
		if _, err := ctl.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("postgres: %s: %w", q, err)
		}
	}
	fileBytes, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading PostgreSQL's COPY file: %w", err)
	}
	legs := []leg{
		{name: "tdsextract", run: func() (sample, error) {
			smp, _, err := sinkLoad("truncate")
			if err == nil {
				smp.sum, err = tableSum(ctl, tdsxTable, "*")
			}
			return smp, err
		}},
		{name: "go-mssqldb+pgx", run: func() (sample, error) {
			smp, err := pgxLoad(ctx, mssqlConnector, pgURL, query, pgxTable, target)
			if err == nil {
				smp.sum, err = tableSum(ctl, pgxTable, "*")
			}
			return smp, err
		}},
		{name: "pg-copy-file", run: func() (sample, error) {
			smp, err := serverCopy(ctx, pgURL, fileTable, "COPY "+fileTable+" FROM '"+file+"' WITH (FORMAT binary)", nil)
			if err == nil {
				smp.sum, err = tableSum(ctl, fileTable, "*")
			}
			return smp, err
		}},
		{name: "pg-copy-stdin", run: func() (sample, error) {
			smp, err := serverCopy(ctx, pgURL, stdinTable, "COPY "+stdinTable+" FROM STDIN WITH (FORMAT binary)", fileBytes)
			if err == nil {
				smp.sum, err = tableSum(ctl, stdinTable, "*")
			}
			return smp, err
		}},
	}
	if mode == "loopback" && withPgloader {
		if l, ok := pgloaderLeg(ctl, addr, pgURL, shape, target); ok {
			legs = append(legs, l)
		}
	}

	res := make([]legObs, len(legs))
	for r := 0; r < reps; r++ {
		for _, i := range repOrder(len(legs), r) {
			sm, err := legs[i].run()
			if err != nil {
				return nil, fmt.Errorf("leg %s: %w", legs[i].name, err)
			}
			if r == 0 {
				res[i].rows, res[i].sum, res[i].cols = sm.rows, sm.sum, sm.cols
				continue
			}
			if sm.sum != res[i].sum {
				return nil, fmt.Errorf("leg %s: rep %d checksum %s differs from %s", legs[i].name, r, sm.sum, res[i].sum)
			}
			// Per row of the tdsextract leg: the COPY legs count no rows.
			res[i].record(r, sm, res[0].rows)
		}
	}
	for i, l := range legs {
		if l.name == "pgloader" {
			if res[i].sum != res[0].sum {
				fmt.Fprintf(os.Stderr, "bench: note: %s/%s pgloader's table, cast to the sink's types, differs from tdsextract's: %s vs %s (pgloader goes through text: 7-digit fractions rounded, not truncated)\n", shape, mode, res[i].sum, res[0].sum)
			}
			continue
		}
		if res[i].sum != res[0].sum {
			return nil, fmt.Errorf("CHECKSUM MISMATCH: %s %s vs tdsextract %s", l.name, res[i].sum, res[0].sum)
		}
	}
	rowsN := res[0].rows
	var out []Result
	for i, l := range legs {
		out = append(out, legResult(shape, "pg-"+mode, l.name, &res[i], &res[0], i > 0, rowsN, int64(len(fileBytes))))
	}
	return out, nil
}

func shmDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// tableSum is the row count and a checksum over the text of every row of
// table (the projection sel): order-independent, from PostgreSQL's own
// output functions.
func tableSum(conn *pgx.Conn, table, sel string) (string, error) {
	var n int64
	var sum string
	q := "SELECT count(*), coalesce(sum(('x' || substr(md5(t::text), 1, 15))::bit(60)::bigint), 0)::text FROM (SELECT " + sel + " FROM " + table + ") t"
	if err := conn.QueryRow(context.Background(), q).Scan(&n, &sum); err != nil {
		return "", fmt.Errorf("postgres: checksum of %s: %w", table, err)
	}
	return fmt.Sprintf("%d rows %s", n, sum), nil
}

// serverCopy is one timed ceiling load: BEGIN, TRUNCATE, the COPY (from
// the server's file, or data sent from memory), COMMIT.
func serverCopy(ctx context.Context, url, table, copySQL string, data []byte) (sample, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return sample{}, err
	}
	defer conn.Close(ctx)
	w := startWatch()
	if _, err := conn.Exec(ctx, "BEGIN; TRUNCATE "+table); err != nil {
		return sample{}, err
	}
	var tag int64
	if data == nil {
		ct, err := conn.Exec(ctx, copySQL)
		if err != nil {
			return sample{}, err
		}
		tag = ct.RowsAffected()
	} else {
		ct, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(string(data)), copySQL)
		if err != nil {
			return sample{}, err
		}
		tag = ct.RowsAffected()
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return sample{}, err
	}
	smp := w.stop()
	smp.rows = tag
	return smp, nil
}

// pgxLoad is the go-mssqldb + pgx pipeline: rows scanned into []any and
// sent with pgx.CopyFrom, in a transaction with the TRUNCATE as the
// sink's is.
func pgxLoad(ctx context.Context, connector func() (*mssql.Connector, error), url, query, table string, target *postgres.Table) (sample, error) {
	c, err := connector()
	if err != nil {
		return sample{}, err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	sc, err := db.Conn(ctx)
	if err != nil {
		return sample{}, err
	}
	defer sc.Close()
	pg, err := pgx.Connect(ctx, url)
	if err != nil {
		return sample{}, err
	}
	defer pg.Close(ctx)
	var names []string
	for _, col := range target.Columns {
		names = append(names, col.Name)
	}
	w := startWatch()
	tx, err := pg.Begin(ctx)
	if err != nil {
		return sample{}, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "TRUNCATE "+table); err != nil {
		return sample{}, err
	}
	rows, err := sc.QueryContext(ctx, query)
	if err != nil {
		return sample{}, err
	}
	defer rows.Close()
	src := &mssqlSource{rows: rows, target: target}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, names, src)
	if err == nil {
		err = src.err
	}
	if err == nil {
		err = tx.Commit(ctx)
	}
	smp := w.stop()
	smp.rows = n
	return smp, err
}

// mssqlSource is a pgx.CopyFromSource over database/sql rows: every row
// scanned into []any, as go-mssqldb returns the values, then converted to
// what pgx encodes into the table's types.
type mssqlSource struct {
	rows   *sql.Rows
	target *postgres.Table
	src    []any
	ptrs   []any
	err    error
}

func (m *mssqlSource) Next() bool {
	if m.src == nil {
		cols, _ := m.rows.Columns()
		m.src = make([]any, len(cols))
		m.ptrs = make([]any, len(cols))
		for i := range m.src {
			m.ptrs[i] = &m.src[i]
		}
	}
	return m.rows.Next()
}

func (m *mssqlSource) Values() ([]any, error) {
	if err := m.rows.Scan(m.ptrs...); err != nil {
		m.err = err
		return nil, err
	}
	out := make([]any, len(m.target.Columns))
	for i, c := range m.target.Columns {
		v := m.src[c.Source]
		if v == nil {
			continue
		}
		if c.Companion == "offset" {
			_, off := v.(time.Time).Zone()
			out[i] = int16(off / 60)
			continue
		}
		switch c.Type.OID {
		case 2950: // uuid: go-mssqldb gives SQL Server's mixed-endian bytes
			b := v.([]byte)
			var g [16]byte
			g[0], g[1], g[2], g[3] = b[3], b[2], b[1], b[0]
			g[4], g[5], g[6], g[7] = b[5], b[4], b[7], b[6]
			copy(g[8:], b[8:])
			v = g
		case 1700: // numeric: decimal and money come as text bytes
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
		case 700: // real comes as float64
			if f, ok := v.(float64); ok {
				v = float32(f)
			}
		case 1114: // timestamp: datetime2(7) has 100 ns, PostgreSQL microseconds
			if t, ok := v.(time.Time); ok {
				v = t.Truncate(time.Microsecond)
			}
		}
		out[i] = v
	}
	return out, nil
}

func (m *mssqlSource) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.rows.Err()
}

// pgloaderLeg loads the shape with pgloader from the test server.
func pgloaderLeg(ctl *pgx.Conn, addr, pgURL, shape string, target *postgres.Table) (leg, bool) {
	bin, err := exec.LookPath("pgloader")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: pgloader not installed; skipping its leg (apt-get install pgloader)")
		return leg{}, false
	}
	tmp, err := os.MkdirTemp(shmDir(), "tdsx-pgloader-")
	if err != nil {
		return leg{}, false
	}
	host, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(tmp, "freetds.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("[global]\n\ttds version = 7.4\n\tclient charset = UTF-8\n\tencryption = off\n[bench]\n\thost = %s\n\tport = %s\n", host, port)), 0o644)
	pgTarget := strings.Split(pgURL, "?")[0]
	load := filepath.Join(tmp, "load")
	os.WriteFile(load, []byte(fmt.Sprintf(`LOAD DATABASE
  FROM mssql://%s:%s@%s:%s/sample
  INTO %s
  WITH include drop, create tables, create no indexes, no foreign keys
  INCLUDING ONLY TABLE NAMES LIKE '%s' IN SCHEMA 'dbo';
`, benchUser, benchPass, host, port, pgTarget, shape)), 0o644)
	// pgloader's table cast to the sink's types, column by column (it
	// keeps the names; the companion columns it does not have).
	var sel []string
	for _, c := range target.Columns {
		if c.Companion != "" {
			continue
		}
		sel = append(sel, fmt.Sprintf("%s::%s", postgres.QuoteIdent(c.Name), c.Type.SQL))
	}
	return leg{name: "pgloader", cold: true, run: func() (sample, error) {
		cmd := exec.Command(bin, "--no-ssl-cert-verification", "--root-dir", filepath.Join(tmp, "root"), load)
		cmd.Env = append(os.Environ(), "FREETDSCONF="+conf, "TDSVER=7.4", "HOME="+tmp, "TMPDIR="+tmp, "LANG=C.UTF-8")
		w := startWatch()
		out, err := cmd.CombinedOutput()
		smp := w.stop()
		if err != nil {
			return sample{}, fmt.Errorf("pgloader: %v\n%s", err, out)
		}
		smp.allocs = -1 // pgloader's work is another process's
		smp.sum, err = tableSum(ctl, "dbo."+shape, strings.Join(sel, ", "))
		var n int64
		fmt.Sscan(smp.sum, &n)
		smp.rows = n
		return smp, err
	}}, true
}

// pgSummary is one line per shape and mode of the PostgreSQL suite: the
// issue's targets side by side.
func pgSummary(rs []Result) string {
	var b strings.Builder
	b.WriteString("| shape | mode | tdsextract rows/s | allocs/row | tdsextract wall / pg-copy-file's | tdsextract wall / pg-copy-stdin's | go-mssqldb+pgx wall / tdsextract's | go-mssqldb+pgx client CPU / tdsextract's | pgloader rows/s | tdsextract rows/s / pgloader's | checksum |\n")
	b.WriteString("|---|---|---:|---:|---|---|---|---|---:|---:|---|\n")
	order, by := byShape(rs)
	inv := func(r Result, ok bool) string {
		if !ok || r.RatioToTDSX == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f (%.2f..%.2f)", 1/r.RatioToTDSX.PairMed, 1/r.RatioToTDSX.PairMax, 1/r.RatioToTDSX.PairMin)
	}
	for _, k := range order {
		legs := by[k]
		t := legs["tdsextract"]
		x, okX := legs["go-mssqldb+pgx"]
		f, okF := legs["pg-copy-file"]
		s, okS := legs["pg-copy-stdin"]
		p, okP := legs["pgloader"]
		alloc := "-"
		if t.AllocsPerRow != nil {
			alloc = fmt.Sprintf("%.2f", *t.AllocsPerRow)
		}
		wallX, cpuX := "-", "-"
		if okX && x.RatioToTDSX != nil {
			wallX = fmt.Sprintf("%.2f (%.2f..%.2f)", x.RatioToTDSX.PairMed, x.RatioToTDSX.PairMin, x.RatioToTDSX.PairMax)
			cpuX = fmt.Sprintf("%.2f (%.2f..%.2f)", x.CPURatioToTDSX.PairMed, x.CPURatioToTDSX.PairMin, x.CPURatioToTDSX.PairMax)
		}
		pl, vs := "-", "-"
		if okP && p.RatioToTDSX != nil {
			pl = fmt.Sprintf("%.0f", p.RowsPerS)
			vs = fmt.Sprintf("%.1f (%.1f..%.1f)", p.RatioToTDSX.PairMed, p.RatioToTDSX.PairMin, p.RatioToTDSX.PairMax)
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.shape, k.mode, t.RowsPerS, alloc,
			inv(f, okF), inv(s, okS), wallX, cpuX, pl, vs, t.Checksum)
	}
	return b.String()
}
