package parquet

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// treeFiles lists every entry under root as slash paths relative to root
// (directories with a trailing "/"), sorted.
func treeFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// partFiles groups the published files by their partition directory
// (relative to root) and checks every name is part-NNNN.parquet numbered
// 1..n without gaps.
func partFiles(t *testing.T, root string, files []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("file %s is not under %s", f, root)
		}
		dir, base := filepath.Split(filepath.ToSlash(rel))
		out[strings.TrimSuffix(dir, "/")] = append(out[strings.TrimSuffix(dir, "/")], base)
	}
	for dir, names := range out {
		slices.Sort(names)
		for i, n := range names {
			if want := "part-" + pad4(i+1) + ".parquet"; n != want {
				t.Fatalf("%s: files %v, want part-0001.parquet .. in sequence", dir, names)
			}
		}
	}
	// and nothing else is in the tree: no temporary files, no stray dirs
	for _, e := range treeFiles(t, root) {
		if strings.HasSuffix(e, "/") {
			continue
		}
		if !slices.Contains(files, filepath.Join(root, filepath.FromSlash(e))) {
			t.Fatalf("unexpected file %s in the output tree", e)
		}
	}
	return out
}

func pad4(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// TestParquetPartitionSales partitions sales.orders (through the real
// decoder) by status and ship_city, then reads every file back with
// arrow-go: every order is in exactly one file, in the directory named by
// its status and city (NULL city: __HIVE_DEFAULT_PARTITION__), with the
// partition columns kept out of the files.
func TestParquetPartitionSales(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 11, Rows: map[string]int64{"sales.orders": 2000}})
	tb, ok := db.Table("sales", "orders")
	if !ok {
		t.Fatal("sampledb has no sales.orders")
	}
	for _, inFile := range []bool{false, true} {
		t.Run("in_file="+strconv.FormatBool(inFile), func(t *testing.T) {
			dir := t.TempDir()
			s, err := New(Config{Path: dir + "/", PartitionBy: []string{"status", "SHIP_CITY"}, PartitionColumnsInFile: inFile,
				RowGroupRows: 64, MaxOpenPartitions: 200})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_ = s.Open(ctx, sinks.ExtractInfo{Name: "orders", Schema: "sales", Table: "orders"})
			streamTable(t, tb, s, tb.Rows, false)
			st, err := s.Publish(ctx)
			if err != nil {
				_ = s.Abort(ctx)
				t.Fatal(err)
			}
			root := filepath.Join(dir, "orders")
			byDir := partFiles(t, root, st.Files)
			var row []any
			byID := map[string]int64{}
			for r := int64(0); r < tb.Rows; r++ {
				row = tb.Row(r, row)
				byID[want(s.plans[0], &tb.Columns[0], partValue, row[0])] = r
			}
			seen := map[int64]bool{}
			var nullCity, files int
			for pdir, names := range byDir {
				segs := strings.Split(pdir, "/")
				if len(segs) != 2 || !strings.HasPrefix(segs[0], "status=") || !strings.HasPrefix(segs[1], "ship_city=") {
					t.Fatalf("directory %q, want status=<v>/ship_city=<v>", pdir)
				}
				for _, n := range names {
					files++
					res := readBack(t, filepath.Join(root, pdir, n))
					wantNames := []string{"order_id", "customer_id", "order_date", "total"}
					if inFile {
						wantNames = []string{"order_id", "customer_id", "order_date", "status", "ship_city", "total"}
					}
					if !slices.Equal(res.names, wantNames) {
						t.Fatalf("%s/%s: columns %v, want %v", pdir, n, res.names, wantNames)
					}
					var fcols []outCol
					for _, oc := range fileColumns(s.plans) {
						if inFile || (oc.src != 3 && oc.src != 4) {
							fcols = append(fcols, oc)
						}
					}
					for _, got := range readArrow(t, filepath.Join(root, pdir, n), s.plans, fcols) {
						r, ok := byID[got[0]]
						if !ok || seen[r] {
							t.Fatalf("%s/%s: order_id %s unknown or seen twice", pdir, n, got[0])
						}
						seen[r] = true
						row = tb.Row(r, row)
						city := HiveDefaultPartition
						if row[4] != nil {
							city = row[4].(string)
						} else {
							nullCity++
						}
						if want := "status=" + row[3].(string) + "/ship_city=" + city; pdir != want {
							t.Fatalf("order %s in %s, want %s", got[0], pdir, want)
						}
						k := 0
						for i := range tb.Columns {
							if !inFile && (i == 3 || i == 4) {
								continue
							}
							if want := want(s.plans[i], &tb.Columns[i], partValue, row[i]); got[k] != want {
								t.Fatalf("order %s column %s: got %q want %q", got[0], tb.Columns[i].Name, got[k], want)
							}
							k++
						}
					}
				}
			}
			if int64(len(seen)) != tb.Rows || st.Rows != tb.Rows || files != len(st.Files) {
				t.Fatalf("%d of %d orders read back, stats %d rows %d files", len(seen), tb.Rows, st.Rows, len(st.Files))
			}
			if nullCity == 0 || len(byDir) < 20 {
				t.Fatalf("test data too narrow: %d NULL cities, %d partitions", nullCity, len(byDir))
			}
		})
	}
}

