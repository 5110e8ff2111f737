// Package outfile gives the file sinks atomic publication of a set of
// numbered output files: each file is written under a temporary name in its
// final directory, fsynced and closed, and renamed to its final name only
// when the whole extract succeeded. On failure every temporary file (and
// any file already renamed by a failed Publish) is removed, so nothing
// partial is ever left under a final name. The temporaries of a run that
// was killed are removed by the next run of the same output, and only
// those (owner.go). IfExists (replace, skip, fail) says what happens to an
// output that exists already.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tdsextract/tdsextract/sinks"
)

// ResolvePath turns a sink's path option into the final path of the first
// (or only) file of an extract:
//
//   - "" means the current directory;
//   - a path ending in a separator, or naming an existing directory, gets
//     "<extract><ext>" appended;
//   - otherwise "{extract}", "{schema}" and "{table}" in the path are
//     replaced (a path without placeholders names one file).
func ResolvePath(path, extract, schema, table, ext string) string {
	if path == "" {
		path = "."
	}
	if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return filepath.Join(path, extract+ext)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, extract+ext)
	}
	r := strings.NewReplacer("{extract}", extract, "{schema}", schema, "{table}", table)
	return r.Replace(path)
}

// Numbered inserts a 4-digit (or wider) part number before the first of the
// known extensions of base, e.g. out/t.csv.gz, 1 -> out/t.0001.csv.gz.
func Numbered(final string, n int, exts ...string) string {
	return tagged(final, fmt.Sprintf(".%04d", n), exts)
}

// tagged inserts tag before the first of the known extensions of final's
// base name (at its end when it has none of them).
func tagged(final, tag string, exts []string) string {
	dir, base := filepath.Split(final)
	for _, ext := range exts {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return dir + strings.TrimSuffix(base, ext) + tag + ext
		}
	}
	return dir + base + tag
}

// PartTag is how part i (0-based) of a partitioned extract appears in
// file names: 1-based, 4 digits or more ("0001").
func PartTag(part int) string { return fmt.Sprintf("%04d", part+1) }

// ResolveInfoPath is ResolvePath for the extract (or the part of a
// partitioned extract) info describes: "{part}" in path is replaced by the
// part's tag (PartTag), and a path without "{part}" for an extract of
// several parts gets ".part-NNNN" before the first of exts, so every part
// publishes its own files and none replaces another's.
func ResolveInfoPath(path string, info sinks.ExtractInfo, ext string, exts ...string) string {
	tag := PartTag(info.Part)
	hasTag := strings.Contains(path, "{part}")
	if hasTag {
		path = strings.ReplaceAll(path, "{part}", tag)
	}
	final := ResolvePath(path, info.Name, info.Schema, info.Table, ext)
	if info.Parts > 1 && !hasTag {
		final = tagged(final, ".part-"+tag, exts)
	}
	return final
}

var tmpSeq atomic.Uint64

// Counter passes writes on to W and counts the bytes written.
type Counter struct {
	W io.Writer
	N int64
}

func (c *Counter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// File is one output file being written under a temporary name.
type File struct {
	*os.File
	Tmp, Final string
	closed     bool
}

// create makes the directory of final if needed and opens a fresh
// temporary file next to it (same directory, so the later rename is
// atomic), named for this process (see owner.go).
func create(final string) (*File, error) {
	tmp := tempName(final, tmpSeq.Add(1))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create output file: %w", err)
	}
	return &File{File: f, Tmp: tmp, Final: final}, nil
}

// Finish fsyncs and closes the temporary file (it is not yet published).
func (f *File) Finish() error {
	if f.closed {
		return nil
	}
	f.closed = true
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("finish %s: %w", f.Final, err)
	}
	return nil
}

// Set is the files of one extract, in creation order.
type Set struct {
	Files []*File
	// IfExists says what Publish does about final names that exist: the
	// zero value is Replace. With Fail, Publish never overwrites a file
	// (not even one that appeared while the extract ran).
	IfExists IfExists
	// LockDir, when set, is a directory holding every file of the set
	// (the output root of a partitioned layout): the owner file (owner.go)
	// is kept there instead of in each file's directory, so that a set
	// spread over many directories holds one lock.
	LockDir string

	published []string
	owned     []string // directories whose owner file this set holds
	cleaned   map[string]bool
}

