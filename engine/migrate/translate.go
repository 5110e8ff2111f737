package migrate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Translating a parsed T-SQL expression to PostgreSQL. The translation
// knows the type class of every subexpression it can (numbers, text,
// SQL Server's bit as PostgreSQL's boolean, times), because some T-SQL
// operators mean different things by operand type (+ concatenates text)
// and PostgreSQL is strict where SQL Server converts (a boolean column is
// not compared with 1). What it cannot translate with the same meaning
// is an error that says why; nothing is guessed.

// class is what the translation knows of a subexpression's type.
type class uint8

const (
	cUnknown class = iota
	cNum
	cText
	cBool // a bit column or value: boolean in PostgreSQL
	cPred // a condition (the result of a comparison, AND, LIKE, ...)
	cTime
	cUUID
	cBytes
)

// colInfo is what the translation needs of a column.
type colInfo struct {
	sql   string // the column as PostgreSQL SQL: a quoted, possibly qualified name
	class class
	// ci is set for text under a case-insensitive source collation;
	// nondet when the target column has the nondeterministic
	// case-insensitive collation (LIKE and regular expressions refuse
	// those in PostgreSQL 15, so a pattern match names another); citext
	// when it is typed citext (which compares case-insensitively).
	ci, nondet, citext bool
}

// scope resolves the names an expression uses.
type scope interface {
	column(parts []string) (colInfo, error)
	sequence(parts []string) (string, error)
	// pgType translates a T-SQL type name as CAST writes it.
	pgType(tsql string) (string, class, error)
}

// translator turns one expression into PostgreSQL SQL, collecting notes
// on what is kept only approximately.
type translator struct {
	sc    scope
	notes []string
}

func (t *translator) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	for _, have := range t.notes {
		if have == n {
			return
		}
	}
	t.notes = append(t.notes, n)
}

// untranslatable is an error for something that has no translation.
func untranslatable(format string, args ...any) error { return fmt.Errorf(format, args...) }

// atomic reports whether n needs no parentheses as an operand.
func atomic(n node) bool {
	switch x := n.(type) {
	case lit, ref, call, castExpr, nextValue, caseExpr:
		return true
	case unary:
		_, isLit := x.x.(lit)
		return x.op == "-" && isLit
	}
	return false
}

// operand translates n for use inside a larger expression.
func (t *translator) operand(n node) (string, class, error) {
	s, c, err := t.expr(n)
	if err == nil && !atomic(n) {
		s = "(" + s + ")"
	}
	return s, c, err
}

// boolLiteral is a numeric literal as a boolean (SQL Server converts any
// non-zero number to bit 1), ok false when n is not a number.
func boolLiteral(n node) (string, bool) {
	l, ok := n.(lit)
	if !ok || l.kind != tNumber {
		return "", false
	}
	if strings.Trim(l.text, "0.") == "" {
		return "false", true
	}
	return "true", true
}

// asNumber turns a boolean operand into 0/1 for arithmetic.
func asNumber(s string, c class) string {
	if c == cBool {
		return "(" + s + ")::integer"
	}
	return s
}