// TestParquetPartitionLineitemBudget partitions lineitem by return flag and
// line status with a tiny partition_buffer_bytes and max_rows: row groups
// are cut by the shared budget, files by max_rows, and every row is
// still read back from its partition.
func TestParquetPartitionLineitemBudget(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"dbo.lineitem": 3000}})
	tb, _ := db.Table("dbo", "lineitem")
	dir := t.TempDir()
	s, err := New(Config{Path: dir + "/", PartitionBy: []string{"l_returnflag", "l_linestatus"}, PartitionBufferBytes: 16 << 10,
		MaxRows: 700, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = s.Open(ctx, sinks.ExtractInfo{Name: "lineitem"})
	streamTable(t, tb, s, tb.Rows, true)
	st, err := s.Publish(ctx)
	if err != nil {
		_ = s.Abort(ctx)
		t.Fatal(err)
	}
	root := filepath.Join(dir, "lineitem")
	byDir := partFiles(t, root, st.Files)
	var row []any
	want := map[string]int{} // "orderkey/linenumber" -> source row
	for r := int64(0); r < tb.Rows; r++ {
		row = tb.Row(r, row)
		want[strconv.FormatInt(row[0].(int64), 10)+"/"+strconv.FormatInt(row[3].(int64), 10)] = int(r)
	}
	total, multiGroup, multiFile := 0, false, false
	for pdir, names := range byDir {
		multiFile = multiFile || len(names) > 1
		for _, n := range names {
			res := readBack(t, filepath.Join(root, pdir, n))
			if len(res.rows) > 700 {
				t.Fatalf("%s/%s: %d rows > max_rows", pdir, n, len(res.rows))
			}
			multiGroup = multiGroup || res.groups > 1
			for _, got := range res.rows {
				r, ok := want[got[0]+"/"+got[3]]
				if !ok {
					t.Fatalf("%s/%s: row %v unknown or seen twice", pdir, n, got[:4])
				}
				delete(want, got[0]+"/"+got[3])
				row = tb.Row(int64(r), row)
				if exp := "l_returnflag=" + row[8].(string) + "/l_linestatus=" + row[9].(string); pdir != exp {
					t.Fatalf("row %d in %s, want %s", r, pdir, exp)
				}
				if len(got) != len(tb.Columns)-2 {
					t.Fatalf("%d columns in the file", len(got))
				}
				total++
			}
		}
	}
	if total != int(tb.Rows) || len(want) != 0 || st.Rows != tb.Rows {
		t.Fatalf("read %d of %d rows (%d missing)", total, tb.Rows, len(want))
	}
	if !multiGroup || !multiFile {
		t.Fatalf("budget or max_rows not exercised: several row groups %v, several files %v", multiGroup, multiFile)
	}
}

func partCols() []decode.Column {
	return []decode.Column{
		{Name: "id", Type: decode.TypeInfo{Type: decode.TypeInt8}},
		ncol("name", decode.TypeInfo{Type: decode.TypeNVarChar, Size: 200}),
		ncol("d", decode.TypeInfo{Type: decode.TypeDateN}),
		ncol("k", decode.TypeInfo{Type: decode.TypeIntN, Size: 4}),
		ncol("g", decode.TypeInfo{Type: decode.TypeGUID, Size: 16}),
		ncol("flag", decode.TypeInfo{Type: decode.TypeBitN, Size: 1}),
	}
}

// runRows drives rows through a sink on cols and publishes (or, with
// abort, aborts before Publish).
func runRows(t *testing.T, cfg Config, cols []decode.Column, rows [][]cell, abort bool) (sinks.Stats, *Sink) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
	if err := s.Columns(cols, make([]decode.Mode, len(cols))); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for i := range r {
			drive(s, i, &r[i])
		}
		if err := s.EndRow(); err != nil {
			_ = s.Abort(ctx)
			t.Fatal(err)
		}
	}
	if abort {
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		return sinks.Stats{}, s
	}
	st, err := s.Publish(ctx)
	if err != nil {
		_ = s.Abort(ctx)
		t.Fatal(err)
	}
	return st, s
}

