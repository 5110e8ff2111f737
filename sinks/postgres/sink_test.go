package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

var (
	tiInt     = decode.TypeInfo{Type: decode.TypeIntN, Size: 4}
	tiBigInt  = decode.TypeInfo{Type: decode.TypeIntN, Size: 8}
	tiNVar    = decode.TypeInfo{Type: decode.TypeNVarChar, Size: 100}
	tiNVarMax = decode.TypeInfo{Type: decode.TypeNVarChar, Size: decode.MaxVarLen}
	tiJSON    = decode.TypeInfo{Type: decode.TypeJSON, Size: 0xFFFFFFFF}
)

func i64(v int64) sinktest.Cell  { return sinktest.Cell{Kind: 'i', I: v} }
func str(v string) sinktest.Cell { return sinktest.Cell{Kind: 's', S: v} }
func null() sinktest.Cell        { return sinktest.Cell{Kind: 'n'} }

// Exact values at the edges, read back as PostgreSQL prints them (its own
// numeric, timestamp and array output, not this package's code).
func TestEdgeValues(t *testing.T) {
	conn, url := pgConn(t)
	ctx := context.Background()
	dec := func(s string, p, sc uint8) decode.Decimal {
		d, err := decode.DecimalFromString(s, p, sc)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cases := []struct {
		name string
		ti   decode.TypeInfo
		cell sinktest.Cell
		want string
	}{
		{"d38_38_max", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 38}, sinktest.Cell{Kind: 'd', Dec: dec("0."+strings.Repeat("9", 38), 38, 38)}, "0." + strings.Repeat("9", 38)},
		{"d38_38_tiny", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 38}, sinktest.Cell{Kind: 'd', Dec: dec("-0."+strings.Repeat("0", 37)+"1", 38, 38)}, "-0." + strings.Repeat("0", 37) + "1"},
		{"d38_0_max", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 0}, sinktest.Cell{Kind: 'd', Dec: dec("-"+strings.Repeat("9", 38), 38, 0)}, "-" + strings.Repeat("9", 38)},
		{"d38_10", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 10}, sinktest.Cell{Kind: 'd', Dec: dec("1234567890123456789012345678.0000000001", 38, 10)}, "1234567890123456789012345678.0000000001"},
		{"d15_2_zero", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 15, Scale: 2}, sinktest.Cell{Kind: 'd', Dec: dec("0", 15, 2)}, "0.00"},
		{"d9_3", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 9, Scale: 3}, sinktest.Cell{Kind: 'd', Dec: dec("100000.001", 9, 3)}, "100000.001"},
		{"money_min", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 8}, sinktest.Cell{Kind: 'm', I: math.MinInt64}, "-922337203685477.5808"},
		{"money_max", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 8}, sinktest.Cell{Kind: 'm', I: math.MaxInt64}, "922337203685477.5807"},
		{"dt2_end", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}, sinktest.Cell{Kind: 'T', DT: decode.DateTime{Days: decode.DateFromCivil(9999, 12, 31), Ticks: decode.TicksPerDay - 1}}, "9999-12-31 23:59:59.999999"},
		{"dt2_start", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}, sinktest.Cell{Kind: 'T', DT: decode.DateTime{}}, "0001-01-01 00:00:00"},
		{"datetime_997", decode.TypeInfo{Type: decode.TypeDateTimeN, Size: 8}, sinktest.Cell{Kind: 'T', DT: decode.DateTime{Days: decode.DateFromCivil(9999, 12, 31), Ticks: 863999966667}}, "9999-12-31 23:59:59.997"},
		{"time7_end", decode.TypeInfo{Type: decode.TypeTimeN, Scale: 7}, sinktest.Cell{Kind: 't', I: decode.TicksPerDay - 1}, "23:59:59.999999"},
		{"dto_end", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}, sinktest.Cell{Kind: 'o', DTO: decode.DateTimeOffset{UTC: decode.DateTime{Days: decode.DateFromCivil(9999, 12, 31), Ticks: decode.TicksPerDay - 1 - 14*36000000000}, OffsetMin: 840}}, "9999-12-31 09:59:59.999999+00"},
		{"date_min", decode.TypeInfo{Type: decode.TypeDateN}, sinktest.Cell{Kind: 'D', I: 0}, "0001-01-01"},
		{"vector", decode.TypeInfo{Type: decode.TypeVector, Size: 8 + 12}, sinktest.Cell{Kind: 'v', Vec: []float32{1, -2.5, math.MaxFloat32}}, "{1,-2.5,3.4028235e+38}"},
		{"guid", decode.TypeInfo{Type: decode.TypeGUID, Size: 16}, sinktest.Cell{Kind: 'g', G: decode.GUID{0x6f, 0x96, 0x19, 0xff, 0x8b, 0x86, 0xd0, 0x11, 0xb4, 0x2d, 0x00, 0xc0, 0x4f, 0xc9, 0x64, 0xff}}, "6f9619ff-8b86-d011-b42d-00c04fc964ff"},
		{"json", tiJSON, str(`{"b":[1,2],"a":"x"}`), `{"a": "x", "b": [1, 2]}`},
		{"variant", decode.TypeInfo{Type: decode.TypeVariant, Size: 8009}, sinktest.Cell{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 10, Scale: 2}, Inner: &sinktest.Cell{Kind: 'd', Dec: dec("-12.30", 10, 2)}}, "-12.30"},
	}
	var cols []decode.Column
	var row []sinktest.Cell
	for _, c := range cases {
		cols = append(cols, col(c.name, c.ti))
		row = append(row, c.cell)
	}
	for _, parts := range []int{1, 3} {
		s := newSink(t, url, map[string]any{"table": "edges", "mode": "replace"})
		if _, err := loadCells(t, s, sinks.ExtractInfo{Name: "edges"}, cols, [][]sinktest.Cell{row}, parts); err != nil {
			t.Fatal(err)
		}
		var sel []string
		for _, c := range cases {
			sel = append(sel, pgx.Identifier{c.name}.Sanitize()+"::text")
		}
		got := make([]string, len(cases))
		ptrs := make([]any, len(cases))
		for i := range got {
			ptrs[i] = &got[i]
		}
		exec(t, conn, "SET timezone = 'UTC'")
		if err := conn.QueryRow(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM edges").Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			if got[i] != c.want {
				t.Errorf("parts %d: %s: PostgreSQL has %q, want %q", parts, c.name, got[i], c.want)
			}
		}
		var off int16
		var vt string
		if err := conn.QueryRow(ctx, "SELECT dto_end__offset_minutes, variant__type FROM edges").Scan(&off, &vt); err != nil || off != 840 || vt != "decimal(10,2)" {
			t.Errorf("companions: offset %d type %q, %v", off, vt, err)
		}
	}
}

