package postgres

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// rejectFile collects rejected rows, one JSON object a line:
//
//	{"row":17,"key":{"id":"17"},"column":"note","reason":"the text holds a NUL ..."}
//
// row is the row's number in the extract (1-based, as it came from the
// source), key the text of the key columns. The file is written under a
// temporary name and appears under its final name only when the load
// commits; a failed load removes it.
type rejectFile struct {
	final, tmp string
	f          *os.File
	w          *bufio.Writer
}

func newRejectFile(path string) (*rejectFile, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("postgres: reject file: %w", err)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("postgres: reject file: %w", err)
	}
	return &rejectFile{final: path, tmp: f.Name(), f: f, w: bufio.NewWriter(f)}, nil
}

type rejectRecord struct {
	Row    int64             `json:"row"`
	Key    map[string]string `json:"key,omitempty"`
	Column string            `json:"column"`
	Reason string            `json:"reason"`
}

func (r *rejectFile) add(row int64, key map[string]string, col, reason string) error {
	b, err := json.Marshal(rejectRecord{Row: row, Key: key, Column: col, Reason: reason})
	if err == nil {
		b = append(b, '\n')
		_, err = r.w.Write(b)
	}
	if err != nil {
		return fmt.Errorf("postgres: reject file %s: %w", r.final, err)
	}
	return nil
}

// finish flushes and syncs the file (before COMMIT).
func (r *rejectFile) finish() error {
	err := r.w.Flush()
	if err == nil {
		err = r.f.Sync()
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("postgres: reject file %s: %w", r.final, err)
	}
	return nil
}

// publish renames the file to its final name (after COMMIT).
func (r *rejectFile) publish() error { return os.Rename(r.tmp, r.final) }

func (r *rejectFile) abort() {
	_ = r.f.Close()
	_ = os.Remove(r.tmp)
}

// keyValues is the text of the current row's key columns, read back from
// the tuple in the buffer (only when a row is refused: rows cost nothing
// for it).
func (s *Sink) keyValues() map[string]string {
	fields := s.tupleFields()
	out := map[string]string{}
	for _, k := range s.keys {
		f := s.fieldOf[k]
		if f >= len(fields) {
			continue
		}
		out[s.srcCols[k].Name] = fieldText(&s.target.Columns[f].Type, fields[f])
	}
	return out
}

// keyText is keyValues for an error message: " (key id=17)".
func (s *Sink) keyText() string {
	kv := s.keyValues()
	if len(kv) == 0 {
		return ""
	}
	parts := make([]string, 0, len(kv))
	for _, k := range s.keys {
		if v, ok := kv[s.srcCols[k].Name]; ok {
			parts = append(parts, s.srcCols[k].Name+"="+v)
		}
	}
	return " (key " + strings.Join(parts, ", ") + ")"
}

// tupleFields splits the current tuple into its fields (nil for NULL).
func (s *Sink) tupleFields() [][]byte {
	t := s.b[s.rowStart:]
	if len(t) < 2 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(t))
	t = t[2:]
	out := make([][]byte, 0, n)
	for i := 0; i < n && len(t) >= 4; i++ {
		l := int32(binary.BigEndian.Uint32(t))
		t = t[4:]
		if l < 0 {
			out = append(out, nil)
			continue
		}
		if int(l) > len(t) {
			break
		}
		out = append(out, t[:l])
		t = t[l:]
	}
	return out
}

// fieldText is a field's value as text, from its binary form.
func fieldText(t *Type, v []byte) string {
	if v == nil {
		return "NULL"
	}
	switch t.OID {
	case oidBool:
		return strconv.FormatBool(len(v) == 1 && v[0] != 0)
	case oidInt2:
		return strconv.Itoa(int(int16(binary.BigEndian.Uint16(v))))
	case oidInt4:
		return strconv.Itoa(int(int32(binary.BigEndian.Uint32(v))))
	case oidInt8:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(v)), 10)
	case oidFloat4:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 'g', -1, 32)
	case oidFloat8:
		return strconv.FormatFloat(math.Float64frombits(binary.BigEndian.Uint64(v)), 'g', -1, 64)
	case oidNumeric:
		return numericText(v)
	case oidUUID:
		var g decode.GUID
		copy(g[:], v)
		return g.String()
	case oidDate:
		return string(decode.AppendDateText(nil, int32(int64(int32(binary.BigEndian.Uint32(v)))+pgEpochDays)))
	case oidTimestamp, oidTimestamptz:
		us := int64(binary.BigEndian.Uint64(v))
		days := us / usPerDay
		rem := us % usPerDay
		if rem < 0 {
			rem += usPerDay
			days--
		}
		return string(decode.AppendDateTimeText(nil, decode.DateTime{Days: int32(days + pgEpochDays), Ticks: rem * 10}, 6))
	case oidTime:
		return string(decode.AppendTimeText(nil, int64(binary.BigEndian.Uint64(v))*10, 6))
	case oidBytea:
		return `\x` + hex.EncodeToString(v)
	case oidJSONB:
		if len(v) > 0 {
			return string(v[1:])
		}
	}
	return string(v)
}

// numericText formats numeric's binary form.
func numericText(v []byte) string {
	if len(v) < 8 {
		return "?"
	}
	nd := int(binary.BigEndian.Uint16(v))
	weight := int(int16(binary.BigEndian.Uint16(v[2:])))
	sign := binary.BigEndian.Uint16(v[4:])
	dscale := int(binary.BigEndian.Uint16(v[6:]))
	n := new(big.Int)
	for i := 0; i < nd && 8+2*i+1 < len(v); i++ {
		n.Mul(n, big.NewInt(10000))
		n.Add(n, big.NewInt(int64(binary.BigEndian.Uint16(v[8+2*i:]))))
	}
	// value = n * 10000^(weight-nd+1)
	exp := 4 * (weight - nd + 1)
	r := new(big.Rat).SetInt(n)
	if exp >= 0 {
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	} else {
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp)), nil)))
	}
	if sign == 0x4000 {
		r.Neg(r)
	}
	return r.FloatString(dscale)
}
