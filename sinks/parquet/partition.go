package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/outfile"
)

// HiveDefaultPartition is the directory value Hive and Spark write for a
// NULL (or empty string) partition value and read back as NULL.
const HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// maxDirName is the longest directory name most file systems accept.
const maxDirName = 255

// partitioner routes rows to hive-style partitions (partition_by). The
// parent sink's batch is then a one-row staging area: its cell calls fill
// it as usual, and EndRow copies the row into the batch of its partition
// (each value is copied once more) and clears it. Every partition is a
// child Sink that owns its numbered files and reuses the whole
// batch/encode/commit/rotate machinery; the partitioner bounds how many
// are open, how much they buffer in total and how many row groups are
// encoding at once across all of them.
type partitioner struct {
	pcols  []int     // source column of each partition_by entry, in order
	prefix []string  // escaped "<column>=" per partition column
	cplans []colPlan // plans of the partitions' files (leaf -1: not stored)
	root   string
	rooted bool // root existed before the run (Abort keeps it)

	parts map[string]*partition // by raw key (see buildKey)
	byDir map[string]*partition // by directory (NULL and "" share one)
	all   []*partition          // creation order

	key, last []byte // scratch: this row's raw key, the previous row's
	lastP     *partition

	head, tail *partition // open partitions, most recently used first
	open       int
	buffered   int64    // bytes in the open partitions' fill batches
	pool       []*batch // empty batches for partitions to fill
	seq        uint64   // handoff counter: global commit order
	text       []byte
}

// partition is one partition directory.
type partition struct {
	sink       *Sink
	dir        string
	isOpen     bool
	prev, next *partition
}

// partitionIndex returns the position in partition_by naming column name
// (exactly, or else case-insensitively), or -1.
func (c *Config) partitionIndex(name string) int {
	for i, p := range c.PartitionBy {
		if p == name {
			return i
		}
	}
	for i, p := range c.PartitionBy {
		if strings.EqualFold(p, name) {
			return i
		}
	}
	return -1
}

// findColumn finds a partition_by name among the result's columns:
// exactly, or else case-insensitively when that is unambiguous.
func findColumn(cols []decode.Column, name string) int {
	for i := range cols {
		if cols[i].Name == name {
			return i
		}
	}
	j := -1
	for i := range cols {
		if strings.EqualFold(cols[i].Name, name) {
			if j >= 0 {
				return -1
			}
			j = i
		}
	}
	return j
}

// partitionable reports whether a column can name partition directories.
func partitionable(c *decode.Column, p *colPlan) error {
	ok := false
	switch p.kind {
	case kBool, kInt32, kInt64, kDate, kUUID:
		ok = true
	case kString:
		switch c.Kind() {
		case decode.KindXML, decode.KindJSON, decode.KindText, decode.KindNText:
		default:
			ok = !c.Type.IsPLP()
		}
	}
	if ok {
		return nil
	}
	return fmt.Errorf("parquet: partition_by column %q is %s, which cannot name a partition directory: "+
		"partition by bit, integer, date, uniqueidentifier or char/varchar/nchar/nvarchar up to 8000 bytes "+
		"(cast in the query, e.g. CAST(col AS date) for a datetime)", c.Name, decode.SQLTypeName(&decode.Column{Type: c.Type}))
}

// initPartitions resolves partition_by against the result's columns.
func (s *Sink) initPartitions() error {
	pt := &partitioner{parts: map[string]*partition{}, byDir: map[string]*partition{}}
	excl := make([]bool, len(s.cols))
	for _, name := range s.cfg.PartitionBy {
		i := findColumn(s.cols, name)
		if i < 0 {
			names := make([]string, len(s.cols))
			for k := range s.cols {
				names[k] = s.cols[k].Name
			}
			return fmt.Errorf("parquet: partition_by column %q is not a column of extract %q (columns: %s)", name, s.info.Name, strings.Join(names, ", "))
		}
		if slices.Contains(pt.pcols, i) {
			return fmt.Errorf("parquet: partition_by names column %q twice", s.cols[i].Name)
		}
		if err := partitionable(&s.cols[i], &s.plans[i]); err != nil {
			return err
		}
		pt.pcols = append(pt.pcols, i)
		pt.prefix = append(pt.prefix, string(hiveEscape(nil, []byte(s.cols[i].Name)))+"=")
		excl[i] = !s.cfg.PartitionColumnsInFile
	}
	pt.cplans = slices.Clone(s.plans)
	leaf := 0
	for i := range pt.cplans {
		p := &pt.cplans[i]
		if excl[i] {
			p.leaf = -1
			continue
		}
		p.leaf = leaf
		leaf++
		if p.offset || p.vtype {
			leaf++
		}
	}
	if leaf == 0 {
		return fmt.Errorf("parquet: every column of extract %q is a partition column, so the files would have no columns; select more columns or set partition_columns_in_file: true", s.info.Name)
	}
	pt.root = outfile.ResolveInfoPath(s.cfg.Path, s.info, "")
	if _, err := os.Stat(pt.root); err == nil {
		pt.rooted = true
	}
	s.part = pt
	return nil
}

