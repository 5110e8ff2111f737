package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/duckdbtest"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/parquet"
)

// The parquet mode times tdsextract's Parquet sink beside DuckDB's own
// Parquet writer on the same rows, with the same codec (zstd), at 1 and 2
// threads:
//
//   - tdsextract-parquet/N: the recorded server bytes of the shape (memory
//     mode: decoding included, serving not) decoded into the Parquet sink
//     with its default options, under GOMAXPROCS=N, to a file on tmpfs;
//     timed from the query to the published file.
//   - duckdb-writer/N: the same rows held in a DuckDB table (loaded,
//     untimed, from tdsextract's file, so they are the same values) and
//     written by COPY t TO '...' (FORMAT parquet, COMPRESSION zstd) with
//     SET threads = N; the COPY alone is timed.
//
// Legs run interleaved (A B C D, D C B A, ...), each once untimed before
// each timed run. Both writers' files are read back by DuckDB after the
// runs and must hold the same rows (count and a hash over every value):
// that is the checksum of this mode. FileBytes is each leg's file size.

// parquetThreads are the thread counts the mode compares.
var parquetThreads = []int{1, 2}

func runParquet(addr, shape string, reps int, set map[string]any) ([]Result, error) {
	db, err := duckdbtest.Open(0)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	query := "SELECT * FROM " + tableOf(shape)
	sc, err := record(addr, func(p string) error { return tdsxQuery(p, query, &sumSink{}) })
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	wire := int64(len(sc.replies[len(sc.replies)-1]))
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	tmp, err := os.MkdirTemp(dir, "tdsx-bench-parquet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	connect := replayConnect(context.Background(), addr, sc) // decode alone, as in memory mode
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)

	estRows := int64(-1)
	ourFile := func(n int) string { return filepath.Join(tmp, fmt.Sprintf("tdsx%d.parquet", n)) }
	duckFile := func(n int) string { return filepath.Join(tmp, fmt.Sprintf("duck%d.parquet", n)) }
	tdsxLegFor := func(n int) leg {
		return leg{name: fmt.Sprintf("tdsextract-parquet/%d", n), run: func() (sample, error) {
			runtime.GOMAXPROCS(n)
			defer runtime.GOMAXPROCS(procs)
			c, err := connect()
			if err != nil {
				return sample{}, err
			}
			defer c.Close()
			opts := map[string]any{"path": ourFile(n)}
			for k, v := range set {
				opts[k] = v
			}
			cfg, err := parquet.ParseConfig(opts)
			if err != nil {
				return sample{}, err
			}
			s, err := parquet.New(cfg)
			if err != nil {
				return sample{}, err
			}
			ctx := context.Background()
			// the source's row count, as the engine passes it for a table
			// from the catalog (the first run, which loads DuckDB, has none)
			if err := s.Open(ctx, sinks.ExtractInfo{Name: shape, EstimatedRows: estRows}); err != nil {
				return sample{}, err
			}
			w := startWatch()
			_, err = c.Query(ctx, session.Query{SQL: query}, s)
			var st sinks.Stats
			if err == nil {
				st, err = s.Publish(ctx)
			}
			smp := w.stop()
			if err != nil {
				_ = s.Abort(ctx)
				return sample{}, err
			}
			return smp.of(st.Rows, ""), nil
		}}
	}
	duckLegFor := func(n int) leg {
		return leg{name: fmt.Sprintf("duckdb-writer/%d", n), run: func() (sample, error) {
			if _, err := db.Exec(fmt.Sprintf("SET threads = %d", n)); err != nil {
				return sample{}, err
			}
			w := startWatch()
			_, err := db.Exec("COPY t TO " + sqlQuote(duckFile(n)) + " (FORMAT parquet, COMPRESSION zstd)")
			smp := w.stop()
			if err != nil {
				return sample{}, fmt.Errorf("duckdb: %w", err)
			}
			var rows int64
			if err := db.QueryRow("SELECT count(*) FROM t").Scan(&rows); err != nil {
				return sample{}, err
			}
			smp = smp.of(rows, "")
			smp.allocs = -1 // DuckDB allocates outside Go's heap
			return smp, nil
		}}
	}
	// DuckDB's table: the rows of tdsextract's file.
	first, err := tdsxLegFor(1).run()
	if err != nil {
		return nil, fmt.Errorf("leg tdsextract-parquet/1: %w", err)
	}
	estRows = first.rows
	if _, err := db.Exec("CREATE TABLE t AS SELECT * FROM read_parquet(" + sqlQuote(ourFile(1)) + ")"); err != nil {
		return nil, fmt.Errorf("duckdb load: %w", err)
	}
	var cols int
	if err := db.QueryRow("SELECT count(*) FROM (DESCRIBE t)").Scan(&cols); err != nil {
		return nil, err
	}
	// legs 2k and 2k+1: tdsextract and DuckDB at parquetThreads[k]
	var legs []leg
	for _, n := range parquetThreads {
		legs = append(legs, tdsxLegFor(n), duckLegFor(n))
	}

	res, err := runReps(legs, reps)
	if err != nil {
		return nil, err
	}

	// Parity: every file holds the same rows.
	var files []string
	for _, n := range parquetThreads {
		files = append(files, ourFile(n), duckFile(n))
	}
	sums := make([]string, len(files))
	sizes := make([]int64, len(files))
	for i, f := range files {
		if sums[i], err = fileChecksum(db, f); err != nil {
			return nil, err
		}
		if sums[i] != sums[0] {
			return nil, fmt.Errorf("CHECKSUM MISMATCH: %s holds %s, %s holds %s", files[0], sums[0], f, sums[i])
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		sizes[i] = st.Size()
	}

	var out []Result
	for i, l := range legs {
		o := res[i]
		r := Result{Shape: shape, Mode: "parquet", Leg: l.name, Rows: o.rows, WireBytes: wire, Reps: len(o.ms),
			MedianMs: median(o.ms), MinMs: slices.Min(o.ms), MaxMs: slices.Max(o.ms), Checksum: sums[i], AllMs: o.ms,
			CPUMs: median(o.cpu), Columns: cols, FileBytes: sizes[i]}
		r.RowsPerS = float64(o.rows) / (r.MedianMs / 1000)
		r.OrderBias = median(o.rev) / median(o.fwd)
		r.NsPerRow = r.MedianMs * 1e6 / float64(o.rows)
		if cols > 0 {
			r.NsPerCell = r.NsPerRow / float64(cols)
		}
		r.MBPerS = float64(wire) / 1e6 / (r.MedianMs / 1000)
		if i%2 == 1 {
			// DuckDB's time over tdsextract's at the same thread count, per
			// interleaved pair: above 1, tdsextract wrote more rows/s
			pr := make([]float64, len(o.ms))
			for k := range o.ms {
				pr[k] = o.ms[k] / res[i-1].ms[k]
			}
			r.RatioToTDSX = &Ratio{OfMedians: r.MedianMs / median(res[i-1].ms), PairMed: median(pr), PairMin: slices.Min(pr), PairMax: slices.Max(pr)}
		}
		out = append(out, r)
	}
	return out, nil
}

// fileChecksum is DuckDB's reading of a Parquet file: its row count and
// the sum of a hash of every row (all columns).
func fileChecksum(db *sql.DB, path string) (string, error) {
	var n int64
	var h string
	q := "SELECT count(*), CAST(sum(hash(t)) AS VARCHAR) FROM read_parquet(" + sqlQuote(path) + ") t"
	if err := db.QueryRow(q).Scan(&n, &h); err != nil {
		return "", fmt.Errorf("duckdb reading %s: %w", path, err)
	}
	return fmt.Sprintf("%d rows, %s", n, h), nil
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// parquetSummary is one line per shape of the parquet mode: file sizes and
// rows/s of both writers, and their ratios, at each thread count.
func parquetSummary(rs []Result) string {
	var b strings.Builder
	b.WriteString("| shape | rows | threads | tdsextract file | DuckDB file | size ratio | tdsextract rows/s (decode + write) | DuckDB writer rows/s | tdsextract rows/s ÷ DuckDB's (median of pairs, min..max) | checksum |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	by := map[string]Result{}
	var shapes []string
	for _, r := range rs {
		if r.Mode != "parquet" {
			continue
		}
		if !slices.Contains(shapes, r.Shape) {
			shapes = append(shapes, r.Shape)
		}
		by[r.Shape+" "+r.Leg] = r
	}
	for _, sh := range shapes {
		for _, n := range parquetThreads {
			t, d := by[fmt.Sprintf("%s tdsextract-parquet/%d", sh, n)], by[fmt.Sprintf("%s duckdb-writer/%d", sh, n)]
			ratio := "-"
			if d.RatioToTDSX != nil {
				ratio = fmt.Sprintf("%.2f (%.2f..%.2f)", d.RatioToTDSX.PairMed, d.RatioToTDSX.PairMin, d.RatioToTDSX.PairMax)
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.3f | %.0f | %.0f | %s | %s |\n", sh, t.Rows, n, t.FileBytes, d.FileBytes,
				float64(t.FileBytes)/float64(d.FileBytes), t.RowsPerS, d.RowsPerS, ratio, t.Checksum)
		}
	}
	return b.String()
}