// Numeric from the 128-bit decimal, for many values at every scale: what
// PostgreSQL prints equals decode's exact text.
func TestNumericManyValues(t *testing.T) {
	conn, url := pgConn(t)
	var cols []decode.Column
	var rows [][]sinktest.Cell
	var want [][]string
	x := uint64(0x9E3779B97F4A7C15)
	for r := 0; r < 200; r++ {
		var row []sinktest.Cell
		var w []string
		for sc := 0; sc <= 38; sc += 1 {
			if r == 0 {
				cols = append(cols, col(fmt.Sprintf("s%d", sc), decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: uint8(sc)}))
			}
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			d := decode.Decimal{Lo: x, Hi: (x >> uint(r%64)) % 0x4B3B4CA85A86C47A, Neg: x&1 == 1, Scale: uint8(sc), Precision: 38}
			switch r % 5 {
			case 1:
				d.Hi = 0
			case 2:
				d.Hi, d.Lo = 0, x%100000
			}
			if d.Hi == 0 && d.Lo == 0 {
				d.Neg = false
			}
			row = append(row, sinktest.Cell{Kind: 'd', Dec: d})
			w = append(w, string(decode.AppendDecimalText(nil, d)))
		}
		rows = append(rows, row)
		want = append(want, w)
	}
	s := newSink(t, url, map[string]any{"table": "numerics", "mode": "replace"})
	if _, err := loadCells(t, s, sinks.ExtractInfo{Name: "n"}, cols, rows, 1); err != nil {
		t.Fatal(err)
	}
	var sel []string
	for _, c := range cols {
		sel = append(sel, c.Name+"::text")
	}
	res, err := conn.Query(context.Background(), "SELECT "+strings.Join(sel, ", ")+" FROM numerics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	r := 0
	for res.Next() {
		vals, _ := res.Values()
		for k, v := range vals {
			if v != want[r][k] {
				t.Fatalf("row %d scale %d: PostgreSQL %v, want %s", r, k, v, want[r][k])
			}
		}
		r++
	}
	if r != len(rows) {
		t.Fatalf("%d rows", r)
	}
}