// hiveEscape appends v escaped as Hive and Spark escape partition path
// names: %XX (upper-case hex) for control characters, DEL and
// " # % ' * / : = ? \ { [ ] ^; other bytes (UTF-8 included) as they are.
func hiveEscape(dst, v []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, ch := range v {
		if hiveEscaped(ch) {
			dst = append(dst, '%', hex[ch>>4], hex[ch&15])
		} else {
			dst = append(dst, ch)
		}
	}
	return dst
}

func hiveEscaped(ch byte) bool {
	if ch < 0x20 || ch == 0x7F {
		return true
	}
	switch ch {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '{', '[', ']', '^':
		return true
	}
	return false
}

// buildKey sets pt.key to the raw partition values of the staged row: per
// column a tag (0 NULL, 1 bytes, 2 fixed) and the value's bytes. Equal
// keys are equal values; nothing is allocated once the buffer has grown.
func (pt *partitioner) buildKey(b *batch) {
	k := pt.key[:0]
	for _, i := range pt.pcols {
		c := &b.cols[i]
		switch {
		case c.optional && c.def[0] == 0:
			k = append(k, 0)
		case c.kind.isVar():
			k = append(k, 1)
			k = binary.BigEndian.AppendUint32(k, uint32(len(c.arena)))
			k = append(k, c.arena...)
		default:
			k = append(k, 2)
			k = binary.BigEndian.AppendUint64(k, c.u64[0])
		}
	}
	pt.key = k
}

// appendValue appends the directory text of the staged value of c.
func appendValue(dst []byte, c *colBuf) []byte {
	if c.optional && c.def[0] == 0 {
		return append(dst, HiveDefaultPartition...)
	}
	switch c.kind {
	case kBool:
		return strconv.AppendBool(dst, c.u64[0] != 0)
	case kInt32, kInt64:
		return strconv.AppendInt(dst, int64(c.u64[0]), 10)
	case kDate:
		return decode.AppendDateText(dst, int32(int64(c.u64[0]))+epochDays)
	case kUUID:
		var g decode.GUID
		copy(g[:], c.arena)
		return decode.AppendGUIDText(dst, g)
	}
	if len(c.arena) == 0 { // Hive: an empty string is the default partition
		return append(dst, HiveDefaultPartition...)
	}
	return hiveEscape(dst, c.arena)
}

// partitionDir returns the directory of the staged row's partition.
func (s *Sink) partitionDir() (string, error) {
	pt := s.part
	dir := pt.root
	for k, i := range pt.pcols {
		seg := appendValue(append(pt.text[:0], pt.prefix[k]...), &s.fill.cols[i])
		pt.text = seg
		if len(seg) > maxDirName {
			return "", fmt.Errorf("parquet: partition directory %.60q... is %d bytes, more than file systems allow (%d); partition by a shorter value", seg, len(seg), maxDirName)
		}
		dir = filepath.Join(dir, string(seg))
	}
	return dir, nil
}

