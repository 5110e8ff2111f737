package migrate

import (
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// FromJob is the migration a job's migrate: section describes, checked
// without touching the network; errors are *engine.ConfigError.
func FromJob(job *engine.JobConfig) (*Config, error) {
	m := job.Migrate
	if m == nil {
		return nil, &engine.ConfigError{File: job.File, Field: "migrate", Msg: "missing"}
	}
	if len(job.Extracts) > 0 {
		return nil, &engine.ConfigError{File: job.File, Field: "migrate", Msg: "a job either migrates (migrate:) or runs extracts (extracts:), not both"}
	}
	src, timeout, err := engine.ResolveSource(&job.Source)
	if err != nil {
		return nil, err
	}
	c := &Config{
		Source:  src,
		Timeout: timeout,
		Filter:  catalog.Filter{Include: m.Include, Exclude: m.Exclude},
		Target: postgres.ConnConfig{Connection: m.Target, PasswordEnv: m.TargetPasswordEnv, PasswordFile: m.TargetPasswordFile,
			ConnectTimeout: 30 * time.Second, ApplicationName: "tdsextract migrate"},
		Options:            Options{Identifiers: m.Identifiers, CaseInsensitive: m.CaseInsensitive, Analyze: m.Analyze},
		Parallel:           m.Parallel,
		SplitRows:          m.SplitRows,
		Verify:             m.Verify,
		Resume:             m.Resume,
		StateTable:         m.StateTable,
		MaintenanceWorkMem: m.MaintenanceWorkMem,
	}
	switch {
	case m.SplitRows == 0:
		c.SplitRows = DefaultSplitRows
	case m.SplitRows < 0:
		c.SplitRows = 0
	}
	if err := c.Validate(); err != nil {
		return nil, &engine.ConfigError{File: job.File, Field: "migrate", Msg: strings.TrimPrefix(err.Error(), "migrate: ")}
	}
	return c, nil
}
