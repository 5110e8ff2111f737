package migrate

import (
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Views: CREATE VIEW name [(columns)] AS [WITH cte [(columns)] AS
// (query), ...] query, where a query is SELECT blocks joined by UNION
// [ALL], EXCEPT and INTERSECT (which bind as in PostgreSQL: INTERSECT
// first), and a block is a select list, FROM with joins, WHERE, GROUP BY
// and HAVING. TOP (n) of a lone block becomes LIMIT n (after its ORDER
// BY), ORDER BY ... OFFSET ... FETCH becomes OFFSET ... LIMIT. TOP ...
// PERCENT, TOP ... WITH TIES, TOP or ORDER BY around a set operation,
// subqueries, table hints and WITH SCHEMABINDING's options beyond the
// name are reported, not guessed. The PostgreSQL view names its columns
// as the source view does.

// relScope is the columns of one FROM item: a migrated table or a CTE.
type relScope struct {
	cols  map[string]colInfo // by lower-case source name
	names []string           // the lower-case names in column order
}

// viewScope resolves names against the FROM of one query block.
type viewScope struct {
	b       *builder
	aliases map[string]*relScope // alias or table name (lower) -> its columns
	order   []*relScope
}

func (s *viewScope) column(parts []string) (colInfo, error) {
	name := strings.ToLower(parts[len(parts)-1])
	if len(parts) >= 2 {
		qual := strings.ToLower(parts[len(parts)-2])
		rs, ok := s.aliases[qual]
		if !ok {
			return colInfo{}, untranslatable("unknown table or alias %s", parts[len(parts)-2])
		}
		c, ok := rs.cols[name]
		if !ok {
			return colInfo{}, untranslatable("unknown column %s", strings.Join(parts, "."))
		}
		c.sql = postgres.QuoteIdent(postgres.FoldIdent(parts[len(parts)-2], s.b.o.Identifiers)) + "." + c.sql
		return c, nil
	}
	var found *colInfo
	for _, rs := range s.order {
		if c, ok := rs.cols[name]; ok {
			if found != nil {
				return colInfo{}, untranslatable("column %s is ambiguous", parts[0])
			}
			found = &c
		}
	}
	if found == nil {
		return colInfo{}, untranslatable("unknown column %s", parts[0])
	}
	return *found, nil
}

func (s *viewScope) sequence(parts []string) (string, error) { return s.b.sequenceName(parts) }
func (s *viewScope) pgType(t string) (string, class, error)  { return pgType(t) }

// clauseWords end a select item or a table reference.
var clauseWords = map[string]bool{"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true, "UNION": true,
	"EXCEPT": true, "INTERSECT": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "CROSS": true,
	"OUTER": true, "ON": true, "WITH": true, "OPTION": true, "FOR": true}

func (b *builder) view(v *catalog.Table) {
	obj := v.FullName()
	if v.Definition == "" {
		b.untranslated(obj, "view", "", "the definition is not readable (an encrypted view): not created")
		return
	}
	sql, refs, err := b.translateView(v)
	if err != nil {
		b.untranslated(obj, "view", v.Definition, fmt.Sprintf("not translated (%v): not created", err))
		return
	}
	schema, name, _ := b.target(v.Schema, v.Name)
	b.step(Step{Phase: PhaseView, Object: schema + "." + name, Refs: refs, SQL: []string{sql}})
}

// outCol is a column a query block gives: its name ("" for an unnamed
// expression) and what the translation knows of it.
type outCol struct {
	name string
	info colInfo
}

// label names the i-th column a block gives, for the plan's notes.
func (c outCol) label(i int) string {
	if c.name != "" {
		return c.name
	}
	return fmt.Sprintf("column %d", i+1)
}

// caseFolded reports whether c is text SQL Server compares
// case-insensitively and PostgreSQL case-sensitively: under a
// case-insensitive source collation, typed neither citext nor with the
// nondeterministic collation.
func caseFolded(c colInfo) bool { return c.class == cText && c.ci && !c.nondet && !c.citext }

// addName appends name to names unless it is there.
func addName(names []string, name string) []string {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return names
		}
	}
	return append(names, name)
}

