package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// sampleRows keeps the sample small: the tests are about the schema and
// every value, not volume.
var sampleRows = map[string]int64{"sales.customers": 300, "sales.products": 120, "sales.orders": 900,
	"sales.order_lines": 2500, "warehouse.sites": 12, "warehouse.stock": 600, "warehouse.movements": 1500}

// startSource starts the sample server on db and returns the session
// config to reach it.
func startSource(t testing.TB, db *sampledb.DB) session.Config {
	t.Helper()
	return startFaulty(t, db, tdsserver.Faults{})
}

// startFaulty is startSource with faults injected into query responses.
func startFaulty(t testing.TB, db *sampledb.DB, f tdsserver.Faults) session.Config {
	t.Helper()
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Faults: f, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return session.Config{Host: "127.0.0.1", Port: srv.Port(), User: tdsserver.DefaultUser, Password: tdsserver.DefaultPassword,
		Database: "sample", Encrypt: session.EncryptDisable, ConnectTimeout: 20 * time.Second}
}

// freshDB creates an empty database on the shared server and returns its
// connection string and a connection to it.
func freshDB(t testing.TB, name string) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.Shared(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return dbURL, conn
}

func migrateConfig(src session.Config, target string, include ...string) *Config {
	return &Config{Source: src, Timeout: session.TimeoutOf(time.Minute), Filter: catalog.Filter{Include: include},
		Target: postgres.ConnConfig{Connection: secret.Secret(target), ConnectTimeout: 20 * time.Second}, Parallel: 3}
}

