package sqlexec

import (
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// TestGUIDRangeInSQLServerOrder: a WHERE range on a uniqueidentifier column
// with parameter bounds selects by SQL Server's order (the last group
// first), so key ranges cut in that order split the rows without overlap
// or gap, and MIN and MAX agree with it.
func TestGUIDRangeInSQLServerOrder(t *testing.T) {
	s := NewSession(sampleDB())
	all := query(t, s, "SELECT id, uid FROM dbo.temporal WHERE id <= 3000 AND uid IS NOT NULL")
	mid, _ := decode.GUIDFromString("00000000-0000-0000-0000-800000000000")
	below := query(t, s, "SELECT id, uid FROM dbo.temporal WHERE id <= 3000 AND uid < @b", Param{Name: "b", Value: mid})
	above := query(t, s, "SELECT id, uid FROM dbo.temporal WHERE id <= 3000 AND uid >= @b", Param{Name: "b", Value: mid})
	if len(below.rows)+len(above.rows) != len(all.rows) || len(below.rows) == 0 || len(above.rows) == 0 {
		t.Fatalf("below %d + above %d rows, want %d, both non-empty", len(below.rows), len(above.rows), len(all.rows))
	}
	for _, r := range below.rows {
		if g := r[1].(decode.GUID); g[10] >= 0x80 {
			t.Fatalf("%v is below %s in SQL Server's order only if its byte 10 is < 0x80", g, mid)
		}
	}
	mm := query(t, s, "SELECT MIN(uid), MAX(uid) FROM dbo.temporal WHERE id <= 3000")
	lo, hi := mm.rows[0][0].(decode.GUID), mm.rows[0][1].(decode.GUID)
	for _, r := range all.rows {
		g := r[1].(decode.GUID)
		if decode.CompareGUID(g, lo) < 0 || decode.CompareGUID(g, hi) > 0 {
			t.Fatalf("%s lies outside MIN %s .. MAX %s in SQL Server's order", g, lo, hi)
		}
	}
}