func nulRows() [][]sinktest.Cell {
	return [][]sinktest.Cell{
		{i64(1), str("fine")},
		{i64(2), str("a\x00b\x00")},
		{i64(3), str("ok")},
		{i64(4), str(strings.Repeat("x", 300) + "\x00")},
	}
}

// NUL in text under each policy: fail names the row and column and leaves
// nothing; reject writes the rows to the reject file beside the run
// summary and loads the rest; replace replaces the NULs.
func TestNULPolicies(t *testing.T) {
	conn, url := pgConn(t)
	cols := []decode.Column{col("id", tiInt), col("Note", tiNVarMax)}
	dir := t.TempDir()
	info := sinks.ExtractInfo{Name: "notes", Schema: "dbo", Table: "notes", RunDir: dir}

	s := newSink(t, url, map[string]any{"table": "nul_fail", "mode": "create"})
	_, err := loadCells(t, s, info, cols, nulRows(), 2)
	if err == nil || !strings.Contains(err.Error(), `row 2 (key id=2), column "Note"`) || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("fail policy: %v", err)
	}
	if n := count(t, conn, "SELECT count(*) FROM pg_class WHERE relname = 'nul_fail'"); n != 0 {
		t.Fatal("the failed load left a table behind")
	}

	s = newSink(t, url, map[string]any{"table": "nul_reject", "mode": "create", "refused_values": "reject"})
	st, err := loadCells(t, s, info, cols, nulRows(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 2 || st.Rejected != 2 || len(st.Files) != 1 || st.Files[0] != filepath.Join(dir, "notes.rejects.jsonl") {
		t.Fatalf("reject stats: %+v", st)
	}
	if n := count(t, conn, "SELECT count(*) FROM nul_reject WHERE id IN (1, 3)"); n != 2 || count(t, conn, "SELECT count(*) FROM nul_reject") != 2 {
		t.Fatal("reject: wrong rows loaded")
	}
	f, err := os.Open(st.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	var recs []rejectRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r rejectRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	f.Close()
	if len(recs) != 2 || recs[0].Row != 2 || recs[0].Key["id"] != "2" || recs[0].Column != "Note" || !strings.Contains(recs[0].Reason, "NUL") || recs[1].Row != 4 || recs[1].Key["id"] != "4" {
		t.Fatalf("reject records: %+v", recs)
	}
	if ents := sinktest.DirEntries(t, dir); len(ents) != 1 {
		t.Fatalf("files beside the summary: %v", ents)
	}

	for _, repl := range []string{"", "\uFFFD"} {
		s = newSink(t, url, map[string]any{"table": "nul_replace", "mode": "replace", "refused_values": "replace", "nul_replacement": repl})
		if st, err = loadCells(t, s, info, cols, nulRows(), 3); err != nil || st.Rows != 4 {
			t.Fatalf("replace: %+v %v", st, err)
		}
		var got string
		if err := conn.QueryRow(context.Background(), "SELECT note FROM nul_replace WHERE id = 2").Scan(&got); err != nil || got != "a"+repl+"b"+repl {
			t.Fatalf("replace %q: %q %v", repl, got, err)
		}
		if err := conn.QueryRow(context.Background(), "SELECT note FROM nul_replace WHERE id = 4").Scan(&got); err != nil || got != strings.Repeat("x", 300)+repl {
			t.Fatalf("replace %q: %q %v", repl, got, err)
		}
	}

	// A sql_variant holding nvarchar with a NUL is refused too.
	vcols := []decode.Column{col("id", tiInt), col("v", decode.TypeInfo{Type: decode.TypeVariant, Size: 8009})}
	vrows := [][]sinktest.Cell{{i64(1), {Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeNVarChar, Size: 40}, Inner: &sinktest.Cell{Kind: 's', S: "x\x00"}}}}
	s = newSink(t, url, map[string]any{"table": "variant_nul", "mode": "create"})
	if _, err := loadCells(t, s, info, vcols, vrows, 1); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("variant NUL: %v", err)
	}

	// jsonb cannot hold \u0000 (json can); an escaped backslash is no escape.
	jcols := []decode.Column{col("id", tiInt), col("doc", tiJSON)}
	jrows := [][]sinktest.Cell{{i64(1), str(`{"a":"\\u0000"}`)}, {i64(2), str(`{"a":"x\u0000y"}`)}}
	s = newSink(t, url, map[string]any{"table": "json_fail", "mode": "create"})
	if _, err := loadCells(t, s, info, jcols, jrows, 1); err == nil || !strings.Contains(err.Error(), "row 2") || !strings.Contains(err.Error(), `\u0000`) {
		t.Fatalf("jsonb \\u0000: %v", err)
	}
	s = newSink(t, url, map[string]any{"table": "json_replace", "mode": "create", "refused_values": "replace", "nul_replacement": `"?`})
	if _, err := loadCells(t, s, info, jcols, jrows, 1); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := conn.QueryRow(context.Background(), "SELECT doc->>'a' FROM json_replace WHERE id = 2").Scan(&got); err != nil || got != `x"?y` {
		t.Fatalf("jsonb replace: %q %v", got, err)
	}
}

