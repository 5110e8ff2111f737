package tdsserver_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// FreeTDS (Debian freetds-bin, tdsodbc, unixodbc) against the server:
// tsql (SQLBatch), freebcp (SET FMTONLY probing, then the query) and isql
// over tdsodbc (RPC sp_prepexec).

// freetdsEnv writes a freetds.conf with a server entry "sample" and returns
// the environment for FreeTDS tools.
func freetdsEnv(t *testing.T, s *tdsserver.Server, encryption string) []string {
	t.Helper()
	return freetdsEnvVersion(t, s, encryption, "7.4")
}

func freetdsEnvVersion(t *testing.T, s *tdsserver.Server, encryption, version string) []string {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`[global]
	tds version = %[3]s
	client charset = UTF-8
[sample]
	host = 127.0.0.1
	port = %[1]d
	tds version = %[3]s
	encryption = %[2]s
	client charset = UTF-8
`, s.Port(), encryption, version)
	path := filepath.Join(dir, "freetds.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "FREETDSCONF="+path, "TDSVER="+version, "HOME="+dir, "LANG=C.UTF-8", "TDSDUMP=")
}

// run runs a command with a timeout and returns stdout; stderr goes into
// the failure message.
func run(t *testing.T, env []string, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, truncateOut(out.String()), truncateOut(errb.String()))
	}
	return out.String(), nil
}

func truncateOut(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "\n[...]"
	}
	return s
}

