package catalog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// These tests run the catalog queries against the sample server and hold
// what Load returns to the sample database's own model (package sampledb,
// which also generates the server's catalog views): every table, column,
// key, index, constraint, sequence and view the model declares must come
// back as declared.

var testDB = sampledb.New(sampledb.Config{Seed: 7, Rows: map[string]int64{
	"dbo.poc48": 5000, "dbo.odbc5": 5000, "dbo.wide601": 50, "dbo.lob": 20, "dbo.lob_nvarchar": 5,
	"dbo.temporal": 3000, "dbo.lineitem": 3000, "sales.order_lines": 3000,
}})

func connect(t testing.TB) *session.Conn {
	t.Helper()
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: testDB,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := session.Connect(context.Background(), session.Config{Host: "127.0.0.1", Port: srv.Port(),
		User: tdsserver.DefaultUser, Password: tdsserver.DefaultPassword, Database: "sample",
		Encrypt: session.EncryptDisable, ConnectTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var tmo = session.TimeoutOf(time.Minute)

func TestLoadEverything(t *testing.T) {
	c := connect(t)
	db, err := Load(context.Background(), c, Options{Views: true, Sequences: true, Timeout: tmo})
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]*sampledb.Table(nil), testDB.Tables()...), testDB.Views()...)
	if len(db.Tables) != len(want) {
		t.Fatalf("loaded %d tables and views, the sample has %d", len(db.Tables), len(want))
	}
	for _, m := range want {
		got := db.Table(m.Schema, m.Name)
		if got == nil {
			t.Errorf("%s not loaded", m.FullName())
			continue
		}
		t.Run(m.FullName(), func(t *testing.T) { compareTable(t, got, m) })
	}
	if len(db.Sequences) != len(testDB.Sequences()) {
		t.Fatalf("%d sequences, want %d", len(db.Sequences), len(testDB.Sequences()))
	}
	for i, m := range testDB.Sequences() {
		s := db.Sequences[i]
		got := fmt.Sprintf("%s.%s %s start %v incr %v min %v max %v cycle %v cached %v cache %d current %v used %v %v",
			s.Schema, s.Name, s.TypeName, s.Start, s.Increment, s.Min, s.Max, s.Cycle, s.Cached, s.Cache, s.Current,
			s.LastUsed != nil, s.LastUsedUnknown)
		if s.LastUsed != nil && s.LastUsed.Cmp(s.Current) != 0 {
			t.Errorf("%s: last_used_value %v, current_value %v", s.Name, s.LastUsed, s.Current)
		}
		typ, _, _ := strings.Cut(m.Type, "(")
		want := fmt.Sprintf("%s.%s %s start %d incr %d min %d max %d cycle %v cached %v cache %d current %d used %v false",
			m.Schema, m.Name, typ, m.Start, m.Increment, m.Min, m.Max, m.Cycle, m.Cache > 0, m.Cache, m.Current, m.Used)
		if got != want {
			t.Errorf("sequence\n got %s\nwant %s", got, want)
		}
	}
}

