package cputime

import (
	"time"

	"golang.org/x/sys/windows"
)

// Process is the user+system CPU time of this process so far.
func Process() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	// FILETIME counts 100 ns intervals.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100
}

// Children is not reported on Windows.
func Children() time.Duration { return 0 }
