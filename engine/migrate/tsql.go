package migrate

import (
	"fmt"
	"strings"
)

// A small tokenizer and parser for the T-SQL expressions SQL Server keeps
// in its catalog (defaults, CHECK constraints, computed columns, index
// filters) and for the SELECT of a simple view. SQL Server stores these
// in a normalised form (every literal and subexpression in parentheses,
// names in brackets), but a view's text is what its author typed, so the
// tokenizer takes T-SQL's full lexical rules for names, strings, numbers
// and comments. What the parser does not know it refuses with a reason:
// the caller reports the object with its original text.

type tokKind uint8

const (
	tEOF    tokKind = iota
	tWord           // an unquoted name or keyword
	tName           // a [bracketed] or "quoted" name, unescaped
	tNumber         // 12, 1.5, 1e3, .5
	tString         // 'text' (national set for N'text'), unescaped
	tBinary         // 0x1F2E
	tOp             // punctuation and operators
)

type token struct {
	kind     tokKind
	text     string // the value: unescaped for names and strings
	national bool
	pos      int
}

// upper is a word token's text in upper case, "" for other tokens.
func (t token) upper() string {
	if t.kind != tWord {
		return ""
	}
	return strings.ToUpper(t.text)
}

func (t token) is(op string) bool { return t.kind == tOp && t.text == op }

