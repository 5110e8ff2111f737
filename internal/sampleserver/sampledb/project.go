package sampledb

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
)

// ProjectColumns returns the COLMETADATA columns of a projection (column
// indexes in output order; a column may repeat).
func (t *Table) ProjectColumns(cols []int) []decode.Column {
	out := make([]decode.Column, len(cols))
	for k, c := range cols {
		out[k] = t.Columns[c]
	}
	return out
}

// AppendRowsColumns is AppendRows for a projection: rows [from, to) with
// only the columns cols (indexes into t.Columns, in output order), as ROW
// or NBCROW tokens matching ProjectColumns(cols). nil cols means every
// column (the same bytes as AppendRows). Indexes must be valid.
func (t *Table) AppendRowsColumns(dst []byte, from, to int64, cols []int, nbc bool) []byte {
	if cols == nil {
		return t.AppendRows(dst, from, to, nbc)
	}
	from, to = max(from, 0), min(to, t.Rows)
	if t.gens == nil {
		pc := t.ProjectColumns(cols)
		all := make([]any, 0, len(t.Columns))
		vals := make([]any, len(cols))
		for i := from; i < to; i++ {
			all = t.Row(i, all)
			for k, c := range cols {
				vals[k] = all[c]
			}
			var err error
			if nbc {
				dst, err = decode.AppendNBCRow(dst, pc, vals)
			} else {
				dst, err = decode.AppendRow(dst, pc, vals)
			}
			if err != nil {
				panic(fmt.Sprintf("sampledb: %s row %d: %v", t.FullName(), i, err))
			}
		}
		return dst
	}
	gens, salts := t.gens, t.salts
	nb := (len(cols) + 7) / 8
	for i := from; i < to; i++ {
		r := rowHash(t.salt, i)
		p := 0
		if nbc {
			dst = append(dst, tokNBCRow)
			p = len(dst)
			for range nb {
				dst = append(dst, 0)
			}
		} else {
			dst = append(dst, tokRow)
		}
		for j, c := range cols {
			g := &gens[c]
			h := cellHash(r, salts[c])
			if g.nullPM != 0 && h>>54 < g.nullPM {
				if nbc {
					dst[p+j>>3] |= 1 << (j & 7)
				} else {
					dst = append(dst, g.nullWire...)
				}
				continue
			}
			dst = g.enc(dst, i, h)
		}
	}
	return dst
}
