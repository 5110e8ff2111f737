package csv

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// A Config built in Go and the same options from a job file resolve to
// the same configuration, with the spec's defaults.
func TestConfigFromSpec(t *testing.T) {
	f := false
	s, err := New(Config{Header: &f, LineEnding: "\r\n", Dialect: "postgres", BufferSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(map[string]any{"header": "no", "line_ending": "crlf", "dialect": "POSTGRES", "buffer_size": "8KiB"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Config(), c) {
		t.Fatalf("Go config %+v\njob options %+v", s.Config(), c)
	}
	if c.Path != DefaultPath || c.Delimiter != "," || c.Quote != `"` || c.LineEnding != "\r\n" || c.BinaryFormat != "hex_prefixed" ||
		c.Compression != "none" || *c.Header {
		t.Errorf("resolved %+v", c)
	}
	// Every problem, each under its key, the cross-option ones too.
	_, err = ParseConfig(map[string]any{"dilect": "x", "delimiter": ";", "quote": ";", "compression": "zstd", "compression_level": 7,
		"buffer_size": "1KiB", "null": "a;b"})
	for _, frag := range []string{`dilect: unknown option (did you mean "dialect"?)`, "buffer_size: 1KiB is outside 4KiB .. 64MiB"} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("error %v lacks %q", err, frag)
		}
	}
	_, err = ParseConfig(map[string]any{"delimiter": ";", "quote": ";", "compression": "zstd", "compression_level": 7, "null": "a;b"})
	for _, frag := range []string{`quote: ";" is also the delimiter`, "compression_level: 7: zstd takes 1..4", "null:"} {
		if err == nil || !strings.Contains(err.Error(), frag) {
			t.Errorf("error %v lacks %q", err, frag)
		}
	}
	if err := Spec.Check(); err != nil {
		t.Fatal(err)
	}
}

// The factory's Mapping, which inspect asks, is the mapping of the sink a
// run creates from the same options.
func TestFactoryMappingIsTheSinks(t *testing.T) {
	cols := []decode.Column{
		{Name: "b", Type: decode.TypeInfo{Type: decode.TypeBitN, Size: 1}},
		{Name: "v", Type: decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 10}},
		{Name: "e", Type: decode.TypeInfo{Type: decode.TypeVector, Size: 20}},
		{Name: "d", Type: decode.TypeInfo{Type: decode.TypeDecimalN, Size: 17, Precision: 38, Scale: 4}},
	}
	f := Factory()
	for _, opts := range []map[string]any{{}, {"bool_format": "1_0", "binary_format": "base64"}, {"dialect": "postgres"}} {
		got, err := f.Mapping(opts, cols)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.(*Sink).Mapping(cols); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: factory %v, sink %v", opts, got, want)
		}
	}
	if m, _ := f.Mapping(map[string]any{"dialect": "postgres"}, cols); m[1].Target != `bytes as \x hex` || m[2].Target != "float array literal {..}" {
		t.Errorf("postgres dialect mapping %v", m)
	}
	if _, err := f.Mapping(map[string]any{"bool_format": "yes"}, cols); err == nil {
		t.Error("a bad option mapped")
	}
}
