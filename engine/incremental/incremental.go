// Package incremental is the watermark logic of incremental exports: the
// state file that remembers how far an extract got, the window of rows a
// run exports (past the last committed watermark, up to a high watermark
// read when the run starts), the typed sp_executesql parameters that bound
// it, and backfill ranges. It knows SQL Server's types (decode) and how to
// ask a session for the high watermark; it knows nothing of jobs or sinks.
//
// A checkpointed run (partitioned, shared between processes, resumable)
// freezes its window when it is planned (Frozen, in the run's plan), so
// every unit reads the same rows, and saves the watermark once the whole
// run is committed (CommitFrozen).
//
// A window is the predicate "col > @wm_lo AND col <= @wm_hi" with both
// bounds passed as parameters of the column's own type (datetime2(7) as
// datetime2(7), rowversion as binary(8)), never formatted into SQL text
// and never converted: a datetime2(7) bound passed as datetime would be
// rounded to 1/300 s and could skip or repeat rows 100 ns apart.
package incremental

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tdsextract/tdsextract/decode"
)

// Class is how a watermark column's values are ordered and written.
type Class uint8

const (
	ClassInt      Class = iota + 1 // tinyint, smallint, int, bigint (identity keys)
	ClassDateTime                  // date, datetime, smalldatetime, datetime2(n)
	ClassOffset                    // datetimeoffset(n), ordered by its UTC instant
	ClassBinary                    // rowversion, binary(n), varbinary(n)
	ClassText                      // char, varchar, nchar, nvarchar (ordered by the column's collation)
)

// ClassOf returns the watermark class of a column type, or an error
// naming the type when it cannot be a watermark.
func ClassOf(ti *decode.TypeInfo) (Class, error) {
	k := ti.Kind()
	switch k.Class() {
	case decode.ClassInteger:
		if k == decode.KindBit {
			break
		}
		return ClassInt, nil
	case decode.ClassDate, decode.ClassDateTime:
		return ClassDateTime, nil
	case decode.ClassDateTimeOffset:
		return ClassOffset, nil
	}
	switch {
	case k == decode.KindRowVersion || k == decode.KindBinary || k == decode.KindVarBinary:
		if ti.Size == decode.MaxVarLen {
			break
		}
		return ClassBinary, nil
	case (k == decode.KindChar || k == decode.KindVarChar || k == decode.KindNChar || k == decode.KindNVarChar) && ti.Size != decode.MaxVarLen:
		return ClassText, nil
	}
	return 0, fmt.Errorf("a %s column cannot be a watermark: use an integer key, a date/time column, rowversion or a (non-max) string", decode.TypeDecl(ti, 0))
}

// Format writes a watermark value as the state file keeps it: integers in
// decimal, date/time values as "YYYY-MM-DD hh:mm:ss.fffffff" (always 7
// digits, so nothing is rounded; datetimeoffset adds "+hh:mm"), binary as
// "0x" and lower-case hex, text as is.
func Format(c Class, v any) (string, error) {
	switch x := v.(type) {
	case int64:
		if c == ClassInt {
			return strconv.FormatInt(x, 10), nil
		}
	case decode.DateTime:
		if c == ClassDateTime {
			return string(decode.AppendDateTimeText(nil, x, 7)), nil
		}
	case decode.Date:
		if c == ClassDateTime {
			return string(decode.AppendDateTimeText(nil, decode.DateTime{Days: int32(x)}, 7)), nil
		}
	case decode.DateTimeOffset:
		if c == ClassOffset {
			return string(decode.AppendDateTimeOffsetText(nil, x, 7)), nil
		}
	case []byte:
		if c == ClassBinary {
			return "0x" + hex.EncodeToString(x), nil
		}
	case string:
		if c == ClassText {
			return x, nil
		}
	}
	return "", fmt.Errorf("incremental: a %T value is not a watermark of this column", v)
}

// Parse reads a watermark value written by Format (or by a user, in
// --backfill and start) for a column of type ti.
func Parse(ti *decode.TypeInfo, s string) (any, error) {
	c, err := ClassOf(ti)
	if err != nil {
		return nil, err
	}
	s0 := s
	s = strings.TrimSpace(s)
	bad := func(want string) error {
		return fmt.Errorf("%q is not a %s value (%s)", s0, decode.TypeDecl(ti, 0), want)
	}
	switch c {
	case ClassInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, bad("an integer")
		}
		return n, nil
	case ClassDateTime:
		dto, ok := parseTime(s, false)
		if !ok {
			return nil, bad("YYYY-MM-DD[ hh:mm:ss[.fffffff]]")
		}
		if ti.Kind() == decode.KindDate {
			if dto.UTC.Ticks != 0 {
				return nil, bad("a date without a time of day")
			}
			return decode.Date(dto.UTC.Days), nil
		}
		return dto.UTC, nil
	case ClassOffset:
		dto, ok := parseTime(s, true)
		if !ok {
			return nil, bad("YYYY-MM-DD hh:mm:ss[.fffffff]+hh:mm")
		}
		return dto, nil
	case ClassBinary:
		h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		if len(h)%2 == 1 {
			h = "0" + h // 0x7D0 is 0x07D0, as SQL Server reads it
		}
		b, err := hex.DecodeString(h)
		if err != nil || len(h) == 0 {
			return nil, bad("0x and hex digits")
		}
		if ti.Kind() == decode.KindRowVersion || ti.Kind() == decode.KindBinary {
			if len(b) > int(ti.Size) {
				return nil, bad(fmt.Sprintf("at most %d bytes", ti.Size))
			}
			// binary(n) compares as n bytes: pad on the left as a number
			// would be, so 0x07D0 means the rowversion 0x00000000000007D0.
			b = append(make([]byte, int(ti.Size)-len(b)), b...)
		}
		return b, nil
	}
	return s, nil
}

