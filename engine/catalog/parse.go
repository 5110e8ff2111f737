package catalog

import (
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// Parsing the catalog queries' results. Every function here takes rows as
// decode.Capture returns them (int64, bool, string, nil, decode.Variant,
// decode.Decimal) and needs no server, so the tests feed them rows as a
// real SQL Server sends them.

// fields reads the values of one result row with a sticky error: read a
// whole row, then check err once.
type fields struct {
	view string // the catalog view, for messages
	row  []any
	err  error
}

func (f *fields) fail(i int, want string) {
	if f.err == nil {
		v := any("missing")
		if i < len(f.row) {
			v = f.row[i]
		}
		f.err = fmt.Errorf("catalog: %s: column %d is %T (%v), want %s", f.view, i+1, v, v, want)
	}
}

func (f *fields) get(i int) any {
	if i >= len(f.row) {
		f.fail(i, "a value")
		return nil
	}
	return f.row[i]
}

// int reads an integer; NULL reads as 0.
func (f *fields) int(i int) int64 {
	switch v := f.get(i).(type) {
	case int64:
		return v
	case nil:
		return 0
	case decode.Decimal: // SUM over bigint on some servers, numeric ids
		if n := decimalInt(v); n != nil && n.IsInt64() {
			return n.Int64()
		}
	}
	f.fail(i, "an integer")
	return 0
}

// bool reads a bit; NULL reads as false.
func (f *fields) bool(i int) bool {
	switch v := f.get(i).(type) {
	case bool:
		return v
	case nil:
		return false
	case int64:
		return v != 0
	}
	f.fail(i, "a bit")
	return false
}

// str reads text; NULL reads as "".
func (f *fields) str(i int) string {
	switch v := f.get(i).(type) {
	case string:
		return v
	case nil:
		return ""
	}
	f.fail(i, "text")
	return ""
}

// big reads an exact integer, from a sql_variant or not; NULL reads as nil.
func (f *fields) big(i int) *big.Int {
	v := f.get(i)
	if vv, ok := v.(decode.Variant); ok {
		v = vv.Value
	}
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return big.NewInt(x)
	case decode.Decimal:
		if n := decimalInt(x); n != nil {
			return n
		}
	case decode.Money: // a money identity or sequence cannot exist, but a variant can hold money
		if x%10000 == 0 {
			return big.NewInt(int64(x) / 10000)
		}
	}
	f.fail(i, "an integer")
	return nil
}

// decimalInt returns a decimal without a fractional part as an integer,
// else nil.
func decimalInt(d decode.Decimal) *big.Int {
	n := new(big.Int).SetUint64(d.Hi)
	n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(d.Lo))
	if d.Scale > 0 {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)
		var rem big.Int
		n.QuoRem(n, div, &rem)
		if rem.Sign() != 0 {
			return nil
		}
	}
	if d.Neg {
		n.Neg(n)
	}
	return n
}

// parseTables reads qTables (view false) or qViews (view true).
func parseTables(rows [][]any, view bool) ([]*Table, error) {
	name := "sys.tables"
	if view {
		name = "sys.views"
	}
	out := make([]*Table, 0, len(rows))
	for _, r := range rows {
		f := fields{view: name, row: r}
		t := &Table{ObjectID: int32(f.int(0)), Schema: f.str(1), Name: f.str(2), View: view, RowCount: -1}
		if view {
			t.Definition = f.str(3)
		}
		if f.err != nil {
			return nil, f.err
		}
		out = append(out, t)
	}
	return out, nil
}

// parseSequences reads qSequences.
func parseSequences(rows [][]any) ([]Sequence, error) {
	out := make([]Sequence, 0, len(rows))
	for _, r := range rows {
		f := fields{view: "sys.sequences", row: r}
		s := Sequence{ObjectID: int32(f.int(0)), Schema: f.str(1), Name: f.str(2), TypeName: f.str(3),
			Precision: int(f.int(4)), Start: f.big(5), Increment: f.big(6), Min: f.big(7), Max: f.big(8),
			Cycle: f.bool(9), Cached: f.bool(10), Cache: f.int(11), Current: f.big(12)}
		if f.err != nil {
			return nil, f.err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !strings.EqualFold(out[i].Schema, out[j].Schema) {
			return strings.ToLower(out[i].Schema) < strings.ToLower(out[j].Schema)
		}
		return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name)
	})
	return out, nil
}

