package parquet

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

func simpleCols() []decode.Column {
	return []decode.Column{
		{Name: "id", Type: decode.TypeInfo{Type: decode.TypeInt8}},
		ncol("s", decode.TypeInfo{Type: decode.TypeNVarChar, Size: 200}),
		ncol("cat", decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 20}),
	}
}

func simpleRows(n int) [][]cell {
	rows := make([][]cell, n)
	for i := range rows {
		s := cell{Kind: 's', S: "value " + strconv.Itoa(i)}
		if i%7 == 0 {
			s = cell{Kind: 'n'}
		}
		rows[i] = []cell{{Kind: 'i', I: int64(i)}, s, {Kind: 's', S: []string{"red", "green", "blue"}[i%3]}}
	}
	return rows
}

func TestParquetSplitRowGroupsAndParallel(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		files int
	}{
		{Config{RowGroupRows: 100, Parallel: 1}, 1},
		{Config{RowGroupRows: 100, Parallel: 3}, 1},
		{Config{RowGroupBytes: 4096, Parallel: 2}, 1},
		{Config{RowGroupRows: 100, MaxRows: 250}, 4},
		{Config{RowGroupRows: 50, MaxBytes: 1500, Compression: "none"}, 0},
	} {
		dir := t.TempDir()
		tc.cfg.Path = dir + "/"
		st := writeTable(t, tc.cfg, simpleCols(), simpleRows(1000))
		if tc.files > 0 && len(st.Files) != tc.files {
			t.Fatalf("%+v: files %v", tc.cfg, st.Files)
		}
		if len(sinktest.DirEntries(t, dir)) != len(st.Files) {
			t.Fatalf("dir %v", sinktest.DirEntries(t, dir))
		}
		next := 0
		var size int64
		for fi, f := range st.Files {
			if len(st.Files) > 1 && filepath.Base(f) != "t.000"+strconv.Itoa(fi+1)+".parquet" && filepath.Base(f) != "t.00"+strconv.Itoa(fi+1)+".parquet" {
				t.Fatalf("file name %s", f)
			}
			info, _ := os.Stat(f)
			size += info.Size()
			res := readBack(t, f)
			if tc.cfg.MaxRows > 0 && len(res.rows) > int(tc.cfg.MaxRows) {
				t.Fatalf("%s: %d rows", f, len(res.rows))
			}
			if tc.cfg.RowGroupRows > 0 && res.groups < (len(res.rows)+int(tc.cfg.RowGroupRows)-1)/int(tc.cfg.RowGroupRows) {
				t.Fatalf("%s: %d row groups for %d rows", f, res.groups, len(res.rows))
			}
			for _, r := range res.rows {
				want := "value " + strconv.Itoa(next)
				if next%7 == 0 {
					want = "NULL"
				}
				if r[0] != strconv.Itoa(next) || r[1] != want || r[2] != []string{"red", "green", "blue"}[next%3] {
					t.Fatalf("%+v %s: row %v, want id %d", tc.cfg, f, r, next)
				}
				next++
			}
		}
		if next != 1000 || st.Rows != 1000 || st.Bytes != size {
			t.Fatalf("%+v: %d rows read, stats %+v, size %d", tc.cfg, next, st, size)
		}
		if tc.cfg.MaxBytes > 0 && len(st.Files) < 2 {
			t.Fatalf("max_bytes did not split: %v", st.Files)
		}
	}
}

