package sqlexec

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tkEOF     tokKind = iota
	tkIdent           // unquoted word (keywords included)
	tkQIdent          // [bracketed] or "quoted" identifier
	tkString          // 'text'
	tkNString         // N'text'
	tkNumber          // 12, 1.5, 1e3
	tkBinary          // 0x0A0B
	tkVar             // @name (Text without the @)
	tkSysVar          // @@name (Text without the @@)
	tkOp              // punctuation and operators
)

// token is one lexical token. Text holds the identifier, the decoded string
// or the operator; Raw the source text (for error messages); Line the
// 1-based line number in the batch.
type token struct {
	Kind tokKind
	Text string
	Raw  string
	Line int32
	Pos  int
}

func (t token) is(kw string) bool { return t.Kind == tkIdent && strings.EqualFold(t.Text, kw) }

func (t token) isOp(op string) bool { return t.Kind == tkOp && t.Text == op }

// maxTokens bounds the token count of one batch so a hostile batch cannot
// make the parser allocate without limit (the server also bounds batch size).
const maxTokens = 1 << 20

// lex splits a batch into tokens. Comments (-- and nested /* */) are
// skipped. An unterminated string or identifier gives SQL Server's errors
// 105 / 102.
func lex(src string) ([]token, error) {
	var toks []token
	line := int32(1)
	i := 0
	for i < len(src) {
		if len(toks) >= maxTokens {
			return nil, newError(102, 15, 1, line, "Incorrect syntax near '%s'.", truncate(src[i:], 40))
		}
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			depth := 0
			start := i
			startLine := line
			for i < len(src) {
				if src[i] == '/' && i+1 < len(src) && src[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if src[i] == '*' && i+1 < len(src) && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				if src[i] == '\n' {
					line++
				}
				i++
			}
			if depth != 0 {
				_ = start
				return nil, newError(113, 15, 1, startLine, "Missing end comment mark '*/'.")
			}
			continue
		}
		start := i
		tok := token{Line: line, Pos: start}
		switch {
		case c == '\'' || c == '[' || c == '"' || (c == 'N' || c == 'n') && i+1 < len(src) && src[i+1] == '\'':
			// 'string', N'string', [identifier], "identifier".
			at, kind, end := i, tkString, c
			switch c {
			case '[':
				kind, end = tkQIdent, ']'
			case '"':
				kind = tkQIdent
			case 'N', 'n':
				at, kind, end = i+1, tkNString, '\''
			}
			s, n, nl, ok := lexQuoted(src[at:], end)
			if !ok {
				return nil, newError(105, 15, 1, line, "Unclosed quotation mark after the character string '%s'.", truncate(src[at+1:], 100))
			}
			tok.Kind, tok.Text = kind, s
			i = at + n
			line += nl
		case c == '0' && i+1 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X'):
			j := i + 2
			for j < len(src) && isHex(src[j]) {
				j++
			}
			tok.Kind, tok.Text = tkBinary, src[i+2:j]
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j < len(src) && src[j] == '.' {
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && isDigit(src[k]) {
					for k < len(src) && isDigit(src[k]) {
						k++
					}
					j = k
				}
			}
			tok.Kind, tok.Text = tkNumber, src[i:j]
			i = j
		case c == '@':
			j := i + 1
			kind := tkVar
			if j < len(src) && src[j] == '@' {
				j++
				kind = tkSysVar
			}
			k := identEnd(src, j)
			tok.Kind, tok.Text = kind, src[j:k]
			i = k
		default:
			r, sz := utf8.DecodeRuneInString(src[i:])
			if isIdentStart(r) {
				j := identEnd(src, i+sz)
				tok.Kind, tok.Text = tkIdent, src[i:j]
				i = j
				break
			}
			tok.Kind = tkOp
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<>", "!=", "<=", ">=", "!<", "!>":
				tok.Text = two
				i += 2
			default:
				if r == utf8.RuneError && sz <= 1 {
					tok.Text = src[i : i+1]
					i++
				} else {
					tok.Text = src[i : i+sz]
					i += sz
				}
			}
		}
		tok.Raw = src[start:i]
		toks = append(toks, tok)
	}
	toks = append(toks, token{Kind: tkEOF, Line: line, Pos: len(src)})
	return toks, nil
}

// lexQuoted reads a quoted run starting at s[0] (the opening quote) closed
// by q, where a doubled q stands for one. It returns the content, the bytes
// consumed and the number of newlines inside.
func lexQuoted(s string, q byte) (string, int, int32, bool) {
	var b strings.Builder
	var nl int32
	i := 1
	simple := true
	for i < len(s) {
		c := s[i]
		if c == q {
			if i+1 < len(s) && s[i+1] == q {
				if simple {
					b.WriteString(s[1:i])
					simple = false
				}
				b.WriteByte(q)
				i += 2
				continue
			}
			if simple {
				return s[1:i], i + 1, nl, true
			}
			return b.String(), i + 1, nl, true
		}
		if c == '\n' {
			nl++
		}
		if !simple {
			b.WriteByte(c)
		}
		i++
	}
	return "", 0, 0, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isIdentStart(r rune) bool {
	return r == '_' || r == '#' || (r < utf8.RuneSelf && ((r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))) ||
		(r >= utf8.RuneSelf && r != utf8.RuneError && unicode.IsLetter(r))
}

func isIdentRune(r rune) bool {
	return isIdentStart(r) || r == '$' || r == '@' || (r >= '0' && r <= '9') ||
		(r >= utf8.RuneSelf && r != utf8.RuneError && unicode.IsDigit(r))
}

// identEnd returns the end of the identifier characters of src from i on.
func identEnd(src string, i int) int {
	for i < len(src) {
		r, sz := utf8.DecodeRuneInString(src[i:])
		if !isIdentRune(r) {
			break
		}
		i += sz
	}
	return i
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