// migrated runs a whole migration of include into a fresh database and
// returns the plan, the summary and a connection to the target.
func migrated(t *testing.T, db *sampledb.DB, dbname string, edit func(*Config), include ...string) (*Plan, *Summary, *pgx.Conn) {
	t.Helper()
	src := startSource(t, db)
	url, conn := freshDB(t, dbname)
	c := migrateConfig(src, url, include...)
	if edit != nil {
		edit(c)
	}
	ctx := context.Background()
	plan, err := Discover(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(ctx, c, plan)
	if err != nil {
		var b bytes.Buffer
		_ = plan.Write(&b)
		t.Fatalf("migrate: %v\n%s", err, b.String())
	}
	return plan, sum, conn
}

func query[T any](t *testing.T, conn *pgx.Conn, q string, args ...any) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(context.Background(), q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// pgCode is the SQLSTATE of err, "" when it is not a PostgreSQL error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// The sales and warehouse schemas migrated into a real PostgreSQL 15:
// the schema as the catalog shows it, identities and sequences going on
// from the source's next values, defaults, checks and foreign keys that
// act, generated columns, the view, and every value read back equal.
func TestMigrateSample(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: sampleRows})
	plan, sum, conn := migrated(t, db, "migrate_sample", func(c *Config) { c.Verify = VerifyChecksum }, "sales.*", "warehouse.*")
	ctx := context.Background()
	if len(plan.Untranslated) != 0 {
		t.Errorf("untranslated: %+v", plan.Untranslated)
	}

	// Every table loaded and verified by checksum.
	for _, ts := range sum.Tables {
		schema, name, _ := strings.Cut(ts.Source, ".")
		src, _ := db.Table(schema, name)
		if ts.Rows != src.Rows || ts.SourceRows != src.Rows || ts.Verified != VerifyChecksum || ts.Error != "" {
			t.Errorf("%s: %+v, want %d rows verified by checksum", ts.Source, ts, src.Rows)
		}
	}
	if len(sum.Tables) != 7 {
		t.Errorf("%d tables", len(sum.Tables))
	}

	// Columns: types, nullability, identity, generated, defaults.
	cols := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT table_schema||'.'||table_name||'.'||column_name,
		concat_ws(' ', format_type(a.atttypid, a.atttypmod), CASE WHEN is_nullable = 'NO' THEN 'not null' END,
			CASE WHEN is_identity = 'YES' THEN 'identity '||identity_generation||' '||identity_start||' '||identity_increment END,
			CASE WHEN is_generated = 'ALWAYS' THEN 'generated '||generation_expression END,
			CASE WHEN column_default IS NOT NULL THEN 'default '||column_default END)
		FROM information_schema.columns c
		JOIN pg_catalog.pg_attribute a ON a.attrelid = (quote_ident(table_schema)||'.'||quote_ident(table_name))::regclass AND a.attname = column_name
		WHERE table_schema IN ('sales', 'warehouse')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		cols[k] = strings.Join(strings.Fields(v), " ")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"sales.customers.customer_id":     "integer not null identity BY DEFAULT 1 1",
		"sales.customers.created_at":      "timestamp(3) without time zone not null default now()",
		"sales.customers.is_active":       "boolean not null default true",
		"sales.customers.city":            "character varying(60)",
		"sales.orders.status":             "character varying(20) not null default 'new'::character varying",
		"sales.order_lines.unit_price":    "numeric(10,2) not null",
		"warehouse.sites.site_id":         "integer not null identity BY DEFAULT 100 10",
		"warehouse.sites.site_guid":       "uuid not null default gen_random_uuid()",
		"warehouse.sites.opened_on":       "date not null default ((now() AT TIME ZONE 'UTC'::text))::date",
		"warehouse.sites.country":         "character(2) not null default 'NL'::bpchar",
		"warehouse.stock.stock_value":     "numeric(21,2) generated ((quantity)::numeric * unit_cost)",
		"warehouse.stock.needs_reorder":   "integer generated CASE WHEN (quantity < reorder_level) THEN 1 ELSE 0 END",
		"warehouse.movements.movement_id": "bigint not null default nextval('warehouse.movement_seq'::regclass)",
		"warehouse.movements.moved_at":    "timestamp(6) without time zone not null default now()",
		"warehouse.movements.note":        "character varying(200) default ''::character varying",
	} {
		if cols[k] != want {
			t.Errorf("column %s:\n got %q\nwant %q", k, cols[k], want)
		}
	}
	for _, tb := range db.Tables() {
		if tb.Schema != "sales" && tb.Schema != "warehouse" {
			continue
		}
		for _, c := range tb.Columns {
			if _, ok := cols[tb.Schema+"."+tb.Name+"."+strings.ToLower(c.Name)]; !ok {
				t.Errorf("column %s.%s.%s missing", tb.Schema, tb.Name, c.Name)
			}
		}
	}

	// Keys, foreign keys (every column in order, actions), checks.
	cons := map[string]string{}
	rows, err = conn.Query(ctx, `SELECT n.nspname||'.'||conname, pg_get_constraintdef(c.oid) FROM pg_constraint c
		JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname IN ('sales', 'warehouse') AND contype <> 'n'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		cons[k] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"warehouse.pk_stock":              "PRIMARY KEY (site_id, sku)",
		"warehouse.uq_sites_code":         "UNIQUE (code)",
		"warehouse.fk_movements_stock":    "FOREIGN KEY (site_id, sku) REFERENCES warehouse.stock(site_id, sku) ON UPDATE CASCADE ON DELETE CASCADE",
		"sales.fk_order_lines_orders":     "FOREIGN KEY (order_id) REFERENCES sales.orders(order_id) ON DELETE CASCADE",
		"sales.fk_orders_customers":       "FOREIGN KEY (customer_id) REFERENCES sales.customers(customer_id)",
		"warehouse.ck_sites_code":         "CHECK (((code)::text ~* '^[A-Z][A-Z][A-Z]-[0-9][0-9][0-9]$'::text))",
		"warehouse.ck_stock_levels":       "CHECK (((reorder_level >= 0) AND (unit_cost >= (0)::numeric)))",
		"warehouse.ck_movements_quantity": "CHECK ((quantity <> 0))",
	} {
		if cons[k] != want {
			t.Errorf("constraint %s:\n got %q\nwant %q", k, cons[k], want)
		}
	}
	// Every source key, foreign key and check has its constraint.
	n := 0
	for _, tb := range db.Tables() {
		if tb.Schema == "sales" || tb.Schema == "warehouse" {
			n += len(tb.ForeignKeys) + len(tb.Checks)
			for _, ix := range tb.Indexes {
				if ix.PrimaryKey || ix.UniqueConstraint {
					n++
				}
			}
		}
	}
	if len(cons) != n {
		t.Errorf("%d constraints, the source has %d: %v", len(cons), n, cons)
	}

	// Indexes: filtered as partial, INCLUDE, DESC.
	for name, want := range map[string]string{
		"ix_stock_low":            "CREATE INDEX ix_stock_low ON warehouse.stock USING btree (site_id, quantity) INCLUDE (reorder_level) WHERE (quantity < 10)",
		"ix_movements_site_moved": "CREATE INDEX ix_movements_site_moved ON warehouse.movements USING btree (site_id, moved_at DESC) INCLUDE (quantity, reason)",
		"ux_customers_email":      "CREATE UNIQUE INDEX ux_customers_email ON sales.customers USING btree (email)",
		"ix_customers_last_name":  "CREATE INDEX ix_customers_last_name ON sales.customers USING btree (last_name, first_name) INCLUDE (city)",
	} {
		if got := query[string](t, conn, "SELECT indexdef FROM pg_indexes WHERE indexname = $1", name); got != want {
			t.Errorf("index %s:\n got %s\nwant %s", name, got, want)
		}
	}
	idx := 0
	for _, tb := range db.Tables() {
		if tb.Schema == "sales" || tb.Schema == "warehouse" {
			idx += len(tb.Indexes)
		}
	}
	if got := query[int64](t, conn, "SELECT count(*) FROM pg_indexes WHERE schemaname IN ('sales', 'warehouse')"); got != int64(idx) {
		t.Errorf("%d indexes, the source has %d", got, idx)
	}

	// Identity: a row inserted without an id gets the source's next value.
	for _, name := range []string{"sales.customers", "warehouse.sites"} {
		schema, table, _ := strings.Cut(name, ".")
		tb, _ := db.Table(schema, table)
		_, incr, last, _ := tb.IdentityValues()
		var id int64
		q := "INSERT INTO sales.customers (first_name, last_name, email) VALUES ('Ada', 'Lovelace', 'ada@example.com') RETURNING customer_id"
		if name == "warehouse.sites" {
			q = "INSERT INTO warehouse.sites (code, name, opened_on) VALUES ('new-001', 'New depot', '2026-01-01') RETURNING site_id"
		}
		if err := conn.QueryRow(ctx, q).Scan(&id); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if id != last+incr {
			t.Errorf("%s: the next identity is %d, the source's is %d", name, id, last+incr)
		}
	}
	// Sequences: the next value is the source's.
	for _, sq := range db.Sequences() {
		want := sq.Start
		if sq.Used {
			want = sq.Current + sq.Increment
		}
		if got := query[int64](t, conn, fmt.Sprintf("SELECT nextval('%s.%s')", sq.Schema, sq.Name)); got != want {
			t.Errorf("sequence %s: next value %d, want %d", sq.Name, got, want)
		}
	}

	// Defaults apply; NEXT VALUE FOR draws from the migrated sequence.
	var mid int64
	var reason, note string
	var ref [16]byte
	var moved time.Time
	err = conn.QueryRow(ctx, `INSERT INTO warehouse.movements (site_id, sku, quantity) SELECT site_id, sku, 3 FROM warehouse.stock LIMIT 1
		RETURNING movement_id, reason, note, ref, moved_at`).Scan(&mid, &reason, &note, &ref, &moved)
	if err != nil {
		t.Fatal(err)
	}
	if mid <= 1000+5*(sampleRows["warehouse.movements"]-1) || reason != "adjust" || note != "" || ref == [16]byte{} || time.Since(moved) > time.Hour || time.Since(moved) < -time.Hour {
		t.Errorf("defaults: movement_id %d reason %q note %q ref %x moved_at %v", mid, reason, note, ref, moved)
	}

	var opened time.Time
	if err := conn.QueryRow(ctx, "INSERT INTO warehouse.sites (code, name) VALUES ('Utc-001', 'x') RETURNING opened_on").Scan(&opened); err != nil {
		t.Fatal(err)
	}
	if d := time.Now().UTC(); opened.Format(time.DateOnly) != d.Format(time.DateOnly) && opened.Format(time.DateOnly) != d.Add(-time.Minute).Format(time.DateOnly) {
		t.Errorf("opened_on defaults to %v, want the UTC date %v", opened, d)
	}

	// Checks and foreign keys enforce; cascades act.
	for q, code := range map[string]string{
		"UPDATE warehouse.stock SET quantity = -1 WHERE stock_id = 1":                                                                "23514",
		"INSERT INTO warehouse.sites (code, name, opened_on) VALUES ('AB-1', 'x', '2026-01-01')":                                     "23514",
		"INSERT INTO warehouse.movements (site_id, sku, quantity) VALUES (100, 'SKU-NONE', 1)":                                       "23503",
		"INSERT INTO sales.orders (customer_id, status, total) VALUES (999999, 'new', 0)":                                            "23503",
		"INSERT INTO warehouse.stock (stock_id, site_id, sku, quantity, reorder_level, unit_cost) VALUES (1, 100, 'SKU-X', 1, 1, 1)": "23505",
	} {
		if _, err := conn.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("%s: %v, want SQLSTATE %s", q, err, code)
		}
	}
	var site int64
	var sku string
	if err := conn.QueryRow(ctx, "SELECT site_id, sku FROM warehouse.movements GROUP BY site_id, sku ORDER BY count(*) DESC LIMIT 1").Scan(&site, &sku); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "UPDATE warehouse.stock SET sku = 'MOVED-1' WHERE site_id = $1 AND sku = $2", site, sku); err != nil {
		t.Fatal(err)
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM warehouse.movements WHERE site_id = $1 AND sku = 'MOVED-1'", site); n == 0 {
		t.Error("ON UPDATE CASCADE did not reach movements")
	}
	if _, err := conn.Exec(ctx, "DELETE FROM warehouse.stock WHERE site_id = $1 AND sku = 'MOVED-1'", site); err != nil {
		t.Fatal(err)
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM warehouse.movements WHERE site_id = $1 AND sku = 'MOVED-1'", site); n != 0 {
		t.Errorf("ON DELETE CASCADE left %d movements", n)
	}

	// The view gives the source view's rows.
	var lv *sampledb.Table
	for _, v := range db.Views() {
		if v.Name == "low_stock" {
			lv = v
		}
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM warehouse.low_stock"); n != lv.Rows {
		t.Errorf("view low_stock: %d rows, want %d", n, lv.Rows)
	}
}

// Every value of every migrated table, generated columns included, read
// back with pgx and compared with the source's.
func TestMigrateValues(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 5, Rows: sampleRows})
	plan, _, conn := migrated(t, db, "migrate_values", nil, "sales.*", "warehouse.*")
	for _, tp := range plan.Tables {
		src, _ := db.Table(tp.Source.Schema, tp.Source.Name)
		var tcols []pgcheck.Column
		for _, m := range tp.Columns {
			tcols = append(tcols, pgcheck.Column{Name: m.Name, Source: src.ColumnIndex(m.SourceName), Companion: m.Companion})
		}
		var order []string
		for _, k := range src.Key {
			order = append(order, strings.ToLower(k))
		}
		pgcheck.Compare(t, context.Background(), conn, tp.QualifiedName(), strings.Join(order, ", "), tcols, src.Columns, src.Rows, src.Row)
	}
}

// One table failing mid-load leaves the others loaded and says which one
// failed; what depends on it is not run. A rerun without --resume is
// refused; with it, the rest is done and no row is there twice.
func TestResume(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 11, Rows: sampleRows})
	url, conn := freshDB(t, "migrate_resume")
	ctx := context.Background()
	faulty := migrateConfig(startFaulty(t, db, tdsserver.Faults{Table: "warehouse.stock", CloseAfterRows: 250}), url, "warehouse.*")
	faulty.Verify = VerifyCount
	plan, err := Discover(ctx, faulty)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(ctx, faulty, plan)
	if err == nil || !strings.Contains(err.Error(), "table warehouse.stock") {
		t.Fatalf("first run: %v, want a failure of warehouse.stock", err)
	}
	status := map[string]string{}
	for _, s := range sum.Steps {
		status[s.Phase+" "+s.Object] = s.Status
	}
	for k, want := range map[string]string{"key warehouse.pk_sites": StepDone, "key warehouse.pk_stock": StepNotRun,
		"foreign key warehouse.stock.fk_stock_sites": StepNotRun, "foreign key warehouse.movements.fk_movements_stock": StepNotRun,
		"view warehouse.low_stock": StepNotRun, "index warehouse.ix_movements_site_moved": StepDone} {
		if status[k] != want {
			t.Errorf("first run: %s is %q, want %q", k, status[k], want)
		}
	}
	for _, ts := range sum.Tables {
		if (ts.Error != "") != (ts.Source == "warehouse.stock") {
			t.Errorf("first run: %s: %+v", ts.Source, ts)
		}
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM warehouse.stock"); n != 0 {
		t.Errorf("the failed load left %d rows", n)
	}

	good := migrateConfig(startSource(t, db), url, "warehouse.*")
	good.Verify = VerifyCount
	if _, err := Run(ctx, good, plan); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("rerun without resume: %v", err)
	}
	good.Resume = true
	plan, err = Discover(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	sum, err = Run(ctx, good, plan)
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	for _, ts := range sum.Tables {
		if ts.Resumed != (ts.Source != "warehouse.stock") || ts.Error != "" {
			t.Errorf("resumed run: %s: %+v", ts.Source, ts)
		}
	}
	for _, s := range sum.Steps {
		if s.Status != StepDone && s.Status != StepEarlier {
			t.Errorf("resumed run: %+v", s)
		}
	}
	for _, tb := range db.Tables() {
		if tb.Schema != "warehouse" {
			continue
		}
		if n := query[int64](t, conn, "SELECT count(*) FROM warehouse."+tb.Name); n != tb.Rows {
			t.Errorf("%s: %d rows after resume, want %d", tb.Name, n, tb.Rows)
		}
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM pg_constraint WHERE conname = 'fk_movements_stock'"); n != 1 {
		t.Error("fk_movements_stock not created by the resumed run")
	}
}

// With --case-insensitive icu or citext the keys under a case-insensitive
// source collation refuse what SQL Server refuses ('ABC' after 'abc'),
// the checks on them still work (pattern matching names another
// collation under icu), every value reads back equal (checksum) and the
// plan reports the choice. The whole warehouse schema, so that the foreign
// key onto such a key is created too.
func TestCaseInsensitiveKeys(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"warehouse.sites": 5, "warehouse.stock": 40, "warehouse.movements": 30}})
	for _, tc := range []struct{ policy, typ, note, padded string }{
		{CIICU, "character varying(12)", CICollation, "SELECT 'abc'::varchar COLLATE " + CICollation + " = 'ABC '::varchar COLLATE " + CICollation},
		{CICitext, "citext", "typed citext", "SELECT 'abc'::citext = 'ABC '::citext"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			plan, sum, conn := migrated(t, db, "migrate_ci_"+tc.policy, func(c *Config) { c.Options.CaseInsensitive = tc.policy; c.Verify = VerifyChecksum }, "warehouse.*")
			ctx := context.Background()
			for _, ts := range sum.Tables {
				if ts.Verified != VerifyChecksum || ts.Error != "" {
					t.Errorf("%s: %+v", ts.Source, ts)
				}
			}
			if typ := query[string](t, conn, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'warehouse.sites'::regclass AND attname = 'code'"); !strings.HasSuffix(typ, tc.typ) {
				t.Errorf("sites.code is %s, want %s", typ, tc.typ)
			}
			sites, _ := db.Table("warehouse", "sites")
			want := map[string]bool{}
			for i := range sites.Rows {
				want[sites.Row(i, nil)[1].(string)] = true
			}
			rows, err := conn.Query(ctx, "SELECT code::text FROM warehouse.sites")
			if err != nil {
				t.Fatal(err)
			}
			codes, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range codes {
				if !want[c] {
					t.Errorf("code %q read back, not in the source", c)
				}
			}
			if len(codes) != len(want) {
				t.Errorf("%d codes read back, want %d", len(codes), len(want))
			}
			ins := "INSERT INTO warehouse.sites (code, name, opened_on) VALUES ($1, 'x', '2026-01-01')"
			if _, err := conn.Exec(ctx, ins, "abc-001"); err != nil {
				t.Fatalf("inserting 'abc-001': %v", err)
			}
			if _, err := conn.Exec(ctx, ins, "ABC-001"); pgCode(err) != "23505" {
				t.Errorf("inserting 'ABC-001' after 'abc-001': %v, want a unique violation", err)
			}
			if _, err := conn.Exec(ctx, ins, strings.ToLower(codes[0])); pgCode(err) != "23505" {
				t.Errorf("inserting %q beside %q: %v, want a unique violation", strings.ToLower(codes[0]), codes[0], err)
			}
			if _, err := conn.Exec(ctx, ins, "zzz-999"); err != nil {
				t.Errorf("a lower-case code the check admits: %v", err)
			}
			if _, err := conn.Exec(ctx, ins, "zz-9"); pgCode(err) != "23514" {
				t.Errorf("a code the check refuses: %v, want a check violation", err)
			}
			found := false
			for _, n := range plan.Notes {
				found = found || n.What == "key" && strings.Contains(n.Detail, tc.note)
			}
			if !found {
				t.Errorf("the plan does not report the case-insensitive key: %+v", plan.Notes)
			}
			// Trailing spaces: SQL Server's comparison ignores them, the
			// target's does not, and the plan says so.
			if query[bool](t, conn, tc.padded) {
				t.Errorf("%s: PostgreSQL ignores trailing spaces here: the plan's lossy item is wrong", tc.padded)
			}
			found = false
			for _, it := range plan.Lossy {
				found = found || it.Object == "warehouse.sites.code" && it.What == "key" && strings.Contains(it.Detail, "trailing spaces")
			}
			if !found {
				t.Errorf("the plan does not report trailing spaces in the key warehouse.sites.code: %+v", plan.Lossy)
			}
			var b bytes.Buffer
			if err := plan.Write(&b); err != nil || !strings.Contains(b.String(), "case-insensitive keys "+tc.policy+"\n") {
				t.Errorf("plan text:\n%s", b.String())
			}
		})
	}
}

// The whole sample database, every type the sample server has (LOBs,
// sql_variant, CLR types, json, vector, temporal tables with hidden
// period columns, every code page), migrated with no include pattern and
// every table verified by checksum.
func TestMigrateWholeSample(t *testing.T) {
	rows := map[string]int64{"dbo.poc48": 50, "dbo.odbc5": 50, "dbo.wide601": 5, "dbo.lob": 5, "dbo.lob_nvarchar": 3,
		"dbo.temporal": 50, "dbo.lineitem": 50}
	for k, v := range sampleRows {
		rows[k] = v / 10
	}
	db := sampledb.New(sampledb.Config{Seed: 9, Rows: rows})
	plan, sum, _ := migrated(t, db, "migrate_whole", func(c *Config) { c.Verify = VerifyChecksum })
	n := 0
	for _, tb := range db.Tables() {
		if !tb.Catalog {
			n++
		}
	}
	if len(sum.Tables) != n || len(plan.Tables) != n {
		t.Errorf("%d tables migrated, the sample has %d", len(sum.Tables), n)
	}
	for _, ts := range sum.Tables {
		schema, name, _ := strings.Cut(ts.Source, ".")
		src, _ := db.Table(schema, name)
		if ts.Error != "" || ts.Verified != VerifyChecksum || ts.Rows != src.Rows {
			t.Errorf("%s: %+v, want %d rows verified by checksum", ts.Source, ts, src.Rows)
		}
	}
}

// A table above SplitRows loads as key ranges on several sessions: every
// row once, each range verified by checksum, the identity restarted after
// the last range. A range that fails is reloaded by --resume alone, and
// the ranges that committed are not loaded twice.
func TestSplitTable(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 13, Rows: sampleRows})
	lines, _ := db.Table("sales", "order_lines")
	url, conn := freshDB(t, "migrate_split")
	ctx := context.Background()
	run := func(c *Config) (*Summary, error) {
		t.Helper()
		c.Verify, c.SplitRows = VerifyChecksum, 1000
		plan, err := Discover(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return Run(ctx, c, plan)
	}
	// First the server drops every connection reading order_lines after
	// 500 rows: every range fails, the table is there and empty.
	faulty := migrateConfig(startFaulty(t, db, tdsserver.Faults{Table: "sales.order_lines", CloseAfterRows: 500}), url, "sales.*")
	if _, err := run(faulty); err == nil || !strings.Contains(err.Error(), "key range") {
		t.Fatalf("first run: %v, want failed key ranges", err)
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM sales.order_lines"); n != 0 {
		t.Errorf("after the first run: %d rows", n)
	}
	// Then PostgreSQL refuses the rows of the first range only.
	for _, q := range []string{
		`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.line_id < 834 THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`,
		`CREATE TRIGGER refuse BEFORE INSERT ON sales.order_lines FOR EACH ROW EXECUTE FUNCTION refuse()`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	src := startSource(t, db)
	again := migrateConfig(src, url, "sales.*")
	again.Resume = true
	sum, err := run(again)
	if err == nil || !strings.Contains(err.Error(), "[line_id] < 834") {
		t.Fatalf("second run: %v, want the first range to fail", err)
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM sales.order_lines"); n != lines.Rows-833 {
		t.Errorf("after the second run: %d rows, want %d", n, lines.Rows-833)
	}
	status := map[string]string{}
	for _, s := range sum.Steps {
		status[s.Object] = s.Status
	}
	if status["sales.order_lines.identity"] != StepNotRun || status["sales.pk_orders"] != StepEarlier {
		t.Errorf("second run: the identity step %q, pk_orders %q", status["sales.order_lines.identity"], status["sales.pk_orders"])
	}
	if _, err := conn.Exec(ctx, "DROP TRIGGER refuse ON sales.order_lines"); err != nil {
		t.Fatal(err)
	}
	last := migrateConfig(src, url, "sales.*")
	last.Resume = true
	if sum, err = run(last); err != nil {
		t.Fatalf("third run: %v", err)
	}
	for _, ts := range sum.Tables {
		if ts.Source == "sales.order_lines" && (ts.Rows != lines.Rows || ts.SourceRows != 833 || ts.Verified != VerifyChecksum || ts.Resumed) {
			t.Errorf("third run: %+v, want %d rows, the first range's 833 loaded and verified", ts, lines.Rows)
		}
	}
	if n := query[int64](t, conn, "SELECT count(DISTINCT line_id) FROM sales.order_lines"); n != lines.Rows {
		t.Errorf("%d distinct ids, want %d", n, lines.Rows)
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM sales.order_lines"); n != lines.Rows {
		t.Errorf("%d rows, want %d", n, lines.Rows)
	}
	_, incr, lastID, _ := lines.IdentityValues()
	if id := query[int64](t, conn, "INSERT INTO sales.order_lines (order_id, product_id, quantity, unit_price, discount) VALUES (1, 1, 1, 1, 0) RETURNING line_id"); id != lastID+incr {
		t.Errorf("next line_id %d, want %d", id, lastID+incr)
	}
}

// The key ranges: [MIN, MAX] split evenly, the first open below, the last
// above; the plan names them.
func TestSplitRanges(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 13, Rows: sampleRows})
	c := migrateConfig(startSource(t, db), "postgres://unused@127.0.0.1:1/x", "sales.order_lines")
	c.SplitRows = 1000
	plan, err := Discover(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var ranges []string
	for _, s := range plan.Steps {
		if s.Phase == PhaseData {
			ranges = append(ranges, s.Object+": "+s.Range.String()+" | "+s.PGWhere)
		}
	}
	want := "[sales.order_lines#1/3: [line_id] < 834 | line_id < 834 sales.order_lines#2/3: [line_id] >= 834 AND [line_id] < 1667 | line_id >= 834 AND line_id < 1667 sales.order_lines#3/3: [line_id] >= 1667 | line_id >= 1667]"
	if fmt.Sprint(ranges) != want {
		t.Errorf("ranges\n got %v\nwant %s", ranges, want)
	}
	var b bytes.Buffer
	if err := plan.Write(&b); err != nil || !strings.Contains(b.String(), "SELECT pg_catalog.setval(pg_catalog.pg_get_serial_sequence('sales.order_lines', 'line_id'), 2501, false);") {
		t.Errorf("plan:\n%s", b.String())
	}
}

// A range that fails mid-stream leaves the table's other ranges, the
// ones not yet started included, to load and commit; the run names the
// range. The run recorded the ranges before loading any, so --resume
// loads the failed one with the same bounds even though the source has
// grown since (it would cut 8 ranges now): every row of each range once,
// none twice.
func TestSplitResumeKeepsRanges(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 13, Rows: sampleRows})
	url, conn := freshDB(t, "migrate_split_resume")
	ctx := context.Background()
	src := startSource(t, db)
	// The server of the failing range drops the connection after 100
	// rows of order_lines.
	faulty := startFaulty(t, db, tdsserver.Faults{Table: "sales.order_lines", CloseAfterRows: 100})
	c := migrateConfig(src, url, "sales.order_lines")
	c.Verify, c.SplitRows, c.Parallel = VerifyChecksum, 500, 1
	plan, err := Discover(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// One session at a time, so the ranges load in order: the second
	// range's session is the second one opened by Run.
	var opened int
	c.Connect = func(ctx context.Context, cfg session.Config) (*session.Conn, error) {
		if opened++; opened == 2 {
			cfg = faulty
		}
		return session.Connect(ctx, cfg)
	}
	sum, err := Run(ctx, c, plan)
	if err == nil || !strings.Contains(err.Error(), "key range sales.order_lines#2/5") {
		t.Fatalf("first run: %v, want the second key range failed", err)
	}
	if len(sum.Tables) != 1 || len(sum.Tables[0].Ranges) != 5 {
		t.Fatalf("first run: %+v, want one table of 5 ranges", sum.Tables)
	}
	var loaded int64
	for i, r := range sum.Tables[0].Ranges {
		if failed := r.Error != ""; failed != (i == 1) {
			t.Errorf("first run: range %s: error %q", r.Object, r.Error)
		}
		if r.Error == "" {
			loaded += r.Rows
		}
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM sales.order_lines"); n != loaded || n < 1500 {
		t.Errorf("after the first run: %d rows, the summary says %d: want every range but the second", n, loaded)
	}
	// The source grows by 1500 order lines; the resumed run loads the
	// second range, as recorded, from it.
	grown := map[string]int64{}
	for k, v := range sampleRows {
		grown[k] = v
	}
	grown["sales.order_lines"] = 4000
	c2 := migrateConfig(startSource(t, sampledb.New(sampledb.Config{Seed: 13, Rows: grown})), url, "sales.order_lines")
	c2.Verify, c2.SplitRows, c2.Resume = VerifyChecksum, 500, true
	plan2, err := Discover(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plan2.Ranges(plan2.Tables[0])); n != 8 {
		t.Fatalf("the grown source plans %d ranges, want 8", n)
	}
	sum, err = Run(ctx, c2, plan2)
	if err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	var again []string
	for _, r := range sum.Tables[0].Ranges {
		if !r.Resumed {
			again = append(again, fmt.Sprintf("%s %d rows", r.Object, r.Rows))
		}
	}
	if want := fmt.Sprintf("[sales.order_lines#2/5 %d rows]", 2500-loaded); fmt.Sprint(again) != want || sum.Tables[0].Verified != VerifyChecksum {
		t.Errorf("resumed run loaded %v (verified %q), want %s verified", again, sum.Tables[0].Verified, want)
	}
	if n, d := query[int64](t, conn, "SELECT count(*) FROM sales.order_lines"), query[int64](t, conn, "SELECT count(DISTINCT line_id) FROM sales.order_lines"); n != 2500 || d != n {
		t.Errorf("after the resumed run: %d rows, %d distinct ids, want 2500 of each", n, d)
	}
	status := map[string]string{}
	for _, s := range sum.Steps {
		status[s.Object] = s.Status
	}
	if status["sales.order_lines.identity"] != StepDone || status["sales.pk_order_lines"] != StepDone {
		t.Errorf("resumed run: steps %v, want the identity and the primary key done", status)
	}
}

// columnDefs reads every column of schema as "type [not null] [identity
// generation start increment] [default ...]", keyed table.column.
func columnDefs(t *testing.T, conn *pgx.Conn, schema string) map[string]string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT table_name||'.'||column_name,
		concat_ws(' ', format_type(a.atttypid, a.atttypmod), CASE WHEN is_nullable = 'NO' THEN 'not null' END,
			CASE WHEN is_identity = 'YES' THEN 'identity '||identity_generation||' '||identity_start||' '||identity_increment END,
			CASE WHEN column_default IS NOT NULL THEN 'default '||column_default END)
		FROM information_schema.columns c
		JOIN pg_catalog.pg_attribute a ON a.attrelid = (quote_ident(table_schema)||'.'||quote_ident(table_name))::regclass AND a.attname = column_name
		WHERE table_schema = $1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = strings.Join(strings.Fields(v), " ")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Identities on exact numeric types: decimal(12,0) becomes a bigint
// identity that goes on from the source's next value (seed, increment
// and the values handed out past the last row respected), the
// decimal(12,0) column referencing it bigint too, so the foreign key
// holds; numeric(20,0) stays numeric, without an identity, and the plan
// says so. Every value reads back equal.
func TestMigrateExactNumericIdentity(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 4})
	plan, sum, conn := migrated(t, db, "migrate_finance", func(c *Config) { c.Verify = VerifyChecksum }, "finance.*")
	ctx := context.Background()
	for _, ts := range sum.Tables {
		if ts.Error != "" || ts.Verified != VerifyChecksum {
			t.Errorf("%s: %+v", ts.Source, ts)
		}
	}
	cols := columnDefs(t, conn, "finance")
	for k, want := range map[string]string{
		"invoices.invoice_no": "bigint not null identity BY DEFAULT 5000 5",
		"ledger.invoice_no":   "bigint not null",
		"ledger.entry_no":     "numeric(20,0) not null",
		"invoices.amount":     "numeric(12,2) not null",
	} {
		if cols[k] != want {
			t.Errorf("column %s:\n got %q\nwant %q", k, cols[k], want)
		}
	}
	var untranslated []string
	for _, it := range plan.Untranslated {
		untranslated = append(untranslated, it.What+" "+it.Object+": "+it.Detail)
	}
	if len(untranslated) != 1 || !strings.HasPrefix(untranslated[0], "identity finance.ledger.entry_no: identity on numeric(20,0) (seed 1, increment 1): 20 digits do not fit a bigint") {
		t.Errorf("untranslated: %q", untranslated)
	}
	if got := query[string](t, conn, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'fk_ledger_invoices'`); got != "FOREIGN KEY (invoice_no) REFERENCES finance.invoices(invoice_no)" {
		t.Errorf("foreign key: %s", got)
	}
	inv, _ := db.Table("finance", "invoices")
	_, incr, last, ok := inv.IdentityValues()
	if !ok || last != 5000+5*(inv.Rows-1)+2*5 {
		t.Fatalf("source identity: last %d (%v)", last, ok)
	}
	// The bigint columns hold the decimals' integer values.
	for _, tp := range plan.Tables {
		src, _ := db.Table(tp.Source.Schema, tp.Source.Name)
		var tcols []pgcheck.Column
		asInt := map[int]bool{}
		for _, m := range tp.Columns {
			k := src.ColumnIndex(m.SourceName)
			tcols = append(tcols, pgcheck.Column{Name: m.Name, Source: k, Companion: m.Companion})
			if m.Type.SQL == "bigint" {
				asInt[k] = true
			}
		}
		want := func(i int64, dst []any) []any {
			dst = src.Row(i, dst)
			for k := range asInt {
				d := dst[k].(decode.Decimal)
				v := int64(d.Lo)
				if d.Neg {
					v = -v
				}
				dst[k] = v
			}
			return dst
		}
		pgcheck.Compare(t, ctx, conn, tp.QualifiedName(), strings.ToLower(src.Key[0]), tcols, src.Columns, src.Rows, want)
	}
	var next int64
	if err := conn.QueryRow(ctx, "INSERT INTO finance.invoices (customer, amount, status, issued_at, issued_at__offset_minutes) VALUES ('x', 1, 'open', now(), 0) RETURNING invoice_no").Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next != last+incr {
		t.Errorf("next invoice_no %d, the source's next is %d", next, last+incr)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO finance.ledger (entry_no, invoice_no, amount) VALUES (999999, 1, 1)"); pgCode(err) != "23503" {
		t.Errorf("a ledger row for no invoice: %v, want SQLSTATE 23503", err)
	}
}

