package migrate

import (
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// testScope is a table of a few columns for the translation tests.
type testScope map[string]colInfo

func (s testScope) column(parts []string) (colInfo, error) {
	c, ok := s[strings.ToLower(parts[len(parts)-1])]
	if !ok {
		return colInfo{}, untranslatable("unknown column %s", strings.Join(parts, "."))
	}
	return c, nil
}

func (s testScope) sequence(parts []string) (string, error) {
	return postgres.QuoteIdent(strings.ToLower(parts[0])) + "." + postgres.QuoteIdent(strings.ToLower(parts[1])), nil
}

func (s testScope) pgType(t string) (string, class, error) { return pgType(t) }

var cols = testScope{
	"qty":    {sql: "qty", class: cNum},
	"price":  {sql: "price", class: cNum},
	"name":   {sql: "name", class: cText},
	"code":   {sql: "code", class: cText, ci: true},
	"key":    {sql: "key", class: cText, ci: true, nondet: true},
	"active": {sql: "active", class: cBool},
	"Order":  {sql: `"Order"`, class: cNum},
	"at":     {sql: "at", class: cTime},
}

func init() { cols["order"] = cols["Order"] }

func TestTranslateExpr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"getdate()", "now()"},
		{"sysdatetime()", "now()"},
		{"SYSDATETIMEOFFSET()", "now()"},
		{"CURRENT_TIMESTAMP", "now()"},
		{"getutcdate()", "(now() AT TIME ZONE 'UTC')"},
		{"sysutcdatetime()", "(now() AT TIME ZONE 'UTC')"},
		{"newid()", "gen_random_uuid()"},
		{"newsequentialid()", "gen_random_uuid()"},
		{"((0))", "0"},
		{"((-1.5))", "-1.5"},
		{"(N'it''s')", "'it''s'"},
		{"('')", "''"},
		{"(0x0A1b)", `'\x0a1b'::bytea`},
		{"(NULL)", "NULL"},
		{"(NEXT VALUE FOR [warehouse].[movement_seq])", `nextval('warehouse.movement_seq'::regclass)`},
		{"([qty]*[price])", "qty * price"},
		{"([qty]+(1))*(2)", "(qty + 1) * 2"},
		{"[name]+N' x'", "name || ' x'"},
		{"isnull([name],'')", "coalesce(name, '')"},
		{"len([name])", "length(rtrim(name))"},
		{"charindex('x',[name])", "strpos(name, 'x')"},
		{"upper(ltrim([name]))", "upper(ltrim(name))"},
		{"ceiling([price])", "ceil(price)"},
		{"year([at])", "CAST(EXTRACT(YEAR FROM at) AS integer)"},
		{"dateadd(day,(30),[at])", "at + 30 * interval '1 day'"},
		{"CAST([qty] AS decimal(10,2))", "CAST(qty AS numeric(10,2))"},
		{"CONVERT([varchar](20),[qty])", "CAST(qty AS varchar(20))"},
		{"([qty]>=(0) AND [price]>(0))", "(qty >= 0) AND (price > 0)"},
		{"([qty]<>(0) OR NOT [qty]<(5))", "(qty <> 0) OR (NOT (qty < 5))"},
		{"[qty]!=(1)", "qty <> 1"},
		{"[qty]!<(1)", "qty >= 1"},
		{"[qty]^(3)", "qty # 3"},
		{"[active]=(1)", "active = true"},
		{"[active]<>(0)", "active <> false"},
		{"[active]=[qty]", "(active)::integer = qty"},
		{"[qty] IN ((1),(2),(3))", "qty IN (1, 2, 3)"},
		{"[qty] NOT BETWEEN (1) AND (10)", "qty NOT BETWEEN 1 AND 10"},
		{"[name] IS NOT NULL", "name IS NOT NULL"},
		{"[name] like 'a%'", "name LIKE 'a%'"},
		{"[name] not like 'a_\\%'", "name NOT LIKE 'a_\\%' ESCAPE ''"},
		{"[code] like 'a%'", "code ILIKE 'a%'"},
		{"[name] like '[A-Z]%[^0-9].'", "name ~ '^[A-Z].*[^0-9]\\.$'"},
		{"[code] like '[A-Z][A-Z]-[0-9]'", "code ~* '^[A-Z][A-Z]-[0-9]$'"},
		{"[code] not like '[ab]'", "code !~* '^[ab]$'"},
		{"[key] like 'k%'", `key COLLATE "default" ILIKE 'k%'`},
		{"case when [qty]<[price] then (1) else (0) end", "CASE WHEN qty < price THEN 1 ELSE 0 END"},
		{"case [active] when (1) then 'y' else 'n' end", "CASE active WHEN true THEN 'y' ELSE 'n' END"},
		{"[Order]+(1) -- a comment", `"Order" + 1`},
		{"/* a /* nested */ comment */ [order]*(2)", `"Order" * 2`},
		{"[Order]]x]", ""},
	} {
		got, _, _, err := translateExpr(catalog.StripParens(c.in), cols)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s: translated to %s, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.in, got, err, c.want)
		}
	}
}