func (t *translator) expr(n node) (string, class, error) {
	switch x := n.(type) {
	case lit:
		switch x.kind {
		case tNumber:
			return x.text, cNum, nil
		case tString:
			return quoteLiteral(x.text), cText, nil
		case tBinary:
			return `'\x` + strings.ToLower(x.text) + `'::bytea`, cBytes, nil
		}
		return "NULL", cUnknown, nil
	case ref:
		if len(x.parts) == 1 {
			switch strings.ToUpper(x.parts[0]) {
			case "CURRENT_TIMESTAMP":
				return "now()", cTime, nil
			case "CURRENT_USER", "SESSION_USER", "SYSTEM_USER", "USER":
				t.note("%s is the PostgreSQL role, not the SQL Server login", x.parts[0])
				return "current_user", cText, nil
			}
		}
		c, err := t.sc.column(x.parts)
		if err != nil {
			return "", 0, err
		}
		return c.sql, c.class, nil
	case nextValue:
		seq, err := t.sc.sequence(x.parts)
		if err != nil {
			return "", 0, err
		}
		return "nextval(" + quoteLiteral(seq) + "::regclass)", cNum, nil
	case unary:
		if x.op == "NOT" {
			s, _, err := t.operand(x.x)
			return "NOT " + s, cPred, err
		}
		s, c, err := t.operand(x.x)
		if err != nil {
			return "", 0, err
		}
		if c == cBool {
			return "", 0, untranslatable("arithmetic on a bit value")
		}
		return x.op + s, cNum, nil
	case binop:
		return t.binary(x)
	case isNull:
		s, _, err := t.operand(x.x)
		if x.not {
			return s + " IS NOT NULL", cPred, err
		}
		return s + " IS NULL", cPred, err
	case inExpr:
		s, c, err := t.operand(x.x)
		if err != nil {
			return "", 0, err
		}
		items := make([]string, len(x.list))
		for i, it := range x.list {
			if b, ok := boolLiteral(it); ok && c == cBool {
				items[i] = b
				continue
			}
			if items[i], _, err = t.expr(it); err != nil {
				return "", 0, err
			}
		}
		op := " IN ("
		if x.not {
			op = " NOT IN ("
		}
		t.ciNote(c, x.x)
		return s + op + strings.Join(items, ", ") + ")", cPred, nil
	case betweenExpr:
		s, _, err := t.operand(x.x)
		if err != nil {
			return "", 0, err
		}
		lo, _, err := t.operand(x.lo)
		if err != nil {
			return "", 0, err
		}
		hi, _, err := t.operand(x.hi)
		if err != nil {
			return "", 0, err
		}
		op := " BETWEEN "
		if x.not {
			op = " NOT BETWEEN "
		}
		return s + op + lo + " AND " + hi, cPred, nil
	case likeExpr:
		return t.like(x)
	case caseExpr:
		return t.caseExpr(x)
	case castExpr:
		if x.style != nil {
			return "", 0, untranslatable("CONVERT with a style has no PostgreSQL equivalent")
		}
		s, _, err := t.expr(x.x)
		if err != nil {
			return "", 0, err
		}
		typ, c, err := t.sc.pgType(x.typ)
		if err != nil {
			return "", 0, err
		}
		return "CAST(" + s + " AS " + typ + ")", c, nil
	case call:
		return t.call(x)
	}
	return "", 0, untranslatable("unsupported expression")
}

func (t *translator) ciNote(c class, n node) {
	if c != cText {
		return
	}
	if r, ok := n.(ref); ok {
		if ci, err := t.sc.column(r.parts); err == nil && ci.ci && !ci.nondet && !ci.citext {
			t.note("%s is compared case-sensitively in PostgreSQL (case-insensitively in SQL Server)", strings.Join(r.parts, "."))
		}
	}
}

func (t *translator) binary(x binop) (string, class, error) {
	switch x.op {
	case "AND", "OR":
		l, _, err := t.operand(x.l)
		if err != nil {
			return "", 0, err
		}
		r, _, err := t.operand(x.r)
		return l + " " + x.op + " " + r, cPred, err
	}
	l, lc, err := t.operand(x.l)
	if err != nil {
		return "", 0, err
	}
	r, rc, err := t.operand(x.r)
	if err != nil {
		return "", 0, err
	}
	switch x.op {
	case "=", "<>", "!=", "<", ">", "<=", ">=", "!<", "!>":
		// A bit compared with a number: the number as a boolean.
		if lc == cBool && rc != cBool {
			if b, ok := boolLiteral(x.r); ok {
				r, rc = b, cBool
			} else {
				l = asNumber(l, lc)
			}
		} else if rc == cBool && lc != cBool {
			if b, ok := boolLiteral(x.l); ok {
				l, lc = b, cBool
			} else {
				r = asNumber(r, rc)
			}
		}
		t.ciNote(lc, x.l)
		t.ciNote(rc, x.r)
		op := map[string]string{"!=": "<>", "!<": ">=", "!>": "<="}[x.op]
		if op == "" {
			op = x.op
		}
		return l + " " + op + " " + r, cPred, nil
	case "+":
		if lc == cText || rc == cText {
			return l + " || " + r, cText, nil
		}
		if lc == cTime || rc == cTime {
			return "", 0, untranslatable("datetime + number (days) has no direct PostgreSQL equivalent")
		}
	case "^":
		return asNumber(l, lc) + " # " + asNumber(r, rc), cNum, nil
	}
	if lc == cText || rc == cText {
		return "", 0, untranslatable("operator %s on text", x.op)
	}
	return asNumber(l, lc) + " " + x.op + " " + asNumber(r, rc), cNum, nil
}