// compareTable holds a loaded table to the sample model.
func compareTable(t *testing.T, got *Table, m *sampledb.Table) {
	if got.ObjectID != m.ObjectID || got.View != (m.View != "") || got.Definition != m.View {
		t.Errorf("object %d view %v %q, want %d %v %q", got.ObjectID, got.View, got.Definition, m.ObjectID, m.View != "", m.View)
	}
	wantRows := m.Rows
	if m.View != "" {
		wantRows = -1
	}
	if got.RowCount != wantRows {
		t.Errorf("row count %d, want %d", got.RowCount, wantRows)
	}
	if len(got.Columns) != len(m.Columns) {
		t.Fatalf("%d columns, want %d", len(got.Columns), len(m.Columns))
	}
	for i := range m.Columns {
		g, mc := &got.Columns[i], &m.Columns[i]
		if g.Name != mc.Name || g.ID != int32(i+1) || g.Hidden {
			t.Errorf("column %d: %q id %d hidden %v, want %q", i, g.Name, g.ID, g.Hidden, mc.Name)
		}
		// The wire description is the server's COLMETADATA for the column.
		if g.Wire.Type.Type != mc.Type.Type || g.Wire.Type.Size != mc.Type.Size || g.Wire.Type.Collation != mc.Type.Collation ||
			g.Wire.Type.Precision != mc.Type.Precision || g.Wire.Type.Scale != mc.Type.Scale || g.Wire.UserType != mc.UserType {
			t.Errorf("%s wire type %+v, want %+v", g.Name, g.Wire.Type, mc.Type)
		}
		if g.Kind() != mc.Kind() || kindOfName(g.BaseType) != mc.Kind() {
			t.Errorf("%s kind %v (base type %s), want %v", g.Name, g.Kind(), g.BaseType, mc.Kind())
		}
		if decl := m.SQLType(i); g.SQLType() != decl && !(decl == "rowversion" && g.SQLType() == "timestamp") {
			t.Errorf("%s declared %q, want %q", g.Name, g.SQLType(), decl)
		}
		if g.Nullable != m.Nullable(i) {
			t.Errorf("%s nullable %v", g.Name, g.Nullable)
		}
		if name, _ := sampledb.CollationName(mc.Type.Collation); g.Collation != name {
			t.Errorf("%s collation %q, want %q", g.Name, g.Collation, name)
		}
		def, hasDef := m.Defaults[mc.Name]
		if hasDef != (g.Default != nil) || hasDef && g.Default.Definition != def {
			t.Errorf("%s default %+v, want %q", g.Name, g.Default, def)
		}
		comp, isComp := m.Computed[mc.Name]
		if isComp != (g.Computed != nil) || isComp && *g.Computed != (Computed{comp.Definition, comp.Persisted}) {
			t.Errorf("%s computed %+v, want %+v", g.Name, g.Computed, comp)
		}
		isID := strings.EqualFold(m.Identity, mc.Name) && m.Identity != ""
		if isID != (g.Identity != nil) {
			t.Errorf("%s identity %+v", g.Name, g.Identity)
		} else if isID {
			seed, incr, last, used := m.IdentityValues()
			wantLast := "<nil>"
			if used {
				wantLast = fmt.Sprint(last)
			}
			if g.Identity.Seed.Int64() != seed || g.Identity.Increment.Int64() != incr || fmt.Sprint(g.Identity.Last) != wantLast {
				t.Errorf("%s identity %v/%v/%v, want %d/%d/%s", g.Name, g.Identity.Seed, g.Identity.Increment, g.Identity.Last, seed, incr, wantLast)
			}
		}
	}
	// Keys and indexes.
	var pk string
	var uqs []string
	for _, ix := range m.Indexes {
		if ix.PrimaryKey {
			pk = ix.Name + strings.Join(ix.Columns, ",")
		}
		if ix.UniqueConstraint {
			uqs = append(uqs, ix.Name+strings.Join(ix.Columns, ","))
		}
	}
	gotPK := ""
	if got.PrimaryKey != nil {
		gotPK = got.PrimaryKey.Name + strings.Join(got.PrimaryKey.Columns, ",")
	}
	var gotUQ []string
	for _, k := range got.Uniques {
		gotUQ = append(gotUQ, k.Name+strings.Join(k.Columns, ","))
	}
	if gotPK != pk || fmt.Sprint(gotUQ) != fmt.Sprint(uqs) {
		t.Errorf("keys: pk %q uniques %v, want %q %v", gotPK, gotUQ, pk, uqs)
	}
	if len(got.Indexes) != len(m.Indexes) {
		t.Fatalf("%d indexes, want %d", len(got.Indexes), len(m.Indexes))
	}
	for _, mi := range m.Indexes {
		var g *Index
		for i := range got.Indexes {
			if got.Indexes[i].Name == mi.Name {
				g = &got.Indexes[i]
			}
		}
		if g == nil {
			t.Errorf("index %s missing", mi.Name)
			continue
		}
		var keys []string
		for k, c := range mi.Columns {
			if k < len(mi.Descending) && mi.Descending[k] {
				c += " DESC"
			}
			keys = append(keys, c)
		}
		var gkeys []string
		for _, k := range g.Keys {
			c := k.Column
			if k.Descending {
				c += " DESC"
			}
			gkeys = append(gkeys, c)
		}
		typ := IndexNonclustered
		if mi.Clustered {
			typ = IndexClustered
		}
		if fmt.Sprint(gkeys) != fmt.Sprint(keys) || fmt.Sprint(g.Include) != fmt.Sprint(append([]string(nil), mi.Included...)) ||
			g.Filter != mi.Filter || g.Unique != mi.Unique || g.PrimaryKey != mi.PrimaryKey ||
			g.UniqueConstraint != mi.UniqueConstraint || g.Type != typ || (g.ID == 1) != mi.Clustered {
			t.Errorf("index %s: %+v, want %+v", mi.Name, *g, mi)
		}
	}
	// Foreign keys, in name order.
	var fks, gfks []string
	action := map[string]string{"NO_ACTION": "NO ACTION", "CASCADE": "CASCADE"}
	for _, f := range m.ForeignKeys {
		fks = append(fks, fmt.Sprintf("%s(%v)->%s.%s(%v) delete %s update %s", f.Name, f.Columns, f.RefSchema, f.RefTable,
			f.RefColumns, action[f.OnDelete], action[f.OnUpdate]))
	}
	for _, f := range got.ForeignKeys {
		gfks = append(gfks, fmt.Sprintf("%s(%v)->%s.%s(%v) delete %s update %s", f.Name, f.Columns, f.RefSchema, f.RefTable,
			f.RefColumns, f.OnDelete, f.OnUpdate))
	}
	if fmt.Sprint(gfks) != fmt.Sprint(fks) {
		t.Errorf("foreign keys\n got %v\nwant %v", gfks, fks)
	}
	var cks, gcks []string
	for _, c := range m.Checks {
		cks = append(cks, c.Name+" "+c.Column+" "+c.Definition)
	}
	sort.Strings(cks) // Table.Checks are in name order
	for _, c := range got.Checks {
		gcks = append(gcks, c.Name+" "+c.Column+" "+c.Definition)
	}
	if fmt.Sprint(gcks) != fmt.Sprint(cks) {
		t.Errorf("checks\n got %v\nwant %v", gcks, cks)
	}
}

