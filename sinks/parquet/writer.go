package parquet

import (
	"bufio"
	"context"
	"fmt"
	"path/filepath"

	pq "github.com/parquet-go/parquet-go"

	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/outfile"
)

func (s *Sink) fileName(n int) string {
	if s.partDir != "" {
		return filepath.Join(s.partDir, fmt.Sprintf("part-%04d.parquet", n))
	}
	if !s.split {
		return s.final
	}
	return outfile.Numbered(s.final, n, ".parquet")
}

// startFile opens the next file and its writer. The encodings are chosen
// from the first batch of the run (b may be empty) and kept for its
// later files, so every file of a run has the same schema.
func (s *Sink) startFile(b *batch) error {
	s.beginFile(b.rows)
	return s.openFile(b.cols, int(b.rows), int(b.rows), s.threads)
}

// beginFile is the decoder's part of starting a file, which has rows rows
// so far: the counters the cell calls and EndRow use.
func (s *Sink) beginFile(rows int64) {
	s.fileNo++
	s.fileRows = rows
	s.rotate = false
}

// openFile creates the file numbered by beginFile and its writer,
// choosing the encodings first if the run has none yet: from the first
// nrows rows of cols, for a row group of about groupRows rows, on up to
// trialThreads goroutines. It touches
// only the file's side of the sink (files, cur, bw, cnt, w, enc), so it
// may run in a batch's first encoding job while the decoder keeps filling
// the batch (cols is then the job's snapshot); the decoder reads that
// side again only after the job is done.
func (s *Sink) openFile(cols []colBuf, nrows, groupRows, trialThreads int) error {
	f, err := s.files.Create(s.fileName(s.fileNo))
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	s.cur = f
	// count before our own buffer, so max_bytes sees committed row groups
	if s.bw == nil {
		s.bw = bufio.NewWriterSize(f, 256<<10)
	} else {
		s.bw.Reset(f)
	}
	s.cnt = outfile.Counter{W: s.bw}
	if s.enc == nil && s.trials != nil {
		s.enc = <-s.trials // started early by the decoder (earlyTrials)
	}
	if s.enc == nil {
		s.enc = s.chooseEncodings(cols, nrows, max(nrows, groupRows), trialThreads)
	}
	schema := buildSchema(s.info.Name, s.cols, s.plans, s.enc)
	opts := []pq.WriterOption{schema,
		pq.PageBufferSize(s.cfg.PageBytes),
		pq.Compression(s.codec),
		pq.DataPageStatistics(s.cfg.PageStatistics),
		pq.DictionaryMaxBytes(dictMaxBytes),
		pq.CreatedBy("tdsextract", "", ""),
		// Version 1 data pages compress their definition levels with the
		// values; version 2 stores them raw. For poc48's int columns (5%
		// NULL) that was 571 KB per 200,000 values against 786 KB.
		pq.DataPageVersion(1),
		pq.WriteBufferSize(0), // the sink buffers (and counts) itself
	}
	// validate first: NewWriter panics on an invalid configuration (options
	// go to NewWriter directly, since a *WriterConfig passed as an option
	// does not carry zero values such as WriteBufferSize(0))
	if _, err := pq.NewWriterConfig(opts...); err != nil {
		return fmt.Errorf("parquet: writer config: %w", err)
	}
	s.w = pq.NewGenericWriter[any](&s.cnt, opts...)
	return nil
}

// handoff sends the filled batch to an encoder goroutine and makes a fresh
// (recycled) batch current. At most Config.Parallel batches are encoding;
// beyond that it waits for the oldest and commits it, so memory stays at
// about (Parallel+1) batches.
func (s *Sink) handoff() {
	b := s.fill
	if b.rows == 0 || s.err != nil {
		return
	}
	if s.settle(); s.err != nil {
		return
	}
	if s.w == nil {
		if err := s.startFile(b); err != nil {
			s.fail(err)
			return
		}
	}
	for len(s.inflight) >= s.cfg.Parallel {
		s.commitOldest()
	}
	if s.err != nil {
		return
	}
	if b.owner != s.w {
		b.rg = s.w.BeginRowGroup()
		b.owner = s.w
	}
	s.groups++
	b.encode(s.threads)
	s.inflight = append(s.inflight, b)
	if n := len(s.free); n > 0 {
		s.fill = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		// an empty batch: its columns grow straight to the predicted row
		// group size once it holds predictFrom rows (sink.go), and nothing
		// is allocated when no further row comes (the last handoff)
		s.fill = s.newBatch()
	}
	s.relend()
	// commit whatever already finished, releasing its memory early
	for len(s.inflight) > 0 && s.err == nil {
		select {
		case err := <-s.inflight[0].done:
			s.commit(err)
		default:
			return
		}
	}
}

// headroom is the capacity for a batch column that held n items in the
// previous row group: a little more, so it does not have to double.
func headroom(n int) int { return n + n/8 }