// Views built of UNION, UNION ALL, EXCEPT, INTERSECT, TOP (n) ... ORDER
// BY and a CTE migrate, and each returns the rows the source view does
// (in the order of its key columns, TOP's in its ORDER BY).
func TestMigrateSetViews(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 6})
	plan, _, conn := migrated(t, db, "migrate_views", nil, "finance.*")
	ctx := context.Background()
	for _, it := range plan.Untranslated {
		if it.What == "view" {
			t.Errorf("view %s not translated: %s", it.Object, it.Detail)
		}
	}
	order := map[string]string{"open_or_large": "invoice_no", "amounts": "invoice_no, amount", "unbooked": "invoice_no",
		"booked": "invoice_no", "largest_invoices": "amount DESC, invoice_no", "customer_totals": "customer"}
	n := 0
	for _, v := range db.Views() {
		if v.Schema != "finance" {
			continue
		}
		n++
		if v.Rows == 0 {
			t.Errorf("view %s: no rows in the source, nothing to compare", v.Name)
		}
		var tcols []pgcheck.Column
		asInt := map[int]bool{}
		for k, c := range v.Columns {
			tcols = append(tcols, pgcheck.Column{Name: strings.ToLower(c.Name), Source: k})
			typ := query[string](t, conn, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
				"finance."+v.Name, strings.ToLower(c.Name))
			if typ == "bigint" && c.Kind() == decode.KindDecimal {
				asInt[k] = true
			}
		}
		want := func(i int64, dst []any) []any {
			dst = v.Row(i, dst)
			for k := range asInt {
				d := dst[k].(decode.Decimal)
				dst[k] = int64(d.Lo)
			}
			return dst
		}
		got := pgcheck.Compare(t, ctx, conn, "finance."+v.Name, order[v.Name], tcols, v.Columns, v.Rows, want)
		if got != v.Rows {
			t.Errorf("view %s: %d rows, the source's %d", v.Name, got, v.Rows)
		}
	}
	if n != len(order) {
		t.Errorf("%d finance views, want %d", n, len(order))
	}
	if def := query[string](t, conn, "SELECT pg_get_viewdef('finance.largest_invoices')"); !strings.Contains(def, "LIMIT 5") {
		t.Errorf("largest_invoices: %s", def)
	}
}

