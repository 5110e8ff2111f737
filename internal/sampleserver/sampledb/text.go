package sampledb

import (
	"fmt"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"

	"github.com/tdsextract/tdsextract/decode"
)

// codePageEncoding returns the x/text encoding of a collation's code page,
// or nil for UTF-8 collations.
func codePageEncoding(c decode.Collation) encoding.Encoding {
	if c.UTF8() {
		return nil
	}
	switch c.LCID() {
	case 0x419:
		return charmap.Windows1251
	case 0x411:
		return japanese.ShiftJIS
	}
	return charmap.Windows1252
}

// CodePage returns the Windows code page of a collation of the sample
// database (65001 for UTF-8 collations).
func CodePage(c decode.Collation) int {
	if c.UTF8() {
		return 65001
	}
	switch c.LCID() {
	case 0x419:
		return 1251
	case 0x411:
		return 932
	}
	return 1252
}

// mustEncodeText encodes s for a char/varchar/text column of collation c.
// Every string the generator puts in such a column is representable in its
// code page; anything else is a programming error found by the tests.
func mustEncodeText(c decode.Collation, s string) []byte {
	e := codePageEncoding(c)
	if e == nil {
		return []byte(s)
	}
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("sampledb: %q not representable in code page %d: %v", s, CodePage(c), err))
	}
	return b
}
