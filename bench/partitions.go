//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
)

// The partitions suite: one table exported by the engine as one unit and
// as two key-range units on two sessions, interleaved A B B A, with the
// sample server in a process of its own so that its CPU time (from
// /proc/<pid>/stat) is told apart from the exporter's (getrusage). On a
// machine where the server shares the cores with the exporter, the server's
// share says how much of the gain a real, separate SQL Server would leave.

// benchServerEnv, when set in the environment to a row count, makes this
// binary a sample server for the partitions suite: it prints its address
// and serves until stdin closes.
const benchServerEnv = "TDSEXTRACT_BENCH_SERVE_POC48"

func serveSampleIfAsked() {
	v := os.Getenv(benchServerEnv)
	if v == "" {
		return
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"dbo.poc48": n}}),
		Encryption: tdsserver.EncryptNotSup, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fail(err)
	}
	fmt.Println(srv.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
	os.Exit(0)
}

// countSink counts rows and keeps nothing: the legs measure fetching and
// decoding, not a destination.
type countSink struct {
	decode.Nop
	rows int64
}

func (s *countSink) EndRow() error                                 { s.rows++; return nil }
func (s *countSink) Open(context.Context, sinks.ExtractInfo) error { return nil }
func (s *countSink) Publish(context.Context) (sinks.Stats, error) {
	return sinks.Stats{Rows: s.rows}, nil
}
func (s *countSink) Abort(context.Context) error { return nil }

// procCPU is a process's user+system CPU time from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces, in parens).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(ut+st) * (time.Second / 100), nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type partLeg struct {
	wall, server, client time.Duration
	rows                 int64
}

func runPartitions(rows int64, reps int, md string) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchServerEnv+"="+strconv.FormatInt(rows, 10))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	var addr string
	if _, err := fmt.Fscanln(out, &addr); err != nil {
		fail(fmt.Errorf("sample server: %w", err))
	}
	reg, err := sinks.NewRegistry(sinks.Factory{Name: "count", New: func(map[string]any) (sinks.Sink, error) { return &countSink{}, nil }})
	if err != nil {
		fail(err)
	}
	state, err := os.MkdirTemp("", "tdsextract-bench-state-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(state)
	run := func(parts int, rep int) partLeg {
		ex := engine.ExtractConfig{Table: "dbo.poc48", Sinks: []engine.SinkConfig{{Type: "count"}}}
		if parts > 1 {
			ex.Partition = map[string]any{"column": "id", "count": parts}
		}
		// Both legs keep checkpoints (and so the value checksum), so they
		// differ only in the number of units.
		job := &engine.JobConfig{Name: "bench", Parallel: parts, StateDir: filepath.Join(state, fmt.Sprintf("%d-%d", parts, rep)),
			Source:   engine.SourceConfig{Connection: secret.Secret("sqlserver://" + benchUser + "@" + addr + "?database=sample&encrypt=disable&packet+size=32767"), PasswordEnv: "TDSEXTRACT_BENCH_PW"},
			Extracts: []engine.ExtractConfig{ex}}
		s0, c0 := mustCPU(cmd.Process.Pid), selfCPU()
		t0 := time.Now()
		sum, err := (&engine.Runner{Registry: reg}).Run(context.Background(), job)
		wall := time.Since(t0)
		if err != nil {
			fail(err)
		}
		s1, c1 := mustCPU(cmd.Process.Pid), selfCPU()
		return partLeg{wall: wall, server: s1 - s0, client: c1 - c0, rows: sum.Extracts[0].Rows}
	}
	os.Setenv("TDSEXTRACT_BENCH_PW", benchPass)
	var ratios, serverShare1, serverShare2, busy1, busy2, rate1, rate2 []float64
	for rep := 0; rep < reps; rep++ {
		// A B B A: each pair's ratio sees the same machine load.
		a1 := run(1, 4*rep)
		b1 := run(2, 4*rep+1)
		b2 := run(2, 4*rep+2)
		a2 := run(1, 4*rep+3)
		if a1.rows != rows || b1.rows != rows {
			fail(fmt.Errorf("legs read %d and %d rows, want %d", a1.rows, b1.rows, rows))
		}
		if rep == 0 {
			continue // warm-up
		}
		for _, p := range [][2]partLeg{{a1, b1}, {a2, b2}} {
			a, b := p[0], p[1]
			ratios = append(ratios, a.wall.Seconds()/b.wall.Seconds())
			rate1 = append(rate1, float64(rows)/a.wall.Seconds())
			rate2 = append(rate2, float64(rows)/b.wall.Seconds())
			serverShare1 = append(serverShare1, a.server.Seconds()/(a.server+a.client).Seconds())
			serverShare2 = append(serverShare2, b.server.Seconds()/(b.server+b.client).Seconds())
			busy1 = append(busy1, (a.server+a.client).Seconds()/a.wall.Seconds())
			busy2 = append(busy2, (b.server+b.client).Seconds()/b.wall.Seconds())
		}
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	spread := func(v []float64) string {
		s := slices.Clone(v)
		slices.Sort(s)
		return fmt.Sprintf("%.2f..%.2f", s[0], s[len(s)-1])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# partitions: dbo.poc48, %d rows, 1 unit vs 2 key-range units on 2 sessions\n\n", rows)
	fmt.Fprintf(&b, "%d pairs (A B B A, the first repetition discarded), %d CPUs (runtime.NumCPU), sample server in its own process.\n\n", len(ratios), runtime.NumCPU())
	fmt.Fprintln(&b, "| | 1 unit | 2 units |")
	fmt.Fprintln(&b, "| --- | ---: | ---: |")
	fmt.Fprintf(&b, "| rows/s (median) | %.0f | %.0f |\n", med(rate1), med(rate2))
	fmt.Fprintf(&b, "| sample server's share of the CPU time used (median) | %.0f%% | %.0f%% |\n", 100*med(serverShare1), 100*med(serverShare2))
	fmt.Fprintf(&b, "| cores busy, server and exporter together (median) | %.2f | %.2f |\n\n", med(busy1), med(busy2))
	fmt.Fprintf(&b, "Speed-up of 2 units over 1 (within-pair ratio of wall times): median %.2f, range %s.\n", med(ratios), spread(ratios))
	fmt.Print(b.String())
	if md != "" {
		if err := os.WriteFile(md, []byte(b.String()), 0o644); err != nil {
			fail(err)
		}
	}
}

func mustCPU(pid int) time.Duration {
	d, err := procCPU(pid)
	if err != nil {
		fail(err)
	}
	return d
}
