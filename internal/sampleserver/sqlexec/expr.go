package sqlexec

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// source is one table of a FROM clause.
type source struct {
	t      *sampledb.Table
	schema string
	name   string
	alias  string
	sample *pageSample // TABLESAMPLE of the first source, nil without
}

// scope binds names of one SELECT.
type scope struct {
	s     *Session
	srcs  []*source
	joins []joinKind
	ps    *paramSet
	aggs  []*funcExpr
	// inAgg is set while binding an aggregate's argument (no nesting).
	inAgg bool
}

// textRule is how the comparison of xs compares text: by the collation
// of the first column among them (a column's collation wins over a
// constant's or a parameter's, as SQL Server's collation precedence
// has it), else case-insensitively.
func (sc *scope) textRule(xs ...expr) textRule {
	for _, x := range xs {
		if c, ok := x.(*colExpr); ok && c.bound && c.src < len(sc.srcs) && sc.srcs[c.src] != nil {
			ti := &sc.srcs[c.src].t.Columns[c.col].Type
			if ti.Kind().HasCollation() {
				return ruleOf(ti.Collation)
			}
		}
	}
	return ruleFold
}

// env is the row an expression is evaluated on.
type env struct {
	rows [][]any // per source
	aggs []any   // aggregate results
}

func (sc *scope) bind(x expr, allowAgg bool) error {
	switch x := x.(type) {
	case nil, *litExpr:
		return nil
	case *paramExpr:
		if _, ok := sc.ps.get(x.Name); !ok {
			return errMustDeclare(x.Line, x.Name)
		}
	case *sysVarExpr:
		if _, ok := sysVarType(x.Name); !ok {
			return newError(137, 15, 2, x.Line, "Must declare the scalar variable \"@@%s\".", x.Name)
		}
	case *colExpr:
		return sc.bindCol(x)
	case *funcExpr:
		if x.Recv != nil {
			if err := sc.bindCol(x.Recv); err != nil {
				if e, ok := err.(*Error); ok && (e.Number == 207 || e.Number == 4104) {
					return newError(4121, 16, 1, x.Line, "Cannot find either column \"%s\" or the user-defined function or aggregate \"%s\", or the name is ambiguous.",
						strings.Join(x.Recv.Parts, "."), strings.Join(append(append([]string{}, x.Recv.Parts...), x.Method), "."))
				}
				return err
			}
			ti := sc.srcs[x.Recv.src].t.Columns[x.Recv.col].Type
			if !methodOK(&ti, x.Name) || len(x.Args) != 0 {
				return newError(258, 15, 1, x.Line, "Cannot call methods on %s.", sqlTypeName(&ti))
			}
			return nil
		}
		if isAggregate(x.Name) {
			if !allowAgg || sc.inAgg {
				return newError(4109, 16, 1, x.Line, "Windowed functions, aggregates and NEXT VALUE FOR functions cannot be used in this context.")
			}
			if x.Star && x.Name != "COUNT" && x.Name != "COUNT_BIG" {
				return errSyntax(token{Kind: tkOp, Text: "*", Raw: "*", Line: x.Line})
			}
			if !x.Star && len(x.Args) != 1 {
				return newError(174, 15, 1, x.Line, "The %s function requires 1 argument(s).", strings.ToLower(x.Name))
			}
			sc.inAgg = true
			for _, a := range x.Args {
				if err := sc.bind(a, false); err != nil {
					sc.inAgg = false
					return err
				}
			}
			sc.inAgg = false
			x.aggIndex = len(sc.aggs)
			sc.aggs = append(sc.aggs, x)
			return nil
		}
		if x.Star {
			return errSyntax(token{Kind: tkOp, Text: "*", Raw: "*", Line: x.Line})
		}
		fn, ok := scalarFuncs[x.Name]
		if !ok {
			return errUnknownFunction(x.Line, x.Name)
		}
		if len(x.Args) < fn.min || len(x.Args) > fn.max {
			return newError(174, 15, 1, x.Line, "The %s function requires %d argument(s).", strings.ToLower(x.Name), fn.min)
		}
		for _, a := range x.Args {
			if err := sc.bind(a, allowAgg); err != nil {
				return err
			}
		}
	case *castExpr:
		target, err := tiFromSpec(x.T, x.Line)
		if err != nil {
			return err
		}
		if err := sc.bind(x.E, allowAgg); err != nil {
			return err
		}
		if err := sc.bind(x.Style, allowAgg); err != nil {
			return err
		}
		x.target = target
		x.srcT, _ = sc.typeOf(x.E)
	case *caseExpr:
		if err := sc.bind(x.Operand, allowAgg); err != nil {
			return err
		}
		for _, w := range x.Whens {
			if err := sc.bind(w.Cond, allowAgg); err != nil {
				return err
			}
			if err := sc.bind(w.Then, allowAgg); err != nil {
				return err
			}
		}
		return sc.bind(x.Else, allowAgg)
	case *unaryExpr:
		return sc.bind(x.E, allowAgg)
	case *binExpr:
		if err := sc.bind(x.L, allowAgg); err != nil {
			return err
		}
		return sc.bind(x.R, allowAgg)
	case *isNullExpr:
		return sc.bind(x.E, allowAgg)
	case *inExpr:
		if err := sc.bind(x.E, allowAgg); err != nil {
			return err
		}
		for _, e := range x.List {
			if err := sc.bind(e, allowAgg); err != nil {
				return err
			}
		}
	case *betweenExpr:
		for _, e := range []expr{x.E, x.Lo, x.Hi} {
			if err := sc.bind(e, allowAgg); err != nil {
				return err
			}
		}
	case *likeExpr:
		for _, e := range []expr{x.E, x.Pat, x.Escape} {
			if err := sc.bind(e, allowAgg); err != nil {
				return err
			}
		}
	}
	return nil
}

