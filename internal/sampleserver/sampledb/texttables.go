package sampledb

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
)

// TextSamples are the strings of the text tables, per table: every one is
// representable in the table's code page. Row i holds
// fmt.Sprintf("%s #%d", samples[(i+r)%len(samples)], i+1), where the
// rotation r depends on the seed, in its varchar, nvarchar, varchar(max) and
// text columns; every len(samples)-th row (after the first round) is NULL
// in all of them.
var TextSamples = map[string][]string{
	"text_cp1252": {"café", "crème brûlée", "Straße", "€uro 12,50", "naïve façade", "Œuvre", "smørrebrød",
		"¿Qué tal?", "Ñandú", "© ® ™ ±", "Ångström", "“quotes” – dash…", "plain ASCII"},
	"text_cp1251": {"Привет, мир", "Съешь же ещё этих мягких французских булок", "Ёлка", "Україна ї є ґ",
		"Беларусь ў", "Српски ђ ћ џ", "№ 5 — «цитата»", "€ 10", "latin + кириллица"},
	"text_cp932": {"日本語", "カタカナ", "ひらがな", "漢字テキスト", "ｶﾀｶﾅ半角", "東京都渋谷区", "こんにちは世界",
		"ASCII と 日本語", "全角ＡＢＣ１２３"},
	"text_utf8": {"emoji 😀🚀", "𝄞 music", "mixed é ü 中文 😀", "Ελληνικά", "עברית", "👩‍👩‍👧 family", "Привет", "plain"},
}

// textTables adds the code-page and UTF-8 text tables.
func (b *builder) textTables() {
	for _, tt := range []struct {
		name string
		coll decode.Collation
		text bool
	}{
		{"text_cp1252", CollLatin1, true},
		{"text_cp1251", CollCyrillic, true},
		{"text_cp932", CollJapanese, true},
		{"text_utf8", CollUTF8, false},
	} {
		defs := []colDef{
			{name: "id", sqlType: b.keyType("dbo." + tt.name)},
			{name: "v", sqlType: "varchar(100)", nullable: true, coll: tt.coll},
			{name: "n", sqlType: "nvarchar(100)", nullable: true},
			{name: "vmax", sqlType: "varchar(max)", nullable: true, coll: tt.coll},
		}
		if tt.text {
			defs = append(defs, colDef{name: "t", sqlType: "text", nullable: true, coll: tt.coll})
		}
		t := b.newTable("dbo", tt.name, defs)
		t.setKey("id", true)
		if tt.coll.UTF8() {
			t.Features = map[int]string{1: "UTF8_SUPPORT", 3: "UTF8_SUPPORT"}
		}
		samples := TextSamples[tt.name]
		for _, s := range samples {
			mustEncodeText(tt.coll, s) // every sample must be representable
		}
		ncol := len(defs)
		rot := int64(mix(uint64(b.db.seed)^strHash(tt.name)) % uint64(len(samples)))
		t.rowFn = func(i int64, dst []any) []any {
			s := fmt.Sprintf("%s #%d", samples[(i+rot)%int64(len(samples))], i+1)
			dst = append(dst, i+1)
			if i%int64(len(samples)) == int64(len(samples))-1 && i > int64(len(samples)) {
				for range ncol - 1 {
					dst = append(dst, nil) // a NULL row now and then
				}
				return dst
			}
			for range ncol - 1 {
				dst = append(dst, s)
			}
			return dst
		}
	}
}
