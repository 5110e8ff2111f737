package main

import (
	"os"
	"testing"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// The plugin legs run this test binary as their plugin: started by the
// plugin host it serves the checksum plugin instead of the tests.
func TestMain(m *testing.M) {
	servePluginIfAsked()
	os.Exit(m.Run())
}

// The plugin suite must not rot: each of its shapes in both modes on
// small tables (3 reps: parity, not timing). interleave fails when the
// checksum the plugin computes from its Arrow batches differs, on any
// leg, from the decoder-side one.
func TestPluginSuiteParity(t *testing.T) {
	rows := map[string]int64{"dbo.poc48": 3000, "dbo.lineitem": 3000, "dbo.odbc5": 3000, "dbo.lob": 60}
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Rows: rows}), Encryption: tdsserver.EncryptNotSup})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, shape := range []string{"poc48", "lineitem", "odbc5", "lob"} {
		for _, mode := range []string{"memory", "loopback"} {
			rs, err := runPluginShape(srv.Addr(), shape, mode, 3)
			if err != nil {
				t.Fatalf("%s/%s: %v", shape, mode, err)
			}
			if len(rs) != 4 || rs[2].Leg != "plugin-shm" || rs[2].Rows != rows["dbo."+shape] || rs[2].PluginPeakRSS == 0 {
				t.Fatalf("%s/%s: %+v", shape, mode, rs)
			}
		}
	}
	if _, err := runPluginShape(srv.Addr(), "temporal", "memory", 3); err == nil {
		t.Fatal("temporal accepted: its datetime2(7) cannot keep its checksum through microseconds")
	}
}