// parseTime reads "YYYY-MM-DD", "YYYY-MM-DD hh:mm[:ss[.f...]]" (or with a
// T) and, when offset, a trailing "+hh:mm", "-hh:mm" or "Z" (no offset
// means UTC). Up to 7 fraction digits; more is an error, not a rounding.
func parseTime(s string, offset bool) (decode.DateTimeOffset, bool) {
	s = strings.Replace(s, "T", " ", 1)
	loc := time.UTC
	if offset {
		switch {
		case strings.HasSuffix(s, "Z"):
			s = strings.TrimSuffix(s, "Z")
		case len(s) > 6 && (s[len(s)-6] == '+' || s[len(s)-6] == '-') && s[len(s)-3] == ':':
			h, e1 := strconv.Atoi(s[len(s)-5 : len(s)-3])
			m, e2 := strconv.Atoi(s[len(s)-2:])
			if e1 != nil || e2 != nil || h > 14 || m > 59 {
				return decode.DateTimeOffset{}, false
			}
			off := (h*60 + m) * 60
			if s[len(s)-6] == '-' {
				off = -off
			}
			loc = time.FixedZone("", off)
			s = strings.TrimSpace(s[:len(s)-6])
		}
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > 7 {
		return decode.DateTimeOffset{}, false
	}
	for _, l := range []string{"2006-01-02 15:04:05.9999999", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return decode.DateTimeOffsetFromTime(t), true
		}
	}
	return decode.DateTimeOffset{}, false
}

// Compare orders two watermark values of one class as SQL Server orders
// the column (text: byte order, an approximation used only to check that
// a state never goes backwards; the server's collation decides the rows).
func Compare(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case decode.Date:
		return cmp.Compare(int64(x), int64(b.(decode.Date)))
	case decode.DateTime:
		y := b.(decode.DateTime)
		if c := cmp.Compare(int64(x.Days), int64(y.Days)); c != 0 {
			return c
		}
		return cmp.Compare(x.Ticks, y.Ticks)
	case decode.DateTimeOffset:
		return Compare(x.UTC, b.(decode.DateTimeOffset).UTC)
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

// Overlap is how far below the last committed watermark a run starts
// again, so that rows committed late with a watermark below it (a
// datetime2 set by the writer's clock, an identity value allocated by a
// transaction that committed after a later one) are exported too. Rows in
// the overlap were (mostly) exported by the previous run: they are
// exported again.
type Overlap struct {
	Ticks int64 // date/time classes: 100 ns ticks
	N     int64 // integer and rowversion classes
}

// ParseOverlap reads an overlap for a column class: a duration ("10m",
// "1h30m", "500us"; 100 ns is the finest step) for date/time columns, a
// count for integer keys and rowversion. Text columns take none.
func ParseOverlap(c Class, s string) (Overlap, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Overlap{}, nil
	}
	switch c {
	case ClassDateTime, ClassOffset:
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return Overlap{}, fmt.Errorf("overlap %q: a date/time watermark takes a duration such as 10m or 1h", s)
		}
		if d%100 != 0 {
			return Overlap{}, fmt.Errorf("overlap %q: datetime2 counts in steps of 100ns", s)
		}
		return Overlap{Ticks: int64(d / 100)}, nil
	case ClassInt, ClassBinary:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return Overlap{}, fmt.Errorf("overlap %q: an integer or rowversion watermark takes a count of values such as 1000", s)
		}
		return Overlap{N: n}, nil
	}
	return Overlap{}, fmt.Errorf("overlap %q: a text watermark has no distance to go back by; leave overlap out", s)
}

// Apply returns v moved back by the overlap (clamped at the type's
// minimum).
func (o Overlap) Apply(v any) any {
	switch x := v.(type) {
	case int64:
		if x < math.MinInt64+o.N {
			return int64(math.MinInt64)
		}
		return x - o.N
	case decode.Date:
		return decode.Date(max(0, int64(x)-o.Ticks/decode.TicksPerDay))
	case decode.DateTime:
		return subTicks(x, o.Ticks)
	case decode.DateTimeOffset:
		x.UTC = subTicks(x.UTC, o.Ticks)
		return x
	case []byte:
		if len(x) != 8 || o.N == 0 {
			return x
		}
		n := binary.BigEndian.Uint64(x)
		if n < uint64(o.N) {
			n = 0
		} else {
			n -= uint64(o.N)
		}
		return binary.BigEndian.AppendUint64(nil, n)
	}
	return v
}

func subTicks(dt decode.DateTime, t int64) decode.DateTime {
	total := int64(dt.Days)*decode.TicksPerDay + dt.Ticks - t
	if total < 0 {
		return decode.DateTime{}
	}
	return decode.DateTime{Days: int32(total / decode.TicksPerDay), Ticks: total % decode.TicksPerDay}
}

// Range is a --backfill range: rows with FROM <= col < TO; either end may
// be open.
type Range struct {
	From, To string // "" for an open end
}

// ParseRange reads "FROM..TO", "FROM.." or "..TO".
func ParseRange(s string) (Range, error) {
	from, to, ok := strings.Cut(s, "..")
	if !ok || strings.Contains(to, "..") {
		return Range{}, fmt.Errorf("backfill %q: write FROM..TO (rows FROM <= column < TO), FROM.. or ..TO", s)
	}
	r := Range{From: strings.TrimSpace(from), To: strings.TrimSpace(to)}
	if r.From == "" && r.To == "" {
		return Range{}, fmt.Errorf("backfill %q: give at least one end", s)
	}
	return r, nil
}
