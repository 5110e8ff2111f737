// Package atomicfile writes small files (state, checkpoints, manifests,
// summaries) so that a reader sees either the old content or all of the
// new, whatever happens to the writer: a temporary in the same directory,
// fsynced, renamed over the target, the directory fsynced.
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile replaces path with b atomically and durably, creating its
// directory when missing.
func WriteFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := WriteTemp(dir, filepath.Base(path), b)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// WriteTemp writes b, fsynced, to a new hidden temporary ".base.tmp-*" in
// dir and returns its name, for a caller that moves it into place itself
// (a rename, or a link that must not replace an existing file). On error
// nothing is left behind.
func WriteTemp(dir, base string, b []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// SyncDir makes a rename or removal in dir durable where the platform can.
// Some file systems (and Windows) cannot fsync a directory; the change
// stands there, only its durability across a power cut is weaker, so that
// is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}
