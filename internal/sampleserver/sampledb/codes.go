package sampledb

import (
	"fmt"
	"strings"
)

// OptionalTables are the tables that exist only when Config.Rows names
// them (with their row count): the default database, which other
// packages' golden files describe table by table, stays as it is.
var OptionalTables = []string{"dbo.codes"}

// codeWords are the stems of dbo.codes' keys: some capitalised, so that
// an order by bytes and the collation's order disagree between stems too.
var codeWords = []string{"apple", "Banana", "cherry", "Damson", "elder", "Fig", "grape", "Hazel", "kiwi", "Lime", "mango", "Olive"}

// CodeVariants is the number of spellings each code of dbo.codes comes
// in, equal under its case-insensitive collation and distinct as bytes:
// lower case, upper case, capitalised, and lower case with two trailing
// blanks.
const CodeVariants = 4

// codes adds dbo.codes, when asked for: a table clustered on a string
// key, for the code that splits a table into key ranges on one.
//
//   - id int NOT NULL, a nonclustered primary key, i+1;
//   - code varchar(24) NOT NULL (SQL_Latin1_General_CP1_CI_AS) with a
//     clustered index that is not unique: row i holds code k = i/4 of
//     stem codeWords[hash(k)], "stem-k", spelled as variant i%4
//     (CodeVariants), so every value appears in four spellings that the
//     collation compares as equal; one row in eight (whole groups of
//     four) holds instead a spelling of "none", a value shared by
//     hundreds of rows;
//   - ncode nvarchar(24) NULL, the same text with "é" for "e", NULL in
//     one row of sixteen;
//   - cscode varchar(24) NOT NULL COLLATE Latin1_General_CS_AS and bcode
//     nvarchar(24) NOT NULL COLLATE Latin1_General_BIN2: code again, under
//     a case-sensitive and a binary collation, where the four spellings
//     are four values (ordered by case-folded text then lower case first,
//     and by code point);
//   - label nvarchar(40).
//
// Rows are not in key order, so a TABLESAMPLE of runs of rows samples
// keys from all over the key's range.
func (b *builder) codes() {
	if !b.optional("dbo.codes") {
		return
	}
	t := b.newTable("dbo", "codes", []colDef{
		{name: "id", sqlType: "int"},
		{name: "code", sqlType: "varchar(24)"},
		{name: "ncode", sqlType: "nvarchar(24)", nullable: true},
		{name: "label", sqlType: "nvarchar(40)"},
		{name: "cscode", sqlType: "varchar(24)", coll: CollLatin1CS},
		{name: "bcode", sqlType: "nvarchar(24)", coll: CollLatin1BIN2},
	})
	t.setKey("id", false)
	t.Indexes = append(t.Indexes, Index{Name: "CIX_codes_code", Columns: []string{"code"}, Clustered: true})
	salt := mix(uint64(b.db.seed) ^ 0xC0DE5)
	t.rowFn = func(i int64, dst []any) []any {
		k := i / CodeVariants
		h := mix(salt ^ uint64(k)*golden)
		stem := fmt.Sprintf("%s-%d", codeWords[h%uint64(len(codeWords))], k)
		if h>>8&7 == 0 {
			stem = "none"
		}
		code := CodeVariant(stem, int(i%CodeVariants))
		var ncode any
		if (h>>12^uint64(i))&15 != 0 {
			ncode = strings.ReplaceAll(code, "e", "é")
		}
		return append(dst, i+1, code, ncode, fmt.Sprintf("%s %d", productNoun[h>>16%uint64(len(productNoun))], i+1), code, code)
	}
}

// CodeVariant is spelling v (0 to CodeVariants-1) of stem, as dbo.codes
// spells its keys.
func CodeVariant(stem string, v int) string {
	switch v {
	case 1:
		return strings.ToUpper(stem)
	case 2:
		return strings.ToUpper(stem[:1]) + strings.ToLower(stem[1:])
	case 3:
		return strings.ToLower(stem) + "  "
	}
	return strings.ToLower(stem)
}
