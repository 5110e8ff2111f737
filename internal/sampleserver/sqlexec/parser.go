package sqlexec

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// maxDepth bounds expression nesting so hostile input cannot exhaust the
// stack; SQL Server has a similar limit (error 191, "Some part of your SQL
// statement is nested too deeply").
const maxDepth = 200

type parser struct {
	toks  []token
	pos   int
	depth int
}

// parseBatch parses a whole batch. A syntax error anywhere fails the whole
// batch, as SQL Server compiles a batch before running any of it.
func parseBatch(sql string) ([]stmt, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	var out []stmt
	for {
		for p.peek().isOp(";") {
			p.pos++
		}
		if p.peek().Kind == tkEOF {
			return out, nil
		}
		s, err := p.statement(len(out) == 0)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		t := p.peek()
		if t.Kind != tkEOF && !t.isOp(";") && !isStatementStart(t) {
			return nil, errSyntax(t)
		}
	}
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) peekAt(k int) token {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.Kind != tkEOF {
		p.pos++
	}
	return t
}

func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) acceptOp(op string) bool {
	if p.peek().isOp(op) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) error {
	if p.acceptOp(op) {
		return nil
	}
	return errSyntax(p.peek())
}

func (p *parser) expect(kw string) error {
	if p.accept(kw) {
		return nil
	}
	return errSyntax(p.peek())
}

var statementStarts = map[string]bool{
	"SELECT": true, "SET": true, "USE": true, "EXEC": true, "EXECUTE": true, "DECLARE": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "CREATE": true, "DROP": true, "ALTER": true,
	"TRUNCATE": true, "MERGE": true, "BEGIN": true, "COMMIT": true, "ROLLBACK": true, "IF": true,
	"WHILE": true, "PRINT": true, "WITH": true, "GRANT": true, "REVOKE": true, "DENY": true,
	"RAISERROR": true, "WAITFOR": true, "DBCC": true, "BULK": true, "BACKUP": true, "RESTORE": true,
	"KILL": true, "SAVE": true, "RETURN": true, "GOTO": true, "THROW": true, "OPEN": true,
	"CLOSE": true, "FETCH": true, "DEALLOCATE": true, "CHECKPOINT": true, "RECONFIGURE": true,
	"SHUTDOWN": true,
}

func isStatementStart(t token) bool {
	return t.Kind == tkIdent && statementStarts[upper(t.Text)]
}

func (p *parser) statement(first bool) (stmt, error) {
	t := p.peek()
	if t.Kind != tkIdent {
		if t.Kind == tkQIdent && first {
			// A bare name as the first statement is an implicit EXEC.
			return p.execBody(t.Line)
		}
		return nil, errSyntax(t)
	}
	switch upper(t.Text) {
	case "SELECT":
		return p.selectStmt()
	case "SET":
		return p.setStmt()
	case "USE":
		p.next()
		n := p.next()
		if n.Kind != tkIdent && n.Kind != tkQIdent {
			return nil, errSyntax(n)
		}
		return &useStmt{Line: t.Line, DB: n.Text}, nil
	case "EXEC", "EXECUTE":
		p.next()
		return p.execBody(t.Line)
	case "BEGIN":
		if n := p.peekAt(1); n.is("TRAN") || n.is("TRANSACTION") {
			p.pos += 2
			p.skipTxnName()
			return &txnStmt{Line: t.Line, Verb: "BEGIN"}, nil
		}
	case "COMMIT", "ROLLBACK":
		p.next()
		if p.accept("TRAN") || p.accept("TRANSACTION") || p.accept("WORK") {
			p.skipTxnName()
		}
		return &txnStmt{Line: t.Line, Verb: upper(t.Text)}, nil
	case "INSERT":
		return p.insertStmt()
	case "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "TRUNCATE", "MERGE", "BULK", "GRANT",
		"REVOKE", "DENY", "BACKUP", "RESTORE":
		p.skipStatement()
		return &unsupportedStmt{Line: t.Line, Verb: upper(t.Text)}, nil
	}
	if statementStarts[upper(t.Text)] {
		p.skipStatement()
		return &unsupportedStmt{Line: t.Line, Verb: upper(t.Text)}, nil
	}
	if first && !reserved[upper(t.Text)] {
		return p.execBody(t.Line)
	}
	return nil, errSyntax(t)
}

