//go:build linux || darwin

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread is the CPU time of the calling OS thread, to the nanosecond
// (CLOCK_THREAD_CPUTIME_ID); lock the goroutine to its thread to measure
// one goroutine's work.
func Thread() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
