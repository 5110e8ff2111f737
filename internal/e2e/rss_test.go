//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExportPeakRSS measures the peak resident set size of the tdsextract
// export process (getrusage of the child, ru_maxrss) for the memory claim
// of the README: exporting 10 million poc48 rows to CSV stays within the same bound
// as 100 thousand rows. It is a measurement, not an assertion, and is
// opt-in because it writes gigabytes:
//
//	TDSEXTRACT_RSS=1 go test ./internal/e2e/ -run TestExportPeakRSS -v -timeout 30m
//
// TDSEXTRACT_RSS_CASES narrows the cases, e.g. "csv:poc48:100000,csv:poc48:10000000,parquet:lineitem:10000000"
// (the default); TDSEXTRACT_RSS_DIR is the output directory (default a
// temporary directory; the files are removed after each case).
func TestExportPeakRSS(t *testing.T) {
	if os.Getenv("TDSEXTRACT_RSS") == "" {
		t.Skip("memory measurement is opt-in: set TDSEXTRACT_RSS=1")
	}
	bin := filepath.Join(t.TempDir(), "tdsextract")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/tdsextract")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := os.Getenv("TDSEXTRACT_RSS_CASES")
	if cases == "" {
		cases = "csv:poc48:100000,csv:poc48:10000000,parquet:lineitem:100000,parquet:lineitem:10000000"
	}
	base := os.Getenv("TDSEXTRACT_RSS_DIR")
	if base == "" {
		base = t.TempDir()
	}
	for _, c := range strings.Split(cases, ",") {
		p := strings.Split(c, ":")
		if len(p) != 3 {
			t.Fatalf("case %q: want sink:table:rows", c)
		}
		n, err := strconv.ParseInt(p[2], 10, 64)
		if err != nil {
			t.Fatalf("case %q: %v", c, err)
		}
		measureExport(t, bin, base, p[0], p[1], n)
	}
}

func measureExport(t *testing.T, bin, base, sink, table string, rows int64) {
	t.Helper()
	port := freePort(t)
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	srv := exec.Command(bin, "sample-server", "--quiet", "--listen", listen, "--rows", fmt.Sprintf("%s=%d", table, rows))
	srv.Stdout, srv.Stderr = os.Stderr, os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Kill() // our own child, by its pid
		_ = srv.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", listen, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sample-server did not listen on %s: %v", listen, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	out := filepath.Join(base, fmt.Sprintf("%s-%s-%d", sink, table, rows))
	defer os.RemoveAll(out)
	sumFile := out + ".summary.json"
	defer os.Remove(sumFile)
	args := []string{"export", "--quiet", "--source", "sqlserver://sa:Sample-Passw0rd@" + listen + "?database=sample&encrypt=disable",
		"--table", "dbo." + table, "--to", sink, "--out", out, "--summary-json", sumFile}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Errorf("%s %s: %v", bin, strings.Join(args, " "), err)
		return
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	var sum struct {
		Extracts []struct {
			Rows  int64 `json:"rows"`
			Sinks []struct {
				Bytes int64    `json:"bytes"`
				Files []string `json:"files"`
			} `json:"sinks"`
		} `json:"extracts"`
	}
	if b, err := os.ReadFile(sumFile); err != nil {
		t.Errorf("summary: %v", err)
	} else if err := json.Unmarshal(b, &sum); err != nil {
		t.Errorf("summary: %v", err)
	}
	var got, bytes int64
	if len(sum.Extracts) == 1 {
		got = sum.Extracts[0].Rows
		for _, s := range sum.Extracts[0].Sinks {
			bytes += s.Bytes
		}
	}
	if got != rows {
		t.Errorf("%s %s: exported %d rows, want %d", sink, table, got, rows)
	}
	t.Logf("peak RSS %s dbo.%s %d rows: %.1f MiB (ru_maxrss %d KiB), %.1fs wall, %.1fs user, %.1fs sys, %d output bytes; command: tdsextract sample-server --listen %s --rows %s=%d & tdsextract %s",
		sink, table, rows, float64(ru.Maxrss)/1024, ru.Maxrss, wall.Seconds(),
		time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), bytes,
		listen, table, rows, strings.Join(args, " "))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
