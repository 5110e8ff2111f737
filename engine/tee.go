package engine

import (
	"errors"

	"github.com/tdsextract/tdsextract/decode"
)

// Tee returns a CellSink that hands every cell to each of sinks, so one
// result set streams once through the decoder into every sink of an
// extract. With one sink it returns that sink unchanged (no extra
// dispatch). For variable-length values the decoder writes into the first
// sink's memory and the others receive that value as a borrowed Write:
// one copy per additional sink, the minimum for independent destinations.
//
// When one of the sinks takes whole UTF-16 values (decode.UTF16Sink), the
// tee takes them too and forwards each as one call to the sinks that do;
// the others get it converted to UTF-8 once, as the BeginValue/Write/
// EndValue sequence the decoder would have given them. Without such a sink the tee
// does not offer the fast path, so the decoder still converts straight
// into the first sink's memory.
func Tee(sinks ...decode.CellSink) decode.CellSink {
	if len(sinks) == 1 {
		return sinks[0]
	}
	t := &tee{sinks: sinks}
	u := &utf16Tee{tee: t, utf16: make([]decode.UTF16Sink, len(sinks))}
	any16 := false
	for i, s := range sinks {
		if u.utf16[i], _ = s.(decode.UTF16Sink); u.utf16[i] != nil {
			any16 = true
		}
	}
	if any16 {
		return u
	}
	return t
}

type tee struct {
	sinks    []decode.CellSink
	bytes    []decode.BytesSink // per sink: its fast path, or nil
	modes    [][]decode.Mode
	reserved []byte // the first sink's destination of the current part
	ownFirst bool   // the first sink declined Reserve: parts go to all as Write
	scratch  []byte
}

func (t *tee) Columns(cols []decode.Column, modes []decode.Mode) error {
	if cap(t.modes) < len(t.sinks) {
		t.modes = make([][]decode.Mode, len(t.sinks))
	}
	t.modes = t.modes[:len(t.sinks)]
	if t.bytes == nil {
		t.bytes = make([]decode.BytesSink, len(t.sinks))
		for i, s := range t.sinks {
			t.bytes[i], _ = s.(decode.BytesSink)
		}
	}
	var errs []error
	for i, s := range t.sinks {
		m := t.modes[i][:0]
		for range cols {
			m = append(m, decode.ModeValue)
		}
		t.modes[i] = m
		if err := s.Columns(cols, m); err != nil {
			errs = append(errs, err)
		}
	}
	// The decoder can deliver a column one way only: raw if any sink asks
	// for raw bytes is not combinable with typed values, so a tee supports
	// ModeValue and ModeSkip, and skips a column only if every sink skips it.
	for c := range modes {
		mode := decode.ModeSkip
		for i := range t.sinks {
			switch t.modes[i][c] {
			case decode.ModeValue:
				if mode == decode.ModeSkip {
					mode = decode.ModeValue
				}
			case decode.ModeRaw:
				errs = append(errs, errors.New("engine: a sink asked for raw values while sharing an extract with other sinks; give it its own extract"))
			}
		}
		modes[c] = mode
	}
	return errors.Join(errs...)
}

func (t *tee) skip(i, col int) bool { return t.modes[i][col] == decode.ModeSkip }

func (t *tee) Null(col int) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Null(col)
		}
	}
}

func (t *tee) Bool(col int, v bool) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Bool(col, v)
		}
	}
}

func (t *tee) Int(col int, v int64) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Int(col, v)
		}
	}
}

func (t *tee) Float32(col int, v float32) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Float32(col, v)
		}
	}
}

func (t *tee) Float64(col int, v float64) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Float64(col, v)
		}
	}
}

func (t *tee) Decimal(col int, v decode.Decimal) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Decimal(col, v)
		}
	}
}

func (t *tee) Money(col int, v int64) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Money(col, v)
		}
	}
}

func (t *tee) Date(col int, days int32) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Date(col, days)
		}
	}
}

