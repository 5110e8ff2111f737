package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/parquet"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

func pgRegistry(t testing.TB) *sinks.Registry {
	t.Helper()
	reg, err := sinks.NewRegistry(postgres.Factory(), parquet.Factory())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// wkbPoint is STAsBinary() of a sample point: WKB, x first (longitude for
// geography, which the serialised form holds latitude first).
func wkbPoint(udt []byte, geography bool) []byte {
	a := udt[6:14]
	b := udt[14:22]
	if geography {
		a, b = b, a
	}
	out := []byte{1, 1, 0, 0, 0}
	out = append(out, a...)
	return append(out, b...)
}

// convertedColumns are the columns as sinks receive them when the engine
// writes the SELECT with its default conversions: spatial types as
// varbinary(max) WKB, hierarchyid as nvarchar(4000) text.
func convertedColumns(cols []decode.Column) []decode.Column {
	out := append([]decode.Column(nil), cols...)
	for i := range out {
		switch out[i].Kind() {
		case decode.KindGeography, decode.KindGeometry:
			out[i].Type = decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: decode.MaxVarLen}
		case decode.KindHierarchyID:
			out[i].Type = decode.TypeInfo{Type: decode.TypeNVarChar, Size: 8000, Collation: decode.Collation{Info: 0x00D00409, SortID: 52}}
		}
	}
	return out
}

// convertedRow is a sample row as the engine's SELECT returns it: spatial
// values through STAsBinary(), hierarchyid through ToString().
func convertedRow(tb *sampledb.Table) func(i int64, dst []any) []any {
	paths := map[string]string{}
	for p, b := range sampledb.HierarchyIDs {
		paths[string(b)] = p
	}
	return func(i int64, dst []any) []any {
		dst = tb.Row(i, dst)
		for c := range tb.Columns {
			b, ok := dst[c].([]byte)
			if !ok || tb.Columns[c].Type.Type != decode.TypeUDT {
				continue
			}
			switch tb.Columns[c].Kind() {
			case decode.KindGeography:
				dst[c] = wkbPoint(b, true)
			case decode.KindGeometry:
				dst[c] = wkbPoint(b, false)
			case decode.KindHierarchyID:
				dst[c] = paths[string(b)]
			}
		}
		return dst
	}
}

// TestPostgresLoadsEverySampleTable runs one job (two tables at a time,
// each on its own TDS session and its own PostgreSQL session) loading every
// sample table through the TDS server into PostgreSQL 15, then reads each
// back with pgx and compares it value by value with the sample database
// (spatial columns as the WKB and hierarchyid as the text the engine's
// SELECT converts them to).
func TestPostgresLoadsEverySampleTable(t *testing.T) {
	url := pgtest.Start(t)
	e := startEnv(t)
	job := &engine.JobConfig{
		Name:     "pg",
		Source:   engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "2m"},
		Sinks:    []engine.SinkConfig{{Type: "postgres", Options: map[string]any{"connection": url, "schema": "{schema}", "mode": "create", "buffer_size": "64KiB"}}},
		Parallel: 2,
	}
	for _, tb := range e.db.Tables() {
		job.Extracts = append(job.Extracts, engine.ExtractConfig{Table: tb.FullName(), Verify: "count"})
	}
	sum, err := (&engine.Runner{Registry: pgRegistry(t)}).Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	conn := pgcheck.Connect(t, url)
	for i, tb := range e.db.Tables() {
		t.Run(tb.FullName(), func(t *testing.T) {
			if r := sum.Extracts[i].Sinks[0].Rows; r != tb.Rows {
				t.Fatalf("summary: %d rows, want %d", r, tb.Rows)
			}
			cols := convertedColumns(tb.Columns)
			mapped, err := postgres.MapColumns(cols, postgres.MapOptions{Identifiers: postgres.IdentLower, OffsetColumn: true, VariantTypeColumn: true})
			if err != nil {
				t.Fatal(err)
			}
			var pc []pgcheck.Column
			for _, m := range mapped {
				pc = append(pc, pgcheck.Column{Name: m.Name, Source: m.Source, Companion: m.Companion})
			}
			table := postgres.QuoteIdent(strings.ToLower(tb.Schema)) + "." + postgres.QuoteIdent(strings.ToLower(tb.Name))
			pgcheck.Compare(t, context.Background(), conn, table, "", pc, cols, tb.Rows, convertedRow(tb))
		})
	}
}

// faultEnv is a sample server whose responses on table fail mid-table.
func faultEnv(t testing.TB, f tdsserver.Faults) *env {
	t.Helper()
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: e2eRows})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Faults: f, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &env{db: db, srv: srv}
}

// tableState is a table's row count and a digest of its rows, or -1 when
// it does not exist.
func tableState(t testing.TB, conn *pgx.Conn, table string) (int64, string) {
	t.Helper()
	var reg *string
	if err := conn.QueryRow(context.Background(), "SELECT to_regclass($1)::text", table).Scan(&reg); err != nil {
		t.Fatal(err)
	}
	if reg == nil {
		return -1, ""
	}
	var n int64
	var digest *string
	if err := conn.QueryRow(context.Background(), "SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM "+table+" t").Scan(&n, &digest); err != nil {
		t.Fatal(err)
	}
	if digest == nil {
		return n, ""
	}
	return n, *digest
}