// append, truncate, replace and create on a table that holds rows; a
// failed load (aborted mid-COPY) leaves each exactly as it was.
func TestModes(t *testing.T) {
	conn, url := pgConn(t)
	ctx := context.Background()
	cols := []decode.Column{{Name: "id", Type: tiInt}, col("v", tiNVar)}
	rows := func(from, n int) [][]sinktest.Cell {
		var out [][]sinktest.Cell
		for i := from; i < from+n; i++ {
			out = append(out, []sinktest.Cell{i64(int64(i)), str(fmt.Sprint("v", i))})
		}
		return out
	}
	info := sinks.ExtractInfo{Name: "m", Schema: "dbo", Table: "m"}
	load := func(mode string, from, n int) (sinks.Stats, error) {
		return loadCells(t, newSink(t, url, map[string]any{"table": "modes", "mode": mode, "buffer_size": "4KiB"}), info, cols, rows(from, n), 1)
	}
	// abortAfter starts a load and aborts it after n rows (the COPY has
	// sent data by then: 4 KiB buffers).
	abortAfter := func(mode string, n int) {
		s := newSink(t, url, map[string]any{"table": "modes", "mode": mode, "buffer_size": "4KiB"})
		if err := s.Open(ctx, info); err != nil {
			t.Fatal(err)
		}
		if err := s.Columns(cols, make([]decode.Mode, 2)); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows(1000, n) {
			for c := range r {
				sinktest.Drive(s, c, &r[c], 1)
			}
			if err := s.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		if s.sent == 0 {
			t.Fatalf("nothing was sent before the abort (%s: buffer %d/%d, rows %d)", mode, len(s.b), cap(s.b), s.rows)
		}
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
	}
	state := func() (int64, int64) {
		return count(t, conn, "SELECT count(*) FROM modes"), count(t, conn, "SELECT coalesce(sum(id), 0) FROM modes")
	}
	if _, err := load("create", 1, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := load("create", 1, 10); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("create on an existing table: %v", err)
	}
	exec(t, conn, "CREATE INDEX modes_v ON modes (v)")
	if _, err := load("append", 11, 5); err != nil {
		t.Fatal(err)
	}
	if n, sum := state(); n != 15 || sum != 120 {
		t.Fatalf("append: %d rows, sum %d", n, sum)
	}
	for _, mode := range []string{"append", "truncate", "replace"} {
		abortAfter(mode, 2000)
		if n, sum := state(); n != 15 || sum != 120 {
			t.Fatalf("aborted %s changed the table: %d rows, sum %d", mode, n, sum)
		}
	}
	if _, err := load("truncate", 100, 3); err != nil {
		t.Fatal(err)
	}
	if n, sum := state(); n != 3 || sum != 303 || count(t, conn, "SELECT count(*) FROM pg_indexes WHERE indexname = 'modes_v'") != 1 {
		t.Fatalf("truncate: %d rows, sum %d (or the index is gone)", n, sum)
	}
	exec(t, conn, "CREATE VIEW modes_view AS SELECT id FROM modes")
	if _, err := load("replace", 1, 2); err == nil || !strings.Contains(err.Error(), "modes_view") {
		t.Fatalf("replace with a dependent view: %v", err)
	}
	exec(t, conn, "DROP VIEW modes_view")
	if _, err := load("replace", 7, 2); err != nil {
		t.Fatal(err)
	}
	if n, sum := state(); n != 2 || sum != 15 || count(t, conn, "SELECT count(*) FROM pg_indexes WHERE indexname = 'modes_v'") != 0 {
		t.Fatalf("replace: %d rows, sum %d", n, sum)
	}
	var ddl string
	if err := conn.QueryRow(ctx, "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || CASE WHEN attnotnull THEN ' not null' ELSE '' END, ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'modes'::regclass AND attnum > 0").Scan(&ddl); err != nil || ddl != "id integer not null, v character varying(50)" {
		t.Fatalf("replaced table: %q %v", ddl, err)
	}
	exec(t, conn, "DROP TABLE modes")
	abortAfter("create", 2000)
	if n := count(t, conn, "SELECT count(*) FROM pg_class WHERE relname LIKE 'modes%'"); n != 0 {
		t.Fatal("an aborted create left a table")
	}
}

// Identifiers: lower case by default, quoted when needed, preserved on
// request; collisions are errors before anything is written; templates,
// renames and type overrides.
func TestIdentifiersAndRules(t *testing.T) {
	conn, url := pgConn(t)
	ctx := context.Background()
	info := sinks.ExtractInfo{Name: "Orders", Schema: "Sales", Table: "Orders"}
	cols := []decode.Column{col("OrderID", tiInt), col("Select", tiNVar), col("two words", tiNVar), col("Amount", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 10, Scale: 2})}
	row := [][]sinktest.Cell{{i64(7), str("s"), str("w"), {Kind: 'd', Dec: decode.Decimal{Lo: 1234, Scale: 2, Precision: 10}}}}
	s := newSink(t, url, map[string]any{"schema": "{schema}_x", "table": "t_{table}", "columns": []any{
		map[string]any{"source": "orderid", "name": "order_id", "type": "bigint"},
		map[string]any{"source": "Amount", "type": "text"},
	}})
	if _, err := loadCells(t, s, info, cols, row, 1); err != nil {
		t.Fatal(err)
	}
	if got := s.Target().CreateSQL(); got != `CREATE TABLE sales_x.t_orders (order_id bigint, "select" varchar(50), "two words" varchar(50), amount text)` {
		t.Errorf("DDL: %s", got)
	}
	var id int64
	var sel, amount string
	if err := conn.QueryRow(ctx, `SELECT order_id, "select", amount FROM sales_x.t_orders`).Scan(&id, &sel, &amount); err != nil || id != 7 || sel != "s" || amount != "12.34" {
		t.Fatalf("%d %q %q %v", id, sel, amount, err)
	}

	s = newSink(t, url, map[string]any{"identifiers": "preserve", "schema": "{schema}", "table": "{table}"})
	if _, err := loadCells(t, s, info, cols, row, 1); err != nil {
		t.Fatal(err)
	}
	if got := s.Target().CreateSQL(); got != `CREATE TABLE "Sales"."Orders" ("OrderID" integer, "Select" varchar(50), "two words" varchar(50), "Amount" numeric(10,2))` {
		t.Errorf("preserve DDL: %s", got)
	}

	for _, bad := range []struct {
		cols  []decode.Column
		opts  map[string]any
		wants string
	}{
		{[]decode.Column{col("ID", tiInt), col("id", tiInt)}, nil, `"id" (from source column "ID") and "id" (from source column "id")`},
		{[]decode.Column{col("a", tiInt), col("b", tiInt)}, map[string]any{"columns": []any{map[string]any{"source": "b", "name": "A"}}}, `would both be named "a"`},
		{[]decode.Column{col("t", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 3}), col("t__offset_minutes", tiInt)}, nil, "the offset of source column"},
		{[]decode.Column{col(strings.Repeat("x", 70), tiInt), col(strings.Repeat("x", 64), tiInt)}, nil, "would both be named"},
		{[]decode.Column{col("a", tiInt)}, map[string]any{"columns": []any{map[string]any{"source": "nope", "name": "x"}}}, `no source column "nope"`},
		{[]decode.Column{col("a", tiNVar)}, map[string]any{"columns": []any{map[string]any{"source": "a", "type": "uuid"}}}, "cannot be loaded into uuid"},
	} {
		o := map[string]any{"table": "collide", "mode": "create"}
		for k, v := range bad.opts {
			o[k] = v
		}
		s := newSink(t, url, o)
		_, err := loadCells(t, s, info, bad.cols, nil, 1)
		if err == nil || !strings.Contains(err.Error(), bad.wants) {
			t.Errorf("%v: %v, want %q", bad.cols[0].Name, err, bad.wants)
		}
	}
	if n := count(t, conn, "SELECT count(*) FROM pg_class WHERE relname = 'collide'"); n != 0 {
		t.Fatal("a rejected mapping created a table")
	}
	for name, want := range map[string]string{"plain": "plain", "Mixed": `"Mixed"`, "user": `"user"`, "a b": `"a b"`, `q"t`: `"q""t"`, "1st": `"1st"`, "_x$1": "_x$1"} {
		if got := QuoteIdent(name); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", name, got, want)
		}
	}
}

