package outfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tdsextract/tdsextract/sinks"
)

func TestResolvePathAndNumbered(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ path, want string }{
		{dir, filepath.Join(dir, "ex.csv")},
		{"out/", filepath.Join("out", "ex.csv")},
		{"", "ex.csv"},
		{"x/{schema}.{table}-{extract}.csv", "x/dbo.t-ex.csv"},
		{"plain.csv", "plain.csv"},
	}
	for _, c := range cases {
		if got := ResolvePath(c.path, "ex", "dbo", "t", ".csv"); got != c.want {
			t.Errorf("ResolvePath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	if got := Numbered("o/t.csv.gz", 3, ".csv.gz", ".csv"); got != "o/t.0003.csv.gz" {
		t.Error(got)
	}
	if got := Numbered("o/t.parquet", 12345, ".parquet"); got != "o/t.12345.parquet" {
		t.Error(got)
	}
	if got := Numbered("o/t", 1, ".csv"); got != "o/t.0001" {
		t.Error(got)
	}
}

func TestSetPublishAbort(t *testing.T) {
	dir := t.TempDir()
	var s Set
	f, err := s.Create(filepath.Join(dir, "sub", "a.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(filepath.Join(dir, "sub", "a.csv")); err == nil {
		t.Fatal("same final name twice accepted")
	}
	_, _ = f.WriteString("hello")
	if _, err := os.Stat(f.Final); !os.IsNotExist(err) {
		t.Fatal("final name exists before Publish")
	}
	files, err := s.Publish()
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	if b, _ := os.ReadFile(files[0]); string(b) != "hello" {
		t.Fatalf("%q", b)
	}
	es, _ := os.ReadDir(filepath.Join(dir, "sub"))
	if len(es) != 1 {
		t.Fatalf("temporary files left: %v", es)
	}
	// Abort removes temporaries
	var s2 Set
	g, _ := s2.Create(filepath.Join(dir, "b.csv"))
	_, _ = g.WriteString("x")
	if err := s2.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Tmp); !os.IsNotExist(err) {
		t.Fatal("temporary left after Abort")
	}
}

func TestResolveInfoPath(t *testing.T) {
	dir := t.TempDir()
	one := sinks.ExtractInfo{Name: "t", Schema: "dbo", Table: "t", Parts: 1}
	part := func(i int) sinks.ExtractInfo { x := one; x.Part, x.Parts = i, 8; return x }
	exts := []string{".csv.gz", ".csv"}
	for _, c := range []struct {
		path string
		info sinks.ExtractInfo
		want string
	}{
		{dir + "/", one, dir + "/t.csv"},
		{dir + "/", part(2), dir + "/t.part-0003.csv"},
		{dir + "/{table}-{part}.csv", part(0), dir + "/t-0001.csv"},
		{dir + "/{part}/{extract}.csv", part(7), dir + "/0008/t.csv"},
		{dir + "/x.csv.gz", part(1), dir + "/x.part-0002.csv.gz"},
		{dir + "/{table}-{part}.csv", one, dir + "/t-0001.csv"},
	} {
		if got := ResolveInfoPath(c.path, c.info, ".csv", exts...); got != c.want {
			t.Errorf("ResolveInfoPath(%q, part %d of %d) = %q, want %q", c.path, c.info.Part, c.info.Parts, got, c.want)
		}
	}
}
