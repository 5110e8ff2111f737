package postgres

import (
	"context"
	"io"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// directPipe is the hand-off design the sink was measured against: Read
// passes pgconn's own 64 KiB message buffer to the encoder, which writes
// the tuples straight into it (no memmove), and waits until it is full.
// pgconn has one such buffer and writes it to the socket before the next
// Read, so the encoder waits for every socket write. A tuple bigger than
// pgconn's buffer goes through a buffer of the encoder's, copied out in
// pieces.
type directPipe struct {
	copyState
	bufs    chan []byte // Read -> encoder: pgconn's empty buffer
	filled  chan int    // encoder -> Read: bytes filled (0: take pending instead)
	stop    chan struct{}
	ended   chan struct{}
	cur     []byte // the buffer the encoder holds
	pending []byte // an oversized buffer Read copies out over several calls
}

func newDirectPipe(int, int) copyStream {
	return &directPipe{copyState: copyState{done: make(chan struct{})}, bufs: make(chan []byte), filled: make(chan int),
		stop: make(chan struct{}), ended: make(chan struct{})}
}

func (d *directPipe) Read(p []byte) (int, error) {
	if len(d.pending) > 0 {
		n := copy(p, d.pending)
		d.pending = d.pending[n:]
		return n, nil
	}
	select {
	case d.bufs <- p[:0]:
	case <-d.stop:
		return 0, errAborted
	case <-d.ended:
		return 0, io.EOF
	}
	select {
	case n := <-d.filled:
		return n, nil
	case <-d.stop:
		return 0, errAborted
	}
}

func (d *directPipe) take(int) ([]byte, bool) {
	select {
	case p := <-d.bufs:
		d.cur = p
		return p, true
	case <-d.done:
		return nil, false
	}
}

func (d *directPipe) send(b []byte) bool {
	n := len(b)
	if cap(b) == 0 || cap(d.cur) == 0 || unsafe.SliceData(b[:1]) != unsafe.SliceData(d.cur[:1]) {
		d.pending, n = b, 0 // not pgconn's buffer: Read copies it out
	}
	select {
	case d.filled <- n:
		return true
	case <-d.done:
		return false
	}
}

func (d *directPipe) end()   { close(d.ended) }
func (d *directPipe) abort() { close(d.stop) }

// The hand-off design loads every table exactly like the owned buffers.
func TestDirectHandoffLoads(t *testing.T) {
	conn, url := pgConn(t)
	for _, name := range []string{"poc48", "lob_nvarchar"} {
		tb := sampleTable(t, name, 300)
		s := newSink(t, url, map[string]any{"table": "direct_" + name, "mode": "replace"})
		s.cfg.stream = newDirectPipe
		ctx := context.Background()
		if err := s.Open(ctx, sinks.ExtractInfo{Name: name}); err != nil {
			t.Fatal(err)
		}
		sinktest.StreamTable(t, tb, s, tb.Rows, false)
		if _, err := s.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		if n := count(t, conn, "SELECT count(*) FROM direct_"+name); n != tb.Rows {
			t.Fatalf("%s: %d rows", name, n)
		}
	}
}

// BenchmarkHandoff compares, on the same rows and in one process, the
// owned buffers (encode into the sink's buffers, one memmove into pgconn's)
// with the hand-off (encode straight into pgconn's buffer): each b.N is
// one A B B A set of loads of HANDOFF_ROWS rows (default 20000) through the
// real decoder into PostgreSQL; it reports the median over pairs of the
// hand-off's wall and CPU time over the owned buffers'.
//
//	HANDOFF_ROWS=200000 go test ./sinks/postgres -run '^$' -bench Handoff -benchtime 9x
func BenchmarkHandoff(b *testing.B) {
	_, url := pgConn(b)
	rows := int64(20000)
	if v, err := strconv.ParseInt(os.Getenv("HANDOFF_ROWS"), 10, 64); err == nil && v > 0 {
		rows = v
	}
	for _, name := range []string{"poc48", "odbc5", "temporal", "lineitem"} {
		b.Run(name, func(b *testing.B) {
			tb := sampleTable(b, name, 1<<30)
			block := min(rows, 4096)
			buf := tb.AppendRows(nil, 0, block, false)
			meta := decode.AppendColMetadata(nil, tb.Columns)
			load := func(direct bool) (wall, cpu time.Duration) {
				s := newSink(b, url, map[string]any{"table": "handoff_" + name, "mode": "truncate"})
				if direct {
					s.cfg.stream = newDirectPipe
				}
				ctx := context.Background()
				if err := s.Open(ctx, sinks.ExtractInfo{Name: name}); err != nil {
					b.Fatal(err)
				}
				st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
				_ = st.SetSink(s)
				t0, c0 := time.Now(), sinktest.CPUTime()
				sinktest.Feed(b, st, meta)
				for done := int64(0); done < rows; done += block {
					sinktest.Feed(b, st, buf)
				}
				if _, err := s.Publish(ctx); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0), sinktest.CPUTime() - c0
			}
			load(false) // creates the table; warms both
			load(true)
			var wr, cr []float64
			var ownNs, dirNs []float64
			for i := 0; i < b.N; i++ {
				for _, direct := range []bool{false, true, true, false} {
					w, c := load(direct)
					if direct {
						dirNs = append(dirNs, float64(w.Nanoseconds())/float64(rows))
						wr = append(wr, float64(w))
						cr = append(cr, float64(c))
					} else {
						ownNs = append(ownNs, float64(w.Nanoseconds())/float64(rows))
						wr = append(wr, -float64(w))
						cr = append(cr, -float64(c))
					}
				}
			}
			// pairs: (own, direct) and (direct, own) within each A B B A
			var wall, cpu []float64
			for i := 0; i+1 < len(wr); i += 2 {
				a, d := wr[i], wr[i+1]
				ca, cd := cr[i], cr[i+1]
				if a > 0 {
					a, d, ca, cd = d, a, cd, ca
				}
				wall = append(wall, d/-a)
				cpu = append(cpu, cd/-ca)
			}
			b.ReportMetric(med(wall), "direct/owned-wall")
			b.ReportMetric(med(cpu), "direct/owned-cpu")
			b.ReportMetric(med(ownNs), "owned-ns/row")
			b.ReportMetric(med(dirNs), "direct-ns/row")
		})
	}
}

func med(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