// planViews plans the finance tables of db with one view more per
// definition, finance.v0, finance.v1, ..., each CREATE VIEW ... AS def.
func planViews(t *testing.T, db *sampledb.DB, defs []string) *Plan {
	t.Helper()
	ctx := context.Background()
	c := migrateConfig(startSource(t, db), "postgres://unused", "finance.invoices", "finance.ledger")
	src, err := c.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cat, err := catalog.Load(ctx, src, catalog.Options{Filter: c.Filter, Timeout: c.Timeout})
	if err != nil {
		t.Fatal(err)
	}
	for i, def := range defs {
		cat.Tables = append(cat.Tables, &catalog.Table{Schema: "finance", Name: fmt.Sprintf("v%d", i), View: true,
			Definition: fmt.Sprintf("CREATE VIEW finance.v%d AS %s", i, def)})
	}
	describe := func(ctx context.Context, p *catalog.Projection) ([]decode.Column, error) {
		return catalog.Describe(ctx, src, p.DescribeSQL(), c.Timeout)
	}
	plan, err := Build(ctx, cat, describe, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// What the view translation does with each form of query: translated
// text, or reported with its original definition and why.
func TestViewForms(t *testing.T) {
	cases := []struct{ def, want, why string }{
		{def: "SELECT TOP 3 invoice_no FROM finance.invoices ORDER BY invoice_no DESC",
			want: "SELECT invoice_no FROM finance.invoices AS invoices ORDER BY invoice_no DESC LIMIT 3"},
		{def: "SELECT DISTINCT TOP (4) customer FROM finance.invoices ORDER BY customer",
			want: "SELECT DISTINCT customer FROM finance.invoices AS invoices ORDER BY customer LIMIT 4"},
		{def: "SELECT TOP (2) customer AS who FROM finance.invoices ORDER BY who",
			want: `SELECT customer AS who FROM finance.invoices AS invoices ORDER BY who LIMIT 2`},
		{def: "SELECT invoice_no FROM finance.invoices ORDER BY invoice_no OFFSET 10 ROWS FETCH NEXT 5 ROWS ONLY",
			want: "SELECT invoice_no FROM finance.invoices AS invoices ORDER BY invoice_no LIMIT 5 OFFSET 10"},
		{def: "SELECT invoice_no FROM finance.invoices UNION SELECT invoice_no FROM finance.ledger EXCEPT SELECT invoice_no FROM finance.ledger WHERE amount < 0",
			want: "SELECT invoice_no FROM finance.invoices AS invoices UNION SELECT invoice_no FROM finance.ledger AS ledger EXCEPT SELECT invoice_no FROM finance.ledger AS ledger WHERE amount < 0"},
		{def: "WITH a (n) AS (SELECT invoice_no FROM finance.invoices), b AS (SELECT n FROM a WHERE n > 5000) SELECT b.n FROM b JOIN finance.ledger AS l ON l.invoice_no = b.n",
			want: `WITH a (n) AS (SELECT invoice_no FROM finance.invoices AS invoices), b AS (SELECT n FROM a AS a WHERE n > 5000) SELECT b.n FROM b AS b JOIN finance.ledger AS l ON l.invoice_no = b.n`},
		{def: "WITH s AS (SELECT * FROM finance.ledger) SELECT memo FROM s INTERSECT SELECT customer FROM finance.invoices",
			want: `WITH s AS (SELECT * FROM finance.ledger AS ledger) SELECT memo FROM s AS s INTERSECT SELECT customer FROM finance.invoices AS invoices`},
		{def: "SELECT TOP 10 PERCENT invoice_no FROM finance.invoices ORDER BY amount", why: "PERCENT"},
		{def: "SELECT TOP (3) WITH TIES invoice_no FROM finance.invoices ORDER BY amount", why: "WITH TIES"},
		{def: "SELECT TOP 3 invoice_no FROM finance.invoices UNION SELECT invoice_no FROM finance.ledger", why: "TOP in a query with UNION"},
		{def: "SELECT invoice_no FROM finance.invoices UNION SELECT invoice_no FROM finance.ledger ORDER BY invoice_no", why: "ORDER BY over UNION"},
		{def: "SELECT invoice_no, customer FROM finance.invoices UNION SELECT invoice_no FROM finance.ledger", why: "2 and 1 columns"},
		{def: "WITH a (x, y) AS (SELECT invoice_no FROM finance.invoices) SELECT x FROM a", why: "names 2 columns"},
		{def: "WITH a AS (SELECT invoice_no + 1 FROM finance.invoices) SELECT * FROM a", why: "without a name"},
		{def: "SELECT TOP (@n) invoice_no FROM finance.invoices", why: "not an integer literal"},
	}
	defs := make([]string, len(cases))
	for i, tc := range cases {
		defs[i] = tc.def
	}
	plan := planViews(t, sampledb.New(sampledb.Config{Seed: 1}), defs)
	for i, tc := range cases {
		obj := fmt.Sprintf("finance.v%d", i)
		var sql string
		for _, s := range plan.Steps {
			if s.Phase == PhaseView && s.Object == obj {
				sql = s.SQL[0]
			}
		}
		var why, orig string
		for _, it := range plan.Untranslated {
			if it.Object == obj {
				why, orig = it.Detail, it.Original
			}
		}
		if tc.why != "" {
			if sql != "" || !strings.Contains(why, tc.why) || !strings.Contains(orig, tc.def) {
				t.Errorf("%s: created as %q; reported %q (source %q), want a report mentioning %q", tc.def, sql, why, orig, tc.why)
			}
			continue
		}
		if want := "CREATE VIEW finance." + obj[len("finance."):] + " AS " + tc.want; sql != want {
			t.Errorf("%s:\n got %s (%s)\nwant %s", tc.def, sql, why, want)
		}
	}
}

// The default of a datetimeoffset column (sysdatetimeoffset()) reaches
// both target columns: the timestamptz gets the instant, the offset
// column the session time zone's offset, and the plan shows both.
func TestDatetimeoffsetDefault(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 2, Rows: map[string]int64{"finance.invoices": 3, "finance.ledger": 0}})
	plan, _, conn := migrated(t, db, "migrate_dto", nil, "finance.invoices")
	var b bytes.Buffer
	if err := plan.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"issued_at timestamptz(6) NOT NULL DEFAULT now(),",
		"issued_at__offset_minutes smallint NOT NULL DEFAULT (EXTRACT(TIMEZONE FROM now()) / 60)::smallint", "session's TimeZone"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the plan does not show %q:\n%s", want, b.String())
		}
	}
	ctx := context.Background()
	for zone, want := range map[string]int16{"Asia/Kolkata": 330, "UTC": 0, "America/Caracas": -240} {
		if _, err := conn.Exec(ctx, "SET TIME ZONE '"+zone+"'"); err != nil {
			t.Fatal(err)
		}
		var off int16
		var at time.Time
		if err := conn.QueryRow(ctx, "INSERT INTO finance.invoices (customer, amount) VALUES ('x', 1) RETURNING issued_at__offset_minutes, issued_at").Scan(&off, &at); err != nil {
			t.Fatal(err)
		}
		if off != want || time.Since(at) > time.Hour || time.Since(at) < -time.Hour {
			t.Errorf("time zone %s: offset %d at %v, want %d now", zone, off, at, want)
		}
	}
}

