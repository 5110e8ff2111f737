package migrate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/partition"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Tables clustered on a datetime2(7), a uniqueidentifier and a varchar
// key split into ranges by engine/partition's planner: every row loaded
// exactly once, each range verified by checksum against its PostgreSQL
// predicate (so a predicate that selects other rows than the T-SQL one
// fails the run). The varchar key (dbo.codes) holds every value in
// spellings its case-insensitive collation holds equal, and one value in
// an eighth of the rows; its ranges are cut at values SQL Server sorted,
// and verified on the rows each range's transaction inserted. A run whose every range fails leaves the table empty; then
// PostgreSQL refuses one row: its range fails, the ranges beside it
// commit; and --resume loads exactly the rows not yet in.
func TestSplitNonIntegerKeys(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 17, Rows: map[string]int64{"dbo.readings": 2600, "dbo.devices": 1900, "dbo.codes": 2400}})
	ctx := context.Background()
	for _, tc := range []struct {
		table, key string
		refuse     func(row []any) string // a predicate on NEW holding for that row alone
		parts      int
	}{
		{"readings", "reading_at", func(row []any) string {
			dt := row[0].(decode.DateTime)
			dt.Ticks -= dt.Ticks % (decode.TicksPerDay / 86400)
			return fmt.Sprintf("date_trunc('second', NEW.reading_at) = '%s'", decode.AppendDateTimeText(nil, dt, 0)) // rows are 3.7 s apart
		}, 6},
		{"devices", "device_id", func(row []any) string { return fmt.Sprintf("NEW.name = '%s'", row[1]) }, 4},
		{"codes", "id", func(row []any) string { return fmt.Sprintf("NEW.id = %d", row[0]) }, 5},
	} {
		t.Run(tc.table, func(t *testing.T) {
			src, _ := db.Table("dbo", tc.table)
			url, conn := freshDB(t, "migrate_split_"+tc.table)
			source := startSource(t, db)
			// The plan is discovered on src, and loads from load.
			run := func(src, load session.Config, resume bool) (*Plan, *Summary, error) {
				t.Helper()
				config := func(s session.Config) *Config {
					c := migrateConfig(s, url, "dbo."+tc.table)
					c.Verify, c.SplitRows, c.Resume = VerifyChecksum, 500, resume
					return c
				}
				plan, err := Discover(ctx, config(src))
				if err != nil {
					t.Fatal(err)
				}
				sum, err := Run(ctx, config(load), plan)
				return plan, sum, err
			}
			// First the server drops every connection reading the table
			// after 100 rows: every range fails, the table is there, empty.
			faulty := startFaulty(t, db, tdsserver.Faults{Table: "dbo." + tc.table, CloseAfterRows: 100})
			if _, _, err := run(source, faulty, false); err == nil || !strings.Contains(err.Error(), "key range") {
				t.Fatalf("first run: %v, want failed key ranges", err)
			}
			if n := query[int64](t, conn, "SELECT count(*) FROM dbo."+tc.table); n != 0 {
				t.Fatalf("after the first run: %d rows", n)
			}
			// Then PostgreSQL refuses one row: its range fails alone.
			refused := tc.refuse(src.Row(1234, nil))
			for _, q := range []string{
				`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF ` + refused + ` THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`,
				`CREATE TRIGGER refuse BEFORE INSERT ON dbo.` + tc.table + ` FOR EACH ROW EXECUTE FUNCTION refuse()`,
			} {
				if _, err := conn.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			_, _, err2 := run(source, source, true)
			if err2 == nil || !strings.Contains(err2.Error(), "key range") || !strings.Contains(err2.Error(), "refused") {
				t.Fatalf("second run: %v, want one range refused", err2)
			}
			have := query[int64](t, conn, "SELECT count(*) FROM dbo."+tc.table)
			// The ranges running beside the refused one commit; those not
			// started yet are not run once their table has failed.
			if have == 0 || have > src.Rows-src.Rows/int64(tc.parts)+src.Rows/20 {
				t.Fatalf("after the refused range: %d of %d rows, want some ranges in, and not the refused one (%v)", have, src.Rows, err2)
			}
			if _, err := conn.Exec(ctx, "DROP TRIGGER refuse ON dbo."+tc.table); err != nil {
				t.Fatal(err)
			}
			plan, sum, err := run(source, source, true)
			if err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			if ts := sum.Tables[0]; ts.Rows != src.Rows || ts.SourceRows != src.Rows-have || ts.Verified != VerifyChecksum {
				t.Errorf("resumed run: %+v, want the %d rows of the refused range loaded and verified", ts, src.Rows-have)
			}
			checkOnce(t, conn, "dbo."+tc.table, tc.key, src.Rows)
			var preds []string
			for _, s := range plan.Steps {
				if s.Phase == PhaseData {
					if s.Range == nil {
						t.Fatalf("%s: a data step without a key range", s.Object)
					}
					preds = append(preds, s.Range.String()+" | "+s.PGWhere)
				}
			}
			if len(preds) != tc.parts {
				t.Errorf("%d ranges, want %d:\n%s", len(preds), tc.parts, strings.Join(preds, "\n"))
			}
			t.Logf("ranges:\n%s", strings.Join(preds, "\n"))
		})
	}
}