func (p *parser) skipTxnName() {
	if k := p.peek().Kind; (k == tkIdent && !isStatementStart(p.peek())) || k == tkQIdent || k == tkVar {
		p.next()
	}
}

// skipStatement consumes tokens up to the next statement start or ';'.
func (p *parser) skipStatement() {
	p.next()
	depth := 0
	for {
		t := p.peek()
		if t.Kind == tkEOF {
			return
		}
		if depth == 0 && (t.isOp(";") || (isStatementStart(t) && !t.is("SELECT") && !t.is("SET"))) {
			return
		}
		if t.isOp("(") {
			depth++
		} else if t.isOp(")") && depth > 0 {
			depth--
		}
		p.next()
	}
}

func (p *parser) execBody(line int32) (stmt, error) {
	// [@ret =] name args
	if p.peek().Kind == tkVar && p.peekAt(1).isOp("=") {
		p.pos += 2
	}
	name, err := p.multiPart()
	if err != nil {
		return nil, err
	}
	s := &execStmt{Line: line, Proc: name}
	if p.peek().Kind == tkEOF || p.peek().isOp(";") || isStatementStart(p.peek()) {
		return s, nil
	}
	for {
		var a execArg
		if p.peek().Kind == tkVar && p.peekAt(1).isOp("=") {
			a.Name = p.next().Text
			p.next()
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		a.Value = e
		if p.accept("OUTPUT") || p.accept("OUT") {
			a.Output = true
		}
		s.Args = append(s.Args, a)
		if !p.acceptOp(",") {
			return s, nil
		}
	}
}

func (p *parser) setStmt() (stmt, error) {
	t := p.next() // SET
	s := &setStmt{Line: t.Line}
	n := p.peek()
	if n.Kind == tkVar {
		return nil, errMustDeclare(n.Line, n.Text)
	}
	if n.Kind != tkIdent {
		return nil, errSyntax(n)
	}
	name := upper(n.Text)
	switch name {
	case "TEXTSIZE", "ROWCOUNT", "LOCK_TIMEOUT", "DATEFIRST", "QUERY_GOVERNOR_COST_LIMIT":
		p.next()
		neg := p.acceptOp("-")
		v := p.next()
		if v.Kind != tkNumber && v.Kind != tkVar {
			return nil, errSyntax(v)
		}
		if neg {
			v.Text = "-" + v.Text
		}
		s.Options, s.Value = []string{name}, v
		return s, nil
	case "DATEFORMAT", "LANGUAGE", "DEADLOCK_PRIORITY", "CONTEXT_INFO":
		p.next()
		neg := p.acceptOp("-")
		v := p.next()
		switch v.Kind {
		case tkIdent, tkQIdent, tkString, tkNString, tkNumber, tkVar, tkBinary:
		default:
			return nil, errSyntax(v)
		}
		if neg {
			v.Text = "-" + v.Text
		}
		s.Options, s.Value = []string{name}, v
		return s, nil
	case "TRANSACTION":
		p.next()
		if err := p.expect("ISOLATION"); err != nil {
			return nil, err
		}
		if err := p.expect("LEVEL"); err != nil {
			return nil, err
		}
		var words []string
		for p.peek().Kind == tkIdent && !isStatementStart(p.peek()) && len(words) < 2 {
			words = append(words, upper(p.next().Text))
		}
		switch strings.Join(words, " ") {
		case "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SNAPSHOT", "SERIALIZABLE":
		default:
			return nil, errSyntax(p.peek())
		}
		s.Options = []string{"TRANSACTION ISOLATION LEVEL"}
		s.Value = token{Kind: tkIdent, Text: strings.Join(words, " ")}
		return s, nil
	}
	for {
		o := p.next()
		if o.Kind != tkIdent {
			return nil, errSyntax(o)
		}
		s.Options = append(s.Options, upper(o.Text))
		if !p.acceptOp(",") {
			break
		}
	}
	switch v := p.next(); {
	case v.is("ON"):
		s.On = true
	case v.is("OFF"):
	default:
		return nil, errSyntax(v)
	}
	return s, nil
}

func (p *parser) selectStmt() (stmt, error) {
	t := p.next() // SELECT
	s := &selectStmt{Line: t.Line}
	if p.accept("DISTINCT") {
		s.Distinct = true
	} else {
		p.accept("ALL")
	}
	if p.accept("TOP") {
		if p.acceptOp("(") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			s.Top = e
		} else {
			n := p.next()
			switch n.Kind {
			case tkNumber:
				e, err := numberLit(n)
				if err != nil {
					return nil, err
				}
				s.Top = e
			case tkVar:
				s.Top = &paramExpr{Name: n.Text, Line: n.Line}
			default:
				return nil, errSyntax(n)
			}
		}
		if p.accept("PERCENT") {
			s.Percent = true
		}
		if p.accept("WITH") {
			if err := p.expect("TIES"); err != nil {
				return nil, err
			}
		}
	}
	for {
		it, err := p.selectItem()
		if err != nil {
			return nil, err
		}
		s.Items = append(s.Items, it)
		if !p.acceptOp(",") {
			break
		}
	}
	if p.peek().is("INTO") {
		// SELECT ... INTO creates a table: a write on a read-only database.
		p.skipStatement()
		return &unsupportedStmt{Line: t.Line, Verb: "INSERT"}, nil
	}
	if p.accept("FROM") {
		f, err := p.fromClause()
		if err != nil {
			return nil, err
		}
		s.From = f
	}
	var err error
	if s.Where, err = p.clauseExpr("WHERE", p.expr); err != nil {
		return nil, err
	}
	if p.peek().is("GROUP") {
		if err := p.byClause(); err != nil {
			return nil, err
		}
		if s.GroupBy, err = p.exprList(); err != nil {
			return nil, err
		}
	}
	if s.Having, err = p.clauseExpr("HAVING", p.expr); err != nil {
		return nil, err
	}
	if p.peek().is("ORDER") {
		if err := p.byClause(); err != nil {
			return nil, err
		}
		for {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			it := orderItem{Expr: e}
			if p.accept("DESC") {
				it.Desc = true
			} else {
				p.accept("ASC")
			}
			s.OrderBy = append(s.OrderBy, it)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.peek().is("OFFSET") {
		t := p.next()
		if len(s.OrderBy) == 0 {
			return nil, errSyntax(t)
		}
		if s.Top != nil {
			return nil, newError(10741, 15, 1, t.Line, "A TOP can not be used in the same query or sub-query as a OFFSET.")
		}
		if s.Offset, err = p.rowCount(); err != nil {
			return nil, err
		}
		if p.accept("FETCH") {
			if !p.accept("NEXT") && !p.accept("FIRST") {
				return nil, errSyntax(p.peek())
			}
			if s.Fetch, err = p.rowCount(); err != nil {
				return nil, err
			}
			if err := p.expect("ONLY"); err != nil {
				return nil, err
			}
		}
	}
	if p.accept("OPTION") {
		// Query hints: accepted and ignored.
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		depth := 1
		for depth > 0 {
			n := p.next()
			switch {
			case n.Kind == tkEOF:
				return nil, errSyntax(n)
			case n.isOp("("):
				depth++
			case n.isOp(")"):
				depth--
			}
		}
	}
	if t := p.peek(); t.is("UNION") || t.is("EXCEPT") || t.is("INTERSECT") || t.is("FOR") {
		p.skipStatement()
		return &unsupportedStmt{Line: t.Line, Verb: upper(t.Text)}, nil
	}
	return s, nil
}

func (p *parser) selectItem() (selectItem, error) {
	t := p.peek()
	if t.isOp("*") {
		p.next()
		return selectItem{Star: true}, nil
	}
	// alias = expr
	if (t.Kind == tkQIdent || t.Kind == tkString || (t.Kind == tkIdent && !reserved[upper(t.Text)])) && p.peekAt(1).isOp("=") {
		p.pos += 2
		e, err := p.expr()
		if err != nil {
			return selectItem{}, err
		}
		return selectItem{Expr: e, Alias: t.Text, HasAlias: true}, nil
	}
	if t.Kind == tkVar && p.peekAt(1).isOp("=") {
		return selectItem{}, errMustDeclare(t.Line, t.Text)
	}
	// qual.* : a multi-part name followed by .*
	if t.Kind == tkIdent || t.Kind == tkQIdent {
		save := p.pos
		var parts []string
		for {
			n := p.peek()
			if n.Kind != tkQIdent && !(n.Kind == tkIdent && !reserved[upper(n.Text)]) {
				break
			}
			parts = append(parts, n.Text)
			p.next()
			if !p.acceptOp(".") {
				break
			}
			if p.acceptOp("*") {
				return selectItem{Star: true, StarQual: parts}, nil
			}
		}
		p.pos = save
	}
	e, err := p.expr()
	if err != nil {
		return selectItem{}, err
	}
	it := selectItem{Expr: e}
	if p.accept("AS") {
		a := p.next()
		if a.Kind != tkIdent && a.Kind != tkQIdent && a.Kind != tkString && a.Kind != tkNString {
			return selectItem{}, errSyntax(a)
		}
		it.Alias, it.HasAlias = a.Text, true
	} else if a := p.peek(); a.Kind == tkQIdent || a.Kind == tkString || (a.Kind == tkIdent && !reserved[upper(a.Text)] && !isStatementStart(a)) {
		p.next()
		it.Alias, it.HasAlias = a.Text, true
	}
	return it, nil
}

func (p *parser) fromClause() ([]fromItem, error) {
	var out []fromItem
	f, err := p.tableRef()
	if err != nil {
		return nil, err
	}
	out = append(out, f)
	for {
		var kind joinKind
		switch t := p.peek(); {
		case t.isOp(","):
			p.next()
			kind = joinCross
		case t.is("JOIN"):
			p.next()
			kind = joinInner
		case t.is("INNER"):
			p.next()
			if err := p.expect("JOIN"); err != nil {
				return nil, err
			}
			kind = joinInner
		case t.is("LEFT"):
			p.next()
			p.accept("OUTER")
			if err := p.expect("JOIN"); err != nil {
				return nil, err
			}
			kind = joinLeft
		case t.is("CROSS"):
			p.next()
			if err := p.expect("JOIN"); err != nil {
				return nil, err
			}
			kind = joinCross
		case t.is("RIGHT") || t.is("FULL"):
			return nil, errUnsupported(t.Line, "RIGHT and FULL joins are")
		default:
			return out, nil
		}
		f, err := p.tableRef()
		if err != nil {
			return nil, err
		}
		f.Join = kind
		if kind == joinInner || kind == joinLeft {
			if err := p.expect("ON"); err != nil {
				return nil, err
			}
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			f.On = e
		}
		out = append(out, f)
	}
}

func (p *parser) tableRef() (fromItem, error) {
	t := p.peek()
	if t.isOp("(") {
		return fromItem{}, errUnsupported(t.Line, "derived tables are")
	}
	name, err := p.multiPart()
	if err != nil {
		return fromItem{}, err
	}
	f := fromItem{Name: name, Line: t.Line}
	if p.accept("AS") {
		a := p.next()
		if a.Kind != tkIdent && a.Kind != tkQIdent {
			return fromItem{}, errSyntax(a)
		}
		f.Alias = a.Text
	} else if a := p.peek(); a.Kind == tkQIdent || (a.Kind == tkIdent && !reserved[upper(a.Text)] && !isStatementStart(a) && !isJoinWord(a)) {
		p.next()
		f.Alias = a.Text
	}
	if s := p.peek(); s.is("TABLESAMPLE") {
		p.next()
		ts, err := p.tableSample(s.Line)
		if err != nil {
			return fromItem{}, err
		}
		f.Sample = ts
	}
	if p.peek().is("WITH") && p.peekAt(1).isOp("(") {
		// Table hints (NOLOCK, ...): accepted and ignored.
		p.pos += 2
		for {
			n := p.next()
			if n.Kind == tkEOF {
				return fromItem{}, errSyntax(n)
			}
			if n.isOp(")") {
				break
			}
		}
	}
	return f, nil
}

func isJoinWord(t token) bool {
	switch upper(t.Text) {
	case "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "OUTER", "OPTION", "OFFSET":
		return true
	}
	return false
}

// multiPart reads a.b.c (up to four parts; empty parts allowed as in db..t).
func (p *parser) multiPart() ([]string, error) {
	var parts []string
	for {
		t := p.peek()
		if t.isOp(".") && len(parts) > 0 {
			parts = append(parts, "")
			p.next()
			continue
		}
		if t.Kind != tkQIdent && t.Kind != tkIdent {
			return nil, errSyntax(t)
		}
		if t.Kind == tkIdent && reserved[upper(t.Text)] {
			return nil, errSyntax(t)
		}
		p.next()
		parts = append(parts, t.Text)
		if len(parts) > 4 {
			return nil, errSyntax(t)
		}
		if !p.peek().isOp(".") {
			return parts, nil
		}
		p.next()
		if p.peek().isOp("*") || p.peek().Kind == tkEOF {
			return nil, errSyntax(p.peek())
		}
		if p.peek().isOp(".") {
			parts = append(parts, "")
			p.next()
		}
	}
}

// clauseExpr parses "kw operand" when the next token is kw; without it the
// clause is absent and the expression nil.
func (p *parser) clauseExpr(kw string, operand func() (expr, error)) (expr, error) {
	if !p.accept(kw) {
		return nil, nil
	}
	return operand()
}

// exprList parses expr [, expr]...
func (p *parser) exprList() ([]expr, error) {
	var list []expr
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.acceptOp(",") {
			return list, nil
		}
	}
}

// byClause takes GROUP BY or ORDER BY once the first word is seen.
func (p *parser) byClause() error {
	p.next()
	return p.expect("BY")
}

// rowCount parses the "n ROWS" of OFFSET and FETCH.
func (p *parser) rowCount() (expr, error) {
	e, err := p.additive()
	if err != nil {
		return nil, err
	}
	if !p.accept("ROWS") && !p.accept("ROW") {
		return nil, errSyntax(p.peek())
	}
	return e, nil
}

// Expressions, by precedence (lowest first).

func (p *parser) expr() (expr, error) {
	if err := p.nest(p.peek().Line); err != nil {
		return nil, err
	}
	defer p.unnest()
	return p.orExpr()
}

// nest enters one level of expression nesting (unnest leaves it), failing
// with error 191 beyond maxDepth.
func (p *parser) nest(line int32) error {
	p.depth++
	if p.depth > maxDepth {
		p.depth--
		return newError(191, 15, 1, line, "Some part of your SQL statement is nested too deeply. Rewrite the query or break it up into smaller queries.")
	}
	return nil
}

func (p *parser) unnest() { p.depth-- }

// leftAssoc parses operand (op operand)... left-associatively; op returns the
// binary operator a token stands for, or "" when it is none.
func (p *parser) leftAssoc(operand func() (expr, error), op func(token) string) (expr, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		o := op(t)
		if o == "" {
			return l, nil
		}
		p.next()
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = &binExpr{Op: o, L: l, R: r, Line: t.Line}
	}
}