func (t *tee) Time(col int, ticks int64) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Time(col, ticks)
		}
	}
}

func (t *tee) DateTime(col int, v decode.DateTime) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.DateTime(col, v)
		}
	}
}

func (t *tee) DateTimeOffset(col int, v decode.DateTimeOffset) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.DateTimeOffset(col, v)
		}
	}
}

func (t *tee) GUID(col int, v decode.GUID) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.GUID(col, v)
		}
	}
}

func (t *tee) Variant(col int, ti *decode.TypeInfo) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Variant(col, ti)
		}
	}
}

func (t *tee) BeginValue(col int, size int64) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.BeginValue(col, size)
		}
	}
}

// first returns the index of the first sink that takes col.
func (t *tee) first(col int) int {
	for i := range t.sinks {
		if !t.skip(i, col) {
			return i
		}
	}
	return -1
}

func (t *tee) Reserve(col int, n int) []byte {
	f := t.first(col)
	if f < 0 {
		return nil
	}
	t.reserved = t.sinks[f].Reserve(col, n)
	if t.reserved == nil {
		// The first sink wants borrowed bytes: stage the part in our
		// scratch so every sink gets the same Write.
		if cap(t.scratch) < n {
			t.scratch = make([]byte, n)
		}
		t.ownFirst = true
		return t.scratch[:n]
	}
	t.ownFirst = false
	return t.reserved
}

func (t *tee) Commit(col int, n int) {
	f := t.first(col)
	if f < 0 {
		return
	}
	var part []byte
	if t.ownFirst {
		part = t.scratch[:n]
		t.sinks[f].Write(col, part)
	} else {
		part = t.reserved[:n]
	}
	for i := f + 1; i < len(t.sinks); i++ {
		if !t.skip(i, col) {
			t.sinks[i].Write(col, part)
		}
	}
	if !t.ownFirst {
		t.sinks[f].Commit(col, n)
	}
	t.reserved = nil
}

func (t *tee) Write(col int, p []byte) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.Write(col, p)
		}
	}
}

// Bytes forwards a complete value: as one call to sinks that take it
// (decode.BytesSink), as the BeginValue/Write/EndValue sequence to others.
func (t *tee) Bytes(col int, p []byte) {
	for i, s := range t.sinks {
		if t.skip(i, col) {
			continue
		}
		if b := t.bytes[i]; b != nil {
			b.Bytes(col, p)
			continue
		}
		s.BeginValue(col, int64(len(p)))
		s.Write(col, p)
		s.EndValue(col)
	}
}

// utf16Tee is a tee with the UTF16Sink fast path.
type utf16Tee struct {
	*tee
	utf16 []decode.UTF16Sink // per sink: its fast path, or nil
}

// UTF16 forwards a whole UTF-16 value: as one call to sinks that take it,
// converted to UTF-8 (once per value) for the others.
func (t *utf16Tee) UTF16(col int, p []byte) {
	converted := false
	var text []byte
	for i, s := range t.sinks {
		if t.skip(i, col) {
			continue
		}
		if u := t.utf16[i]; u != nil {
			u.UTF16(col, p)
			continue
		}
		if !converted {
			if n := decode.MaxUTF16ToUTF8(len(p)); cap(t.scratch) < n {
				t.scratch = make([]byte, n)
			}
			text = t.scratch[:decode.UTF16ToUTF8(t.scratch[:cap(t.scratch)], p)]
			converted = true
		}
		s.BeginValue(col, int64(len(p)))
		if len(text) > 0 {
			s.Write(col, text)
		}
		s.EndValue(col)
	}
}

func (t *tee) EndValue(col int) {
	for i, s := range t.sinks {
		if !t.skip(i, col) {
			s.EndValue(col)
		}
	}
}

func (t *tee) EndRow() error {
	var first error
	for _, s := range t.sinks {
		if err := s.EndRow(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
