package partition

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
)

// Keys the server orders: character keys, whose order is their column's
// collation's (case and accents folded or not, trailing blanks ignored, a
// linguistic order of its own), which no client reproduces exactly, and
// decimal keys that are not exact integers of at most 18 digits. Their
// cuts are always sampled quantiles, whatever Spec.Boundaries says: the
// span between MIN and MAX of a string cannot be cut evenly. The server
// groups and sorts the sample (OrderedSampleSQL), so the bounds are
// sampled values in increasing order under the column's own comparison,
// no two equal under it; the client never compares two keys. A range is
// then the server's comparison against two of those values, so every row
// is in exactly one range whatever the collation holds equal: 'abc' and
// 'ABC' under a case-insensitive one are one group, one bound at most.

// textKey reports whether c is a char, varchar, nchar or nvarchar column
// other than (max): a character key cut at server-sorted values.
func textKey(c *catalog.Column) bool {
	switch c.Kind() {
	case decode.KindChar, decode.KindVarChar, decode.KindNChar, decode.KindNVarChar:
		return !c.Decl().Max
	}
	return false
}

// decimalKey reports whether c is a decimal or numeric column that is not
// cut as an integer (ExactInt): a scale, or more than 18 digits.
func decimalKey(c *catalog.Column) bool {
	return c.Kind() == decode.KindDecimal && !ExactInt(c)
}

// serverOrdered reports whether c's keys are cut at server-sorted values.
func serverOrdered(c *catalog.Column) bool { return textKey(c) || decimalKey(c) }

// OrderedSampleSQL is the statement that reads a sample of column c of t
// as the server groups and orders it: one row per value equal under the
// column's comparison, in its order, with the number of rows sampled that
// hold it. The sample is every row or a TABLESAMPLE, as SampleSQL's.
func OrderedSampleSQL(t *catalog.Table, c *catalog.Column, rows int) string {
	col := catalog.QuoteIdent(c.Name)
	return sampleSQL(t, c, rows, col+", COUNT_BIG(*)") + " GROUP BY " + col + " ORDER BY " + col
}

// planOrdered cuts t on c at quantiles of a sample the server ordered. A
// sample that comes back empty from a table that has keys (SQL Server
// samples pages, and may pick none) gives no cut: the table is one part.
func planOrdered(ctx context.Context, q catalog.Querier, t *catalog.Table, c *catalog.Column, s Spec, n int, timeout session.Timeout) ([]Bound, error) {
	if n < 1 || n > MaxCount {
		return nil, &Error{fmt.Sprintf("count %d: use 1 to %d", n, MaxCount)}
	}
	if t.View {
		// TABLESAMPLE reads a table's pages; a view has none, and
		// grouping every key of a view of unknown size is no plan.
		return nil, &Error{fmt.Sprintf("column %q of view %s is %s: such keys are cut at a sample, and a view cannot be sampled; write predicates", c.Name, t.FullName(), c.SQLType())}
	}
	rows, err := sampleRows(s, n)
	if err != nil {
		return nil, err
	}
	sql := OrderedSampleSQL(t, c, rows)
	smp := &orderedSample{kind: c.Kind()}
	if _, err := q.Query(ctx, session.Query{SQL: sql, Timeout: timeout}, smp); err != nil {
		return nil, fmt.Errorf("partition: %s: %w", sql, err)
	}
	if smp.err != nil {
		return nil, fmt.Errorf("partition: %s: %w", sql, smp.err)
	}
	bounds := exactBounds(smp.bounds(c, n))
	if k := c.Kind(); (k == decode.KindChar || k == decode.KindVarChar) && !asciiOnly(bounds) {
		// A char or varchar parameter is declared in the database's
		// default collation, so SQL Server converts its text from the
		// column's code page to the database's: where the two differ, a
		// character the database's lacks turns into another, and the
		// bounds could come out of order. ASCII is the same in every
		// code page; other bounds are kept only when the code pages are
		// the same. Dropping bounds keeps the others in order.
		dbColl, err := databaseCollation(ctx, q, timeout)
		if err != nil {
			return nil, err
		}
		if dbColl.CodePage() != smp.coll.CodePage() {
			bounds = slices.DeleteFunc(bounds, func(b Bound) bool { return !isASCII(*b.Text) })
		}
	}
	return bounds, nil
}

// exactBounds drops the text bounds the client may not have decoded
// exactly: a lone UTF-16 surrogate or a byte the code page does not map
// arrives as U+FFFD, and sent back that would be another value, possibly
// out of order. Dropping bounds keeps the others in order.
func exactBounds(bounds []Bound) []Bound {
	return slices.DeleteFunc(bounds, func(b Bound) bool { return b.Text != nil && strings.ContainsRune(*b.Text, utf8.RuneError) })
}