// A fault mid-table (the connection closed after some rows, or a
// malformed token) fails the extract after rows were already sent to
// PostgreSQL, and leaves the table exactly as it was under every mode.
func TestPostgresFaultLeavesNoPartialTable(t *testing.T) {
	url := pgtest.Start(t)
	conn := pgcheck.Connect(t, url)
	good := startEnv(t)
	for _, f := range []struct {
		name   string
		faults tdsserver.Faults
	}{
		{"close-after-rows", tdsserver.Faults{Table: "poc48", CloseAfterRows: 2000}},
		{"malformed-at-row", tdsserver.Faults{Table: "poc48", MalformedAtRow: 2000}},
	} {
		bad := faultEnv(t, f.faults)
		for _, mode := range []string{"create", "append", "truncate", "replace"} {
			t.Run(f.name+"/"+mode, func(t *testing.T) {
				table := fmt.Sprintf("f_%s_%s", strings.ReplaceAll(f.name, "-", "_"), mode)
				run := func(e *env) error {
					job := &engine.JobConfig{
						Source:   engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "1m"},
						Extracts: []engine.ExtractConfig{{Table: "dbo.poc48"}},
						Sinks: []engine.SinkConfig{{Type: "postgres", Options: map[string]any{"connection": url, "table": table,
							"mode": mode, "buffer_size": "16KiB"}}},
					}
					_, err := (&engine.Runner{Registry: pgRegistry(t)}).Run(context.Background(), job)
					return err
				}
				if mode != "create" {
					if err := run(good); err != nil {
						t.Fatal(err)
					}
					exec := "DELETE FROM " + table + " WHERE ctid IN (SELECT ctid FROM " + table + " LIMIT 700)"
					if _, err := conn.Exec(context.Background(), exec); err != nil {
						t.Fatal(err)
					}
				}
				n0, d0 := tableState(t, conn, table)
				err := run(bad)
				if err == nil {
					t.Fatal("the faulty extract succeeded")
				}
				n1, d1 := tableState(t, conn, table)
				if n1 != n0 || d1 != d0 {
					t.Fatalf("after the fault (%v) the table has %d rows (digest %s), before %d (%s)", err, n1, d1, n0, d0)
				}
			})
		}
	}
}

