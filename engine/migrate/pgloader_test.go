package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// runPgloader migrates the sales and warehouse schemas from the sample
// server at src into target with pgloader, reading SQL Server through
// FreeTDS as it does; it returns pgloader's output.
func runPgloader(t *testing.T, port int, user, password, target, including string) string {
	t.Helper()
	bin, err := exec.LookPath("pgloader")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pgloader not installed (CI is set, so this fails instead of skipping)")
		}
		t.Skip("skipping: pgloader not installed (apt-get install pgloader)")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "freetds.conf")
	if err := os.WriteFile(conf, []byte("[global]\n\ttds version = 7.4\n\tclient charset = UTF-8\n\tencryption = off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := filepath.Join(dir, "migrate.load")
	cmd := fmt.Sprintf(`LOAD DATABASE
  FROM mssql://%s:%s@127.0.0.1:%d/sample
  INTO %s
  WITH include drop, create tables, create indexes, reset sequences, foreign keys
  %s;
`, user, password, port, strings.Split(target, "?")[0], including)
	if err := os.WriteFile(load, []byte(cmd), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "--no-ssl-cert-verification", "--root-dir", filepath.Join(dir, "root"), load)
	c.Env = append(os.Environ(), "FREETDSCONF="+conf, "TDSVER=7.4", "HOME="+dir, "TMPDIR="+dir, "LANG=C.UTF-8")
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		t.Logf("pgloader: %v", err)
	}
	return out.String()
}

