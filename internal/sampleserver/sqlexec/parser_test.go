package sqlexec

import (
	"strings"
	"testing"
)

// TestParseBatch checks which batches parse, into how many statements, and
// the error number SQL Server gives for the ones that do not.
func TestParseBatch(t *testing.T) {
	cases := []struct {
		sql   string
		stmts int   // statements when it parses
		err   int32 // error number when it does not (0 = parses)
	}{
		{"SELECT 1", 1, 0},
		{"select @@spid spid", 1, 0},
		{"SELECT @@VERSION", 1, 0},
		{"SELECT DB_NAME()", 1, 0},
		{"SELECT SERVERPROPERTY('ProductVersion')", 1, 0},
		{"set textsize 4096 ", 1, 0},
		{"SET TEXTSIZE 2147483647", 1, 0},
		{"SET FMTONLY ON SELECT * FROM dbo.poc48 SET FMTONLY OFF", 3, 0},
		{"SET FMTONLY ON; SELECT id FROM [dbo].[odbc5]; SET FMTONLY OFF", 3, 0},
		{pgloaderSetup, 8, 0},
		{pgloaderColumnsQuery, 1, 0},
		{pgloaderIndexesQuery, 1, 0},
		{pgloaderFKeysQuery, 1, 0},
		{"SET NOCOUNT, XACT_ABORT ON", 1, 0},
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", 1, 0},
		{"SET TRANSACTION ISOLATION LEVEL SNAPSHOT; SELECT 1", 2, 0},
		{"SET DATEFORMAT mdy SET LANGUAGE us_english", 2, 0},
		{"SET LOCK_TIMEOUT -1", 1, 0},
		{"USE [sample]", 1, 0},
		{"USE sample; SELECT 1", 2, 0},
		{"SELECT TOP (10) * FROM [dbo].[poc48] WHERE [id] >= @p1 AND [id] < @p2 ORDER BY [id]", 1, 0},
		{"SELECT TOP 5 a, b AS c, d e, f = g FROM t x WHERE a BETWEEN 1 AND 2 OR b IN (1, 2, 3) AND NOT c IS NULL", 1, 0},
		{"select convert(varchar(30), [d], 126), convert(varchar(35), [o], 127), convert(varchar(30), [t], 114), cast([b] as numeric(20)) from [sales].[orders];", 1, 0},
		{"SELECT [g].STAsBinary(), [h].ToString() FROM dbo.type_matrix", 1, 0},
		{"SELECT N'it''s', 'x''y', 0x0A0B, 1.5, -2, 1e3, NULL", 1, 0},
		{"SELECT [weird]]name] FROM \"dbo\".\"t\"", 1, 0},
		{"SELECT a /* comment /* nested */ still */ FROM t -- trailing", 1, 0},
		{"SELECT COUNT_BIG(*) FROM sample.dbo.poc48 WITH (NOLOCK)", 1, 0},
		{"SELECT MIN(id), MAX(id) FROM sample..poc48", 1, 0},
		{"SELECT CASE WHEN 1 = 1 THEN 'a' ELSE 'b' END, CASE x WHEN 1 THEN 2 END FROM t", 1, 0},
		{"SELECT a FROM t ORDER BY a DESC, 2 ASC", 1, 0},
		{"SELECT a FROM t1 INNER JOIN t2 ON t1.a = t2.a LEFT OUTER JOIN t3 ON t3.b = t2.b CROSS JOIN t4", 1, 0},
		{"SELECT a FROM t GROUP BY a HAVING COUNT(*) > 1", 1, 0},
		{"EXEC sp_who", 1, 0},
		{"sp_help", 1, 0},
		{"BEGIN TRAN; COMMIT", 2, 0},
		{"INSERT INTO t VALUES (1)", 1, 0},
		{"SELECT 1 SELECT 2;SELECT 3", 3, 0},
		{";;SELECT 1;;", 1, 0},
		{"SELECT a FROM t ORDER BY a OFFSET 5 ROWS FETCH NEXT 10 ROWS ONLY", 1, 0},
		{"", 0, 0},
		// Errors, with SQL Server's numbers.
		{"SELECT", 0, 102},
		{"SELECT FROM t", 0, 156},
		{"SELECT * FROM", 0, 102},
		{"SELECT 1 2", 0, 102},
		{"SELECT a FROM t WHERE", 0, 102},
		{"SELECT a FROM t WHERE a =", 0, 102},
		{"SELECT a FROM t ORDER a", 0, 102},
		{"SELECT (1", 0, 102},
		{"SELECT 1)", 0, 102},
		{"SELECT 'abc", 0, 105},
		{"SELECT [abc", 0, 105},
		{"SELECT N'abc", 0, 105},
		{"SELECT 1 /* never closed", 0, 113},
		{"SELECT a FROM t WHERE a IN ()", 0, 102},
		{"SELECT a FROM t WHERE a BETWEEN 1", 0, 102},
		{"SELECT TOP FROM t", 0, 156},
		{"SELECT CASE END", 0, 156},
		{"SELECT CAST(1 AS)", 0, 102},
		{"SELECT CONVERT(varchar(10) 1)", 0, 102},
		{"SELECT a.b.c.d.e.f FROM t", 0, 102},
		{"SET FMTONLY MAYBE", 0, 102},
		{"SET", 0, 102},
		{"SET @x = 1", 0, 137},
		{"USE", 0, 102},
		{"FROM t", 0, 156},
		{"SELECT 1 WHERE", 0, 102},
		{"SELECT TOP 1 a FROM t ORDER BY a OFFSET 1 ROWS", 0, 10741},
		{"SELECT a FROM t OFFSET 1 ROWS", 0, 102},
		{"SELECT a FROM t ORDER BY a OFFSET 1 ROWS FETCH NEXT 2 ROWS", 0, 102},
		{"SELECT 99999999999999999999999999999999999999999", 0, 1007},
		{"SELECT " + strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000), 0, 191},
		{"SELECT " + strings.Repeat("- ", 5000) + "1", 0, 191},
		{"SELECT " + strings.Repeat("NOT ", 5000) + "1", 0, 191},
	}
	for _, c := range cases {
		stmts, err := parseBatch(c.sql)
		name := c.sql
		if len(name) > 60 {
			name = name[:60]
		}
		if c.err != 0 {
			if got := errNumber(err); got != c.err {
				t.Errorf("%q: error %v (number %d), want number %d", name, err, got, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		if len(stmts) != c.stmts {
			t.Errorf("%q: %d statements, want %d", name, len(stmts), c.stmts)
		}
	}
}

// TestParseErrorText checks message texts and line numbers of syntax
// errors, which clients show to users.
func TestParseErrorText(t *testing.T) {
	cases := []struct {
		sql  string
		msg  string
		line int32
	}{
		{"SELECT 1 2", "Incorrect syntax near '2'.", 1},
		{"SELECT a\nFROM t\nWHERE a = = 1", "Incorrect syntax near '='.", 3},
		{"SELECT FROM t", "Incorrect syntax near the keyword 'FROM'.", 1},
		{"SELECT 'abc", "Unclosed quotation mark after the character string 'abc'.", 1},
	}
	for _, c := range cases {
		_, err := parseBatch(c.sql)
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%q: %v, want *Error", c.sql, err)
			continue
		}
		if e.Message != c.msg || e.Line != c.line || e.Class != 15 {
			t.Errorf("%q: %q line %d class %d, want %q line %d class 15", c.sql, e.Message, e.Line, e.Class, c.msg, c.line)
		}
	}
}

func TestLexer(t *testing.T) {
	toks, err := lex("SELECT [a]]b], N'x''y', @p1, @@SPID, 0xFF, 1.5e3, <>, != -- c\n/* d */ \"q\"")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k    tokKind
		text string
	}{
		{tkIdent, "SELECT"}, {tkQIdent, "a]b"}, {tkOp, ","}, {tkNString, "x'y"}, {tkOp, ","}, {tkVar, "p1"}, {tkOp, ","},
		{tkSysVar, "SPID"}, {tkOp, ","}, {tkBinary, "FF"}, {tkOp, ","}, {tkNumber, "1.5e3"}, {tkOp, ","}, {tkOp, "<>"},
		{tkOp, ","}, {tkOp, "!="}, {tkQIdent, "q"}, {tkEOF, ""},
	}
	if len(toks) != len(want) {
		t.Fatalf("%d tokens, want %d: %+v", len(toks), len(want), toks)
	}
	for i, w := range want {
		if toks[i].Kind != w.k || toks[i].Text != w.text {
			t.Errorf("token %d = %v %q, want %v %q", i, toks[i].Kind, toks[i].Text, w.k, w.text)
		}
	}
	if toks[len(toks)-2].Line != 2 {
		t.Errorf("line of last token = %d, want 2", toks[len(toks)-2].Line)
	}
}