// databaseCollation is the current database's default collation, as SQL
// Server labels a varchar expression that involves no column.
func databaseCollation(ctx context.Context, q catalog.Querier, timeout session.Timeout) (decode.Collation, error) {
	const sql = "SELECT CAST('' AS varchar(1))"
	var cs collationSink
	if _, err := q.Query(ctx, session.Query{SQL: sql, Timeout: timeout}, &cs); err != nil {
		return decode.Collation{}, fmt.Errorf("partition: %s: %w", sql, err)
	}
	if !cs.got {
		return decode.Collation{}, fmt.Errorf("partition: %s: no result", sql)
	}
	return cs.coll, nil
}

// collationSink keeps the collation of a result's first column.
type collationSink struct {
	decode.Nop
	coll decode.Collation
	got  bool
}

func (c *collationSink) Columns(cols []decode.Column, _ []decode.Mode) error {
	if len(cols) > 0 {
		c.coll, c.got = cols[0].Type.Collation, true
	}
	return nil
}

func asciiOnly(bounds []Bound) bool {
	for _, b := range bounds {
		if b.Text != nil && !isASCII(*b.Text) {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// GroupQuantiles returns the indexes of the groups at the n-quantiles of
// rows counted per group (counts, in the groups' order): the group that
// holds the row at position i*total/n for i = 1..n-1, each once, never
// the first, so that equal quantiles collapse into one cut and a plan
// from every row has no empty part.
func GroupQuantiles(counts []int64, n int) []int {
	var total int64
	for _, c := range counts {
		total += c
	}
	var out []int
	j, before := 0, int64(0) // group j holds positions [before, before+counts[j])
	for i := int64(1); i < int64(n); i++ {
		p := i * total / int64(n)
		for j < len(counts) && before+counts[j] <= p {
			before += counts[j]
			j++
		}
		if j >= len(counts) {
			break
		}
		if j == 0 || (len(out) > 0 && j <= out[len(out)-1]) {
			continue
		}
		out = append(out, j)
	}
	return out
}

// orderedSample collects the rows of OrderedSampleSQL: each group's value
// (text back to back in one buffer, or a decimal) and row count, with no
// allocation per row beyond the buffers' growth.
type orderedSample struct {
	decode.Nop
	kind   decode.Kind
	coll   decode.Collation // of the key column, as the server sent it
	text   []byte
	ends   []int // group i's text is text[ends[i-1]:ends[i]]
	decs   []decode.Decimal
	counts []int64
	dec    decode.Decimal
	count  int64
	gotKey bool
	gotN   bool
	err    error
}

func (o *orderedSample) Columns(cols []decode.Column, _ []decode.Mode) error {
	if len(cols) != 2 {
		return fmt.Errorf("sample: %d columns, want 2", len(cols))
	}
	o.coll = cols[0].Type.Collation
	return nil
}

func (o *orderedSample) BeginValue(col int, _ int64) {
	if col == 0 {
		o.gotKey = true
	}
}

func (o *orderedSample) Write(col int, p []byte) {
	if col == 0 {
		o.text = append(o.text, p...)
	}
}

func (o *orderedSample) Decimal(col int, v decode.Decimal) {
	if col == 0 {
		o.dec, o.gotKey = v, true
	}
}

func (o *orderedSample) Int(col int, v int64) {
	if col == 1 {
		o.count, o.gotN = v, true
	}
}

func (o *orderedSample) EndRow() error {
	if !o.gotKey || !o.gotN {
		o.err = fmt.Errorf("sample: a row without a %s key value and its count", o.kind.Name())
		return o.err
	}
	if o.kind == decode.KindDecimal {
		o.decs = append(o.decs, o.dec)
	} else {
		o.ends = append(o.ends, len(o.text))
	}
	o.counts = append(o.counts, o.count)
	o.gotKey, o.gotN = false, false
	return nil
}

// bounds are the inner bounds of n parts of c at the sample's quantiles.
func (o *orderedSample) bounds(c *catalog.Column, n int) []Bound {
	typ := c.Decl().String()
	var out []Bound
	for _, j := range GroupQuantiles(o.counts, n) {
		if o.kind == decode.KindDecimal {
			d := o.decs[j]
			out = append(out, Bound{Type: typ, Decimal: &d})
			continue
		}
		from := 0
		if j > 0 {
			from = o.ends[j-1]
		}
		s := string(o.text[from:o.ends[j]])
		coll := o.coll
		out = append(out, Bound{Type: typ, Text: &s, Collation: &coll})
	}
	return out
}
