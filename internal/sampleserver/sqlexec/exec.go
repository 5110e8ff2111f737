package sqlexec

import (
	"math"
	"math/big"
	"sort"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// maxMaterialize bounds the rows a statement may hold in memory (sorts on
// non-key columns, joins, DISTINCT, GROUP BY).
const maxMaterialize = 5_000_000

// scanChunk bounds the rows a filtering RowSource examines in one
// AppendRows call when none qualifies, so the server regains control.
const scanChunk = 1 << 16

func bigInt(v int64) *big.Int { return big.NewInt(v) }

func (s *Session) catalog(schema, name string) (*sampledb.Table, bool) {
	return s.db.Catalog(schema, name)
}

// lookupTable resolves [schema.]name to a user table or catalog view.
func (s *Session) lookupTable(schema, name string) (*sampledb.Table, bool) {
	if strings.EqualFold(schema, "INFORMATION_SCHEMA") || strings.EqualFold(schema, "sys") {
		return s.catalog(schema, name)
	}
	if !s.inSampleDB() {
		return nil, false
	}
	return s.db.Table(schema, name)
}

func (s *Session) resolveSource(f fromItem) (*source, error) {
	parts := f.Name
	full := strings.Join(parts, ".")
	var db, schema, name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		schema, name = parts[0], parts[1]
	case 3:
		db, schema, name = parts[0], parts[1], parts[2]
	default:
		// Linked-server names are not supported.
		return nil, errInvalidObject(f.Line, full)
	}
	if strings.HasPrefix(name, "#") {
		return nil, errInvalidObject(f.Line, full)
	}
	if db != "" {
		switch {
		case strings.EqualFold(db, s.db.Name()):
			if !strings.EqualFold(schema, "INFORMATION_SCHEMA") && !strings.EqualFold(schema, "sys") {
				t, ok := s.db.Table(schema, name)
				if !ok {
					return nil, errInvalidObject(f.Line, full)
				}
				if err := s.readUserTable(f.Line); err != nil {
					return nil, err
				}
				return &source{t: t, schema: t.Schema, name: t.Name, alias: f.Alias}, nil
			}
		case isKnownSystemDB(db):
			if !strings.EqualFold(schema, "sys") && !strings.EqualFold(schema, "INFORMATION_SCHEMA") {
				return nil, errInvalidObject(f.Line, full)
			}
		default:
			return nil, newError(911, 16, 1, f.Line, "Database '%s' does not exist. Make sure that the name is entered correctly.", db)
		}
	}
	t, ok := s.lookupTable(schema, name)
	if !ok {
		return nil, errInvalidObject(f.Line, full)
	}
	if !t.Catalog {
		if err := s.readUserTable(f.Line); err != nil {
			return nil, err
		}
	}
	return &source{t: t, schema: t.Schema, name: t.Name, alias: f.Alias}, nil
}

func isKnownSystemDB(name string) bool {
	for _, d := range knownDatabases {
		if strings.EqualFold(d, name) {
			return true
		}
	}
	return false
}

// outItem is one output column of a SELECT.
type outItem struct {
	e     expr
	col   decode.Column
	plain bool // a bare column reference (value passes through)
}

