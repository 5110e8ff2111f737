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
