package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// A terminal that reports no size (a pty nobody sized: 0 columns, 0 rows)
// still gets its bars, 80 columns wide, not nothing.
func TestBarOnZeroSizeTerminal(t *testing.T) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	defer slave.Close()
	if ws, err := unix.IoctlGetWinsize(int(slave.Fd()), unix.TIOCGWINSZ); err != nil || ws.Col != 0 {
		t.Skipf("the new pty is not 0 columns wide: %+v %v", ws, err)
	}
	if !isTerminal(slave) {
		t.Fatal("a pty is not a terminal")
	}
	var mu sync.Mutex
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			k, err := master.Read(buf)
			mu.Lock()
			got.Write(buf[:k])
			mu.Unlock()
			if err != nil {
				return // the slave closed
			}
		}
	}()
	srv := startServer(t, map[string]int64{"dbo.poc48": 500})
	sum, drawn := barRun(t, slave, func() string {
		// what the bar drew reaches the master side after a moment
		for i := 0; i < 50; i++ {
			mu.Lock()
			s := got.String()
			mu.Unlock()
			if strings.Contains(s, "500 rows") {
				return s
			}
			unix.Nanosleep(&unix.Timespec{Nsec: 20e6}, nil)
		}
		mu.Lock()
		defer mu.Unlock()
		return got.String()
	}, srv, "", "dbo.poc48")
	if !strings.Contains(drawn, "poc48") || !strings.Contains(drawn, "500 rows") || sum.Extracts[0].Rows != 500 {
		t.Fatalf("a zero-size terminal shows %q", drawn)
	}
}
