//go:build unix

package outfile

import (
	"errors"
	"os"
	"syscall"
)

// errLockUnsupported: the file system has no flock (some FUSE and SMB
// mounts); the owner of a temporary then cannot be proven dead.
// locksSupported: this platform has flock.
const locksSupported = true

var errLockUnsupported = errors.New("file locks are not supported here")

// tryLock takes an exclusive flock on f without waiting: true when taken,
// false when another open file (a live owner) holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EINVAL):
			return false, errLockUnsupported
		}
		return false, err
	}
}