// A foreign key whose columns become bigint on one side and stay numeric
// on the other (a decimal(19,0) column onto a decimal(12,0) identity,
// which SQL Server admits: both are 9 bytes of scale 0) is reported, not
// created to fail.
func TestForeignKeyOntoBigintIdentity(t *testing.T) {
	ctx := context.Background()
	c := migrateConfig(startSource(t, sampledb.New(sampledb.Config{Seed: 1})), "postgres://unused", "finance.*")
	conn, err := c.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	db, err := catalog.Load(ctx, conn, catalog.Options{Filter: c.Filter, Timeout: c.Timeout})
	if err != nil {
		t.Fatal(err)
	}
	describe := func(ctx context.Context, p *catalog.Projection) ([]decode.Column, error) {
		return catalog.Describe(ctx, conn, p.DescribeSQL(), c.Timeout)
	}
	build := func() *Plan {
		plan, err := Build(ctx, db, describe, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	fkStep := func(p *Plan) bool {
		for _, s := range p.Steps {
			if s.Phase == PhaseForeignKey && s.Object == "finance.ledger.fk_ledger_invoices" {
				return true
			}
		}
		return false
	}
	if p := build(); !fkStep(p) {
		t.Fatalf("the foreign key is not planned: %+v", p.Untranslated)
	}
	// The catalog says decimal(19,0), so the column is not converted; the
	// server still describes it as decimal(12,0), hence numeric(12,0).
	db.Table("finance", "ledger").Column("invoice_no").Precision = 19
	p := build()
	var why string
	for _, it := range p.Untranslated {
		if it.Object == "finance.ledger.FK_ledger_invoices" {
			why = it.Detail
		}
	}
	if fkStep(p) || !strings.Contains(why, "invoice_no is numeric(12,0) and finance.invoices.invoice_no is bigint") {
		t.Errorf("foreign key planned %v, reported %q", fkStep(p), why)
	}
}

// A literal default without an offset: SQL Server reads it into a
// datetimeoffset at +00:00, and PostgreSQL would read a timestamptz
// literal in the TimeZone of the session that creates the table, here
// Asia/Kolkata (+05:30). The timestamptz default is the instant at UTC
// and the offset column's default 0, whatever the session's zone. The
// same literal into a datetime2 (a timestamp, which has no zone) is the
// wall-clock value as written under any TimeZone.
func TestLiteralTimeDefaults(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 2, Rows: map[string]int64{"finance.invoices": 3, "finance.ledger": 0, "dbo.events": 3}})
	inv, _ := db.Table("finance", "invoices")
	inv.Defaults["issued_at"] = "('2024-05-01 10:00')"
	ev, _ := db.Table("dbo", "events")
	ev.Defaults["ts"] = "('2024-05-01 10:00')"
	src := startSource(t, db)
	url, conn := freshDB(t, "migrate_literal_time")
	ctx := context.Background()
	// Every session of the migration runs in +05:30.
	if _, err := conn.Exec(ctx, "ALTER DATABASE migrate_literal_time SET TimeZone = 'Asia/Kolkata'"); err != nil {
		t.Fatal(err)
	}
	c := migrateConfig(src, url, "finance.invoices", "dbo.events")
	plan, err := Discover(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, c, plan); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, zone := range []string{"UTC", "America/Caracas"} {
		if _, err := conn.Exec(ctx, "SET TIME ZONE '"+zone+"'"); err != nil {
			t.Fatal(err)
		}
		var at time.Time
		var off int16
		if err := conn.QueryRow(ctx, "INSERT INTO finance.invoices (customer, amount) VALUES ('x', 1) RETURNING issued_at, issued_at__offset_minutes").Scan(&at, &off); err != nil {
			t.Fatal(err)
		}
		if !at.Equal(want) || off != 0 {
			t.Errorf("session %s: datetimeoffset default %v offset %d, want %v offset 0", zone, at.UTC(), off, want)
		}
		var ts string
		if err := conn.QueryRow(ctx, "INSERT INTO dbo.events (kind, rv) VALUES ('x', '\\x00') RETURNING ts::text").Scan(&ts); err != nil {
			t.Fatal(err)
		}
		if ts != "2024-05-01 10:00:00" {
			t.Errorf("session %s: datetime2 default %s, want 2024-05-01 10:00:00", zone, ts)
		}
	}
}