// endRowPartitioned routes the staged row to its partition.
func (s *Sink) endRowPartitioned() error {
	pt := s.part
	st := s.fill
	pt.buildKey(st)
	p := pt.lastP
	if p == nil || !bytes.Equal(pt.key, pt.last) {
		p = pt.parts[string(pt.key)] // no allocation: map index by string([]byte)
		if p == nil {
			if p = s.newPartition(); p == nil {
				return s.err
			}
		}
		pt.last = append(pt.last[:0], pt.key...)
		pt.lastP = p
	}
	if !p.isOpen {
		s.openPartition(p)
		if s.err != nil {
			return s.err
		}
	} else if pt.head != p {
		pt.unlink(p)
		pt.pushFront(p)
	}
	c := p.sink
	b := c.fill
	before := b.bytes
	b.appendRow(st)
	st.reset()
	pt.buffered += b.bytes - before + c.fixedBytes
	s.rows++
	c.rows++
	c.fileRows++
	if group, fileFull := c.full(); group {
		s.flushPartition(p, fileFull)
	}
	for pt.buffered > s.cfg.PartitionBufferBytes && s.err == nil {
		l := pt.largest()
		if l == nil {
			pt.buffered = 0
			break
		}
		s.flushPartition(l, false)
	}
	return s.err
}

// appendRow copies the one staged row of src into b (columns kept out of
// the files are skipped).
func (b *batch) appendRow(src *batch) {
	for i := range b.cols {
		d := &b.cols[i]
		if d.leaf < 0 {
			continue
		}
		c := &src.cols[i]
		if d.optional {
			d.def = append(d.def, c.def[0])
		}
		if d.kind.isVar() {
			d.arena = append(d.arena, c.arena...)
			d.off = append(d.off, len(d.arena))
		} else {
			d.u64 = append(d.u64, c.u64[0])
		}
		if d.offset {
			d.aux = append(d.aux, c.aux[0])
		}
		d.geoTypes |= c.geoTypes
		if d.vtype {
			d.tarena = append(d.tarena, c.tarena...)
			d.toff = append(d.toff, len(d.tarena))
		}
	}
	b.rows++
	b.bytes += src.bytes
}

// newPartition registers the staged row's partition (not yet open).
func (s *Sink) newPartition() *partition {
	pt := s.part
	dir, err := s.partitionDir()
	if err != nil {
		s.fail(err)
		return nil
	}
	if p := pt.byDir[dir]; p != nil { // NULL and "" share the default partition
		pt.parts[string(pt.key)] = p
		return p
	}
	cfg := s.cfg
	cfg.PartitionBy = nil
	c := &Sink{cfg: cfg, info: s.info, split: true, codec: s.codec, threads: s.threads, cols: s.cols, plans: pt.cplans,
		started: true, fixedBytes: s.fixedBytes, partDir: dir, geo: s.geo}
	p := &partition{sink: c, dir: dir}
	pt.parts[string(pt.key)] = p
	pt.byDir[dir] = p
	pt.all = append(pt.all, p)
	return p
}

// openPartition gives p a batch, first closing the least recently used
// partition when max_open_partitions are open.
func (s *Sink) openPartition(p *partition) {
	pt := s.part
	for pt.open >= s.cfg.MaxOpenPartitions && pt.tail != nil && s.err == nil {
		s.closePartition(pt.tail)
	}
	if s.err != nil {
		return
	}
	p.sink.fill = pt.take(p.sink)
	p.isOpen = true
	pt.pushFront(p)
	pt.open++
}

// closePartition writes out p's rows, finishes its file (published with
// the others in Publish) and returns its batches to the pool. A later row
// for p opens the next numbered file.
func (s *Sink) closePartition(p *partition) {
	pt := s.part
	s.flushPartition(p, true)
	c := p.sink
	if c.fill != nil {
		c.fill.reset()
		c.free = append(c.free, c.fill)
		c.fill = nil
	}
	pt.reclaim(c)
	c.bw = nil // a closed partition keeps no buffers
	pt.unlink(p)
	p.isOpen = false
	pt.open--
}

// flushPartition hands p's batch to an encoder as a row group (and, with
// finish or when max_bytes was reached, finishes p's file).
func (s *Sink) flushPartition(p *partition, finish bool) {
	pt := s.part
	c := p.sink
	if b := c.fill; b != nil {
		pt.buffered -= c.buffered()
		if b.rows > 0 && len(c.free) == 0 {
			// the next fill batch: a pooled one or an empty one that grows
			// with its partition (handoff would pre-size it like this one)
			c.free = append(c.free, pt.take(c))
		}
		c.handoff()
		if n := len(c.inflight); n > 0 && c.inflight[n-1].seq == 0 {
			pt.seq++
			c.inflight[n-1].seq = pt.seq
		}
	}
	s.capInflight()
	if (finish || c.rotate) && c.err == nil && s.err == nil {
		c.finishFile()
	}
	if c.err != nil {
		s.fail(c.err)
	}
}

