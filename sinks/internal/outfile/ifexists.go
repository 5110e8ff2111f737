package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tdsextract/tdsextract/sinks"
)

// IfExists is what a file sink does when its output exists already (from an
// earlier run):
//
//   - Replace (the default): write the new output beside it and replace it
//     atomically when the extract succeeds; the numbered parts of the old
//     output beyond the new one's are removed then (RemoveStaleParts). A
//     failed run publishes nothing and leaves the old output as it was,
//     complete, so only the exit status and the run summary say that it
//     is not this run's.
//   - Skip: leave the existing output alone and do not write this sink
//     (the extract does not run at all when every sink skips).
//   - Fail: the extract fails before it writes; and it never overwrites a
//     file that appears while it runs.
type IfExists string

const (
	Replace IfExists = "replace"
	Skip    IfExists = "skip"
	Fail    IfExists = "fail"
)

// IfExistsOption declares the if_exists option of a file sink's Spec.
var IfExistsOption = sinks.Option{Name: "if_exists", Type: sinks.Enum, Values: []string{string(Replace), string(Skip), string(Fail)}, Default: string(Replace),
	Doc: "When the output exists: `replace` it atomically once the extract succeeds (the old numbered parts the new output does not cover are removed; a failed run leaves the old output as it was), `skip` the sink (no query runs when every sink skips), or `fail` the extract (nothing is ever overwritten)."}

// ParseIfExists reads the if_exists option ("" is Replace).
func ParseIfExists(s string) (IfExists, error) {
	switch m := IfExists(strings.ToLower(strings.TrimSpace(s))); m {
	case "", Replace:
		return Replace, nil
	case Skip, Fail:
		return m, nil
	}
	return "", fmt.Errorf("if_exists %q: use replace, skip or fail", s)
}

// ExistsError is an output file that exists where IfExists is Fail.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("output %s exists (if_exists: fail): remove it, or set if_exists: replace or skip", e.Path)
}

// Existing returns the first file of the output whose (unnumbered) final
// name is final that exists: final itself or its first numbered part.
func Existing(final string, exts ...string) (string, bool) {
	for _, p := range []string{final, Numbered(final, 1, exts...)} {
		if _, err := os.Lstat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// Check applies m before a sink writes the output whose final name is
// final: nil to go on, an error wrapping sinks.ErrSkip to skip the sink,
// or an *ExistsError.
func (m IfExists) Check(final string, exts ...string) error {
	if m == Replace || m == "" {
		return nil
	}
	p, ok := Existing(final, exts...)
	if !ok {
		return nil
	}
	if m == Skip {
		return &skipError{path: p}
	}
	return &ExistsError{Path: p}
}

// skipError says why a sink skips; it is a sinks.ErrSkip.
type skipError struct{ path string }

func (e *skipError) Error() string { return "output " + e.path + " exists (if_exists: skip)" }
func (e *skipError) Unwrap() error { return sinks.ErrSkip }

// RemoveStaleParts removes what an earlier run of the output final left
// that this run's files did not replace: with split false (this run wrote
// final itself) its numbered parts 1, 2, ... as long as they follow each
// other; with split true (this run wrote parts 1..parts) final itself and
// the parts after the last one, as long as they follow each other. The
// numbers stop at the first gap, so files of other origins are left alone.
func RemoveStaleParts(final string, split bool, parts int, exts ...string) ([]string, error) {
	var removed []string
	var errs []error
	rm := func(p string) bool {
		err := os.Remove(p)
		switch {
		case err == nil:
			removed = append(removed, p)
			return true
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
		return false
	}
	first := 1
	if split {
		rm(final)
		first = parts + 1
	}
	for n := first; rm(Numbered(final, n, exts...)); n++ {
	}
	return removed, errors.Join(errs...)
}

// Begin applies the if_exists option (as resolved text) to a set before
// its sink writes the output whose (unnumbered) final name is final: the
// set takes the mode, and the result is Check's (nil, a skip, or an
// *ExistsError). A file sink calls it from Open.
func (s *Set) Begin(ifExists, final string, exts ...string) error {
	m, err := ParseIfExists(ifExists)
	if err != nil {
		return err
	}
	s.IfExists = m
	return m.Check(final, exts...)
}

// BeginDir is Begin for an output that is a directory tree (a partitioned
// layout rooted at root): it exists when root holds anything.
func (s *Set) BeginDir(ifExists, root string) error {
	m, err := ParseIfExists(ifExists)
	if err != nil {
		return err
	}
	s.IfExists = m
	if m == Replace {
		return nil
	}
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) == 0 {
		return nil
	}
	if m == Skip {
		return &skipError{path: root}
	}
	return &ExistsError{Path: root}
}

// PublishOutput publishes the set (Publish) and, when it replaces, removes
// what an earlier run of the output final left that this run did not
// replace (RemoveStaleParts: split says this run wrote numbered parts).
func (s *Set) PublishOutput(final string, split bool, exts ...string) ([]string, error) {
	replace := s.IfExists == Replace || s.IfExists == ""
	files, err := s.Publish()
	if err != nil || !replace {
		return files, err
	}
	if _, err := RemoveStaleParts(final, split, len(files), exts...); err != nil {
		return files, fmt.Errorf("published %s, but an earlier run's parts remain: %w", final, err)
	}
	return files, nil
}
