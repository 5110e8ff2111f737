// Package layers holds no code: its test keeps the layering that
// docs/ARCHITECTURE.md describes true as the code grows. Each rule is a
// set of packages and what their (non-test) dependency closure may not
// contain, read from `go list -deps`, so an import added three packages
// down is caught as surely as a direct one.
package layers
