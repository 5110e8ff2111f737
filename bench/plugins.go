package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/plugins"
	"github.com/tdsextract/tdsextract/sinks"
)

// The plugin suite (-suite plugins): the cost of the plugin boundary. The
// same sink, a plugin that computes the harness's checksum (sum) over
// every value of every Arrow batch it receives, runs
//
//	plugin-inprocess   linked into the host (plugins.InProcess): the host
//	                   lays the batches out, the plugin reads each in the
//	                   decoding goroutine: no boundary
//	plugin-shm         as a process, batches in shared memory (the default)
//	plugin-grpc        as a process, batches as gRPC bytes (the fallback)
//
// beside tdsextract's checksum sink fed by the decoder directly. The
// checksum the plugin computes from Arrow must equal the decoder-side one:
// a leg that lost or changed a value cannot pass. Each rep is timed from
// the query to the plugin having taken every batch and prepared (Prepare),
// the process started before and ended after, untimed; CPU time counts the
// host process and the plugin process (its threads' schedstat). Legs are
// interleaved, forward and reverse order in turn, the first rep discarded.
//
// The plugin is this binary: started by a plugin host (go-plugin's magic
// cookie in its environment) it serves the checksum plugin instead of
// running the harness (servePluginIfAsked).

// pluginShapes are the shapes whose types the checksum reaches through
// Arrow unchanged (no datetime2(7), whose 100 ns digit the default
// microsecond timestamps drop, and no sql_variant).
var pluginShapes = map[string]bool{"poc48": true, "odbc5": true, "lineitem": true, "lob": true}

// servePluginIfAsked serves the checksum plugin and exits when a plugin
// host started this binary.
func servePluginIfAsked() {
	if os.Getenv(plugins.Handshake.MagicCookieKey) == "" {
		return
	}
	plugins.Serve(checksumPlugin())
	os.Exit(0)
}

func checksumPlugin() plugins.Plugin {
	return plugins.Plugin{
		Name:        "bench-checksum",
		Description: "the bench harness's checksum over every value of every batch",
		Options: sinks.Spec{{Name: "checksum_file", Type: sinks.String, Required: true,
			Doc: "where Prepare writes the checksum and the row count"}},
		New: func() plugins.Sink { return &arrowSum{} },
	}
}

// arrowSum hashes every value of the batches it receives as sumSink hashes
// the decoder's values (checksum.go), reading them with arrow-go.
type arrowSum struct {
	sumSink // its hash, and its decimal form (Decimal)
	file    string
	rows    int64
	cols    []sumCol
}

// sumCol is one column of a batch: its array, and the companion offset
// array of a datetimeoffset.
type sumCol struct {
	a      arrow.Array
	offset *array.Int16
	tag    byte // 0x04 text, 0x05 binary, 0x06 uniqueidentifier
	scale  int32
}

func (s *arrowSum) Open(_ context.Context, req plugins.OpenRequest) error {
	s.file = req.Options["checksum_file"].(string)
	for _, f := range req.Schema.Fields() {
		if _, companion := f.Metadata.GetValue(plugins.MetaCompanionOf); companion {
			continue
		}
		kind, _ := f.Metadata.GetValue(plugins.MetaKind)
		if kind == "sql_variant" || kind == "datetime2" && strings.HasSuffix(mustMeta(f, plugins.MetaType), "(7)") {
			return fmt.Errorf("bench-checksum: column %s (%s) does not reach Arrow unchanged", f.Name, kind)
		}
		c := sumCol{tag: 0x04}
		switch {
		case kind == "uniqueidentifier":
			c.tag = 0x06
		case f.Type.ID() == arrow.BINARY || f.Type.ID() == arrow.FIXED_SIZE_BINARY:
			c.tag = 0x05
		}
		if d, ok := f.Type.(*arrow.Decimal128Type); ok {
			c.scale = d.Scale
		}
		s.cols = append(s.cols, c)
	}
	return nil
}

func mustMeta(f arrow.Field, key string) string {
	v, _ := f.Metadata.GetValue(key)
	return v
}

