//go:build !linux && !darwin

package cputime

import "time"

// Thread reports no per-thread CPU time outside Linux and macOS.
func Thread() (time.Duration, bool) { return 0, false }