// TestParquetPartitionEscaping checks the directory names of awkward
// values against Hive's escaping, NULL and "" as the default partition,
// dates, integers, GUIDs and bits as text.
func TestParquetPartitionEscaping(t *testing.T) {
	names := []struct {
		v   *string
		dir string
	}{
		{strp("plain"), "plain"},
		{strp("a/b\\c"), "a%2Fb%5Cc"},
		{strp(`x=y:z%w#q?r*s"t`), "x%3Dy%3Az%25w%23q%3Fr%2As%22t"},
		{strp("tab\there\nnl\x7f"), "tab%09here%0Anl%7F"},
		{strp("{[^]}'"), "%7B%5B%5E%5D}%27"}, // Hive leaves "}" as it is
		{strp("São Paulo, Zürich + ☃"), "São Paulo, Zürich + ☃"},
		{strp(".."), ".."},
		{strp(""), HiveDefaultPartition},
		{nil, HiveDefaultPartition},
	}
	g := decode.GUID{0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	var rows [][]cell
	for i, n := range names {
		c := cell{Kind: 'n'}
		if n.v != nil {
			c = cell{Kind: 's', S: *n.v}
		}
		rows = append(rows, []cell{{Kind: 'i', I: int64(i)}, c, {Kind: 'D', I: int64(decode.DateFromCivil(2024, 2, 29))},
			{Kind: 'i', I: -42}, {Kind: 'g', G: g}, {Kind: 'b', B: true}})
	}
	// a NULL date, int, guid and bit
	rows = append(rows, []cell{{Kind: 'i', I: 99}, {Kind: 's', S: "plain"}, {Kind: 'n'}, {Kind: 'n'}, {Kind: 'n'}, {Kind: 'n'}})
	dir := t.TempDir()
	st, _ := runRows(t, Config{Path: dir + "/{extract}_out", PartitionBy: []string{"name", "d", "k", "g", "flag"}}, partCols(), rows, false)
	root := filepath.Join(dir, "t_out")
	byDir := partFiles(t, root, st.Files)
	want := map[string][]string{}
	for i, n := range names {
		d := "name=" + n.dir + "/d=2024-02-29/k=-42/g=" + g.String() + "/flag=true"
		want[d] = append(want[d], strconv.Itoa(i))
	}
	d := "name=plain/d=" + HiveDefaultPartition + "/k=" + HiveDefaultPartition + "/g=" + HiveDefaultPartition + "/flag=" + HiveDefaultPartition
	want[d] = []string{"99"}
	if len(byDir) != len(want) {
		t.Fatalf("directories %v, want %v", keys(byDir), keys(want))
	}
	for pdir, files := range byDir {
		ids, ok := want[pdir]
		if !ok {
			t.Fatalf("unexpected directory %q (want one of %q)", pdir, keys(want))
		}
		var got []string
		for _, f := range files {
			res := readBack(t, filepath.Join(root, pdir, f))
			if !slices.Equal(res.names, []string{"id"}) {
				t.Fatalf("%s: columns %v", pdir, res.names)
			}
			for _, r := range res.rows {
				got = append(got, r[0])
			}
		}
		if !slices.Equal(got, ids) {
			t.Fatalf("%s: ids %v, want %v", pdir, got, ids)
		}
	}
}

func strp(s string) *string { return &s }

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestParquetPartitionLRU drives rows cycling over more partitions than
// may be open: each return to a closed partition starts its next numbered
// file, and every row is in exactly one file of its own partition.
func TestParquetPartitionLRU(t *testing.T) {
	const parts, n = 5, 400
	cols := []decode.Column{{Name: "id", Type: decode.TypeInfo{Type: decode.TypeInt8}}, ncol("p", decode.TypeInfo{Type: decode.TypeIntN, Size: 4}),
		ncol("s", decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 50})}
	// runs of 20 rows per partition, partitions in the order 0,1,2,3,4,0,1,...
	var rows [][]cell
	for i := 0; i < n; i++ {
		p := (i / 20) % parts
		rows = append(rows, []cell{{Kind: 'i', I: int64(i)}, {Kind: 'i', I: int64(p)}, {Kind: 's', S: "row " + strconv.Itoa(i)}})
	}
	dir := t.TempDir()
	st, s := runRows(t, Config{Path: dir, PartitionBy: []string{"p"}, MaxOpenPartitions: 2, RowGroupRows: 8, Compression: "snappy"}, cols, rows, false)
	root := filepath.Join(dir, "t")
	byDir := partFiles(t, root, st.Files)
	if len(byDir) != parts {
		t.Fatalf("partitions %v", byDir)
	}
	seen := make([]bool, n)
	for p := 0; p < parts; p++ {
		pdir := "p=" + strconv.Itoa(p)
		files := byDir[pdir]
		// every run of 20 rows finds its partition closed (2 open of 5)
		if len(files) != n/20/parts {
			t.Fatalf("%s: %d files, want %d (one per reopening)", pdir, len(files), n/20/parts)
		}
		for fi, f := range files {
			res := readBack(t, filepath.Join(root, pdir, f))
			if len(res.rows) != 20 || res.groups != 3 {
				t.Fatalf("%s/%s: %d rows in %d row groups, want 20 in 3", pdir, f, len(res.rows), res.groups)
			}
			for k, r := range res.rows {
				id, _ := strconv.Atoi(r[0])
				if want := (fi*parts+p)*20 + k; id != want || r[1] != "row "+r[0] || seen[id] {
					t.Fatalf("%s/%s row %d: %v, want id %d", pdir, f, k, r, want)
				}
				seen[id] = true
			}
		}
	}
	if s.part.open != 0 || len(s.part.pool) > s.cfg.Parallel+1 {
		t.Fatalf("after publish: %d open, %d pooled batches", s.part.open, len(s.part.pool))
	}
	if st.Rows != n {
		t.Fatalf("stats %+v", st)
	}
}