func (s *arrowSum) WriteBatch(_ context.Context, rec arrow.RecordBatch) error {
	k := 0
	for i := range s.cols {
		s.cols[i].a = rec.Column(k)
		k++
		if k < int(rec.NumCols()) {
			if _, ok := rec.Schema().Field(k).Metadata.GetValue(plugins.MetaCompanionOf); ok {
				s.cols[i].offset, _ = rec.Column(k).(*array.Int16)
				k++
			}
		}
	}
	n := int(rec.NumRows())
	for r := 0; r < n; r++ {
		for i := range s.cols {
			s.cell(&s.cols[i], r)
		}
		s.row()
	}
	s.rows += int64(n)
	return nil
}

// cell hashes one value in the canonical form of checksum.go.
func (s *arrowSum) cell(c *sumCol, r int) {
	if c.a.IsNull(r) {
		s.null()
		return
	}
	switch a := c.a.(type) {
	case *array.Boolean:
		s.int(b2i(a.Value(r)))
	case *array.Uint8:
		s.int(int64(a.Value(r)))
	case *array.Int16:
		s.int(int64(a.Value(r)))
	case *array.Int32:
		s.int(int64(a.Value(r)))
	case *array.Int64:
		s.int(a.Value(r))
	case *array.Float32:
		s.float(float64(a.Value(r)))
	case *array.Float64:
		s.float(a.Value(r))
	case *array.Decimal128:
		v := a.Value(r)
		d := decode.Decimal{Scale: uint8(c.scale)}
		if v.Sign() < 0 {
			d.Neg = true
			v = v.Negate()
		}
		d.Lo, d.Hi = v.LowBits(), uint64(v.HighBits())
		s.sumSink.Decimal(0, d)
	case *array.Date32:
		s.dateTime(int32(a.Value(r))+epochDays, 0)
	case *array.Time64:
		s.dateTime(0, int64(a.Value(r))/100)
	case *array.Timestamp:
		t := int64(a.Value(r))
		var ticks int64 // 100 ns since the epoch
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Millisecond:
			ticks = t * 10_000
		case arrow.Microsecond:
			ticks = t * 10
		default:
			ticks = t / 100
		}
		days := floorDiv(ticks, decode.TicksPerDay)
		ticks -= days * decode.TicksPerDay
		if c.offset != nil {
			s.dateTimeOffset(int32(days)+epochDays, ticks, c.offset.Value(r))
			return
		}
		s.dateTime(int32(days)+epochDays, ticks)
	case *array.String:
		s.str(c.tag, a.Value(r))
	case *array.Binary:
		s.bytes(c.tag, a.Value(r))
	case *array.FixedSizeBinary:
		s.bytes(c.tag, a.Value(r))
	default:
		s.str(0x04, c.a.ValueStr(r))
	}
}

var epochDays = decode.DateFromCivil(1970, 1, 1)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func (s *arrowSum) Prepare(context.Context) error {
	return os.WriteFile(s.file, []byte(fmt.Sprintf("%016x %d", s.total, s.rows)), 0o644)
}

func (s *arrowSum) Publish(context.Context) (plugins.Stats, error) {
	return plugins.Stats{Rows: s.rows}, nil
}

func (s *arrowSum) Abort(context.Context) error { return nil }

// pluginCPU is the CPU time of a process's threads so far (schedstat, in
// nanoseconds: the plugin is still running when a rep ends, so rusage of
// children cannot see it).
func pluginCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	ts, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var n int64
	for _, t := range ts {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			n += v
		}
	}
	return time.Duration(n)
}