// keyLossy is the plan's lossy key items by object.
func keyLossy(p *Plan) map[string][]string {
	out := map[string][]string{}
	for _, it := range p.Lossy {
		if it.What == "key" {
			out[it.Object] = append(out[it.Object], it.Detail)
		}
	}
	return out
}

// SQL Server compares text ignoring trailing spaces ('a' = 'a '),
// PostgreSQL's varchar does not: with --case-insensitive none (the
// default) a varchar key column under a case-insensitive collation is
// reported once, for case and for trailing spaces together, and the
// target column does tell 'a' from 'a '. A key column under a
// case-sensitive collation keeps its type under every policy and is
// reported once for trailing spaces, however many keys use it.
func TestTrailingSpaceKeys(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"warehouse.sites": 5, "warehouse.stock": 40, "warehouse.movements": 30}})
	plan, _, conn := migrated(t, db, "migrate_trailing", nil, "warehouse.*")
	lossy := keyLossy(plan)
	for obj, typ := range map[string]string{"warehouse.sites.code": "varchar(12)", "warehouse.stock.sku": "varchar(20)"} {
		items := lossy[obj]
		if len(items) != 1 || !strings.Contains(items[0], "case-sensitive in PostgreSQL") ||
			!strings.Contains(items[0], "trailing spaces") || !strings.Contains(items[0], typ+" does not") {
			t.Errorf("%s: lossy %q, want one item on case and trailing spaces (%s)", obj, items, typ)
		}
	}
	typ := query[string](t, conn, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'warehouse.sites'::regclass AND attname = 'code'")
	if n := query[int64](t, conn, "SELECT count(DISTINCT v) FROM (VALUES (CAST('a' AS "+typ+")), (CAST('a ' AS "+typ+"))) x(v)"); n != 2 {
		t.Errorf("%s: 'a' and 'a ' are %d distinct values, want 2 (the lossy item is wrong)", typ, n)
	}

	// sites.code under a case-sensitive collation, used by two keys.
	ctx := context.Background()
	c := migrateConfig(startSource(t, db), "postgres://unused", "warehouse.*")
	src, err := c.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cat, err := catalog.Load(ctx, src, catalog.Options{Filter: c.Filter, Timeout: c.Timeout})
	if err != nil {
		t.Fatal(err)
	}
	sites := cat.Table("warehouse", "sites")
	sites.Column("code").Collation = "Latin1_General_CS_AS"
	sites.Indexes = append(sites.Indexes, catalog.Index{ID: 9, Name: "UX_sites_code", Type: catalog.IndexNonclustered, Unique: true,
		Keys: []catalog.IndexKey{{Column: "code"}}})
	describe := func(ctx context.Context, p *catalog.Projection) ([]decode.Column, error) {
		return catalog.Describe(ctx, src, p.DescribeSQL(), c.Timeout)
	}
	for _, policy := range []string{CINone, CIICU, CICitext} {
		p, err := Build(ctx, cat, describe, Options{CaseInsensitive: policy})
		if err != nil {
			t.Fatal(err)
		}
		items := keyLossy(p)["warehouse.sites.code"]
		if len(items) != 1 || !strings.Contains(items[0], "used by UQ_sites_code, UX_sites_code: SQL Server ignores trailing spaces") ||
			!strings.Contains(items[0], "varchar(12) does not") || strings.Contains(items[0], "case-insensitive") {
			t.Errorf("%s: lossy %q, want one item on trailing spaces naming both keys", policy, items)
		}
		for _, n := range p.Notes {
			if n.Object == "warehouse.sites.code" && n.What == "key" {
				t.Errorf("%s: a case-sensitive key noted as case-insensitive: %+v", policy, n)
			}
		}
		for _, s := range p.Steps {
			if s.Phase == PhaseTable && s.Object == "warehouse.sites" && !strings.Contains(s.SQL[0], "code varchar(12) NOT NULL") {
				t.Errorf("%s: sites.code is not a plain varchar(12):\n%s", policy, s.SQL[0])
			}
		}
	}
}

