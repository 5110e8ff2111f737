package parquet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// if_exists works for Parquet outputs as for CSV: replace (the default)
// publishes over the old output and removes the numbered parts of an
// earlier, longer run; skip leaves it (sinks.ErrSkip from Open); fail
// refuses it. With partition_by the output is the partition root.
func TestParquetIfExists(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := writeTable(t, Config{Path: dir + "/", MaxRows: 100}, simpleCols(), simpleRows(300))
	if len(st.Files) != 3 {
		t.Fatalf("split run: %v", st.Files)
	}
	// A rerun unsplit replaces t.parquet and removes t.0001..0003.parquet.
	st = writeTable(t, Config{Path: dir + "/"}, simpleCols(), simpleRows(10))
	if got := sinktest.DirEntries(t, dir); len(got) != 1 || filepath.Base(got[0]) != "t.parquet" || len(st.Files) != 1 {
		t.Fatalf("replace left %v", got)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "t.parquet"))
	open := func(cfg Config) error {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
		_ = s.Abort(ctx)
		return err
	}
	if err := open(Config{Path: dir + "/", IfExists: "skip"}); !errors.Is(err, sinks.ErrSkip) || !strings.Contains(err.Error(), "t.parquet exists (if_exists: skip)") {
		t.Errorf("skip: %v", err)
	}
	if err := open(Config{Path: dir + "/", IfExists: "fail"}); err == nil || errors.Is(err, sinks.ErrSkip) || !strings.Contains(err.Error(), "parquet: output "+filepath.Join(dir, "t.parquet")+" exists (if_exists: fail)") {
		t.Errorf("fail: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "t.parquet")); string(after) != string(before) {
		t.Error("skip or fail touched the existing output")
	}
	if err := open(Config{Path: t.TempDir() + "/", IfExists: "fail"}); err != nil {
		t.Errorf("fail without an existing output: %v", err)
	}
	// Partitioned: the root directory is the output.
	pdir := t.TempDir()
	writeTable(t, Config{Path: pdir + "/", PartitionBy: []string{"cat"}}, simpleCols(), simpleRows(30))
	if err := open(Config{Path: pdir + "/", PartitionBy: []string{"cat"}, IfExists: "skip"}); !errors.Is(err, sinks.ErrSkip) {
		t.Errorf("partitioned skip: %v", err)
	}
	if err := open(Config{Path: pdir + "/", PartitionBy: []string{"cat"}, IfExists: "fail"}); err == nil || !strings.Contains(err.Error(), "exists (if_exists: fail)") {
		t.Errorf("partitioned fail: %v", err)
	}
	if _, err := ParseConfig(map[string]any{"if_exists": "overwrite"}); err == nil || !strings.Contains(err.Error(), "if_exists") {
		t.Errorf("bad if_exists: %v", err)
	}
}
