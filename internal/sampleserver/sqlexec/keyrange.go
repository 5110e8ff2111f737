package sqlexec

import (
	"math"
	"sort"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// Key-range analysis: the WHERE clause is mapped to a set of key intervals
// that contains every row that can satisfy it, so a key lookup, a key range,
// an IN list or OR-ed ranges read only their rows, by binary search over the
// table's (monotonic) key, however big the table.

// ival is a half-open key interval [lo, hi).
type ival struct{ lo, hi int64 }

// ivals is a sorted set of disjoint, non-adjacent intervals.
type ivals []ival

var fullSet = ivals{{math.MinInt64, math.MaxInt64}}

// maxIntervals bounds the set size (an IN list of many keys); beyond it the
// set is widened to its span, which stays correct because the predicate is
// then still checked per row.
const maxIntervals = 4096

func normalize(s ivals) ivals {
	out := s[:0:0]
	for _, v := range s {
		if v.lo < v.hi {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lo < out[j].lo })
	merged := out[:0]
	for _, v := range out {
		if n := len(merged); n > 0 && v.lo <= merged[n-1].hi {
			if v.hi > merged[n-1].hi {
				merged[n-1].hi = v.hi
			}
			continue
		}
		merged = append(merged, v)
	}
	if len(merged) > maxIntervals {
		return ivals{{merged[0].lo, merged[len(merged)-1].hi}}
	}
	return merged
}

func union(a, b ivals) ivals { return normalize(append(append(ivals{}, a...), b...)) }

func intersect(a, b ivals) ivals {
	var out ivals
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo < hi {
			out = append(out, ival{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

// negateIf returns the keys of NOT p when not is set, given those of p
// (set) and whether they are exact: an inexact set (a superset) has no
// usable complement, so every key may match.
func negateIf(not bool, set ivals, exact bool) (ivals, bool) {
	if !not {
		return set, exact
	}
	if !exact {
		return fullSet, false
	}
	return complement(set), true
}

func complement(a ivals) ivals {
	var out ivals
	prev := int64(math.MinInt64)
	for _, v := range a {
		if v.lo > prev {
			out = append(out, ival{prev, v.lo})
		}
		prev = v.hi
	}
	if prev < math.MaxInt64 {
		out = append(out, ival{prev, math.MaxInt64})
	}
	return out
}

// rowRange is a half-open row range [from, to).
type rowRange struct{ from, to int64 }

// keyRanges returns the row ranges of t that can satisfy where, and the
// predicate still to check on each row (nil when the ranges are exact),
// narrowed to the rows a TABLESAMPLE of the first source keeps.
func (sc *scope) keyRanges(t *sampledb.Table, where expr) ([]rowRange, expr) {
	ranges, residual := sc.whereRanges(t, where)
	if len(sc.srcs) > 0 && sc.srcs[0].t == t && sc.srcs[0].sample != nil {
		ranges = sc.srcs[0].sample.apply(ranges)
	}
	return ranges, residual
}

// whereRanges is keyRanges before sampling.
func (sc *scope) whereRanges(t *sampledb.Table, where expr) ([]rowRange, expr) {
	all := []rowRange{{0, t.Rows}}
	if where == nil {
		return all, nil
	}
	kc := t.KeyColumn()
	if kc < 0 {
		return all, where
	}
	set, exact := sc.keySet(where, kc, 0)
	var out []rowRange
	for _, v := range set {
		from, to := int64(0), t.Rows
		if v.lo != math.MinInt64 {
			from = t.LowerBound(v.lo)
		}
		if v.hi != math.MaxInt64 {
			to = t.LowerBound(v.hi)
		}
		if from >= to {
			continue
		}
		if n := len(out); n > 0 && out[n-1].to >= from {
			out[n-1].to = max(out[n-1].to, to)
			continue
		}
		out = append(out, rowRange{from, to})
	}
	if exact {
		return out, nil
	}
	return out, where
}

// keySet returns a superset of the key values for which x can be true, and
// whether it is exact (x is true exactly on the set). The key column is a
// primary key, never NULL.
func (sc *scope) keySet(x expr, kc, depth int) (ivals, bool) {
	if depth > 64 {
		return fullSet, false
	}
	isKey := func(e expr) bool {
		c, ok := e.(*colExpr)
		return ok && c.src == 0 && c.col == kc
	}
	switch x := x.(type) {
	case *binExpr:
		switch x.Op {
		case "AND":
			l, le := sc.keySet(x.L, kc, depth+1)
			r, re := sc.keySet(x.R, kc, depth+1)
			return intersect(l, r), le && re
		case "OR":
			l, le := sc.keySet(x.L, kc, depth+1)
			r, re := sc.keySet(x.R, kc, depth+1)
			return union(l, r), le && re
		case "=", "<>", "<", "<=", ">", ">=":
			op := x.Op
			var c expr
			switch {
			case isKey(x.L):
				c = x.R
			case isKey(x.R):
				c = x.L
				op = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
			default:
				return fullSet, false
			}
			v, ok := sc.constValue(c)
			if !ok {
				return fullSet, false
			}
			return cmpSet(op, v)
		}
	case *betweenExpr:
		if !isKey(x.E) {
			return fullSet, false
		}
		lo, ok1 := sc.constValue(x.Lo)
		hi, ok2 := sc.constValue(x.Hi)
		if !ok1 || !ok2 {
			return fullSet, false
		}
		a, ea := cmpSet(">=", lo)
		b, eb := cmpSet("<=", hi)
		set, exact := intersect(a, b), ea && eb
		return negateIf(x.Not, set, exact)
	case *inExpr:
		if !isKey(x.E) {
			return fullSet, false
		}
		var set ivals
		exact := true
		for _, e := range x.List {
			v, ok := sc.constValue(e)
			if !ok {
				return fullSet, false
			}
			if v == nil {
				// "key IN (..., NULL)" is never true for the NULL;
				// "NOT IN" with a NULL is never true at all.
				if x.Not {
					return ivals{}, true
				}
				continue
			}
			s, ex := cmpSet("=", v)
			exact = exact && ex
			set = append(set, s...)
		}
		set = normalize(set)
		return negateIf(x.Not, set, exact)
	case *unaryExpr:
		if x.Op == "NOT" {
			set, exact := sc.keySet(x.E, kc, depth+1)
			if !exact {
				return fullSet, false
			}
			return complement(set), true
		}
	case *isNullExpr:
		if isKey(x.E) {
			if x.Not {
				return fullSet, true
			}
			return ivals{}, true
		}
	}
	return fullSet, false
}

// constValue evaluates a row-independent expression.
func (sc *scope) constValue(x expr) (any, bool) {
	if !isConst(x) {
		return nil, false
	}
	v, err := sc.eval(x, &env{})
	if err != nil {
		return nil, false
	}
	return v, true
}

// cmpSet is the key set of "key op v".
func cmpSet(op string, v any) (ivals, bool) {
	if v == nil {
		return ivals{}, true // comparisons with NULL are never true
	}
	r, ok := asRat(v)
	if !ok {
		s, isStr := v.(string)
		if !isStr {
			return fullSet, false
		}
		n, ok := stringToNumber(s)
		if !ok {
			return fullSet, false
		}
		r, _ = asRat(n)
	}
	floor, ceil := ratFloor(r), ratCeil(r)
	switch op {
	case "=":
		if floor != ceil {
			return ivals{}, true
		}
		return ivals{{floor, satAdd(floor, 1)}}, true
	case "<>":
		if floor != ceil {
			return fullSet, true
		}
		return complement(ivals{{floor, satAdd(floor, 1)}}), true
	case ">":
		return ivals{{satAdd(floor, 1), math.MaxInt64}}, true
	case ">=":
		return ivals{{ceil, math.MaxInt64}}, true
	case "<":
		return ivals{{math.MinInt64, ceil}}, true
	case "<=":
		return ivals{{math.MinInt64, satAdd(floor, 1)}}, true
	}
	return fullSet, false
}