// viewTranslator translates one view's query.
type viewTranslator struct {
	b     *builder
	v     *catalog.Table
	p     *parser
	ctes  map[string]*relScope // by lower-case name
	refs  []string
	notes []string
}

func (vt *viewTranslator) note(n string) {
	for _, have := range vt.notes {
		if have == n {
			return
		}
	}
	vt.notes = append(vt.notes, n)
}

func (b *builder) translateView(v *catalog.Table) (string, []string, error) {
	toks, err := tokenize(v.Definition)
	if err != nil {
		return "", nil, err
	}
	p := &parser{toks: toks}
	if !p.word("CREATE") {
		return "", nil, p.errorf("expected CREATE")
	}
	if p.word("OR") && !p.word("ALTER") {
		return "", nil, p.errorf("expected ALTER")
	}
	if !p.word("VIEW") {
		return "", nil, p.errorf("expected VIEW")
	}
	if _, err := p.dotted(); err != nil {
		return "", nil, err
	}
	if p.op("(") { // the column list: the catalog has the names
		for !p.op(")") {
			if p.next().kind == tEOF {
				return "", nil, p.errorf("unclosed column list")
			}
		}
	}
	if p.word("WITH") {
		for p.peek().kind == tWord && p.peek().upper() != "AS" {
			p.next()
			p.op(",")
		}
	}
	if !p.word("AS") {
		return "", nil, p.errorf("expected AS")
	}
	vt := &viewTranslator{b: b, v: v, p: p, ctes: map[string]*relScope{}}
	out, _, star, err := vt.query()
	if err != nil {
		return "", nil, err
	}
	p.op(";")
	if p.peek().kind != tEOF {
		return "", nil, p.errorf("not translated")
	}
	for _, n := range vt.notes {
		b.note(v.FullName(), "view", v.Definition, n)
	}
	schema, name, _ := b.target(v.Schema, v.Name)
	cols := make([]string, 0, len(v.Columns))
	for _, c := range v.Columns {
		if !c.Hidden {
			cols = append(cols, postgres.QuoteIdent(postgres.FoldIdent(c.Name, b.o.Identifiers)))
		}
	}
	if star || len(cols) == 0 {
		return "CREATE VIEW " + postgres.QuoteIdent(schema) + "." + postgres.QuoteIdent(name) + " AS " + out, vt.refs, nil
	}
	return "CREATE VIEW " + postgres.QuoteIdent(schema) + "." + postgres.QuoteIdent(name) + " (" + strings.Join(cols, ", ") + ") AS " + out, vt.refs, nil
}

// name reads a name (a word or a quoted name).
func (p *parser) name() (string, error) {
	t := p.next()
	if t.kind != tWord && t.kind != tName {
		p.i--
		return "", p.errorf("expected a name")
	}
	return t.text, nil
}

// count reads a non-negative integer literal (TOP's n, OFFSET's and
// FETCH's counts).
func (p *parser) count(what string) (string, error) {
	t := p.next()
	if t.kind != tNumber || strings.Trim(t.text, "0123456789") != "" {
		p.i--
		return "", untranslatable("%s with a count that is not an integer literal", what)
	}
	return t.text, nil
}