// A tdsextract process killed (SIGKILL) in the middle of a load leaves
// nothing: PostgreSQL rolls back the transaction of the dropped
// connection, so a new table never appears and a replaced one keeps its
// rows.
func TestPostgresKilledProcessLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tdsextract binary")
	}
	url := pgtest.Start(t)
	conn := pgcheck.Connect(t, url)
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "tdsextract")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/tdsextract")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The server stalls after 20000 rows: by then the sink has sent most
	// of them into the COPY, and the process is killed while it waits.
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.poc48": 40000}})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db,
		Faults: tdsserver.Faults{Table: "poc48", StallAfterRows: 20000, Stall: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := conn.Exec(ctx, "CREATE TABLE killed_replace (keep int); INSERT INTO killed_replace SELECT generate_series(1, 5)"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ table, mode string }{{"killed_create", "create"}, {"killed_replace", "replace"}} {
		t.Run(c.mode, func(t *testing.T) {
			n0, d0 := tableState(t, conn, c.table)
			dir := t.TempDir()
			jobFile := filepath.Join(dir, "job.yaml")
			os.WriteFile(jobFile, []byte(fmt.Sprintf(`name: killed
source:
  connection: "sqlserver://sa@%s?database=sample&encrypt=disable"
  password_env: TEST_PW
extracts:
  - table: dbo.poc48
sinks:
  - type: postgres
    options:
      connection: %q
      table: %s
      mode: %s
      buffer_size: 64KiB
      application_name: tdsextract-killed
`, srv.Addr(), url, c.table, c.mode)), 0o644)
			cmd := exec.Command(bin, "--quiet", "run", jobFile)
			cmd.Env = append(os.Environ(), "TEST_PW="+tdsserver.DefaultPassword)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Wait until PostgreSQL has received rows of the COPY.
			deadline := time.Now().Add(90 * time.Second)
			for {
				var got int64
				err := conn.QueryRow(ctx, `SELECT coalesce(max(p.tuples_processed), 0) FROM pg_stat_progress_copy p
					JOIN pg_stat_activity a ON a.pid = p.pid WHERE a.application_name = 'tdsextract-killed'`).Scan(&got)
				if err != nil {
					t.Fatal(err)
				}
				if got >= 10000 {
					break
				}
				select {
				case err := <-done:
					t.Fatalf("tdsextract ended before it was killed: %v", err)
				default:
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("the COPY never received rows (%d)", got)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			// PostgreSQL ends the backend when it notices the connection is gone.
			for i := 0; ; i++ {
				var n int64
				if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tdsextract-killed'").Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if i > 600 {
					t.Fatal("the killed process's backend is still there")
				}
				time.Sleep(50 * time.Millisecond)
			}
			n1, d1 := tableState(t, conn, c.table)
			if n1 != n0 || d1 != d0 {
				t.Fatalf("after the kill %s has %d rows, before %d", c.table, n1, n0)
			}
		})
	}
}

// The tee: one read of each table goes to PostgreSQL and to Parquet, with
// three extracts at a time each on its own PostgreSQL session; every
// table's rows reach both.
func TestPostgresTeeAndParallel(t *testing.T) {
	url := pgtest.Start(t)
	e := startEnv(t)
	dir := t.TempDir()
	tables := []string{"sales.customers", "sales.orders", "sales.order_lines", "dbo.lineitem", "dbo.temporal", "dbo.odbc5"}
	job := &engine.JobConfig{
		Source:   engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "2m"},
		Parallel: 3,
		Sinks: []engine.SinkConfig{
			{Type: "postgres", Options: map[string]any{"connection": url, "schema": "tee_{schema}", "mode": "create", "application_name": "tdsextract-tee"}},
			{Type: "parquet", Options: map[string]any{"path": dir + "/"}},
		},
	}
	for _, tb := range tables {
		job.Extracts = append(job.Extracts, engine.ExtractConfig{Table: tb, Verify: "count"})
	}
	conn := pgcheck.Connect(t, url)
	// Watch the PostgreSQL sessions while the job runs.
	stop := make(chan struct{})
	maxSessions := make(chan int64, 1)
	go func() {
		var most int64
		for {
			select {
			case <-stop:
				maxSessions <- most
				return
			default:
			}
			var n int64
			if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tdsextract-tee'").Scan(&n); err == nil && n > most {
				most = n
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	sum, err := (&engine.Runner{Registry: pgRegistry(t)}).Run(context.Background(), job)
	close(stop)
	most := <-maxSessions
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range tables {
		schema, table, _ := catalog.SplitTableName(name)
		tb, _ := e.db.Table(schema, table)
		ex := sum.Extracts[i]
		if len(ex.Sinks) != 2 || ex.Sinks[0].Rows != tb.Rows || ex.Sinks[1].Rows != tb.Rows {
			t.Errorf("%s: sinks %+v, want %d rows each", name, ex.Sinks, tb.Rows)
		}
		if n, _ := tableState(t, conn, "tee_"+schema+"."+table); n != tb.Rows {
			t.Errorf("%s: PostgreSQL has %d rows, want %d", name, n, tb.Rows)
		}
		if _, err := os.Stat(ex.Sinks[1].Files[0]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	t.Logf("at most %d PostgreSQL sessions at once", most)
	if most > 3 {
		t.Errorf("%d sessions at once with parallel 3", most)
	}
}

// A NUL in text through the whole path: a query extract selecting text
// with U+0000 from the sample server, under each policy.
func TestPostgresNULThroughTheEngine(t *testing.T) {
	url := pgtest.Start(t)
	e := startEnv(t)
	conn := pgcheck.Connect(t, url)
	dir := t.TempDir()
	query := "SELECT id, CONCAT(N'a', NCHAR(0), N'b') AS note FROM dbo.type_matrix WHERE id <= 3"
	run := func(policy, table string) (*engine.Summary, error) {
		job := &engine.JobConfig{
			Source:      engine.SourceConfig{Connection: secret.Secret(e.connString()), Timeout: "1m"},
			SummaryFile: filepath.Join(dir, "summary.json"),
			Extracts:    []engine.ExtractConfig{{Name: "nul", Query: query}},
			Sinks:       []engine.SinkConfig{{Type: "postgres", Options: map[string]any{"connection": url, "table": table, "mode": "create", "refused_values": policy}}},
		}
		return (&engine.Runner{Registry: pgRegistry(t)}).Run(context.Background(), job)
	}
	// The sample server's SQL may not know NCHAR(0); the literal form is
	// the same value.
	if _, err := run("replace", "nul_probe"); err != nil && strings.Contains(err.Error(), "NCHAR") {
		query = "SELECT id, N'a' + N'\x00' + N'b' AS note FROM dbo.type_matrix WHERE id <= 3"
	}
	if _, err := run("fail", "nul_fail"); err == nil || !strings.Contains(err.Error(), `row 1 (key id=1), column "note"`) {
		t.Fatalf("fail: %v", err)
	}
	if n, _ := tableState(t, conn, "nul_fail"); n != -1 {
		t.Fatal("fail left a table")
	}
	sum, err := run("reject", "nul_reject")
	if err != nil {
		t.Fatal(err)
	}
	if st := sum.Extracts[0].Sinks[0]; st.Rejected != 3 || st.Rows != 0 || len(st.Files) != 1 || filepath.Dir(st.Files[0]) != dir {
		t.Fatalf("reject: %+v", st)
	}
	if _, err := run("replace", "nul_replace"); err != nil {
		t.Fatal(err)
	}
	var note string
	if err := conn.QueryRow(context.Background(), "SELECT note FROM nul_replace WHERE id = 2").Scan(&note); err != nil || note != "ab" {
		t.Fatalf("replace: %q %v", note, err)
	}
}
