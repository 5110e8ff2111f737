package sampledb

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
)

// The warehouse schema exists for the catalog: it holds what a migration
// or a partition planner must find and the other tables do not have. An
// identity with seed 100 and increment 10 whose last value is past the
// last row (three sites were added and removed), a case-insensitive UNIQUE
// constraint, a composite clustered primary key that is not the first
// column, a two-column foreign key with ON DELETE CASCADE, a filtered
// index, a descending index key with INCLUDE columns, persisted and
// computed columns, column- and table-level CHECK constraints, the T-SQL
// defaults SQL Server stores in its own parenthesised form (functions,
// literals, NEXT VALUE FOR), two sequences and a view.

// movements are numbered by warehouse.movement_seq: whMoveStart, then in
// steps of whMoveStep. ticksPerSecond is in datetime2 100 ns units.
const (
	whMoveStart    = 1000
	whMoveStep     = 5
	ticksPerSecond = 10_000_000
)

// warehouseShape computes the cross-table facts of the warehouse schema.
type warehouseShape struct {
	sites, stock, moves int64
	perSite             int64 // stock rows per site
	seed                uint64
}

func (w warehouseShape) siteID(row int64) int64 { return 100 + 10*row }

// stockSite returns the site row of stock row i.
func (w warehouseShape) stockSite(i int64) int64 { return i / w.perSite }

func (w warehouseShape) stockSKU(i int64) string { return fmt.Sprintf("SKU-%05d", i%w.perSite+1) }

func (w warehouseShape) h(salt uint64, i int64) uint64 { return mix(w.seed ^ salt ^ uint64(i)*golden) }

// stockQuantity is mostly plenty, about one in six below the reorder level.
func (w warehouseShape) stockQuantity(i int64) int64 {
	h := w.h(0x57C, i)
	if h%6 == 0 {
		return int64(h >> 8 % 10)
	}
	return 10 + int64(h>>8%190)
}

func (w warehouseShape) reorderLevel(i int64) int64 {
	return []int64{5, 10, 10, 20}[w.h(0x2E0, i)&3]
}

func (w warehouseShape) unitCostCents(i int64) int64 { return 50 + int64(w.h(0xC057, i)>>16%49950) }