// pluginPeakRSS is a process's peak resident memory (VmHWM), in bytes.
func pluginPeakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// pluginLeg runs query into a sink of f made with options.
func pluginLeg(name string, f sinks.Factory, options map[string]any, connect func() (*session.Conn, error), query, shape string, rss *int64) leg {
	return leg{name: name, run: func() (sample, error) {
		ctx := context.Background()
		tmp, err := os.CreateTemp("", "tdsx-bench-sum-")
		if err != nil {
			return sample{}, err
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		opts := map[string]any{"options": map[string]any{"checksum_file": tmp.Name()}}
		for k, v := range options {
			opts[k] = v
		}
		s, err := f.New(opts)
		if err != nil {
			return sample{}, err
		}
		defer s.Abort(ctx)
		if err := s.Open(ctx, sinks.ExtractInfo{Name: shape, Schema: "dbo", Table: shape}); err != nil {
			return sample{}, err
		}
		c, err := connect()
		if err != nil {
			return sample{}, err
		}
		defer c.Close()
		pid := plugins.ProcessID(s)
		p0 := pluginCPU(pid)
		w := startWatch()
		res, err := c.Query(ctx, session.Query{SQL: query}, s)
		if err == nil {
			err = s.(sinks.Preparer).Prepare(ctx)
		}
		smp := w.stop()
		if err != nil {
			return sample{}, err
		}
		smp.cpu += pluginCPU(pid) - p0
		if pid != 0 {
			*rss = max(*rss, pluginPeakRSS(pid))
		}
		if _, err := s.Publish(ctx); err != nil {
			return sample{}, err
		}
		b, err := os.ReadFile(tmp.Name())
		if err != nil {
			return sample{}, err
		}
		var sum string
		var rows int64
		if _, err := fmt.Sscan(string(b), &sum, &rows); err != nil || rows != res.Rows {
			return sample{}, fmt.Errorf("plugin checksum file %q (%v); query rows %d", b, err, res.Rows)
		}
		return smp.of(rows, sum), nil
	}}
}

// runPluginShape measures the plugin legs against tdsextract's checksum
// sink on one shape, over the server's recorded bytes (memory: the decoder
// alone, so the boundary's cost is not hidden behind a socket) or the
// test server (loopback).
func runPluginShape(addr, shape, mode string, reps int) ([]Result, error) {
	if !pluginShapes[shape] {
		return nil, fmt.Errorf("the plugin suite runs %s: shape %s has types the checksum cannot reach through Arrow unchanged", strings.Join(slices.Sorted(mapKeys(pluginShapes)), ", "), shape)
	}
	ctx := context.Background()
	query := "SELECT * FROM dbo." + shape
	var connect func() (*session.Conn, error)
	var wire int64
	switch mode {
	case "memory":
		sc, err := record(addr, func(p string) error { return tdsxQuery(p, query, &sumSink{}) })
		if err != nil {
			return nil, fmt.Errorf("recording tdsextract: %w", err)
		}
		wire = int64(len(sc.replies[len(sc.replies)-1]))
		connect = replayConnect(ctx, addr, sc)
	case "loopback":
		connect = func() (*session.Conn, error) { return session.Connect(ctx, engineConfig(addr)) }
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	inproc, err := plugins.InProcess(checksumPlugin())
	if err != nil {
		return nil, err
	}
	host := &plugins.Host{}
	var rssShm, rssGRPC, none int64
	legs := []leg{
		tdsxLeg("tdsextract", connect, query),
		pluginLeg("plugin-inprocess", inproc, nil, connect, query, shape, &none),
		pluginLeg("plugin-shm", host.Factory(), map[string]any{"path": self, "transport": "shm"}, connect, query, shape, &rssShm),
		pluginLeg("plugin-grpc", host.Factory(), map[string]any{"path": self, "transport": "grpc"}, connect, query, shape, &rssGRPC),
	}
	rs, err := interleave(shape, mode, legs, reps, wire)
	if err != nil {
		return nil, err
	}
	for i := range rs {
		switch rs[i].Leg {
		case "plugin-shm":
			rs[i].PluginPeakRSS = rssShm
		case "plugin-grpc":
			rs[i].PluginPeakRSS = rssGRPC
		}
	}
	return rs, nil
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// interleave runs legs reps times, forward and reverse order in turn,
// each timed run preceded by an untimed one of the same leg, the first
// rep discarded; every leg's checksum and rows must equal the first leg's.
func interleave(shape, mode string, legs []leg, reps int, wire int64) ([]Result, error) {
	cols := 0
	res := make([]legObs, len(legs))
	for r := 0; r < reps; r++ {
		for _, i := range repOrder(len(legs), r) {
			if r > 0 {
				if _, err := legs[i].run(); err != nil {
					return nil, fmt.Errorf("leg %s (warm-up): %w", legs[i].name, err)
				}
			}
			sm, err := legs[i].run()
			if err != nil {
				return nil, fmt.Errorf("leg %s: %w", legs[i].name, err)
			}
			o := &res[i]
			if r == 0 {
				o.rows, o.sum = sm.rows, sm.sum
				cols = max(cols, sm.cols)
				continue
			}
			if sm.sum != o.sum || sm.rows != o.rows {
				return nil, fmt.Errorf("leg %s: rep %d checksum %s/%d rows differs from %s/%d", legs[i].name, r, sm.sum, sm.rows, o.sum, o.rows)
			}
			o.record(r, sm, sm.rows)
		}
	}
	for i := range legs {
		if res[i].sum != res[0].sum || res[i].rows != res[0].rows {
			return nil, fmt.Errorf("CHECKSUM MISMATCH: %s %s (%d rows) vs %s %s (%d rows)", legs[i].name, res[i].sum, res[i].rows, legs[0].name, res[0].sum, res[0].rows)
		}
	}
	var out []Result
	for i, l := range legs {
		o := res[i]
		r := Result{Shape: shape, Mode: mode, Leg: l.name, Rows: o.rows, WireBytes: wire, Reps: len(o.ms),
			MedianMs: median(o.ms), MinMs: slices.Min(o.ms), MaxMs: slices.Max(o.ms), CPUMs: median(o.cpu),
			Checksum: o.sum, AllMs: o.ms, Columns: cols, OrderBias: median(o.rev) / median(o.fwd)}
		r.RowsPerS = float64(o.rows) / (r.MedianMs / 1000)
		r.NsPerRow = r.MedianMs * 1e6 / float64(o.rows)
		if r.Columns > 0 {
			r.NsPerCell = r.NsPerRow / float64(r.Columns)
		}
		r.CPUNsPerRow = r.CPUMs * 1e6 / float64(o.rows)
		if wire > 0 {
			r.MBPerS = float64(wire) / 1e6 / (r.MedianMs / 1000)
		}
		if len(o.allocs) > 0 {
			a, h := median(o.allocs), median(o.heap)
			r.AllocsPerRow, r.BytesPerRow = &a, &h
		}
		if i > 0 {
			pr := make([]float64, len(o.ms))
			for k := range o.ms {
				pr[k] = o.ms[k] / res[0].ms[k]
			}
			r.RatioToTDSX = &Ratio{OfMedians: r.MedianMs / median(res[0].ms), PairMed: median(pr), PairMin: slices.Min(pr), PairMax: slices.Max(pr)}
		}
		out = append(out, r)
	}
	return out, nil
}

// pluginSummary compares the plugin legs pair by pair: shm against
// in-process (the target: at least 0.70 of its rows/s) and against the
// gRPC fallback (at least 10×), each the median of the per-rep ratios.
func pluginSummary(rs []Result) string {
	var b strings.Builder
	b.WriteString("| shape | mode | in-process rows/s | shm rows/s | grpc rows/s | shm / in-process rows/s (median of pairs, min..max) | shm / grpc rows/s | CPU ns/row in-process / shm / grpc | plugin peak RSS shm / grpc MiB | checksum |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---|---|---|---|\n")
	keys, by := byShape(rs)
	ratio := func(num, den Result) string {
		pr := make([]float64, len(num.AllMs))
		for i := range pr {
			pr[i] = den.AllMs[i] / num.AllMs[i] // rows/s ratio = time ratio inverted
		}
		return fmt.Sprintf("%.2f (%.2f..%.2f)", median(pr), slices.Min(pr), slices.Max(pr))
	}
	for _, k := range keys {
		l := by[k]
		in, shm, grpc := l["plugin-inprocess"], l["plugin-shm"], l["plugin-grpc"]
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f | %s | %s | %.0f / %.0f / %.0f | %.0f / %.0f | %s |\n", k.shape, k.mode,
			in.RowsPerS, shm.RowsPerS, grpc.RowsPerS, ratio(shm, in), ratio(shm, grpc),
			in.CPUNsPerRow, shm.CPUNsPerRow, grpc.CPUNsPerRow,
			float64(shm.PluginPeakRSS)/(1<<20), float64(grpc.PluginPeakRSS)/(1<<20), shm.Checksum)
	}
	return b.String()
}
