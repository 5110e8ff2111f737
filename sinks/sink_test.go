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
	if md := spec.Markdown(); !strings.Contains(md, "| `max_bytes` | size | 0 | split |") || !strings.Contains(md, "rfc4180 \\| postgres") {
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