func (s *Session) execSelect(st *selectStmt, ps *paramSet) (Result, error) {
	sc := &scope{s: s, ps: ps}
	for i, f := range st.From {
		src, err := s.resolveSource(f)
		if err != nil {
			return Result{}, err
		}
		if f.Sample != nil {
			if src.sample, err = sc.sampleOf(f, i, src); err != nil {
				return Result{}, err
			}
		}
		sc.srcs = append(sc.srcs, src)
		sc.joins = append(sc.joins, f.Join)
	}
	// Bind the join conditions as they become visible.
	for i, f := range st.From {
		if f.On == nil {
			continue
		}
		inner := &scope{s: s, ps: ps, srcs: sc.srcs[:i+1], joins: sc.joins[:i+1]}
		if err := inner.bind(f.On, false); err != nil {
			return Result{}, err
		}
	}
	// Expand the select list.
	var items []outItem
	for _, it := range st.Items {
		if it.Star {
			if len(sc.srcs) == 0 {
				return Result{}, newError(263, 16, 1, st.Line, "Must specify table to select from.")
			}
			matched := false
			for si, src := range sc.srcs {
				if it.StarQual != nil && !src.matches(it.StarQual) {
					continue
				}
				matched = true
				for ci := range src.t.Columns {
					c := src.t.Columns[ci]
					if sc.leftJoined(si) {
						c.Flags |= decode.ColFlagNullable
					}
					items = append(items, outItem{e: &colExpr{Parts: []string{c.Name}, src: si, col: ci, bound: true}, col: c, plain: true})
				}
			}
			if !matched {
				return Result{}, newError(107, 15, 1, st.Line, "The column prefix '%s' does not match with a table name or alias name used in the query.", strings.Join(it.StarQual, "."))
			}
			continue
		}
		if err := sc.bind(it.Expr, true); err != nil {
			return Result{}, err
		}
		items = append(items, sc.outItem(it))
	}
	if len(items) > 4096 {
		return Result{}, newError(1056, 15, 1, st.Line, "The number of elements in the select list exceeds the maximum allowed number of 4096 elements.")
	}
	if st.Where != nil {
		if err := sc.bind(st.Where, false); err != nil {
			if e, ok := err.(*Error); ok && e.Number == 4109 {
				return Result{}, newError(147, 15, 1, st.Line, "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference.")
			}
			return Result{}, err
		}
	}
	for _, g := range st.GroupBy {
		if err := sc.bind(g, false); err != nil {
			return Result{}, err
		}
	}
	if st.Having != nil {
		if err := sc.bind(st.Having, true); err != nil {
			return Result{}, err
		}
	}
	// ORDER BY: an alias or an ordinal names a select item.
	order := make([]orderItem, len(st.OrderBy))
	for i, o := range st.OrderBy {
		order[i] = o
		if l, ok := o.Expr.(*litExpr); ok && l.Kind == litInt {
			n := l.V.(int64)
			if n < 1 || n > int64(len(items)) {
				return Result{}, newError(108, 15, 1, st.Line, "The ORDER BY position number %d is out of range of the number of items in the select list.", n)
			}
			order[i].Expr = items[n-1].e
			continue
		}
		if c, ok := o.Expr.(*colExpr); ok && len(c.Parts) == 1 {
			// A select-list name (alias or column name) wins over the
			// FROM clause's columns, as in SQL Server.
			var found expr
			for k := range items {
				if strings.EqualFold(items[k].col.Name, c.Parts[0]) {
					found = items[k].e
					break
				}
			}
			if found != nil {
				order[i].Expr = found
				continue
			}
		}
		if err := sc.bind(o.Expr, true); err != nil {
			return Result{}, err
		}
	}

	cols := make([]decode.Column, len(items))
	for i := range items {
		cols[i] = items[i].col
	}
	table := ""
	if len(sc.srcs) > 0 {
		table = sc.srcs[0].t.FullName()
	}
	res := Result{Columns: cols, RowCount: -1, Done: true, Table: table}

	top := int64(-1)
	var percent float64
	if st.Top != nil {
		if err := sc.bind(st.Top, false); err != nil {
			return Result{}, err
		}
		v, err := sc.eval(st.Top, &env{})
		if err != nil {
			return Result{}, err
		}
		switch {
		case v == nil:
			top = 0
		case st.Percent:
			f, ok := asFloat(v)
			if !ok || f < 0 || f > 100 {
				return Result{}, newError(1031, 16, 1, st.Line, "Percent values must be between 0 and 100.")
			}
			percent = f
			if f == 0 {
				top = 0
			}
		default:
			n, err := coerce(v, &tiBigInt, st.Line)
			if err != nil {
				return Result{}, err
			}
			top = n.(int64)
			if top < 0 {
				return Result{}, newError(1014, 16, 1, st.Line, "A TOP N or FETCH rows count value may not be negative.")
			}
		}
	}
	offset := int64(0)
	if st.Offset != nil {
		n, err := sc.rowCountExpr(st.Offset, st.Line)
		if err != nil {
			return Result{}, err
		}
		if n < 0 {
			return Result{}, newError(10742, 16, 1, st.Line, "The offset specified in a OFFSET clause may not be negative.")
		}
		offset = n
		if st.Fetch != nil {
			m, err := sc.rowCountExpr(st.Fetch, st.Line)
			if err != nil {
				return Result{}, err
			}
			if m <= 0 {
				return Result{}, newError(10744, 16, 1, st.Line, "The number of rows provided for a FETCH clause must be greater then zero.")
			}
			top = m
		}
	}
	if s.RowCountLimit > 0 && (top < 0 || top > s.RowCountLimit) {
		top = s.RowCountLimit
	}

	aggregate := len(sc.aggs) > 0 || len(st.GroupBy) > 0
	if aggregate {
		if err := checkGrouped(sc, items, st.GroupBy, order); err != nil {
			return Result{}, err
		}
	}
	if s.FMTOnly {
		res.RowCount = 0
		return res, nil
	}

	// Streaming plan: one table, no aggregation, order none or by key.
	if len(sc.srcs) == 1 && !aggregate && !st.Distinct {
		t := sc.srcs[0].t
		ranges, residual := sc.keyRanges(t, st.Where)
		desc, streamable := keyOrder(sc, t, order)
		if streamable {
			if percent > 0 {
				if residual != nil {
					return Result{}, errUnsupported(st.Line, "TOP PERCENT with a non-key filter is")
				}
				top = int64(math.Ceil(float64(countRows(ranges)) * percent / 100))
			}
			if offset > 0 && residual == nil {
				ranges = skipRows(ranges, offset, desc)
				offset = 0
			}
			src := s.newScanSource(sc, t, items, ranges, desc, residual, top)
			if offset > 0 {
				src.(*scanSource).skip = offset
			}
			if fs, ok := src.(*fastSource); ok {
				res.RowCount = countRows(fs.ranges)
			}
			res.Rows = src
			return res, nil
		}
	}
	if aggregate && top != 0 {
		rows, ok, err := s.fastAggregate(sc, st, items)
		if err != nil {
			return Result{}, err
		}
		if ok {
			res.RowCount = int64(len(rows))
			res.Rows = &sliceSource{rows: rows, cols: cols}
			return res, nil
		}
	}
	// Everything else is materialised (bounded).
	rows, err := s.materialize(sc, st, items, order, aggregate, top, percent, offset)
	if err != nil {
		return Result{}, err
	}
	res.RowCount = int64(len(rows))
	res.Rows = &sliceSource{rows: rows, cols: cols}
	return res, nil
}

