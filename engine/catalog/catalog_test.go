package catalog

import (
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

func TestSplitTableName(t *testing.T) {
	for in, want := range map[string][2]string{
		"orders": {"dbo", "orders"}, "sales.orders": {"sales", "orders"},
		"[my schema].[odd]]name]": {"my schema", "odd]name"}, "[x].y": {"x", "y"},
	} {
		s, tb, err := SplitTableName(in)
		if err != nil || s != want[0] || tb != want[1] {
			t.Errorf("%q: %q %q %v, want %v", in, s, tb, err, want)
		}
	}
	for _, bad := range []string{"", "a.b.c", "a;drop", "[unterminated", "a."} {
		if _, _, err := SplitTableName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBuildSelectConversions(t *testing.T) {
	cols := []decode.Column{
		{Name: "id", Type: decode.TypeInfo{Type: decode.TypeIntN, Size: 4}},
		{Name: "geo", Type: decode.TypeInfo{Type: decode.TypeUDT, UDTName: "geography"}},
		{Name: "node", Type: decode.TypeInfo{Type: decode.TypeUDT, UDTName: "hierarchyid"}},
		{Name: "shape", Type: decode.TypeInfo{Type: decode.TypeUDT, UDTName: "geometry"}},
	}
	got, err := BuildSelect("dbo", "t", cols, nil, []Override{{Column: "SHAPE", Expr: "[shape].STAsText()"}}, "id > 5")
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT [id], [geo].STAsBinary() AS [geo], [node].ToString() AS [node], [shape].STAsText() AS [shape] FROM [dbo].[t] WHERE id > 5"
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	got, _ = BuildSelect("dbo", "t", cols, []string{"node", "id"}, []Override{{Column: "node", Expr: "raw"}}, "")
	if got != "SELECT [node], [id] FROM [dbo].[t]" {
		t.Fatalf("columns + raw: %s", got)
	}
	if _, err := BuildSelect("dbo", "t", cols, []string{"nope"}, nil, ""); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown column: %v", err)
	}
	conv := ConvertedColumns(cols)
	if conv[1].Type.Type != decode.TypeBigVarBinary || conv[2].Type.Type != decode.TypeNVarChar || cols[1].Type.Type != decode.TypeUDT {
		t.Fatalf("ConvertedColumns: %+v", conv)
	}
}