// pgloaderVersion is what pgloader --version prints first.
func pgloaderVersion() string {
	out, _ := exec.Command("pgloader", "--version").Output()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// The workarounds pgloader needs to load the warehouse schema at all: the
// defaults it copies as literals dropped, uuid-ossp for the uuid_generate_v4()
// it writes for newid().
const pgloaderWorkarounds = `INCLUDING ONLY TABLE NAMES LIKE '%' IN SCHEMA 'sales'
  INCLUDING ONLY TABLE NAMES LIKE '%' IN SCHEMA 'warehouse'
  CAST type datetime2 to timestamptz drop default, column movements.movement_id to bigint drop default,
       column sites.opened_on to date drop default
  BEFORE LOAD DO $$ CREATE EXTENSION IF NOT EXISTS "uuid-ossp"; $$`

// point is one row of the comparison: what to look at and how to show
// it for one target database.
type point struct {
	name string
	show func(t *testing.T, conn *pgx.Conn) string
}

// scalar runs q and shows its one value, "missing" when it returns no
// row, or the error's message.
func scalar(t *testing.T, conn *pgx.Conn, q string, args ...any) string {
	var v *string
	err := conn.QueryRow(context.Background(), q, args...).Scan(&v)
	switch {
	case err == pgx.ErrNoRows || err == nil && v == nil:
		return "missing"
	case err != nil:
		return "error: " + pgMessage(err)
	}
	return strings.Join(strings.Fields(*v), " ")
}

// tryInsert runs an INSERT ... RETURNING in a transaction it rolls back.
func tryInsert(t *testing.T, conn *pgx.Conn, q string) string {
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var v string
	if err := tx.QueryRow(ctx, q).Scan(&v); err != nil {
		return "fails: " + pgMessage(err)
	}
	return v
}

func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// column maps key to value over a two-column query.
func column(t *testing.T, conn *pgx.Conn, q string) map[string]string {
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var kv [2]string
		return kv, r.Scan(&kv[0], &kv[1])
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	m := map[string]string{}
	for _, kv := range out {
		m[kv[0]] = kv[1]
	}
	return m
}

// TestCompareWithPgloader migrates the sales and warehouse schemas with
// tdsextract and with pgloader (through FreeTDS, as users run it) into two
// databases of one PostgreSQL 15 and compares the results point by point.
// pgloader's own default run stops at the first T-SQL default it copies as
// a literal, so its column is that of the run with the workarounds a user
// would add. The README's table is this comparison: the test fails when
// tdsextract's column changes, and when pgloader's does for the pgloader
// version the README names.
func TestCompareWithPgloader(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: sampleRows})
	src := startSource(t, db)
	_, _, a := migrated(t, db, "cmp_tdsextract", nil, "sales.*", "warehouse.*")
	plainURL, plain := freshDB(t, "cmp_pgloader_plain")
	plainOut := runPgloader(t, src.Port, src.User, src.Password.Reveal(), plainURL,
		"INCLUDING ONLY TABLE NAMES LIKE '%' IN SCHEMA 'sales'\n  INCLUDING ONLY TABLE NAMES LIKE '%' IN SCHEMA 'warehouse'")
	pglURL, b := freshDB(t, "cmp_pgloader")
	out := runPgloader(t, src.Port, src.User, src.Password.Reveal(), pglURL, pgloaderWorkarounds)
	t.Logf("pgloader (with workarounds):\n%s", out)

	sites, _ := db.Table("warehouse", "sites")
	_, incr, last, _ := sites.IdentityValues()
	cust, _ := db.Table("sales", "customers")
	_, cincr, clast, _ := cust.IdentityValues()
	var mseq sampledb.Sequence
	for _, sq := range db.Sequences() {
		if sq.Name == "movement_seq" {
			mseq = sq
		}
	}
	total := int64(0)
	for _, tb := range db.Tables() {
		if tb.Schema == "sales" || tb.Schema == "warehouse" {
			total += tb.Rows
		}
	}
	// equalTo counts the rows of conn whose value of expr (keyed by key)
	// equals tdsextract's, which the value tests hold equal to the source.
	equalTo := func(table, key, expr, exprB string) func(t *testing.T, conn *pgx.Conn) string {
		want := column(t, a, fmt.Sprintf("SELECT %s::text, %s FROM %s", key, expr, table))
		return func(t *testing.T, conn *pgx.Conn) string {
			e := expr
			if conn == b {
				e = exprB
			}
			got := column(t, conn, fmt.Sprintf("SELECT %s::text, %s FROM %s", key, e, table))
			n := 0
			for k, v := range want {
				if got[k] == v {
					n++
				}
			}
			return fmt.Sprintf("%d of %d equal to the source", n, len(want))
		}
	}
	points := []point{
		{"T-SQL defaults `sysdatetime()`, `NEXT VALUE FOR`, `CONVERT([date],getutcdate())`", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, `SELECT string_agg(column_default, ', ' ORDER BY column_name) FROM information_schema.columns
				WHERE (table_name, column_name) IN (('movements', 'movement_id'), ('sites', 'opened_on'), ('sites', 'created_at'))`)
		}},
		{"identity outside dbo (`warehouse.sites`: seed 100, increment 10, last value past the last row): insert without an id", func(t *testing.T, conn *pgx.Conn) string {
			return tryInsert(t, conn, "INSERT INTO warehouse.sites (code, name, country, opened_on, created_at) VALUES ('Zzz-001', 'x', 'NL', '2026-01-01', now()) RETURNING site_id::text")
		}},
		{"identity in `sales.customers`: insert without an id", func(t *testing.T, conn *pgx.Conn) string {
			return tryInsert(t, conn, "INSERT INTO sales.customers (first_name, last_name, email, created_at) VALUES ('A', 'B', 'a@b', now()) RETURNING customer_id::text")
		}},
		{"sequence `warehouse.movement_seq`: next value", func(t *testing.T, conn *pgx.Conn) string {
			if scalar(t, conn, "SELECT to_regclass('warehouse.movement_seq')::text") == "missing" {
				return "missing"
			}
			return scalar(t, conn, "SELECT nextval('warehouse.movement_seq')::text")
		}},
		{"two-column foreign key `movements(site_id, sku)` with ON DELETE/UPDATE CASCADE", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, "SELECT string_agg(pg_get_constraintdef(oid), '; ') FROM pg_constraint WHERE conrelid = 'warehouse.movements'::regclass AND contype = 'f'")
		}},
		{"filtered index with INCLUDE `IX_stock_low`", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, "SELECT regexp_replace(indexdef, '.* USING btree ', '') FROM pg_indexes WHERE indexname LIKE '%ix_stock_low'")
		}},
		{"descending key with INCLUDE `IX_movements_site_moved`", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, "SELECT regexp_replace(indexdef, '.* USING btree ', '') FROM pg_indexes WHERE indexname LIKE '%ix_movements_site_moved'")
		}},
		{"index names", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, "SELECT regexp_replace(indexname, '^idx_[0-9]+_', 'idx_OID_') FROM pg_indexes WHERE indexname LIKE '%ix_stock_low'")
		}},
		{"computed columns `stock.stock_value`, `stock.needs_reorder`", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, `SELECT string_agg(CASE WHEN is_generated = 'ALWAYS' THEN 'generated ' || generation_expression ELSE 'plain ' || data_type END, '; ' ORDER BY column_name)
				FROM information_schema.columns WHERE table_name = 'stock' AND column_name IN ('stock_value', 'needs_reorder')`)
		}},
		{"check constraints (4 in the source)", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, "SELECT count(*)::text FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE contype = 'c' AND nspname = 'warehouse'")
		}},
		{"view `warehouse.low_stock`", func(t *testing.T, conn *pgx.Conn) string {
			if scalar(t, conn, "SELECT to_regclass('warehouse.low_stock')::text") == "missing" {
				return "missing"
			}
			return scalar(t, conn, "SELECT count(*)::text || ' rows' FROM warehouse.low_stock")
		}},
		{"types of `nvarchar(12)`, `decimal(10,2)`, `datetime`, `datetime2(7)`", func(t *testing.T, conn *pgx.Conn) string {
			return scalar(t, conn, `SELECT string_agg(format_type(atttypid, atttypmod), ', ' ORDER BY k) FROM (VALUES
				(1, 'warehouse.sites'::regclass, 'code'), (2, 'sales.order_lines'::regclass, 'unit_price'),
				(3, 'sales.orders'::regclass, 'order_date'), (4, 'warehouse.movements'::regclass, 'moved_at')) v(k, rel, col)
				JOIN pg_attribute a ON a.attrelid = v.rel AND a.attname = v.col`)
		}},
		{"GUID values (`sites.site_guid`)", equalTo("warehouse.sites", "site_id", "site_guid::text", "site_guid::text")},
		{"`datetime2(7)` values (`movements.moved_at`)", equalTo("warehouse.movements", "movement_id",
			"to_char(moved_at, 'YYYY-MM-DD HH24:MI:SS.US')", "to_char(moved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')")},
		{"rows loaded", func(t *testing.T, conn *pgx.Conn) string {
			n := scalar(t, conn, `SELECT (SELECT count(*) FROM sales.customers) + (SELECT count(*) FROM sales.products) + (SELECT count(*) FROM sales.orders)
				+ (SELECT count(*) FROM sales.order_lines) + (SELECT count(*) FROM warehouse.sites) + (SELECT count(*) FROM warehouse.stock)
				+ (SELECT count(*) FROM warehouse.movements)`)
			return n + " of " + fmt.Sprint(total)
		}},
	}
	plainResult := "loads everything, no workaround needed"
	if n := scalar(t, plain, "SELECT count(*)::text FROM pg_tables WHERE schemaname IN ('sales', 'warehouse')"); n == "0" {
		msg := "fails before any table is created"
		for _, line := range strings.Split(plainOut, "\n") {
			if _, m, ok := strings.Cut(line, "ERROR Database error "); ok {
				msg += ": `" + strings.TrimSpace(m) + "`"
				break
			}
		}
		plainResult = msg
	}
	var table strings.Builder
	table.WriteString("| point | tdsextract migrate | pgloader (with the workarounds) |\n| --- | --- | --- |\n")
	table.WriteString("| the sales and warehouse schemas, default options, no workaround | loads everything | " + plainResult + " |\n")
	mine := map[string]string{}
	for _, p := range points {
		va, vb := p.show(t, a), p.show(t, b)
		mine[p.name] = va
		fmt.Fprintf(&table, "| %s | %s | %s |\n", p.name, cell(va), cell(vb))
	}
	t.Logf("\n%s", table.String())

	// tdsextract's own column, checked whatever pgloader does.
	for name, want := range map[string]string{
		points[1].name:  fmt.Sprint(last + incr),
		points[2].name:  fmt.Sprint(clast + cincr),
		points[3].name:  fmt.Sprint(mseq.Current + mseq.Increment),
		points[4].name:  "FOREIGN KEY (site_id, sku) REFERENCES warehouse.stock(site_id, sku) ON UPDATE CASCADE ON DELETE CASCADE",
		points[9].name:  "4",
		points[14].name: fmt.Sprintf("%d of %d", total, total),
	} {
		if mine[name] != want {
			t.Errorf("tdsextract: %s: %s, want %s", name, mine[name], want)
		}
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- pgloader-comparison ")
	version, rest, _ := strings.Cut(rest, " -->\n")
	block, _, _ := strings.Cut(rest, "<!-- /pgloader-comparison -->")
	if !ok {
		t.Fatalf("README has no <!-- pgloader-comparison VERSION --> block; it is:\n<!-- pgloader-comparison %s -->\n%s<!-- /pgloader-comparison -->", pgloaderVersion(), table.String())
	}
	if version == pgloaderVersion() {
		if block != table.String() {
			t.Errorf("README's comparison with pgloader differs from this run; it is:\n%s", table.String())
		}
		return
	}
	// Another pgloader: only tdsextract's column must match.
	for _, line := range strings.Split(table.String(), "\n")[2:] {
		cells := strings.Split(line, " | ")
		if len(cells) >= 2 && !strings.Contains(block, strings.Join(cells[:2], " | ")+" |") {
			t.Errorf("README's comparison lacks %q", strings.Join(cells[:2], " | "))
		}
	}
}

// cell escapes a value for a markdown table cell.
func cell(s string) string { return "`" + strings.ReplaceAll(s, "|", "\\|") + "`" }
