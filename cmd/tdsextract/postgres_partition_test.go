package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// A partitioned extract into PostgreSQL: the parts load their own staging
// tables, and the target receives every part at once when the last is in.
// A run with a failing part leaves the target as it was (its old rows,
// not a single new one) and no manifest; the run resumed loads only the
// missing part and then replaces the table with all rows.
func TestPartitionedPostgresAllOrNothing(t *testing.T) {
	pg := pgtest.Start(t)
	srv := startServer(t, map[string]int64{"dbo.poc48": 2000})
	t.Setenv("TEST_PW", tdsserver.DefaultPassword)
	dir := t.TempDir()
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte(fmt.Sprintf(`name: pgparts
source:
  connection: sqlserver://sa@%s?database=sample&encrypt=disable
  password_env: TEST_PW
parallel: 2
state_dir: %s
retry: {attempts: 1}
extracts:
  - table: dbo.poc48
    partition: {column: id, count: 4}
    sinks:
      - type: postgres
        options: {connection: "%s", mode: replace}
`, srv.Addr(), filepath.Join(dir, "state"), pg)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := pgcheck.Connect(t, pg)
	if _, err := conn.Exec(ctx, "CREATE TABLE public.poc48 (old int); INSERT INTO public.poc48 VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}

	// The last part (501 rows, the others have at most 500) fails: its
	// 501st row is malformed.
	if err := srv.SetFaults(tdsserver.Faults{MalformedAtRow: 501, Table: "poc48"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "--quiet", "run", job)
	if code == 0 {
		t.Fatalf("run with a failing part succeeded:\n%s", out)
	}
	if n := count("SELECT count(*) FROM public.poc48"); n != 2 {
		t.Fatalf("after a failed part the target has %d rows, want its 2 old ones\n%s%s", n, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "manifest.json")); err == nil {
		t.Fatal("manifest after a failed run")
	}

	if err := srv.SetFaults(tdsserver.Faults{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "run", job)
	if code != 0 {
		t.Fatalf("resumed run: exit %d\n%s%s", code, out, errOut)
	}
	if n := count("SELECT count(DISTINCT id) FROM public.poc48"); n != 2000 || count("SELECT count(*) FROM public.poc48") != 2000 {
		t.Errorf("target has %d distinct ids, want 2000", n)
	}
	if n := count("SELECT count(*) FROM pg_class WHERE relname LIKE 'poc48__tdsx_p%'"); n != 0 {
		t.Errorf("%d staging tables left", n)
	}
	if !strings.Contains(out, "finished by an earlier run") {
		t.Errorf("the resumed run did not skip the finished parts:\n%s", out)
	}
	// Combining again (a commit after a crash that followed the combine)
	// changes nothing.
	if code, out, errOut := runCLI(t, "commit", job); code != 0 {
		t.Fatalf("commit: exit %d\n%s%s", code, out, errOut)
	}
	if n := count("SELECT count(*) FROM public.poc48"); n != 2000 {
		t.Errorf("after a second combine: %d rows", n)
	}
}
