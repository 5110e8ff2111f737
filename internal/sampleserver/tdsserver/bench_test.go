package tdsserver_test

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// BenchmarkServePoc48 measures how fast the server serves the poc48 shape
// (39 int + 9 varchar(6), nullable) on loopback to a client that only
// reads bytes: packet headers are parsed to find the end of the message,
// payloads are discarded undecoded. One iteration = one SELECT * of
// 1 000 000 rows on a warm connection with 32767-byte packets.
//
//	go test ./internal/sampleserver/tdsserver/ -run '^$' -bench ServePoc48 -benchtime 10x
func BenchmarkServePoc48(b *testing.B) {
	const rows = 1_000_000
	db := sampledb.New(sampledb.Config{Seed: 42, Rows: map[string]int64{"dbo.poc48": rows}})
	s, err := tdsserver.Start(tdsserver.Config{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rc := dialRaw(b, s, 32767)
	query := (&decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.poc48"}).Encode(nil)
	var total int64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		rc.send(decode.PacketSQLBatch, 0, query)
		n, err := discardMessage(rc)
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	el := time.Since(start)
	b.StopTimer()
	b.SetBytes(total / int64(b.N))
	b.ReportMetric(float64(rows)*float64(b.N)/el.Seconds(), "rows/s")
	if st := s.Stats(); st.RowsSent != int64(b.N)*rows {
		b.Fatalf("server sent %d rows, want %d", st.RowsSent, int64(b.N)*rows)
	}
}

// discardMessage reads one message, discarding payloads; it returns the bytes read.
func discardMessage(rc *rawClient) (int64, error) {
	var n int64
	for {
		if _, err := io.ReadFull(rc.br, rc.hdr[:]); err != nil {
			return n, err
		}
		l := int(binary.BigEndian.Uint16(rc.hdr[2:4]))
		if _, err := rc.br.Discard(l - 8); err != nil {
			return n, err
		}
		n += int64(l)
		if rc.hdr[1]&decode.StatusEOM != 0 {
			return n, nil
		}
	}
}

// TestStreamAllocations guards the no-allocation-per-row property of the
// streaming path: a 200 000-row result costs a bounded number of
// allocations (per query: parsing, result set-up), not one per row.
func TestStreamAllocations(t *testing.T) {
	const rows = 200_000
	db := sampledb.New(sampledb.Config{Seed: 42, Rows: map[string]int64{"dbo.poc48": rows}})
	s := startServer(t, tdsserver.Config{DB: db})
	rc := dialRaw(t, s, 32767)
	query := (&decode.SQLBatch{OutstandingRequests: 1, SQL: "SELECT * FROM dbo.poc48"}).Encode(nil)
	run := func() {
		rc.send(decode.PacketSQLBatch, 0, query)
		if _, err := discardMessage(rc); err != nil {
			t.Fatal(err)
		}
	}
	run() // warm up buffers
	allocs := testing.AllocsPerRun(3, run)
	if allocs > 2000 {
		t.Fatalf("%.0f allocations for a %d-row result: something allocates per row", allocs, rows)
	}
	t.Logf("%.0f allocations per %d-row query", allocs, rows)
}