// TestParquetEncodingChoice checks the per-column encodings chosen by
// trial (read back from the file's metadata by arrow-go): a sorted key
// gets DELTA_BINARY_PACKED, a category column a dictionary, unique short
// text PLAIN (zstd finds its shared prefixes; no dictionary unless
// dictionary: all), random GUIDs are left uncompressed.
func TestParquetEncodingChoice(t *testing.T) {
	cols := append(simpleCols(), ncol("g", decode.TypeInfo{Type: decode.TypeGUID, Size: 16}))
	rows := simpleRows(20000)
	h := uint64(1)
	for i := range rows {
		h = h*6364136223846793005 + 1442695040888963407
		rows[i][2] = cell{Kind: 's', S: []string{"red", "green", "blue", "cyan", "magenta"}[(h>>33)%5]}
		var g decode.GUID
		binary.LittleEndian.PutUint64(g[:], h)
		binary.LittleEndian.PutUint64(g[8:], h*31+7)
		rows[i] = append(rows[i], cell{Kind: 'g', G: g})
	}
	for _, mode := range []string{"auto", "all", "none"} {
		dir := t.TempDir()
		st := writeTable(t, Config{Path: dir, Dictionary: mode}, cols, rows)
		rdr, err := file.OpenParquetFile(st.Files[0], false)
		if err != nil {
			t.Fatal(err)
		}
		rg := rdr.MetaData().RowGroup(0)
		desc := func(c int) string {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			var e []string
			for _, x := range cc.Encodings() {
				e = append(e, x.String())
			}
			slices.Sort(e)
			return strings.Join(e, ",") + " " + cc.Compression().String()
		}
		got := []string{desc(0), desc(1), desc(2), desc(3)}
		want := map[string][]string{
			"auto": {"DELTA_BINARY_PACKED ZSTD", "PLAIN,RLE ZSTD", "PLAIN,RLE,RLE_DICTIONARY ZSTD", "PLAIN,RLE UNCOMPRESSED"},
			"all":  {"DELTA_BINARY_PACKED ZSTD", "PLAIN,RLE,RLE_DICTIONARY ZSTD", "PLAIN,RLE,RLE_DICTIONARY ZSTD", "PLAIN,RLE UNCOMPRESSED"},
			"none": {"DELTA_BINARY_PACKED ZSTD", "PLAIN,RLE ZSTD", "PLAIN,RLE ZSTD", "PLAIN,RLE UNCOMPRESSED"},
		}[mode]
		if !slices.Equal(got, want) {
			t.Errorf("%s: encodings\n%q\nwant\n%q", mode, got, want)
		}
		rdr.Close()
		if len(readBack(t, st.Files[0]).rows) != len(rows) {
			t.Fatal("rows")
		}
	}
}

