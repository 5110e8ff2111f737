package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// The harness itself must not rot: run every shape in both modes on small
// tables (3 reps: parity, not timing); runShape fails on any checksum
// mismatch between legs.
func TestHarnessChecksumParity(t *testing.T) {
	rows := map[string]int64{}
	for s := range shapeRows {
		rows["dbo."+s] = 300
	}
	rows["dbo.lob"] = 50
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Rows: rows}), Encryption: tdsserver.EncryptNotSup})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, haveBCP := exec.LookPath("freebcp")
	if haveBCP != nil && os.Getenv("CI") != "" {
		t.Fatal("freebcp missing in CI")
	}
	// the parquet mode: tdsextract's Parquet sink and DuckDB's writer must
	// write files that DuckDB reads back as the same rows
	for _, shape := range []string{"lineitem", "temporal"} {
		rs, err := runParquet(srv.Addr(), shape, 3, nil)
		if err != nil {
			t.Fatalf("%s/parquet: %v", shape, err)
		}
		if len(rs) != 4 || rs[0].Rows != rows["dbo."+shape] || rs[0].FileBytes == 0 || rs[1].FileBytes == 0 {
			t.Fatalf("%s/parquet: %+v", shape, rs)
		}
	}
	for _, shape := range []string{"poc48", "odbc5", "wide601", "lob", "temporal", "lineitem"} {
		for _, mode := range []string{"memory", "loopback"} {
			rs, err := runShape(srv.Addr(), shape, mode, 3, haveBCP == nil)
			if err != nil {
				t.Fatalf("%s/%s: %v", shape, mode, err)
			}
			if rs[0].Leg != "tdsextract" || rs[0].Rows != rows["dbo."+shape] {
				t.Fatalf("%s/%s: %+v", shape, mode, rs[0])
			}
			if rs[0].AllocsPerRow == nil {
				t.Fatalf("%s/%s: no allocation figure", shape, mode)
			}
		}
	}
}
