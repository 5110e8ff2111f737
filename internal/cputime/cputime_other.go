//go:build !unix && !windows

package cputime

import "time"

// Process is not reported on this platform.
func Process() time.Duration { return 0 }

// Children is not reported on this platform.
func Children() time.Duration { return 0 }
