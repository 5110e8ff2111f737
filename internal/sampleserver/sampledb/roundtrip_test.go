package sampledb

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
)

// decodeRows runs decode's real token decoder (Stream + Capture) over
// COLMETADATA, the rows of AppendRows and a DONE, feeding the bytes in
// pieces of step bytes to exercise resumption.
func decodeRows(t *testing.T, tb *Table, from, to int64, nbc bool, step int) [][]any {
	t.Helper()
	msg := decode.AppendColMetadata(nil, tb.Columns)
	msg = tb.AppendRows(msg, from, to, nbc)
	msg = decode.Done{Token: decode.TokenDone, Status: decode.DoneCount, RowCount: uint64(to - from)}.Append(msg)
	s := decode.NewStream(decode.StreamOptions{})
	var c decode.Capture
	if err := s.SetSink(&c); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	fed := 0
	for {
		n, ev, err := s.Next(buf)
		buf = buf[n:]
		if err == decode.ErrNeedMore {
			if fed == len(msg) {
				t.Fatalf("%s: stream needs more bytes at the end", tb.FullName())
			}
			k := min(len(msg), fed+step)
			buf = append(buf, msg[fed:k]...)
			fed = k
			continue
		}
		if err != nil {
			t.Fatalf("%s: decode: %v", tb.FullName(), err)
		}
		if ev == decode.EventDone {
			break
		}
	}
	if c.Err != nil {
		t.Fatalf("%s: capture: %v", tb.FullName(), c.Err)
	}
	return c.Rows
}

// normalize makes generic values comparable: Variant base TypeInfo is
// reduced to its type id (the decoder may fill other fields differently).
func normalize(v any) any {
	if x, ok := v.(decode.Variant); ok {
		return fmt.Sprintf("variant(%#x,%v)", x.Type.Type, normalize(x.Value))
	}
	if x, ok := v.([]byte); ok && len(x) == 0 {
		return []byte{}
	}
	return v
}

// TestSampleDecodeRoundTrip decodes what AppendRows produced with the
// project's decoder and compares every cell with Row(i).
func TestSampleDecodeRoundTrip(t *testing.T) {
	db := small(21)
	tables := append(append([]*Table(nil), db.Tables()...), db.Catalogs()...)
	tm, _ := db.Table("dbo", "type_matrix")
	tables = append(tables, tm.Downgrade(false, false))
	for _, tb := range tables {
		n := min(tb.Rows, 120)
		for k, nbc := range []bool{false, true} {
			step := []int{4096, 333}[k]
			got := decodeRows(t, tb, 0, n, nbc, step)
			if int64(len(got)) != n {
				t.Fatalf("%s: decoded %d rows, want %d", tb.FullName(), len(got), n)
			}
			var want []any
			for i := range n {
				want = tb.Row(i, want)
				for c := range want {
					w, g := normalize(want[c]), normalize(got[i][c])
					if !reflect.DeepEqual(w, g) {
						t.Fatalf("%s row %d column %s (%s) nbc=%v:\n got  %#v\n want %#v", tb.FullName(), i,
							tb.Columns[c].Name, tb.SQLType(c), nbc, g, w)
					}
				}
			}
		}
	}
}

// TestSampleProjection checks AppendRowsColumns against the generic encoding
// of the projected Row values, for a fast and a generic table.
func TestSampleProjection(t *testing.T) {
	db := small(4)
	for _, name := range []string{"poc48", "wide601", "type_matrix", "lineitem"} {
		tb, _ := db.Table("dbo", name)
		cols := []int{len(tb.Columns) - 1, 0, 3, 3, 1}
		if !bytes.Equal(tb.AppendRowsColumns(nil, 2, 30, nil, true), tb.AppendRows(nil, 2, 30, true)) {
			t.Fatalf("%s: nil projection differs from AppendRows", name)
		}
		pc := tb.ProjectColumns(cols)
		for _, nbc := range []bool{false, true} {
			got := tb.AppendRowsColumns(nil, 2, 30, cols, nbc)
			var want []byte
			var all []any
			for i := int64(2); i < 30; i++ {
				all = tb.Row(i, all)
				vals := make([]any, len(cols))
				for k, c := range cols {
					vals[k] = all[c]
				}
				var err error
				if nbc {
					want, err = decode.AppendNBCRow(want, pc, vals)
				} else {
					want, err = decode.AppendRow(want, pc, vals)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s nbc=%v: projection bytes differ", name, nbc)
			}
		}
	}
}

// TestSampleBinaryPLPFraming checks the fast varbinary(max) encoder for
// empty, one-chunk and multi-chunk values against decode.AppendValue.
func TestSampleBinaryPLPFraming(t *testing.T) {
	ti, _, err := parseSQLType("varbinary(max)", CollSQLLatin1, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 128, 7999, 8000, 8001, 20000} {
		g := buildGen(&ti, vfn{bytes: func(dst []byte, _ int64, h uint64) []byte { return fillBytes(dst, h, n) }}, nil)
		got := g.enc([]byte{0xAA}, 3, 99)
		want, err := decode.AppendValue([]byte{0xAA}, &ti, g.val(3, 99))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: fast %x... differs from generic %x...", n, got[:min(len(got), 24)], want[:min(len(want), 24)])
		}
	}
}