func TestParquetFailuresLeaveNothing(t *testing.T) {
	ctx := context.Background()
	run := func(t *testing.T, cfg Config, cols []decode.Column, rows [][]cell) (string, error) {
		dir := t.TempDir()
		cfg.Path = dir
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
		if err := s.Columns(cols, make([]decode.Mode, len(cols))); err != nil {
			_ = s.Abort(ctx)
			return dir, err
		}
		var rerr error
		for _, r := range rows {
			for i := range r {
				drive(s, i, &r[i])
			}
			if rerr = s.EndRow(); rerr != nil {
				break
			}
		}
		if rerr == nil {
			_, rerr = s.Publish(ctx)
		}
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sinktest.DirEntries(t, dir); len(got) != 0 {
			t.Fatalf("left behind: %v", got)
		}
		return dir, rerr
	}
	t.Run("abort_mid_run", func(t *testing.T) {
		dir := t.TempDir()
		s, _ := New(Config{Path: dir, RowGroupRows: 10, MaxRows: 30})
		_ = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
		_ = s.Columns(simpleCols(), make([]decode.Mode, 3))
		for _, r := range simpleRows(95) {
			for i := range r {
				drive(s, i, &r[i])
			}
			if err := s.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		if got := sinktest.DirEntries(t, dir); len(got) < 3 || !strings.HasPrefix(got[0], ".t.") {
			t.Fatalf("during the run: %v", got)
		}
		_ = s.Abort(ctx)
		if got := sinktest.DirEntries(t, dir); len(got) != 0 {
			t.Fatalf("after Abort: %v", got)
		}
	})
	t.Run("null_in_not_null", func(t *testing.T) {
		rows := simpleRows(50)
		rows[40][0] = cell{Kind: 'n'}
		if _, err := run(t, Config{RowGroupRows: 10}, simpleCols(), rows); err == nil || !strings.Contains(err.Error(), "NOT NULL") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("nanos_out_of_range", func(t *testing.T) {
		cols := []decode.Column{ncol("d", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7})}
		rows := [][]cell{{{Kind: 'T', DT: dtOf(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))}}, {{Kind: 'T', DT: dtOf(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC))}}}
		_, err := run(t, Config{TimestampUnit: "nanos"}, cols, rows)
		if err == nil || !strings.Contains(err.Error(), `column "d", row 2: 9999-12-31 23:59:59.9999999 is outside TIMESTAMP NANOS`) {
			t.Fatalf("err %v", err)
		}
		// by default (MICROS) the same rows are written, the 100 ns digit
		// truncated: the value stays in 9999
		dir := t.TempDir()
		st := writeTable(t, Config{Path: dir}, cols, rows)
		res := readBack(t, st.Files[0])
		if res.rows[1][0] != "ts(us,):"+strconv.FormatInt(time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro(), 10) {
			t.Fatalf("%v", res.rows)
		}
	})
	t.Run("duplicate_names", func(t *testing.T) {
		cols := []decode.Column{ncol("a", decode.TypeInfo{Type: decode.TypeInt4}), ncol("a", decode.TypeInfo{Type: decode.TypeInt4})}
		if _, err := run(t, Config{}, cols, nil); err == nil {
			t.Fatal("duplicate names accepted")
		}
	})
	t.Run("second_result_set", func(t *testing.T) {
		dir := t.TempDir()
		s, _ := New(Config{Path: dir})
		_ = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
		_ = s.Columns(simpleCols(), make([]decode.Mode, 3))
		if err := s.Columns(simpleCols(), make([]decode.Mode, 3)); err != nil {
			t.Fatal(err)
		}
		if err := s.Columns(simpleCols()[:2], make([]decode.Mode, 2)); err == nil {
			t.Fatal("different result set accepted")
		}
		_ = s.Abort(ctx)
	})
	t.Run("empty_result", func(t *testing.T) {
		dir := t.TempDir()
		st := writeTable(t, Config{Path: dir}, simpleCols(), nil)
		res := readBack(t, st.Files[0])
		if len(res.rows) != 0 || len(res.names) != 3 {
			t.Fatalf("%+v", res)
		}
	})
}

