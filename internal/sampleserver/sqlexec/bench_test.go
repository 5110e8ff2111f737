package sqlexec

import "testing"

// Serving speed of the three row paths (no decoding client):
//
//	go test ./internal/sampleserver/sqlexec/ -run X -bench Serve -benchtime 200000x
func benchServe(b *testing.B, sql string) {
	s := NewSession(sampleDB())
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	rows := 0
	for rows < b.N {
		rs, err := s.Exec(sql, nil)
		if err != nil {
			b.Fatal(err)
		}
		for {
			var n int
			var done bool
			buf, n, done = rs[0].Rows.AppendRows(buf[:0], 256, true)
			rows += n
			b.SetBytes(int64(len(buf)) / int64(max(n, 1)))
			if done || rows >= b.N {
				break
			}
		}
	}
}

// BenchmarkServeFast is SELECT * (the pre-encoded path).
func BenchmarkServeFast(b *testing.B) { benchServe(b, "SELECT * FROM dbo.odbc5") }

// BenchmarkServeProjected projects columns per row (Row + AppendRow).
func BenchmarkServeProjected(b *testing.B) { benchServe(b, "SELECT score, name, id FROM dbo.odbc5") }

// BenchmarkServeFiltered filters per row and encodes matches with the fast path.
func BenchmarkServeFiltered(b *testing.B) { benchServe(b, "SELECT * FROM dbo.odbc5 WHERE score > 0") }

// TestFastPathAllocs guards the whole-row path: no allocation per block.
func TestFastPathAllocs(t *testing.T) {
	s := NewSession(sampleDB())
	rs := mustExec(t, s, "SELECT * FROM dbo.poc48")
	buf := make([]byte, 0, 1<<20)
	allocs := testing.AllocsPerRun(100, func() {
		buf, _, _ = rs[0].Rows.AppendRows(buf[:0], 256, true)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per AppendRows call, want 0", allocs)
	}
}

// BenchmarkPointLookup is a key lookup in the two-billion-row poc48.
func BenchmarkPointLookup(b *testing.B) {
	s := NewSession(sampleDB())
	params := []Param{{Name: "id", Value: int64(1_234_567_890)}}
	b.ReportAllocs()
	for b.Loop() {
		rs, err := s.Exec("SELECT * FROM dbo.poc48 WHERE id = @id", params)
		if err != nil {
			b.Fatal(err)
		}
		if _, n, _ := rs[0].Rows.AppendRows(nil, 10, false); n != 1 {
			b.Fatalf("%d rows", n)
		}
	}
}