// keywordOp is the op of leftAssoc for a keyword operator (AND, OR).
func keywordOp(kw string) func(token) string {
	return func(t token) string {
		if t.is(kw) {
			return kw
		}
		return ""
	}
}

// symbolOp is the op of leftAssoc for operator symbols.
func symbolOp(ops ...string) func(token) string {
	return func(t token) string {
		if t.Kind == tkOp {
			for _, o := range ops {
				if t.Text == o {
					return o
				}
			}
		}
		return ""
	}
}

var (
	orOp  = keywordOp("OR")
	andOp = keywordOp("AND")
	addOp = symbolOp("+", "-", "&", "|", "^")
	mulOp = symbolOp("*", "/", "%")
)

func (p *parser) orExpr() (expr, error) { return p.leftAssoc(p.andExpr, orOp) }

func (p *parser) andExpr() (expr, error) { return p.leftAssoc(p.notExpr, andOp) }

func (p *parser) notExpr() (expr, error) {
	if p.accept("NOT") {
		if err := p.nest(p.peek().Line); err != nil {
			return nil, err
		}
		defer p.unnest()
		e, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{Op: "NOT", E: e}, nil
	}
	return p.predicate()
}

func (p *parser) predicate() (expr, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.Kind == tkOp {
		op := t.Text
		switch op {
		case "=", "<>", "!=", "<", "<=", ">", ">=", "!<", "!>":
			p.next()
			r, err := p.additive()
			if err != nil {
				return nil, err
			}
			switch op {
			case "!=":
				op = "<>"
			case "!<":
				op = ">="
			case "!>":
				op = "<="
			}
			return &binExpr{Op: op, L: l, R: r, Line: t.Line}, nil
		}
		return l, nil
	}
	not := false
	if t.is("NOT") {
		n := p.peekAt(1)
		if n.is("IN") || n.is("LIKE") || n.is("BETWEEN") {
			p.next()
			not = true
			t = p.peek()
		}
	}
	switch {
	case t.is("IS"):
		p.next()
		n := p.accept("NOT")
		if err := p.expect("NULL"); err != nil {
			return nil, err
		}
		return &isNullExpr{E: l, Not: n}, nil
	case t.is("IN"):
		p.next()
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		if p.peek().is("SELECT") {
			return nil, errUnsupported(t.Line, "subqueries are")
		}
		list, err := p.exprList()
		if err != nil {
			return nil, err
		}
		in := &inExpr{E: l, Not: not, List: list}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return in, nil
	case t.is("BETWEEN"):
		p.next()
		lo, err := p.additive()
		if err != nil {
			return nil, err
		}
		if err := p.expect("AND"); err != nil {
			return nil, err
		}
		hi, err := p.additive()
		if err != nil {
			return nil, err
		}
		return &betweenExpr{E: l, Lo: lo, Hi: hi, Not: not}, nil
	case t.is("LIKE"):
		p.next()
		pat, err := p.additive()
		if err != nil {
			return nil, err
		}
		esc, err := p.clauseExpr("ESCAPE", p.additive)
		if err != nil {
			return nil, err
		}
		return &likeExpr{E: l, Pat: pat, Not: not, Escape: esc}, nil
	}
	return l, nil
}

