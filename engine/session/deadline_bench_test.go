package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/cputime"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// checksumSink discards values but folds every one into a checksum, so
// that a faster leg can never be one that decoded less. With eager set it
// also re-arms the read deadline at every row's end, as a driver that arms
// a timer per row does: the cost the lazy deadline exists to avoid, priced
// here from the sink so that the session's row loop carries no switch for
// it.
type checksumSink struct {
	decode.Nop
	sum   uint64
	eager *Conn
}

func (s *checksumSink) EndRow() error {
	if c := s.eager; c != nil && !c.w.b.none {
		_ = c.transport.SetReadDeadline(c.w.b.deadline(c.w.clock()))
		c.w.rArmed, c.w.rFresh = true, true
	}
	return nil
}

func (s *checksumSink) Null(col int)                  { s.sum = s.sum*31 + uint64(col) }
func (s *checksumSink) Int(col int, v int64)          { s.sum = s.sum*31 + uint64(v) }
func (s *checksumSink) Reserve(col int, n int) []byte { return nil }
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
	sink.sum, sink.eager = 0, nil
	if leg.eager {
		sink.eager = c
	}
	start := time.Now()
	res, err := c.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48", Timeout: leg.tm}, sink)
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return d, res.Rows
}

// cpuTime is the calling thread's user+system CPU time (the benchmark
// goroutine is locked to its thread, and the whole client path runs on it:
// the server and the replayer run on other threads); where threads report
// none, the process's.
func cpuTime() time.Duration {
	if d, ok := cputime.Thread(); ok {
		return d
	}
	return cputime.Process()
}

