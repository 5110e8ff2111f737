package partition

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
)

// Boundaries is how a column or auto spec places its cuts.
type Boundaries string

const (
	// BoundariesMinMax (the default, also "") cuts the span between the
	// key's MIN and MAX evenly: two seeks, balanced when the key's values
	// are spread evenly over their span.
	BoundariesMinMax Boundaries = "minmax"
	// BoundariesSample cuts at quantiles of a sample of the key, so a
	// skewed key still gets parts of about equal row counts.
	BoundariesSample Boundaries = "sample"
	// BoundariesAuto samples when the table's row estimate is at least
	// AutoSampleMinRows, and cuts between MIN and MAX below that.
	BoundariesAuto Boundaries = "auto"
)

// AutoSampleMinRows is the row estimate from which BoundariesAuto samples.
// Below it a whole extract takes seconds, so an unbalanced plan costs
// little and MIN/MAX's two seeks are the cheaper plan; above it one part
// holding most of a skewed table would hold up the whole run.
const AutoSampleMinRows = 1_000_000

// Sample sizes: DefaultSampleRows(n) keys for n parts unless the spec says
// otherwise, at most MaxSampleRows.
const (
	minSampleRows  = 20_000
	sampleRowsPart = 200
	MaxSampleRows  = 1_000_000
)

// sampleSeed is the REPEATABLE seed of the sampling query, so that the
// same unchanged table is cut at the same bounds by every plan.
const sampleSeed = 20240

// DefaultSampleRows is the number of keys sampled for n parts: 200 per
// part (a part's share of the sample then has a relative error of about
// 7%), at least 20,000.
func DefaultSampleRows(n int) int {
	return min(MaxSampleRows, max(minSampleRows, sampleRowsPart*n))
}

// ParseBoundaries reads a boundaries setting.
func ParseBoundaries(s string) (Boundaries, bool) {
	switch b := Boundaries(s); b {
	case "", BoundariesMinMax:
		return BoundariesMinMax, true
	case BoundariesSample, BoundariesAuto:
		return b, true
	}
	return "", false
}

// sampling reports whether s cuts t at sampled quantiles.
func sampling(t *catalog.Table, s Spec) bool {
	switch s.Boundaries {
	case BoundariesSample:
		return true
	case BoundariesAuto:
		return t.RowCount >= AutoSampleMinRows
	}
	return false
}

// SampleSQL is the statement that reads the non-NULL values of column c
// of t for a sampled plan: every value when the table's row estimate is
// within rows (an exact plan, and a small table, whose few pages SQL
// Server would sample all or none of, is read whole), else a TABLESAMPLE
// of about rows rows. rows is written into the text as an integer literal,
// because SQL Server takes the sample size as a constant; it is an int the
// caller computed, never text from a configuration.
func SampleSQL(t *catalog.Table, c *catalog.Column, rows int) string {
	return sampleSQL(t, c, rows, catalog.QuoteIdent(c.Name))
}

// sampleSQL is SampleSQL selecting list.
func sampleSQL(t *catalog.Table, c *catalog.Column, rows int, list string) string {
	col := catalog.QuoteIdent(c.Name)
	sql := "SELECT " + list + " FROM " + t.QuotedName()
	if t.RowCount < 0 || t.RowCount > int64(rows) {
		sql += " TABLESAMPLE (" + strconv.Itoa(rows) + " ROWS) REPEATABLE (" + strconv.Itoa(sampleSeed) + ")"
	}
	return sql + " WHERE " + col + " IS NOT NULL"
}

// sampleRows is the number of keys s samples for n parts.
func sampleRows(s Spec, n int) (int, error) {
	rows := s.SampleRows
	if rows <= 0 {
		rows = DefaultSampleRows(n)
	}
	if rows > MaxSampleRows {
		return 0, &Error{fmt.Sprintf("sample_rows %d: at most %d", rows, MaxSampleRows)}
	}
	return rows, nil
}

// planSample cuts t on c at quantiles of a sample of c. A sample that
// comes back empty from a table that has keys (SQL Server samples pages,
// and may pick none) falls back to MIN/MAX cuts.
func planSample(ctx context.Context, q catalog.Querier, t *catalog.Table, c *catalog.Column, s Spec, n int, timeout session.Timeout) ([]Bound, error) {
	rows, err := sampleRows(s, n)
	if err != nil {
		return nil, err
	}
	sql := SampleSQL(t, c, rows)
	ks := &keySample{kind: c.Kind()}
	if _, err := q.Query(ctx, session.Query{SQL: sql, Timeout: timeout}, ks); err != nil {
		return nil, fmt.Errorf("partition: %s: %w", sql, err)
	}
	if ks.err != nil {
		return nil, fmt.Errorf("partition: %s: %w", sql, ks.err)
	}
	if len(ks.keys) == 0 {
		r, err := catalog.ColumnRange(ctx, q, t, c, timeout)
		if err != nil {
			return nil, err
		}
		return Split(c, r.Min, r.Max, n)
	}
	return Quantiles(c, ks.keys, n)
}

