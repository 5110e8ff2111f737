package partition

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
)

// Spec is how an extract is partitioned.
type Spec struct {
	// Auto partitions on the leading column of the clustered index.
	Auto bool
	// Column is the key column to split (when not Auto).
	Column string
	// Count is the number of key ranges (a nullable key gets one more for
	// its NULLs).
	Count int
	// Predicates, when set, are the partitions as written: one unit per
	// predicate. They are not checked for overlap or coverage.
	Predicates []string
	// Boundaries is how the cuts of a column or auto spec are placed:
	// minmax (also ""), sample or auto (sample.go).
	Boundaries Boundaries `json:",omitempty"`
	// SampleRows is the number of keys a sampled plan reads; 0 is
	// DefaultSampleRows(Count).
	SampleRows int `json:",omitempty"`
}

// DefaultCount is the number of ranges when a spec gives none.
const DefaultCount = 8

// MaxCount bounds the number of ranges of one extract.
const MaxCount = 10000

// The parameter names of a range's bounds.
const (
	ParamLo = "@tdsx_lo"
	ParamHi = "@tdsx_hi"
)

// Part is one range of a table.
type Part struct {
	// Where is the range's predicate, using ParamLo and ParamHi for its
	// bounds.
	Where string `json:"where"`
	// Lo and Hi are the bounds: Lo <= key < Hi; nil when open.
	Lo *Bound `json:"lo,omitempty"`
	Hi *Bound `json:"hi,omitempty"`
}

// Params are the part's bound parameters, for session.Query.Params.
func (p Part) Params() []session.Param {
	var ps []session.Param
	if p.Lo != nil {
		ps = append(ps, p.Lo.Param(ParamLo))
	}
	if p.Hi != nil {
		ps = append(ps, p.Hi.Param(ParamHi))
	}
	return ps
}

// String describes the part with its bounds, for `plan` and logs.
func (p Part) String() string {
	s := p.Where
	if p.Lo != nil {
		s = strings.ReplaceAll(s, ParamLo, p.Lo.String())
	}
	if p.Hi != nil {
		s = strings.ReplaceAll(s, ParamHi, p.Hi.String())
	}
	return s
}

// Bound is one bound of a range, in the key column's own type. It is plain
// data so a plan can be stored and resumed with the same bounds.
type Bound struct {
	// Type is the column's declaration, e.g. "int", "datetime2(3)",
	// "uniqueidentifier"; the parameter is sent in it.
	Type string `json:"type"`
	// Int is an integer key, days since 0001-01-01 for date, 100 ns ticks
	// since 0001-01-01 for the datetime types.
	Int int64 `json:"int,omitempty"`
	// GUID is a uniqueidentifier key.
	GUID *decode.GUID `json:"guid,omitempty"`
	// Text is a char, varchar, nchar or nvarchar key as the server sent
	// it, and Collation the column's collation from the same result: the
	// parameter is sent in the column's own type and collation, so that
	// it compares as the column's values do and the predicate seeks the
	// column's index (an nvarchar parameter against a varchar column
	// would convert the column instead).
	Text      *string           `json:"text,omitempty"`
	Collation *decode.Collation `json:"collation,omitempty"`
	// Decimal is a decimal or numeric key not cut as an integer.
	Decimal *decode.Decimal `json:"decimal,omitempty"`
}

// Param is the bound as an sp_executesql parameter named name.
func (b Bound) Param(name string) session.Param {
	p := session.Param{Name: name}
	d, err := decode.ParseDecl(b.Type)
	if err != nil {
		// A bound is only built from a column's declaration; an unreadable
		// one is sent as a bigint, which SQL Server converts.
		p.Value = b.Int
		return p
	}
	coll := decode.Collation{}
	if d.Kind.HasCollation() {
		coll = decode.DefaultParamCollation
		if b.Collation != nil {
			coll = *b.Collation
		}
	}
	ti := d.TypeInfo(true, coll)
	p.Type = &ti
	switch {
	case b.Text != nil:
		p.Value = *b.Text
		return p
	case b.Decimal != nil:
		p.Value = *b.Decimal
		return p
	}
	switch d.Kind.Class() {
	case decode.ClassDate:
		p.Value = decode.Date(b.Int)
	case decode.ClassDateTime:
		p.Value = dateTimeOf(b.Int)
	default:
		if b.GUID != nil {
			p.Value = *b.GUID
		} else {
			p.Value = b.Int
		}
	}
	return p
}

func (b Bound) String() string {
	d, _ := decode.ParseDecl(b.Type)
	switch {
	case b.GUID != nil:
		return "'" + b.GUID.String() + "'"
	case b.Text != nil:
		q := "'" + strings.ReplaceAll(*b.Text, "'", "''") + "'"
		if d.Kind.IsUnicode() {
			q = "N" + q
		}
		return q
	case b.Decimal != nil:
		return b.Decimal.String()
	case d.Kind.Class() == decode.ClassDate:
		return "'" + string(decode.AppendDateText(nil, int32(b.Int))) + "'"
	case d.Kind.Class() == decode.ClassDateTime:
		return "'" + string(decode.AppendDateTimeText(nil, dateTimeOf(b.Int), 7)) + "'"
	}
	return fmt.Sprint(b.Int)
}