// query translates [WITH ctes] block {set operator block} [ORDER BY ...
// [OFFSET ... [FETCH ...]]]: the SQL, the columns of its first block,
// and whether that block's select list is a lone *.
func (vt *viewTranslator) query() (string, []outCol, bool, error) {
	p := vt.p
	with := ""
	if p.word("WITH") {
		var parts []string
		for {
			name, err := p.name()
			if err != nil {
				return "", nil, false, err
			}
			var names []string
			if p.op("(") {
				for {
					n, err := p.name()
					if err != nil {
						return "", nil, false, err
					}
					names = append(names, n)
					if p.op(")") {
						break
					}
					if err := p.expect(","); err != nil {
						return "", nil, false, err
					}
				}
			}
			if !p.word("AS") {
				return "", nil, false, p.errorf("expected AS")
			}
			if err := p.expect("("); err != nil {
				return "", nil, false, err
			}
			sql, cols, _, err := vt.query()
			if err != nil {
				return "", nil, false, err
			}
			if err := p.expect(")"); err != nil {
				return "", nil, false, err
			}
			if names != nil && len(names) != len(cols) {
				return "", nil, false, untranslatable("CTE %s names %d columns, its query gives %d", name, len(names), len(cols))
			}
			rs := &relScope{cols: map[string]colInfo{}}
			for i, c := range cols {
				n := c.name
				if names != nil {
					n = names[i]
				}
				if n == "" {
					return "", nil, false, untranslatable("CTE %s has a column without a name", name)
				}
				info := c.info
				info.sql = postgres.QuoteIdent(postgres.FoldIdent(n, vt.b.o.Identifiers))
				rs.cols[strings.ToLower(n)] = info
				rs.names = append(rs.names, strings.ToLower(n))
			}
			def := postgres.QuoteIdent(postgres.FoldIdent(name, vt.b.o.Identifiers))
			if names != nil {
				q := make([]string, len(names))
				for i, n := range names {
					q[i] = postgres.QuoteIdent(postgres.FoldIdent(n, vt.b.o.Identifiers))
				}
				def += " (" + strings.Join(q, ", ") + ")"
			}
			parts = append(parts, def+" AS ("+sql+")")
			vt.ctes[strings.ToLower(name)] = rs
			if !p.op(",") {
				break
			}
		}
		with = "WITH " + strings.Join(parts, ", ") + " "
	}
	first, err := vt.block()
	if err != nil {
		return "", nil, false, err
	}
	out := first.sql
	blocks := 1
	setCols := map[string][]string{} // operator -> its case-folded columns
	var setOps []string
	for {
		op := ""
		switch {
		case p.word("UNION"):
			op = "UNION"
			if p.word("ALL") {
				op = "UNION ALL"
			}
		case p.word("EXCEPT"):
			op = "EXCEPT"
		case p.word("INTERSECT"):
			op = "INTERSECT"
		}
		if op == "" {
			break
		}
		next, err := vt.block()
		if err != nil {
			return "", nil, false, err
		}
		if first.top != "" || next.top != "" {
			return "", nil, false, untranslatable("TOP in a query with %s is not translated", op)
		}
		if len(next.cols) != len(first.cols) {
			return "", nil, false, untranslatable("the blocks of %s give %d and %d columns", op, len(first.cols), len(next.cols))
		}
		out += " " + op + " " + next.sql
		blocks++
		if op != "UNION ALL" {
			if _, seen := setCols[op]; !seen {
				setOps = append(setOps, op)
				setCols[op] = nil
			}
			for i := range first.cols {
				if caseFolded(first.cols[i].info) || caseFolded(next.cols[i].info) {
					setCols[op] = addName(setCols[op], first.cols[i].label(i))
				}
			}
		}
	}
	for _, op := range setOps {
		if len(setCols[op]) > 0 {
			vt.note(fmt.Sprintf("%s compares %s case-sensitively in PostgreSQL (case-insensitively in SQL Server): rows that differ only in case are told apart",
				op, strings.Join(setCols[op], ", ")))
		}
	}
	ordered, limit, offset := false, first.top, ""
	if p.word("ORDER") {
		if !p.word("BY") {
			return "", nil, false, p.errorf("expected BY")
		}
		if blocks > 1 {
			return "", nil, false, untranslatable("ORDER BY over UNION, EXCEPT or INTERSECT is not translated")
		}
		var keys, folded []string
		for {
			q := &parser{toks: p.toks, i: p.i}
			n, err := q.expr()
			if err != nil {
				return "", nil, false, err
			}
			s, _, err := first.tr.expr(n)
			r, isRef := n.(ref)
			if err != nil {
				// ORDER BY may name a select-list alias.
				found := false
				for _, c := range first.cols {
					if isRef && len(r.parts) == 1 && c.name != "" && strings.EqualFold(c.name, r.parts[0]) {
						s, found = postgres.QuoteIdent(postgres.FoldIdent(c.name, vt.b.o.Identifiers)), true
						if caseFolded(c.info) {
							folded = addName(folded, c.name)
						}
					}
				}
				if !found {
					return "", nil, false, err
				}
			} else if isRef {
				if c, err := first.tr.sc.column(r.parts); err == nil && caseFolded(c) {
					folded = addName(folded, strings.Join(r.parts, "."))
				}
			}
			p.i = q.i
			if p.word("DESC") {
				s += " DESC"
			} else {
				p.word("ASC")
			}
			keys = append(keys, s)
			if !p.op(",") {
				break
			}
		}
		for _, n := range first.tr.notes {
			vt.note(n)
		}
		if len(folded) > 0 {
			vt.note(fmt.Sprintf("ORDER BY sorts %s case-sensitively in PostgreSQL, in the target database's collation (case-insensitively in SQL Server): "+
				"rows can come in another order, and a TOP, OFFSET or FETCH can keep other rows", strings.Join(folded, ", ")))
		}
		out += " ORDER BY " + strings.Join(keys, ", ")
		ordered = true
		if p.word("OFFSET") {
			if offset, err = p.count("OFFSET"); err != nil {
				return "", nil, false, err
			}
			if !p.word("ROWS") && !p.word("ROW") {
				return "", nil, false, p.errorf("expected ROWS")
			}
			if p.word("FETCH") {
				if !p.word("NEXT") && !p.word("FIRST") {
					return "", nil, false, p.errorf("expected NEXT")
				}
				if limit, err = p.count("FETCH"); err != nil {
					return "", nil, false, err
				}
				if !p.word("ROWS") && !p.word("ROW") || !p.word("ONLY") {
					return "", nil, false, p.errorf("expected ROWS ONLY")
				}
			}
		}
	}
	if first.top != "" && !ordered {
		vt.note(fmt.Sprintf("TOP (%s) without ORDER BY becomes LIMIT %s: which rows is unspecified, in SQL Server as in PostgreSQL", first.top, first.top))
	}
	if limit != "" {
		out += " LIMIT " + limit
	}
	if offset != "" {
		out += " OFFSET " + offset
	}
	return with + out, first.cols, first.star, nil
}

