package tdsserver

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// A client that did not negotiate JSONSUPPORT / VECTORSUPPORT must not see
// the json (0xF4) and vector (0xF5) types: SQL Server 2025 sends json as
// nvarchar(max) and vector as varchar(max) text to such clients. When a
// result still has those columns, downgradeResult converts it: each row is
// decoded with the project's cell decoder and re-encoded with the
// converted columns. Only results with such columns take this path.

// textMax returns a (max) text TypeInfo.
func textMax(typ byte) decode.TypeInfo {
	return decode.TypeInfo{Type: typ, Size: decode.MaxVarLen, Collation: defaultCollation}
}

// downgradeResult returns the columns and rows to send.
func (c *conn) downgradeResult(cols []decode.Column, rows rowSource) ([]decode.Column, rowSource) {
	var out []decode.Column
	for i := range cols {
		var ti decode.TypeInfo
		switch {
		case cols[i].Type.Type == decode.TypeJSON && !c.features.json:
			ti = textMax(decode.TypeNVarChar)
		case cols[i].Type.Type == decode.TypeVector && !c.features.vector:
			ti = textMax(decode.TypeBigVarChar)
		default:
			continue
		}
		if out == nil {
			out = append([]decode.Column(nil), cols...)
		}
		out[i].Type = ti
	}
	if out == nil {
		return cols, rows
	}
	if rows == nil {
		return out, nil
	}
	d := &downgradeRows{src: rows, in: cols, out: out}
	_ = d.capt.Columns(cols, make([]decode.Mode, len(cols))) // never fails
	return out, d
}

type downgradeRows struct {
	src     rowSource
	in, out []decode.Column
	buf     []byte
	vals    []any
	err     error
	capt    decode.Capture // decodes the source rows (set up once for in)
}

// Err reports a failure of the conversion or of the wrapped source, so a
// mid-stream error reaches the client (sqlexec.ErrSource).
func (d *downgradeRows) Err() error {
	if d.err != nil {
		return d.err
	}
	if es, ok := d.src.(interface{ Err() error }); ok {
		return es.Err()
	}
	return nil
}

func (d *downgradeRows) AppendRows(dst []byte, max int, nbc bool) ([]byte, int, bool) {
	if d.err != nil {
		return dst, 0, true
	}
	var n int
	var done bool
	d.buf, n, done = d.src.AppendRows(d.buf[:0], max, false)
	src := d.buf
	for r := 0; r < n; r++ {
		var err error
		src, err = d.convertRow(src)
		if err == nil {
			if nbc {
				dst, err = decode.AppendNBCRow(dst, d.out, d.vals)
			} else {
				dst, err = decode.AppendRow(dst, d.out, d.vals)
			}
		}
		if err != nil {
			// Cannot happen for rows the sample database encoded; stop the
			// result rather than send a broken row.
			d.err = fmt.Errorf("tdsserver: downgrade row: %w", err)
			return dst, r, true
		}
	}
	return dst, n, done
}

// convertRow decodes one ROW token from src into d.vals (converted) and
// returns the rest of src.
func (d *downgradeRows) convertRow(src []byte) ([]byte, error) {
	if len(src) == 0 || src[0] != decode.TokenRow {
		return nil, fmt.Errorf("expected a ROW token")
	}
	src = src[1:]
	capt := &d.capt
	capt.Rows = capt.Rows[:0]
	for i := range d.in {
		n, err := decode.DecodeCell(src, &d.in[i].Type, i, capt)
		if err != nil {
			return nil, err
		}
		src = src[n:]
	}
	if err := capt.EndRow(); err != nil {
		return nil, err
	}
	if capt.Err != nil {
		return nil, capt.Err
	}
	d.vals = capt.Rows[0] // EndRow hands over a fresh slice per row
	for i := range d.vals {
		if d.in[i].Type.Type == d.out[i].Type.Type {
			continue
		}
		switch v := d.vals[i].(type) {
		case []float32:
			d.vals[i] = sampledb.VectorText(v)
		case []byte:
			d.vals[i] = string(v)
		}
	}
	return src, nil
}