func (sc *scope) bindCol(c *colExpr) error {
	name := c.Parts[len(c.Parts)-1]
	if len(c.Parts) == 1 {
		found := -1
		for i, s := range sc.srcs {
			if s.t.ColumnIndex(name) >= 0 {
				if found >= 0 {
					return errAmbiguous(c.Line, name)
				}
				found = i
			}
		}
		if found < 0 {
			return errInvalidColumn(c.Line, name)
		}
		c.src, c.col, c.bound = found, sc.srcs[found].t.ColumnIndex(name), true
		return nil
	}
	qual := c.Parts[:len(c.Parts)-1]
	for i, s := range sc.srcs {
		if !s.matches(qual) {
			continue
		}
		ci := s.t.ColumnIndex(name)
		if ci < 0 {
			return errInvalidColumn(c.Line, name)
		}
		c.src, c.col, c.bound = i, ci, true
		return nil
	}
	return errNotBound(c.Line, strings.Join(c.Parts, "."))
}

// matches reports whether a column qualifier names this source.
func (s *source) matches(qual []string) bool {
	last := qual[len(qual)-1]
	if s.alias != "" {
		return len(qual) == 1 && strings.EqualFold(last, s.alias)
	}
	if !strings.EqualFold(last, s.name) {
		return false
	}
	if len(qual) >= 2 && qual[len(qual)-2] != "" && !strings.EqualFold(qual[len(qual)-2], s.schema) {
		return false
	}
	return true
}

func isAggregate(name string) bool {
	switch name {
	case "COUNT", "COUNT_BIG", "MIN", "MAX", "SUM", "AVG":
		return true
	}
	return false
}

// walk calls fn on x and every sub-expression.
func walk(x expr, fn func(expr)) {
	if x == nil {
		return
	}
	fn(x)
	switch x := x.(type) {
	case *funcExpr:
		for _, a := range x.Args {
			walk(a, fn)
		}
	case *castExpr:
		walk(x.E, fn)
		walk(x.Style, fn)
	case *caseExpr:
		walk(x.Operand, fn)
		for _, w := range x.Whens {
			walk(w.Cond, fn)
			walk(w.Then, fn)
		}
		walk(x.Else, fn)
	case *unaryExpr:
		walk(x.E, fn)
	case *binExpr:
		walk(x.L, fn)
		walk(x.R, fn)
	case *isNullExpr:
		walk(x.E, fn)
	case *inExpr:
		walk(x.E, fn)
		for _, e := range x.List {
			walk(e, fn)
		}
	case *betweenExpr:
		walk(x.E, fn)
		walk(x.Lo, fn)
		walk(x.Hi, fn)
	case *likeExpr:
		walk(x.E, fn)
		walk(x.Pat, fn)
		walk(x.Escape, fn)
	}
}

// Types of expressions.

// typeOf returns the result type of a bound expression and whether it may
// be NULL.
func (sc *scope) typeOf(x expr) (decode.TypeInfo, bool) {
	switch x := x.(type) {
	case *litExpr:
		switch x.Kind {
		case litNull:
			return tiOf(decode.KindInt), true
		case litInt:
			v := x.V.(int64)
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return tiOf(decode.KindInt), false
			}
			return tiOf(decode.KindBigInt), false
		case litDecimal:
			d := x.V.(decode.Decimal)
			return tiDecimal(d.Precision, d.Scale), false
		case litFloat:
			return tiOf(decode.KindFloat), false
		case litString:
			return tiVarChar(len(x.Text)), false
		case litNString:
			return tiNVarChar(decode.UTF16Len(x.Text)), false
		case litBinary:
			return tiVarBinary(len(x.V.([]byte))), false
		}
	case *paramExpr:
		if t, ok := sc.ps.typeOf(x.Name); ok && t.Type != 0 {
			return t, true
		}
		v, _ := sc.ps.get(x.Name)
		return typeOfValue(v), true
	case *sysVarExpr:
		t, _ := sysVarType(x.Name)
		return t, false
	case *colExpr:
		c := &sc.srcs[x.src].t.Columns[x.col]
		nullable := c.Nullable()
		// Columns of the inner side of a LEFT JOIN may be NULL.
		if sc.srcs[x.src] != nil && x.src > 0 {
			nullable = nullable || sc.leftJoined(x.src)
		}
		return c.Type, nullable
	case *funcExpr:
		return sc.funcType(x)
	case *castExpr:
		t, _ := tiFromSpec(x.T, x.Line)
		return t, true
	case *caseExpr:
		var ts []decode.TypeInfo
		for _, w := range x.Whens {
			if !isNullLit(w.Then) {
				t, _ := sc.typeOf(w.Then)
				ts = append(ts, t)
			}
		}
		if x.Else != nil && !isNullLit(x.Else) {
			t, _ := sc.typeOf(x.Else)
			ts = append(ts, t)
		}
		return unifyTypes(ts), true
	case *unaryExpr:
		if x.Op == "NOT" {
			return tiOf(decode.KindBit), true
		}
		return sc.typeOf(x.E)
	case *binExpr:
		switch x.Op {
		case "AND", "OR", "=", "<>", "<", "<=", ">", ">=":
			return tiOf(decode.KindBit), true
		}
		lt, ln := sc.typeOf(x.L)
		rt, rn := sc.typeOf(x.R)
		if x.Op == "+" && isStringType(&lt) && isStringType(&rt) {
			n := charLen(&lt) + charLen(&rt)
			if charLen(&lt) < 0 || charLen(&rt) < 0 {
				n = 1 << 20
			}
			if isUnicodeType(&lt) || isUnicodeType(&rt) {
				return tiNVarChar(n), ln || rn
			}
			return tiVarChar(n), ln || rn
		}
		return unifyTypes([]decode.TypeInfo{lt, rt}), ln || rn
	case *isNullExpr, *inExpr, *betweenExpr, *likeExpr:
		return tiOf(decode.KindBit), false
	}
	return tiOf(decode.KindInt), true
}