// parseSequencesUsed reads qSequencesUsed: last_used_value by object id.
func parseSequencesUsed(rows [][]any) (map[int32]*big.Int, error) {
	out := make(map[int32]*big.Int, len(rows))
	for _, r := range rows {
		f := fields{view: "sys.sequences", row: r}
		id, v := int32(f.int(0)), f.big(1)
		if f.err != nil {
			return nil, f.err
		}
		if v != nil {
			out[id] = v
		}
	}
	return out, nil
}

// attach reads the results of the detail queries (in the order of the
// detail list) into tables. Rows of tables not in the list are ignored.
func attach(tables []*Table, sets [][][]any) error {
	if len(sets) != len(detail) {
		return fmt.Errorf("catalog: %d detail result sets, want %d", len(sets), len(detail))
	}
	byID := make(map[int32]*Table, len(tables))
	for _, t := range tables {
		byID[t.ObjectID] = t
	}
	// colOf finds a column by table and column id.
	colIndex := map[[2]int32]int{}
	colOf := func(t *Table, id int64) *Column {
		if i, ok := colIndex[[2]int32{t.ObjectID, int32(id)}]; ok {
			return &t.Columns[i]
		}
		return nil
	}
	// A step reads one detail query: owner is the column holding the
	// owning table's object id, before runs once before its first row.
	type step struct {
		view   string
		owner  int
		before func()
		row    func(f *fields, t *Table) error
	}
	type idxKey struct{ obj, idx int32 }
	indexes := map[idxKey]*Index{}
	fks := map[int32]*ForeignKey{}
	fkOwner := map[int32]*Table{}
	steps := []step{
		{"sys.columns", 0, nil, func(f *fields, t *Table) error {
			c := Column{ID: int32(f.int(1)), Name: f.str(2), TypeName: f.str(3), BaseType: f.str(4),
				MaxLength: int(f.int(5)), Precision: int(f.int(6)), Scale: int(f.int(7)), Collation: f.str(8),
				Nullable: f.bool(9)}
			if c.BaseType == "" { // a CLR type is its own base
				c.BaseType = c.TypeName
			}
			colIndex[[2]int32{t.ObjectID, c.ID}] = len(t.Columns)
			t.Columns = append(t.Columns, c)
			return nil
		}},
		{"sys.identity_columns", 0, nil, func(f *fields, t *Table) error {
			c := colOf(t, f.int(1))
			id := &Identity{Seed: f.big(2), Increment: f.big(3), Last: f.big(4)}
			if c == nil || f.err != nil {
				return f.err
			}
			if id.Seed == nil || id.Increment == nil {
				return fmt.Errorf("catalog: %s.%s: identity without seed or increment", t.FullName(), c.Name)
			}
			c.Identity = id
			return nil
		}},
		{"sys.computed_columns", 0, nil, func(f *fields, t *Table) error {
			if c := colOf(t, f.int(1)); c != nil {
				c.Computed = &Computed{Definition: f.str(2), Persisted: f.bool(3)}
			}
			return nil
		}},
		{"sys.default_constraints", 0, nil, func(f *fields, t *Table) error {
			if c := colOf(t, f.int(1)); c != nil {
				c.Default = &Default{Name: f.str(2), Definition: f.str(3)}
			}
			return nil
		}},
		{"sys.indexes", 0, nil, func(f *fields, t *Table) error {
			ix := Index{ID: int32(f.int(1)), Name: f.str(2), Type: IndexType(f.int(3)), Unique: f.bool(4),
				PrimaryKey: f.bool(5), UniqueConstraint: f.bool(6), Disabled: f.bool(7), Filter: f.str(8)}
			t.Indexes = append(t.Indexes, ix)
			return nil
		}},
		{"sys.index_columns", 0, func() {
			// Pointers into t.Indexes are stable from here: sys.indexes
			// is complete.
			for _, tt := range tables {
				for i := range tt.Indexes {
					indexes[idxKey{tt.ObjectID, tt.Indexes[i].ID}] = &tt.Indexes[i]
				}
			}
		}, func(f *fields, t *Table) error {
			ix := indexes[idxKey{t.ObjectID, int32(f.int(1))}]
			c := colOf(t, f.int(3))
			ord, desc, incl := f.int(4), f.bool(5), f.bool(6)
			if ix == nil || c == nil {
				return nil
			}
			switch {
			case incl:
				ix.Include = append(ix.Include, c.Name)
			case ord > 0:
				for len(ix.Keys) < int(ord) {
					ix.Keys = append(ix.Keys, IndexKey{})
				}
				ix.Keys[ord-1] = IndexKey{Column: c.Name, Descending: desc}
			}
			return nil
		}},
		{"sys.key_constraints", 0, nil, func(f *fields, t *Table) error {
			name, typ, idx := f.str(1), strings.TrimSpace(f.str(2)), int32(f.int(3))
			var ix *Index
			for i := range t.Indexes {
				if t.Indexes[i].ID == idx {
					ix = &t.Indexes[i]
				}
			}
			if ix == nil {
				return fmt.Errorf("catalog: %s: constraint %s has no index %d", t.FullName(), name, idx)
			}
			k := Key{Name: name, IndexID: idx, Clustered: ix.ID == 1}
			for _, c := range ix.Keys {
				k.Columns = append(k.Columns, c.Column)
			}
			switch typ {
			case "PK":
				t.PrimaryKey = &k
			case "UQ":
				t.Uniques = append(t.Uniques, k)
			}
			return nil
		}},
		{"sys.foreign_keys", 1, nil, func(f *fields, t *Table) error {
			fk := &ForeignKey{Name: f.str(2), RefSchema: f.str(3), RefTable: f.str(4), OnDelete: Action(f.int(5)),
				OnUpdate: Action(f.int(6)), Disabled: f.bool(7), NotTrusted: f.bool(8)}
			id := int32(f.int(0))
			fks[id], fkOwner[id] = fk, t
			return nil
		}},
		{"sys.foreign_key_columns", 2, nil, func(f *fields, t *Table) error {
			fk := fks[int32(f.int(0))]
			c := colOf(t, f.int(3))
			ref := f.str(4)
			if fk == nil || c == nil {
				return nil
			}
			fk.Columns = append(fk.Columns, c.Name)
			fk.RefColumns = append(fk.RefColumns, ref)
			return nil
		}},
		{"sys.check_constraints", 0, nil, func(f *fields, t *Table) error {
			ck := Check{Name: f.str(2), Definition: f.str(3), Disabled: f.bool(4), NotTrusted: f.bool(5)}
			if col := f.int(1); col != 0 {
				if c := colOf(t, col); c != nil {
					ck.Column = c.Name
				}
			}
			t.Checks = append(t.Checks, ck)
			return nil
		}},
		{"sys.partitions", 0, nil, func(f *fields, t *Table) error {
			t.RowCount = f.int(1)
			return nil
		}},
	}
	for k, st := range steps {
		if st.before != nil {
			st.before()
		}
		for _, r := range sets[k] {
			f := fields{view: st.view, row: r}
			t := byID[int32(f.int(st.owner))]
			if f.err != nil {
				return f.err
			}
			if t == nil {
				continue
			}
			if err := st.row(&f, t); err != nil {
				return err
			}
			if f.err != nil {
				return f.err
			}
		}
	}
	// Foreign keys in name order, each with its columns.
	ids := make([]int32, 0, len(fks))
	for id := range fks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return fks[ids[i]].Name < fks[ids[j]].Name })
	for _, id := range ids {
		if t := fkOwner[id]; t != nil {
			t.ForeignKeys = append(t.ForeignKeys, *fks[id])
		}
	}
	for _, t := range tables {
		if t.View {
			t.RowCount = -1
		}
		sort.Slice(t.Checks, func(i, j int) bool { return t.Checks[i].Name < t.Checks[j].Name })
		sort.Slice(t.Uniques, func(i, j int) bool { return t.Uniques[i].Name < t.Uniques[j].Name })
	}
	return nil
}

// attachWire sets each column's wire description from the columns of
// SELECT * FROM the table; the columns it does not return are hidden.
func attachWire(t *Table, wire []decode.Column) {
	byName := make(map[string]int, len(wire))
	for i := range wire {
		byName[strings.ToLower(wire[i].Name)] = i
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if k, ok := byName[strings.ToLower(c.Name)]; ok {
			c.Wire = wire[k]
		} else {
			c.Hidden = true
		}
	}
}
