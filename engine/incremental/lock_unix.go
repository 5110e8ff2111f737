//go:build unix

package incremental

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes an exclusive, non-blocking flock on path (created when
// missing). The kernel drops it when the process ends, however it ends, so
// a killed run never leaves a stale lock.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("incremental: state lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("incremental: state lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