func (sc *scope) leftJoined(src int) bool {
	return sc.srcs[src] != nil && src < len(sc.joins) && sc.joins[src] == joinLeft
}

func isNullLit(x expr) bool {
	l, ok := x.(*litExpr)
	return ok && l.Kind == litNull
}

// typeRank orders types by SQL Server's data type precedence (higher wins).
func typeRank(t *decode.TypeInfo) int {
	switch t.Kind() {
	case decode.KindDateTimeOffset:
		return 30
	case decode.KindDateTime2:
		return 29
	case decode.KindDateTime:
		return 28
	case decode.KindSmallDateTime:
		return 27
	case decode.KindDate:
		return 26
	case decode.KindTime:
		return 25
	case decode.KindFloat:
		return 24
	case decode.KindReal:
		return 23
	case decode.KindDecimal:
		return 22
	case decode.KindMoney, decode.KindSmallMoney:
		return 21
	case decode.KindBigInt:
		return 20
	case decode.KindInt:
		return 18
	case decode.KindSmallInt:
		return 17
	case decode.KindTinyInt:
		return 16
	case decode.KindBit:
		return 15
	case decode.KindUniqueIdentifier:
		return 12
	case decode.KindNVarChar, decode.KindNChar, decode.KindNText:
		return 10
	case decode.KindVarChar, decode.KindChar, decode.KindText:
		return 9
	}
	return 5
}

// unifyTypes is the result type of CASE branches / arithmetic operands.
func unifyTypes(ts []decode.TypeInfo) decode.TypeInfo {
	if len(ts) == 0 {
		return tiOf(decode.KindInt)
	}
	best := ts[0]
	allStr := true
	unicode := false
	maxLen := 0
	maxScale, maxInt := uint8(0), 0
	for i := range ts {
		t := &ts[i]
		if !isStringType(t) {
			allStr = false
		} else {
			if isUnicodeType(t) {
				unicode = true
			}
			if l := charLen(t); l < 0 || l > maxLen {
				if l < 0 {
					maxLen = 1 << 20
				} else {
					maxLen = l
				}
			}
		}
		if typeRank(t) > typeRank(&best) {
			best = *t
		}
		if t.Kind() == decode.KindDecimal {
			if t.Scale > maxScale {
				maxScale = t.Scale
			}
			if d := int(t.Precision) - int(t.Scale); d > maxInt {
				maxInt = d
			}
		}
	}
	if allStr {
		if unicode {
			return tiNVarChar(maxLen)
		}
		return tiVarChar(maxLen)
	}
	switch best.Kind() {
	case decode.KindDecimal:
		p := maxInt + int(maxScale)
		if p < 19 {
			p = 19 // room for integer operands
		}
		if p > 38 {
			p = 38
		}
		return tiDecimal(uint8(p), maxScale)
	case decode.KindTinyInt, decode.KindSmallInt:
		return tiOf(decode.KindInt)
	}
	return decode.NullableForm(best)
}

func typeOfValue(v any) decode.TypeInfo {
	switch x := v.(type) {
	case int64:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return tiOf(decode.KindInt)
		}
		return tiOf(decode.KindBigInt)
	case bool:
		return tiOf(decode.KindBit)
	case float64:
		return tiOf(decode.KindFloat)
	case float32:
		return tiOf(decode.KindReal)
	case decode.Decimal:
		return tiDecimal(max(x.Precision, 1), x.Scale)
	case decode.Money:
		return tiOf(decode.KindMoney)
	case decode.Date:
		return tiOf(decode.KindDate)
	case decode.Time:
		return tiOf(decode.KindTime)
	case decode.DateTime:
		return tiOf(decode.KindDateTime2)
	case decode.DateTimeOffset:
		return tiOf(decode.KindDateTimeOffset)
	case decode.GUID:
		return tiOf(decode.KindUniqueIdentifier)
	case string:
		return tiNVarChar(max(decode.UTF16Len(x), 1))
	case []byte:
		return tiVarBinary(max(len(x), 1))
	case decode.Variant:
		return tiOf(decode.KindVariant)
	}
	return tiOf(decode.KindInt)
}