// A view whose UNION, EXCEPT, INTERSECT, DISTINCT, GROUP BY or ORDER BY
// works on text under a case-insensitive collation can give other rows,
// or another order, in PostgreSQL, which compares that text
// case-sensitively: the plan notes it for those views, and not for set
// operations, groups or orders on other columns, nor for UNION ALL.
func TestViewCaseNotes(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 6})
	plan, _, conn := migrated(t, db, "migrate_view_case", nil, "finance.*")
	notes := func(p *Plan, obj string) []string {
		var out []string
		for _, n := range p.Notes {
			if n.Object == obj && n.What == "view" {
				out = append(out, n.Detail)
			}
		}
		return out
	}
	has := func(got []string, want string) bool {
		for _, n := range got {
			if strings.Contains(n, want) {
				return true
			}
		}
		return false
	}
	for view, want := range map[string]string{"finance.open_or_large": "UNION compares customer case-sensitively",
		"finance.customer_totals": "GROUP BY compares customer case-sensitively", "finance.amounts": "",
		"finance.unbooked": "", "finance.booked": "", "finance.largest_invoices": ""} {
		got := notes(plan, view)
		if want == "" && len(got) > 0 || want != "" && !has(got, want) {
			t.Errorf("%s: notes %q, want %q", view, got, want)
		}
	}
	// What the note says: PostgreSQL groups 'Zed' and 'ZED' apart, where
	// SQL Server makes one group of them.
	ctx := context.Background()
	for i := range 12 {
		who := "Zed"
		if i%2 == 1 {
			who = "ZED"
		}
		if _, err := conn.Exec(ctx, "INSERT INTO finance.invoices (customer, amount) VALUES ($1, 1)", who); err != nil {
			t.Fatal(err)
		}
	}
	if n := query[int64](t, conn, "SELECT count(*) FROM finance.customer_totals WHERE lower(customer) = 'zed'"); n != 2 {
		t.Errorf("customer_totals: %d groups for Zed and ZED, want 2 (the note is wrong)", n)
	}

	// Other forms, planned only.
	cases := []struct{ def, want string }{
		{"SELECT DISTINCT customer, invoice_no FROM finance.invoices", "DISTINCT compares customer case-sensitively"},
		{"SELECT DISTINCT invoice_no, amount FROM finance.invoices", ""},
		{"SELECT customer FROM finance.invoices EXCEPT SELECT memo FROM finance.ledger", "EXCEPT compares customer case-sensitively"},
		{"SELECT invoice_no, memo FROM finance.ledger INTERSECT SELECT invoice_no, customer FROM finance.invoices", "INTERSECT compares memo case-sensitively"},
		{"SELECT customer FROM finance.invoices UNION ALL SELECT memo FROM finance.ledger", ""},
		{"SELECT TOP (3) customer AS who FROM finance.invoices ORDER BY who", "ORDER BY sorts who case-sensitively"},
		{"SELECT TOP (3) i.invoice_no FROM finance.invoices AS i ORDER BY i.customer DESC", "ORDER BY sorts i.customer case-sensitively"},
		{"SELECT TOP (3) invoice_no FROM finance.invoices ORDER BY amount", ""},
		{"SELECT status, COUNT(*) AS n FROM finance.invoices GROUP BY status", "GROUP BY compares status case-sensitively"},
		{"SELECT invoice_no, COUNT(*) AS n FROM finance.ledger GROUP BY invoice_no", ""},
	}
	defs := make([]string, len(cases))
	for i, tc := range cases {
		defs[i] = tc.def
	}
	p := planViews(t, db, defs)
	for i, tc := range cases {
		obj := fmt.Sprintf("finance.v%d", i)
		for _, it := range p.Untranslated {
			if it.Object == obj {
				t.Errorf("%s: not translated: %s", tc.def, it.Detail)
			}
		}
		got := notes(p, obj)
		if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: notes %q, want %q", tc.def, got, tc.want)
		}
	}
}

