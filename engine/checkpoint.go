package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/internal/atomicfile"
	"github.com/tdsextract/tdsextract/sinks"
)

// ExtractInfo describes extract ex, run in parts parts, as its sinks see
// it (the part number is 0: the extract as a whole).
func ExtractInfo(ex *ExtractPlan, parts int) sinks.ExtractInfo {
	return sinks.ExtractInfo{Name: ex.Name, Schema: ex.Schema, Table: ex.Table, EstimatedRows: -1, Parts: max(1, parts)}
}

// Share is one share of a plan's units, for a scheduler's job array: the
// units whose index modulo Count is Index.
type Share struct{ Index, Count int }

// ParseShare reads "i/N" (0 <= i < N).
func ParseShare(s string) (Share, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Share{}, fmt.Errorf("unit %q: use i/N with 0 <= i < N, e.g. 0/4", s)
	}
	return Share{i, n}, nil
}

func (s *Share) has(i int) bool { return s == nil || i%s.Count == s.Index }

// checkpointing reports whether a run of plan records its units: when an
// extract is partitioned, a state directory or manifest is configured, or
// the runner resumes or runs a share.
func (r *Runner) checkpointing(plan *Plan) bool {
	if plan.StateDir != "" || plan.Manifest != "" || r.Resume || r.Share != nil || r.RunID != "" {
		return true
	}
	for _, ex := range plan.Extracts {
		if ex.Partition != nil {
			return true
		}
	}
	return false
}

// runState is an open run: its state directory and the units of the plan
// it holds.
type runState struct {
	st       *stateDir
	pf       *statePlanFile
	manifest string
	done     []*UnitRecord // by unit index; nil when not finished
}

// stateDirOf is the directory a run of plan keeps its state in.
func (r *Runner) stateDirOf(plan *Plan) string {
	dir := plan.StateDir
	if dir == "" {
		dir = DefaultStateDir(plan)
	}
	if r.RunID != "" {
		dir = filepath.Join(dir, safeName(r.RunID))
	}
	return dir
}

// safeName makes a run id one path element.
func safeName(s string) string {
	s = strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == ':' || c < ' ' {
			return '_'
		}
		return c
	}, s)
	if s == "." || s == ".." {
		s = "_"
	}
	return s
}

