package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
)

// barRun exports tables through the bar display drawn into out, and
// returns the summary and what was drawn.
func barRun(t *testing.T, out *os.File, read func() string, srv *tdsserver.Server, where string, tables ...string) (*engine.Summary, string) {
	t.Helper()
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	dir := t.TempDir()
	job := &engine.JobConfig{Name: "bar",
		Source: engine.SourceConfig{Connection: secret.Secret("sqlserver://sa@" + srv.Addr() + "?database=sample&encrypt=disable"), PasswordEnv: "TEST_PW"},
		Sinks:  []engine.SinkConfig{{Type: "csv", Options: map[string]any{"path": dir + "/"}}}}
	for _, tab := range tables {
		job.Extracts = append(job.Extracts, engine.ExtractConfig{Table: tab, Where: where})
	}
	prog := newBarProgress(out)
	sum, err := (&engine.Runner{Registry: builtinSinks(), Progress: prog}).Run(context.Background(), job)
	prog.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return sum, read()
}

// The bar and the summary agree: the same rows, the same rows/s, the
// same MiB; a filtered extract (no row estimate) still shows its rows.
func TestBarAgreesWithSummary(t *testing.T) {
	srv := startServer(t, map[string]int64{"dbo.poc48": 3000, "dbo.odbc5": 2000})
	for _, where := range []string{"", "id > 10"} {
		f, err := os.Create(filepath.Join(t.TempDir(), "bar"))
		if err != nil {
			t.Fatal(err)
		}
		sum, drawn := barRun(t, f, func() string { b, _ := os.ReadFile(f.Name()); return string(b) }, srv, where, "dbo.poc48", "dbo.odbc5")
		f.Close()
		for _, e := range sum.Extracts {
			// the summary's own columns agree: rows/s is rows over seconds
			if r := float64(e.Rows) / e.Duration.Seconds(); math.Abs(e.RowsPerSec-r) > 1e-6*r {
				t.Errorf("%s: %.3f rows/s, but %d rows in %v", e.Name, e.RowsPerSec, e.Rows, e.Duration)
			}
			want := fmt.Sprintf(`%s\s.*\s%d rows  %.0f rows/s  %s`, e.Name, e.Rows, e.RowsPerSec, regexp.QuoteMeta(mib(e.WireBytes)))
			if !regexp.MustCompile(want).MatchString(drawn) {
				t.Errorf("where %q: the bar lacks %q:\n%s", where, want, drawn)
			}
		}
		var b strings.Builder
		printSummary(&b, sum)
		for _, e := range sum.Extracts {
			want := fmt.Sprintf(`%s\s+%d\s+%.1f\s+\S+\s+%.0f\s`, e.Name, e.Rows, float64(e.WireBytes)/(1<<20), e.RowsPerSec)
			if !regexp.MustCompile(want).MatchString(b.String()) || !strings.Contains(b.String(), "wire MiB") || strings.Contains(b.String(), " MB") {
				t.Errorf("summary lacks %q:\n%s", want, b.String())
			}
		}
	}
}

// A stale estimate (fewer rows than the table has) neither ends the bar
// early nor shows more than 99% before the end; an unknown one shows rows.
func TestBarStats(t *testing.T) {
	st := &bar{est: 100}
	st.began.Store(time.Now().Add(-time.Hour).UnixNano())
	st.rows.Store(150)
	if s := st.stats(); !strings.Contains(s, "150 rows") || !strings.Contains(s, "99%") {
		t.Errorf("stale estimate: %q", s)
	}
	st = &bar{est: -1}
	st.rows.Store(7)
	st.bytes.Store(3 << 20)
	if s := st.stats(); !strings.Contains(s, " 7 rows") || !strings.Contains(s, "3.0 MiB") || strings.Contains(s, "%") || strings.Contains(s, "retr") {
		t.Errorf("unknown estimate: %q", s)
	}
	// A retried unit keeps its line, counts from 0 again and shows its retries.
	p := &barProgress{p: mpb.New(mpb.WithOutput(io.Discard)), bars: map[string]*bar{}}
	p.Start("t#0001", 1000, time.Now())
	p.Update("t#0001", 400, 1<<20)
	p.Retry("t#0001", 1, errors.New("connection reset"), time.Millisecond)
	p.Retry("t#0001", 2, errors.New("connection reset"), time.Millisecond)
	if st := p.get("t#0001"); st == nil || len(p.bars) != 1 || !strings.Contains(st.stats(), " 0 rows") || !strings.Contains(st.stats(), "2 retries") {
		t.Errorf("after two retries: %d bars, %v", len(p.bars), st)
	}
	p.Finish("t#0001", 1000, 2<<20, 5000, nil)
	p.Wait()
}