// TestLoadWarehouse spells out the warehouse schema's catalog, the objects
// that exist for a migration or a partition planner to find.
func TestLoadWarehouse(t *testing.T) {
	c := connect(t)
	db, err := Load(context.Background(), c, Options{Filter: Filter{Include: []string{"warehouse.*"}}, Views: true,
		Sequences: true, Timeout: tmo})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range db.Tables {
		names = append(names, tb.FullName())
	}
	if fmt.Sprint(names) != "[warehouse.low_stock warehouse.movements warehouse.sites warehouse.stock]" {
		t.Fatalf("tables %v", names)
	}
	sites, stock, moves, low := db.Table("warehouse", "sites"), db.Table("warehouse", "stock"), db.Table("warehouse", "movements"), db.Table("warehouse", "low_stock")
	id := sites.Column("site_id").Identity
	if id == nil || id.Seed.Int64() != 100 || id.Increment.Int64() != 10 || id.Last.Int64() != 100+10*11+30 {
		t.Errorf("sites.site_id identity %+v", id)
	}
	if code := sites.Column("code"); code.Collation != "Latin1_General_CI_AS" || code.SQLType() != "nvarchar(12)" {
		t.Errorf("sites.code: %s %s", code.SQLType(), code.Collation)
	}
	if len(sites.Uniques) != 1 || sites.Uniques[0].Name != "UQ_sites_code" || sites.Uniques[0].Clustered {
		t.Errorf("sites uniques %+v", sites.Uniques)
	}
	for col, want := range map[string]string{"country": "'NL'", "created_at": "sysdatetime()", "site_guid": "newsequentialid()"} {
		if d := sites.Column(col).Default; d == nil || d.Expr() != want {
			t.Errorf("sites.%s default %+v, want %s", col, d, want)
		}
	}
	if d := moves.Column("movement_id").Default; d == nil || d.Expr() != "NEXT VALUE FOR [warehouse].[movement_seq]" {
		t.Errorf("movements.movement_id default %+v", d)
	}
	if pk := stock.PrimaryKey; pk == nil || fmt.Sprint(pk.Columns) != "[site_id sku]" || !pk.Clustered {
		t.Errorf("stock primary key %+v", pk)
	}
	if k := stock.ClusteredKey(); len(k) != 2 || k[0].Column != "site_id" {
		t.Errorf("stock clustered key %+v", k)
	}
	var filtered *Index
	for i := range stock.Indexes {
		if stock.Indexes[i].Filter != "" {
			filtered = &stock.Indexes[i]
		}
	}
	if filtered == nil || filtered.Filter != "([quantity]<(10))" || fmt.Sprint(filtered.Include) != "[reorder_level]" {
		t.Errorf("stock filtered index %+v", filtered)
	}
	if c := stock.Column("stock_value"); c.Computed == nil || !c.Computed.Persisted || c.SQLType() != "decimal(21,2)" {
		t.Errorf("stock.stock_value %+v", c)
	}
	if c := stock.Column("needs_reorder"); c.Computed == nil || c.Computed.Persisted {
		t.Errorf("stock.needs_reorder %+v", c)
	}
	if len(moves.ForeignKeys) != 1 {
		t.Fatalf("movements foreign keys %+v", moves.ForeignKeys)
	}
	fk := moves.ForeignKeys[0]
	if fmt.Sprint(fk.Columns, fk.RefColumns) != "[site_id sku] [site_id sku]" || fk.OnDelete != Cascade || fk.RefTable != "stock" {
		t.Errorf("movements foreign key %+v", fk)
	}
	var desc *Index
	for i := range moves.Indexes {
		if moves.Indexes[i].Name == "IX_movements_site_moved" {
			desc = &moves.Indexes[i]
		}
	}
	if desc == nil || len(desc.Keys) != 2 || desc.Keys[0].Descending || !desc.Keys[1].Descending ||
		fmt.Sprint(desc.Include) != "[quantity reason]" {
		t.Errorf("movements descending index %+v", desc)
	}
	if !low.View || !strings.Contains(low.Definition, "WHERE s.quantity < s.reorder_level") || len(low.Columns) != 4 {
		t.Errorf("low_stock view %+v", low)
	}
	if len(db.Sequences) != 2 || db.Sequences[0].Name != "movement_seq" || db.Sequences[0].Current.Int64() != 1000+5*1999 {
		t.Errorf("sequences %+v", db.Sequences)
	}
	if s := db.Sequences[1]; s.Increment.Int64() != -1 || !s.Cycle || s.Cached || s.TypeName != "decimal" || s.Precision != 12 {
		t.Errorf("pick_list_seq %+v", s)
	}

	// The clustered key's extremes, on the key column and off it.
	r, ok, err := ClusteredKeyRange(context.Background(), c, stock, tmo)
	if err != nil || !ok || r.Column.Name != "site_id" || r.Min != int64(100) || r.Max != int64(210) {
		t.Errorf("stock key range %+v %v %v", r, ok, err)
	}
	r, ok, err = ClusteredKeyRange(context.Background(), c, moves, tmo)
	if err != nil || !ok || r.Min != int64(1000) || r.Max != int64(1000+5*1999) {
		t.Errorf("movements key range %+v %v %v", r, ok, err)
	}
	if _, ok, err := ClusteredKeyRange(context.Background(), c, low, tmo); ok || err != nil {
		t.Errorf("a view has no clustered key: %v %v", ok, err)
	}
	n, err := Count(context.Background(), c, "warehouse", "stock", "quantity < 10", tmo)
	var want int64
	var row []any
	st, _ := testDB.Table("warehouse", "stock")
	for i := range st.Rows {
		if row = st.Row(i, row); row[3].(int64) < 10 {
			want++
		}
	}
	if err != nil || n != want {
		t.Errorf("Count = %d, %v; want %d", n, err, want)
	}
}

