// Package cputime reads the CPU time benchmarks report beside wall time: on
// a machine shared with other work it is the steadier measure. Where a
// platform does not report a figure the functions return 0 (or ok false),
// so benchmarks and the bench harness build and run everywhere and simply
// leave the figure out.
package cputime