// The client-side quoting agrees with PostgreSQL's quote_ident for every
// keyword it knows.
func TestQuoteIdentMatchesServer(t *testing.T) {
	conn, _ := pgConn(t)
	rows, err := conn.Query(context.Background(), "SELECT word, quote_ident(word) FROM pg_get_keywords()")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var w, q string
		if err := rows.Scan(&w, &q); err != nil {
			t.Fatal(err)
		}
		if got := QuoteIdent(w); got != q {
			t.Errorf("QuoteIdent(%q) = %s, PostgreSQL %s", w, got, q)
		}
		n++
	}
	if n < 400 {
		t.Fatalf("%d keywords", n)
	}
}

// Appending into a table made by hand: wider types are taken as they are,
// narrower ones checked per value (refused_values applies); missing or
// incompatible columns are errors before anything is written.
func TestAppendExistingTable(t *testing.T) {
	conn, url := pgConn(t)
	ctx := context.Background()
	exec(t, conn, "CREATE TABLE handmade (id bigint PRIMARY KEY, n smallint, name varchar(5), extra text DEFAULT 'd', at timestamptz)")
	cols := []decode.Column{col("id", tiInt), col("n", tiBigInt), col("name", tiNVar), col("at", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 3})}
	dt := decode.DateTime{Days: decode.DateFromCivil(2024, 5, 6), Ticks: 123}
	rows := [][]sinktest.Cell{
		{i64(1), i64(5), str("abc"), {Kind: 'T', DT: dt}},
		{i64(2), i64(70000), str("abc"), null()},
		{i64(3), i64(1), str("abcdef"), null()},
		{i64(4), i64(1), str("abc   "), null()},
		{i64(5), i64(-32768), str("日本語テキ"), null()},
	}
	dir := t.TempDir()
	s := newSink(t, url, map[string]any{"table": "handmade", "refused_values": "reject", "reject_file": filepath.Join(dir, "r.jsonl")})
	st, err := loadCells(t, s, sinks.ExtractInfo{Name: "h"}, cols, rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 3 || st.Rejected != 2 {
		t.Fatalf("%+v", st)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "r.jsonl"))
	if !strings.Contains(string(b), `"row":2`) || !strings.Contains(string(b), "outside the range") || !strings.Contains(string(b), `"row":3`) || !strings.Contains(string(b), "do not fit") {
		t.Errorf("rejects:\n%s", b)
	}
	var extra string
	if err := conn.QueryRow(ctx, "SELECT extra FROM handmade WHERE id = 1").Scan(&extra); err != nil || extra != "d" {
		t.Fatalf("default: %q %v", extra, err)
	}
	for _, c := range []struct{ ddl, want string }{
		{"CREATE TABLE h2 (id integer, n smallint, name text)", `no column at`},
		{"CREATE TABLE h2 (id integer, n smallint, name text, at uuid)", "cannot be loaded into uuid"},
		{"CREATE TABLE h2 (id integer, n smallint, name text, at timestamp, must text NOT NULL)", `column must is NOT NULL without a default`},
	} {
		exec(t, conn, "DROP TABLE IF EXISTS h2")
		exec(t, conn, c.ddl)
		s := newSink(t, url, map[string]any{"table": "h2"})
		if _, err := loadCells(t, s, sinks.ExtractInfo{Name: "h"}, cols, rows[:1], 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.ddl, err, c.want)
		}
		if n := count(t, conn, "SELECT count(*) FROM h2"); n != 0 {
			t.Errorf("%s: rows written", c.ddl)
		}
	}
}

