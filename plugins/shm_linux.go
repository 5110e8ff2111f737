package plugins

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// sharedMemory is the batch ring of one plugin sink: an anonymous memory
// file (memfd) mapped by the host read-write, and a read-only descriptor
// of it handed to the plugin process as an extra file.
type sharedMemory struct {
	mem []byte
	rw  *os.File
	ro  *os.File // what the plugin gets; it can map the file but never write it
}

// newSharedMemory creates the memory file. Its pages are allocated as the
// host first writes them, and only ever up to size: memory stays flat
// however many batches go through.
func newSharedMemory(size int) (*sharedMemory, error) {
	fd, err := unix.MemfdCreate("tdsextract-batches", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	rw := os.NewFile(uintptr(fd), "tdsextract-batches")
	fail := func(what string, err error) (*sharedMemory, error) {
		rw.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return fail("ftruncate", err)
	}
	// Sealed at its size: a plugin that truncated the file would make the
	// host's next write to the mapping a SIGBUS.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fail("sealing the memory file", err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	// A second, read-only open file description of the same memory file;
	// without /proc the plugin gets the read-write one (the seals still hold).
	ro, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY, 0)
	if err != nil {
		ro = rw
	}
	return &sharedMemory{mem: mem, rw: rw, ro: ro}, nil
}

func (m *sharedMemory) close() {
	if m.mem != nil {
		_ = unix.Munmap(m.mem)
		m.mem = nil
	}
	if m.ro != m.rw {
		m.ro.Close()
	}
	m.rw.Close()
}

// mapReadOnly maps size bytes of the memory file at fd (the plugin side).
func mapReadOnly(fd uintptr, size int) ([]byte, func() error, error) {
	mem, err := unix.Mmap(int(fd), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap of the batch memory: %w", err)
	}
	return mem, func() error { return unix.Munmap(mem) }, nil
}
