package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
)

type nopSink struct{ decode.Capture }

func (nopSink) Open(context.Context, sinks.ExtractInfo) error { return nil }
func (nopSink) Publish(context.Context) (sinks.Stats, error)  { return sinks.Stats{}, nil }
func (nopSink) Abort(context.Context) error                   { return nil }

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
	r, err := sinks.NewRegistry(sinks.Factory{Name: "csv", New: func(map[string]any) (sinks.Sink, error) { return &nopSink{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	job := JobConfig{
		Source: SourceConfig{Connection: "sqlserver://sa@127.0.0.1:1433?database=x", Timeout: "0"},
		Extracts: []ExtractConfig{
			{Table: "a", Sinks: []SinkConfig{{Type: "parquetx"}}},
			{Table: "a", Query: "SELECT 1"},
			{Query: "SELECT 1", Verify: "count", Sinks: []SinkConfig{{Type: "csv"}}},
		},
	}
	err = job.Validate(r)
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