// Connecting: an unreachable server and a refused login are ConnectErrors
// that never show the password; the password comes from an environment
// variable or a file.
func TestConnectErrors(t *testing.T) {
	conn, url := pgConn(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	open := func(o map[string]any) error {
		o["table"] = "x"
		c, err := ParseConfig(o)
		if err != nil {
			return err
		}
		s, _ := New(c)
		err = s.Open(ctx, sinks.ExtractInfo{Name: "x"})
		_ = s.Abort(ctx)
		return err
	}
	const pw = "s3cret-Passw0rd"
	for _, c := range []struct {
		name string
		o    map[string]any
		want string
	}{
		{"unreachable", map[string]any{"connection": "postgres://u:" + pw + "@" + dead + "/db?sslmode=disable&connect_timeout=5"}, dead},
		{"unknown role", map[string]any{"connection": strings.Replace(url, "postgres@", "nobody:"+pw+"@", 1)}, "refused the login"},
		{"keyword form", map[string]any{"connection": "host=127.0.0.1 port=" + strings.Split(dead, ":")[1] + " user=u password=" + pw + " sslmode=disable connect_timeout=5"}, dead},
	} {
		err := open(c.o)
		var ce *sinks.ConnectError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (want a ConnectError mentioning %q)", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the password was printed: %v", c.name, err)
		}
	}
	if _, err := ParseConfig(map[string]any{"connection": "postgres://u:" + pw + "@host:notaport/db"}); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("bad URL: %v", err)
	}

	// A role that needs its password (scram), and pg_hba asking for it.
	exec(t, conn, "SET password_encryption = 'scram-sha-256'")
	exec(t, conn, "CREATE ROLE pwuser LOGIN SUPERUSER PASSWORD '"+pw+"'")
	var hba string
	if err := conn.QueryRow(ctx, "SHOW hba_file").Scan(&hba); err != nil {
		t.Fatal(err)
	}
	rules := "local all all trust\nhost all pwuser 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n"
	var lo uint32
	if err := conn.QueryRow(ctx, "SELECT lo_from_bytea(0, "+quoteLit(rules)+"::bytea)").Scan(&lo); err != nil {
		t.Fatal(err)
	}
	exec(t, conn, fmt.Sprintf("SELECT lo_export(%d, %s)", lo, quoteLit(hba)))
	exec(t, conn, "SELECT pg_reload_conf()")
	pwURL := strings.Replace(url, "postgres@", "pwuser@", 1)
	if err := open(map[string]any{"connection": pwURL}); err == nil {
		t.Fatal("no password: login accepted")
	}
	t.Setenv("TEST_PG_PW", pw)
	if err := open(map[string]any{"connection": pwURL, "password_env": "TEST_PG_PW"}); err != nil {
		t.Fatalf("password_env: %v", err)
	}
	file := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(file, []byte(pw+"\n"), 0o600)
	if err := open(map[string]any{"connection": pwURL, "password_file": file}); err != nil {
		t.Fatalf("password_file: %v", err)
	}
	os.WriteFile(file, []byte("wrong\n"), 0o600)
	err := open(map[string]any{"connection": pwURL, "password_file": file})
	var ce *sinks.ConnectError
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v", err)
	}
}

