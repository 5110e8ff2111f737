package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Who owns a temporary file.
//
// A run killed with SIGKILL (or by the OOM killer, or a power cut) cannot
// remove its temporary files, so a later run of the same output removes
// them, and must remove only those: never the temporaries of a run that is
// still writing, in this process, another process, another container or
// another host sharing the directory.
//
// Each process names its temporaries with a random owner token,
// ".<final name>.tmp-<token>-<n>", and, before it creates the first one in
// a directory, puts there an owner file ".tdsextract-<token>.lock" on which
// it holds an exclusive flock(2) until its last temporary there is
// published or removed; then it deletes the owner file. The kernel (or, on
// NFS, the lock manager) releases the lock when the process dies however it
// dies. A temporary is therefore orphaned exactly when its owner file is
// gone or can be locked by someone else: that needs no process id, so a
// reused PID, a PID namespace (containers) or a reboot cannot make a live
// run look dead or a dead one look alive. Where flock is not supported the
// owner cannot be proven dead and nothing is removed.
//
// The owner file is created under another name, locked, and then renamed
// into place, so that it never exists unlocked while its owner lives.

// ownerToken identifies this process's temporaries.
var ownerToken = sync.OnceValue(func() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; fall back to
		// the clock rather than refuse to write.
		return fmt.Sprintf("%016x", uint64(time.Now().UnixNano()))
	}
	return hex.EncodeToString(b[:])
})

const (
	tmpMarker  = ".tmp-"
	tokenLen   = 16
	lockPrefix = ".tdsextract-"
	lockSuffix = ".lock"
)

// tempName is the name of the n-th temporary of this process for final.
func tempName(final string, n uint64) string {
	return filepath.Join(filepath.Dir(final), fmt.Sprintf(".%s%s%s-%d", filepath.Base(final), tmpMarker, ownerToken(), n))
}

// parseTemp splits a temporary's file name into the final file name it
// stands for and its owner token.
func parseTemp(name string) (final, token string, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return "", "", false
	}
	i := strings.LastIndex(name, tmpMarker)
	if i < 1 {
		return "", "", false
	}
	rest := name[i+len(tmpMarker):]
	if len(rest) < tokenLen+2 || rest[tokenLen] != '-' || !isHex(rest[:tokenLen]) || !isDigits(rest[tokenLen+1:]) {
		return "", "", false
	}
	return name[1:i], rest[:tokenLen], true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// outputKey is a file name without its part number (4 or more digits
// after a '.' or '-', as Numbered and "part-0001" write them), so that an
// output's unnumbered file and all its parts have the same key.
func outputKey(name string) string {
	for i := 1; i < len(name); i++ {
		if name[i-1] != '.' && name[i-1] != '-' {
			continue
		}
		j := i
		for j < len(name) && name[j] >= '0' && name[j] <= '9' {
			j++
		}
		if j-i >= 4 && (j == len(name) || name[j] == '.') {
			return name[:i-1] + name[j:]
		}
	}
	return name
}

func lockName(token string) string { return lockPrefix + token + lockSuffix }

// maxLockDepth bounds how many directories up from a temporary its owner
// file is looked for (Set.LockDir is normally the output root, a few
// levels up from partition directories).
const maxLockDepth = 64

// dirLock is this process's owner file in one directory.
type dirLock struct {
	f    *os.File
	path string
	refs int
}

var (
	ownerMu   sync.Mutex
	ownerDirs = map[string]*dirLock{}
)

// acquireDir makes sure this process's owner file exists and is locked in
// dir, counting one more user of it.
func acquireDir(dir string) error {
	ownerMu.Lock()
	defer ownerMu.Unlock()
	if d := ownerDirs[dir]; d != nil {
		d.refs++
		return nil
	}
	path := filepath.Join(dir, lockName(ownerToken()))
	staging := path + ".new"
	f, err := os.OpenFile(staging, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("create owner file: %w", err)
	}
	host, _ := os.Hostname()
	// For people looking at the directory; the lock, not this text, is
	// what says whether the owner lives.
	fmt.Fprintf(f, "tdsextract temporary files of pid %d on %s, started %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if _, err := tryLock(f); err != nil && !errors.Is(err, errLockUnsupported) {
		f.Close()
		os.Remove(staging)
		return fmt.Errorf("lock owner file: %w", err)
	}
	if err := os.Rename(staging, path); err != nil {
		f.Close()
		os.Remove(staging)
		return fmt.Errorf("owner file: %w", err)
	}
	ownerDirs[dir] = &dirLock{f: f, path: path, refs: 1}
	return nil
}

// releaseDir drops one user of dir's owner file; the last removes it.
func releaseDir(dir string) {
	ownerMu.Lock()
	defer ownerMu.Unlock()
	d := ownerDirs[dir]
	if d == nil {
		return
	}
	if d.refs--; d.refs > 0 {
		return
	}
	delete(ownerDirs, dir)
	_ = os.Remove(d.path) // removed while still locked: never unlocked in place
	_ = d.f.Close()
}

// RemoveOrphans removes, from the directory of final, the temporary files
// of the same output as final (any of its numbered parts) whose owner is
// proven dead, and returns their paths. It never removes a temporary whose
// owner may be alive. Set.Create calls it for every directory it writes
// into.
func RemoveOrphans(final string) ([]string, error) {
	dir := filepath.Dir(final)
	key := outputKey(filepath.Base(final))
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	own := ownerToken()
	mine := map[string][]string{} // token -> orphan candidates of this output
	all := map[string]int{}       // token -> its temporaries in dir, any output
	for _, e := range entries {
		f, tok, ok := parseTemp(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		all[tok]++
		if tok != own && outputKey(f) == key {
			mine[tok] = append(mine[tok], e.Name())
		}
	}
	var removed []string
	var errs []error
	for tok, names := range mine {
		release, dead := ownerDead(dir, tok)
		if !dead {
			continue
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			if err := os.Remove(p); err == nil {
				removed = append(removed, p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		if all[tok] == len(names) {
			_ = os.Remove(filepath.Join(dir, lockName(tok)))
		}
		release()
	}
	return removed, errors.Join(errs...)
}

// ownerDead reports whether the owner of token's temporaries in dir is
// gone: its owner file (in dir or, for a Set with a LockDir, an ancestor)
// is absent, or this process can lock it. When it is locked here, release
// unlocks it.
func ownerDead(dir, token string) (release func(), dead bool) {
	var f *os.File
	for d, depth := dir, 0; f == nil; depth++ {
		var err error
		f, err = os.OpenFile(filepath.Join(d, lockName(token)), os.O_RDWR, 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, false // unreadable: cannot tell
		}
		parent := filepath.Dir(d)
		if f == nil && (parent == d || depth == maxLockDepth) {
			// An owner creates its owner file before its first temporary
			// and deletes it after its last one.
			return func() {}, true
		}
		d = parent
	}
	locked, err := tryLock(f)
	if err != nil || !locked {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