// tokenize splits T-SQL text into tokens; comments and white space go.
func tokenize(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			// T-SQL block comments nest.
			depth, j := 0, i
			for j < len(s) {
				if j+1 < len(s) && s[j] == '/' && s[j+1] == '*' {
					depth++
					j += 2
				} else if j+1 < len(s) && s[j] == '*' && s[j+1] == '/' {
					depth--
					j += 2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			if depth != 0 {
				return nil, fmt.Errorf("unterminated comment at %d", i)
			}
			i = j
		case c == '[':
			v, n, ok := quoted(s[i:], ']')
			if !ok {
				return nil, fmt.Errorf("unterminated [ at %d", i)
			}
			out = append(out, token{kind: tName, text: v, pos: i})
			i += n
		case c == '"':
			v, n, ok := quoted(s[i:], '"')
			if !ok {
				return nil, fmt.Errorf("unterminated \" at %d", i)
			}
			out = append(out, token{kind: tName, text: v, pos: i})
			i += n
		case c == '\'' || (c == 'N' || c == 'n') && i+1 < len(s) && s[i+1] == '\'':
			start, nat := i, c != '\''
			if nat {
				i++
			}
			v, n, ok := quoted(s[i:], '\'')
			if !ok {
				return nil, fmt.Errorf("unterminated string at %d", start)
			}
			out = append(out, token{kind: tString, text: v, national: nat, pos: start})
			i += n
		case c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			j := i + 2
			for j < len(s) && isHex(s[j]) {
				j++
			}
			out = append(out, token{kind: tBinary, text: s[i+2 : j], pos: i})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]):
			j := i
			for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && isDigit(s[k]) {
					for j = k; j < len(s) && isDigit(s[j]); j++ {
					}
				}
			}
			out = append(out, token{kind: tNumber, text: s[i:j], pos: i})
			i = j
		case isWordStart(c):
			j := i + 1
			for j < len(s) && isWordPart(s[j]) {
				j++
			}
			out = append(out, token{kind: tWord, text: s[i:j], pos: i})
			i = j
		default:
			op := string(c)
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case "<>", "<=", ">=", "!=", "!<", "!>":
					op = two
				}
			}
			if !strings.Contains("+-*/%=<>!&|^~(),.;", op[:1]) {
				return nil, fmt.Errorf("unexpected %q at %d", op, i)
			}
			out = append(out, token{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	return append(out, token{kind: tEOF, pos: len(s)}), nil
}

// quoted reads a quoted run starting at s[0] and closed by end, where a
// doubled end stands for itself; it returns the unescaped value and the
// length consumed.
func quoted(s string, end byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == end {
			if i+1 < len(s) && s[i+1] == end {
				b.WriteByte(end)
				i++
				continue
			}
			return b.String(), i + 1, true
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isWordStart(c byte) bool {
	return c == '_' || c == '@' || c == '#' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}
func isWordPart(c byte) bool { return isWordStart(c) || isDigit(c) || c == '$' }

// The expression tree.
type (
	node interface{}
	lit  struct {
		kind tokKind // tNumber, tString, tBinary; tWord for NULL
		text string
	}
	ref  struct{ parts []string } // a column, possibly qualified
	call struct {
		name string // upper case
		args []node
		star bool // COUNT(*)
	}
	unary struct {
		op string
		x  node
	}
	binop struct {
		op   string // upper case for words: AND, OR
		l, r node
	}
	caseExpr struct {
		operand      node
		whens, thens []node
		els          node
	}
	castExpr struct {
		x     node
		typ   string // the T-SQL type as written
		style node   // CONVERT's style, nil for none
	}
	inExpr struct {
		x    node
		list []node
		not  bool
	}
	betweenExpr struct {
		x, lo, hi node
		not       bool
	}
	isNull struct {
		x   node
		not bool
	}
	likeExpr struct {
		x, pat, esc node
		not         bool
	}
	nextValue struct{ parts []string }
)

// parser is a recursive-descent parser over tokens.
type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) word(w string) bool {
	if p.peek().upper() == w {
		p.i++
		return true
	}
	return false
}

func (p *parser) op(o string) bool {
	if p.peek().is(o) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(o string) error {
	if !p.op(o) {
		return p.errorf("expected %q", o)
	}
	return nil
}

func (p *parser) errorf(format string, args ...any) error {
	t := p.peek()
	at := "the end"
	if t.kind != tEOF {
		at = fmt.Sprintf("%q", t.text)
	}
	return fmt.Errorf("%s at %s", fmt.Sprintf(format, args...), at)
}

// parseExpr parses a whole expression: the text must hold nothing else.
func parseExpr(s string) (node, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEOF {
		return nil, p.errorf("unexpected text")
	}
	return n, nil
}

func (p *parser) expr() (node, error) { return p.or() }

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.word("OR") {
		var r node
		if r, err = p.and(); err == nil {
			l = binop{"OR", l, r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.not()
	for err == nil && p.word("AND") {
		var r node
		if r, err = p.not(); err == nil {
			l = binop{"AND", l, r}
		}
	}
	return l, err
}

func (p *parser) not() (node, error) {
	if p.word("NOT") {
		x, err := p.not()
		return unary{"NOT", x}, err
	}
	return p.predicate()
}

// predicate is a comparison, LIKE, IN, BETWEEN or IS NULL, or an
// additive expression.
func (p *parser) predicate() (node, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch t.text {
	case "=", "<>", "!=", "<", ">", "<=", ">=", "!<", "!>":
		if t.kind == tOp {
			p.next()
			r, err := p.additive()
			return binop{t.text, l, r}, err
		}
	}
	if p.word("IS") {
		not := p.word("NOT")
		if !p.word("NULL") {
			return nil, p.errorf("expected NULL")
		}
		return isNull{l, not}, nil
	}
	not := false
	if p.peek().upper() == "NOT" {
		switch p.toks[p.i+1].upper() {
		case "LIKE", "IN", "BETWEEN":
			p.next()
			not = true
		}
	}
	switch {
	case p.word("LIKE"):
		pat, err := p.additive()
		if err != nil {
			return nil, err
		}
		var esc node
		if p.word("ESCAPE") {
			if esc, err = p.additive(); err != nil {
				return nil, err
			}
		}
		return likeExpr{l, pat, esc, not}, nil
	case p.word("IN"):
		if err := p.expect("("); err != nil {
			return nil, err
		}
		if p.peek().upper() == "SELECT" {
			return nil, p.errorf("IN (SELECT ...) is not translated")
		}
		list, err := p.list()
		if err != nil {
			return nil, err
		}
		return inExpr{l, list, not}, p.expect(")")
	case p.word("BETWEEN"):
		lo, err := p.additive()
		if err != nil {
			return nil, err
		}
		if !p.word("AND") {
			return nil, p.errorf("expected AND")
		}
		hi, err := p.additive()
		return betweenExpr{l, lo, hi, not}, err
	}
	return l, nil
}

func (p *parser) list() ([]node, error) {
	var out []node
	for {
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, x)
		if !p.op(",") {
			return out, nil
		}
	}
}

func (p *parser) additive() (node, error) {
	l, err := p.multiplicative()
	for err == nil {
		t := p.peek()
		if t.kind != tOp || !strings.Contains("+-&|^", t.text) {
			break
		}
		p.next()
		var r node
		if r, err = p.multiplicative(); err == nil {
			l = binop{t.text, l, r}
		}
	}
	return l, err
}

func (p *parser) multiplicative() (node, error) {
	l, err := p.unary()
	for err == nil {
		t := p.peek()
		if t.kind != tOp || !strings.Contains("*/%", t.text) {
			break
		}
		p.next()
		var r node
		if r, err = p.unary(); err == nil {
			l = binop{t.text, l, r}
		}
	}
	return l, err
}

func (p *parser) unary() (node, error) {
	t := p.peek()
	if t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		p.next()
		x, err := p.unary()
		return unary{t.text, x}, err
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case tNumber, tString, tBinary:
		return lit{t.kind, t.text}, nil
	case tOp:
		if t.text == "(" {
			if p.peek().upper() == "SELECT" {
				return nil, p.errorf("a subquery is not translated")
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			return x, p.expect(")")
		}
		p.i--
		return nil, p.errorf("unexpected operator")
	case tEOF:
		return nil, p.errorf("expression ends early")
	}
	if t.kind == tWord {
		switch t.upper() {
		case "NULL":
			return lit{tWord, "NULL"}, nil
		case "CASE":
			return p.caseExpr()
		case "CAST", "TRY_CAST":
			if t.upper() == "TRY_CAST" || !p.peek().is("(") {
				break
			}
			p.next()
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.word("AS") {
				return nil, p.errorf("expected AS")
			}
			typ, err := p.typeName()
			if err != nil {
				return nil, err
			}
			return castExpr{x: x, typ: typ}, p.expect(")")
		case "CONVERT":
			if !p.peek().is("(") {
				break
			}
			p.next()
			typ, err := p.typeName()
			if err != nil {
				return nil, err
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			var style node
			if p.op(",") {
				if style, err = p.expr(); err != nil {
					return nil, err
				}
			}
			return castExpr{x: x, typ: typ, style: style}, p.expect(")")
		case "NEXT":
			if p.peek().upper() == "VALUE" && p.toks[p.i+1].upper() == "FOR" {
				p.i += 2
				parts, err := p.dotted()
				return nextValue{parts}, err
			}
		}
	}
	// A name: a column (possibly qualified) or a function call.
	p.i--
	parts, err := p.dotted()
	if err != nil {
		return nil, err
	}
	if p.op("(") {
		c := call{name: strings.ToUpper(strings.Join(parts, "."))}
		if p.op("*") {
			c.star = true
			return c, p.expect(")")
		}
		if p.op(")") {
			return c, nil
		}
		if c.args, err = p.list(); err != nil {
			return nil, err
		}
		return c, p.expect(")")
	}
	return ref{parts}, nil
}

// dotted reads a.b.c of words and quoted names.
func (p *parser) dotted() ([]string, error) {
	var parts []string
	for {
		t := p.next()
		if t.kind != tWord && t.kind != tName {
			p.i--
			return nil, p.errorf("expected a name")
		}
		parts = append(parts, t.text)
		if !p.peek().is(".") {
			return parts, nil
		}
		p.next()
	}
}

// typeName reads a type as CAST and CONVERT write it: int, decimal(10,2),
// nvarchar(max), [varchar](20).
func (p *parser) typeName() (string, error) {
	t := p.next()
	if t.kind != tWord && t.kind != tName {
		p.i--
		return "", p.errorf("expected a type")
	}
	s := t.text
	if p.op("(") {
		var args []string
		for {
			a := p.next()
			if a.kind != tNumber && a.upper() != "MAX" {
				p.i--
				return "", p.errorf("expected a type argument")
			}
			args = append(args, a.text)
			if !p.op(",") {
				break
			}
		}
		if err := p.expect(")"); err != nil {
			return "", err
		}
		s += "(" + strings.Join(args, ",") + ")"
	}
	return s, nil
}

func (p *parser) caseExpr() (node, error) {
	var c caseExpr
	var err error
	if p.peek().upper() != "WHEN" {
		if c.operand, err = p.expr(); err != nil {
			return nil, err
		}
	}
	for p.word("WHEN") {
		w, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.word("THEN") {
			return nil, p.errorf("expected THEN")
		}
		t, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.whens, c.thens = append(c.whens, w), append(c.thens, t)
	}
	if len(c.whens) == 0 {
		return nil, p.errorf("CASE without WHEN")
	}
	if p.word("ELSE") {
		if c.els, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if !p.word("END") {
		return nil, p.errorf("expected END")
	}
	return c, nil
}
