//go:build !unix

package main

import "os"

// peakRSS is not measured where getrusage does not exist: 0.
func peakRSS(*os.ProcessState) int64 { return 0 }
