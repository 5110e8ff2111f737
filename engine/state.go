package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/engine/incremental"
	"github.com/tdsextract/tdsextract/engine/partition"
	"github.com/tdsextract/tdsextract/internal/atomicfile"
)

// A job's state directory records which units of a run are finished, so
// that a run started again (or with --resume, or by another process of a
// scheduler's job array) does only what is missing. It holds:
//
//	plan.json          the run's units with their key-range bounds, and the
//	                   windows of its incremental extracts, written once
//	                   when the run starts (so every process and every
//	                   resumed run cuts the table at the same bounds and
//	                   exports the same window, even if rows were added
//	                   since)
//	units/NNNNN.json   one record per finished unit: rows, bytes, value
//	                   checksum, files; written after the unit's sinks
//	                   published
//	complete           written after the manifest: the run is over, the
//	                   next one starts afresh
//
// Every file is written under a temporary name, fsynced, renamed into place
// and the directory fsynced: a process killed at any point leaves either
// the old file or the new one, never a torn one.

// StateFile names.
const (
	statePlan     = "plan.json"
	stateUnits    = "units"
	stateComplete = "complete"
)

// statePlanFile is plan.json.
type statePlanFile struct {
	Job         string      `json:"job"`
	Fingerprint string      `json:"fingerprint"`
	Run         string      `json:"run"`
	Created     time.Time   `json:"created"`
	Units       []stateUnit `json:"units"`
	// Windows are the incremental extracts' windows, read once when the
	// run was planned.
	Windows []incremental.Frozen `json:"windows,omitempty"`
}

type stateUnit struct {
	ID      string         `json:"id"`
	Extract string         `json:"extract"`
	Part    int            `json:"part"`
	Parts   int            `json:"parts"`
	Range   partition.Part `json:"range"`
}

// UnitRecord is a finished unit, as its checkpoint and the manifest hold
// it.
type UnitRecord struct {
	ID      string `json:"id"`
	Extract string `json:"extract"`
	Part    int    `json:"part"`
	Parts   int    `json:"parts"`
	// Range is the unit's predicate with its bounds written in.
	Range string `json:"range,omitempty"`
	Rows  int64  `json:"rows"`
	// Bytes is what the sinks wrote (the sum over sinks).
	Bytes int64 `json:"bytes"`
	// Checksum fingerprints every value of the unit's rows, independent of
	// row order (Checksum).
	Checksum string    `json:"checksum"`
	Files    []string  `json:"files,omitempty"`
	Sinks    []string  `json:"sinks"`
	Attempts int       `json:"attempts"`
	Finished time.Time `json:"finished"`
}

// Manifest is the job-level record of a complete run, written last: a
// reader that finds it knows every unit's output is published.
type Manifest struct {
	Job      string            `json:"job"`
	Run      string            `json:"run"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Complete bool              `json:"complete"`
	Extracts []ManifestExtract `json:"extracts"`
	Units    []UnitRecord      `json:"units"`
}

// Files lists every unit's files, in unit order.
func (m *Manifest) Files() []string {
	var files []string
	for _, u := range m.Units {
		files = append(files, u.Files...)
	}
	return files
}

// ManifestExtract sums an extract's units.
type ManifestExtract struct {
	Name     string   `json:"name"`
	Units    int      `json:"units"`
	Rows     int64    `json:"rows"`
	Bytes    int64    `json:"bytes"`
	Checksum string   `json:"checksum"`
	Files    []string `json:"files,omitempty"`
}

// DefaultStateDir is where a job keeps its state when state_dir is not
// set: $XDG_STATE_HOME/tdsextract/<job>-<fingerprint> (XDG_STATE_HOME
// defaults to ~/.local/state), so two different jobs never share one and
// a changed job starts afresh.
func DefaultStateDir(p *Plan) string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".local", "state")
		} else {
			base = os.TempDir()
		}
	}
	name := p.Job
	if name == "" {
		name = "job"
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, name)
	return filepath.Join(base, "tdsextract", name+"-"+p.Fingerprint()[:12])
}

// Fingerprint identifies what a job exports (sources of rows and their
// destinations), not how fast: two plans with the same fingerprint write
// the same outputs, so one may finish what the other started.
func (p *Plan) Fingerprint() string {
	type sinkFP struct {
		Type    string
		Options map[string]any
	}
	type exFP struct {
		Name, Schema, Table, Query, Where string
		Columns                           []string
		Convert                           any
		Partition                         *partition.Spec
		Sinks                             []sinkFP
	}
	var fp struct {
		Job      string
		Source   string
		Extracts []exFP
	}
	fp.Job = p.Job
	fp.Source = p.Session.Host + "," + fmt.Sprint(p.Session.Port) + "/" + p.Session.Database
	for _, ex := range p.Extracts {
		e := exFP{Name: ex.Name, Schema: ex.Schema, Table: ex.Table, Query: ex.Query, Where: ex.Where, Columns: ex.Columns, Convert: ex.Convert, Partition: ex.Partition}
		for _, s := range ex.Sinks {
			e.Sinks = append(e.Sinks, sinkFP{s.Type, s.Options})
		}
		fp.Extracts = append(fp.Extracts, e)
	}
	b, _ := json.Marshal(fp) // map keys are sorted: stable
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// stateDir is an open state directory.
type stateDir struct {
	dir string
}

func (s *stateDir) path(parts ...string) string {
	return filepath.Join(append([]string{s.dir}, parts...)...)
}

func (s *stateDir) unitPath(i int) string { return s.path(stateUnits, fmt.Sprintf("%05d.json", i)) }

// readPlan returns plan.json, or nil when there is none.
func (s *stateDir) readPlan() (*statePlanFile, error) {
	return readState[statePlanFile](s.path(statePlan))
}

// readState reads the state file at path, or returns nil when there is
// none (not yet written).
func readState[T any](path string) (*T, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	return &v, nil
}

func (s *stateDir) complete() bool {
	_, err := os.Stat(s.path(stateComplete))
	return err == nil
}

// reset removes a finished run's records before a new run starts.
func (s *stateDir) reset() error {
	if err := os.RemoveAll(s.path(stateUnits)); err != nil {
		return err
	}
	for _, f := range []string{stateComplete, statePlan} {
		if err := os.Remove(s.path(f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return atomicfile.SyncDir(s.dir)
}

// createPlan writes plan.json unless another process wrote it first: the
// file is linked into place, which fails if it exists, and then the one
// that exists is returned.
func (s *stateDir) createPlan(pf *statePlanFile) (*statePlanFile, error) {
	if err := os.MkdirAll(s.path(stateUnits), 0o755); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(pf, "", "  ")
	if err != nil {
		return nil, err
	}
	tmp, err := atomicfile.WriteTemp(s.dir, statePlan, b)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, s.path(statePlan)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return s.readPlan()
		}
		return nil, err
	}
	return pf, atomicfile.SyncDir(s.dir)
}

// readUnit returns unit i's record, or nil when it has none yet.
func (s *stateDir) readUnit(i int) (*UnitRecord, error) {
	return readState[UnitRecord](s.unitPath(i))
}

func (s *stateDir) writeUnit(i int, r *UnitRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.unitPath(i), b)
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:4])
}
