package sampledb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// dbo.events is the one table rows can be added to while the server runs
// (Insert, or INSERT through sqlexec): the table incremental exports are
// tested on. Its generated rows are a pure function of (seed, row) like
// every other table's; inserted rows are kept in memory after them.
//
//	id   int IDENTITY(1,1) PRIMARY KEY CLUSTERED
//	ts   datetime2(7) NOT NULL   generated rows: one second apart from 2026-01-01;
//	                             an insert without ts gets the last row's + 100 ns (the
//	                             declared default is sysutcdatetime(), as an application's
//	                             would be; the sample server stays deterministic instead)
//	kind nvarchar(20) NOT NULL
//	amount decimal(18,2) NULL
//	rv   rowversion              database-wide, increasing in insertion order
const (
	eventsSchema = "dbo"
	eventsName   = "events"
)

// EventsBase is the ts of generated row 0 of dbo.events; row i is
// EventsBase + i seconds.
var EventsBase = decode.DateTime{Days: decode.DateFromCivil(2026, 1, 1)}

// rvBase is the rowversion of generated row 0 of dbo.events: row i has
// rvBase+i, and @@DBTS is the last one handed out.
const rvBase = 0x7D0

var eventKinds = []string{"click", "view", "purchase", "refund", "signup", "login"}

func (b *builder) events() {
	t := b.newTable(eventsSchema, eventsName, []colDef{
		{name: "id", sqlType: "int"},
		{name: "ts", sqlType: "datetime2(7)"},
		{name: "kind", sqlType: "nvarchar(20)"},
		{name: "amount", sqlType: "decimal(18,2)", nullable: true},
		{name: "rv", sqlType: "rowversion"},
	})
	t.Identity = "id"
	t.Columns[0].Flags = decode.ColFlagIdentity
	t.setKey("id", true)
	t.Defaults = map[string]string{"ts": "(sysutcdatetime())"}
	t.appendable = true
	gen := t.Rows
	seed := mix(uint64(b.db.seed) ^ 0xE7E27)
	t.genFn = func(i int64, dst []any) []any {
		h := mix(seed ^ uint64(i)*golden)
		ts := addSeconds(EventsBase, i)
		var amount any
		if h%5 != 0 {
			d := dec(int64(h >> 8 % 100000))
			d.Precision, d.Scale = 18, 2
			amount = d
		}
		return append(dst, i+1, ts, eventKinds[h>>40%uint64(len(eventKinds))], amount, rowVersion(rvBase+i))
	}
	t.rowFn, t.genRows = t.genFn, gen
	b.db.dbts = rvBase + gen - 1
}

// addSeconds adds s seconds to a datetime2 value.
func addSeconds(dt decode.DateTime, s int64) decode.DateTime {
	const day = 86400
	dt.Days += int32(s / day)
	dt.Ticks += s % day * ticksPerSecond
	return dt
}

// rowVersion is a rowversion value: 8 bytes, big-endian.
func rowVersion(v int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(v))
}

// RowVersion returns the rowversion value v as SQL Server sends it.
func RowVersion(v int64) []byte { return rowVersion(v) }

// DBTS returns @@DBTS: the last rowversion handed out in this version of
// the database. MIN_ACTIVE_ROWVERSION() is DBTS()+1 (the sample database
// has no open write transactions).
func (db *DB) DBTS() int64 { return db.dbts }

// SnapshotAllowed reports ALLOW_SNAPSHOT_ISOLATION (Config.NoSnapshot
// turns it off).
func (db *DB) SnapshotAllowed() bool { return !db.noSnapshot }

// Appendable reports whether rows can be inserted into t.
func (t *Table) Appendable() bool { return t.appendable }

// ErrNotAppendable is returned by Insert for a generated table.
var ErrNotAppendable = errors.New("sampledb: only dbo.events accepts new rows; the other tables are generated")

