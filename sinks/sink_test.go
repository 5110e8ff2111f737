package sinks

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

type nopSink struct{ decode.Capture }

func (nopSink) Open(context.Context, ExtractInfo) error { return nil }
func (nopSink) Publish(context.Context) (Stats, error)  { return Stats{}, nil }
func (nopSink) Abort(context.Context) error             { return nil }

func TestRegistry(t *testing.T) {
	f := Factory{Name: "x", New: func(map[string]any) (Sink, error) { return &nopSink{}, nil }}
	r, err := NewRegistry(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRegistry(f, f); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate in NewRegistry: %v", err)
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

func TestSpecResolve(t *testing.T) {
	spec := Spec{
		{Name: "path", Type: String, Default: "out/", Doc: "where"},
		{Name: "max_bytes", Type: Size, Default: int64(0), Doc: "split"},
		{Name: "header", Type: Bool, Default: true, Doc: "names first"},
		{Name: "dialect", Type: Enum, Values: []string{"rfc4180", "postgres"}, Default: "rfc4180", Doc: "d"},
		{Name: "timeout", Type: Duration, Doc: "t"},
		{Name: "columns", Type: List, Doc: "c"},
		{Name: "connection", Type: String, Required: true, Secret: true, Doc: "conn"},
		{Name: "level", Type: Int, Doc: "l"},
	}
	got, err := spec.Resolve(map[string]any{"max_bytes": "64MiB", "header": "off", "dialect": "POSTGRES",
		"timeout": "30s", "columns": "a, b", "connection": "x", "level": 3.0})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "out/", "max_bytes": int64(64 << 20), "header": false, "dialect": "postgres",
		"timeout": 30 * time.Second, "columns": []string{"a", "b"}, "connection": "x", "level": int64(3)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Resolve:\n got %#v\nwant %#v", got, want)
	}
	// Every problem is reported, each naming its key; a secret's value never.
	_, err = spec.Resolve(map[string]any{"dilect": "x", "header": "maybe", "dialect": "tsv", "level": "1.5"})
	msg := err.Error()
	for _, frag := range []string{`dilect: unknown option (did you mean "dialect"?)`, "header:", `dialect: "tsv": use "rfc4180" or "postgres"`, "level:", "connection: required"} {
		if !strings.Contains(msg, frag) {
			t.Errorf("error %q lacks %q", msg, frag)
		}
	}
	_, err = spec.Resolve(map[string]any{"connection": []any{"Password=hunter2"}})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("secret option error: %v", err)
	}
	if md := spec.Markdown(); !strings.Contains(md, "| `max_bytes` | size | `0` | split |") || !strings.Contains(md, "rfc4180 \\| postgres") {
		t.Errorf("Markdown:\n%s", md)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[any]int64{"65536": 65536, "64KiB": 64 << 10, "128 MiB": 128 << 20, "1GB": 1e9, "2g": 2 << 30, 7: 7, 1.0e6: 1e6} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%v) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []any{"", "MiB", "-1", -1, "1.5B", "12 parsecs", true} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%v) accepted", bad)
		}
	}
}

func TestSpecRangesAliasesAndCheck(t *testing.T) {
	spec := Spec{
		{Name: "buffer", Type: Size, Default: int64(4 << 10), Range: &Range{Min: 4 << 10, Max: 64 << 20}, Doc: "b"},
		{Name: "level", Type: Int, Default: int64(0), Range: &Range{Min: 0, Max: 9}, Doc: "l"},
		{Name: "eol", Type: Enum, Values: []string{"lf", "crlf"}, Aliases: map[string]string{"\n": "lf", "\r\n": "crlf"}, Default: "lf", Doc: "e"},
		{Name: "fmt", Type: Enum, Values: []string{"true_false", "1_0"}, Default: "true_false", Doc: "f"},
	}
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	got, err := spec.Resolve(map[string]any{"buffer": "1MiB", "level": 9, "eol": "\r\n"})
	if err != nil || got["buffer"] != int64(1<<20) || got["eol"] != "crlf" {
		t.Fatalf("%v %v", got, err)
	}
	_, err = spec.Resolve(map[string]any{"buffer": "1KiB", "level": 10, "fmt": 10})
	for _, frag := range []string{"buffer: 1KiB is outside 4KiB .. 64MiB", "level: 10 is outside 0 .. 9", `fmt: "10" (a number, not text): use "true_false" or "1_0", in quotes`} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("error %v lacks %q", err, frag)
		}
	}
	if md := spec.Markdown(); !strings.Contains(md, "| `buffer` | size, 4KiB .. 64MiB | `4KiB` |") {
		t.Errorf("Markdown:\n%s", md)
	}
	for _, bad := range []Spec{
		{{Name: "a", Type: Int, Default: 3}},                                        // int, not int64
		{{Name: "a", Type: Enum, Values: []string{"x"}, Default: "y"}},              // not a value
		{{Name: "a", Type: Int, Default: int64(20), Range: &Range{Min: 0, Max: 9}}}, // outside its range
		{{Name: "a", Type: String}, {Name: "a", Type: String}},                      // twice
		{{Name: "Max-Rows", Type: Int}},                                             // not lower case with underscores
		{{Name: "a", Type: String, Range: &Range{}}},                                // a range on text
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("spec %+v passed Check", bad)
		}
		if _, err := NewRegistry(Factory{Name: "x", Options: bad, New: func(map[string]any) (Sink, error) { return nil, nil }}); err == nil {
			t.Errorf("registry took spec %+v", bad)
		}
	}
}

func TestStructOptions(t *testing.T) {
	f := false
	type cfg struct {
		Path   string   `mapstructure:"path"`
		Header *bool    `mapstructure:"header"`
		Max    int64    `mapstructure:"max_rows"`
		Cols   []string `mapstructure:"columns"`
		Skip   string   `mapstructure:"-"`
	}
	got := StructOptions(&cfg{Header: &f, Max: 7, Skip: "x"})
	if !reflect.DeepEqual(got, map[string]any{"header": false, "max_rows": int64(7)}) {
		t.Fatalf("%#v", got)
	}
}
