package migrate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// The checksum of --verify checksum: every row's binary COPY tuple as the
// sink encoded it from the source stream, against every row PostgreSQL
// returns for COPY (SELECT the same columns) TO STDOUT in binary, in the
// transaction of the load before it commits. Each tuple is hashed (64-bit
// FNV-1a over every field's length and bytes) and the hashes are added,
// so the order rows come back in does not matter and a missing,
// duplicated or changed value changes the sum. jsonb fields are left out:
// PostgreSQL normalises JSON text (key order, white space), so its bytes
// differ from those sent while the document is the same.

type checksum struct {
	sum, n uint64
	skip   []bool // fields left out, by position; nil until known
}

func (c checksum) String() string { return fmt.Sprintf("%016x", c.sum) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv(h uint64, p []byte) uint64 {
	for _, b := range p {
		h ^= uint64(b)
		h *= fnvPrime
	}
	return h
}

// add hashes one tuple: a 16-bit field count, then per field a 32-bit
// length (-1 for NULL) and the bytes.
func (c *checksum) add(t []byte) {
	h := uint64(fnvOffset)
	if len(t) < 2 {
		return
	}
	n := int(binary.BigEndian.Uint16(t))
	h = fnv(h, t[:2])
	p := t[2:]
	for i := 0; i < n && len(p) >= 4; i++ {
		l := int32(binary.BigEndian.Uint32(p))
		end := 4
		if l > 0 {
			end += int(l)
		}
		if end > len(p) {
			end = len(p)
		}
		if i < len(c.skip) && c.skip[i] {
			h = fnv(h, []byte{0xFE})
		} else {
			h = fnv(h, p[:end])
		}
		p = p[end:]
	}
	c.sum += h
	c.n++
}

// jsonbFields marks the jsonb columns of a target table.
func jsonbFields(t *postgres.Table) []bool {
	out := make([]bool, len(t.Columns))
	for i := range t.Columns {
		out[i] = t.Columns[i].Type.OID == jsonbOID
	}
	return out
}

// jsonbOID is pg_type.oid of jsonb.
const jsonbOID = 3802

// copySignature starts every binary COPY stream.
var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

// tupleReader parses a binary COPY stream written to it in pieces and
// hashes each complete tuple.
type tupleReader struct {
	c      *checksum
	buf    []byte
	header bool
	ended  bool
}

func (r *tupleReader) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		if !r.header {
			if len(r.buf) < len(copySignature)+8 {
				return len(p), nil
			}
			if !bytes.HasPrefix(r.buf, copySignature) {
				return 0, errors.New("not a binary COPY stream")
			}
			ext := int(binary.BigEndian.Uint32(r.buf[len(copySignature)+4:]))
			hl := len(copySignature) + 8 + ext
			if len(r.buf) < hl {
				return len(p), nil
			}
			r.buf, r.header = r.buf[hl:], true
		}
		if len(r.buf) < 2 {
			return len(p), nil
		}
		n := int(int16(binary.BigEndian.Uint16(r.buf)))
		if n == -1 {
			r.ended = true
			r.buf = r.buf[:0]
			return len(p), nil
		}
		at := 2
		for i := 0; i < n; i++ {
			if len(r.buf) < at+4 {
				return len(p), nil
			}
			l := int32(binary.BigEndian.Uint32(r.buf[at:]))
			at += 4
			if l > 0 {
				at += int(l)
			}
		}
		if len(r.buf) < at {
			return len(p), nil
		}
		r.c.add(r.buf[:at])
		r.buf = r.buf[at:]
	}
}

// readBack hashes every row of t's loaded columns (where is "" or a
// WHERE clause) as PostgreSQL returns them.
func readBack(ctx context.Context, pc *pgconn.PgConn, t *postgres.Table, where string, c *checksum) error {
	names := make([]string, len(t.Columns))
	for i := range t.Columns {
		names[i] = postgres.QuoteIdent(t.Columns[i].Name)
	}
	r := &tupleReader{c: c}
	q := "COPY (SELECT " + strings.Join(names, ", ") + " FROM " + t.QualifiedName() + where + ") TO STDOUT WITH (FORMAT binary)"
	if _, err := pc.CopyTo(ctx, r, q); err != nil {
		return err
	}
	if !r.ended {
		return errors.New("the COPY stream ended without its trailer")
	}
	return nil
}
