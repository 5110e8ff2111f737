//go:build race

package decode

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back, so a test that relies on a pool's reuse to allocate nothing
// cannot count allocations.
const raceEnabled = true