func TestLoadTableAndProject(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	tm, err := LoadTable(ctx, c, "dbo", "type_matrix", tmo)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Project(tm, nil, []Override{{Column: "c_hierarchyid", Expr: "raw"}}, Reads{})
	if err != nil {
		t.Fatal(err)
	}
	sql := p.SQL("")
	if !strings.Contains(sql, "[c_geography].STAsBinary() AS [c_geography]") || !strings.Contains(sql, ", [c_hierarchyid],") {
		t.Fatalf("type_matrix select: %s", sql)
	}
	// What a sink receives is the description of the same select list.
	cols, err := Describe(ctx, c, p.DescribeSQL(), tmo)
	if err != nil {
		t.Fatal(err)
	}
	for i, col := range cols {
		k := col.Kind()
		switch p.Items[i].Column.Name {
		case "c_geography", "c_geometry":
			if k != decode.KindVarBinary {
				t.Errorf("%s arrives as %v, want varbinary WKB", col.Name, k)
			}
		case "c_hierarchyid":
			if k != decode.KindHierarchyID {
				t.Errorf("raw hierarchyid arrives as %v", k)
			}
		}
	}
	if len(cols) != len(tm.Columns) {
		t.Fatalf("described %d columns, want %d", len(cols), len(tm.Columns))
	}
	if _, err := LoadTable(ctx, c, "dbo", "no_such_table", tmo); err == nil {
		t.Fatal("a missing table loaded")
	} else if _, ok := err.(*NotFoundError); !ok {
		t.Fatalf("missing table: %T %v", err, err)
	}
	// A view loads by name, with its columns.
	v, err := LoadTable(ctx, c, "warehouse", "low_stock", tmo)
	if err != nil || !v.View || len(v.Columns) != 4 || v.Columns[0].Wire.Type.Type == 0 {
		t.Fatalf("view: %+v %v", v, err)
	}
}
