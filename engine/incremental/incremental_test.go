package incremental

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/catalog"
)

func ti(k decode.Kind, arg ...int) decode.TypeInfo {
	d := k.Decl()
	switch {
	case k == decode.KindDateTime2 || k == decode.KindDateTimeOffset:
		d.Scale = uint8(arg[0])
	case len(arg) > 0:
		d.Length = arg[0]
	}
	return decode.NullableForm(d.TypeInfo(true, decode.Collation{}))
}

// Every watermark class survives the state file's text exactly: the
// 100 ns digit of datetime2(7), the offset of datetimeoffset, every byte
// of a rowversion.
func TestFormatParseRoundTrip(t *testing.T) {
	cases := []struct {
		ti   decode.TypeInfo
		v    any
		text string
	}{
		{ti(decode.KindInt), int64(-2147483648), "-2147483648"},
		{ti(decode.KindBigInt), int64(9223372036854775807), "9223372036854775807"},
		{ti(decode.KindDateTime2, 7), decode.DateTime{Days: decode.DateFromCivil(2026, 1, 1), Ticks: 1}, "2026-01-01 00:00:00.0000001"},
		{ti(decode.KindDateTime2, 7), decode.DateTime{Days: decode.DateFromCivil(9999, 12, 31), Ticks: decode.TicksPerDay - 1}, "9999-12-31 23:59:59.9999999"},
		{ti(decode.KindDateTime2, 7), decode.DateTime{}, "0001-01-01 00:00:00.0000000"},
		{ti(decode.KindDateTime), decode.DateTime{Days: decode.DateFromCivil(2020, 2, 29), Ticks: 33333}, "2020-02-29 00:00:00.0033333"},
		{ti(decode.KindDate), decode.Date(decode.DateFromCivil(2024, 6, 30)), "2024-06-30 00:00:00.0000000"},
		{ti(decode.KindDateTimeOffset, 7), decode.DateTimeOffset{UTC: decode.DateTime{Days: decode.DateFromCivil(2026, 3, 1), Ticks: 7}, OffsetMin: -330},
			"2026-02-28 18:30:00.0000007-05:30"},
		{ti(decode.KindBinary, 8), []byte{0, 0, 0, 0, 0, 0, 0x07, 0xd0}, "0x00000000000007d0"},
		{ti(decode.KindNVarChar, 20), "Zoë/2", "Zoë/2"},
	}
	for _, c := range cases {
		cl, err := ClassOf(&c.ti)
		if err != nil {
			t.Fatalf("%s: %v", decode.TypeDecl(&c.ti, 0), err)
		}
		s, err := Format(cl, c.v)
		if err != nil || s != c.text {
			t.Errorf("Format(%s, %v) = %q, %v; want %q", decode.TypeDecl(&c.ti, 0), c.v, s, err, c.text)
		}
		back, err := Parse(&c.ti, s)
		if err != nil || !reflect.DeepEqual(back, c.v) {
			t.Errorf("Parse(%s, %q) = %#v, %v; want %#v", decode.TypeDecl(&c.ti, 0), s, back, err, c.v)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct {
		ti   decode.TypeInfo
		text string
	}{
		{ti(decode.KindDateTime2, 7), "2026-01-01 00:00:00.00000001"}, // 8 digits: refused, not rounded
		{ti(decode.KindDateTime2, 7), "yesterday"},
		{ti(decode.KindInt), "1.5"},
		{ti(decode.KindBinary, 8), "0x0102030405060708090a"},
		{ti(decode.KindBinary, 8), "0xzz"},
		{ti(decode.KindDate), "2026-01-01 10:00"},
	} {
		if v, err := Parse(&c.ti, c.text); err == nil {
			t.Errorf("Parse(%s, %q) = %v, want an error", decode.TypeDecl(&c.ti, 0), c.text, v)
		}
	}
	for _, k := range []decode.Kind{decode.KindFloat, decode.KindUniqueIdentifier, decode.KindXML, decode.KindBit} {
		x := ti(k)
		if _, err := ClassOf(&x); err == nil {
			t.Errorf("%s accepted as a watermark", k.Name())
		}
	}
	// A rowversion written short is padded as SQL Server pads binary.
	x := ti(decode.KindBinary, 8)
	if v, err := Parse(&x, "0x7D0"); err != nil || !reflect.DeepEqual(v, []byte{0, 0, 0, 0, 0, 0, 7, 0xd0}) {
		t.Errorf("0x7D0 = %x, %v", v, err)
	}
}

func TestOverlap(t *testing.T) {
	o, err := ParseOverlap(ClassDateTime, "1m")
	if err != nil {
		t.Fatal(err)
	}
	got := o.Apply(decode.DateTime{Days: 10, Ticks: 5})
	if want := (decode.DateTime{Days: 9, Ticks: decode.TicksPerDay - 600_000_000 + 5}); got != want {
		t.Errorf("1m before day 10 + 5 ticks = %v, want %v", got, want)
	}
	o, _ = ParseOverlap(ClassBinary, "16")
	if got := o.Apply([]byte{0, 0, 0, 0, 0, 0, 1, 0}); !reflect.DeepEqual(got, []byte{0, 0, 0, 0, 0, 0, 0, 0xf0}) {
		t.Errorf("rowversion 0x100 - 16 = %x", got)
	}
	for c, bad := range map[Class]string{ClassDateTime: "50ns", ClassInt: "5m", ClassText: "1", ClassOffset: "-1s"} {
		if _, err := ParseOverlap(c, bad); err == nil {
			t.Errorf("overlap %q accepted for class %d", bad, c)
		}
	}
	if r, err := ParseRange("5.."); err != nil || r != (Range{From: "5"}) {
		t.Errorf("5.. = %+v, %v", r, err)
	}
	for _, bad := range []string{"5", "..", "1..2..3"} {
		if _, err := ParseRange(bad); err == nil {
			t.Errorf("range %q accepted", bad)
		}
	}
}

// The state file is replaced whole (no temporary left behind), read back
// equal, and a damaged one is an error rather than a first run.
func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "x.watermark.json")
	st, err := Load(p)
	if err != nil || st.Watermark != nil || st.Runs != 0 {
		t.Fatalf("missing state: %+v, %v", st, err)
	}
	wm := "2026-01-01 00:00:00.0000001"
	st.Extract, st.Column, st.Type, st.Watermark, st.Runs = "x", "ts", "datetime2(7)", &wm, 3
	if err := Save(p, st); err != nil {
		t.Fatal(err)
	}
	back, err := Load(p)
	if err != nil || *back.Watermark != wm || back.Runs != 3 || back.Column != "ts" {
		t.Fatalf("read back %+v, %v", back, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("state directory holds %v, want only the state file", entries)
	}
	if err := os.WriteFile(p, []byte(`{"version":1,"watermark":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged state: %v", err)
	}
}

// A second run of one extract finds the state locked, until the first
// lets go.
func TestStateLock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock on Windows: the lock is a no-op there")
	}
	p := filepath.Join(t.TempDir(), "x.lock")
	release, err := lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(p); !errors.Is(err, errLocked) {
		t.Fatalf("second lock: %v, want errLocked", err)
	}
	release()
	release2, err := lock(p)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release2()
}

// A frozen window comes back exactly (the 100 ns digit of datetime2(7)
// included), is refused for a changed column, and commits once per run:
// again is a no-op, a state moved by another run is left alone, and a
// high watermark below the last one does not move it back.
func TestFrozenWindow(t *testing.T) {
	tbl := &catalog.Table{Schema: "dbo", Name: "events", Columns: []catalog.Column{
		{Name: "ts", BaseType: "datetime2", Scale: 7, Wire: decode.Column{Name: "ts", Type: ti(decode.KindDateTime2, 7)}}}}
	spec := Spec{Column: "ts", StateFile: filepath.Join(t.TempDir(), "events.watermark.json")}
	lo := decode.DateTime{Days: decode.DateFromCivil(2026, 1, 1), Ticks: 490_000_000}
	hi := decode.DateTime{Days: lo.Days, Ticks: lo.Ticks + 1}
	last := "2026-01-01 00:00:49.0000000"
	w := &Window{Name: "events", Spec: spec, Column: tbl.Column("ts"), Type: ti(decode.KindDateTime2, 7), Class: ClassDateTime,
		Lo: lo, Hi: hi, HasHi: true, Output: "events.run-000004", Prev: &State{Watermark: &last, Runs: 3}}
	f, err := w.Freeze()
	if err != nil || *f.Lo != last || *f.Hi != "2026-01-01 00:00:49.0000001" || !f.Forward || f.Runs != 3 || f.Output != "events.run-000004" {
		t.Fatalf("Freeze: %+v %v", f, err)
	}
	if d := f.Describe(); d != "(2026-01-01 00:00:49.0000000, 2026-01-01 00:00:49.0000001]" || d != w.Describe() {
		t.Errorf("Describe %q, the window's %q", d, w.Describe())
	}
	back, err := Thaw(tbl, spec, f, true)
	if err != nil || !reflect.DeepEqual(back.Lo, w.Lo) || !reflect.DeepEqual(back.Hi, w.Hi) || back.Predicate() != w.Predicate() || !back.Holds() {
		t.Fatalf("Thaw: %+v %v", back, err)
	}
	if _, err := Thaw(tbl, spec, f, true); runtime.GOOS != "windows" && (err == nil || !strings.Contains(err.Error(), "must not overlap")) {
		t.Errorf("a second holder: %v", err)
	}
	back.Close()
	changed := *tbl
	changed.Columns = []catalog.Column{{Name: "ts", BaseType: "datetime", Wire: decode.Column{Name: "ts", Type: ti(decode.KindDateTime)}}}
	if _, err := Thaw(&changed, spec, f, false); err == nil || !strings.Contains(err.Error(), "--restart") {
		t.Errorf("changed column: %v", err)
	}

	// The state the window was planned from.
	if err := Save(spec.StateFile, &State{Extract: "events", Column: "ts", Type: "datetime2(7)", Watermark: &last, Runs: 3}); err != nil {
		t.Fatal(err)
	}
	if err := CommitFrozen(spec, f, "run-a", 7, false); err != nil {
		t.Fatal(err)
	}
	st, _ := Load(spec.StateFile)
	if *st.Watermark != *f.Hi || st.Runs != 4 || st.Rows != 7 || st.Run != "run-a" {
		t.Fatalf("after commit: %+v", st)
	}
	if err := CommitFrozen(spec, f, "run-a", 7, false); err != nil {
		t.Fatalf("again: %v", err)
	}
	if again, _ := Load(spec.StateFile); again.Runs != 4 {
		t.Errorf("committing the run again counted it twice: %+v", again)
	}
	if err := CommitFrozen(spec, f, "run-b", 7, false); err == nil || !strings.Contains(err.Error(), "moved since run run-b was planned") {
		t.Errorf("a run planned from an older state: %v", err)
	}
	// A high watermark below the last (rows deleted) keeps the last.
	below := *w
	below.Hi = lo
	below.Prev = &State{Watermark: st.Watermark, Runs: 4}
	fb, err := below.Freeze()
	if err != nil || fb.Forward {
		t.Fatalf("Freeze below: %+v %v", fb, err)
	}
	if err := CommitFrozen(spec, fb, "run-c", 0, false); err != nil {
		t.Fatal(err)
	}
	if st, _ := Load(spec.StateFile); *st.Watermark != *f.Hi || st.Runs != 5 {
		t.Errorf("moved back: %+v", st)
	}
	bf := *w
	bf.Backfill = true
	if _, err := bf.Freeze(); err == nil {
		t.Error("a backfill was frozen")
	}
}