// openRun opens (or starts) the run of plan in its state directory: an
// unfinished run of the same job is resumed with the units (and bounds)
// it planned; a finished one is cleared and a new run planned. The plan's
// units are replaced by the run's.
func (r *Runner) openRun(ctx context.Context, plan *Plan) (*runState, error) {
	st := &stateDir{dir: r.stateDirOf(plan)}
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return nil, &JobError{Kind: KindConfig, Err: fmt.Errorf("state_dir: %w", err)}
	}
	rs := &runState{st: st, manifest: plan.Manifest}
	if rs.manifest == "" {
		rs.manifest = filepath.Join(st.dir, "manifest.json")
	}
	pf, err := st.readPlan()
	if err != nil {
		return nil, &JobError{Kind: KindExtract, Err: err}
	}
	fp := r.fingerprint(plan)
	// fresh clears a finished or discarded run. The manifest goes first:
	// the outputs it describes are about to be replaced, and a crash in
	// the middle of clearing must not leave it beside them.
	fresh := func() error {
		if err := os.Remove(rs.manifest); err != nil && !errors.Is(err, os.ErrNotExist) {
			return &JobError{Kind: KindExtract, Err: fmt.Errorf("manifest: %w", err)}
		}
		if err := st.reset(); err != nil {
			return &JobError{Kind: KindExtract, Err: fmt.Errorf("state %s: %w", st.dir, err)}
		}
		pf = nil
		return nil
	}
	switch {
	case pf != nil && st.complete() && r.Share == nil:
		// The last run finished: this is a new one.
		err = fresh()
	case pf != nil && st.complete():
		return nil, &JobError{Kind: KindConfig, Err: fmt.Errorf("state %s: run %s is complete; a new run of a share needs its own run id (--run-id, or the scheduler's job id)", st.dir, pf.Run)}
	case pf != nil && pf.Fingerprint != fp && r.Restart:
		err = fresh()
	case pf != nil && pf.Fingerprint != fp:
		return nil, &JobError{Kind: KindConfig, Err: fmt.Errorf("state %s holds an unfinished run (%s) of a different version of this job: finish it with the job as it was, or start over with --restart", st.dir, pf.Run)}
	case pf != nil && r.Restart && r.Share == nil:
		err = fresh()
	}
	if err != nil {
		return nil, err
	}
	if pf == nil {
		// A new run: whatever manifest an earlier run left says nothing
		// about this one's outputs, which are about to be replaced.
		if err := os.Remove(rs.manifest); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, &JobError{Kind: KindExtract, Err: fmt.Errorf("manifest: %w", err)}
		}
		if err := r.Expand(ctx, plan); err != nil {
			return nil, err
		}
		pf = &statePlanFile{Job: plan.Job, Fingerprint: fp, Run: newRunID(), Created: time.Now().UTC()}
		if pf.Windows, err = r.freezeWindows(ctx, plan); err != nil {
			return nil, err
		}
		for _, u := range plan.Units {
			pf.Units = append(pf.Units, stateUnit{ID: u.ID(), Extract: u.Extract.Name, Part: u.Part, Parts: u.Parts, Range: u.Range})
		}
		if pf, err = st.createPlan(pf); err != nil {
			return nil, &JobError{Kind: KindExtract, Err: fmt.Errorf("state %s: %w", st.dir, err)}
		}
		if pf == nil {
			return nil, &JobError{Kind: KindExtract, Err: fmt.Errorf("state %s: plan.json disappeared while this run was planned", st.dir)}
		}
		if pf.Fingerprint != fp {
			// Another process planned the run first, with another version
			// of the job.
			return nil, &JobError{Kind: KindConfig, Err: fmt.Errorf("state %s: run %s was planned by a different version of this job", st.dir, pf.Run)}
		}
	}
	if err := adoptUnits(plan, pf); err != nil {
		return nil, &JobError{Kind: KindConfig, Err: fmt.Errorf("state %s: %w", st.dir, err)}
	}
	rs.pf = pf
	rs.done = make([]*UnitRecord, len(plan.Units))
	for i := range plan.Units {
		rec, err := st.readUnit(i)
		if err != nil {
			return nil, &JobError{Kind: KindExtract, Err: err}
		}
		rs.done[i] = rec
	}
	return rs, nil
}

// adoptUnits replaces plan's units by those of the stored run.
func adoptUnits(plan *Plan, pf *statePlanFile) error {
	byName := map[string]*ExtractPlan{}
	for _, ex := range plan.Extracts {
		byName[ex.Name] = ex
	}
	for i := range pf.Windows {
		f := &pf.Windows[i]
		ex := byName[f.Extract]
		if ex == nil || ex.Incremental == nil {
			return fmt.Errorf("the run's window of %q belongs to no incremental extract of the job", f.Extract)
		}
		ex.frozen = f
	}
	units := make([]Unit, 0, len(pf.Units))
	for _, su := range pf.Units {
		ex := byName[su.Extract]
		if ex == nil {
			return fmt.Errorf("the run's unit %s belongs to extract %q, which the job no longer has", su.ID, su.Extract)
		}
		units = append(units, Unit{Extract: ex, Where: su.Range.Where, Range: su.Range, Part: su.Part, Parts: su.Parts})
	}
	plan.Units, plan.Expanded = units, true
	return nil
}

