package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

type nopSink struct{ decode.Capture }

func (nopSink) Open(context.Context, ExtractInfo) error    { return nil }
func (nopSink) Publish(context.Context) (SinkStats, error) { return SinkStats{}, nil }
func (nopSink) Abort(context.Context) error                { return nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	f := Factory{Name: "x", New: func(map[string]any) (Sink, error) { return &nopSink{}, nil }}
	if err := r.Register(f); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(f); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate registration: %v", err)
	}
	if err := r.Register(Factory{Name: "y"}); err == nil {
		t.Fatal("a factory without New was accepted")
	}
	if _, ok := r.Lookup("x"); !ok || !reflect.DeepEqual(r.Names(), []string{"x"}) {
		t.Fatalf("lookup/names: %v", r.Names())
	}
}

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
	got, err := BuildSelect("dbo", "t", cols, nil, []ConvertConfig{{Column: "SHAPE", Expr: "[shape].STAsText()"}}, "id > 5")
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT [id], [geo].STAsBinary() AS [geo], [node].ToString() AS [node], [shape].STAsText() AS [shape] FROM [dbo].[t] WHERE id > 5"
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	got, _ = BuildSelect("dbo", "t", cols, []string{"node", "id"}, []ConvertConfig{{Column: "node", Expr: "raw"}}, "")
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

func TestExpandVars(t *testing.T) {
	env := map[string]string{"SINCE": "42"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got, err := ExpandVars("id > ${SINCE} AND price > $5", look); err != nil || got != "id > 42 AND price > $5" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := ExpandVars("id > ${MISSING}", look); err == nil || !strings.Contains(err.Error(), "MISSING") {
		t.Fatalf("unset variable: %v", err)
	}
}

func TestJobValidateNamesFields(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(Factory{Name: "csv", New: func(map[string]any) (Sink, error) { return &nopSink{}, nil }})
	job := JobConfig{
		Source: SourceConfig{Connection: "sqlserver://sa@127.0.0.1:1433?database=x", Timeout: "0"},
		Extracts: []ExtractConfig{
			{Table: "a", Sinks: []SinkConfig{{Type: "parquetx"}}},
			{Table: "a", Query: "SELECT 1"},
			{Query: "SELECT 1", Verify: "count", Sinks: []SinkConfig{{Type: "csv"}}},
		},
	}
	err := job.Validate(r)
	if err == nil {
		t.Fatal("invalid job accepted")
	}
	for _, want := range []string{"source.timeout", "extracts[0].sinks[0].type", `unknown sink type "parquetx"`, "extracts[1]", "not both", "extracts[2].name", "extracts[2].verify"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// The tee hands every cell to every sink; variable-length values are
// written once into the first sink and copied to the others.
func TestTeeFansOut(t *testing.T) {
	var a, b decode.Capture
	tee := Tee(&a, &b)
	cols := []decode.Column{{Name: "i", Type: decode.TypeInfo{Type: decode.TypeIntN, Size: 4}}, {Name: "s", Type: decode.TypeInfo{Type: decode.TypeNVarChar, Size: 100}}}
	modes := make([]decode.Mode, 2)
	if err := tee.Columns(cols, modes); err != nil {
		t.Fatal(err)
	}
	tee.Int(0, 7)
	tee.BeginValue(1, 5)
	dst := tee.Reserve(1, 8)
	n := copy(dst, "hello")
	tee.Commit(1, n)
	tee.EndValue(1)
	if err := tee.EndRow(); err != nil {
		t.Fatal(err)
	}
	tee.Null(0)
	tee.BeginValue(1, 0)
	tee.Write(1, []byte("x"))
	tee.EndValue(1)
	tee.EndRow()
	want := [][]any{{int64(7), "hello"}, {nil, "x"}}
	if !reflect.DeepEqual(a.Rows, want) || !reflect.DeepEqual(b.Rows, want) {
		t.Fatalf("a %v, b %v", a.Rows, b.Rows)
	}
}

// bytesCapture takes the decoder's one-call fast path and counts its use.
type bytesCapture struct {
	decode.Capture
	calls int
}

func (b *bytesCapture) Bytes(col int, p []byte) {
	b.calls++
	b.BeginValue(col, int64(len(p)))
	b.Write(col, p)
	b.EndValue(col)
}

// plainCapture hides any fast path the Capture may have.
type plainCapture struct{ decode.CellSink }

// A tee forwards Bytes as one call to sinks that take it and as the
// three-call sequence to sinks that do not.
func TestTeeForwardsBytes(t *testing.T) {
	fast := &bytesCapture{}
	var slow decode.Capture
	tee := Tee(fast, plainCapture{&slow})
	bs, ok := tee.(decode.BytesSink)
	if !ok {
		t.Fatal("the tee hides the Bytes fast path")
	}
	cols := []decode.Column{{Name: "b", Type: decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 10}}}
	if err := tee.Columns(cols, make([]decode.Mode, 1)); err != nil {
		t.Fatal(err)
	}
	bs.Bytes(0, []byte{1, 2})
	tee.EndRow()
	bs.Bytes(0, nil)
	tee.EndRow()
	want := [][]any{{[]byte{1, 2}}, {[]byte{}}}
	if !reflect.DeepEqual(fast.Rows, want) || !reflect.DeepEqual(slow.Rows, want) || fast.calls != 2 {
		t.Fatalf("fast %v (%d calls), slow %v", fast.Rows, fast.calls, slow.Rows)
	}
}