// abba runs the three legs interleaved off-lazy-eager-eager-lazy-off per
// pair and reports the medians of the within-pair ratios of wall time and
// of process CPU time (the latter is less disturbed by other processes on
// a shared machine). Pairs: TDSEXTRACT_BENCH_PAIRS (default 9, 2 with
// -short; the first is a discarded warm-up).
func abba(b *testing.B, c *Conn) {
	pairs := 9
	if testing.Short() {
		pairs = 2 // a smoke run: the figures mean nothing
	}
	if v, err := strconv.Atoi(os.Getenv("TDSEXTRACT_BENCH_PAIRS")); err == nil && v > 1 {
		pairs = v
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sink := &checksumSink{}
	for i := 0; i < b.N; i++ {
		var wallR, cpuR [3][]float64
		var ns [3][]float64
		var sum0 uint64
		var rows int64
		for p := 0; p < pairs; p++ {
			var wall, cpu [3]time.Duration
			for _, k := range []int{0, 1, 2, 2, 1, 0} {
				c0 := cpuTime()
				d, n := runLeg(b, c, benchLegs[k], sink)
				cpu[k] += cpuTime() - c0
				if sum0 == 0 {
					sum0, rows = sink.sum, n
				} else if sink.sum != sum0 || n != rows {
					b.Fatalf("leg %s: checksum %x rows %d, want %x %d", benchLegs[k].name, sink.sum, n, sum0, rows)
				}
				wall[k] += d
			}
			if p == 0 {
				continue // warm-up
			}
			for k := 1; k < 3; k++ {
				wallR[k] = append(wallR[k], float64(wall[k])/float64(wall[0]))
				cpuR[k] = append(cpuR[k], float64(cpu[k])/float64(cpu[0]))
			}
			for k := range wall {
				ns[k] = append(ns[k], float64(wall[k])/2/float64(rows))
			}
		}
		med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
		b.ReportMetric(med(wallR[1]), "lazy/off-wall")
		b.ReportMetric(med(cpuR[1]), "lazy/off-cpu")
		b.ReportMetric(med(wallR[2]), "eager/off-wall")
		b.ReportMetric(med(cpuR[2]), "eager/off-cpu")
		b.ReportMetric(med(ns[0]), "ns/row-off")
		b.ReportMetric(med(ns[1]), "ns/row-lazy")
		b.ReportMetric(med(ns[2]), "ns/row-eager")
		b.Logf("rows %d checksum %x; pairs %d; network reads %d, SetReadDeadline calls by the waiter %d (eager legs not counted)", rows, sum0, pairs-1, c.w.reads, c.w.rearms)
		for k := 1; k < 3; k++ {
			b.Logf("%s/off wall min %.4f med %.4f max %.4f; cpu min %.4f med %.4f max %.4f", benchLegs[k].name,
				slices.Min(wallR[k]), med(wallR[k]), slices.Max(wallR[k]), slices.Min(cpuR[k]), med(cpuR[k]), slices.Max(cpuR[k]))
		}
	}
}

// BenchmarkDeadlineABBA streams poc48 (200,000 rows) from the test server
// on loopback (plaintext, 32 KiB packets) into a checksumming sink with the
// deadline off, lazily armed (the engine's behaviour) and eagerly re-armed
// per row (the per-row timer the lazy deadline avoids).
//
//	go test ./engine/session -run '^$' -bench DeadlineABBA -benchtime 1x
func BenchmarkDeadlineABBA(b *testing.B) {
	_, cfg := startServer(b, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
	cfg.Encrypt = EncryptDisable
	cfg.ReadAhead = -1 // price the socket deadline on the decoding thread, as before read-ahead
	abba(b, mustConnect(b, cfg))
}

// teeConn records what is read from a connection.
type teeConn struct {
	net.Conn
	rec *bytes.Buffer
}

func (t teeConn) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	t.rec.Write(p[:n])
	return n, err
}

// BenchmarkDeadlineABBAReplay is BenchmarkDeadlineABBA with the server's
// cost taken out: the test server's response bytes for poc48 are recorded
// once, then replayed over a real loopback TCP socket by a goroutine that
// only writes them, so the client's share of the time (and thus the
// deadline's relative cost) is as large as it can be.
//
//	go test ./engine/session -run '^$' -bench DeadlineABBAReplay -benchtime 1x
func BenchmarkDeadlineABBAReplay(b *testing.B) {
	_, cfg := startServer(b, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
	cfg.Encrypt = EncryptDisable
	cfg.ReadAhead = -1 // price the socket deadline on the decoding thread, as before read-ahead
	var rec bytes.Buffer
	cfg.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		return teeConn{nc, &rec}, err
	}
	src := mustConnect(b, cfg)
	rec.Reset()
	if _, err := src.Query(context.Background(), Query{SQL: "SELECT * FROM dbo.poc48"}, nil); err != nil {
		b.Fatal(err)
	}
	resp := bytes.Clone(rec.Bytes())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		sc, err := ln.Accept()
		if err != nil {
			return
		}
		defer sc.Close()
		var hdr [decode.HeaderLen]byte
		for {
			for { // read one request message
				if _, err := io.ReadFull(sc, hdr[:]); err != nil {
					return
				}
				if _, err := io.CopyN(io.Discard, sc, int64(binary.BigEndian.Uint16(hdr[2:]))-decode.HeaderLen); err != nil {
					return
				}
				if hdr[1]&decode.StatusEOM != 0 {
					break
				}
			}
			if _, err := sc.Write(resp); err != nil {
				return
			}
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	c := &Conn{maxBuf: 2*maxPacketSize + decode.DefaultResidencyCap, cancelTimeout: DefaultCancelTimeout}
	c.packetSize = maxPacketSize
	c.initIO(c.setRaw(raw))
	defer c.Close()
	abba(b, c)
}

// BenchmarkQueryPoc48 reports ns/row and allocations for one leg at a time.
func BenchmarkQueryPoc48(b *testing.B) {
	_, cfg := startServer(b, func(s *tdsserver.Config) { s.Encryption = tdsserver.EncryptNotSup })
	cfg.Encrypt = EncryptDisable
	cfg.ReadAhead = -1 // price the socket deadline on the decoding thread, as before read-ahead
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

}