// outItem builds the output column of a bound select item.
func (sc *scope) outItem(it selectItem) outItem {
	if c, ok := it.Expr.(*colExpr); ok {
		col := sc.srcs[c.src].t.Columns[c.col]
		if sc.leftJoined(c.src) {
			col.Flags |= decode.ColFlagNullable
		}
		if it.HasAlias {
			col.Name = it.Alias
		}
		return outItem{e: c, col: col, plain: true}
	}
	t, nullable := sc.typeOf(it.Expr)
	flags := uint16(decode.ColFlagComputed)
	if nullable {
		flags |= decode.ColFlagNullable
		t = decode.NullableForm(t)
	}
	name := ""
	if it.HasAlias {
		name = it.Alias
	} else if f, ok := it.Expr.(*funcExpr); ok && f.Recv != nil {
		name = ""
	}
	return outItem{e: it.Expr, col: decode.Column{Name: name, Flags: flags, Type: t}}
}

// checkGrouped enforces error 8120: outside aggregates only GROUP BY
// expressions may be referenced.
func checkGrouped(sc *scope, items []outItem, groupBy []expr, order []orderItem) error {
	grouped := func(c *colExpr) bool {
		for _, g := range groupBy {
			if gc, ok := g.(*colExpr); ok && gc.src == c.src && gc.col == c.col {
				return true
			}
		}
		return false
	}
	var check func(x expr) error
	check = func(x expr) error {
		switch x := x.(type) {
		case *colExpr:
			if !grouped(x) {
				src := sc.srcs[x.src]
				q := src.alias
				if q == "" {
					q = src.name
				}
				return newError(8120, 16, 1, x.Line, "Column '%s.%s' is invalid in the select list because it is not contained in either an aggregate function or the GROUP BY clause.",
					q, src.t.Columns[x.col].Name)
			}
			return nil
		case *funcExpr:
			if x.Recv == nil && isAggregate(x.Name) {
				return nil
			}
			if x.Recv != nil {
				if err := check(x.Recv); err != nil {
					return err
				}
			}
		}
		var err error
		walkChildren(x, func(e expr) {
			if err == nil {
				err = check(e)
			}
		})
		return err
	}
	for _, it := range items {
		if err := check(it.e); err != nil {
			return err
		}
	}
	for _, o := range order {
		if err := check(o.Expr); err != nil {
			return err
		}
	}
	return nil
}

// walkChildren calls fn on the direct sub-expressions of x.
func walkChildren(x expr, fn func(expr)) {
	switch x := x.(type) {
	case *funcExpr:
		for _, a := range x.Args {
			fn(a)
		}
	case *castExpr:
		fn(x.E)
		if x.Style != nil {
			fn(x.Style)
		}
	case *caseExpr:
		if x.Operand != nil {
			fn(x.Operand)
		}
		for _, w := range x.Whens {
			fn(w.Cond)
			fn(w.Then)
		}
		if x.Else != nil {
			fn(x.Else)
		}
	case *unaryExpr:
		fn(x.E)
	case *binExpr:
		fn(x.L)
		fn(x.R)
	case *isNullExpr:
		fn(x.E)
	case *inExpr:
		fn(x.E)
		for _, e := range x.List {
			fn(e)
		}
	case *betweenExpr:
		fn(x.E)
		fn(x.Lo)
		fn(x.Hi)
	case *likeExpr:
		fn(x.E)
		fn(x.Pat)
		if x.Escape != nil {
			fn(x.Escape)
		}
	}
}

// keyOrder reports whether ORDER BY can be served by walking the key
// (ascending or descending).
func keyOrder(sc *scope, t *sampledb.Table, order []orderItem) (desc, ok bool) {
	if len(order) == 0 {
		return false, true
	}
	kc := t.KeyColumn()
	if kc < 0 {
		return false, false
	}
	c, isCol := order[0].Expr.(*colExpr)
	if !isCol || c.col != kc || c.src != 0 {
		return false, false
	}
	if len(order) > 1 && !uniqueKey(t) {
		return false, false
	}
	return order[0].Desc, true
}