func dateTimeOf(ticks int64) decode.DateTime {
	return decode.DateTime{Days: int32(ticks / decode.TicksPerDay), Ticks: ticks % decode.TicksPerDay}
}

// Error is a partition spec that cannot be applied to its table.
type Error struct{ Msg string }

func (e *Error) Error() string { return "partition: " + e.Msg }

// KeyColumn returns the column s splits t on.
func KeyColumn(t *catalog.Table, s Spec) (*catalog.Column, error) {
	name := s.Column
	if s.Auto {
		key := t.ClusteredKey()
		if len(key) == 0 {
			return nil, &Error{fmt.Sprintf("auto: %s has no clustered rowstore index to split on; name a column (partition: {column: ..., count: ...}) or write predicates", t.FullName())}
		}
		name = key[0].Column
	}
	c := t.Column(name)
	if c == nil {
		return nil, &Error{fmt.Sprintf("column %q is not a column of %s", name, t.FullName())}
	}
	if _, ok := splitter(c); !ok && !serverOrdered(c) {
		return nil, &Error{fmt.Sprintf("column %q of %s is %s: key ranges are computed for integer, decimal, numeric, date, datetime, datetime2, smalldatetime, uniqueidentifier, char, varchar, nchar and nvarchar columns (not (max)); write predicates for others", c.Name, t.FullName(), c.SQLType())}
	}
	return c, nil
}

// Plan splits t by s: for a column or auto spec it reads the key's MIN and
// MAX over q, or a sample of the key (Spec.Boundaries; always a sample the
// server orders for a character key and a decimal one with a scale or
// more than 18 digits, ordered.go). An empty table (or a key holding only
// NULLs) is one part.
func Plan(ctx context.Context, q catalog.Querier, t *catalog.Table, s Spec, timeout session.Timeout) ([]Part, error) {
	if len(s.Predicates) > 0 {
		parts := make([]Part, len(s.Predicates))
		for i, p := range s.Predicates {
			parts[i] = Part{Where: p}
		}
		return parts, nil
	}
	c, err := KeyColumn(t, s)
	if err != nil {
		return nil, err
	}
	n := s.Count
	if n <= 0 {
		n = DefaultCount
	}
	var bounds []Bound
	if serverOrdered(c) {
		bounds, err = planOrdered(ctx, q, t, c, s, n, timeout)
	} else if sampling(t, s) {
		bounds, err = planSample(ctx, q, t, c, s, n, timeout)
	} else {
		var r catalog.KeyRange
		if r, err = catalog.ColumnRange(ctx, q, t, c, timeout); err == nil {
			bounds, err = Split(c, r.Min, r.Max, n)
		}
	}
	if err != nil {
		return nil, err
	}
	return Ranges(c, bounds), nil
}

// Ranges turns the inner bounds of a column into parts: below the first,
// between each two, from the last on, and IS NULL when the column is
// nullable.
func Ranges(c *catalog.Column, bounds []Bound) []Part {
	col := catalog.QuoteIdent(c.Name)
	var parts []Part
	if len(bounds) == 0 {
		w := ""
		if c.Nullable {
			w = col + " IS NOT NULL"
		}
		parts = append(parts, Part{Where: w})
	} else {
		for i := 0; i <= len(bounds); i++ {
			var p Part
			switch {
			case i == 0:
				p = Part{Where: col + " < " + ParamHi, Hi: &bounds[0]}
			case i == len(bounds):
				p = Part{Where: col + " >= " + ParamLo, Lo: &bounds[i-1]}
			default:
				p = Part{Where: col + " >= " + ParamLo + " AND " + col + " < " + ParamHi, Lo: &bounds[i-1], Hi: &bounds[i]}
			}
			parts = append(parts, p)
		}
	}
	if c.Nullable {
		parts = append(parts, Part{Where: col + " IS NULL"})
	}
	return parts
}

// Split returns up to n-1 inner bounds that cut [min, max] of column c into
// n ranges of about equal value span, strictly increasing, each above min
// and at most max. min and max are as catalog.ColumnRange reads them; both
// nil (no non-NULL key) gives none.
func Split(c *catalog.Column, min, max any, n int) ([]Bound, error) {
	if n < 1 || n > MaxCount {
		return nil, &Error{fmt.Sprintf("count %d: use 1 to %d", n, MaxCount)}
	}
	if min == nil || max == nil {
		return nil, nil
	}
	sp, ok := splitter(c)
	if !ok {
		return nil, &Error{fmt.Sprintf("column %q: no key ranges for %s", c.Name, c.SQLType())}
	}
	lo, err := sp.ordinal(min)
	if err != nil {
		return nil, fmt.Errorf("partition: MIN(%s): %w", c.Name, err)
	}
	hi, err := sp.ordinal(max)
	if err != nil {
		return nil, fmt.Errorf("partition: MAX(%s): %w", c.Name, err)
	}
	typ := c.Decl().String()
	var out []Bound
	for _, v := range cuts(lo, hi, n) {
		out = append(out, sp.bound(typ, v))
	}
	return out, nil
}