// queryBlock is one translated SELECT block.
type queryBlock struct {
	sql  string
	cols []outCol
	star bool
	top  string // TOP's n, "" for none
	tr   *translator
}

// block translates SELECT [TOP (n)] [DISTINCT] list FROM ... [WHERE]
// [GROUP BY] [HAVING], stopping at what follows it.
func (vt *viewTranslator) block() (*queryBlock, error) {
	b, v, p := vt.b, vt.v, vt.p
	if !p.word("SELECT") {
		return nil, p.errorf("expected SELECT")
	}
	blk := &queryBlock{}
	// SELECT [ALL | DISTINCT] [TOP (n)] list.
	distinct := p.word("DISTINCT")
	if !distinct {
		p.word("ALL")
	}
	if p.word("TOP") {
		paren := p.op("(")
		n, err := p.count("TOP")
		if err != nil {
			return nil, err
		}
		if paren {
			if err := p.expect(")"); err != nil {
				return nil, err
			}
		}
		if p.word("PERCENT") {
			return nil, untranslatable("TOP ... PERCENT is not translated (PostgreSQL's LIMIT counts rows)")
		}
		if p.peek().upper() == "WITH" && p.toks[p.i+1].upper() == "TIES" {
			return nil, untranslatable("TOP ... WITH TIES is not translated")
		}
		blk.top = n
	}
	// The select list is parsed after FROM (its names resolve against
	// it): remember where it starts, skip to FROM at depth 0.
	listStart := p.i
	depth := 0
	for {
		t := p.peek()
		if t.kind == tEOF || depth == 0 && (t.is(")") || t.upper() == "UNION" || t.upper() == "EXCEPT" || t.upper() == "INTERSECT") {
			return nil, p.errorf("a view without FROM is not translated")
		}
		if t.is("(") {
			depth++
		} else if t.is(")") {
			depth--
		} else if depth == 0 && t.upper() == "FROM" {
			break
		}
		p.next()
	}
	listEnd := p.i
	p.next()
	sc := &viewScope{b: b, aliases: map[string]*relScope{}}
	tableRef := func() (string, error) {
		parts, err := p.dotted()
		if err != nil {
			return "", err
		}
		name := parts[len(parts)-1]
		var rs *relScope
		var out string
		if cte, ok := vt.ctes[strings.ToLower(name)]; ok && len(parts) == 1 {
			rs, out = cte, postgres.QuoteIdent(postgres.FoldIdent(name, b.o.Identifiers))
		} else {
			schema := v.Schema
			if len(parts) >= 2 {
				schema = parts[len(parts)-2]
			}
			src := b.db.Table(schema, name)
			if src == nil && len(parts) == 1 {
				src = b.db.Table("dbo", name)
			}
			if src == nil || b.byTable[src] == nil {
				return "", untranslatable("%s is not a migrated table", strings.Join(parts, "."))
			}
			ts := b.byTable[src]
			vt.refs = append(vt.refs, ts.tp.Target())
			rs = &relScope{cols: ts.cols}
			for _, c := range src.Columns {
				if _, ok := ts.cols[strings.ToLower(c.Name)]; ok && !c.Hidden {
					rs.names = append(rs.names, strings.ToLower(c.Name))
				}
			}
			out = ts.tp.QualifiedName()
		}
		alias := name
		p.word("AS")
		if t := p.peek(); (t.kind == tWord && !clauseWords[t.upper()]) || t.kind == tName {
			alias = p.next().text
		}
		if p.peek().upper() == "WITH" {
			return "", untranslatable("table hints are not translated")
		}
		sc.aliases[strings.ToLower(alias)] = rs
		sc.order = append(sc.order, rs)
		return out + " AS " + postgres.QuoteIdent(postgres.FoldIdent(alias, b.o.Identifiers)), nil
	}
	first, err := tableRef()
	if err != nil {
		return nil, err
	}
	from := []string{first}
	type pendingOn struct {
		at  int // index into from
		pos int // token position of the ON expression
	}
	var ons []pendingOn
	for {
		join := ""
		switch {
		case p.op(","):
			join = ","
		case p.word("JOIN"):
			join = "JOIN"
		case p.word("INNER"):
			join = "JOIN"
		case p.word("LEFT"):
			join = "LEFT JOIN"
		case p.word("RIGHT"):
			join = "RIGHT JOIN"
		case p.word("FULL"):
			join = "FULL JOIN"
		case p.word("CROSS"):
			join = "CROSS JOIN"
		}
		if join == "" {
			break
		}
		p.word("OUTER")
		if join != "," && join != "JOIN" && !p.word("JOIN") {
			return nil, p.errorf("expected JOIN")
		} else if join == "JOIN" && p.toks[p.i-1].upper() == "INNER" && !p.word("JOIN") {
			return nil, p.errorf("expected JOIN")
		}
		ref, err := tableRef()
		if err != nil {
			return nil, err
		}
		if join == "," {
			from = append(from, ", "+ref)
			continue
		}
		from = append(from, " "+join+" "+ref)
		if join != "CROSS JOIN" {
			if !p.word("ON") {
				return nil, p.errorf("expected ON")
			}
			ons = append(ons, pendingOn{len(from) - 1, p.i})
			// Skip the ON expression now; translate it once every table is known.
			if _, err := p.expr(); err != nil {
				return nil, err
			}
		}
	}
	rest := p.i
	tr := &translator{sc: sc}
	blk.tr = tr
	defer func() {
		for _, n := range tr.notes {
			vt.note(n)
		}
	}()
	exprAt := func(pos int) (string, int, error) {
		q := &parser{toks: p.toks, i: pos}
		n, err := q.expr()
		if err != nil {
			return "", 0, err
		}
		s, _, err := tr.expr(n)
		return s, q.i, err
	}
	for _, on := range ons {
		s, _, err := exprAt(on.pos)
		if err != nil {
			return nil, err
		}
		from[on.at] += " ON " + s
	}
	// The select list.
	var items []string
	q := &parser{toks: p.toks[:listEnd:listEnd], i: listStart}
	q.toks = append(q.toks, token{kind: tEOF})
	for {
		if q.op("*") {
			items = append(items, "*")
			for _, rs := range sc.order {
				for _, n := range rs.names {
					blk.cols = append(blk.cols, outCol{n, rs.cols[n]})
				}
			}
		} else {
			n, err := q.expr()
			if err != nil {
				return nil, err
			}
			s, c, err := tr.expr(n)
			if err != nil {
				return nil, err
			}
			col := outCol{info: colInfo{class: c}}
			if r, ok := n.(ref); ok {
				col.name = r.parts[len(r.parts)-1]
				if info, err := sc.column(r.parts); err == nil {
					col.info = info
				}
			}
			if q.word("AS") || q.peek().kind == tWord || q.peek().kind == tName || q.peek().kind == tString {
				col.name = q.next().text
				s += " AS " + postgres.QuoteIdent(postgres.FoldIdent(col.name, b.o.Identifiers))
			}
			items = append(items, s)
			blk.cols = append(blk.cols, col)
		}
		if !q.op(",") {
			break
		}
	}
	if q.peek().kind != tEOF {
		return nil, q.errorf("unexpected text in the select list")
	}
	blk.star = len(items) == 1 && items[0] == "*"
	out := "SELECT "
	if distinct {
		out += "DISTINCT "
		var folded []string
		for i, c := range blk.cols {
			if caseFolded(c.info) {
				folded = addName(folded, c.label(i))
			}
		}
		if len(folded) > 0 {
			vt.note(fmt.Sprintf("DISTINCT compares %s case-sensitively in PostgreSQL (case-insensitively in SQL Server): rows that differ only in case are told apart",
				strings.Join(folded, ", ")))
		}
	}
	out += strings.Join(items, ", ") + " FROM " + strings.Join(from, "")
	p.i = rest
	if p.word("WHERE") {
		s, next, err := exprAt(p.i)
		if err != nil {
			return nil, err
		}
		out += " WHERE " + s
		p.i = next
	}
	if p.word("GROUP") {
		if !p.word("BY") {
			return nil, p.errorf("expected BY")
		}
		var keys, folded []string
		for {
			if n, err := (&parser{toks: p.toks, i: p.i}).expr(); err == nil {
				if r, ok := n.(ref); ok {
					if c, err := sc.column(r.parts); err == nil && caseFolded(c) {
						folded = addName(folded, strings.Join(r.parts, "."))
					}
				}
			}
			s, next, err := exprAt(p.i)
			if err != nil {
				return nil, err
			}
			keys, p.i = append(keys, s), next
			if !p.op(",") {
				break
			}
		}
		out += " GROUP BY " + strings.Join(keys, ", ")
		if len(folded) > 0 {
			vt.note(fmt.Sprintf("GROUP BY compares %s case-sensitively in PostgreSQL (case-insensitively in SQL Server): values that differ only in case form groups of their own",
				strings.Join(folded, ", ")))
		}
	}
	if p.word("HAVING") {
		s, next, err := exprAt(p.i)
		if err != nil {
			return nil, err
		}
		out += " HAVING " + s
		p.i = next
	}
	blk.sql = out
	return blk, nil
}