// With Options.Analyze every table is analyzed once its rows, keys and
// indexes are in (last_analyze is set only by an explicit ANALYZE, never
// by autovacuum), the plan shows the statements and the summary the steps;
// without it, none is.
func TestAnalyze(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 11, Rows: sampleRows})
	for _, on := range []bool{true, false} {
		name := "migrate_analyze_off"
		if on {
			name = "migrate_analyze"
		}
		plan, sum, conn := migrated(t, db, name, func(c *Config) { c.Options.Analyze = on }, "warehouse.*")
		var b bytes.Buffer
		if err := plan.Write(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "ANALYZE warehouse.stock"); got != on {
			t.Errorf("analyze %v: the plan shows ANALYZE warehouse.stock: %v", on, got)
		}
		steps := 0
		for _, s := range sum.Steps {
			if s.Phase == PhaseAnalyze.String() {
				steps++
				if s.Status != StepDone {
					t.Errorf("%+v", s)
				}
			}
		}
		analyzed := query[int64](t, conn, "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = 'warehouse' AND last_analyze IS NOT NULL")
		tables := query[int64](t, conn, "SELECT count(*) FROM pg_tables WHERE schemaname = 'warehouse'")
		want := int64(0)
		if on {
			want = tables
		}
		if int64(steps) != want || analyzed != want || tables < 3 {
			t.Errorf("analyze %v: %d analyze steps, %d of %d tables analyzed", on, steps, analyzed, tables)
		}
		if on {
			if n := query[int64](t, conn, "SELECT count(*) FROM pg_stats WHERE schemaname = 'warehouse' AND tablename = 'movements'"); n == 0 {
				t.Error("no statistics for warehouse.movements after ANALYZE")
			}
		}
	}
}