// SampleKey is one sampled key value in SQL Server's order of its column:
// Hi is the ordinal of an integer, date or datetime key (as Split's), and
// Hi, Lo the big-endian halves of a uniqueidentifier's
// decode.GUID.SQLServerOrderKey.
type SampleKey struct{ Hi, Lo uint64 }

func compareKeys(a, b SampleKey) int {
	if c := cmp.Compare(a.Hi, b.Hi); c != 0 {
		return c
	}
	return cmp.Compare(a.Lo, b.Lo)
}

// Quantiles returns up to n-1 inner bounds of column c at the quantiles
// of keys (which it sorts): strictly increasing, each above the smallest
// key, so equal quantiles collapse into one bound, a key with one distinct
// value gives none, and with every key of the table in keys no part is
// empty. The bounds are key values themselves, exact in the column's type.
func Quantiles(c *catalog.Column, keys []SampleKey, n int) ([]Bound, error) {
	if n < 1 || n > MaxCount {
		return nil, &Error{fmt.Sprintf("count %d: use 1 to %d", n, MaxCount)}
	}
	sp, ok := splitter(c)
	if !ok {
		return nil, &Error{fmt.Sprintf("column %q: no key ranges for %s", c.Name, c.SQLType())}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	slices.SortFunc(keys, compareKeys)
	typ := c.Decl().String()
	var out []Bound
	last := keys[0]
	for i := 1; i < n; i++ {
		k := keys[int(int64(i)*int64(len(keys))/int64(n))]
		if compareKeys(k, last) <= 0 {
			continue
		}
		last = k
		if c.Kind() == decode.KindUniqueIdentifier {
			var key [16]byte
			binary.BigEndian.PutUint64(key[:8], k.Hi)
			binary.BigEndian.PutUint64(key[8:], k.Lo)
			g := decode.GUIDFromSQLServerOrderKey(key)
			out = append(out, Bound{Type: typ, GUID: &g})
			continue
		}
		out = append(out, sp.bound(typ, k.Hi))
	}
	return out, nil
}

// keySample collects the values of a one-column result set as SampleKeys,
// with no allocation per row beyond the slice's growth.
type keySample struct {
	decode.Nop
	kind decode.Kind
	keys []SampleKey
	cur  SampleKey
	got  bool
	err  error
}

func (k *keySample) Columns(cols []decode.Column, modes []decode.Mode) error {
	if len(cols) != 1 {
		return fmt.Errorf("sample: %d columns, want 1", len(cols))
	}
	return nil
}

func (k *keySample) set(v SampleKey) { k.cur, k.got = v, true }

func (k *keySample) Int(_ int, v int64)     { k.set(SampleKey{Hi: uint64(v) ^ signBit}) }
func (k *keySample) Date(_ int, days int32) { k.set(SampleKey{Hi: uint64(int64(days)) ^ signBit}) }
func (k *keySample) DateTime(_ int, v decode.DateTime) {
	k.set(SampleKey{Hi: uint64(int64(v.Days)*decode.TicksPerDay+v.Ticks) ^ signBit})
}
func (k *keySample) Decimal(_ int, v decode.Decimal) {
	if i, ok := decimalInt(v); ok { // a decimal(p,0) key; anything else leaves the row without one
		k.set(SampleKey{Hi: uint64(i) ^ signBit})
	}
}
func (k *keySample) GUID(_ int, v decode.GUID) {
	key := v.SQLServerOrderKey()
	k.set(SampleKey{Hi: binary.BigEndian.Uint64(key[:8]), Lo: binary.BigEndian.Uint64(key[8:])})
}

func (k *keySample) EndRow() error {
	// A NULL (which the query excludes) or a value of another class than
	// the key's leaves the row without a key.
	if !k.got {
		k.err = fmt.Errorf("sample: a row without a %s key value", k.kind.Name())
		return k.err
	}
	k.keys = append(k.keys, k.cur)
	k.got = false
	return nil
}
