package migrate

import (
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// Views: CREATE VIEW name [(columns)] AS SELECT ... of one query block:
// a select list, FROM with joins, WHERE, GROUP BY and HAVING. TOP, ORDER
// BY, UNION, subqueries, CTEs, table hints and WITH SCHEMABINDING's
// options beyond the name are reported, not guessed. The PostgreSQL view
// names its columns as the source view does.

// viewScope resolves names against the FROM of a view.
type viewScope struct {
	b       *builder
	aliases map[string]*tableScope // alias or table name (lower) -> table
	order   []*tableScope
}

func (s *viewScope) column(parts []string) (colInfo, error) {
	name := strings.ToLower(parts[len(parts)-1])
	if len(parts) >= 2 {
		qual := strings.ToLower(parts[len(parts)-2])
		ts, ok := s.aliases[qual]
		if !ok {
			return colInfo{}, untranslatable("unknown table or alias %s", parts[len(parts)-2])
		}
		c, ok := ts.cols[name]
		if !ok {
			return colInfo{}, untranslatable("unknown column %s", strings.Join(parts, "."))
		}
		c.sql = postgres.QuoteIdent(postgres.FoldIdent(parts[len(parts)-2], s.b.o.Identifiers)) + "." + c.sql
		return c, nil
	}
	var found *colInfo
	for _, ts := range s.order {
		if c, ok := ts.cols[name]; ok {
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
	if !p.word("AS") || !p.word("SELECT") {
		return "", nil, p.errorf("expected AS SELECT")
	}
	if p.peek().upper() == "TOP" {
		return "", nil, p.errorf("TOP is not translated")
	}
	distinct := p.word("DISTINCT")
	p.word("ALL")
	// The select list is parsed after FROM (its names resolve against
	// it): remember where it starts, skip to FROM at depth 0.
	listStart := p.i
	depth := 0
	for {
		t := p.peek()
		if t.kind == tEOF {
			return "", nil, p.errorf("a view without FROM is not translated")
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
	sc := &viewScope{b: b, aliases: map[string]*tableScope{}}
	var refs []string
	tableRef := func() (string, error) {
		parts, err := p.dotted()
		if err != nil {
			return "", err
		}
		schema, name := v.Schema, parts[len(parts)-1]
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
		refs = append(refs, ts.tp.Target())
		alias := name
		p.word("AS")
		if t := p.peek(); (t.kind == tWord && !clauseWords[t.upper()]) || t.kind == tName {
			alias = p.next().text
		}
		if p.peek().upper() == "WITH" {
			return "", untranslatable("table hints are not translated")
		}
		sc.aliases[strings.ToLower(alias)] = ts
		sc.order = append(sc.order, ts)
		out := ts.tp.QualifiedName()
		if alias != name {
			out += " AS " + postgres.QuoteIdent(postgres.FoldIdent(alias, b.o.Identifiers))
		} else {
			out += " AS " + postgres.QuoteIdent(postgres.FoldIdent(name, b.o.Identifiers))
		}
		return out, nil
	}
	first, err := tableRef()
	if err != nil {
		return "", nil, err
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
			return "", nil, p.errorf("expected JOIN")
		} else if join == "JOIN" && p.toks[p.i-1].upper() == "INNER" && !p.word("JOIN") {
			return "", nil, p.errorf("expected JOIN")
		}
		ref, err := tableRef()
		if err != nil {
			return "", nil, err
		}
		if join == "," {
			from = append(from, ", "+ref)
			continue
		}
		from = append(from, " "+join+" "+ref)
		if join != "CROSS JOIN" {
			if !p.word("ON") {
				return "", nil, p.errorf("expected ON")
			}
			ons = append(ons, pendingOn{len(from) - 1, p.i})
			// Skip the ON expression now; translate it once every table is known.
			if _, err := p.expr(); err != nil {
				return "", nil, err
			}
		}
	}
	rest := p.i
	tr := &translator{sc: sc}
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
			return "", nil, err
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
		} else {
			n, err := q.expr()
			if err != nil {
				return "", nil, err
			}
			s, _, err := tr.expr(n)
			if err != nil {
				return "", nil, err
			}
			if q.word("AS") || q.peek().kind == tWord || q.peek().kind == tName || q.peek().kind == tString {
				q.next() // the alias: the view's column list names the columns
			}
			items = append(items, s)
		}
		if !q.op(",") {
			break
		}
	}
	if q.peek().kind != tEOF {
		return "", nil, q.errorf("unexpected text in the select list")
	}
	out := "SELECT "
	if distinct {
		out += "DISTINCT "
	}
	out += strings.Join(items, ", ") + " FROM " + strings.Join(from, "")
	p.i = rest
	if p.word("WHERE") {
		s, next, err := exprAt(p.i)
		if err != nil {
			return "", nil, err
		}
		out += " WHERE " + s
		p.i = next
	}
	if p.word("GROUP") {
		if !p.word("BY") {
			return "", nil, p.errorf("expected BY")
		}
		var keys []string
		for {
			s, next, err := exprAt(p.i)
			if err != nil {
				return "", nil, err
			}
			keys, p.i = append(keys, s), next
			if !p.op(",") {
				break
			}
		}
		out += " GROUP BY " + strings.Join(keys, ", ")
	}
	if p.word("HAVING") {
		s, next, err := exprAt(p.i)
		if err != nil {
			return "", nil, err
		}
		out += " HAVING " + s
		p.i = next
	}
	p.op(";")
	if p.peek().kind != tEOF {
		return "", nil, p.errorf("not translated")
	}
	for _, n := range tr.notes {
		b.note(v.FullName(), "view", v.Definition, n)
	}
	schema, name, _ := b.target(v.Schema, v.Name)
	cols := make([]string, 0, len(v.Columns))
	for _, c := range v.Columns {
		if !c.Hidden {
			cols = append(cols, postgres.QuoteIdent(postgres.FoldIdent(c.Name, b.o.Identifiers)))
		}
	}
	if len(items) == 1 && items[0] == "*" || len(cols) == 0 {
		return "CREATE VIEW " + postgres.QuoteIdent(schema) + "." + postgres.QuoteIdent(name) + " AS " + out, refs, nil
	}
	return "CREATE VIEW " + postgres.QuoteIdent(schema) + "." + postgres.QuoteIdent(name) + " (" + strings.Join(cols, ", ") + ") AS " + out, refs, nil
}