func TestParquetConfig(t *testing.T) {
	bad := []map[string]any{
		{"compression": "lz4"}, {"row_group_bytes": 10}, {"page_bytes": 1}, {"dictionary": "some"},
		{"parallel": -1}, {"max_rows": -5}, {"unknown": true}, {"compression": "zstd", "compression_level": 9}, {"timestamp_unit": "millis"}, {"timestamp_nanos": true},
	}
	f := Factory()
	for _, o := range bad {
		if err := f.Validate(o); err == nil {
			t.Errorf("%v accepted", o)
		}
		if _, err := f.New(o); err == nil {
			t.Errorf("%v: New accepted", o)
		}
	}
	c, err := ParseConfig(map[string]any{"row_group_rows": "5000", "offset_column": "false", "compression": "SNAPPY"})
	if err != nil || c.RowGroupRows != 5000 || *c.OffsetColumn || c.Compression != "snappy" || c.RowGroupBytes != DefaultRowGroupBytes || c.TimestampUnit != "micros" {
		t.Fatalf("%+v %v", c, err)
	}
	// mapping: lossy flags, from the factory without a sink
	cols := []decode.Column{
		ncol("dto", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 3}),
		ncol("v", decode.TypeInfo{Type: decode.TypeVariant}),
		ncol("d", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 2}),
		ncol("dt7", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}),
		ncol("dto7", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}),
		ncol("dt6", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 6}),
	}
	m, err := f.Mapping(map[string]any{"offset_column": false}, cols)
	if err != nil {
		t.Fatal(err)
	}
	if !m[0].Lossy || m[1].Lossy || !strings.Contains(m[1].Target, "v__type") || m[2].Lossy || m[2].Target != "DECIMAL(38,2) FIXED_LEN_BYTE_ARRAY(16)" ||
		!m[3].Lossy || !strings.Contains(m[3].Why, "truncated") || !strings.Contains(m[3].Target, "MICROS") || !m[4].Lossy || m[5].Lossy {
		t.Fatalf("%+v", m)
	}
	m, err = f.Mapping(map[string]any{"timestamp_unit": "nanos"}, cols)
	if err != nil {
		t.Fatal(err)
	}
	if m[3].Lossy || !strings.Contains(m[3].Target, "NANOS") || !strings.Contains(m[3].Why, "1677") || m[4].Lossy || !strings.Contains(m[5].Target, "MICROS") {
		t.Fatalf("%+v", m)
	}
	if _, err := f.Mapping(map[string]any{"timestamp_unit": "seconds"}, cols); err == nil {
		t.Fatal("Mapping accepted a bad option")
	}
	if len(f.Options) == 0 {
		t.Fatal("no declared options")
	}
	for _, o := range f.Options {
		if o.Doc == "" || (o.Default == nil && o.DefaultDoc == "") {
			t.Errorf("option %s: no doc or default", o.Name)
		}
	}
}

// TestParquetAllocsPerRow drives rows straight into the sink's CellSink
// methods: amortised over row groups, a row costs no allocation.
func TestParquetAllocsPerRow(t *testing.T) {
	g, _ := decode.GUIDFromString("6f9619ff-8b86-d011-b42d-00c04fc964ff")
	cols := []decode.Column{
		{Name: "id", Type: decode.TypeInfo{Type: decode.TypeInt8}},
		ncol("s", decode.TypeInfo{Type: decode.TypeNVarChar, Size: 200}),
		ncol("d", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 38, Scale: 4}),
		ncol("m", decode.TypeInfo{Type: decode.TypeMoneyN, Size: 8}),
		ncol("dt", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}),
		ncol("o", decode.TypeInfo{Type: decode.TypeDateTimeOffset, Scale: 7}),
		ncol("g", decode.TypeInfo{Type: decode.TypeGUID}),
		ncol("f", decode.TypeInfo{Type: decode.TypeFltN, Size: 8}),
		ncol("v", decode.TypeInfo{Type: decode.TypeVector, Size: 20}),
		ncol("n", decode.TypeInfo{Type: decode.TypeIntN, Size: 4}),
	}
	row := []cell{{Kind: 'i', I: 1}, {Kind: 's', S: "hello world"}, {Kind: 'd', Dec: mustDec(t, "-1234.5678", 38, 4)}, {Kind: 'm', I: 123},
		{Kind: 'T', DT: dtOf(time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC))}, {Kind: 'o', DTO: decode.DateTimeOffset{UTC: dtOf(time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)), OffsetMin: 60}},
		{Kind: 'g', G: g}, {Kind: 'f', F: 0.5}, {Kind: 'v', Vec: []float32{1, 2, 3}}, {Kind: 'n'}}
	s, _ := New(Config{Path: t.TempDir(), RowGroupRows: 5000, Compression: "snappy"})
	ctx := context.Background()
	_ = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
	_ = s.Columns(cols, make([]decode.Mode, len(cols)))
	one := func() {
		for i := range row {
			drive(s, i, &row[i])
		}
		if err := s.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20000; i++ {
		one()
	}
	if a := testing.AllocsPerRun(20000, one); a > 0.05 {
		t.Errorf("%.3f allocs per row (amortised)", a)
	}
	if _, err := s.Publish(ctx); err != nil {
		t.Fatal(err)
	}
}
