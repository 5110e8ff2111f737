package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Burning CPU on this goroutine advances the process's CPU time and, where
// reported, the thread's; neither goes backwards.
func TestCPUTimeAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0 := Process()
	t0, thread := Thread()
	x := 1.0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		for i := 0; i < 1000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	if x == 0 {
		t.Log(x)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		if p1 := Process(); p1 <= p0 {
			t.Errorf("process CPU time went from %v to %v while spinning", p0, p1)
		}
	}
	if (runtime.GOOS == "linux" || runtime.GOOS == "darwin") && !thread {
		t.Fatal("no thread CPU time on Linux or macOS")
	}
	if thread {
		if t1, _ := Thread(); t1 <= t0 {
			t.Errorf("thread CPU time went from %v to %v while spinning", t0, t1)
		}
	}
	if Children() < 0 {
		t.Error("negative children CPU time")
	}
}
