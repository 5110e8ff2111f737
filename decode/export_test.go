package decode

// SetFastPaths turns the row loop's inlined cases on or off for plans made
// afterwards (for the A/B benchmark in stream_bench_test.go).
func SetFastPaths(on bool) { planFastPaths = on }

// newTextDecoder returns the decoder of char data under collation c.
func newTextDecoder(c Collation) *textDecoder {
	d := &textDecoder{}
	d.init(c)
	return d
}
