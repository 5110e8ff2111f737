package catalog

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

var identRE = regexp.MustCompile(`^(\[[^\]]+\]|[A-Za-z_#@][A-Za-z0-9_#@$ ]*)$`)

// SplitTableName splits "schema.table", "[schema].[table]" or "table"
// (schema dbo).
func SplitTableName(s string) (schema, table string, err error) {
	parts, err := splitIdent(s)
	if err != nil {
		return "", "", err
	}
	switch len(parts) {
	case 1:
		return "dbo", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("table %q: use schema.table", s)
}

// splitIdent splits a dotted, optionally bracketed, identifier.
func splitIdent(s string) ([]string, error) {
	var parts []string
	for len(s) > 0 {
		var part string
		if s[0] == '[' {
			end := closing(s, 0, ']')
			if end < 0 {
				return nil, fmt.Errorf("identifier %q: unterminated [", s)
			}
			part = strings.ReplaceAll(s[1:end], "]]", "]")
			s = s[end+1:]
		} else {
			dot := strings.IndexByte(s, '.')
			if dot < 0 {
				dot = len(s)
			}
			part = strings.TrimSpace(s[:dot])
			if !identRE.MatchString(part) {
				return nil, fmt.Errorf("identifier %q: bracket names with special characters, e.g. [my table]", part)
			}
			s = s[dot:]
		}
		if part == "" {
			return nil, errors.New("empty identifier")
		}
		parts = append(parts, part)
		if len(s) > 0 {
			if s[0] != '.' || len(s) == 1 {
				return nil, fmt.Errorf("identifier: unexpected %q", s)
			}
			s = s[1:]
		}
	}
	if len(parts) == 0 {
		return nil, errors.New("empty identifier")
	}
	return parts, nil
}

// QuoteIdent brackets a SQL Server identifier.
func QuoteIdent(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }

// quoteName is schema.name, both bracketed.
func quoteName(schema, name string) string { return QuoteIdent(schema) + "." + QuoteIdent(name) }

// quoteString is s as an N'...' literal.
func quoteString(s string) string { return "N'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Filter selects tables (and views) by name. Each pattern is
// "schema.table" with the wildcards * (any run of characters) and ?
// (one character), matched case-insensitively as SQL Server matches
// identifiers in a case-insensitive database; a pattern without a dot
// names a table of any schema ("orders" matches dbo.orders and
// sales.orders). Brackets quote a part literally: "[sales].[order*]"
// matches only a table named "order*".
type Filter struct {
	// Include lists the patterns a table must match (any one); empty
	// includes every table.
	Include []string
	// Exclude lists patterns that remove a table Include selected.
	Exclude []string
}

// pattern is a parsed Filter pattern: schema and table globs, or literal
// names when quoted; an empty schema matches every schema.
type pattern struct {
	schema, table string
	litS, litT    bool
}

func parsePattern(p string) (pattern, error) {
	var parts []string
	var lits []bool
	rest := strings.TrimSpace(p)
	for {
		if rest == "" {
			return pattern{}, fmt.Errorf("pattern %q: empty name", p)
		}
		part, lit := "", false
		if rest[0] == '[' {
			end := closing(rest, 0, ']')
			if end < 0 {
				return pattern{}, fmt.Errorf("pattern %q: unterminated [", p)
			}
			part, lit, rest = strings.ReplaceAll(rest[1:end], "]]", "]"), true, rest[end+1:]
		} else {
			dot := strings.IndexByte(rest, '.')
			if dot < 0 {
				dot = len(rest)
			}
			part, rest = strings.TrimSpace(rest[:dot]), rest[dot:]
			if strings.ContainsAny(part, "[]") {
				return pattern{}, fmt.Errorf("pattern %q: bracket a whole name ([my.table]) or use * and ? wildcards", p)
			}
		}
		if part == "" {
			return pattern{}, fmt.Errorf("pattern %q: empty name", p)
		}
		parts, lits = append(parts, part), append(lits, lit)
		if rest == "" {
			break
		}
		if rest[0] != '.' {
			return pattern{}, fmt.Errorf("pattern %q: unexpected %q", p, rest)
		}
		rest = rest[1:]
	}
	switch len(parts) {
	case 1:
		return pattern{table: parts[0], litT: lits[0]}, nil
	case 2:
		return pattern{schema: parts[0], litS: lits[0], table: parts[1], litT: lits[1]}, nil
	}
	return pattern{}, fmt.Errorf("pattern %q: use table or schema.table", p)
}

// closing returns the index of the q that closes the quote or bracket
// opened at s[open] (a doubled q inside stands for itself), or -1.
func closing(s string, open int, q byte) int {
	for i := open + 1; i < len(s); i++ {
		if s[i] != q {
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			i++
			continue
		}
		return i
	}
	return -1
}

func (pt pattern) match(schema, table string) bool {
	return matchPart(pt.schema, pt.litS, schema) && matchPart(pt.table, pt.litT, table)
}

func matchPart(p string, lit bool, s string) bool {
	switch {
	case p == "":
		return true
	case lit:
		return strings.EqualFold(p, s)
	}
	return glob(strings.ToLower(p), strings.ToLower(s))
}

// glob matches s against p, where * matches any run of bytes and ? one
// character; nothing else is special (so names with \ or % match
// themselves).
func glob(p, s string) bool {
	star, resume := -1, 0
	i, j := 0, 0
	for j < len(s) {
		switch {
		case i < len(p) && p[i] == '*':
			star, resume = i, j
			i++
		case i < len(p) && (p[i] == '?' || p[i] == s[j]):
			if p[i] == '?' {
				_, n := utf8.DecodeRuneInString(s[j:])
				j += n
			} else {
				j++
			}
			i++
		case star >= 0:
			i = star + 1
			_, n := utf8.DecodeRuneInString(s[resume:])
			resume += n
			j = resume
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// Validate reports the first pattern that does not parse.
func (f Filter) Validate() error {
	for _, p := range append(append([]string(nil), f.Include...), f.Exclude...) {
		if _, err := parsePattern(p); err != nil {
			return err
		}
	}
	return nil
}

// Match reports whether schema.table passes the filter. Patterns that do
// not parse match nothing (Validate reports them).
func (f Filter) Match(schema, table string) bool {
	in := len(f.Include) == 0
	for _, p := range f.Include {
		if pt, err := parsePattern(p); err == nil && pt.match(schema, table) {
			in = true
			break
		}
	}
	if !in {
		return false
	}
	for _, p := range f.Exclude {
		if pt, err := parsePattern(p); err == nil && pt.match(schema, table) {
			return false
		}
	}
	return true
}

// exact returns the one table the filter can select when it has a single
// include pattern naming a schema and a table without wildcards, so the
// catalog query can ask for that table alone.
func (f Filter) exact() (schema, table string, ok bool) {
	if len(f.Include) != 1 {
		return "", "", false
	}
	pt, err := parsePattern(f.Include[0])
	if err != nil || pt.schema == "" {
		return "", "", false
	}
	wild := func(s string, lit bool) bool { return !lit && strings.ContainsAny(s, "*?") }
	if wild(pt.schema, pt.litS) || wild(pt.table, pt.litT) {
		return "", "", false
	}
	return pt.schema, pt.table, true
}
