package sqlexec

import (
	"math"
	"math/rand/v2"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// TABLESAMPLE, as SQL Server writes it after a table name (and its alias):
//
//	TABLESAMPLE [SYSTEM] (sample_number [PERCENT | ROWS]) [REPEATABLE (repeat_seed)]
//
// SQL Server picks whole 8 KB data pages at random and returns every row
// of each page picked, so the number of rows varies from run to run and a
// small table (one page) comes back whole or empty; n ROWS is turned into
// the percentage n is of the table's row count. REPEATABLE with the same
// seed returns the same rows while the table is unchanged.
//
// The sample server has no pages; it cuts a table into runs of
// consecutive rows (samplePageRows), which stand in for pages, and keeps a
// run when a hash of the seed and the run's number falls below the
// fraction asked for. The sample is therefore deterministic for a seed
// (without REPEATABLE a seed is drawn per statement), clustered in key
// order as SQL Server's is on a clustered index, and approximate in size;
// it differs in that the runs have a fixed number of rows where SQL Server's
// pages hold as many rows as fit in 8 KB. Sampling applies to the rows of
// the table before WHERE, as on SQL Server, and only to the first table of
// a FROM clause.

// samplePageRows is the number of rows of one sampled run: about what an
// 8 KB page holds of a row of a hundred-odd bytes. A table of more than
// maxSamplePages such runs gets longer ones, so that sampling a huge
// generated table still visits a bounded number of runs.
const (
	samplePageRows = 64
	maxSamplePages = 1 << 22
)

// tableSample is a parsed TABLESAMPLE clause.
type tableSample struct {
	Size expr
	Rows bool // ROWS, else PERCENT (the default)
	Seed expr // nil without REPEATABLE
	Line int32
}

// tableSample parses what follows the keyword TABLESAMPLE.
func (p *parser) tableSample(line int32) (*tableSample, error) {
	p.accept("SYSTEM")
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	ts := &tableSample{Line: line}
	var err error
	if ts.Size, err = p.expr(); err != nil {
		return nil, err
	}
	if p.accept("ROWS") {
		ts.Rows = true
	} else {
		p.accept("PERCENT")
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if p.accept("REPEATABLE") {
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		if ts.Seed, err = p.expr(); err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// pageSample is a resolved TABLESAMPLE: which runs of rows it keeps.
type pageSample struct {
	rows      int64 // rows per run
	seed      uint64
	threshold uint64 // keep a run whose hash is below; all: keep every run
	all       bool
}

// resolveSample evaluates the size and seed of ts (constants or
// parameters) for table t.
func (sc *scope) resolveSample(ts *tableSample, t *sampledb.Table) (*pageSample, error) {
	size, err := sc.sampleNumber(ts.Size, ts.Line)
	if err != nil {
		return nil, err
	}
	var frac float64
	if ts.Rows {
		if size <= 0 || size != math.Trunc(size) {
			return nil, newError(477, 16, 1, ts.Line, "Invalid ROWS value or REPEATABLE seed in the TABLESAMPLE clause for table \"%s\". The value or seed must be greater than 0.", t.Name)
		}
		if t.Rows > 0 {
			frac = size / float64(t.Rows)
		}
	} else {
		if size < 0 || size > 100 {
			return nil, newError(476, 16, 1, ts.Line, "Invalid PERCENT tablesample size \"%g\" for table \"%s\". The PERCENT tablesample size must be between 0 and 100.", size, t.Name)
		}
		frac = size / 100
	}
	ps := &pageSample{rows: max(samplePageRows, (t.Rows+maxSamplePages-1)/maxSamplePages), seed: rand.Uint64()}
	if ts.Seed != nil {
		seed, err := sc.sampleNumber(ts.Seed, ts.Line)
		if err != nil {
			return nil, err
		}
		if seed <= 0 || seed != math.Trunc(seed) {
			return nil, newError(477, 16, 1, ts.Line, "Invalid ROWS value or REPEATABLE seed in the TABLESAMPLE clause for table \"%s\". The value or seed must be greater than 0.", t.Name)
		}
		ps.seed = uint64(seed)
	}
	switch th := frac * (1 << 64); {
	case th >= 1<<64:
		ps.all = true
	case th > 0:
		ps.threshold = uint64(th)
	}
	return ps, nil
}

// sampleNumber evaluates a sample size or seed: a constant expression or
// a parameter, as a number.
func (sc *scope) sampleNumber(x expr, line int32) (float64, error) {
	if !isConst(x) {
		return 0, errSyntax(token{Kind: tkIdent, Line: line})
	}
	if err := sc.bind(x, false); err != nil {
		return 0, err
	}
	v, err := sc.eval(x, &env{})
	if err != nil {
		return 0, err
	}
	f, ok := asFloat(v)
	if !ok || math.IsNaN(f) {
		return 0, newError(8114, 16, 5, line, "Error converting data type to float.")
	}
	return f, nil
}

// keep reports whether the sample keeps the run of rows numbered page.
func (ps *pageSample) keep(page int64) bool {
	if ps.all {
		return true
	}
	return splitmix(ps.seed^splitmix(uint64(page))) < ps.threshold
}

// apply narrows ranges to the rows of the runs the sample keeps.
func (ps *pageSample) apply(ranges []rowRange) []rowRange {
	if ps == nil || ps.all {
		return ranges
	}
	var out []rowRange
	for _, r := range ranges {
		for page := r.from / ps.rows; page*ps.rows < r.to; page++ {
			if !ps.keep(page) {
				continue
			}
			from, to := max(r.from, page*ps.rows), min(r.to, (page+1)*ps.rows)
			if n := len(out); n > 0 && out[n-1].to == from {
				out[n-1].to = to
				continue
			}
			out = append(out, rowRange{from, to})
		}
	}
	return out
}

// splitmix is the SplitMix64 finaliser: a well-mixed 64-bit hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// sampleOf resolves the TABLESAMPLE of f, the i-th table of a FROM
// clause: SQL Server refuses it on a view or a catalog view; the sample
// server samples only the first table.
func (sc *scope) sampleOf(f fromItem, i int, src *source) (*pageSample, error) {
	if src.t.Catalog {
		return nil, newError(494, 16, 1, f.Line, "The TABLESAMPLE clause can only be used with local tables.")
	}
	if i > 0 {
		return nil, errUnsupported(f.Line, "TABLESAMPLE on a joined table is")
	}
	return sc.resolveSample(f.Sample, src.t)
}