func (p *parser) additive() (expr, error) { return p.leftAssoc(p.multiplicative, addOp) }

func (p *parser) multiplicative() (expr, error) { return p.leftAssoc(p.unary, mulOp) }

func (p *parser) unary() (expr, error) {
	t := p.peek()
	if t.isOp("-") || t.isOp("+") || t.isOp("~") {
		p.next()
		if err := p.nest(t.Line); err != nil {
			return nil, err
		}
		defer p.unnest()
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		// Fold a negative number literal so TOP/ranges see a constant.
		if l, ok := e.(*litExpr); ok && t.Text == "-" {
			switch v := l.V.(type) {
			case int64:
				return &litExpr{Kind: litInt, Text: "-" + l.Text, V: -v}, nil
			case float64:
				return &litExpr{Kind: litFloat, Text: "-" + l.Text, V: -v}, nil
			case decode.Decimal:
				v.Neg = !v.Neg
				return &litExpr{Kind: litDecimal, Text: "-" + l.Text, V: v}, nil
			}
		}
		if t.Text == "+" {
			return e, nil
		}
		return &unaryExpr{Op: t.Text, E: e}, nil
	}
	return p.primary()
}

func numberLit(t token) (*litExpr, error) {
	s := t.Text
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errSyntax(t)
		}
		return &litExpr{Kind: litFloat, Text: s, V: f}, nil
	}
	if !strings.Contains(s, ".") {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return &litExpr{Kind: litInt, Text: s, V: v}, nil
		}
	}
	d, err := parseDecimalLiteral(s)
	if err != nil {
		return nil, newError(1007, 15, 1, t.Line, "The number '%s' is out of the range for numeric representation (maximum precision 38).", truncate(s, 100))
	}
	return &litExpr{Kind: litDecimal, Text: s, V: d}, nil
}

