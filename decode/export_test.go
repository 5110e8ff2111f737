package decode

// SetFastPaths turns the row loop's inlined cases on or off for plans made
// afterwards (for the A/B benchmark in stream_bench_test.go).
func SetFastPaths(on bool) { planFastPaths = on }
