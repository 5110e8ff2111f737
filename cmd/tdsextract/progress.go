package main

import (
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	if isTerminal(g.stderr) && g.logFormat != "json" {
		return &barProgress{p: mpb.New(mpb.WithOutput(g.stderr), mpb.WithRefreshRate(200*time.Millisecond)), bars: map[string]*bar{}}
	}
	return &logProgress{log: g.logger(), every: 10 * time.Second, last: map[string]time.Time{}}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

type quietProgress struct{}

func (quietProgress) Start(string, int64)                {}
func (quietProgress) Update(string, int64, int64)        {}
func (quietProgress) Finish(string, int64, int64, error) {}
func (quietProgress) Wait()                              {}

// logProgress logs start, finish and, at most every `every`, progress.
type logProgress struct {
	log   *slog.Logger
	every time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
}

func (l *logProgress) Start(ex string, est int64) {
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

func (l *logProgress) Finish(ex string, rows, bytes int64, err error) {
	if err != nil {
		// The error itself is printed once, when the command ends.
		l.log.Error("extract failed", "extract", ex, "rows", rows, "wire_bytes", bytes)
		return
	}
	l.log.Info("extract finished", "extract", ex, "rows", rows, "wire_bytes", bytes)
}

func (l *logProgress) Wait() {}

// barProgress draws one bar per extract: rows, rows/s, bytes and, when the
// row count is known, a percentage and ETA.
type barProgress struct {
	p    *mpb.Progress
	mu   sync.Mutex
	bars map[string]*bar
}

type bar struct {
	b     *mpb.Bar
	bytes atomic.Int64 // wire bytes, read by the bar's decorator
}

func (p *barProgress) Start(ex string, est int64) {
	total := est
	if total < 0 {
		total = 0 // unknown: a spinner-like bar without ETA
	}
	st := &bar{}
	decorators := []decor.Decorator{
		decor.CurrentNoUnit("%d rows"),
		decor.AverageSpeed(0, " %.0f rows/s"),
		decor.Any(func(decor.Statistics) string { return " " + humanBytes(st.bytes.Load()) }),
	}
	if est > 0 {
		decorators = append(decorators, decor.Percentage(decor.WCSyncSpace), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO))
	}
	st.b = p.p.AddBar(total, mpb.PrependDecorators(decor.Name(ex, decor.WCSyncSpaceR)), mpb.AppendDecorators(decorators...))
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
		st.bytes.Store(bytes)
		st.b.SetCurrent(rows)
	}
}

func (p *barProgress) Finish(ex string, rows, bytes int64, err error) {
	st := p.get(ex)
	if st == nil {
		return
	}
	st.bytes.Store(bytes)
	if err != nil {
		st.b.Abort(false)
		return
	}
	st.b.SetTotal(rows, true)
}

func (p *barProgress) Wait() { p.p.Wait() }

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return formatFloat(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return formatFloat(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return formatFloat(float64(n)/(1<<10)) + " KiB"
	}
	return formatFloat(float64(n)) + " B"
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
