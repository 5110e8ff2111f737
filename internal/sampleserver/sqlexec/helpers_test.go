package sqlexec

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

var (
	testDBOnce sync.Once
	testDB     *sampledb.DB
)

// sampleDB is the database the tests run against (default row counts, one
// big table made huge to prove key ranges do not scan).
func sampleDB() *sampledb.DB {
	testDBOnce.Do(func() {
		testDB = sampledb.New(sampledb.Config{Seed: 42, Rows: map[string]int64{"dbo.poc48": 2_000_000_000}})
	})
	return testDB
}

// decoded is one result set as an independent decoder (decode.Stream into
// decode.Capture) reads the bytes the RowSource produced.
type decoded struct {
	cols []decode.Column
	rows [][]any
}

// drain encodes a result set (COLMETADATA, rows in chunks of max, DONE) and
// decodes it back. nbc selects NBCROW tokens.
func drain(t *testing.T, r Result, max int, nbc bool) decoded {
	t.Helper()
	if r.Columns == nil {
		t.Fatalf("result has no columns")
	}
	buf := decode.AppendColMetadata(nil, r.Columns)
	if r.Rows != nil {
		for calls := 0; ; calls++ {
			if calls > 1<<22 {
				t.Fatalf("row source does not finish")
			}
			var n int
			var done bool
			buf, n, done = r.Rows.AppendRows(buf, max, nbc)
			if n > max {
				t.Fatalf("AppendRows returned %d rows, max %d", n, max)
			}
			if done {
				break
			}
		}
		if es, ok := r.Rows.(ErrSource); ok && es.Err() != nil {
			t.Fatalf("row source error: %v", es.Err())
		}
	}
	buf = decode.Done{Token: decode.TokenDone, Status: decode.DoneCount}.Append(buf)
	st := decode.NewStream(decode.StreamOptions{})
	var c decode.Capture
	if err := st.SetSink(&c); err != nil {
		t.Fatal(err)
	}
	var out decoded
	for len(buf) > 0 {
		n, ev, err := st.Next(buf)
		if err != nil {
			t.Fatalf("decoding the result: %v", err)
		}
		buf = buf[n:]
		if ev == decode.EventDone {
			break
		}
	}
	if c.Err != nil {
		t.Fatalf("capture: %v", c.Err)
	}
	out.cols = c.Cols
	out.rows = c.Rows
	return out
}

func mustExec(t *testing.T, s *Session, sql string, params ...Param) []Result {
	t.Helper()
	rs, err := s.Exec(sql, params)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rs
}

// query runs a single SELECT and decodes its rows.
func query(t *testing.T, s *Session, sql string, params ...Param) decoded {
	t.Helper()
	rs := mustExec(t, s, sql, params...)
	if len(rs) != 1 {
		t.Fatalf("%s: %d results, want 1", sql, len(rs))
	}
	return drain(t, rs[0], 100, false)
}

func errNumber(err error) int32 {
	var e *Error
	if errors.As(err, &e) {
		return e.Number
	}
	return -1
}

func mathFloat64bits(v float64) uint64 { return math.Float64bits(v) }
