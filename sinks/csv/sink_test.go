package csv

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	stdcsv "encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// cell is one value to drive into a sink (shared with the Parquet tests).
type cell = sinktest.Cell

func nul() cell                  { return cell{Kind: 'n'} }
func str(s string) cell          { return cell{Kind: 's', S: s} }
func byts(b []byte) cell         { return cell{Kind: 'x', X: b} }
func i64(v int64) cell           { return cell{Kind: 'i', I: v} }
func vecv(v ...float32) cell     { return cell{Kind: 'v', Vec: v} }
func dtv(d decode.DateTime) cell { return cell{Kind: 'T', DT: d} }

// drive delivers c to s for column col as the decoder would (sinktest.Drive).
var drive = sinktest.Drive

func col(name string, ti decode.TypeInfo) decode.Column {
	return decode.Column{Name: name, Flags: decode.ColFlagNullable, Type: ti}
}

var (
	tiInt      = decode.TypeInfo{Type: decode.TypeIntN, Size: 8}
	tiNVarChar = decode.TypeInfo{Type: decode.TypeNVarChar, Size: 8000}
	tiNVarMax  = decode.TypeInfo{Type: decode.TypeNVarChar, Size: decode.MaxVarLen}
	tiVarBin   = decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 8000}
	tiVarBinMx = decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: decode.MaxVarLen}
	tiVector   = decode.TypeInfo{Type: decode.TypeVector, Size: 20}
)