// record checkpoints unit i as finished.
func (rs *runState) record(i int, u Unit, s ExtractSummary) error {
	rec := &UnitRecord{ID: u.ID(), Extract: u.Extract.Name, Part: u.Part, Parts: max(1, u.Parts), Range: u.Range.String(),
		Rows: s.Rows, Checksum: s.Checksum, Attempts: max(1, s.Attempts), Finished: time.Now().UTC()}
	for _, sk := range s.Sinks {
		rec.Bytes += sk.Bytes
		rec.Files = append(rec.Files, sk.Files...)
		if sk.Skipped == "" {
			rec.Sinks = append(rec.Sinks, sk.Type)
		} else {
			rec.Sinks = append(rec.Sinks, sk.Type+" (skipped)")
		}
	}
	if err := rs.st.writeUnit(i, rec); err != nil {
		return err
	}
	rs.done[i] = rec
	return nil
}

// missing lists the units not finished.
func (rs *runState) missing() []string {
	var m []string
	for i, d := range rs.done {
		if d == nil {
			m = append(m, rs.pf.Units[i].ID)
		}
	}
	return m
}

// refresh rereads the records other processes may have written.
func (rs *runState) refresh() error {
	for i := range rs.done {
		if rs.done[i] != nil {
			continue
		}
		rec, err := rs.st.readUnit(i)
		if err != nil {
			return err
		}
		rs.done[i] = rec
	}
	return nil
}

// commit combines the parts of every partitioned extract whose sinks
// stage them (sinks.Factory.Combine), writes the manifest, then marks the
// run complete. It fails, writing nothing, while a unit is missing.
func (rs *runState) commit(ctx context.Context, plan *Plan) (string, error) {
	if err := rs.refresh(); err != nil {
		return "", err
	}
	if m := rs.missing(); len(m) > 0 {
		return "", &IncompleteError{Missing: m}
	}
	if err := combine(ctx, plan); err != nil {
		return "", err
	}
	man := Manifest{Job: plan.Job, Run: rs.pf.Run, Started: rs.pf.Created, Finished: time.Now().UTC(), Complete: true}
	idx := map[string]int{}
	for _, rec := range rs.done {
		man.Units = append(man.Units, *rec)
		k, ok := idx[rec.Extract]
		if !ok {
			k = len(man.Extracts)
			idx[rec.Extract] = k
			man.Extracts = append(man.Extracts, ManifestExtract{Name: rec.Extract})
		}
		e := &man.Extracts[k]
		e.Units++
		e.Rows += rec.Rows
		e.Bytes += rec.Bytes
		e.Files = append(e.Files, rec.Files...)
		e.Checksum = addChecksums(e.Checksum, rec.Checksum)
	}
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(rs.manifest, append(b, '\n')); err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	if err := atomicfile.WriteFile(rs.st.path(stateComplete), []byte(rs.pf.Run+"\n")); err != nil {
		return rs.manifest, fmt.Errorf("state: %w", err)
	}
	return rs.manifest, nil
}

// combine calls Combine of every sink that has one, for every extract of
// plan that ran in several parts.
func combine(ctx context.Context, plan *Plan) error {
	parts := map[*ExtractPlan]int{}
	for _, u := range plan.Units {
		parts[u.Extract] = max(parts[u.Extract], u.Parts)
	}
	var errs []error
	for _, ex := range plan.Extracts {
		if parts[ex] <= 1 {
			continue
		}
		info := ExtractInfo(ex, parts[ex])
		for _, sp := range ex.Sinks {
			if sp.Factory.Combine == nil {
				continue
			}
			if _, err := sp.Factory.Combine(ctx, sp.Options, info); err != nil {
				errs = append(errs, &JobError{Kind: KindExtract, Extract: ex.Name, Err: fmt.Errorf("sink %s: combining %d parts: %w", sp.Type, parts[ex], err)})
			}
		}
	}
	return errors.Join(errs...)
}