func uniqueKey(t *sampledb.Table) bool {
	for _, ix := range t.Indexes {
		if ix.PrimaryKey && len(ix.Columns) == 1 && strings.EqualFold(ix.Columns[0], t.Columns[t.KeyColumn()].Name) {
			return true
		}
	}
	return false
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func ratFloor(r *big.Rat) int64 {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return clampBig(q)
}

func ratCeil(r *big.Rat) int64 {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return clampBig(q)
}

func clampBig(q *big.Int) int64 {
	if q.IsInt64() {
		return q.Int64()
	}
	if q.Sign() < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

// isConst reports whether x has no column references or aggregates.
func isConst(x expr) bool {
	c := true
	walk(x, func(e expr) {
		switch f := e.(type) {
		case *colExpr:
			c = false
		case *funcExpr:
			if f.Recv != nil || isAggregate(f.Name) || f.Name == "NEWID" {
				c = false
			}
		}
	})
	return c
}

// countRows is the number of rows in ranges.
func countRows(ranges []rowRange) int64 {
	n := int64(0)
	for _, r := range ranges {
		n += r.to - r.from
	}
	return n
}

// skipRows drops the first n rows of ranges (the last n when desc).
func skipRows(ranges []rowRange, n int64, desc bool) []rowRange {
	out := append([]rowRange(nil), ranges...)
	for n > 0 && len(out) > 0 {
		if desc {
			r := &out[len(out)-1]
			k := min(n, r.to-r.from)
			r.to -= k
			n -= k
			if r.from >= r.to {
				out = out[:len(out)-1]
			}
			continue
		}
		r := &out[0]
		k := min(n, r.to-r.from)
		r.from += k
		n -= k
		if r.from >= r.to {
			out = out[1:]
		}
	}
	return out
}

// rowCountExpr evaluates an OFFSET / FETCH count.
func (sc *scope) rowCountExpr(x expr, line int32) (int64, error) {
	if err := sc.bind(x, false); err != nil {
		return 0, err
	}
	if !isConst(x) {
		return 0, errSyntax(token{Kind: tkIdent, Line: line})
	}
	v, err := sc.eval(x, &env{})
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, nil
	}
	n, err := coerce(v, &tiBigInt, line)
	if err != nil {
		return 0, err
	}
	return n.(int64), nil
}

// limitRanges keeps the first top rows of ranges (top < 0: all).
func limitRanges(ranges []rowRange, top int64) []rowRange {
	if top < 0 {
		return ranges
	}
	var out []rowRange
	for _, r := range ranges {
		if top <= 0 {
			break
		}
		if r.to-r.from > top {
			r.to = r.from + top
		}
		top -= r.to - r.from
		out = append(out, r)
	}
	return out
}

// newScanSource streams the rows of ranges (in key order, or reversed).
func (s *Session) newScanSource(sc *scope, t *sampledb.Table, items []outItem, ranges []rowRange, desc bool, where expr, top int64) RowSource {
	// direct: every item is a bare column, so the table encodes the row
	// itself (proj lists the columns; nil when they are the whole row).
	direct := true
	proj := make([]int, len(items))
	whole := len(items) == len(t.Columns)
	for i, it := range items {
		c, ok := it.e.(*colExpr)
		if !it.plain || !ok {
			direct = false
			break
		}
		proj[i] = c.col
		whole = whole && c.col == i
	}
	if s.TextSize > 0 {
		for i := range items {
			if isLOB(&items[i].col.Type) {
				direct = false
			}
		}
	}
	if !direct || whole {
		proj = nil
	}
	if direct && where == nil && !desc {
		return &fastSource{t: t, cols: proj, ranges: limitRanges(ranges, top)}
	}
	// Row by row, the table encodes the row itself only with its
	// pre-encoded generators (Fast); any other table would rebuild the row
	// per call, which the projection below does from the row already
	// built for WHERE.
	ss := &scanSource{
		sc: sc, t: t, ranges: ranges, desc: desc, where: where, items: items, direct: direct && t.Fast(), proj: proj,
		remaining: top, textSize: s.TextSize,
	}
	ss.cur = -1
	if desc {
		// Walk the ranges last to first (each one downwards).
		rev := make([]rowRange, len(ranges))
		for i, r := range ranges {
			rev[len(ranges)-1-i] = r
		}
		ss.ranges = rev
	}
	ss.cols = make([]decode.Column, len(items))
	for i := range items {
		ss.cols[i] = items[i].col
	}
	ss.env.rows = make([][]any, 1)
	return ss
}

// tiBigInt is the target of the integers a statement takes (TOP, SET
// TEXTSIZE and the like).
var tiBigInt = tiOf(decode.KindBigInt)

// isLOB reports whether SET TEXTSIZE applies to values of t: text, ntext,
// image and the (max) types.
func isLOB(t *decode.TypeInfo) bool {
	switch t.Kind() {
	case decode.KindText, decode.KindNText, decode.KindImage:
		return true
	}
	return decode.DeclOf(t, 0).Max
}

// fastSource serves rows of bare columns through the table's pre-encoded
// path.
type fastSource struct {
	t      *sampledb.Table
	cols   []int      // projected columns (nil: the whole row)
	ranges []rowRange // consumed from the front
}

func (f *fastSource) AppendRows(dst []byte, max int, nbc bool) ([]byte, int, bool) {
	n := 0
	for n < max && len(f.ranges) > 0 {
		r := &f.ranges[0]
		k := min(r.to-r.from, int64(max-n))
		dst = f.t.AppendRowsColumns(dst, r.from, r.from+k, f.cols, nbc)
		r.from += k
		n += int(k)
		if r.from >= r.to {
			f.ranges = f.ranges[1:]
		}
	}
	return dst, n, len(f.ranges) == 0
}

// ErrSource is implemented by row sources that can fail midway (a
// conversion error on some row): after AppendRows reports done, a non-nil
// Err is the error to send after the rows already sent, as SQL Server does.
type ErrSource interface {
	Err() error
}

// scanSource filters and projects rows one by one.
type scanSource struct {
	sc        *scope
	t         *sampledb.Table
	ranges    []rowRange
	cur       int   // index of the current range, -1 before the first
	next      int64 // next row of the current range
	desc      bool
	where     expr
	items     []outItem
	cols      []decode.Column
	direct    bool  // items are bare columns: encode with t.AppendRowsColumns
	proj      []int // their table columns (nil: the whole row)
	remaining int64
	skip      int64 // qualifying rows still to skip (OFFSET)
	textSize  int
	env       env
	row, vals []any
	err       error
	done      bool
}

func (ss *scanSource) Err() error { return ss.err }

// advance returns the next row index to visit, or false at the end.
func (ss *scanSource) advance() (int64, bool) {
	for {
		if ss.cur >= 0 && ss.cur < len(ss.ranges) {
			r := ss.ranges[ss.cur]
			if !ss.desc && ss.next < r.to {
				ss.next++
				return ss.next - 1, true
			}
			if ss.desc && ss.next >= r.from {
				ss.next--
				return ss.next + 1, true
			}
		}
		ss.cur++
		if ss.cur >= len(ss.ranges) {
			return 0, false
		}
		if ss.desc {
			ss.next = ss.ranges[ss.cur].to - 1
		} else {
			ss.next = ss.ranges[ss.cur].from
		}
	}
}

func (ss *scanSource) AppendRows(dst []byte, max int, nbc bool) ([]byte, int, bool) {
	n := 0
	examined := 0
	for !ss.done && n < max {
		if ss.remaining == 0 {
			ss.done = true
			break
		}
		if examined >= scanChunk {
			break
		}
		i, ok := ss.advance()
		if !ok {
			ss.done = true
			break
		}
		examined++
		if ss.direct && ss.where == nil {
			dst = ss.t.AppendRowsColumns(dst, i, i+1, ss.proj, nbc)
			n++
			if ss.remaining > 0 {
				ss.remaining--
			}
			continue
		}
		ss.row = ss.t.Row(i, ss.row)
		ss.env.rows[0] = ss.row
		if ss.where != nil {
			ok, err := ss.sc.eval(ss.where, &ss.env)
			if err != nil {
				ss.err, ss.done = err, true
				break
			}
			if ok != true {
				continue
			}
		}
		if ss.skip > 0 {
			ss.skip--
			continue
		}
		if ss.direct {
			dst = ss.t.AppendRowsColumns(dst, i, i+1, ss.proj, nbc)
		} else {
			var err error
			ss.vals, err = project(ss.sc, ss.items, &ss.env, ss.vals[:0], ss.textSize)
			if err == nil {
				dst, err = appendRow(dst, ss.cols, ss.vals, nbc)
			}
			if err != nil {
				ss.err, ss.done = err, true
				break
			}
		}
		n++
		if ss.remaining > 0 {
			ss.remaining--
		}
	}
	return dst, n, ss.done
}

func appendRow(dst []byte, cols []decode.Column, vals []any, nbc bool) ([]byte, error) {
	var err error
	mark := len(dst)
	if nbc {
		dst, err = decode.AppendNBCRow(dst, cols, vals)
	} else {
		dst, err = decode.AppendRow(dst, cols, vals)
	}
	if err != nil {
		return dst[:mark], &Error{Number: 50000, Class: 16, State: 1, Line: 1, Message: "sqlexec: " + err.Error()}
	}
	return dst, nil
}

// project evaluates the output values of one row.
func project(sc *scope, items []outItem, e *env, dst []any, textSize int) ([]any, error) {
	for i := range items {
		it := &items[i]
		v, err := sc.eval(it.e, e)
		if err != nil {
			return dst, err
		}
		if !it.plain && v != nil {
			v, err = coerce(v, &it.col.Type, 1)
			if err != nil {
				return dst, err
			}
			if str, ok := v.(string); ok && isStringType(&it.col.Type) && !isUnicodeType(&it.col.Type) {
				v = toCodePage(str, it.col.Type.Collation)
			}
		}
		if textSize > 0 && v != nil && isLOB(&it.col.Type) {
			v = truncateLOB(v, &it.col.Type, textSize)
		}
		dst = append(dst, v)
	}
	return dst, nil
}

// toCodePage replaces the characters the collation's code page cannot
// represent with '?', as SQL Server does when text becomes varchar.
func toCodePage(s string, c decode.Collation) string {
	if _, err := decode.EncodeText(nil, c, s); err == nil {
		return s
	}
	var b strings.Builder
	var tmp []byte
	for _, r := range s {
		var err error
		tmp, err = decode.EncodeText(tmp[:0], c, string(r))
		if err != nil {
			b.WriteByte('?')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// truncateLOB applies SET TEXTSIZE (a byte count).
func truncateLOB(v any, t *decode.TypeInfo, n int) any {
	switch x := v.(type) {
	case []byte:
		if len(x) > n {
			return x[:n]
		}
	case string:
		if isUnicodeType(t) {
			return decode.TruncateUTF16(x, n/2) // n bytes of UTF-16
		}
		count := 0
		for i := range x {
			if count == n {
				return x[:i]
			}
			count++
		}
	}
	return v
}

// sliceSource serves materialised rows.
type sliceSource struct {
	rows [][]any
	cols []decode.Column
	next int
	err  error
}

func (s *sliceSource) Err() error { return s.err }

func (s *sliceSource) AppendRows(dst []byte, max int, nbc bool) ([]byte, int, bool) {
	n := 0
	for n < max && s.next < len(s.rows) && s.err == nil {
		var err error
		dst, err = appendRow(dst, s.cols, s.rows[s.next], nbc)
		if err != nil {
			s.err = err
			break
		}
		s.next++
		n++
	}
	return dst, n, s.next >= len(s.rows) || s.err != nil
}

// group is one GROUP BY group (or the single group of an aggregate query).
type group struct {
	first []([]any) // env rows of the group's first row
	accs  []aggAcc
}

// materialize runs joins, filters, grouping, DISTINCT, ORDER BY and TOP in
// memory, within ScanLimit and maxMaterialize. Rows are consumed as they
// are produced: an aggregate keeps one accumulator per group, not the rows.
func (s *Session) materialize(sc *scope, st *selectStmt, items []outItem, order []orderItem, aggregate bool, top int64, percent float64, offset int64) ([][]any, error) {
	budget := s.ScanLimit
	if budget <= 0 {
		budget = DefaultScanLimit
	}
	tooBig := func() error {
		return &Error{Number: 50000, Class: 16, State: 1, Line: st.Line,
			Message: "sqlexec: the statement would read more rows than the tdsextract test server's scan limit; filter on the table's key or select fewer rows"}
	}
	type outRow struct {
		vals []any
		keys []any
	}
	var out []outRow
	evalOrder := func(e *env) ([]any, error) {
		if len(order) == 0 {
			return nil, nil
		}
		keys := make([]any, len(order))
		for i, o := range order {
			v, err := sc.eval(o.Expr, e)
			if err != nil {
				return nil, err
			}
			keys[i] = v
		}
		return keys, nil
	}
	groups := map[string]*group{}
	var orderG []*group
	// Without ORDER BY, DISTINCT or aggregation, TOP stops the scan early.
	limit := int64(-1)
	if !aggregate && !st.Distinct && len(order) == 0 && percent == 0 && top >= 0 {
		limit = top + offset
	}
	errStop := &Error{}
	consume := func(rows [][]any) error {
		e := &env{rows: rows}
		if st.Where != nil {
			v, err := sc.eval(st.Where, e)
			if err != nil {
				return err
			}
			if v != true {
				return nil
			}
		}
		if aggregate {
			key := ""
			if len(st.GroupBy) > 0 {
				var b strings.Builder
				for _, g := range st.GroupBy {
					v, err := sc.eval(g, e)
					if err != nil {
						return err
					}
					b.WriteString(groupKeyRule(v, sc.textRule(g)))
					b.WriteByte(0)
				}
				key = b.String()
			}
			g, ok := groups[key]
			if !ok {
				if len(groups) >= maxMaterialize {
					return tooBig()
				}
				cp := make([][]any, len(rows))
				copy(cp, rows)
				g = &group{first: cp, accs: make([]aggAcc, len(sc.aggs))}
				groups[key] = g
				orderG = append(orderG, g)
			}
			for i, a := range sc.aggs {
				if err := g.accs[i].add(sc, a, e); err != nil {
					return err
				}
			}
			return nil
		}
		if limit >= 0 && int64(len(out)) >= limit {
			return errStop
		}
		if len(out) >= maxMaterialize {
			return tooBig()
		}
		vals, err := project(sc, items, e, nil, s.TextSize)
		if err != nil {
			return err
		}
		keys, err := evalOrder(e)
		if err != nil {
			return err
		}
		out = append(out, outRow{vals: vals, keys: keys})
		return nil
	}
	var runErr error
	if len(sc.srcs) == 0 {
		runErr = consume(nil)
	} else {
		// The first source uses the key range when there is no join.
		// The leftmost source is never NULL-extended, so the key ranges of
		// the WHERE clause apply to it even in a join.
		first, _ := sc.keyRanges(sc.srcs[0].t, st.Where)
		// Refuse up front what could not finish within the budget.
		if rowLimit(budget, sc.srcs[0].t) < countRows(first) {
			return nil, tooBig()
		}
		for _, src := range sc.srcs[1:] {
			if rowLimit(budget, src.t) < src.t.Rows {
				return nil, tooBig()
			}
		}
		cur := make([][]any, len(sc.srcs))
		var join func(k int) error
		join = func(k int) error {
			if k == len(sc.srcs) {
				return consume(cur)
			}
			t := sc.srcs[k].t
			ranges := []rowRange{{0, t.Rows}}
			if k == 0 {
				ranges = first
			}
			matched := false
			for _, rr := range ranges {
				for i := rr.from; i < rr.to; i++ {
					budget--
					if budget < 0 {
						return tooBig()
					}
					cur[k] = t.Row(i, nil)
					if on := stOn(st, k); on != nil {
						v, err := sc.eval(on, &env{rows: cur})
						if err != nil {
							return err
						}
						if v != true {
							continue
						}
					}
					matched = true
					if err := join(k + 1); err != nil {
						return err
					}
				}
			}
			cur[k] = nil
			if !matched && k > 0 && sc.joins[k] == joinLeft {
				return join(k + 1)
			}
			return nil
		}
		runErr = join(0)
	}
	if runErr != nil && runErr != errStop {
		return nil, runErr
	}
	if aggregate {
		if len(st.GroupBy) == 0 && len(orderG) == 0 {
			orderG = append(orderG, &group{first: make([][]any, len(sc.srcs)), accs: make([]aggAcc, len(sc.aggs))})
		}
		for _, g := range orderG {
			e := &env{rows: g.first, aggs: make([]any, len(sc.aggs))}
			for i, a := range sc.aggs {
				v, err := g.accs[i].result(a, sc)
				if err != nil {
					return nil, err
				}
				e.aggs[i] = v
			}
			if st.Having != nil {
				v, err := sc.eval(st.Having, e)
				if err != nil {
					return nil, err
				}
				if v != true {
					continue
				}
			}
			vals, err := project(sc, items, e, nil, s.TextSize)
			if err != nil {
				return nil, err
			}
			keys, err := evalOrder(e)
			if err != nil {
				return nil, err
			}
			out = append(out, outRow{vals: vals, keys: keys})
		}
	}
	if st.Distinct {
		seen := map[string]bool{}
		k := 0
		for _, r := range out {
			var b strings.Builder
			for i, v := range r.vals {
				b.WriteString(groupKeyRule(v, sc.textRule(items[i].e)))
				b.WriteByte(0)
			}
			if seen[b.String()] {
				continue
			}
			seen[b.String()] = true
			out[k] = r
			k++
		}
		out = out[:k]
	}
	if len(order) > 0 {
		rules := make([]textRule, len(order))
		for i, o := range order {
			rules[i] = sc.textRule(o.Expr)
		}
		sort.SliceStable(out, func(a, b int) bool {
			for i, o := range order {
				c := compareNullsFirst(out[a].keys[i], out[b].keys[i], rules[i])
				if o.Desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			return false
		})
	}
	if offset > 0 {
		out = out[min(offset, int64(len(out))):]
	}
	if percent > 0 {
		top = int64(math.Ceil(float64(len(out)) * percent / 100))
	}
	if top >= 0 && int64(len(out)) > top {
		out = out[:top]
	}
	rows := make([][]any, len(out))
	for i := range out {
		rows[i] = out[i].vals
	}
	return rows, nil
}

// maxScanCells bounds the cells (rows × columns) one statement may
// generate before it returns anything.
const maxScanCells = 200_000_000

// rowLimit is how many rows of t a statement may read under budget.
func rowLimit(budget int64, t *sampledb.Table) int64 {
	byCells := int64(maxScanCells / max(1, len(t.Columns)))
	return min(budget, byCells)
}

// fastAggregate answers COUNT(*), COUNT_BIG(*) and MIN/MAX of the key over
// a key range without reading rows (a billion-row table counts instantly).
// ok is false when the query needs a scan.
func (s *Session) fastAggregate(sc *scope, st *selectStmt, items []outItem) (rows [][]any, ok bool, err error) {
	if len(sc.srcs) != 1 || len(st.GroupBy) > 0 || st.Having != nil || st.Distinct {
		return nil, false, nil
	}
	t := sc.srcs[0].t
	ranges, residual := sc.keyRanges(t, st.Where)
	if residual != nil {
		return nil, false, nil
	}
	kc := t.KeyColumn()
	vals := make([]any, len(sc.aggs))
	for i, a := range sc.aggs {
		switch {
		case a.Star && (a.Name == "COUNT" || a.Name == "COUNT_BIG"):
			n := countRows(ranges)
			if a.Name == "COUNT" && n > math.MaxInt32 {
				return nil, true, newError(8115, 16, 2, a.Line, "Arithmetic overflow error converting expression to data type int.")
			}
			vals[i] = n
		case (a.Name == "MIN" || a.Name == "MAX") && kc >= 0:
			c, isCol := a.Args[0].(*colExpr)
			if !isCol || c.col != kc {
				return nil, false, nil
			}
			if len(ranges) == 0 {
				vals[i] = nil
				continue
			}
			r := ranges[0].from
			if a.Name == "MAX" {
				r = ranges[len(ranges)-1].to - 1
			}
			vals[i] = t.Row(r, nil)[kc]
		default:
			return nil, false, nil
		}
	}
	e := &env{rows: make([][]any, 1), aggs: vals}
	out, err := project(sc, items, e, nil, 0)
	if err != nil {
		return nil, true, err
	}
	return [][]any{out}, true, nil
}

func stOn(st *selectStmt, k int) expr {
	if k < len(st.From) {
		return st.From[k].On
	}
	return nil
}

func compareNullsFirst(a, b any, r textRule) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	c, _ := compareRule(a, b, r)
	return c
}

// groupKey is a grouping/DISTINCT key: equal under the case-insensitive
// collation means equal key.
func groupKey(v any) string { return groupKeyRule(v, ruleFold) }

// groupKeyRule is groupKey for text compared by rule r.
func groupKeyRule(v any, r textRule) string {
	switch x := v.(type) {
	case nil:
		return "\x01"
	case string:
		if r != ruleFold {
			return "s" + strings.TrimRight(x, " ")
		}
		return "s" + strings.ToLower(strings.TrimRight(x, " "))
	case []byte:
		return "b" + string(x)
	}
	if isNumeric(v) {
		if r, ok := asRat(v); ok {
			return "n" + r.RatString()
		}
	}
	return "v" + valueText(v, nil)
}

// aggAcc accumulates one aggregate.
type aggAcc struct {
	count  int64
	best   any
	sum    *big.Rat
	fsum   float64
	float  bool
	seen   map[string]bool
	anyVal bool
}

func (a *aggAcc) add(sc *scope, f *funcExpr, e *env) error {
	if f.Star {
		a.count++
		return nil
	}
	v, err := sc.eval(f.Args[0], e)
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	if f.Distinct {
		if a.seen == nil {
			a.seen = map[string]bool{}
		}
		k := groupKeyRule(v, sc.textRule(f.Args[0]))
		if a.seen[k] {
			return nil
		}
		a.seen[k] = true
	}
	a.count++
	switch f.Name {
	case "MIN", "MAX":
		if !a.anyVal {
			a.best, a.anyVal = v, true
			return nil
		}
		c, ok := compareRule(v, a.best, sc.textRule(f.Args[0]))
		if !ok {
			return errConvert(v, a.best)
		}
		if (f.Name == "MIN" && c < 0) || (f.Name == "MAX" && c > 0) {
			a.best = v
		}
	case "SUM", "AVG":
		a.anyVal = true
		switch x := v.(type) {
		case float64:
			a.float = true
			a.fsum += x
		case float32:
			a.float = true
			a.fsum += float64(x)
		default:
			r, ok := asRat(v)
			if !ok {
				return newError(8117, 16, 1, f.Line, "Operand data type %s is invalid for %s operator.", sqlTypeNameOfValue(v), strings.ToLower(f.Name))
			}
			if a.sum == nil {
				a.sum = new(big.Rat)
			}
			a.sum.Add(a.sum, r)
		}
	}
	return nil
}

func (a *aggAcc) result(f *funcExpr, sc *scope) (any, error) {
	switch f.Name {
	case "COUNT":
		if a.count > math.MaxInt32 {
			return nil, newError(8115, 16, 2, f.Line, "Arithmetic overflow error converting expression to data type int.")
		}
		return a.count, nil
	case "COUNT_BIG":
		return a.count, nil
	case "MIN", "MAX":
		return a.best, nil
	}
	if !a.anyVal {
		return nil, nil
	}
	t, _ := sc.funcType(f)
	if a.float {
		v := a.fsum
		if a.sum != nil {
			f2, _ := a.sum.Float64()
			v += f2
		}
		if f.Name == "AVG" {
			v /= float64(a.count)
		}
		return coerce(v, &t, f.Line)
	}
	r := new(big.Rat).Set(a.sum)
	if f.Name == "AVG" {
		r.Quo(r, new(big.Rat).SetInt64(a.count))
		if t.Kind().Class() == decode.ClassInteger {
			// Integer AVG truncates.
			q := new(big.Int).Quo(r.Num(), r.Denom())
			r.SetInt(q)
		}
	}
	if t.Kind().Class() == decode.ClassInteger {
		if !r.IsInt() {
			r.SetInt(new(big.Int).Quo(r.Num(), r.Denom()))
		}
		n := r.Num()
		lo, hi := t.Kind().IntRange()
		if !n.IsInt64() || n.Int64() < lo || n.Int64() > hi {
			return nil, newError(8115, 16, 2, f.Line, "Arithmetic overflow error converting expression to data type %s.", sqlTypeName(&t))
		}
		return n.Int64(), nil
	}
	d, _ := ratToDecimal(r, 38, t.Scale)
	return coerce(d, &t, f.Line)
}

// execProc runs EXEC of a procedure named in a batch.
func (s *Session) execProc(st *execStmt, ps *paramSet) ([]Result, error) {
	name := st.Proc[len(st.Proc)-1]
	switch strings.ToLower(name) {
	case "sp_executesql":
		if len(st.Args) == 0 {
			return nil, newError(201, 16, 4, st.Line, "Procedure or function 'sp_executesql' expects parameter '@statement', which was not supplied.")
		}
		sc := &scope{s: s, ps: ps}
		eval := func(a execArg) (any, error) {
			if err := sc.bind(a.Value, false); err != nil {
				return nil, err
			}
			return sc.eval(a.Value, &env{})
		}
		stmtV, err := eval(st.Args[0])
		if err != nil {
			return nil, err
		}
		sqlText, _ := stmtV.(string)
		var params []Param
		if len(st.Args) > 1 {
			declV, err := eval(st.Args[1])
			if err != nil {
				return nil, err
			}
			decl, _ := declV.(string)
			names := declNames(decl)
			for i, a := range st.Args[2:] {
				v, err := eval(a)
				if err != nil {
					return nil, err
				}
				n := a.Name
				if n == "" && i < len(names) {
					n = names[i]
				}
				params = append(params, Param{Name: n, Value: v})
			}
		}
		return s.Exec(sqlText, params)
	}
	return nil, errNoProc(st.Line, strings.Join(st.Proc, "."))
}