// plain renders an expected cell the way FreeTDS's text conversions print
// the simple types used below (ints and strings; NULL as given).
func plain(v any, null string) string {
	switch x := v.(type) {
	case nil:
		return null
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return fmt.Sprintf("%v", v)
}

func TestFreeTDSTsql(t *testing.T) {
	needBinary(t, "tsql")
	db := newDB()
	for _, tc := range [][2]string{{"request", "7.4"}, {"require", "7.4"}, {"off", "7.4"}, {"request", "7.3"}} {
		enc, version := tc[0], tc[1]
		t.Run("encryption="+enc+"/tds="+version, func(t *testing.T) {
			s := startServer(t, tdsserver.Config{DB: db})
			env := freetdsEnvVersion(t, s, enc, version)
			out, err := run(t, env, "SELECT TOP (20) id, big, name FROM dbo.odbc5 ORDER BY id\ngo\nexit\n",
				"tsql", "-S", "sample", "-U", testUser, "-P", testPassword, "-D", "sample", "-o", "q")
			if err != nil {
				t.Fatal(err)
			}
			tb, _ := db.Table("dbo", "odbc5")
			lines := nonEmptyLines(out)
			var rows []string
			for _, l := range lines {
				if strings.Count(l, "\t") == 2 {
					rows = append(rows, l)
				}
			}
			if len(rows) != 21 || rows[0] != "id\tbig\tname" {
				t.Fatalf("tsql output:\n%s", out)
			}
			for i := range int64(20) {
				r := tb.Row(i, nil)
				want := plain(r[0], "NULL") + "\t" + plain(r[1], "NULL") + "\t" + plain(r[2], "NULL")
				if rows[i+1] != want {
					t.Errorf("row %d: got %q, want %q", i, rows[i+1], want)
				}
			}
			if st := s.Stats(); st.Logins != 1 || st.Queries < 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestFreeTDSUTF8 reads text in UTF-8 and non-Unicode collations through
// FreeTDS, which negotiates UTF8_SUPPORT and converts to UTF-8.
func TestFreeTDSUTF8(t *testing.T) {
	needBinary(t, "tsql")
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	env := freetdsEnv(t, s, "request")
	for _, name := range []string{"text_utf8", "text_cp1252", "text_cp1251", "text_cp932"} {
		tb, ok := db.Table("dbo", name)
		if !ok {
			t.Fatalf("no table %s", name)
		}
		q := fmt.Sprintf("SELECT id, v, n FROM dbo.%s ORDER BY id\ngo\nexit\n", name)
		out, err := run(t, env, q, "tsql", "-S", "sample", "-U", testUser, "-P", testPassword, "-o", "q")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, l := range nonEmptyLines(out) {
			got[l] = true
		}
		vi, ni := tb.ColumnIndex("v"), tb.ColumnIndex("n")
		for i := range tb.Rows {
			r := tb.Row(i, nil)
			want := plain(r[0], "NULL") + "\t" + plain(r[vi], "NULL") + "\t" + plain(r[ni], "NULL")
			if strings.ContainsAny(want, "\n\r") {
				continue
			}
			if !got[want] {
				t.Errorf("%s: row %d %q not in tsql output", name, i, want)
			}
		}
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestFreeTDSFreebcp(t *testing.T) {
	needBinary(t, "freebcp")
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	env := freetdsEnv(t, s, "request")
	file := filepath.Join(t.TempDir(), "odbc5.txt")
	out, err := run(t, env, "", "freebcp", "SELECT id, big, name, label FROM sample.dbo.odbc5", "queryout", file, "-c",
		"-S", "sample", "-U", testUser, "-P", testPassword)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := db.Table("dbo", "odbc5")
	if !strings.Contains(out, fmt.Sprintf("%d rows copied", tb.Rows)) {
		t.Fatalf("freebcp output:\n%s", out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if int64(len(lines)) != tb.Rows {
		t.Fatalf("%d lines, want %d", len(lines), tb.Rows)
	}
	var r []any
	bad := 0
	for i := range tb.Rows {
		r = tb.Row(i, r)
		want := plain(r[0], "") + "\t" + plain(r[1], "") + "\t" + plain(r[2], "") + "\t" + plain(r[3], "")
		if lines[i] != want && bad < 10 {
			bad++
			t.Errorf("line %d: got %q, want %q", i+1, lines[i], want)
		}
	}
}

func TestFreeTDSIsqlODBC(t *testing.T) {
	needBinary(t, "isql")
	driver := "/usr/lib/x86_64-linux-gnu/odbc/libtdsodbc.so"
	if _, err := os.Stat(driver); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tdsodbc driver %s missing (CI is set)", driver)
		}
		t.Skipf("skipping: tdsodbc driver %s missing (apt-get install tdsodbc)", driver)
	}
	db := newDB()
	s := startServer(t, tdsserver.Config{DB: db})
	env := freetdsEnv(t, s, "request")
	dir := t.TempDir()
	inst := fmt.Sprintf("[FreeTDS]\nDescription = FreeTDS\nDriver = %s\n", driver)
	dsn := fmt.Sprintf("[sample]\nDriver = FreeTDS\nServer = 127.0.0.1\nPort = %d\nDatabase = sample\nTDS_Version = 7.4\nClientCharset = UTF-8\n", s.Port())
	if err := os.WriteFile(filepath.Join(dir, "odbcinst.ini"), []byte(inst), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "odbc.ini"), []byte(dsn), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(env, "ODBCSYSINI="+dir, "ODBCINI="+filepath.Join(dir, "odbc.ini"))
	out, err := run(t, env, "SELECT TOP (10) product_id, sku FROM sales.products ORDER BY product_id\n",
		"isql", "-v", "-b", "-d|", "sample", testUser, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := db.Table("sales", "products")
	sku := tb.ColumnIndex("sku")
	got := nonEmptyLines(out)
	var rows []string
	for _, l := range got {
		if strings.Contains(l, "|") {
			rows = append(rows, strings.TrimSpace(l))
		}
	}
	if len(rows) != 10 {
		t.Fatalf("isql output:\n%s", out)
	}
	for i := range int64(10) {
		r := tb.Row(i, nil)
		want := plain(r[0], "") + "|" + plain(r[sku], "")
		if rows[i] != want {
			t.Errorf("row %d: got %q, want %q", i, rows[i], want)
		}
	}
	if st := s.Stats(); st.RPCs < 1 {
		t.Fatalf("isql sent no RPC (stats %+v)", st)
	}
	_ = sampledb.DefaultRows
}