// addChecksums adds two checksums as FormatChecksum writes them ("" is
// zero): the checksum of a table is the sum of its parts'.
func addChecksums(a, b string) string {
	x, _ := parseChecksum(a)
	y, _ := parseChecksum(b)
	return FormatChecksum(x + y)
}

func parseChecksum(s string) (uint64, bool) {
	h, ok := strings.CutPrefix(s, "rowsum64:")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(h, 16, 64)
	return v, err == nil
}

// IncompleteError is a commit while units are missing.
type IncompleteError struct{ Missing []string }

func (e *IncompleteError) Error() string {
	n := len(e.Missing)
	list := e.Missing
	if n > 10 {
		list = append(list[:10:10], fmt.Sprintf("... %d more", n-10))
	}
	return fmt.Sprintf("run incomplete: %d unit(s) not finished (%s); run them, then commit again", n, strings.Join(list, ", "))
}

// Commit writes the manifest of the run of plan whose units are all
// finished (by any process sharing the state directory). It returns the
// manifest's path.
func (r *Runner) Commit(ctx context.Context, plan *Plan) (string, error) {
	st := &stateDir{dir: r.stateDirOf(plan)}
	pf, err := st.readPlan()
	if err != nil {
		return "", &JobError{Kind: KindExtract, Err: err}
	}
	if pf == nil {
		return "", &JobError{Kind: KindConfig, Err: fmt.Errorf("state %s: no run to commit (run the job first)", st.dir)}
	}
	if pf.Fingerprint != r.fingerprint(plan) {
		return "", &JobError{Kind: KindConfig, Err: fmt.Errorf("state %s: the run there is of a different version of this job", st.dir)}
	}
	if err := adoptUnits(plan, pf); err != nil {
		return "", &JobError{Kind: KindConfig, Err: err}
	}
	rs := &runState{st: st, pf: pf, manifest: plan.Manifest, done: make([]*UnitRecord, len(plan.Units))}
	if rs.manifest == "" {
		rs.manifest = filepath.Join(st.dir, "manifest.json")
	}
	path, err := rs.commit(ctx, plan)
	if err != nil {
		var ie *IncompleteError
		if errors.As(err, &ie) {
			return "", &JobError{Kind: KindIncomplete, Err: err}
		}
		return "", &JobError{Kind: KindExtract, Err: err}
	}
	// The watermarks move only now that the manifest is written.
	if err := commitFrozen(plan, pf.Run, rs.done); err != nil {
		return path, err
	}
	return path, nil
}

// PlanUnits expands plan (reading the bounds of partitioned extracts) and
// returns its units, for `tdsextract plan`. A run in progress in the state
// directory shows the units it planned.
func (r *Runner) PlanUnits(ctx context.Context, plan *Plan) ([]Unit, error) {
	if r.checkpointing(plan) {
		st := &stateDir{dir: r.stateDirOf(plan)}
		if r.freezes(plan) {
			// Planning an incremental extract fixes its window: the run
			// is started here, and every process of it uses that window.
			if _, err := r.openRun(ctx, plan); err != nil {
				return nil, err
			}
			return plan.Units, nil
		}
		if pf, err := st.readPlan(); err == nil && pf != nil && !st.complete() && pf.Fingerprint == r.fingerprint(plan) {
			if err := adoptUnits(plan, pf); err == nil {
				return plan.Units, nil
			}
		}
	}
	if err := r.Expand(ctx, plan); err != nil {
		return nil, err
	}
	return plan.Units, nil
}

// fingerprint is the plan's, and for a backfill the range too: a backfill
// and a scheduled run of one job are different runs, and neither may
// finish what the other started (their windows differ).
func (r *Runner) fingerprint(plan *Plan) string {
	fp := plan.Fingerprint()
	if r.Backfill == nil {
		return fp
	}
	h := sha256.Sum256([]byte(fp + "\nbackfill " + r.Backfill.From + ".." + r.Backfill.To))
	return hex.EncodeToString(h[:])
}
