//go:build !linux

package plugins

import (
	"errors"
	"os"
)

// Shared memory is built on Linux's memfd; elsewhere batches travel as
// bytes over the plugin's gRPC channel.
var errNoSharedMemory = errors.New("shared memory batches need Linux (memfd)")

type sharedMemory struct {
	mem    []byte
	rw, ro *os.File
}

func newSharedMemory(int) (*sharedMemory, error) { return nil, errNoSharedMemory }

func (m *sharedMemory) close() {}

func mapReadOnly(uintptr, int) ([]byte, func() error, error) { return nil, nil, errNoSharedMemory }
