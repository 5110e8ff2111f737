package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// The jsonl example plugin, built into a plugins directory, is a sink
// type of the command line: listed by `sinks` with its own options, used
// by `export --to plugin:jsonl` with --out and --set, checked by
// `run --dry-run`.
func TestPluginSinksOnTheCommandLine(t *testing.T) {
	plugdir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(plugdir, "jsonl"), "../../plugins/examples/jsonl").CombinedOutput(); err != nil {
		t.Fatalf("building the jsonl plugin: %v\n%s", err, out)
	}
	code, out, errOut := runCLI(t, "--plugins-dir", plugdir, "sinks")
	if code != 0 || !strings.Contains(out, "plugin:jsonl") || !strings.Contains(out, "plugin ") {
		t.Fatalf("sinks: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "--plugins-dir", plugdir, "sinks", "plugin:jsonl")
	if code != 0 || !strings.Contains(out, "options.path") || !strings.Contains(out, "batch_bytes") {
		t.Fatalf("sinks plugin:jsonl: %d\n%s\n%s", code, out, errOut)
	}

	src := startSource(t, map[string]int64{"sales.orders": 300})
	dir := t.TempDir()
	code, out, errOut = runCLI(t, "--log-level", "warn", "--plugins-dir", plugdir, "export", "--source", src, "--password-env", "TEST_PW",
		"--table", "sales.orders", "--to", "plugin:jsonl,csv", "--out", dir, "--set", "plugin:jsonl.batch_rows=64")
	if code != 0 {
		t.Fatalf("export: code %d\n%s\n%s", code, out, errOut)
	}
	f, err := os.Open(filepath.Join(dir, "sales.orders.jsonl"))
	if err != nil {
		t.Fatalf("orders.jsonl: %v (files %v)", err, sinktest.Files(dir))
	}
	defer f.Close()
	sc, n := bufio.NewScanner(f), 0
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
	}
	if n != 300 || !strings.Contains(out, "sales.orders -> plugin:jsonl: 300 rows") {
		t.Fatalf("%d lines; summary:\n%s", n, out)
	}

	// A job's plugin options are checked (the plugin runs to say which it
	// takes) before anything connects.
	job := writeFile(t, t.TempDir(), "job.yaml", `source:
  connection: sqlserver://sa@127.0.0.1:1?database=sample
extracts:
  - table: sales.orders
sinks:
  - type: plugin:jsonl
    options:
      options: {path: out/, pth: x}
`)
	code, _, errOut = runCLI(t, "--plugins-dir", plugdir, "run", "--dry-run", job)
	if code != exitConfig || !strings.Contains(errOut, `options.pth: unknown option (did you mean "path"?)`) {
		t.Fatalf("dry run: code %d\n%s", code, errOut)
	}
}
