package main

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tdsextract/tdsextract/engine"
)

// progress reports extract progress: live bars on a terminal, structured
// logs otherwise, nothing but warnings with --quiet.
type progress interface {
	engine.Progress
	// Wait flushes the display after the run.
	Wait()
}

func newProgress(g *globalOpts) progress {
	if g.quiet {
		return quietProgress{}
	}
	if isTerminal(g.stderr) && !strings.EqualFold(g.logFormat, "json") {
		return newBarProgress(g.stderr)
	}
	return &logProgress{log: g.logger(), every: 10 * time.Second, last: map[string]time.Time{}}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type quietProgress struct{}

func (quietProgress) Start(string, int64, time.Time)              {}
func (quietProgress) Update(string, int64, int64)                 {}
func (quietProgress) Finish(string, int64, int64, float64, error) {}
func (quietProgress) Retry(string, int, error, time.Duration)     {}
func (quietProgress) Wait()                                       {}

// logProgress logs start, finish and, at most every `every`, progress.
type logProgress struct {
	log   *slog.Logger
	every time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
}

func (l *logProgress) Start(ex string, est int64, _ time.Time) {
	l.mu.Lock()
	l.last[ex] = time.Now()
	l.mu.Unlock()
	l.log.Info("extract started", "extract", ex, "estimated_rows", est)
}

func (l *logProgress) Update(ex string, rows, bytes int64) {
	l.mu.Lock()
	now := time.Now()
	due := now.Sub(l.last[ex]) >= l.every
	if due {
		l.last[ex] = now
	}
	l.mu.Unlock()
	if due {
		l.log.Info("extract progress", "extract", ex, "rows", rows, "wire_bytes", bytes)
	}
}

func (l *logProgress) Finish(ex string, rows, bytes int64, rate float64, err error) {
	if err != nil {
		// The error itself is printed once, when the command ends.
		l.log.Error("extract failed", "extract", ex, "rows", rows, "wire_bytes", bytes)
		return
	}
	l.log.Info("extract finished", "extract", ex, "rows", rows, "wire_bytes", bytes, "rows_per_s", math.Round(rate))
}

// Retry logs an attempt that failed and will run again, the error last
// (it is long), as the summary's retry lines do.
func (l *logProgress) Retry(ex string, attempt int, err error, delay time.Duration) {
	l.log.Warn("extract retrying", "extract", ex, "attempt", attempt, "delay", delay.Round(time.Millisecond), "error", err)
}

func (l *logProgress) Wait() {}

// barProgress draws one line per extract: its name, a bar (a percentage
// and an ETA when the row count is known; a spinner when it is not, as
// for a filtered extract), rows, rows/s and wire MiB, in the summary's
// units and by its definition of rows/s (engine.Progress).
type barProgress struct {
	p    *mpb.Progress
	mu   sync.Mutex
	bars map[string]*bar
}

func newBarProgress(out *os.File) *barProgress {
	cw := &sizedConsole{Writer: cupwriter.New(out, false)}
	return &barProgress{p: mpb.New(mpb.WithConsoleWriter(cw), mpb.WithAutoRefresh(), mpb.WithRefreshRate(200*time.Millisecond)), bars: map[string]*bar{}}
}

// sizedConsole is mpb's console writer, except that a terminal that
// reports no size (0 columns, as a pty nobody sized, or an error) is
// drawn 80 columns wide instead of not at all.
type sizedConsole struct{ *cupwriter.Writer }

func (c *sizedConsole) GetTermSize() (width, height int, err error) {
	width, height, err = c.Writer.GetTermSize()
	if err != nil || width <= 0 {
		width = 80
	}
	if err != nil || height <= 0 {
		height = 24
	}
	return width, height, nil
}

type bar struct {
	b     *mpb.Bar
	est   int64
	began atomic.Int64 // Unix nanoseconds: the current attempt's start
	// retries is the number of attempts that failed and were retried.
	retries atomic.Int32
	rows    atomic.Int64
	bytes   atomic.Int64 // wire bytes
	// final is the summary's rows/s once finished (as float64 bits).
	final    atomic.Uint64
	finished atomic.Bool
}

// rate is rows/s: the summary's once finished, else rows over the time
// since the extract began.
func (st *bar) rate() float64 {
	if st.finished.Load() {
		return math.Float64frombits(st.final.Load())
	}
	d := time.Since(time.Unix(0, st.began.Load())).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(st.rows.Load()) / d
}

// stats is the text after the bar.
func (st *bar) stats() string {
	rows := st.rows.Load()
	s := fmt.Sprintf(" %d rows  %.0f rows/s  %s", rows, st.rate(), mib(st.bytes.Load()))
	switch n := st.retries.Load(); n {
	case 0:
	case 1:
		s += "  1 retry"
	default:
		s += fmt.Sprintf("  %d retries", n)
	}
	if st.est > 0 && !st.finished.Load() {
		pct := min(99, 100*rows/st.est) // a stale estimate never shows 100% before the end
		s += fmt.Sprintf("  %d%%", pct)
		if r := st.rate(); r > 0 && rows < st.est {
			s += "  ETA " + (time.Duration(float64(st.est-rows)/r) * time.Second).Round(time.Second).String()
		}
	}
	return s
}

func (p *barProgress) Start(ex string, est int64, began time.Time) {
	if began.IsZero() {
		began = time.Now()
	}
	st := &bar{est: est}
	st.began.Store(began.UnixNano())
	name := mpb.PrependDecorators(decor.Name(ex, decor.WCSyncSpaceR))
	info := mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return st.stats() }))
	if est > 0 {
		// Total 0 leaves completion to Finish: a stale estimate lower than
		// the rows must not end the bar early.
		st.b = p.p.AddBar(0, name, info)
		st.b.SetTotal(est, false)
	} else {
		st.b = p.p.New(0, mpb.SpinnerStyle(), name, info)
	}
	p.mu.Lock()
	p.bars[ex] = st
	p.mu.Unlock()
}

func (p *barProgress) get(ex string) *bar {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bars[ex]
}

func (p *barProgress) Update(ex string, rows, bytes int64) {
	if st := p.get(ex); st != nil {
		st.rows.Store(rows)
		st.bytes.Store(bytes)
		if st.est > 0 {
			st.b.SetCurrent(min(rows, st.est))
		} else {
			st.b.SetCurrent(rows)
		}
	}
}

func (p *barProgress) Finish(ex string, rows, bytes int64, rate float64, err error) {
	st := p.get(ex)
	if st == nil {
		return
	}
	st.rows.Store(rows)
	st.bytes.Store(bytes)
	st.final.Store(math.Float64bits(rate))
	st.finished.Store(true)
	if err != nil {
		st.b.Abort(false)
		return
	}
	st.b.SetTotal(rows, true)
}

// Retry keeps the unit's line: it counts the retry, and the rows and
// rows/s start again with the next attempt, which begins after delay.
func (p *barProgress) Retry(ex string, _ int, _ error, delay time.Duration) {
	if st := p.get(ex); st != nil {
		st.retries.Add(1)
		st.rows.Store(0)
		st.began.Store(time.Now().Add(delay).UnixNano())
		st.b.SetCurrent(0)
	}
}

func (p *barProgress) Wait() { p.p.Wait() }

// mib is n bytes in MiB with one decimal: the unit of every byte count
// the CLI prints (the bar, the summary table, each sink's line).
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
