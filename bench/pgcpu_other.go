//go:build !linux

package main

import "time"

// serverCPU needs /proc: not measured elsewhere.
func serverCPU(string) (time.Duration, bool) { return 0, false }
