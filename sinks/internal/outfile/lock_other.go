//go:build !unix

package outfile

import (
	"errors"
	"os"
)

// errLockUnsupported: without flock the owner of a temporary cannot be
// proven dead, so leftovers of killed runs are not removed on this
// platform.
// locksSupported: this platform has flock.
const locksSupported = false

var errLockUnsupported = errors.New("file locks are not supported on this platform")

func tryLock(*os.File) (bool, error) { return false, errLockUnsupported }