// capInflight keeps at most `parallel` row groups encoding across all
// partitions, committing the oldest first, and pools freed batches.
func (s *Sink) capInflight() {
	pt := s.part
	for s.err == nil {
		total := 0
		var oldest *Sink
		for p := pt.head; p != nil; p = p.next {
			c := p.sink
			total += len(c.inflight)
			if len(c.inflight) > 0 && (oldest == nil || c.inflight[0].seq < oldest.inflight[0].seq) {
				oldest = c
			}
		}
		if total <= s.cfg.Parallel || oldest == nil {
			break
		}
		oldest.commitOldest()
		if oldest.err != nil {
			s.fail(oldest.err)
		}
	}
	for p := pt.head; p != nil; p = p.next {
		pt.reclaim(p.sink)
	}
}

// take returns an empty batch for c: pooled (preferably one whose row
// group writer belongs to c's file, which handoff then reuses), else a
// new one. A batch taken from another partition drops that partition's
// row group writer (its page buffers, page_bytes per column, go to the
// garbage collector), so open partitions never hold another's.
func (pt *partitioner) take(c *Sink) *batch {
	n := len(pt.pool)
	if n == 0 {
		return c.newBatch()
	}
	k := n - 1
	for i := range pt.pool {
		if c.w != nil && pt.pool[i].owner == c.w {
			k = i
			break
		}
	}
	b := pt.pool[k]
	pt.pool[k] = pt.pool[n-1]
	pt.pool[n-1] = nil
	pt.pool = pt.pool[:n-1]
	if b.owner != c.w || c.w == nil {
		b.rg, b.owner = nil, nil
	}
	return b
}

// reclaim moves c's free batches to the pool, which keeps at most
// parallel+1 (the rest are left to the garbage collector).
func (pt *partitioner) reclaim(c *Sink) {
	for _, b := range c.free {
		if len(pt.pool) <= c.cfg.Parallel {
			pt.pool = append(pt.pool, b)
		}
	}
	clear(c.free)
	c.free = c.free[:0]
}

// largest is the open partition buffering the most bytes (nil if none).
func (pt *partitioner) largest() *partition {
	var best *partition
	var most int64
	for p := pt.head; p != nil; p = p.next {
		if n := p.sink.buffered(); p.sink.fill.rows > 0 && n > most {
			best, most = p, n
		}
	}
	return best
}

func (pt *partitioner) pushFront(p *partition) {
	p.prev, p.next = nil, pt.head
	if pt.head != nil {
		pt.head.prev = p
	}
	pt.head = p
	if pt.tail == nil {
		pt.tail = p
	}
}

func (pt *partitioner) unlink(p *partition) {
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		pt.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		pt.tail = p.prev
	}
	p.prev, p.next = nil, nil
}

// publishPartitioned finishes every open partition, then renames every
// partition's files to their final names.
func (s *Sink) publishPartitioned() (sinks.Stats, error) {
	pt := s.part
	for pt.head != nil && s.err == nil {
		s.closePartition(pt.head)
	}
	if s.err != nil {
		return sinks.Stats{}, s.err
	}
	st := sinks.Stats{Rows: s.rows}
	for _, p := range pt.all {
		files, err := p.sink.files.Publish()
		if err != nil {
			s.fail(fmt.Errorf("parquet: %w", err))
			return sinks.Stats{}, s.err
		}
		st.Files = append(st.Files, files...)
		st.Bytes += p.sink.bytesOut
	}
	return st, nil
}

// abortPartitions removes every partition's files, then the partition
// directories the run created that are left empty.
func (s *Sink) abortPartitions(ctx context.Context) error {
	pt := s.part
	var errs []error
	for _, p := range pt.all {
		if err := p.sink.Abort(ctx); err != nil {
			errs = append(errs, err)
		}
		p.isOpen = false
	}
	pt.head, pt.tail, pt.open, pt.lastP = nil, nil, 0, nil
	// remove emptied directories, deepest first; os.Remove leaves any
	// directory that still holds something (another run's files)
	for _, p := range pt.all {
		for d := p.dir; len(d) > len(pt.root) && strings.HasPrefix(d, pt.root); d = filepath.Dir(d) {
			if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				break
			}
		}
	}
	if !pt.rooted {
		_ = os.Remove(pt.root)
	}
	return errors.Join(errs...)
}
