package sqlexec

import (
	"bytes"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

func eventsCount(t *testing.T, s *Session) int64 {
	t.Helper()
	d := query(t, s, "SELECT COUNT_BIG(*) FROM dbo.events")
	return d.rows[0][0].(int64)
}

// An INSERT adds rows that the next statement of any session sees, with
// the identity and rowversion generated and ts at full 100 ns precision.
func TestInsertEventsVisibleToNextStatement(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"events": 10}})
	a, b := NewSession(db), NewSession(db)
	if n := eventsCount(t, b); n != 10 {
		t.Fatalf("events has %d rows, want 10", n)
	}
	res := mustExec(t, a, "INSERT INTO dbo.events (ts, kind, amount) VALUES ('2026-06-01T00:00:00.0000001', N'x', 1.50), (@ts, N'y', NULL)",
		Param{Name: "@ts", Value: decode.DateTime{Days: decode.DateFromCivil(2026, 6, 1), Ticks: 2}, Type: decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}})
	if len(res) != 1 || !res[0].Affected || res[0].RowCount != 2 {
		t.Fatalf("INSERT result %+v, want 2 rows affected", res)
	}
	if n := eventsCount(t, b); n != 12 {
		t.Fatalf("after INSERT events has %d rows in another session, want 12", n)
	}
	d := query(t, b, "SELECT id, ts, kind, rv FROM dbo.events WHERE ts > @lo ORDER BY id",
		Param{Name: "lo", Value: decode.DateTime{Days: decode.DateFromCivil(2026, 6, 1), Ticks: 1}, Type: decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}})
	if len(d.rows) != 1 || d.rows[0][0] != int64(12) || d.rows[0][2] != "y" {
		t.Fatalf("rows past 100 ns: %v, want only id 12", d.rows)
	}
	rv := d.rows[0][3].([]byte)
	d = query(t, b, "SELECT @@DBTS, MIN_ACTIVE_ROWVERSION()")
	if !bytes.Equal(d.rows[0][0].([]byte), rv) || !bytes.Equal(d.rows[0][1].([]byte), sampledb.RowVersion(db.Current().DBTS()+1)) {
		t.Fatalf("@@DBTS %x, MIN_ACTIVE_ROWVERSION %x; the last row's rowversion is %x", d.rows[0][0], d.rows[0][1], rv)
	}
	d = query(t, b, "SELECT IDENT_CURRENT('dbo.events')")
	if got := d.rows[0][0].(decode.Decimal); got.Lo != 12 {
		t.Fatalf("IDENT_CURRENT %v, want 12", got)
	}
	// Refused as SQL Server refuses them.
	for sql, num := range map[string]int32{
		"INSERT INTO dbo.events (id, kind) VALUES (1, N'x')": 544,
		"INSERT INTO dbo.events (rv) VALUES (0x01)":          273,
		"INSERT INTO dbo.events (kind) VALUES (NULL)":        515,
		"INSERT INTO dbo.events (kind) VALUES (N'a', 1)":     110,
		"INSERT INTO dbo.poc48 (id) VALUES (1)":              3906,
		"INSERT INTO dbo.events SELECT * FROM dbo.events":    3906,
		"INSERT INTO dbo.nosuch (a) VALUES (1)":              208,
	} {
		if _, err := a.Exec(sql, nil); errNumber(err) != num {
			t.Errorf("%s: error %v, want %d", sql, err, num)
		}
	}
	if n := eventsCount(t, b); n != 12 {
		t.Fatalf("refused INSERTs changed the table: %d rows", n)
	}
}

// Under SNAPSHOT isolation a transaction reads one version of the database
// from its first read to its end; READ COMMITTED sees every committed
// insert at once. With snapshot isolation not allowed, a read fails with
// 3952.
func TestSnapshotIsolationPinsOneVersion(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1, Rows: map[string]int64{"events": 5}})
	w, r := NewSession(db), NewSession(db)
	mustExec(t, r, "SET TRANSACTION ISOLATION LEVEL SNAPSHOT; BEGIN TRANSACTION")
	if n := eventsCount(t, r); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
	mustExec(t, w, "INSERT INTO dbo.events (kind) VALUES (N'late')")
	if n := eventsCount(t, r); n != 5 {
		t.Fatalf("the snapshot transaction sees %d rows after another session's insert, want 5", n)
	}
	mustExec(t, r, "COMMIT")
	if n := eventsCount(t, r); n != 6 {
		t.Fatalf("after COMMIT %d rows, want 6", n)
	}

	off := sampledb.New(sampledb.Config{Seed: 1, NoSnapshot: true})
	s := NewSession(off)
	mustExec(t, s, "SET TRANSACTION ISOLATION LEVEL SNAPSHOT")
	if _, err := s.Exec("SELECT TOP (1) id FROM dbo.events", nil); errNumber(err) != 3952 {
		t.Fatalf("SNAPSHOT read with snapshot isolation off: %v, want error 3952", err)
	}
	mustExec(t, s, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	query(t, s, "SELECT TOP (1) id FROM dbo.events")
}
