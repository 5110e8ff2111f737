//go:build !linux

package main

import "errors"

// The partitions suite reads another process's CPU time from /proc.
func serveSampleIfAsked() {}

func runPartitions(int64, int, string) {
	fail(errors.New("the partitions suite reads /proc: Linux only"))
}
