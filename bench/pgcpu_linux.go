//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverCPU is the CPU time (user and system) a PostgreSQL server has used
// so far: its postmaster's own and that of the children it has reaped
// (every backend of a finished session), plus the children still running
// (checkpointer, writers, autovacuum, open sessions). The difference
// across a leg is what the leg cost the server. dataDir holds
// postmaster.pid; ok is false when the server cannot be read.
func serverCPU(dataDir string) (time.Duration, bool) {
	if dataDir == "" {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, false
	}
	own, ok := procTicks(pm, true)
	if !ok {
		return 0, false
	}
	ticks := own.self + own.children
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == pm {
			continue
		}
		if t, ok := procTicks(pid, false); ok && t.ppid == pm {
			ticks += t.self
		}
	}
	// /proc counts in USER_HZ, 100 per second on every Linux ABI.
	return time.Duration(ticks) * (time.Second / 100), true
}

type ticks struct {
	ppid           int
	self, children int64
}

// procTicks reads utime+stime (and cutime+cstime) of a process from
// /proc/pid/stat.
func procTicks(pid int, withChildren bool) (ticks, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ticks{}, false
	}
	// The command name is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ticks{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state ppid ... utime(12) stime(13) cutime(14) cstime(15), 1-based from state.
	if len(f) < 15 {
		return ticks{}, false
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k-1], 10, 64); return v }
	t := ticks{ppid: int(n(2)), self: n(12) + n(13)}
	if withChildren {
		t.children = n(14) + n(15)
	}
	return t, true
}
