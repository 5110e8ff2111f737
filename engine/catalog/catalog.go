package catalog

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
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
			end := strings.Index(s, "]")
			for end >= 0 && end+1 < len(s) && s[end+1] == ']' { // ]] escapes ]
				next := strings.Index(s[end+2:], "]")
				if next < 0 {
					end = -1
					break
				}
				end += 2 + next
			}
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

// Override replaces one column's SELECT expression; Expr "raw" selects
// the column as it is, without the default conversion.
type Override struct {
	Column string
	Expr   string
}

// UnknownColumnError is a column named in a column list or an override
// that the table does not have. Field says which list named it.
type UnknownColumnError struct {
	Field         string // "columns" or "convert"
	Column        string
	Schema, Table string
}

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("column %q is not in %s.%s", e.Column, e.Schema, e.Table)
}

// DescribeTable returns the columns of schema.table as the server
// describes them (a zero-row SELECT), so the engine can write the SELECT.
func DescribeTable(ctx context.Context, conn *session.Conn, schema, table string, timeout session.Timeout) ([]decode.Column, error) {
	var ms metaSink
	q := "SELECT TOP (0) * FROM " + QuoteIdent(schema) + "." + QuoteIdent(table)
	if _, err := conn.Query(ctx, session.Query{SQL: q, Timeout: timeout}, &ms); err != nil {
		return nil, fmt.Errorf("describing %s.%s: %w", schema, table, err)
	}
	if ms.cols == nil {
		return nil, fmt.Errorf("describing %s.%s: the server returned no columns", schema, table)
	}
	return ms.cols, nil
}

// QueryCount runs a query returning one integer.
func QueryCount(ctx context.Context, conn *session.Conn, q string, timeout session.Timeout) (int64, error) {
	var c decode.Capture
	if _, err := conn.Query(ctx, session.Query{SQL: q, Timeout: timeout}, &c); err != nil {
		return 0, err
	}
	if len(c.Rows) != 1 || len(c.Rows[0]) != 1 {
		return 0, fmt.Errorf("%s: expected one value, got %d rows", q, len(c.Rows))
	}
	switch v := c.Rows[0][0].(type) {
	case int64:
		return v, nil
	case nil:
		return 0, fmt.Errorf("%s: NULL count", q)
	default:
		return 0, fmt.Errorf("%s: unexpected count type %T", q, v)
	}
}

// BuildSelect writes the SELECT for a table extract: the chosen columns
// (all, in table order, by default) with the default conversions of
// DESIGN.md §7 for types no sink can take raw (spatial as WKB with
// STAsBinary(), hierarchyid as text with ToString()), overridden by convert.
func BuildSelect(schema, table string, cols []decode.Column, want []string, convert []Override, where string) (string, error) {
	byName := make(map[string]int, len(cols))
	for i, c := range cols {
		byName[strings.ToLower(c.Name)] = i
	}
	conv := map[string]string{}
	for _, c := range convert {
		if _, ok := byName[strings.ToLower(c.Column)]; !ok {
			return "", &UnknownColumnError{Field: "convert", Column: c.Column, Schema: schema, Table: table}
		}
		conv[strings.ToLower(c.Column)] = c.Expr
	}
	var idx []int
	if len(want) == 0 {
		for i := range cols {
			idx = append(idx, i)
		}
	} else {
		for _, w := range want {
			i, ok := byName[strings.ToLower(w)]
			if !ok {
				return "", &UnknownColumnError{Field: "columns", Column: w, Schema: schema, Table: table}
			}
			idx = append(idx, i)
		}
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	for k, i := range idx {
		if k > 0 {
			b.WriteString(", ")
		}
		c := &cols[i]
		q := QuoteIdent(c.Name)
		expr, ok := conv[strings.ToLower(c.Name)]
		switch {
		case ok && strings.EqualFold(expr, "raw"):
			b.WriteString(q)
		case ok:
			b.WriteString(expr + " AS " + q)
		default:
			if d := DefaultConversion(c); d != "" {
				b.WriteString(d + " AS " + q)
			} else {
				b.WriteString(q)
			}
		}
	}
	b.WriteString(" FROM " + QuoteIdent(schema) + "." + QuoteIdent(table))
	if where != "" {
		b.WriteString(" WHERE " + where)
	}
	return b.String(), nil
}

// DefaultConversion is the SELECT expression the engine uses for a column
// whose type is exported converted (DESIGN.md §7), or "" for none.
func DefaultConversion(c *decode.Column) string {
	if c.Type.Type != decode.TypeUDT {
		return ""
	}
	q := QuoteIdent(c.Name)
	switch strings.ToLower(c.Type.UDTName) {
	case "geography", "geometry":
		return q + ".STAsBinary()"
	case "hierarchyid":
		return q + ".ToString()"
	}
	return ""
}

// metaSink records the columns of the first result set and ignores rows.
type metaSink struct {
	decode.Capture
	cols []decode.Column
}

func (m *metaSink) Columns(cols []decode.Column, modes []decode.Mode) error {
	if m.cols == nil {
		m.cols = append([]decode.Column(nil), cols...)
	}
	for i := range modes {
		modes[i] = decode.ModeSkip
	}
	return nil
}

func (m *metaSink) EndRow() error { return nil }

// ConvertedColumns returns the columns as sinks receive them when the
// engine writes the SELECT with its default conversions (DefaultConversion):
// spatial types arrive as varbinary(max) WKB, hierarchyid as nvarchar(4000).
func ConvertedColumns(cols []decode.Column) []decode.Column {
	out := append([]decode.Column(nil), cols...)
	for i := range out {
		c := &out[i]
		if c.Type.Type != decode.TypeUDT {
			continue
		}
		switch strings.ToLower(c.Type.UDTName) {
		case "geography", "geometry":
			c.Type = decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: decode.MaxVarLen}
		case "hierarchyid":
			c.Type = decode.TypeInfo{Type: decode.TypeNVarChar, Size: 8000, Collation: decode.Collation{Info: 0x00D00409, SortID: 52}}
		}
	}
	return out
}