func (t *translator) caseExpr(x caseExpr) (string, class, error) {
	var b strings.Builder
	b.WriteString("CASE")
	var opc class
	if x.operand != nil {
		s, c, err := t.operand(x.operand)
		if err != nil {
			return "", 0, err
		}
		opc = c
		b.WriteString(" " + s)
	}
	res := cUnknown
	add := func(kw string, n node, cond bool) error {
		var s string
		var c class
		var err error
		if b2, ok := boolLiteral(n); ok && cond && opc == cBool {
			s = b2
		} else if s, c, err = t.expr(n); err != nil {
			return err
		}
		if !cond && c != cUnknown {
			res = c
		}
		b.WriteString(" " + kw + " " + s)
		return nil
	}
	for i := range x.whens {
		if err := add("WHEN", x.whens[i], true); err != nil {
			return "", 0, err
		}
		if err := add("THEN", x.thens[i], false); err != nil {
			return "", 0, err
		}
	}
	if x.els != nil {
		if err := add("ELSE", x.els, false); err != nil {
			return "", 0, err
		}
	}
	b.WriteString(" END")
	return b.String(), res, nil
}

// like translates LIKE. SQL Server's patterns have character classes
// ([A-Z], [^0-9]) that PostgreSQL's LIKE lacks, no escape character unless
// one is named (PostgreSQL's LIKE escapes with \ by default), and match
// case-insensitively under a case-insensitive collation. A pattern with
// a class becomes an anchored regular expression (~ or ~* under a
// case-insensitive collation), one without becomes LIKE or ILIKE.
func (t *translator) like(x likeExpr) (string, class, error) {
	s, c, err := t.operand(x.x)
	if err != nil {
		return "", 0, err
	}
	pl, ok := x.pat.(lit)
	if !ok || pl.kind != tString {
		return "", 0, untranslatable("LIKE with a pattern that is not a literal")
	}
	if x.esc != nil {
		return "", 0, untranslatable("LIKE ... ESCAPE")
	}
	ci, nondet := false, false
	if r, ok := x.x.(ref); ok && c == cText {
		if info, err := t.sc.column(r.parts); err == nil {
			ci, nondet = info.ci, info.nondet
		}
	}
	if nondet {
		s += ` COLLATE "default"`
	}
	neg := ""
	if x.not {
		neg = "NOT "
	}
	if !strings.Contains(pl.text, "[") {
		op := "LIKE"
		if ci {
			op = "ILIKE"
		}
		esc := ""
		if strings.Contains(pl.text, `\`) {
			esc = " ESCAPE ''"
		}
		if neg != "" {
			return s + " NOT " + op + " " + quoteLiteral(pl.text) + esc, cPred, nil
		}
		return s + " " + op + " " + quoteLiteral(pl.text) + esc, cPred, nil
	}
	re, err := likeRegexp(pl.text)
	if err != nil {
		return "", 0, err
	}
	op := "~"
	if ci {
		op = "~*"
	}
	if neg != "" {
		op = "!" + op
	}
	return s + " " + op + " " + quoteLiteral(re), cPred, nil
}

// likeRegexp turns a T-SQL LIKE pattern into an anchored POSIX regular
// expression.
func likeRegexp(p string) (string, error) {
	var b strings.Builder
	b.WriteByte('^')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteByte('.')
		case '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end < 0 {
				return "", untranslatable("LIKE pattern with an unclosed [")
			}
			class := p[i+1 : i+1+end]
			if class == "" {
				return "", untranslatable("LIKE pattern with an empty []")
			}
			b.WriteByte('[')
			for k := 0; k < len(class); k++ {
				if class[k] == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(class[k])
			}
			b.WriteByte(']')
			i += end + 1
		default:
			if strings.IndexByte(`\.^$|?*+()[]{}`, c) >= 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
	}
	b.WriteByte('$')
	return b.String(), nil
}

// functions maps T-SQL functions with the same arguments and meaning to
// their PostgreSQL names.
var functions = map[string]string{
	"UPPER": "upper", "LOWER": "lower", "LTRIM": "ltrim", "RTRIM": "rtrim", "ABS": "abs", "FLOOR": "floor",
	"CEILING": "ceil", "SIGN": "sign", "SQRT": "sqrt", "POWER": "power", "EXP": "exp", "LOG10": "log",
	"REPLACE": "replace", "REVERSE": "reverse", "LEFT": "left", "RIGHT": "right", "SUBSTRING": "substring",
	"COALESCE": "coalesce", "NULLIF": "nullif", "ISNULL": "coalesce", "CONCAT": "concat", "TRIM": "btrim",
	"DATALENGTH": "octet_length", "REPLICATE": "repeat", "SPACE": "repeat",
	"COUNT": "count", "SUM": "sum", "MIN": "min", "MAX": "max", "AVG": "avg",
}

// dateParts maps YEAR(), MONTH(), DAY() to EXTRACT fields.
var dateParts = map[string]string{"YEAR": "YEAR", "MONTH": "MONTH", "DAY": "DAY"}

// intervals are DATEADD's units PostgreSQL intervals have.
var intervals = map[string]string{"YEAR": "year", "YY": "year", "YYYY": "year", "MONTH": "month", "MM": "month",
	"M": "month", "DAY": "day", "DD": "day", "D": "day", "HOUR": "hour", "HH": "hour", "MINUTE": "minute",
	"MI": "minute", "N": "minute", "SECOND": "second", "SS": "second", "S": "second", "WEEK": "week", "WK": "week"}

func (t *translator) call(x call) (string, class, error) {
	name := x.name
	if i := strings.LastIndexByte(name, '.'); i >= 0 && strings.HasPrefix(name, "DBO.") {
		return "", 0, untranslatable("user-defined function %s", strings.ToLower(name))
	}
	argc := len(x.args)
	none := func(s string, c class) (string, class, error) {
		if argc != 0 {
			return "", 0, untranslatable("%s with arguments", strings.ToLower(name))
		}
		return s, c, nil
	}
	switch name {
	case "GETDATE", "SYSDATETIME", "SYSDATETIMEOFFSET":
		return none("now()", cTime)
	case "GETUTCDATE", "SYSUTCDATETIME":
		return none("(now() AT TIME ZONE 'UTC')", cTime)
	case "NEWID":
		return none("gen_random_uuid()", cUUID)
	case "NEWSEQUENTIALID":
		t.note("newsequentialid() becomes gen_random_uuid(): unique, but not increasing")
		return none("gen_random_uuid()", cUUID)
	case "SUSER_SNAME", "SUSER_NAME", "USER_NAME", "ORIGINAL_LOGIN":
		t.note("%s() becomes current_user, the PostgreSQL role", strings.ToLower(name))
		return none("current_user", cText)
	case "LEN":
		if argc != 1 {
			break
		}
		a, _, err := t.expr(x.args[0])
		// LEN ignores trailing spaces.
		return "length(rtrim(" + a + "))", cNum, err
	case "CHARINDEX":
		if argc != 2 {
			break
		}
		a, _, err := t.expr(x.args[0])
		if err != nil {
			return "", 0, err
		}
		b, _, err := t.expr(x.args[1])
		return "strpos(" + b + ", " + a + ")", cNum, err
	case "ROUND":
		if argc != 2 {
			break
		}
	case "YEAR", "MONTH", "DAY":
		if argc != 1 {
			break
		}
		a, _, err := t.expr(x.args[0])
		return "CAST(EXTRACT(" + dateParts[name] + " FROM " + a + ") AS integer)", cNum, err
	case "DATEADD":
		if argc != 3 {
			break
		}
		unit, ok := x.args[0].(ref)
		if !ok || len(unit.parts) != 1 || intervals[strings.ToUpper(unit.parts[0])] == "" {
			return "", 0, untranslatable("dateadd with this unit")
		}
		n, _, err := t.operand(x.args[1])
		if err != nil {
			return "", 0, err
		}
		d, _, err := t.operand(x.args[2])
		return d + " + " + n + " * interval '1 " + intervals[strings.ToUpper(unit.parts[0])] + "'", cTime, err
	}
	pg := functions[name]
	if name == "ROUND" {
		pg = "round"
	}
	if pg == "" {
		return "", 0, untranslatable("function %s() has no PostgreSQL translation", strings.ToLower(name))
	}
	if x.star {
		return pg + "(*)", cNum, nil
	}
	args := make([]string, len(x.args))
	res := cUnknown
	for i, a := range x.args {
		s, c, err := t.expr(a)
		if err != nil {
			return "", 0, err
		}
		args[i] = s
		if i == 0 {
			res = c
		}
	}
	switch name {
	case "SPACE":
		args = []string{"' '", args[0]}
		res = cText
	case "DATALENGTH", "COUNT":
		res = cNum
	}
	return pg + "(" + strings.Join(args, ", ") + ")", res, nil
}

// quoteLiteral is s as a PostgreSQL string literal (standard conforming
// strings: only the quote is doubled).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// translateExpr translates stored T-SQL text (a default, check, computed
// column or filter): the SQL, notes on what is approximate, or why it
// has no translation.
func translateExpr(text string, sc scope) (sql string, c class, notes []string, err error) {
	n, err := parseExpr(text)
	if err != nil {
		return "", 0, nil, err
	}
	t := &translator{sc: sc}
	sql, c, err = t.expr(n)
	return sql, c, t.notes, err
}

// translateDefault translates a default for a column of class target: a
// number given to a bit column becomes a boolean.
func translateDefault(text string, target class, sc scope) (string, []string, error) {
	n, err := parseExpr(text)
	if err != nil {
		return "", nil, err
	}
	if target == cBool {
		if b, ok := boolLiteral(n); ok {
			return b, nil, nil
		}
	}
	t := &translator{sc: sc}
	s, _, err := t.expr(n)
	return s, t.notes, err
}

// translateZonedDefault translates the default of a datetimeoffset column
// that PostgreSQL keeps as a timestamptz (an instant) and an offset
// companion column (minutes east of UTC): the default of each. SQL Server
// converts a value without an offset (getdate(), a literal without one)
// to the offset +00:00, so the companion's default is 0 then; the UTC
// functions are the current instant, which is now() in a timestamptz.
// A literal without an offset is read as a timestamp and placed at UTC:
// PostgreSQL fixes a timestamptz literal's value when it creates the
// table, in that session's TimeZone, where SQL Server reads it at +00:00.
func translateZonedDefault(text string, sc scope) (instant, offset string, notes []string, err error) {
	n, err := parseExpr(text)
	if err != nil {
		return "", "", nil, err
	}
	switch x := n.(type) {
	case lit:
		switch x.kind {
		case tWord: // NULL
			return "NULL", "NULL", nil, nil
		case tString:
			m := offsetSuffix.FindStringSubmatch(x.text)
			if m == nil {
				return "(CAST(" + quoteLiteral(x.text) + " AS timestamp) AT TIME ZONE 'UTC')", "0", nil, nil
			}
			h, _ := strconv.Atoi(m[2])
			mi, _ := strconv.Atoi(m[3])
			if h > 14 || mi > 59 || h == 14 && mi > 0 {
				return "", "", nil, untranslatable("offset %s is out of range", m[0])
			}
			off := h*60 + mi
			if m[1] == "-" {
				off = -off
			}
			return quoteLiteral(x.text), strconv.Itoa(off), nil, nil
		}
	case call:
		if len(x.args) == 0 {
			switch x.name {
			case "SYSDATETIMEOFFSET":
				return "now()", "(EXTRACT(TIMEZONE FROM now()) / 60)::smallint",
					[]string{"sysdatetimeoffset()'s offset is the SQL Server machine's time zone; in PostgreSQL it is the session's TimeZone setting"}, nil
			case "GETUTCDATE", "SYSUTCDATETIME":
				return "now()", "0", nil, nil
			case "GETDATE", "SYSDATETIME":
				return "now()", "0", []string{strings.ToLower(x.name) + "() into a datetimeoffset is the server's local time labelled +00:00 in SQL Server; in PostgreSQL the current instant with offset 0 (the same on a server running in UTC)"}, nil
			}
		}
	case ref:
		if len(x.parts) == 1 && strings.EqualFold(x.parts[0], "CURRENT_TIMESTAMP") {
			return "now()", "0", []string{"CURRENT_TIMESTAMP into a datetimeoffset is the server's local time labelled +00:00 in SQL Server; in PostgreSQL the current instant with offset 0 (the same on a server running in UTC)"}, nil
		}
	}
	// Anything else: the instant translates as any default does; its
	// offset has no translation.
	t := &translator{sc: sc}
	if _, _, err := t.expr(n); err != nil {
		return "", "", nil, err
	}
	return "", "", nil, untranslatable("the offset of this default has no PostgreSQL translation")
}

// offsetSuffix is the time zone offset ending a datetimeoffset literal.
var offsetSuffix = regexp.MustCompile(`([+-])(\d{1,2}):(\d{2})\s*$`)
