package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// sinksWithoutSpec are the built-in sinks that do not declare their
// options as a sinks.Spec yet; the README documents those by hand. Every
// other sink must declare one, and its README table must be the one
// `tdsextract sinks NAME --markdown` prints. When a listed sink declares
// its spec, TestREADMESinkOptions fails until the sink leaves this list
// and its table is in the README, so the list cannot go stale.
var sinksWithoutSpec = map[string]bool{}

var optionBlock = regexp.MustCompile(`(?s)<!-- sink-options:([a-z0-9_]+) -->\n(.*?)<!-- /sink-options:([a-z0-9_]+) -->`)

// The README's option tables are the specs of the registered sinks.
func TestREADMESinkOptions(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for _, m := range optionBlock.FindAllStringSubmatch(string(b), -1) {
		if m[1] != m[3] {
			t.Errorf("README: block sink-options:%s closed as %s", m[1], m[3])
		}
		blocks[m[1]] = m[2]
	}
	reg := builtinSinks()
	for _, name := range reg.Names() {
		f, _ := reg.Lookup(name)
		block, found := blocks[name]
		delete(blocks, name)
		regen := "paste the output of `tdsextract sinks " + name + " --markdown` between <!-- sink-options:" + name +
			" --> and <!-- /sink-options:" + name + " --> in README.md"
		switch {
		case f.Options == nil && sinksWithoutSpec[name]:
			if found {
				t.Errorf("README has a generated option table for %s, which declares no spec", name)
			}
		case f.Options == nil:
			t.Errorf("sink %s declares no option spec: give its Factory a sinks.Spec (only the sinks in sinksWithoutSpec may lack one)", name)
		case sinksWithoutSpec[name]:
			t.Errorf("sink %s now declares its options: remove it from sinksWithoutSpec and %s", name, regen)
		case !found:
			t.Errorf("README lacks the option table of sink %s: %s", name, regen)
		case block != f.Options.Markdown():
			t.Errorf("README's option table of sink %s differs from its spec: %s\nREADME:\n%s\nspec:\n%s", name, regen, block, f.Options.Markdown())
		}
	}
	for name := range blocks {
		t.Errorf("README has an option table for %s, which is not a registered sink", name)
	}
}

func TestSinksCommand(t *testing.T) {
	code, out, _ := runCLI(t, "sinks")
	if code != 0 {
		t.Fatalf("sinks: code %d", code)
	}
	reg := builtinSinks()
	for _, n := range reg.Names() {
		f, _ := reg.Lookup(n)
		if !strings.Contains(out, n) || !strings.Contains(out, f.Description) {
			t.Errorf("sinks does not list %s with its description:\n%s", n, out)
		}
	}
	f, _ := reg.Lookup("csv")
	code, out, _ = runCLI(t, "sinks", "csv")
	if code != 0 {
		t.Fatalf("sinks csv: code %d", code)
	}
	for i := range f.Options {
		o := &f.Options[i]
		if !strings.Contains(out, o.Name+"  (") || !strings.Contains(out, "default "+o.DefaultText()) {
			t.Errorf("sinks csv lacks option %s with its default %s:\n%s", o.Name, o.DefaultText(), out)
		}
		if w := wrap(o.Doc, 72); len(w) == 0 || !strings.Contains(out, w[0]) {
			t.Errorf("sinks csv lacks the meaning of %s", o.Name)
		}
	}
	code, out, _ = runCLI(t, "sinks", "csv", "--markdown")
	if code != 0 || out != f.Options.Markdown() {
		t.Errorf("sinks csv --markdown: code %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "sinks", "excel"); code != exitConfig || !strings.Contains(errOut, "csv") {
		t.Errorf("unknown sink: code %d %s", code, errOut)
	}
}
