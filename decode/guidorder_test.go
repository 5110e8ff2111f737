package decode

import (
	"bytes"
	"cmp"
	"slices"
	"testing"
)

// TestCompareGUIDSQLServerOrder checks the order SQL Server documents for
// uniqueidentifier (System.Data.SqlTypes.SqlGuid compares the stored bytes
// 10-15, then 8-9, 6-7, 4-5, 0-3): values written as text in the order
// ORDER BY on a uniqueidentifier column returns them.
func TestCompareGUIDSQLServerOrder(t *testing.T) {
	// Ascending, as SQL Server sorts them: each value sets one byte, from
	// the least significant (aa of aabbccdd-...) to the most significant
	// (kk of ...-kkllmmnnoopp), then a few with several bytes set.
	want := []string{
		"00000000-0000-0000-0000-000000000000",
		"01000000-0000-0000-0000-000000000000", // aa
		"00010000-0000-0000-0000-000000000000", // bb
		"00000100-0000-0000-0000-000000000000", // cc
		"00000001-0000-0000-0000-000000000000", // dd
		"00000000-0100-0000-0000-000000000000", // ee
		"00000000-0001-0000-0000-000000000000", // ff
		"00000000-0000-0100-0000-000000000000", // gg
		"00000000-0000-0001-0000-000000000000", // hh
		"00000000-0000-0000-0001-000000000000", // jj
		"00000000-0000-0000-0100-000000000000", // ii
		"00000000-0000-0000-0000-000000000001", // pp
		"00000000-0000-0000-0000-000000000100", // oo
		"00000000-0000-0000-0000-000000010000", // nn
		"00000000-0000-0000-0000-000001000000", // mm
		"00000000-0000-0000-0000-000100000000", // ll
		"00000000-0000-0000-0000-010000000000", // kk
		"ffffffff-ffff-ffff-ffff-010000000001", // kk, pp beat every other byte
		"00000000-0000-0000-0000-100000000000",
		"00000000-0000-0000-0000-ff0000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff",
	}
	gs := make([]GUID, len(want))
	for i, s := range want {
		g, err := GUIDFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		gs[i] = g
	}
	shuffled := slices.Clone(gs)
	slices.Reverse(shuffled)
	slices.SortFunc(shuffled, CompareGUID)
	for i := range gs {
		if shuffled[i] != gs[i] {
			t.Fatalf("position %d: got %s, want %s (full order: %v)", i, shuffled[i], gs[i], shuffled)
		}
	}
	for i := range gs {
		for j := range gs {
			c := CompareGUID(gs[i], gs[j])
			ki, kj := gs[i].SQLServerOrderKey(), gs[j].SQLServerOrderKey()
			if bc := bytes.Compare(ki[:], kj[:]); bc != c {
				t.Fatalf("%s vs %s: CompareGUID %d, key compare %d", gs[i], gs[j], c, bc)
			}
			if want := cmp.Compare(i, j); c != want {
				t.Fatalf("%s vs %s: CompareGUID %d, want %d", gs[i], gs[j], c, want)
			}
		}
		if back := GUIDFromSQLServerOrderKey(gs[i].SQLServerOrderKey()); back != gs[i] {
			t.Fatalf("key round trip of %s gave %s", gs[i], back)
		}
	}
}