// Create adds a new temporary file for final. The first time the set
// writes into a directory it removes the temporaries of the same output
// that killed runs left there (RemoveOrphans).
func (s *Set) Create(final string) (*File, error) {
	for _, f := range s.Files {
		if f.Final == final {
			return nil, fmt.Errorf("output file %s would be written twice (use a path with {extract} or a directory)", final)
		}
	}
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	lockDir := dir
	if s.LockDir != "" {
		if rel, err := filepath.Rel(s.LockDir, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			lockDir = s.LockDir
		}
	}
	if !slices.Contains(s.owned, lockDir) {
		if err := acquireDir(lockDir); err != nil {
			return nil, fmt.Errorf("output directory %s: %w", lockDir, err)
		}
		s.owned = append(s.owned, lockDir)
	}
	if key := filepath.Join(dir, outputKey(filepath.Base(final))); !s.cleaned[key] {
		if s.cleaned == nil {
			s.cleaned = map[string]bool{}
		}
		s.cleaned[key] = true
		// Best effort: a leftover that cannot be removed is not a reason
		// to fail this run.
		_, _ = RemoveOrphans(final)
	}
	f, err := create(final)
	if err != nil {
		return nil, err
	}
	s.Files = append(s.Files, f)
	return f, nil
}

// release gives up the owner files once no temporary of the set is left.
func (s *Set) release() {
	for _, d := range s.owned {
		releaseDir(d)
	}
	s.owned = nil
}

// Publish finishes every file and renames each to its final name, then
// fsyncs the directories so the renames survive a crash. With IfExists
// Fail a final name that exists is an error (*ExistsError) and nothing of
// the set is left published.
func (s *Set) Publish() ([]string, error) {
	for _, f := range s.Files {
		if err := f.Finish(); err != nil {
			return nil, err
		}
	}
	dirs := map[string]bool{}
	for _, f := range s.Files {
		if err := s.rename(f); err != nil {
			return nil, err
		}
		s.published = append(s.published, f.Final)
		dirs[filepath.Dir(f.Final)] = true
	}
	for d := range dirs {
		if df, err := os.Open(d); err == nil {
			_ = df.Sync() // best effort: not every file system supports directory fsync
			_ = df.Close()
		}
	}
	out := make([]string, len(s.published))
	copy(out, s.published)
	s.Files = nil
	s.published = nil
	s.release()
	return out, nil
}

// rename publishes one file: an atomic rename, or with IfExists Fail a
// hard link that fails when the final name exists, then removing the
// temporary name (where hard links are not supported: a check, then the
// rename).
func (s *Set) rename(f *File) error {
	if s.IfExists != Fail {
		if err := os.Rename(f.Tmp, f.Final); err != nil {
			return fmt.Errorf("publish %s: %w", f.Final, err)
		}
		return nil
	}
	err := os.Link(f.Tmp, f.Final)
	switch {
	case err == nil:
		_ = os.Remove(f.Tmp)
		return nil
	case errors.Is(err, fs.ErrExist):
		return &ExistsError{Path: f.Final}
	}
	if _, serr := os.Lstat(f.Final); serr == nil {
		return &ExistsError{Path: f.Final}
	}
	if err := os.Rename(f.Tmp, f.Final); err != nil {
		return fmt.Errorf("publish %s: %w", f.Final, err)
	}
	return nil
}

// Abort closes and removes every temporary file and every file a failed
// Publish already renamed. It is idempotent.
func (s *Set) Abort() error {
	var errs []error
	for _, f := range s.Files {
		if !f.closed {
			f.closed = true
			_ = f.File.Close()
		}
		if err := os.Remove(f.Tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, p := range s.published {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.Files = nil
	s.published = nil
	s.release()
	return errors.Join(errs...)
}