// trim reallocates the columns of a batch that grew far beyond what it
// holds (the first batch of a run grows by doubling), so that memory stays
// near (parallel+1) × row_group_bytes. It allocates only when oversized.
func (b *batch) trim() {
	for i := range b.cols {
		c := &b.cols[i]
		if cap(c.u64) > len(c.u64)*3/2+1024 {
			c.u64 = make([]uint64, 0, headroom(len(c.u64)))
		}
		if cap(c.def) > len(c.def)*3/2+1024 {
			c.def = make([]uint8, 0, headroom(len(c.def)))
		}
		if cap(c.arena) > len(c.arena)*3/2+4096 {
			c.arena = make([]byte, 0, headroom(len(c.arena)))
		}
		if cap(c.off) > len(c.off)*3/2+1024 {
			c.off = make([]int, 0, headroom(len(c.off)))
		}
		if cap(c.aux) > len(c.aux)*3/2+1024 {
			c.aux = make([]int16, 0, headroom(len(c.aux)))
		}
	}
}

func (s *Sink) commitOldest() {
	s.commit(<-s.inflight[0].done)
}

// commit writes the oldest in-flight row group (already encoded) to the file.
func (s *Sink) commit(encErr error) {
	b := s.inflight[0]
	s.inflight = s.inflight[1:]
	if encErr != nil {
		s.fail(fmt.Errorf("parquet: encode row group: %w", encErr))
	} else if s.err == nil {
		if _, err := b.rg.Commit(); err != nil {
			s.fail(fmt.Errorf("parquet: write row group to %s: %w", s.cur.Final, err))
		}
		if s.geo != nil {
			if s.fileGeo == nil {
				s.fileGeo = make([]uint16, len(b.cols))
			}
			for i := range b.cols {
				s.fileGeo[i] |= b.cols[i].geoTypes
			}
		}
	}
	b.trim()
	b.reset()
	s.free = append(s.free, b)
	if s.cfg.MaxBytes > 0 && s.cnt.N >= s.cfg.MaxBytes {
		s.rotate = true
	}
}

// finishFile commits everything and closes the current file (not yet
// published). The next rows start a new numbered file.
func (s *Sink) finishFile() {
	s.handoff()
	for len(s.inflight) > 0 {
		s.commitOldest()
	}
	if s.w == nil || s.err != nil {
		return
	}
	if s.geo != nil {
		s.setGeoMetadata()
	}
	if err := s.w.Close(); err != nil {
		s.fail(fmt.Errorf("parquet: close %s: %w", s.cur.Final, err))
		return
	}
	if err := s.bw.Flush(); err != nil {
		s.fail(fmt.Errorf("parquet: write %s: %w", s.cur.Final, err))
		return
	}
	if err := s.cur.Finish(); err != nil {
		s.fail(fmt.Errorf("parquet: %w", err))
		return
	}
	s.bytesOut += s.cnt.N
	s.w, s.cur = nil, nil
	s.fileRows = 0
}

// Publish writes the last row group, closes the file and renames every
// file to its final name. An empty result set still gives a valid file
// with the schema and no row groups; an extract without any result set
// publishes nothing.
func (s *Sink) Publish(ctx context.Context) (sinks.Stats, error) {
	if s.err != nil {
		return sinks.Stats{}, s.err
	}
	if s.part != nil {
		return s.publishPartitioned()
	}
	if s.settle(); s.err != nil {
		return sinks.Stats{}, s.err
	}
	if s.started && s.w == nil && (s.fill.rows > 0 || len(s.files.Files) == 0) {
		if err := s.startFile(s.fill); err != nil {
			s.fail(err)
		}
	}
	if s.w != nil {
		s.finishFile()
	}
	if s.err != nil {
		return sinks.Stats{}, s.err
	}
	// With replace, the parts of an earlier, longer (or differently
	// split) run would otherwise sit beside the new ones as if they
	// belonged.
	files, err := s.files.PublishOutput(s.final, s.split, ".parquet")
	if err != nil {
		s.fail(fmt.Errorf("parquet: %w", err))
		return sinks.Stats{}, s.err
	}
	s.releaseValues()
	return sinks.Stats{Rows: s.rows, Bytes: s.bytesOut, Files: files}, nil
}

// Abort waits for the encoders and removes every temporary file.
func (s *Sink) Abort(ctx context.Context) error {
	var perr error
	if s.part != nil {
		perr = s.abortPartitions(ctx)
	}
	for len(s.inflight) > 0 {
		<-s.inflight[0].done
		s.inflight = s.inflight[1:]
	}
	if s.fill != nil && s.fill.streaming {
		<-s.fill.idle
		s.fill.streaming = false
	}
	s.w, s.cur = nil, nil
	if s.err == nil {
		s.err = fmt.Errorf("parquet: aborted")
	}
	if err := s.files.Abort(); err != nil {
		return fmt.Errorf("parquet: abort: %w", err)
	}
	return perr
}
