//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the user+system CPU time of this process so far.
func Process() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// Children is the user+system CPU time of the child processes that have
// ended and been waited for.
func Children() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