// What has no translation says why, and nothing is guessed.
func TestUntranslated(t *testing.T) {
	for in, why := range map[string]string{
		"datediff(day,[at],getdate())":      "datediff",
		"CONVERT([varchar](10),[at],(120))": "style",
		"[qty] IN (SELECT 1)":               "IN (SELECT",
		"(SELECT max([qty]))":               "subquery",
		"[dbo].[fn_price]([qty])":           "user-defined function",
		"host_name()":                       "host_name",
		"[name] like [code]":                "not a literal",
		"[nope]+(1)":                        "unknown column",
		"[at]+(1)":                          "datetime + number",
		"'abc":                              "unterminated",
		"[qty] LIKE 'x' ESCAPE '!'":         "ESCAPE",
		"[name]-[name]":                     "operator - on text",
		"-[active]":                         "arithmetic on a bit",
		"[qty] +":                           "ends early",
		"[qty] [price]":                     "unexpected text",
	} {
		_, _, _, err := translateExpr(in, cols)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error mentioning %q", in, err, why)
		}
	}
}

// A number given to a bit column is a boolean default; notes say what is
// approximate.
func TestTranslateDefault(t *testing.T) {
	for _, c := range []struct {
		in     string
		target class
		want   string
	}{
		{"((1))", cBool, "true"},
		{"((0))", cBool, "false"},
		{"((1))", cNum, "1"},
		{"(getdate())", cTime, "now()"},
	} {
		got, _, err := translateDefault(catalog.StripParens(c.in), c.target, cols)
		if err != nil || got != c.want {
			t.Errorf("%s for %d: %s (%v), want %s", c.in, c.target, got, err, c.want)
		}
	}
	_, notes, _ := translateDefault("newsequentialid()", cUUID, cols)
	if len(notes) != 1 || !strings.Contains(notes[0], "not increasing") {
		t.Errorf("newsequentialid notes %q", notes)
	}
	_, _, notes, _ = translateExpr("[code]='ABC'", cols)
	if len(notes) != 1 || !strings.Contains(notes[0], "case-sensitively") {
		t.Errorf("case-insensitive comparison notes %q", notes)
	}
}

// A datetimeoffset default gives the timestamptz its instant and the
// offset column its offset; what has no offset translation gives neither.
func TestTranslateZonedDefault(t *testing.T) {
	for _, c := range []struct{ in, instant, offset, why string }{
		{in: "(sysdatetimeoffset())", instant: "now()", offset: "(EXTRACT(TIMEZONE FROM now()) / 60)::smallint"},
		{in: "(getutcdate())", instant: "now()", offset: "0"},
		{in: "(sysutcdatetime())", instant: "now()", offset: "0"},
		{in: "(getdate())", instant: "now()", offset: "0"},
		{in: "(CURRENT_TIMESTAMP)", instant: "now()", offset: "0"},
		{in: "('2024-05-01 10:00:00.1234567 +02:00')", instant: "'2024-05-01 10:00:00.1234567 +02:00'", offset: "120"},
		{in: "('2024-05-01 10:00 -09:30')", instant: "'2024-05-01 10:00 -09:30'", offset: "-570"},
		{in: "('2024-05-01')", instant: "(CAST('2024-05-01' AS timestamp) AT TIME ZONE 'UTC')", offset: "0"},
		{in: "('2024-05-01 10:00')", instant: "(CAST('2024-05-01 10:00' AS timestamp) AT TIME ZONE 'UTC')", offset: "0"},
		{in: "(NULL)", instant: "NULL", offset: "NULL"},
		{in: "('2024-05-01 10:00 +15:00')", why: "out of range"},
		{in: "(todatetimeoffset(getdate(),'+01:00'))", why: "todatetimeoffset"},
		{in: "(dateadd(hour,(1),sysdatetimeoffset()))", why: "offset of this default"},
	} {
		instant, offset, _, err := translateZonedDefault(catalog.StripParens(c.in), cols)
		if c.why != "" {
			if err == nil || !strings.Contains(err.Error(), c.why) {
				t.Errorf("%s: %q, %q, %v; want an error mentioning %q", c.in, instant, offset, err, c.why)
			}
			continue
		}
		if err != nil || instant != c.instant || offset != c.offset {
			t.Errorf("%s: %q, %q (%v), want %q, %q", c.in, instant, offset, err, c.instant, c.offset)
		}
	}
	if _, _, notes, _ := translateZonedDefault("sysdatetimeoffset()", cols); len(notes) != 1 || !strings.Contains(notes[0], "TimeZone") {
		t.Errorf("sysdatetimeoffset notes %q", notes)
	}
}