func (b *builder) warehouse() {
	w := warehouseShape{sites: b.rows("warehouse.sites"), stock: b.rows("warehouse.stock"),
		moves: b.rows("warehouse.movements"), seed: mix(uint64(b.db.seed) ^ 0xA2E40)}
	// Keep referential integrity when a parent table is configured empty,
	// and spread the stock evenly over the sites.
	if w.sites == 0 {
		w.stock = 0
	}
	if w.stock == 0 {
		w.moves = 0
	}
	w.perSite = 1
	if w.sites > 0 {
		w.perSite = max(1, (w.stock+w.sites-1)/w.sites)
	}
	dec2 := func(cents int64, prec uint8) decode.Decimal {
		d := dec(cents)
		d.Precision, d.Scale = prec, 2
		return d
	}

	// sites: an identity starting at 100 in steps of 10.
	prefixes := []string{"Ams", "Rot", "Utr", "Ein", "Gro", "Ber", "Par", "Mad", "Lis", "Ros", "Osl", "Wro", "Tur",
		"Gen", "Lyo", "Mil", "Bru", "Ant", "Gdy", "Hel", "Tal", "Rig", "Vil", "Kra", "Poz", "Bre"}
	day20150101 := decode.DateFromCivil(2015, 1, 1)
	si := b.newTable("warehouse", "sites", []colDef{
		{name: "site_id", sqlType: "int"},
		{name: "code", sqlType: "nvarchar(12)", coll: CollLatin1},
		{name: "name", sqlType: "nvarchar(60)"},
		{name: "country", sqlType: "char(2)"},
		{name: "opened_on", sqlType: "date"},
		{name: "created_at", sqlType: "datetime2(3)"},
		{name: "site_guid", sqlType: "uniqueidentifier"},
	})
	si.Rows = w.sites
	si.Identity, si.IdentitySeed, si.IdentityIncrement, si.IdentityGap = "site_id", 100, 10, 3
	si.Columns[0].Flags = decode.ColFlagIdentity
	si.setKey("site_id", true)
	si.keyOf = w.siteID
	si.lowerB = func(k int64) int64 { return max(0, (k-100+9)/10) }
	si.Indexes = append(si.Indexes, Index{Name: "UQ_sites_code", Columns: []string{"code"}, Unique: true, UniqueConstraint: true})
	si.Checks = []Check{{Name: "CK_sites_code", Column: "code", Definition: "([code] like '[A-Z][A-Z][A-Z]-[0-9][0-9][0-9]')"}}
	si.Defaults = map[string]string{"country": "('NL')", "opened_on": "(CONVERT([date],getutcdate()))",
		"created_at": "(sysdatetime())", "site_guid": "(newsequentialid())"}
	si.rowFn = func(i int64, dst []any) []any {
		h := w.h(0x517E, i)
		code := fmt.Sprintf("%s-%03d", prefixes[i/1000%int64(len(prefixes))], i%1000+1)
		opened := day20150101 + int32(i*97%3650)
		created := dateTimeIn(h, opened, opened+30)
		created.Ticks -= created.Ticks % 10000 // datetime2(3)
		return append(dst, w.siteID(i), code, fmt.Sprintf("%s depot %d", cities[h%uint64(len(cities))], i+1),
			countries[(h>>20)%uint64(len(countries))], decode.Date(opened), created, guidFrom(h))
	}

	// stock: one row per site and SKU, clustered on (site_id, sku).
	st := b.newTable("warehouse", "stock", []colDef{
		{name: "stock_id", sqlType: b.keyType("warehouse.stock")},
		{name: "site_id", sqlType: "int"},
		{name: "sku", sqlType: "varchar(20)"},
		{name: "quantity", sqlType: "int"},
		{name: "reorder_level", sqlType: "smallint"},
		{name: "unit_cost", sqlType: "decimal(10,2)"},
		{name: "stock_value", sqlType: "decimal(21,2)", nullable: true},
		{name: "needs_reorder", sqlType: "int", nullable: true},
		{name: "updated_at", sqlType: "datetime"},
	})
	st.Rows = w.stock
	st.keyCol = 0
	st.Key = []string{"site_id", "sku"}
	st.Indexes = []Index{
		{Name: "PK_stock", Columns: []string{"site_id", "sku"}, Unique: true, PrimaryKey: true, Clustered: true},
		{Name: "UX_stock_stock_id", Columns: []string{"stock_id"}, Unique: true},
		{Name: "IX_stock_low", Columns: []string{"site_id", "quantity"}, Included: []string{"reorder_level"}, Filter: "([quantity]<(10))"},
	}
	st.ForeignKeys = []ForeignKey{{Name: "FK_stock_sites", Columns: []string{"site_id"}, RefSchema: "warehouse",
		RefTable: "sites", RefColumns: []string{"site_id"}, OnDelete: "NO_ACTION", OnUpdate: "NO_ACTION"}}
	st.Computed = map[string]Computed{
		"stock_value":   {Definition: "([quantity]*[unit_cost])", Persisted: true},
		"needs_reorder": {Definition: "(case when [quantity]<[reorder_level] then (1) else (0) end)"},
	}
	st.Checks = []Check{
		{Name: "CK_stock_quantity", Column: "quantity", Definition: "([quantity]>=(0))"},
		{Name: "CK_stock_levels", Definition: "([reorder_level]>=(0) AND [unit_cost]>=(0))"},
	}
	st.Defaults = map[string]string{"quantity": "((0))", "reorder_level": "((10))", "updated_at": "(getdate())"}
	day20250101 := decode.DateFromCivil(2025, 1, 1)
	st.rowFn = func(i int64, dst []any) []any {
		q, lvl, cost := w.stockQuantity(i), w.reorderLevel(i), w.unitCostCents(i)
		low := int64(0)
		if q < lvl {
			low = 1
		}
		upd := roundTo300(dateTimeIn(w.h(0x0DA7, i), day20250101, day20250101+365))
		return append(dst, i+1, w.siteID(w.stockSite(i)), w.stockSKU(i), q, lvl, dec2(cost, 10), dec2(q*cost, 21), low, upd)
	}

	// movements: numbered by a sequence, a two-column foreign key to stock.
	mv := b.newTable("warehouse", "movements", []colDef{
		{name: "movement_id", sqlType: "bigint"},
		{name: "site_id", sqlType: "int"},
		{name: "sku", sqlType: "varchar(20)"},
		{name: "moved_at", sqlType: "datetime2(7)"},
		{name: "quantity", sqlType: "int"},
		{name: "reason", sqlType: "varchar(10)"},
		{name: "note", sqlType: "nvarchar(200)", nullable: true},
		{name: "ref", sqlType: "uniqueidentifier"},
	})
	mv.Rows = w.moves
	mv.setKey("movement_id", true)
	mv.keyOf = func(i int64) int64 { return whMoveStart + whMoveStep*i }
	mv.lowerB = func(k int64) int64 { return max(0, (k-whMoveStart+whMoveStep-1)/whMoveStep) }
	mv.Indexes = append(mv.Indexes, Index{Name: "IX_movements_site_moved", Columns: []string{"site_id", "moved_at"},
		Descending: []bool{false, true}, Included: []string{"quantity", "reason"}})
	mv.ForeignKeys = []ForeignKey{{Name: "FK_movements_stock", Columns: []string{"site_id", "sku"}, RefSchema: "warehouse",
		RefTable: "stock", RefColumns: []string{"site_id", "sku"}, OnDelete: "CASCADE", OnUpdate: "CASCADE"}}
	mv.Checks = []Check{{Name: "CK_movements_quantity", Definition: "([quantity]<>(0))"}}
	mv.Defaults = map[string]string{"movement_id": "(NEXT VALUE FOR [warehouse].[movement_seq])", "moved_at": "(sysdatetime())",
		"reason": "('adjust')", "note": "(N'')", "ref": "(newid())"}
	reasons := []string{"receipt", "pick", "pick", "adjust", "return", "count"}
	notes := []string{"", "recount after audit", "damaged – written off", "Lieferung geprüft", "倉庫間移動"}
	t0 := decode.DateTime{Days: decode.DateFromCivil(2024, 1, 1)}
	mv.rowFn = func(i int64, dst []any) []any {
		h := w.h(0x30E, i)
		s := uniform(h, w.stock)
		at := t0
		ticks := i*37*60*ticksPerSecond + int64(mix(h)%(60*ticksPerSecond))
		at.Days += int32(ticks / decode.TicksPerDay)
		at.Ticks = ticks % decode.TicksPerDay
		q := 1 + int64(h>>24%50)
		if h>>40&1 == 0 {
			q = -q
		}
		var note any
		if h>>44&3 == 0 {
			note = notes[h>>48%uint64(len(notes))]
		}
		return append(dst, mv.keyOf(i), w.siteID(w.stockSite(s)), w.stockSKU(s), at, q,
			reasons[h>>52%uint64(len(reasons))], note, guidFrom(h))
	}

	// Sequences: the one movements draws from, and a descending, cycling
	// decimal one nothing uses yet (its current value is its start).
	cur := int64(whMoveStart)
	if w.moves > 0 {
		cur = whMoveStart + whMoveStep*(w.moves-1)
	}
	b.db.seqs = append(b.db.seqs,
		Sequence{Schema: "warehouse", Name: "movement_seq", Type: "bigint", Start: whMoveStart, Increment: whMoveStep,
			Min: whMoveStart, Max: 1<<63 - 1, Cache: 50, Current: cur, Used: w.moves > 0},
		Sequence{Schema: "warehouse", Name: "pick_list_seq", Type: "decimal(12,0)", Start: 999999, Increment: -1,
			Min: 1, Max: 999999, Cycle: true, Current: 999999})

	// low_stock: the stock rows below their reorder level.
	var low []int64
	for i := range w.stock {
		if w.stockQuantity(i) < w.reorderLevel(i) {
			low = append(low, i)
		}
	}
	lv := makeTable(b.db, "warehouse", "low_stock", []colDef{
		{name: "site_id", sqlType: "int"},
		{name: "sku", sqlType: "varchar(20)"},
		{name: "quantity", sqlType: "int"},
		{name: "reorder_level", sqlType: "smallint"},
	})
	lv.View = "CREATE VIEW [warehouse].[low_stock]\nAS\nSELECT s.site_id, s.sku, s.quantity, s.reorder_level\n" +
		"FROM warehouse.stock AS s\nWHERE s.quantity < s.reorder_level\n"
	lv.Rows = int64(len(low))
	lv.rowFn = func(i int64, dst []any) []any {
		r := low[i]
		return append(dst, w.siteID(w.stockSite(r)), w.stockSKU(r), w.stockQuantity(r), w.reorderLevel(r))
	}
	b.db.views = append(b.db.views, lv)
}