// writeTable runs a whole extract through a new sink with cfg and returns
// the published files.
func writeTable(t *testing.T, cfg Config, cols []decode.Column, rows [][]cell, parts int) (*Sink, sinks.Stats) {
	t.Helper()
	s := openSink(t, cfg, "t", cols)
	for _, r := range rows {
		for i := range r {
			drive(s, i, &r[i], parts)
		}
		if err := s.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Publish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// newSink is a new sink with cfg.
func newSink(t testing.TB, cfg Config) *Sink {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openSink is a new sink with cfg, opened for extract name (its row count
// unknown) and, when cols is not nil, given that result set.
func openSink(t testing.TB, cfg Config, name string, cols []decode.Column) *Sink {
	t.Helper()
	s := newSink(t, cfg)
	if err := s.Open(context.Background(), sinks.ExtractInfo{Name: name, EstimatedRows: -1}); err != nil {
		t.Fatal(err)
	}
	if cols != nil {
		if err := s.Columns(cols, make([]decode.Mode, len(cols))); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasSuffix(path, ".gz"):
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(path, ".zst"):
		r, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if b, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// tricky text values: quotes, delimiters, newlines, empty, unicode, the
// null-looking and end-of-data-looking strings.
var tricky = []string{
	"plain", "", " ", "a,b", `say "hi"`, `"`, `""`, "line1\nline2", "cr\rlf\r\n", "tab\there",
	"ünïcødé ✓ 日本語 𝄞", `\N`, `\.`, "NULL", "trailing space ", ",", "\n", "'single'", ";semi",
}

func TestCSVRoundTripRFC4180(t *testing.T) {
	dir := t.TempDir()
	cols := []decode.Column{col("id", tiInt), col("s", tiNVarChar), col("b", tiVarBin), col("nil", tiNVarChar)}
	var rows [][]cell
	for i, v := range tricky {
		rows = append(rows, []cell{i64(int64(i)), str(v), byts([]byte(v)), nul()})
	}
	for _, parts := range []int{1, 3} {
		_, st := writeTable(t, Config{Path: dir + "/"}, cols, rows, parts)
		if st.Rows != int64(len(rows)) || len(st.Files) != 1 || st.Files[0] != filepath.Join(dir, "t.csv") {
			t.Fatalf("stats %+v", st)
		}
		raw := readAll(t, st.Files[0])
		r := stdcsv.NewReader(bytes.NewReader(raw))
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("encoding/csv: %v\n%s", err, raw)
		}
		if len(recs) != len(rows)+1 {
			t.Fatalf("got %d records", len(recs))
		}
		if strings.Join(recs[0], "|") != "id|s|b|nil" {
			t.Fatalf("header %q", recs[0])
		}
		for i, v := range tricky {
			rec := recs[i+1]
			// encoding/csv turns \r\n inside quoted fields into \n
			want := strings.ReplaceAll(v, "\r\n", "\n")
			if rec[1] != want {
				t.Errorf("row %d text: got %q want %q", i, rec[1], want)
			}
			if rec[2] != hexOf([]byte(v)) {
				t.Errorf("row %d binary: got %q", i, rec[2])
			}
			if rec[3] != "" {
				t.Errorf("row %d null: got %q", i, rec[3])
			}
		}
		// NULL is an unquoted empty field, the empty string a quoted "".
		if !bytes.Contains(raw, []byte("\n1,\"\",\"\",\n")) {
			t.Fatalf("empty string vs NULL not distinguishable:\n%s", raw)
		}
		// \. alone is quoted (PostgreSQL's end-of-data marker)
		if !bytes.Contains(raw, []byte(`,"\.",`)) {
			t.Fatalf(`\. not quoted:\n%s`, raw)
		}
	}
}

func hexOf(b []byte) string {
	const h = "0123456789abcdef"
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(h[c>>4])
		sb.WriteByte(h[c&15])
	}
	return sb.String()
}

func TestCSVTypedText(t *testing.T) {
	dec := func(s string, p, sc uint8) decode.Decimal {
		d, err := decode.DecimalFromString(s, p, sc)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	g, err := decode.GUIDFromString("6F9619FF-8B86-D011-B42D-00C04FC964FF")
	if err != nil {
		t.Fatal(err)
	}
	day := decode.DateFromCivil(2024, 2, 29)
	ticks := int64(13*3600+4*60+5)*10_000_000 + 1234567
	cases := []struct {
		name string
		ti   decode.TypeInfo
		c    cell
		want string
	}{
		{"bit", decode.TypeInfo{Type: decode.TypeBitN, Size: 1}, cell{Kind: 'b', B: true}, "true"},
		{"bit0", decode.TypeInfo{Type: decode.TypeBitN, Size: 1}, cell{Kind: 'b'}, "false"},
		{"bigint", tiInt, i64(math.MinInt64), "-9223372036854775808"},
		{"float", decode.TypeInfo{Type: decode.TypeFltN, Size: 8}, cell{Kind: 'f', F: 0.1}, "0.1"},
		{"real", decode.TypeInfo{Type: decode.TypeFltN, Size: 4}, cell{Kind: 'r', F: float64(float32(3.4028235e38))}, "3.4028235e+38"},
		{"dec38_38", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 38}, cell{Kind: 'd', Dec: dec("-0.12345678901234567890123456789012345678", 38, 38)}, "-0.12345678901234567890123456789012345678"},
		{"dec38_0", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38}, cell{Kind: 'd', Dec: dec("99999999999999999999999999999999999999", 38, 0)}, "99999999999999999999999999999999999999"},
		{"money", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 8}, cell{Kind: 'm', I: math.MinInt64}, "-922337203685477.5808"},
		{"smallmoney", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 4}, cell{Kind: 'm', I: 10000}, "1.0000"},
		{"date", decode.TypeInfo{Type: decode.TypeDateN}, cell{Kind: 'D', I: int64(day)}, "2024-02-29"},
		{"date_min", decode.TypeInfo{Type: decode.TypeDateN}, cell{Kind: 'D', I: 0}, "0001-01-01"},
		{"time7", decode.TypeInfo{Type: decode.TypeTimeN, Scale: 7}, cell{Kind: 't', I: ticks}, "13:04:05.1234567"},
		{"time0", decode.TypeInfo{Type: decode.TypeTimeN, Scale: 0}, cell{Kind: 't', I: ticks - 1234567}, "13:04:05"},
		{"datetime2_7", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}, dtv(decode.DateTime{Days: day, Ticks: ticks}), "2024-02-29 13:04:05.1234567"},
		{"datetime2_3", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 3}, dtv(decode.DateTime{Days: day, Ticks: ticks - 4567}), "2024-02-29 13:04:05.123"},
		{"datetime", decode.TypeInfo{Type: decode.TypeDateTimeN, Size: 8}, dtv(decode.DateTime{Days: day, Ticks: 30_000 + 3*10_000_000}), "2024-02-29 00:00:03.003"},
		{"smalldatetime", decode.TypeInfo{Type: decode.TypeDateTimeN, Size: 4}, dtv(decode.DateTime{Days: day, Ticks: 600_000_000}), "2024-02-29 00:01:00"},
		{"dto", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7},
			cell{Kind: 'o', DTO: decode.DateTimeOffset{UTC: decode.DateTime{Days: day, Ticks: ticks}, OffsetMin: -330}},
			"2024-02-29 07:34:05.1234567-05:30"},
		{"guid", decode.TypeInfo{Type: decode.TypeGUID, Size: 16}, cell{Kind: 'g', G: g}, "6f9619ff-8b86-d011-b42d-00c04fc964ff"},
		{"vector", tiVector, vecv(1, -2.5, 0.1), `"[1,-2.5,0.1]"`},
		{"vector_empty", tiVector, vecv(), "[]"},
		{"variant_int", decode.TypeInfo{Type: decode.TypeVariant}, cell{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeInt4}, Inner: &cell{Kind: 'i', I: 42}}, "42"},
		{"variant_dt", decode.TypeInfo{Type: decode.TypeVariant}, cell{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeDateTime}, Inner: &cell{Kind: 'T', DT: decode.DateTime{Days: day}}}, "2024-02-29 00:00:00.000"},
		{"variant_text", decode.TypeInfo{Type: decode.TypeVariant}, cell{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeNVarChar}, Inner: &cell{Kind: 's', S: "a,b"}}, `"a,b"`},
		{"variant_bin", decode.TypeInfo{Type: decode.TypeVariant}, cell{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeBigVarBinary}, Inner: &cell{Kind: 'x', X: []byte{0xde, 0xad}}}, "dead"},
		{"xml", decode.TypeInfo{Type: decode.TypeXML}, str(`<a b="1"/>`), `"<a b=""1""/>"`},
	}
	dir := t.TempDir()
	var cols []decode.Column
	var row []cell
	var want []string
	for _, c := range cases {
		cols = append(cols, col(c.name, c.ti))
		row = append(row, c.c)
		want = append(want, c.want)
	}
	// a second column after each value checks that the field ended right
	_, st := writeTable(t, Config{Path: dir + "/", Header: ptr(false)}, cols, [][]cell{row}, 1)
	got := string(readAll(t, st.Files[0]))
	if got != strings.Join(want, ",")+"\n" {
		gotF := strings.Split(strings.TrimSuffix(got, "\n"), ",")
		t.Fatalf("got\n%s\nwant\n%s\n(fields %q)", got, strings.Join(want, ","), gotF)
	}
	// mapping covers every column and reports nothing lossy
	s, _ := New(Config{})
	for i, m := range s.Mapping(cols) {
		if m.Target == "" || m.Lossy {
			t.Errorf("column %s: mapping %+v", cols[i].Name, m)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCSVOptions(t *testing.T) {
	cols := []decode.Column{col("a b", tiNVarChar), col("bin", tiVarBin), col("flag", decode.TypeInfo{Type: decode.TypeBitN, Size: 1}), col("n", tiInt)}
	rows := [][]cell{
		{str("x;y"), byts([]byte{0, 1, 0xfe, 0xff}), cell{Kind: 'b', B: true}, nul()},
		{str(`\N`), byts(nil), cell{Kind: 'b'}, i64(7)},
		{str(""), nul(), nul(), i64(-1)},
		{str("it's"), byts([]byte("hello")), cell{Kind: 'b', B: true}, i64(0)},
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", Config{}, "a b,bin,flag,n\nx;y,0001feff,true,\n\\N,\"\",false,7\n\"\",,,-1\nit's,68656c6c6f,true,0\n"},
		{"semicolon_quote_nulltoken_crlf_10_base64", Config{Delimiter: ";", Quote: "'", Null: `\N`, LineEnding: "crlf", BoolFormat: "1_0", BinaryFormat: "base64"},
			"a b;bin;flag;n\r\n'x;y';AAH+/w==;1;\\N\r\n'\\N';;0;7\r\n;\\N;\\N;-1\r\n'it''s';aGVsbG8=;1;0\r\n"},
		{"tab_no_header_hexprefixed", Config{Delimiter: "\t", Header: ptr(false), BinaryFormat: "hex_prefixed"},
			"x;y\t\\x0001feff\ttrue\t\n\\N\t\\x\tfalse\t7\n\"\"\t\t\t-1\nit's\t\\x68656c6c6f\ttrue\t0\n"},
		{"postgres", Config{Dialect: "postgres"}, "a b,bin,flag,n\nx;y,\\x0001feff,true,\n\\N,\\x,false,7\n\"\",,,-1\nit's,\\x68656c6c6f,true,0\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.cfg.Path = filepath.Join(dir, "{extract}-x.csv")
			_, st := writeTable(t, c.cfg, cols, rows, 2)
			if st.Files[0] != filepath.Join(dir, "t-x.csv") {
				t.Fatalf("files %v", st.Files)
			}
			if got := string(readAll(t, st.Files[0])); got != c.want {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	// base64 decodes back
	if b, _ := base64.StdEncoding.DecodeString("AAH+/w=="); !bytes.Equal(b, []byte{0, 1, 0xfe, 0xff}) {
		t.Fatal("base64 fixture")
	}
}

func TestCSVConfigErrors(t *testing.T) {
	bad := []map[string]any{
		{"delimiter": ",,"}, {"delimiter": "a"}, {"quote": ","}, {"null": "a,b"}, {"line_ending": "\r"},
		{"bool_format": "yes"}, {"binary_format": "b32"}, {"compression": "lz4"}, {"max_rows": -1},
		{"dialect": "excel"}, {"no_such_key": 1}, {"compression": "gzip", "compression_level": 11},
	}
	for _, o := range bad {
		if _, err := ParseConfig(o); err == nil {
			t.Errorf("%v: accepted", o)
		}
		f := Factory()
		if err := f.Validate(o); err == nil {
			t.Errorf("%v: Validate accepted", o)
		}
		if _, err := f.New(o); err == nil {
			t.Errorf("%v: New accepted", o)
		}
	}
	c, err := ParseConfig(map[string]any{"max_rows": "1000", "header": "false", "compression": "zstd"})
	if err != nil || c.MaxRows != 1000 || *c.Header || c.Delimiter != "," || c.BufferSize != DefaultBufferSize {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestCSVSplitAndCompression(t *testing.T) {
	cols := []decode.Column{col("id", tiInt), col("s", tiNVarChar)}
	var rows [][]cell
	for i := 0; i < 1000; i++ {
		rows = append(rows, []cell{i64(int64(i)), str(strings.Repeat("x", i%50) + "\n\"")})
	}
	for _, comp := range []string{"none", "gzip", "zstd"} {
		for _, split := range []struct {
			rows, bytes int64
			files       int
		}{{0, 0, 1}, {100, 0, 10}, {300, 0, 4}, {1000, 0, 1}, {0, 10_000, 0}} {
			dir := t.TempDir()
			_, st := writeTable(t, Config{Path: dir, Compression: comp, MaxRows: split.rows, MaxBytes: split.bytes}, cols, rows, 1)
			if split.files > 0 && len(st.Files) != split.files {
				t.Fatalf("%s %+v: %d files %v", comp, split, len(st.Files), st.Files)
			}
			if got := sinktest.DirEntries(t, dir); len(got) != len(st.Files) {
				t.Fatalf("dir holds %v", got)
			}
			next := 0
			var total int64
			for fi, f := range st.Files {
				if split.rows > 0 || split.bytes > 0 {
					ext := map[string]string{"none": ".csv", "gzip": ".csv.gz", "zstd": ".csv.zst"}[comp]
					if want := filepath.Join(dir, "t."+pad4(fi+1)+ext); f != want {
						t.Fatalf("file %q want %q", f, want)
					}
				}
				fi, _ := os.Stat(f)
				total += fi.Size()
				raw := readAll(t, f)
				if split.bytes > 0 && int64(len(raw)) > split.bytes+200 {
					t.Fatalf("file %s has %d bytes", f, len(raw))
				}
				recs, err := stdcsv.NewReader(bytes.NewReader(raw)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if recs[0][0] != "id" {
					t.Fatalf("no header in %s", f)
				}
				for _, r := range recs[1:] {
					if r[0] != itoa(next) || r[1] != strings.Repeat("x", next%50)+"\n\"" {
						t.Fatalf("%s: row %v want id %d", f, r, next)
					}
					next++
				}
				if split.rows > 0 && len(recs)-1 > int(split.rows) {
					t.Fatalf("%s has %d rows", f, len(recs)-1)
				}
			}
			if next != 1000 || st.Rows != 1000 || st.Bytes != total {
				t.Fatalf("%s %+v: %d rows read, stats %+v, on disk %d", comp, split, next, st, total)
			}
		}
	}
}

func pad4(i int) string { s := itoa(i); return strings.Repeat("0", 4-len(s)) + s }
func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestCSVLargeValuesStream(t *testing.T) {
	big := strings.Repeat(`ab"c,`, 700_000) // 3.5 MB, quotes and delimiters
	bigBin := bytes.Repeat([]byte{0, 0xff, 0x10}, 500_001)
	for _, bf := range []string{"hex", "base64"} {
		dir := t.TempDir()
		cols := []decode.Column{col("t", tiNVarMax), col("b", tiVarBinMx), col("z", tiInt)}
		s, st := writeTable(t, Config{Path: dir, BinaryFormat: bf}, cols, [][]cell{{str(big), byts(bigBin), i64(1)}, {str("small"), byts([]byte{1}), i64(2)}}, 7)
		recs, err := stdcsv.NewReader(bytes.NewReader(readAll(t, st.Files[0]))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		wantBin := hexOf(bigBin)
		if bf == "base64" {
			wantBin = base64.StdEncoding.EncodeToString(bigBin)
		}
		if len(recs) != 3 || recs[1][0] != big || recs[1][1] != wantBin || recs[1][2] != "1" || recs[2][0] != "small" {
			t.Fatalf("large value round trip failed (%d records)", len(recs))
		}
		// the line buffer never held a whole large value
		if cap(s.b) > 4*streamThreshold+s.cfg.BufferSize*2 {
			t.Fatalf("line buffer grew to %d", cap(s.b))
		}
	}
}

func TestCSVAtomicPublish(t *testing.T) {
	cols := []decode.Column{col("id", tiInt)}
	ctx := context.Background()
	t.Run("abort", func(t *testing.T) {
		dir := t.TempDir()
		s := openSink(t, Config{Path: dir, MaxRows: 2}, "t", cols)
		for i := 0; i < 5; i++ {
			s.Int(0, int64(i))
			_ = s.EndRow()
		}
		// three temporaries and the owner file that marks them as a live run's
		if got := sinktest.DirEntries(t, dir); len(got) != 4 || !strings.HasPrefix(got[0], ".t.") || !strings.HasPrefix(got[3], ".tdsextract-") {
			t.Fatalf("during the run: %v", got)
		}
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sinktest.DirEntries(t, dir); len(got) != 0 {
			t.Fatalf("after Abort: %v", got)
		}
	})
	t.Run("failing_writer", func(t *testing.T) {
		dir := t.TempDir()
		s := openSink(t, Config{Path: dir, BufferSize: 4096}, "t", cols)
		_ = s.cur.File.Close() // every later write fails
		var err error
		for i := 0; i < 10_000 && err == nil; i++ {
			s.Int(0, int64(i))
			err = s.EndRow()
		}
		if err == nil {
			t.Fatal("no error from a failing file")
		}
		if _, err := s.Publish(ctx); err == nil {
			t.Fatal("Publish succeeded")
		}
		abortLeavesNothing(t, s, dir)
	})
	t.Run("second_result_set_differs", func(t *testing.T) {
		dir := t.TempDir()
		s := openSink(t, Config{Path: dir}, "t", cols)
		s.Int(0, 1)
		_ = s.EndRow()
		if err := s.Columns(cols, make([]decode.Mode, 1)); err != nil {
			t.Fatal(err) // same shape continues
		}
		if err := s.Columns([]decode.Column{col("other", tiInt)}, make([]decode.Mode, 1)); err == nil {
			t.Fatal("different result set accepted")
		}
		abortLeavesNothing(t, s, dir)
	})
	t.Run("no_result_set", func(t *testing.T) {
		dir := t.TempDir()
		s := openSink(t, Config{Path: dir}, "empty", nil)
		st, err := s.Publish(ctx)
		if err != nil || len(st.Files) != 1 {
			t.Fatal(st, err)
		}
		if b := readAll(t, st.Files[0]); len(b) != 0 {
			t.Fatalf("%q", b)
		}
	})
}

// abortLeavesNothing aborts a failed s and checks that its directory is
// empty again: no temporary and no published file.
func abortLeavesNothing(t *testing.T, s *Sink, dir string) {
	t.Helper()
	_ = s.Abort(context.Background())
	if got := sinktest.DirEntries(t, dir); len(got) != 0 {
		t.Fatalf("after failure: %v", got)
	}
}

func TestCSVAllocsPerRow(t *testing.T) {
	g, _ := decode.GUIDFromString("6f9619ff-8b86-d011-b42d-00c04fc964ff")
	d, _ := decode.DecimalFromString("-12345.678", 18, 3)
	cols := []decode.Column{col("i", tiInt), col("s", tiNVarChar), col("q", tiNVarChar), col("b", tiVarBin), col("n", tiInt),
		col("d", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 18, Scale: 3}), col("dt", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}),
		col("g", decode.TypeInfo{Type: decode.TypeGUID}), col("f", decode.TypeInfo{Type: decode.TypeFltN, Size: 8}), col("v", tiVector),
		col("o", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}), col("var", decode.TypeInfo{Type: decode.TypeVariant})}
	row := []cell{i64(123456789), str("hello world"), str(`needs "quoting", yes`), byts([]byte{1, 2, 3, 4}), nul(),
		{Kind: 'd', Dec: d}, dtv(decode.DateTime{Days: 738000, Ticks: 123456789}), {Kind: 'g', G: g}, {Kind: 'f', F: 1.0 / 3}, vecv(1, 2, 3),
		{Kind: 'o', DTO: decode.DateTimeOffset{UTC: decode.DateTime{Days: 738000, Ticks: 5}, OffsetMin: 60}},
		{Kind: 'V', VTI: decode.TypeInfo{Type: decode.TypeMoney}, Inner: &cell{Kind: 'm', I: 12345}}}
	for _, comp := range []string{"none", "gzip", "zstd"} {
		dir := t.TempDir()
		s := openSink(t, Config{Path: dir, Compression: comp, MaxRows: 5000}, "t", cols)
		one := func() {
			for i := range row {
				drive(s, i, &row[i], 2)
			}
			if err := s.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 20000; i++ { // warm up: buffers at size, a few file rotations
			one()
		}
		if a := testing.AllocsPerRun(2000, one); comp == "none" && a != 0 || a > 0.01 {
			t.Errorf("%s: %v allocs per row", comp, a)
		}
		if _, err := s.Publish(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// if_exists: replace swaps the whole output (old parts it does not cover
// included), skip leaves it and asks the engine to skip the sink, fail
// refuses before writing.
func TestCSVIfExists(t *testing.T) {
	cols := []decode.Column{col("id", tiInt)}
	ctx := context.Background()
	run := func(t *testing.T, cfg Config, rows int) ([]string, error) {
		t.Helper()
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Open(ctx, sinks.ExtractInfo{Name: "t"}); err != nil {
			return nil, err
		}
		_ = s.Columns(cols, make([]decode.Mode, 1))
		for i := 0; i < rows; i++ {
			s.Int(0, int64(i))
			_ = s.EndRow()
		}
		st, err := s.Publish(ctx)
		if err != nil {
			_ = s.Abort(ctx)
		}
		return st.Files, err
	}
	dir := t.TempDir()
	if _, err := run(t, Config{Path: dir, MaxRows: 2}, 9); err != nil { // t.0001 .. t.0005
		t.Fatal(err)
	}
	if _, err := run(t, Config{Path: dir, MaxRows: 2}, 3); err != nil { // replace: t.0001, t.0002
		t.Fatal(err)
	}
	if got := sinktest.DirEntries(t, dir); !slices.Equal(got, []string{"t.0001.csv", "t.0002.csv"}) {
		t.Fatalf("after replacing 5 parts by 2: %v", got)
	}
	if _, err := run(t, Config{Path: dir}, 3); err != nil { // replace, unsplit
		t.Fatal(err)
	}
	if got := sinktest.DirEntries(t, dir); !slices.Equal(got, []string{"t.csv"}) {
		t.Fatalf("after replacing parts by one file: %v", got)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "t.csv"))
	if _, err := run(t, Config{Path: dir, IfExists: "skip"}, 1); !errors.Is(err, sinks.ErrSkip) || !strings.Contains(err.Error(), "t.csv exists") {
		t.Fatalf("skip: %v", err)
	}
	if _, err := run(t, Config{Path: dir, IfExists: "fail"}, 1); err == nil || !strings.Contains(err.Error(), "if_exists: fail") {
		t.Fatalf("fail: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "t.csv")); !bytes.Equal(before, after) {
		t.Fatal("skip or fail changed the existing output")
	}
	if got := sinktest.DirEntries(t, dir); !slices.Equal(got, []string{"t.csv"}) {
		t.Fatalf("skip and fail left: %v", got)
	}
	if _, err := New(Config{Path: dir, IfExists: "overwrite"}); err == nil {
		t.Fatal("if_exists: overwrite accepted")
	}
}