// tiFromSpec returns the TYPE_INFO of a CAST/CONVERT target type, with
// SQL Server's errors for a bad declaration. Lengths default to 30 as in
// CAST and CONVERT.
func tiFromSpec(ts typeSpec, line int32) (decode.TypeInfo, error) {
	d, ok := decode.LookupDecl(ts.Name)
	if !ok || !castable(d.Kind) {
		return decode.TypeInfo{}, newError(243, 16, 1, line, "Type %s is not a defined system type.", ts.Name)
	}
	args := make([]int, len(ts.Args))
	for i, a := range ts.Args {
		args[i] = int(max(min(a, 1<<30), -1<<30))
	}
	d, err := d.WithArgs(ts.Name, args, ts.Max)
	var de *decode.DeclError
	if errors.As(err, &de) {
		switch de.Problem {
		case decode.DeclNoArgs:
			return decode.TypeInfo{}, newError(2716, 16, 1, line, "Column, parameter, or variable #1: Cannot specify a column width on data type %s.", ts.Name)
		case decode.DeclPrecision, decode.DeclFraction:
			return decode.TypeInfo{}, newError(1002, 16, 1, line, "Line %d: Specified column precision %d is greater than the maximum precision of %d.", line, de.Value, de.Limit)
		case decode.DeclScale:
			return decode.TypeInfo{}, newError(192, 16, 1, line, "The scale must be less than or equal to the precision.")
		}
		return decode.TypeInfo{}, newError(131, 15, 3, line, "The size (%d) given to the type '%s' exceeds the maximum allowed for any data type (%d).", de.Value, ts.Name, de.Limit)
	}
	if d.Kind.HasLength() && d.Length == 0 && !d.Max {
		d.Length = 30
	}
	return computed(d), nil
}

// castable reports whether the engine converts values to kind k.
func castable(k decode.Kind) bool {
	switch k {
	case decode.KindText, decode.KindNText, decode.KindImage, decode.KindRowVersion, decode.KindJSON,
		decode.KindVector, decode.KindGeography, decode.KindGeometry, decode.KindHierarchyID, decode.KindUDT:
		return false
	}
	return true
}

// sqlTypeName is the T-SQL name of a TYPE_INFO, as SQL Server's messages
// spell it.
func sqlTypeName(t *decode.TypeInfo) string { return decode.DeclOf(t, 0).Name() }

// Evaluation.