// cuts returns the inner cut points of [lo, hi] into n ranges of about
// equal span, as ordinals (unsigned, so a span of the whole int64 or
// uint64 range does not overflow): strictly increasing, each in (lo, hi].
func cuts(lo, hi uint64, n int) []uint64 {
	if hi <= lo || n < 2 {
		return nil
	}
	span := hi - lo
	var out []uint64
	if span < uint64(n) {
		// No more distinct values than ranges: cut at every value.
		for v := lo + 1; v <= hi; v++ {
			out = append(out, v)
		}
		return out
	}
	for i := uint64(1); i < uint64(n); i++ {
		// lo + span*i/n without overflowing span*i.
		v := lo + span/uint64(n)*i + (span%uint64(n))*i/uint64(n)
		if v <= lo || (len(out) > 0 && v <= out[len(out)-1]) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// A keySplitter maps a key kind's values to unsigned ordinals that preserve
// SQL Server's order, and ordinals back to bounds.
type keySplitter struct {
	ordinal func(v any) (uint64, error)
	bound   func(typ string, o uint64) Bound
}

// signBit maps int64 to uint64 preserving order.
const signBit = 1 << 63

// ordinalOf is a keySplitter's ordinal for key values of type T.
func ordinalOf[T any](ord func(T) uint64) func(any) (uint64, error) {
	return func(v any) (uint64, error) {
		x, ok := v.(T)
		if !ok {
			return 0, fmt.Errorf("unexpected %T", v)
		}
		return ord(x), nil
	}
}

// decimalInt is d as an int64 when it has scale 0 and fits.
func decimalInt(d decode.Decimal) (int64, bool) {
	if d.Scale != 0 || d.Hi != 0 || d.Lo > 1<<63-1 {
		return 0, false
	}
	if d.Neg {
		return -int64(d.Lo), true
	}
	return int64(d.Lo), true
}

// signedBound is the bound of the kinds whose ordinal is an int64 with
// its sign bit flipped.
func signedBound(typ string, o uint64) Bound { return Bound{Type: typ, Int: int64(o ^ signBit)} }

// maxExactIntDigits is the widest decimal(p,0) key cut as an integer:
// every value of 18 digits fits an int64.
const maxExactIntDigits = 18

// ExactInt reports whether c is decimal(p,0) or numeric(p,0) with p <= 18:
// exact integers, cut as integer keys.
func ExactInt(c *catalog.Column) bool {
	return c.Kind() == decode.KindDecimal && c.Scale == 0 && c.Precision <= maxExactIntDigits
}

// splitter is the keySplitter of column c's type; false when its keys are
// not cut into ranges.
func splitter(c *catalog.Column) (keySplitter, bool) {
	if ExactInt(c) {
		// The bounds go out as bigint parameters: decimal outranks bigint
		// in SQL Server's type precedence, so the parameter is converted,
		// not the column, and the predicate still seeks the key's index.
		return keySplitter{
			ordinal: func(v any) (uint64, error) {
				d, ok := v.(decode.Decimal)
				if !ok {
					return 0, fmt.Errorf("unexpected %T", v)
				}
				i, ok := decimalInt(d)
				if !ok {
					return 0, fmt.Errorf("%s is not an integer of at most %d digits", d, maxExactIntDigits)
				}
				return uint64(i) ^ signBit, nil
			},
			bound: func(_ string, o uint64) Bound { return signedBound("bigint", o) },
		}, true
	}
	k := c.Kind()
	switch k.Class() {
	case decode.ClassInteger:
		return keySplitter{ordinal: ordinalOf(func(i int64) uint64 { return uint64(i) ^ signBit }), bound: signedBound}, true
	case decode.ClassDate:
		return keySplitter{ordinal: ordinalOf(func(d decode.Date) uint64 { return uint64(int64(d)) ^ signBit }), bound: signedBound}, true
	case decode.ClassDateTime:
		return keySplitter{
			ordinal: ordinalOf(func(d decode.DateTime) uint64 {
				return uint64(int64(d.Days)*decode.TicksPerDay+d.Ticks) ^ signBit
			}),
			bound: signedBound,
		}, true
	}
	if k == decode.KindUniqueIdentifier {
		return keySplitter{
			ordinal: ordinalOf(func(g decode.GUID) uint64 {
				key := g.SQLServerOrderKey()
				return binary.BigEndian.Uint64(key[:8])
			}),
			bound: func(typ string, o uint64) Bound {
				var key [16]byte
				binary.BigEndian.PutUint64(key[:8], o)
				g := decode.GUIDFromSQLServerOrderKey(key)
				return Bound{Type: typ, GUID: &g}
			},
		}, true
	}
	return keySplitter{}, false
}
