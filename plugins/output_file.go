package plugins

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tdsextract/tdsextract/sinks"
)

// OutputFile is a file a plugin writes under a temporary name next to its
// final one, and renames only in Publish: readers never see a partial
// file, and Abort leaves nothing behind.
type OutputFile struct {
	*os.File
	// Final is the path the file gets on Publish.
	Final  string
	buf    *bufio.Writer
	closed bool
}

// OutputPath turns a plugin's path option into the file of an extract,
// as the built-in file sinks do: "" is the working directory; a path
// ending in a separator or naming a directory gets "<extract><ext>";
// otherwise "{extract}", "{schema}" and "{table}" are replaced.
func OutputPath(path, ext string, info sinks.ExtractInfo) string {
	if path == "" {
		path = "."
	}
	if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return filepath.Join(path, info.Name+ext)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, info.Name+ext)
	}
	return strings.NewReplacer("{extract}", info.Name, "{schema}", info.Schema, "{table}", info.Table).Replace(path)
}

// CreateOutput creates final's directory if needed and a temporary file
// in it (the same directory, so the rename in Publish is atomic).
func CreateOutput(final string) (*OutputFile, error) {
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(final)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &OutputFile{File: f, Final: final}, nil
}

// Buffered is a 1 MiB buffer in front of the file, for a plugin that
// writes in small pieces (a row, a message); Sync flushes it first. Write
// either through it or to the file, not both.
func (o *OutputFile) Buffered() *bufio.Writer {
	if o.buf == nil {
		o.buf = bufio.NewWriterSize(o.File, 1<<20)
	}
	return o.buf
}

// Sync flushes the Buffered writer and the file to disk and closes it:
// call it from Prepare, so a full disk fails the extract before any of its
// sinks publishes.
func (o *OutputFile) Sync() error {
	if o.closed {
		return nil
	}
	o.closed = true
	if o.buf != nil {
		if err := o.buf.Flush(); err != nil {
			_ = o.File.Close()
			return err
		}
	}
	if err := o.File.Sync(); err != nil {
		_ = o.File.Close()
		return err
	}
	return o.File.Close()
}

// Publish syncs the file (if Sync was not called), renames it to Final
// and returns its size.
func (o *OutputFile) Publish() (int64, error) {
	if err := o.Sync(); err != nil {
		return 0, err
	}
	if err := os.Rename(o.Name(), o.Final); err != nil {
		return 0, err
	}
	st, err := os.Stat(o.Final)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// PublishStats publishes the file and returns what a plugin that writes
// one file reports for it: rows, the file's size and its final path.
func (o *OutputFile) PublishStats(rows int64) (Stats, error) {
	size, err := o.Publish()
	if err != nil {
		return Stats{}, err
	}
	return Stats{Rows: rows, Bytes: size, Files: []string{o.Final}}, nil
}

// Abort closes and removes the temporary file. On a nil OutputFile (the
// extract failed before its file was created) it does nothing, so a
// plugin's Abort can call it unconditionally.
func (o *OutputFile) Abort() error {
	if o == nil {
		return nil
	}
	if !o.closed {
		o.closed = true
		_ = o.File.Close()
	}
	if err := os.Remove(o.Name()); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