func (sc *scope) eval(x expr, e *env) (any, error) {
	switch x := x.(type) {
	case nil:
		return nil, nil
	case *litExpr:
		return x.V, nil
	case *paramExpr:
		v, _ := sc.ps.get(x.Name)
		return v, nil
	case *sysVarExpr:
		return sc.sysVar(x.Name), nil
	case *colExpr:
		row := e.rows[x.src]
		if row == nil {
			return nil, nil // outer side of a LEFT JOIN without match
		}
		return row[x.col], nil
	case *funcExpr:
		if x.Recv != nil {
			return sc.evalMethod(x, e)
		}
		if isAggregate(x.Name) {
			return e.aggs[x.aggIndex], nil
		}
		return sc.evalFunc(x, e)
	case *castExpr:
		v, err := sc.eval(x.E, e)
		if err != nil {
			return nil, err
		}
		style := int64(0)
		if x.Style != nil {
			sv, err := sc.eval(x.Style, e)
			if err != nil {
				return nil, err
			}
			if n, ok := sv.(int64); ok {
				style = n
			}
		}
		return convert(v, &x.srcT, &x.target, int(style), x.Line)
	case *caseExpr:
		var op any
		if x.Operand != nil {
			v, err := sc.eval(x.Operand, e)
			if err != nil {
				return nil, err
			}
			op = v
		}
		for _, w := range x.Whens {
			var match bool
			if x.Operand != nil {
				wv, err := sc.eval(w.Cond, e)
				if err != nil {
					return nil, err
				}
				if op != nil && wv != nil {
					c, ok := compareRule(op, wv, sc.textRule(x.Operand, w.Cond))
					match = ok && c == 0
				}
			} else {
				cv, err := sc.eval(w.Cond, e)
				if err != nil {
					return nil, err
				}
				match = cv == true
			}
			if match {
				return sc.eval(w.Then, e)
			}
		}
		return sc.eval(x.Else, e)
	case *unaryExpr:
		v, err := sc.eval(x.E, e)
		if err != nil || v == nil {
			return nil, err
		}
		switch x.Op {
		case "NOT":
			b, ok := v.(bool)
			if !ok {
				return nil, nil
			}
			return !b, nil
		case "-":
			return negate(v)
		case "~":
			if n, ok := v.(int64); ok {
				return ^n, nil
			}
			return nil, newError(402, 16, 1, 1, "The data types are incompatible in the ~ operator.")
		}
	case *binExpr:
		return sc.evalBin(x, e)
	case *isNullExpr:
		v, err := sc.eval(x.E, e)
		if err != nil {
			return nil, err
		}
		return (v == nil) != x.Not, nil
	case *inExpr:
		v, err := sc.eval(x.E, e)
		if err != nil || v == nil {
			return nil, err
		}
		sawNull := false
		for _, it := range x.List {
			w, err := sc.eval(it, e)
			if err != nil {
				return nil, err
			}
			if w == nil {
				sawNull = true
				continue
			}
			c, ok := compareRule(v, w, sc.textRule(x.E, it))
			if !ok {
				return nil, errConvert(v, w)
			}
			if c == 0 {
				return !x.Not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return x.Not, nil
	case *betweenExpr:
		v, lo, err := sc.eval2(x.E, x.Lo, e)
		if err != nil {
			return nil, err
		}
		hi, err := sc.eval(x.Hi, e)
		if err != nil {
			return nil, err
		}
		if v == nil || lo == nil || hi == nil {
			return nil, nil
		}
		r := sc.textRule(x.E, x.Lo, x.Hi)
		c1, ok1 := compareRule(v, lo, r)
		c2, ok2 := compareRule(v, hi, r)
		if !ok1 || !ok2 {
			return nil, errConvert(v, lo)
		}
		return (c1 >= 0 && c2 <= 0) != x.Not, nil
	case *likeExpr:
		v, p, err := sc.eval2(x.E, x.Pat, e)
		if err != nil {
			return nil, err
		}
		if v == nil || p == nil {
			return nil, nil
		}
		var esc rune = -1
		if x.Escape != nil {
			ev, err := sc.eval(x.Escape, e)
			if err != nil {
				return nil, err
			}
			if s, ok := ev.(string); ok && len(s) > 0 {
				esc = []rune(s)[0]
			}
		}
		return likeMatch(valueText(v, nil), valueText(p, nil), esc) != x.Not, nil
	}
	return nil, nil
}

func errConvert(a, b any) *Error {
	return newError(245, 16, 1, 1, "Conversion failed when converting the %s value '%s' to data type %s.",
		sqlTypeNameOfValue(a), truncate(valueText(a, nil), 100), sqlTypeNameOfValue(b))
}

func sqlTypeNameOfValue(v any) string {
	t := typeOfValue(v)
	if _, ok := v.(string); ok {
		return "varchar"
	}
	return sqlTypeName(&t)
}

func negate(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		if x == math.MinInt64 {
			return nil, newError(8115, 16, 2, 1, "Arithmetic overflow error converting expression to data type bigint.")
		}
		return -x, nil
	case float64:
		return -x, nil
	case float32:
		return -x, nil
	case decode.Decimal:
		x.Neg = !x.Neg
		return x, nil
	case decode.Money:
		return -x, nil
	}
	return nil, newError(8117, 16, 1, 1, "Operand data type %s is invalid for minus operator.", sqlTypeNameOfValue(v))
}

// eval2 evaluates a, then b (not b when a fails).
func (sc *scope) eval2(a, b expr, e *env) (any, any, error) {
	av, err := sc.eval(a, e)
	if err != nil {
		return nil, nil, err
	}
	bv, err := sc.eval(b, e)
	if err != nil {
		return nil, nil, err
	}
	return av, bv, nil
}

func (sc *scope) evalBin(x *binExpr, e *env) (any, error) {
	if x.Op == "AND" || x.Op == "OR" {
		// Three-valued logic: dom (false for AND, true for OR) decides the
		// result as soon as either side has it; NULL otherwise unless both
		// sides are the other truth value.
		dom := x.Op == "OR"
		l, err := sc.eval(x.L, e)
		if err != nil {
			return nil, err
		}
		if l == dom {
			return dom, nil
		}
		r, err := sc.eval(x.R, e)
		if err != nil {
			return nil, err
		}
		if r == dom {
			return dom, nil
		}
		if l == !dom && r == !dom {
			return !dom, nil
		}
		return nil, nil
	}
	l, r, err := sc.eval2(x.L, x.R, e)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	switch x.Op {
	case "=", "<>", "<", "<=", ">", ">=":
		rule := ruleFold
		if _, ok := l.(string); ok {
			rule = sc.textRule(x.L, x.R)
		}
		c, ok := compareRule(l, r, rule)
		if !ok {
			return nil, errConvertLine(l, r, x.Line)
		}
		switch x.Op {
		case "=":
			return c == 0, nil
		case "<>":
			return c != 0, nil
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	}
	return arith(x.Op, l, r, x.Line)
}

func errConvertLine(a, b any, line int32) *Error {
	e := errConvert(a, b)
	e.Line = line
	return e
}

// arith evaluates + - * / % & | ^ on non-NULL operands.
func arith(op string, l, r any, line int32) (any, error) {
	if op == "+" {
		ls, lok := l.(string)
		rs, rok := r.(string)
		if lok && rok {
			return ls + rs, nil
		}
	}
	li, lok := l.(int64)
	ri, rok := r.(int64)
	if lb, ok := l.(bool); ok {
		li, lok = b2i(lb), true
	}
	if rb, ok := r.(bool); ok {
		ri, rok = b2i(rb), true
	}
	if s, ok := l.(string); ok && isNumeric(r) {
		n, ok := stringToNumber(s)
		if !ok {
			return nil, errConvertLine(l, r, line)
		}
		return arith(op, n, r, line)
	}
	if s, ok := r.(string); ok && isNumeric(l) {
		n, ok := stringToNumber(s)
		if !ok {
			return nil, errConvertLine(r, l, line)
		}
		return arith(op, l, n, line)
	}
	overflow := newError(8115, 16, 2, line, "Arithmetic overflow error converting expression to data type bigint.")
	divZero := newError(8134, 16, 1, line, "Divide by zero error encountered.")
	if lok && rok {
		switch op {
		case "+":
			s := li + ri
			if (s > li) != (ri > 0) {
				return nil, overflow
			}
			return s, nil
		case "-":
			s := li - ri
			if (s < li) != (ri > 0) {
				return nil, overflow
			}
			return s, nil
		case "*":
			if li != 0 && ri != 0 {
				p := li * ri
				if p/ri != li || (li == -1 && ri == math.MinInt64) || (ri == -1 && li == math.MinInt64) {
					return nil, overflow
				}
				return p, nil
			}
			return int64(0), nil
		case "/":
			if ri == 0 {
				return nil, divZero
			}
			if li == math.MinInt64 && ri == -1 {
				return nil, overflow
			}
			return li / ri, nil
		case "%":
			if ri == 0 {
				return nil, divZero
			}
			if ri == -1 {
				return int64(0), nil
			}
			return li % ri, nil
		case "&":
			return li & ri, nil
		case "|":
			return li | ri, nil
		case "^":
			return li ^ ri, nil
		}
	}
	if !isNumeric(l) || !isNumeric(r) {
		// date + number: days.
		if dt, ok := l.(decode.DateTime); ok && (op == "+" || op == "-") {
			if n, ok := asFloat(r); ok {
				if op == "-" {
					n = -n
				}
				t := int64(n * float64(decode.TicksPerDay))
				return addTicksDT(dt, t), nil
			}
		}
		return nil, newError(402, 16, 1, line, "The data types %s and %s are incompatible in the %s operator.",
			sqlTypeNameOfValue(l), sqlTypeNameOfValue(r), opName(op))
	}
	if eitherFloat(l, r) {
		a, _ := asFloat(l)
		b, _ := asFloat(r)
		switch op {
		case "+":
			return a + b, nil
		case "-":
			return a - b, nil
		case "*":
			return a * b, nil
		case "/":
			if b == 0 {
				return nil, divZero
			}
			return a / b, nil
		case "%":
			if b == 0 {
				return nil, divZero
			}
			return math.Mod(a, b), nil
		}
		return nil, newError(402, 16, 1, line, "The data types float and float are incompatible in the %s operator.", opName(op))
	}
	// Exact numerics (decimal, money, int).
	a, _ := asRat(l)
	b, _ := asRat(r)
	res := new(big.Rat)
	scale := uint8(0)
	if d, ok := l.(decode.Decimal); ok {
		scale = d.Scale
	}
	if d, ok := r.(decode.Decimal); ok && d.Scale > scale {
		scale = d.Scale
	}
	if _, ok := l.(decode.Money); ok {
		scale = max(scale, 4)
	}
	if _, ok := r.(decode.Money); ok {
		scale = max(scale, 4)
	}
	switch op {
	case "+":
		res.Add(a, b)
	case "-":
		res.Sub(a, b)
	case "*":
		res.Mul(a, b)
		scale = min(scale*2, 38)
	case "/":
		if b.Sign() == 0 {
			return nil, divZero
		}
		res.Quo(a, b)
		scale = max(scale, 6)
	default:
		return nil, newError(402, 16, 1, line, "The data types %s and %s are incompatible in the %s operator.",
			sqlTypeNameOfValue(l), sqlTypeNameOfValue(r), opName(op))
	}
	d, ok := ratToDecimal(res, 38, scale)
	if !ok {
		return nil, newError(8115, 16, 2, line, "Arithmetic overflow error converting expression to data type numeric.")
	}
	return d, nil
}

func addTicksDT(dt decode.DateTime, t int64) decode.DateTime {
	t += dt.Ticks
	days := t / decode.TicksPerDay
	t %= decode.TicksPerDay
	if t < 0 {
		t += decode.TicksPerDay
		days--
	}
	return decode.DateTime{Days: dt.Days + int32(days), Ticks: t}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func opName(op string) string {
	switch op {
	case "+":
		return "add"
	case "-":
		return "subtract"
	case "*":
		return "multiply"
	case "/":
		return "divide"
	case "%":
		return "modulo"
	}
	return op
}

// likeElem is one element of a compiled LIKE pattern.
type likeElem struct {
	kind byte // 'c' literal, '_' any one, '%' any run, '[' set
	r    rune
	set  []rune // ranges as pairs lo, hi
	neg  bool
}

func compileLike(p []rune, esc rune) []likeElem {
	var out []likeElem
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case esc >= 0 && c == esc && i+1 < len(p):
			i++
			out = append(out, likeElem{kind: 'c', r: p[i]})
		case c == '%':
			if len(out) == 0 || out[len(out)-1].kind != '%' {
				out = append(out, likeElem{kind: '%'})
			}
		case c == '_':
			out = append(out, likeElem{kind: '_'})
		case c == '[':
			end := -1
			for j := i + 2; j < len(p); j++ {
				if p[j] == ']' {
					end = j
					break
				}
			}
			if end < 0 {
				out = append(out, likeElem{kind: 'c', r: c})
				continue
			}
			e := likeElem{kind: '['}
			set := p[i+1 : end]
			if len(set) > 0 && set[0] == '^' && len(set) > 1 {
				e.neg, set = true, set[1:]
			}
			for k := 0; k < len(set); k++ {
				if k+2 < len(set) && set[k+1] == '-' {
					e.set = append(e.set, set[k], set[k+2])
					k += 2
					continue
				}
				e.set = append(e.set, set[k], set[k])
			}
			out = append(out, e)
			i = end
		default:
			out = append(out, likeElem{kind: 'c', r: c})
		}
	}
	return out
}

func (e *likeElem) matches(r rune) bool {
	switch e.kind {
	case '_':
		return true
	case 'c':
		return e.r == r
	case '[':
		in := false
		for k := 0; k+1 < len(e.set); k += 2 {
			if r >= e.set[k] && r <= e.set[k+1] {
				in = true
				break
			}
		}
		return in != e.neg
	}
	return false
}

// likeMatch implements LIKE (%, _, [set], [^set], ESCAPE), case-insensitive,
// in O(len(s)·len(p)) time whatever the pattern (greedy matching with
// backtracking to the last %). Trailing blanks of the value are ignored.
func likeMatch(s, p string, esc rune) bool {
	sr := []rune(strings.ToLower(s))
	pat := compileLike([]rune(strings.ToLower(p)), esc)
	match := func(sr []rune) bool {
		i, j := 0, 0
		star, mark := -1, 0
		for i < len(sr) {
			switch {
			case j < len(pat) && pat[j].kind == '%':
				star, mark = j, i
				j++
			case j < len(pat) && pat[j].matches(sr[i]):
				i++
				j++
			case star >= 0:
				mark++
				i = mark
				j = star + 1
			default:
				return false
			}
		}
		for j < len(pat) && pat[j].kind == '%' {
			j++
		}
		return j == len(pat)
	}
	if match(sr) {
		return true
	}
	trimmed := len(sr)
	for trimmed > 0 && sr[trimmed-1] == ' ' {
		trimmed--
	}
	return trimmed != len(sr) && match(sr[:trimmed])
}

// convert implements CAST/CONVERT of a non-aggregate value to target.
func convert(v any, src, target *decode.TypeInfo, style int, line int32) (any, error) {
	if v == nil {
		return nil, nil
	}
	if isStringType(target) {
		var s string
		switch {
		case style == 126 || style == 127:
			if t, ok := isoText(v, src, style); ok {
				s = t
			} else {
				s = valueText(v, src)
			}
		case style == 114 || style == 108 || style == 8 || style == 24:
			dt, ok := asDateTime(v)
			if _, isStr := v.(string); !ok || isStr {
				s = valueText(v, src)
			} else {
				s = timeText(dt.Ticks, 3, style == 114)
				if style != 114 {
					s = s[:8]
				}
			}
		case style == 120 || style == 20 || style == 121 || style == 21 || style == 23 || style == 112:
			if _, isStr := v.(string); isStr {
				s = v.(string)
				break
			}
			dt, ok := asDateTime(v)
			if !ok {
				s = valueText(v, src)
				break
			}
			full := string(decode.AppendDateTimeText(nil, dt, scaleOf(src, 7)))
			switch style {
			case 120, 20:
				s = full[:min(len(full), 19)]
			case 23:
				s = full[:10]
			case 112:
				s = strings.ReplaceAll(full[:10], "-", "")
			default:
				s = full
				if _, isDT := v.(decode.Date); isDT {
					s = full[:10]
				}
			}
		case style == 1 || style == 2:
			if b, ok := v.([]byte); ok {
				s = "0x" + strings.ToUpper(hexString(b))
				if style == 2 {
					s = s[2:]
				}
			} else {
				s = valueText(v, src)
			}
		default:
			s = valueText(v, src)
		}
		if n := charLen(target); n >= 0 && len([]rune(s)) > n {
			r := []rune(s)
			s = string(r[:n])
		}
		if target.Type == decode.TypeBigChar || target.Type == decode.TypeNChar {
			n := charLen(target)
			for len([]rune(s)) < n {
				s += " "
			}
		}
		return s, nil
	}
	return coerce(v, target, line)
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// coerce converts a non-NULL value to the generic value type of target,
// with SQL Server's conversion errors.
func coerce(v any, target *decode.TypeInfo, line int32) (any, error) {
	if v == nil {
		return nil, nil
	}
	tname := sqlTypeName(target)
	overflow := func() error {
		return newError(8115, 16, 2, line, "Arithmetic overflow error converting %s to data type %s.", exprTypeWord(v), tname)
	}
	failed := func() error {
		if _, ok := v.(string); ok {
			switch target.Kind().Class() {
			case decode.ClassDate, decode.ClassTime, decode.ClassDateTime, decode.ClassDateTimeOffset:
				return newError(241, 16, 1, line, "Conversion failed when converting date and/or time from character string.")
			case decode.ClassGUID:
				return newError(8169, 16, 2, line, "Conversion failed when converting from a character string to uniqueidentifier.")
			case decode.ClassDecimal, decode.ClassFloat:
				return newError(8114, 16, 5, line, "Error converting data type varchar to %s.", tname)
			}
			return newError(245, 16, 1, line, "Conversion failed when converting the varchar value '%s' to data type %s.", truncate(v.(string), 100), tname)
		}
		return newError(529, 16, 2, line, "Explicit conversion from data type %s to %s is not allowed.", sqlTypeNameOfValue(v), tname)
	}
	if vv, ok := v.(decode.Variant); ok {
		if target.Kind() == decode.KindVariant {
			return vv, nil
		}
		return coerce(vv.Value, target, line)
	}
	kind := target.Kind()
	if s, ok := v.(string); ok {
		switch kind.Class() {
		case decode.ClassInteger, decode.ClassBool:
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return nil, overflow()
				}
				return nil, failed()
			}
			v = n
		case decode.ClassDecimal, decode.ClassMoney, decode.ClassFloat:
			n, ok := stringToNumber(s)
			if !ok {
				return nil, failed()
			}
			v = n
		case decode.ClassDate, decode.ClassTime, decode.ClassDateTime, decode.ClassDateTimeOffset:
			dto, ok := parseDateTimeText(s)
			if !ok {
				return nil, failed()
			}
			if kind == decode.KindDateTimeOffset {
				return dto, nil
			}
			v = dto.Local()
		case decode.ClassGUID:
			g, err := decode.GUIDFromString(strings.TrimSpace(s))
			if err != nil {
				return nil, failed()
			}
			return g, nil
		case decode.ClassBinary:
			v = []byte(s)
		case decode.ClassVariant:
			return decode.Variant{Type: tiNVarChar(max(decode.UTF16Len(s), 1)), Value: s}, nil
		}
	}
	switch kind.Class() {
	case decode.ClassInteger:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case bool:
			n = b2i(x)
		case float64, float32:
			f, _ := asFloat(x)
			f = math.Trunc(f)
			if f < -9.3e18 || f > 9.3e18 || math.IsNaN(f) {
				return nil, overflow()
			}
			n = int64(f)
		case decode.Decimal, decode.Money:
			r, _ := asRat(x)
			q := new(big.Int).Quo(r.Num(), r.Denom())
			if !q.IsInt64() {
				return nil, overflow()
			}
			n = q.Int64()
		default:
			return nil, failed()
		}
		lo, hi := kind.IntRange()
		if n < lo || n > hi {
			return nil, overflow()
		}
		return n, nil
	case decode.ClassBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		case string:
			switch strings.ToUpper(strings.TrimSpace(x)) {
			case "TRUE":
				return true, nil
			case "FALSE":
				return false, nil
			}
			return nil, failed()
		}
		if f, ok := asFloat(v); ok {
			return f != 0, nil
		}
		return nil, failed()
	case decode.ClassFloat:
		f, ok := asFloat(v)
		if !ok {
			return nil, failed()
		}
		if kind == decode.KindReal {
			return float32(f), nil
		}
		return f, nil
	case decode.ClassDecimal:
		if x, ok := v.(decode.Decimal); ok && x.Scale == target.Scale {
			if x.Precision == target.Precision {
				return x, nil
			}
			if d, ok := bigToDecimal(decToBig(x), target.Precision, target.Scale); ok {
				return d, nil
			}
			return nil, overflow()
		}
		r, ok := asRat(v)
		if !ok {
			return nil, failed()
		}
		d, ok := ratToDecimal(r, target.Precision, target.Scale)
		if !ok {
			return nil, overflow()
		}
		return d, nil
	case decode.ClassMoney:
		r, ok := asRat(v)
		if !ok {
			return nil, failed()
		}
		d, ok := ratToDecimal(r, 19, 4)
		if !ok || d.Hi != 0 || d.Lo > math.MaxInt64 {
			return nil, overflow()
		}
		m := int64(d.Lo)
		if d.Neg {
			m = -m
		}
		if kind == decode.KindSmallMoney && (m < math.MinInt32 || m > math.MaxInt32) {
			return nil, overflow()
		}
		return decode.Money(m), nil
	case decode.ClassDate:
		dt, ok := asDateTime(v)
		if !ok {
			return nil, failed()
		}
		if x, ok := v.(decode.DateTimeOffset); ok {
			dt = x.Local()
		}
		return decode.Date(dt.Days), nil
	case decode.ClassTime:
		if t, ok := v.(decode.Time); ok {
			return decode.Time(roundTicks(int64(t), target.Scale)), nil
		}
		dt, ok := asDateTime(v)
		if !ok {
			return nil, failed()
		}
		if x, ok := v.(decode.DateTimeOffset); ok {
			dt = x.Local()
		}
		return decode.Time(roundTicks(dt.Ticks, target.Scale)), nil
	case decode.ClassDateTime:
		dt, ok := asDateTime(v)
		if !ok {
			return nil, failed()
		}
		if x, ok := v.(decode.DateTimeOffset); ok {
			dt = x.Local()
		}
		if t, ok := v.(decode.Time); ok {
			dt = decode.DateTime{Days: decode.DateFromCivil(1900, 1, 1), Ticks: int64(t)}
		}
		return dt, nil
	case decode.ClassDateTimeOffset:
		switch x := v.(type) {
		case decode.DateTimeOffset:
			return x, nil
		}
		dt, ok := asDateTime(v)
		if !ok {
			return nil, failed()
		}
		return decode.DateTimeOffset{UTC: dt}, nil
	case decode.ClassGUID:
		if g, ok := v.(decode.GUID); ok {
			return g, nil
		}
		if b, ok := v.([]byte); ok && len(b) == 16 {
			return decode.GUIDFromWire(b), nil
		}
		return nil, failed()
	case decode.ClassBinary:
		if kind != decode.KindBinary && kind != decode.KindVarBinary && kind != decode.KindImage {
			break
		}
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case int64:
			if x >= math.MinInt32 && x <= math.MaxInt32 {
				b = []byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)}
			} else {
				b = []byte{byte(x >> 56), byte(x >> 48), byte(x >> 40), byte(x >> 32), byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)}
			}
		case decode.GUID:
			b = x.AppendWire(nil)
		default:
			return nil, failed()
		}
		if target.Size != decode.MaxVarLen && len(b) > int(target.Size) && kind != decode.KindImage {
			b = b[:target.Size]
		}
		if kind == decode.KindBinary && len(b) < int(target.Size) {
			b = append(append([]byte{}, b...), make([]byte, int(target.Size)-len(b))...)
		}
		return b, nil
	case decode.ClassVariant:
		return decode.Variant{Type: decode.NullableForm(typeOfValue(v)), Value: v}, nil
	}
	if kind == decode.KindXML || kind == decode.KindJSON {
		return valueText(v, nil), nil
	}
	if isStringType(target) {
		return convert(v, nil, target, 0, line)
	}
	return v, nil
}

func exprTypeWord(v any) string {
	switch v.(type) {
	case string:
		return "expression"
	case decode.Decimal:
		return "numeric"
	case float64, float32:
		return "float"
	}
	return "expression"
}

// roundTicks rounds 100 ns ticks to a time scale (0..7).
func roundTicks(t int64, scale uint8) int64 {
	if scale >= 7 {
		return t
	}
	u := int64(1)
	for i := scale; i < 7; i++ {
		u *= 10
	}
	r := (t + u/2) / u * u
	if r >= decode.TicksPerDay {
		r = decode.TicksPerDay - u
	}
	return r
}
