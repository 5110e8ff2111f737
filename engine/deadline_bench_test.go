package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/tdsserver"
)

// checksumSink discards values but folds every one into a checksum, so
// that a faster leg can never be one that decoded less (BENCHMARKS.md rule 4).
type checksumSink struct {
	discardSink
	sum uint64
}

func (s *checksumSink) Columns(_ []decode.Column, _ []decode.Mode) error { return nil }
func (s *checksumSink) Null(col int)                                     { s.sum = s.sum*31 + uint64(col) }
func (s *checksumSink) Int(col int, v int64)                             { s.sum = s.sum*31 + uint64(v) }
func (s *checksumSink) Reserve(col int, n int) []byte                    { return nil }
func (s *checksumSink) Write(col int, p []byte) {
	for _, b := range p {
		s.sum = s.sum*31 + uint64(b)
	}
}

type benchLeg struct {
	name  string
	tm    Timeout
	eager bool
}

var benchLegs = []benchLeg{
	{"off", NoTimeout, false},
	{"lazy", TimeoutOf(time.Hour), false},
	{"eager", TimeoutOf(time.Hour), true},
}

func runLeg(b *testing.B, c *Conn, leg benchLeg, sink *checksumSink) (time.Duration, int64) {
	c.eagerDeadline = leg.eager
	sink.sum = 0
	start := time.Now()
	res, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48", Timeout: leg.tm}, sink)
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return d, res.Rows
}

// BenchmarkDeadlineABBA streams poc48 from the test server on loopback
// (plaintext, 32 KiB packets) into a checksumming sink with the deadline
// off, lazily armed (the engine's behaviour) and eagerly re-armed per row,
// interleaved off-lazy-eager-eager-lazy-off within each pair, and reports
// the medians of the within-pair ratios. Pairs: TDSEXTRACT_BENCH_PAIRS
// (default 9; the first is a discarded warm-up).
//
//	go test ./engine -run '^$' -bench DeadlineABBA -benchtime 1x
func BenchmarkDeadlineABBA(b *testing.B) {
	pairs := 9
	if v, err := strconv.Atoi(os.Getenv("TDSEXTRACT_BENCH_PAIRS")); err == nil && v > 1 {
		pairs = v
	}
	_, cfg := startServer(b, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
	cfg.Encrypt = EncryptDisable
	c := mustConnect(b, cfg)
	sink := &checksumSink{}
	for i := 0; i < b.N; i++ {
		var lazyR, eagerR []float64
		var ns [3][]float64
		var sum0 uint64
		var rows int64
		for p := 0; p < pairs; p++ {
			var t [3]time.Duration
			for _, k := range []int{0, 1, 2, 2, 1, 0} {
				d, n := runLeg(b, c, benchLegs[k], sink)
				if sum0 == 0 {
					sum0, rows = sink.sum, n
				} else if sink.sum != sum0 || n != rows {
					b.Fatalf("leg %s: checksum %x rows %d, want %x %d", benchLegs[k].name, sink.sum, n, sum0, rows)
				}
				t[k] += d
			}
			if p == 0 {
				continue // warm-up
			}
			lazyR = append(lazyR, float64(t[1])/float64(t[0]))
			eagerR = append(eagerR, float64(t[2])/float64(t[0]))
			for k := range t {
				ns[k] = append(ns[k], float64(t[k])/2/float64(rows))
			}
		}
		med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
		b.ReportMetric(med(lazyR), "lazy/off")
		b.ReportMetric(med(eagerR), "eager/off")
		b.ReportMetric(med(ns[0]), "ns/row-off")
		b.ReportMetric(med(ns[1]), "ns/row-lazy")
		b.ReportMetric(med(ns[2]), "ns/row-eager")
		if testing.Verbose() {
			b.Logf("rows %d checksum %x; lazy/off min %.4f med %.4f max %.4f; eager/off min %.4f med %.4f max %.4f",
				rows, sum0, slices.Min(lazyR), med(lazyR), slices.Max(lazyR), slices.Min(eagerR), med(eagerR), slices.Max(eagerR))
		}
	}
	c.eagerDeadline = false
}

// BenchmarkQueryPoc48 reports ns/row and allocations for one leg at a time.
func BenchmarkQueryPoc48(b *testing.B) {
	_, cfg := startServer(b, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
	cfg.Encrypt = EncryptDisable
	c := mustConnect(b, cfg)
	for _, leg := range benchLegs {
		b.Run(leg.name, func(b *testing.B) {
			sink := &checksumSink{}
			b.ReportAllocs()
			var rows int64
			for i := 0; i < b.N; i++ {
				_, n := runLeg(b, c, leg, sink)
				rows += n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
		})
	}
	_ = fmt.Sprint
}