// Insert adds rows to an appendable table (dbo.events) and returns the
// identity values they got. cols names the columns each row of rows
// gives, in order; the identity and rowversion columns are generated and
// may not be given, a nullable column left out is NULL, and ts left out
// is its default, the current version's last ts plus 100 ns. Values are
// the generic types of package decode (int64, decode.DateTime, string,
// decode.Decimal, nil), checked against the column types. Insert is safe
// for concurrent use: it makes a new version of the database, which
// statements started afterwards see (Current); a statement already
// running, or a snapshot transaction, keeps the version it started with.
func (db *DB) Insert(schema, name string, cols []string, rows [][]any) ([]int64, error) {
	db.live.mu.Lock()
	defer db.live.mu.Unlock()
	cur := db.Current()
	t, ok := cur.Table(schema, name)
	if !ok {
		return nil, fmt.Errorf("sampledb: no table %s.%s", schema, name)
	}
	if !t.appendable {
		return nil, ErrNotAppendable
	}
	idx := make([]int, len(cols))
	for k, c := range cols {
		i := t.ColumnIndex(c)
		switch {
		case i < 0:
			return nil, fmt.Errorf("sampledb: %s has no column %q", t.FullName(), c)
		case strings.EqualFold(c, t.Identity) || t.meta[i].decl.Kind == decode.KindRowVersion:
			return nil, fmt.Errorf("sampledb: %s.%s is generated and cannot be given", t.FullName(), c)
		}
		idx[k] = i
	}
	nt := *t
	nt.extra = t.extra[:len(t.extra):len(t.extra)] // appends never touch the old version's rows
	_, _, last, _ := t.IdentityValues()
	lastTS := EventsBase
	if t.Rows > 0 {
		lastTS = t.Row(t.Rows-1, nil)[1].(decode.DateTime)
	}
	dbts := cur.dbts
	ids := make([]int64, 0, len(rows))
	for r, in := range rows {
		if len(in) != len(cols) {
			return nil, fmt.Errorf("sampledb: row %d has %d values for %d columns", r, len(in), len(cols))
		}
		row := make([]any, len(t.Columns))
		given := make([]bool, len(t.Columns))
		for k, v := range in {
			row[idx[k]], given[idx[k]] = v, true
		}
		last++
		dbts++
		row[0], row[4] = last, rowVersion(dbts)
		if !given[1] {
			lastTS = addTicks(lastTS, 1)
			row[1] = lastTS
		} else if ts, ok := row[1].(decode.DateTime); ok {
			lastTS = ts
		}
		if !given[2] {
			row[2] = "insert"
		}
		for c := range row {
			if row[c] == nil && !t.meta[c].nullable {
				return nil, fmt.Errorf("sampledb: row %d: %s.%s is NOT NULL", r, t.FullName(), t.Columns[c].Name)
			}
		}
		if _, err := decode.AppendRow(nil, t.Columns, row); err != nil {
			return nil, fmt.Errorf("sampledb: row %d: %w", r, err)
		}
		nt.extra = append(nt.extra, row)
		ids = append(ids, last)
	}
	nt.Rows = t.genRows + int64(len(nt.extra))
	gen, extra := nt.genRows, nt.extra
	genFn := t.genFn
	nt.rowFn = func(i int64, dst []any) []any {
		if i >= gen {
			return append(dst, extra[i-gen]...)
		}
		return genFn(i, dst)
	}
	next := cur.withTable(t, &nt)
	next.dbts = dbts
	db.live.cur.Store(next)
	return ids, nil
}

// addTicks adds n 100 ns ticks to a datetime2 value.
func addTicks(dt decode.DateTime, n int64) decode.DateTime {
	const ticksPerDay = 86400 * ticksPerSecond
	dt.Ticks += n
	for dt.Ticks >= ticksPerDay {
		dt.Ticks -= ticksPerDay
		dt.Days++
	}
	return dt
}

// Current returns the newest version of the database: db itself until
// rows are inserted.
func (db *DB) Current() *DB {
	if c := db.live.cur.Load(); c != nil {
		return c
	}
	return db
}

// withTable returns a new version of db in which nt replaces old. The
// catalog views of the new version are built afresh when first read, so
// row counts and identity values follow.
func (db *DB) withTable(old, nt *Table) *DB {
	next := &DB{name: db.name, seed: db.seed, byName: make(map[string]*Table, len(db.byName)),
		views: db.views, seqs: db.seqs, live: db.live, dbts: db.dbts, noSnapshot: db.noSnapshot}
	next.tables = make([]*Table, len(db.tables))
	for i, t := range db.tables {
		if t == old {
			t = nt
		}
		next.tables[i] = t
	}
	for k, t := range db.byName {
		if t == old {
			t = nt
		}
		next.byName[k] = t
	}
	return next
}