func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Zero allocations per row in steady state, for every shape of value,
// through the real decoder (rows of type_matrix, poc48, lineitem,
// temporal) into the sink and on to PostgreSQL.
func TestNoAllocsPerRow(t *testing.T) {
	_, url := pgConn(t)
	for _, name := range []string{"poc48", "lineitem", "temporal", "odbc5", "type_matrix"} {
		t.Run(name, func(t *testing.T) {
			tb := sampleTable(t, name, 1<<20)
			s := newSink(t, url, map[string]any{"table": "allocs_" + name, "mode": "replace"})
			ctx := context.Background()
			if err := s.Open(ctx, sinks.ExtractInfo{Name: name}); err != nil {
				t.Fatal(err)
			}
			st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20})
			_ = st.SetSink(s)
			sinktest.Feed(t, st, decode.AppendColMetadata(nil, tb.Columns))
			block := int64(512)
			if name == "type_matrix" {
				block = 40
			}
			buf := tb.AppendRows(nil, 0, block, false)
			for i := 0; i < 20; i++ { // warm up: buffers grown, variant names cached
				sinktest.Feed(t, st, buf)
			}
			allocs := testing.AllocsPerRun(20, func() { sinktest.Feed(t, st, buf) })
			if allocs != 0 {
				t.Errorf("%s: %.2f allocations per %d rows", name, allocs, block)
			}
			if _, err := s.Publish(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A table the load's transaction created or truncated gets its rows
// frozen (every page all-frozen in the visibility map at once); rows
// appended to an existing table, or loaded with freeze off, do not; a
// partitioned table (which refuses COPY FREEZE) still loads.
func TestFreeze(t *testing.T) {
	conn, url := pgConn(t)
	exec(t, conn, "CREATE EXTENSION IF NOT EXISTS pg_visibility")
	cols := []decode.Column{{Name: "id", Type: tiInt}, col("v", tiNVar)}
	var rows [][]sinktest.Cell
	for i := range 5000 {
		rows = append(rows, []sinktest.Cell{i64(int64(i)), str(fmt.Sprint("value ", i))})
	}
	info := sinks.ExtractInfo{Name: "f", Schema: "dbo", Table: "f"}
	// frozen is the share of the table's pages that are all-frozen.
	frozen := func(table string) float64 {
		t.Helper()
		var pages, all int64
		if err := conn.QueryRow(context.Background(), "SELECT pg_relation_size($1::regclass) / current_setting('block_size')::int, (SELECT all_frozen FROM pg_visibility_map_summary($1::regclass))", table).Scan(&pages, &all); err != nil {
			t.Fatal(err)
		}
		if pages < 10 {
			t.Fatalf("%s has %d pages: too few for the test", table, pages)
		}
		return float64(all) / float64(pages)
	}
	for _, c := range []struct {
		mode   string
		freeze bool
		setup  string
		want   bool
	}{
		{"create", true, "", true},
		{"append", true, "", true}, // creates the table: fresh
		{"truncate", true, "CREATE TABLE freeze_t (id int, v varchar(50)); INSERT INTO freeze_t VALUES (1, 'old')", true},
		{"replace", true, "CREATE TABLE freeze_t (id int, v varchar(50))", true},
		{"append", true, "CREATE TABLE freeze_t (id int, v varchar(50))", false},
		{"create", false, "", false},
		{"truncate", false, "CREATE TABLE freeze_t (id int, v varchar(50))", false},
	} {
		exec(t, conn, "DROP TABLE IF EXISTS freeze_t")
		if c.setup != "" {
			exec(t, conn, c.setup)
		}
		s := newSink(t, url, map[string]any{"table": "freeze_t", "mode": c.mode, "freeze": c.freeze})
		if _, err := loadCells(t, s, info, cols, rows, 1); err != nil {
			t.Fatalf("%s freeze=%v: %v", c.mode, c.freeze, err)
		}
		if n := count(t, conn, "SELECT count(*) FROM freeze_t"); n != int64(len(rows)) {
			t.Fatalf("%s freeze=%v: %d rows", c.mode, c.freeze, n)
		}
		got := frozen("freeze_t")
		if c.want && got != 1 || !c.want && got != 0 {
			t.Errorf("%s freeze=%v after %q: %.2f of the pages all-frozen", c.mode, c.freeze, c.setup, got)
		}
	}
	exec(t, conn, "DROP TABLE IF EXISTS freeze_t")
	exec(t, conn, "CREATE TABLE freeze_t (id int, v varchar(50)) PARTITION BY RANGE (id); CREATE TABLE freeze_t_0 PARTITION OF freeze_t FOR VALUES FROM (0) TO (100000)")
	if _, err := loadCells(t, newSink(t, url, map[string]any{"table": "freeze_t", "mode": "truncate"}), info, cols, rows, 1); err != nil {
		t.Fatalf("truncate into a partitioned table: %v", err)
	}
	if n := count(t, conn, "SELECT count(*) FROM freeze_t_0"); n != int64(len(rows)) {
		t.Fatalf("partitioned: %d rows", n)
	}
	exec(t, conn, "DROP TABLE freeze_t")
}