func (p *parser) primary() (expr, error) {
	t := p.peek()
	switch t.Kind {
	case tkNumber:
		p.next()
		return numberLit(t)
	case tkString:
		p.next()
		return &litExpr{Kind: litString, Text: t.Text, V: t.Text}, nil
	case tkNString:
		p.next()
		return &litExpr{Kind: litNString, Text: t.Text, V: t.Text}, nil
	case tkBinary:
		p.next()
		h := t.Text
		if len(h)%2 == 1 {
			h = "0" + h
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, errSyntax(t)
		}
		return &litExpr{Kind: litBinary, Text: t.Text, V: b}, nil
	case tkVar:
		p.next()
		return &paramExpr{Name: t.Text, Line: t.Line}, nil
	case tkSysVar:
		p.next()
		return &sysVarExpr{Name: upper(t.Text), Line: t.Line}, nil
	case tkOp:
		if t.isOp("(") {
			p.next()
			if p.peek().is("SELECT") {
				return nil, errUnsupported(t.Line, "subqueries are")
			}
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return e, nil
		}
		return nil, errSyntax(t)
	case tkIdent:
		switch upper(t.Text) {
		case "NULL":
			p.next()
			return &litExpr{Kind: litNull}, nil
		case "CASE":
			return p.caseExpr()
		case "CAST", "TRY_CAST":
			if p.peekAt(1).isOp("(") {
				return p.castExpr()
			}
		case "CONVERT", "TRY_CONVERT":
			if p.peekAt(1).isOp("(") {
				return p.convertExpr()
			}
		case "CURRENT_TIMESTAMP", "CURRENT_USER", "SESSION_USER", "SYSTEM_USER", "USER":
			if !p.peekAt(1).isOp("(") {
				p.next()
				return &funcExpr{Name: upper(t.Text), Line: t.Line}, nil
			}
		case "EXISTS":
			return nil, errUnsupported(t.Line, "subqueries are")
		}
		if reserved[upper(t.Text)] && !p.peekAt(1).isOp("(") {
			return nil, errSyntax(t)
		}
	case tkQIdent:
	default:
		return nil, errSyntax(t)
	}
	// Name: column reference, function call or method call.
	var parts []string
	for {
		n := p.next()
		parts = append(parts, n.Text)
		if len(parts) > 4 {
			return nil, errSyntax(n)
		}
		if !p.peek().isOp(".") {
			break
		}
		p.next()
		n2 := p.peek()
		if n2.Kind != tkIdent && n2.Kind != tkQIdent {
			return nil, errSyntax(n2)
		}
	}
	if !p.peek().isOp("(") {
		return &colExpr{Parts: parts, Line: t.Line}, nil
	}
	p.next() // (
	f := &funcExpr{Line: t.Line}
	if len(parts) == 1 {
		f.Name = upper(parts[0])
	} else {
		f.Recv = &colExpr{Parts: parts[:len(parts)-1], Line: t.Line}
		f.Method = parts[len(parts)-1]
		f.Name = upper(f.Method)
	}
	if p.acceptOp(")") {
		return f, nil
	}
	if p.peek().isOp("*") {
		p.next()
		f.Star = true
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return f, nil
	}
	if p.accept("DISTINCT") {
		f.Distinct = true
	} else {
		p.accept("ALL")
	}
	args, err := p.exprList()
	if err != nil {
		return nil, err
	}
	f.Args = args
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if p.peek().is("OVER") {
		return nil, errUnsupported(t.Line, "window functions are")
	}
	return f, nil
}