// TestParquetPartitionAbort checks that Abort, mid-run with partitions
// open and closed (evicted) ones holding finished files, leaves nothing:
// no files, no partition directories, no extract directory.
func TestParquetPartitionAbort(t *testing.T) {
	var rows [][]cell
	for i := 0; i < 300; i++ {
		rows = append(rows, []cell{{Kind: 'i', I: int64(i)}, {Kind: 's', S: "n" + strconv.Itoa(i%7)},
			{Kind: 'D', I: int64(decode.DateFromCivil(2020, 1, 1+i%3))}, {Kind: 'i', I: 1}, {Kind: 'n'}, {Kind: 'b'}})
	}
	dir := t.TempDir()
	_, s := runRows(t, Config{Path: dir + "/", PartitionBy: []string{"d", "name"}, MaxOpenPartitions: 3, RowGroupRows: 10}, partCols(), rows, true)
	if len(s.part.all) != 21 {
		t.Fatalf("%d partitions", len(s.part.all))
	}
	if got := treeFiles(t, dir); len(got) != 0 {
		t.Fatalf("after Abort: %v", got)
	}
	// an existing extract directory with other content is kept
	root := filepath.Join(dir, "t")
	if err := os.MkdirAll(filepath.Join(root, "d=2020-01-01"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d=2020-01-01", "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _ = runRows(t, Config{Path: dir + "/", PartitionBy: []string{"d", "name"}, MaxOpenPartitions: 3, RowGroupRows: 10}, partCols(), rows, true)
	if got := treeFiles(t, dir); !slices.Equal(got, []string{"t/", "t/d=2020-01-01/", "t/d=2020-01-01/keep.txt"}) {
		t.Fatalf("after Abort: %v", got)
	}
}

// TestParquetPartitionRejects checks partition_by errors at config and at
// Columns time.
func TestParquetPartitionRejects(t *testing.T) {
	for _, opts := range []map[string]any{
		{"partition_by": []any{"a", "A"}},
		{"partition_by": []any{""}},
		{"max_open_partitions": 4},
		{"partition_columns_in_file": true},
		{"partition_by": []any{"a"}, "max_open_partitions": -1},
		{"partition_by": []any{"a"}, "partition_buffer_bytes": 10},
	} {
		if _, err := ParseConfig(opts); err == nil {
			t.Errorf("%v: no error", opts)
		}
	}
	c, err := ParseConfig(map[string]any{"partition_by": []any{"a"}})
	if err != nil || c.MaxOpenPartitions != DefaultMaxOpenPartitions || c.PartitionBufferBytes != c.RowGroupBytes {
		t.Fatalf("defaults %+v %v", c, err)
	}
	cols := []decode.Column{
		{Name: "id", Type: decode.TypeInfo{Type: decode.TypeInt8}},
		ncol("f", decode.TypeInfo{Type: decode.TypeFltN, Size: 8}),
		ncol("r", decode.TypeInfo{Type: decode.TypeFltN, Size: 4}),
		ncol("vb", decode.TypeInfo{Type: decode.TypeBigVarBinary, Size: 100}),
		ncol("bn", decode.TypeInfo{Type: decode.TypeBigBinary, Size: 4}),
		ncol("lob", decode.TypeInfo{Type: decode.TypeNVarChar, Size: decode.MaxVarLen}),
		ncol("txt", decode.TypeInfo{Type: decode.TypeText, Size: 1 << 30}),
		ncol("x", decode.TypeInfo{Type: decode.TypeXML}),
		ncol("j", decode.TypeInfo{Type: decode.TypeJSON}),
		ncol("v", decode.TypeInfo{Type: decode.TypeVariant, Size: 8016}),
		ncol("dt", decode.TypeInfo{Type: decode.TypeDateTime2N, Scale: 7}),
		ncol("dec", decode.TypeInfo{Type: decode.TypeDecimalN, Precision: 10, Scale: 2, Size: 9}),
		ncol("ok", decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 8000}),
	}
	for _, tc := range []struct {
		by   []string
		want string
	}{
		{[]string{"f"}, `"f" is float`}, {[]string{"r"}, `"r" is real`}, {[]string{"vb"}, `"vb" is varbinary(100)`},
		{[]string{"bn"}, `binary(4)`}, {[]string{"lob"}, `nvarchar(max)`}, {[]string{"txt"}, `"txt" is text`},
		{[]string{"x"}, `"x" is xml`}, {[]string{"j"}, `"j" is json`}, {[]string{"v"}, `sql_variant`},
		{[]string{"dt"}, `datetime2(7)`}, {[]string{"dec"}, `decimal(10,2)`},
		{[]string{"nope"}, `"nope" is not a column of extract "t" (columns: id, f,`},
		{[]string{"ok", "OK"}, `twice`},
	} {
		s, err := New(Config{Path: t.TempDir(), PartitionBy: tc.by})
		if err != nil {
			if strings.Contains(err.Error(), tc.want) {
				continue
			}
			t.Fatal(err)
		}
		_ = s.Open(context.Background(), sinks.ExtractInfo{Name: "t"})
		err = s.Columns(cols, make([]decode.Mode, len(cols)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("partition_by %v: error %v, want it to mention %q", tc.by, err, tc.want)
		}
	}
	// every column a partition column, none left for the files
	s, _ := New(Config{Path: t.TempDir(), PartitionBy: []string{"id"}})
	_ = s.Open(context.Background(), sinks.ExtractInfo{Name: "t"})
	if err := s.Columns(cols[:1], make([]decode.Mode, 1)); err == nil || !strings.Contains(err.Error(), "no columns") {
		t.Errorf("all columns partitioned: %v", err)
	}
	// ... which partition_columns_in_file allows
	s, _ = New(Config{Path: t.TempDir(), PartitionBy: []string{"id"}, PartitionColumnsInFile: true})
	_ = s.Open(context.Background(), sinks.ExtractInfo{Name: "t"})
	if err := s.Columns(cols[:1], make([]decode.Mode, 1)); err != nil {
		t.Error(err)
	}
	// the mapping report names the partition directory
	m := s.Mapping(cols[:1])
	if !strings.Contains(m[0].Target, "hive partition directory id=<value>") {
		t.Errorf("mapping %+v", m[0])
	}
}

// TestParquetPartitionAllocs checks that routing a row to its partition
// allocates nothing in steady state (rows alternate between partitions, so
// every row takes the map lookup), and that the unpartitioned path still
// allocates nothing per row.
func TestParquetPartitionAllocs(t *testing.T) {
	cols := simpleCols()
	rows := simpleRows(999)
	for _, by := range [][]string{nil, {"cat"}} {
		s, err := New(Config{Path: t.TempDir(), PartitionBy: by})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_ = s.Open(ctx, sinks.ExtractInfo{Name: "t"})
		if err := s.Columns(cols, make([]decode.Mode, len(cols))); err != nil {
			t.Fatal(err)
		}
		i := 0
		one := func() {
			r := rows[i%len(rows)]
			i++
			for c := range r {
				drive(s, c, &r[c])
			}
			if err := s.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		for k := 0; k < 20000; k++ { // warm up: partitions exist, batches have grown
			one()
		}
		if a := testing.AllocsPerRun(2000, one); a != 0 {
			t.Errorf("partition_by %v: %v allocations per row", by, a)
		}
		if err := s.Abort(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestParquetPartitionEmpty: an extract without rows writes no file and
// creates no directory.
func TestParquetPartitionEmpty(t *testing.T) {
	dir := t.TempDir()
	st, _ := runRows(t, Config{Path: dir + "/", PartitionBy: []string{"name"}}, partCols(), nil, false)
	if len(st.Files) != 0 || st.Rows != 0 {
		t.Fatalf("stats %+v", st)
	}
	if got := treeFiles(t, dir); len(got) != 0 {
		t.Fatalf("tree %v", got)
	}
}

// BenchmarkParquetSinkPartitioned runs lineitem through the decoder into
// the sink partitioned by l_shipmode (7 partitions, rows interleaved),
// beside the same run unpartitioned; rows/s and allocs per row:
//
//	go test ./sinks/parquet/ -run '^$' -bench SinkPartitioned -benchtime 20x
func BenchmarkParquetSinkPartitioned(b *testing.B) {
	db := sinktest.BenchDB()
	tb, _ := db.Table("dbo", "lineitem")
	const block = 16384
	buf := tb.AppendRows(nil, 0, block, false)
	for _, by := range [][]string{nil, {"l_shipmode"}} {
		name := "none"
		if by != nil {
			name = strings.Join(by, ",")
		}
		b.Run("by="+name, func(b *testing.B) {
			s, err := New(Config{Path: b.TempDir(), Compression: "none", RowGroupBytes: 32 << 20, PartitionBy: by})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			_ = s.Open(ctx, sinks.ExtractInfo{Name: "lineitem"})
			st := decode.NewStream(decode.StreamOptions{ResidencyCap: 64 << 20, RowBatch: decode.RowBatchSize})
			_ = st.SetSink(s)
			run := func(p []byte) { sinktest.Feed(b, st, p) }
			run(decode.AppendColMetadata(nil, tb.Columns))
			for i := 0; i < 40; i++ { // warm up: batches at their steady size
				run(buf)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run(buf)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*block/b.Elapsed().Seconds(), "rows/s")
			if err := s.Abort(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
