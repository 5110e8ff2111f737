package sampledb

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// TestWarehouseInvariants checks that the warehouse rows satisfy what the
// catalog declares about them: keys unique, foreign keys resolved, CHECK
// constraints true, computed columns equal to their definitions, the
// sequence and the identity consistent with the rows, and the view equal
// to its definition over the base table.
func TestWarehouseInvariants(t *testing.T) {
	db := New(Config{Seed: 3, Rows: map[string]int64{"warehouse.sites": 7, "warehouse.stock": 300, "warehouse.movements": 900}})
	tab := func(n string) *Table {
		tb, ok := db.Table("warehouse", n)
		if !ok {
			t.Fatalf("no warehouse.%s", n)
		}
		return tb
	}
	sites, stock, moves, low := tab("sites"), tab("stock"), tab("movements"), tab("low_stock")
	if low.View == "" || stock.View != "" {
		t.Fatalf("low_stock must be a view, stock a table")
	}
	var row []any

	// sites: identity 100, 110, ...; last value three steps past the last row.
	seed, incr, last, ok := sites.IdentityValues()
	if seed != 100 || incr != 10 || !ok || last != 100+10*(sites.Rows-1)+30 {
		t.Fatalf("sites identity seed %d incr %d last %d (%v)", seed, incr, last, ok)
	}
	codeRE := regexp.MustCompile(`^[A-Za-z]{3}-[0-9]{3}$`) // CK_sites_code under a case-insensitive collation
	codes, siteIDs := map[string]bool{}, map[int64]bool{}
	for i := range sites.Rows {
		row = sites.Row(i, row)
		id, code := row[0].(int64), row[1].(string)
		if id != 100+10*i || id > last {
			t.Fatalf("site row %d id %d", i, id)
		}
		if !codeRE.MatchString(code) || codes[strings.ToLower(code)] {
			t.Fatalf("site code %q: not matching CK_sites_code or not unique case-insensitively", code)
		}
		codes[strings.ToLower(code)], siteIDs[id] = true, true
	}

	// stock: PK (site_id, sku) ascending in row order, FK to sites, checks, computed columns.
	type sk struct {
		site int64
		sku  string
	}
	stockKeys := map[sk]bool{}
	var prev sk
	var wantLow [][]any
	for i := range stock.Rows {
		row = stock.Row(i, row)
		k := sk{row[1].(int64), row[2].(string)}
		if i > 0 && (k.site < prev.site || k.site == prev.site && k.sku <= prev.sku) {
			t.Fatalf("stock row %d key %v not after %v", i, k, prev)
		}
		prev = k
		if !siteIDs[k.site] {
			t.Fatalf("stock row %d: site %d does not exist (FK_stock_sites)", i, k.site)
		}
		stockKeys[k] = true
		q, lvl := row[3].(int64), row[4].(int64)
		cost, value := row[5].(decode.Decimal), row[6].(decode.Decimal)
		if q < 0 || lvl < 0 || cost.Neg {
			t.Fatalf("stock row %d breaks a CHECK: %v", i, row)
		}
		if value.Lo != uint64(q)*cost.Lo || value.Scale != 2 || value.Precision != 21 {
			t.Fatalf("stock row %d: stock_value %v is not quantity*unit_cost (%d * %v)", i, value, q, cost)
		}
		if want := q < lvl; (row[7].(int64) == 1) != want {
			t.Fatalf("stock row %d: needs_reorder %v for quantity %d, level %d", i, row[7], q, lvl)
		}
		if q < lvl {
			wantLow = append(wantLow, []any{k.site, k.sku, q, lvl})
		}
	}
	if len(wantLow) == 0 || int64(len(wantLow)) == stock.Rows {
		t.Fatalf("%d of %d stock rows below their reorder level: the view would show nothing or everything", len(wantLow), stock.Rows)
	}
	if low.Rows != int64(len(wantLow)) {
		t.Fatalf("low_stock has %d rows, its definition selects %d", low.Rows, len(wantLow))
	}
	for i := range low.Rows {
		if got := fmt.Sprint(low.Row(i, row)); got != fmt.Sprint(wantLow[i]) {
			t.Fatalf("low_stock row %d = %s, want %v", i, got, wantLow[i])
		}
	}

	// movements: the sequence's values, FK (site_id, sku) to stock, CHECK quantity <> 0.
	for i := range moves.Rows {
		row = moves.Row(i, row)
		if row[0].(int64) != 1000+5*i {
			t.Fatalf("movement row %d id %v", i, row[0])
		}
		if !stockKeys[sk{row[1].(int64), row[2].(string)}] {
			t.Fatalf("movement row %d references missing stock %v/%v", i, row[1], row[2])
		}
		if row[4].(int64) == 0 {
			t.Fatalf("movement row %d breaks CK_movements_quantity", i)
		}
	}
	var seq *Sequence
	for i := range db.Sequences() {
		if db.Sequences()[i].Name == "movement_seq" {
			seq = &db.Sequences()[i]
		}
	}
	if seq == nil || !seq.Used || seq.Current != moves.KeyValue(moves.Rows-1) {
		t.Fatalf("movement_seq %+v, last movement %d", seq, moves.KeyValue(moves.Rows-1))
	}

	// An empty parent empties its children.
	empty := New(Config{Rows: map[string]int64{"warehouse.sites": 0}})
	for _, n := range []string{"stock", "movements", "low_stock"} {
		if tb, _ := empty.Table("warehouse", n); tb.Rows != 0 {
			t.Errorf("with no sites, warehouse.%s has %d rows", n, tb.Rows)
		}
	}
}