func (p *parser) caseExpr() (expr, error) {
	p.next() // CASE
	c := &caseExpr{}
	if !p.peek().is("WHEN") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Operand = e
	}
	for p.accept("WHEN") {
		cond, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expect("THEN"); err != nil {
			return nil, err
		}
		then, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, whenClause{Cond: cond, Then: then})
	}
	if len(c.Whens) == 0 {
		return nil, errSyntax(p.peek())
	}
	var err error
	if c.Else, err = p.clauseExpr("ELSE", p.expr); err != nil {
		return nil, err
	}
	if err := p.expect("END"); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *parser) typeSpec() (typeSpec, error) {
	t := p.next()
	if t.Kind != tkIdent && t.Kind != tkQIdent {
		return typeSpec{}, errSyntax(t)
	}
	ts := typeSpec{Name: strings.ToLower(t.Text)}
	// The ISO synonyms are several words ("double precision", "national
	// character varying"); decode.LookupDecl resolves the joined name.
	for t.Kind == tkIdent {
		n := p.peek()
		if !n.is("precision") && !n.is("varying") && !n.is("char") && !n.is("character") && !n.is("text") {
			break
		}
		p.next()
		ts.Name += " " + strings.ToLower(n.Text)
	}
	if p.acceptOp("(") {
		for {
			n := p.next()
			switch {
			case n.is("max"):
				ts.Max = true
			case n.Kind == tkNumber:
				v, err := strconv.ParseInt(n.Text, 10, 64)
				if err != nil {
					return typeSpec{}, errSyntax(n)
				}
				ts.Args = append(ts.Args, v)
			default:
				return typeSpec{}, errSyntax(n)
			}
			if !p.acceptOp(",") {
				break
			}
		}
		if err := p.expectOp(")"); err != nil {
			return typeSpec{}, err
		}
	}
	return ts, nil
}

func (p *parser) castExpr() (expr, error) {
	t := p.next() // CAST
	p.next()      // (
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expect("AS"); err != nil {
		return nil, err
	}
	ts, err := p.typeSpec()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return &castExpr{E: e, T: ts, Line: t.Line}, nil
}

func (p *parser) convertExpr() (expr, error) {
	t := p.next() // CONVERT
	p.next()      // (
	ts, err := p.typeSpec()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(","); err != nil {
		return nil, err
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	c := &castExpr{E: e, T: ts, Convert: true, Line: t.Line}
	if p.acceptOp(",") {
		st, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Style = st
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return c, nil
}
