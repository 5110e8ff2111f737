package incremental

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/tdsextract/tdsextract/internal/atomicfile"
)

// State is what an incremental extract remembers between runs, one JSON
// file per extract. It changes only when a run's outputs are all
// published (the caller's rule), and is replaced atomically: written to a
// temporary file in the same directory, fsynced, renamed over the old one,
// and the directory fsynced, so a crash leaves the old state or the new,
// never a torn file.
type State struct {
	// Version of the file format (1).
	Version int `json:"version"`
	// Extract and Column say whose watermark this is; a state written for
	// another column is refused rather than applied.
	Extract string `json:"extract"`
	Column  string `json:"column"`
	// Type is the column's SQL type when the state was written
	// ("datetime2(7)", "timestamp"); a changed type is refused.
	Type string `json:"type"`
	// Watermark is the highest value exported, in Format's text; nil
	// before the first run that found a row.
	Watermark *string `json:"watermark"`
	// Runs counts the committed runs; run N's outputs are named after it.
	Runs int64 `json:"runs"`
	// Rows is the rows of the last committed run; Updated when it was
	// committed.
	Rows    int64     `json:"rows"`
	Updated time.Time `json:"updated"`
	// Run is the checkpointed run that committed last (CommitFrozen), so
	// that committing it again changes nothing; "" after a run of one
	// process without checkpoints.
	Run string `json:"run,omitempty"`
}

// StateVersion is the state file format written.
const StateVersion = 1

// Load reads a state file; a missing file is the empty state of a first
// run (nil error), a damaged one an error (never treated as empty: that
// would export everything again).
func Load(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Version: StateVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("incremental: state file: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("incremental: state file %s is damaged (%v): restore it, or delete it to export everything again", path, err)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("incremental: state file %s has version %d; this tdsextract reads version %d", path, s.Version, StateVersion)
	}
	return &s, nil
}

// Save replaces the state file at path atomically and durably.
func Save(path string, s *State) error {
	s.Version = StateVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("incremental: writing state file %s: %w", path, err)
	}
	return nil
}