// checkOnce checks that table holds want rows with want distinct keys.
func checkOnce(t *testing.T, conn *pgx.Conn, table, key string, want int64) {
	t.Helper()
	n := query[int64](t, conn, "SELECT count(*) FROM "+table)
	d := query[int64](t, conn, "SELECT count(DISTINCT "+key+") FROM "+table)
	if n != want || d != want {
		t.Errorf("%s: %d rows, %d distinct keys, want %d", table, n, d, want)
	}
}

// The PostgreSQL expression that orders uuids as SQL Server orders
// uniqueidentifier values, against decode.CompareGUID on GUIDs that differ
// in every byte group.
func TestPGGUIDOrder(t *testing.T) {
	_, conn := freshDB(t, "migrate_guid_order")
	var gs []decode.GUID
	for i := range 16 {
		for _, v := range []byte{0x00, 0x7f, 0x80, 0xff} {
			var g decode.GUID
			for k := range g {
				g[k] = byte(k*37 + int(v))
			}
			g[i] = v
			gs = append(gs, g)
		}
	}
	var vals []string
	for _, g := range gs {
		vals = append(vals, "('"+g.String()+"'::uuid)")
	}
	rows, err := conn.Query(context.Background(), "SELECT u::text FROM (VALUES "+strings.Join(vals, ", ")+") v(u) ORDER BY "+pgGUIDOrder("u"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(gs, func(i, j int) bool { return decode.CompareGUID(gs[i], gs[j]) < 0 })
	for i, g := range gs {
		if i >= len(got) || !strings.EqualFold(got[i], g.String()) {
			t.Fatalf("position %d: PostgreSQL %v, SQL Server order %s", i, got, g)
		}
	}
}

// Date/time bounds are cut to whole seconds, and bounds that then
// coincide are one: a datetime2 value that PostgreSQL keeps to the
// microsecond stays on its side of every bound.
func TestWholeSecondBounds(t *testing.T) {
	col := &catalog.Column{Name: "at", BaseType: "datetime2", Scale: 7}
	sec := int64(decode.TicksPerDay / 86400)
	b := func(ticks int64) partition.Bound { return partition.Bound{Type: "datetime2(7)", Int: ticks} }
	in := partition.Ranges(col, []partition.Bound{b(10*sec + 5), b(10*sec + 9_999_999), b(11*sec + 1), b(12 * sec)})
	var got []int64
	for _, p := range wholeSeconds(col, in) {
		if p.Hi != nil {
			got = append(got, p.Hi.Int/sec)
		}
		if p.Lo != nil && p.Lo.Int%sec != 0 {
			t.Errorf("bound %d is not a whole second", p.Lo.Int)
		}
	}
	if fmt.Sprint(got) != "[10 11 12]" {
		t.Errorf("upper bounds %v seconds, want [10 11 12]", got)
	}
}

// maintenance_work_mem is a PostgreSQL size or "server", and only a size
// sets it.
func TestMaintenanceWorkMem(t *testing.T) {
	for m, want := range map[string]string{"": "[]", "server": "[]", "1GB": "[SET maintenance_work_mem = '1GB']", "lots": "invalid", "1GB'; DROP": "invalid"} {
		c := &Config{Target: postgres.ConnConfig{Connection: "postgres://u@127.0.0.1/x"}, MaintenanceWorkMem: m}
		got := fmt.Sprint(c.buildSettings())
		if err := c.Validate(); err != nil {
			got = "invalid"
		}
		if got != want {
			t.Errorf("maintenance_work_mem %q: %s, want %s", m, got, want)
		}
	}
}

// A table above SplitRows clustered on a decimal(12,0) identity, which
// migrates as a bigint identity read as CAST(... AS bigint): its values
// are exact integers, so it splits as an integer key, cut evenly over
// [MIN, MAX]. The T-SQL predicates compare the column itself with bigint
// bounds (SQL Server converts the bound to decimal, not the column, so it
// seeks the clustered index), never the CAST. Every row arrives once with
// its key, each range verifies by checksum against its PostgreSQL
// predicate, and the bigint identity goes on from the source's next value.
func TestSplitDecimalIdentityKey(t *testing.T) {
	const rows = 900
	db := sampledb.New(sampledb.Config{Seed: 23, Rows: map[string]int64{"finance.invoices": rows, "finance.ledger": 300}})
	plan, sum, conn := migrated(t, db, "migrate_split_decimal", func(c *Config) { c.Verify, c.SplitRows = VerifyChecksum, 200 },
		"finance.invoices", "finance.ledger")
	ctx := context.Background()
	notes := map[string][]string{}
	for _, it := range plan.Notes {
		if it.What == "table" {
			notes[it.Object] = append(notes[it.Object], it.Detail)
		}
	}
	if n := notes["finance.invoices"]; len(n) != 1 || !strings.Contains(n[0], fmt.Sprintf("about %d rows: loaded as 5 ranges of invoice_no (decimal(12,0))", rows)) {
		t.Errorf("invoices notes %q, want one saying it loads as 5 ranges of invoice_no", n)
	}
	// The ledger's numeric(20,0) key does not fit a bigint: it is cut at
	// sampled values, numeric(20,0) bounds, compared as numeric in
	// PostgreSQL.
	if n := notes["finance.ledger"]; len(n) != 1 || !strings.Contains(n[0], "about 300 rows: loaded as 2 ranges of entry_no (numeric(20,0))") {
		t.Errorf("ledger notes %q, want one saying it loads as 2 ranges of entry_no", n)
	}
	var data []Step
	for _, s := range plan.Steps {
		if s.Phase == PhaseData && s.Table == "finance.ledger" {
			if s.Range == nil || (s.Range.Lo == nil) == (s.Range.Hi == nil) || !strings.HasPrefix(s.PGWhere, "entry_no ") {
				t.Fatalf("%s: %+v | %s, want half the ledger", s.Object, s.Range, s.PGWhere)
			}
			for _, b := range []*partition.Bound{s.Range.Lo, s.Range.Hi} {
				if b != nil && (b.Type != "numeric(20,0)" || b.Decimal == nil) {
					t.Errorf("%s: bound %+v, want numeric(20,0)", s.Object, b)
				}
			}
			t.Logf("%s | %s", s.Range, s.PGWhere)
		}
		if s.Phase == PhaseData && s.Table == "finance.invoices" {
			data = append(data, s)
		}
	}
	if len(data) != 5 || plan.Tables[0].Parts != 5 || plan.Tables[1].Parts != 2 {
		t.Fatalf("%d data steps (parts %d), want 5 key ranges", len(data), plan.Tables[0].Parts)
	}
	for i, s := range data {
		if s.Range == nil {
			t.Fatalf("%s: a data step without a key range", s.Object)
		}
		for _, b := range []*partition.Bound{s.Range.Lo, s.Range.Hi} {
			if b != nil && b.Type != "bigint" {
				t.Errorf("%s: a %s bound, want bigint", s.Object, b.Type)
			}
		}
		want := "[invoice_no] >= @tdsx_lo AND [invoice_no] < @tdsx_hi"
		switch i {
		case 0:
			want = "[invoice_no] < @tdsx_hi"
		case len(data) - 1:
			want = "[invoice_no] >= @tdsx_lo"
		}
		if s.Range.Where != want || strings.Contains(s.PGWhere, "CAST") || !strings.HasPrefix(s.PGWhere, "invoice_no ") {
			t.Errorf("%s: %q | %q, want %q on the column itself", s.Object, s.Range.Where, s.PGWhere, want)
		}
		t.Logf("%s | %s", s.Range, s.PGWhere)
	}
	var ts *TableSummary
	for i := range sum.Tables {
		if sum.Tables[i].Source == "finance.invoices" {
			ts = &sum.Tables[i]
		}
	}
	if len(sum.Tables) != 2 || ts == nil || ts.Rows != rows || ts.Verified != VerifyChecksum {
		t.Fatalf("summary %+v", sum.Tables)
	}
	var loaded int64
	for _, r := range ts.Ranges {
		if r.Rows == 0 || r.Rows > rows/2 {
			t.Errorf("range %+v: want a share of the rows", r)
		}
		loaded += r.Rows
	}
	if len(ts.Ranges) != 5 || loaded != rows {
		t.Errorf("ranges %+v, want 5 loading %d rows in all", ts.Ranges, rows)
	}
	checkOnce(t, conn, "finance.invoices", "invoice_no", rows)
	checkOnce(t, conn, "finance.ledger", "entry_no", 300)
	inv, _ := db.Table("finance", "invoices")
	seed, incr, last, ok := inv.IdentityValues()
	if !ok || seed != 5000 || incr != 5 {
		t.Fatalf("source identity: seed %d, increment %d (%v)", seed, incr, ok)
	}
	// The keys are the source's: seed, seed+incr, ... for every row.
	lo, hi := query[int64](t, conn, "SELECT min(invoice_no) FROM finance.invoices"), query[int64](t, conn, "SELECT max(invoice_no) FROM finance.invoices")
	if total := query[int64](t, conn, "SELECT sum(invoice_no)::bigint FROM finance.invoices"); lo != seed || hi != seed+incr*(rows-1) || total != rows*seed+incr*rows*(rows-1)/2 {
		t.Errorf("keys: min %d, max %d, sum %d", lo, hi, total)
	}
	if got := query[string](t, conn, "SELECT data_type FROM information_schema.columns WHERE table_schema = 'finance' AND table_name = 'invoices' AND column_name = 'invoice_no'"); got != "bigint" {
		t.Errorf("invoice_no is %s, want bigint", got)
	}
	var next int64
	if err := conn.QueryRow(ctx, "INSERT INTO finance.invoices (customer, amount, status, issued_at, issued_at__offset_minutes) VALUES ('x', 1, 'open', now(), 0) RETURNING invoice_no").Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next != last+incr || last <= hi {
		t.Errorf("next invoice_no %d, the source's last is %d and next %d", next, last, last+incr)
	}
}
