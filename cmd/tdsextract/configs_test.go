package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/engine"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// pgExampleURL is the PostgreSQL server the examples in configs/ name.
const pgExampleURL = "postgres://tdsextract@127.0.0.1:5432/warehouse?sslmode=prefer"

// Every example job in configs/ runs, as its comments say, against the
// sample server as `tdsextract sample-server` starts it (login-only TLS,
// the default rows), with only the port changed.
func TestConfigsRunAgainstSampleServer(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("configs: %v %v", files, err)
	}
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: sampledb.New(sampledb.Config{Seed: 1, Database: defaultDatabase})})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port := strings.TrimPrefix(srv.Addr(), "127.0.0.1:")
	t.Setenv("TDSEXTRACT_SAMPLE_PASSWORD", tdsserver.DefaultPassword)
	t.Setenv("SINCE_ORDER_ID", "4000") // configs/incremental.yaml
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			body := string(b)
			if !strings.Contains(body, "127.0.0.1:14330") && !strings.Contains(body, "127.0.0.1,14330") {
				t.Fatalf("%s does not connect to the sample server's address 127.0.0.1:14330", f)
			}
			body = strings.NewReplacer("127.0.0.1:14330", "127.0.0.1:"+port, "127.0.0.1,14330", "127.0.0.1,"+port).Replace(body)
			if strings.Contains(body, "type: postgres") {
				// The PostgreSQL examples load a throwaway PostgreSQL 15
				// instead of the server their comments name.
				pg := pgtest.Start(t)
				body = strings.ReplaceAll(body, pgExampleURL, pg)
				t.Setenv("PGPASSWORD_WAREHOUSE", "unused: the test server trusts local logins")
			}
			dir := t.TempDir()
			job := writeFile(t, dir, filepath.Base(f), body)
			t.Chdir(dir) // the examples write under ./out
			sum := filepath.Join(dir, "summary.json")
			code, out, errOut := runCLI(t, "--log-level", "warn", "run", "--summary-json", sum, job)
			var s engine.Summary
			if b, err := os.ReadFile(sum); err != nil || json.Unmarshal(b, &s) != nil {
				t.Fatalf("exit %d, no summary (%v)\n%s%s", code, err, out, errOut)
			}
			failed := 0
			for _, e := range s.Extracts {
				switch {
				case e.Error == "":
					if len(e.Sinks) == 0 {
						t.Errorf("%s: no sink published", e.Name)
					}
					for _, sk := range e.Sinks {
						if sk.Rows != e.Rows {
							t.Errorf("%s -> %s: %d rows of %d", e.Name, sk.Type, sk.Rows, e.Rows)
						}
						if sk.Type != "postgres" && len(sk.Files) == 0 {
							t.Errorf("%s -> %s: no output file", e.Name, sk.Type)
						}
						for _, p := range sk.Files {
							if _, err := os.Stat(p); err != nil {
								t.Errorf("%s -> %s: %v", e.Name, sk.Type, err)
							}
						}
					}
				default:
					t.Errorf("%s: %s", e.Name, e.Error)
					failed++
				}
			}
			if failed == 0 && code != 0 {
				t.Errorf("exit %d with every extract ok\n%s%s", code, out, errOut)
			}
			if failed > 0 && code != exitExtract {
				t.Errorf("exit %d, want %d for a failed extract", code, exitExtract)
			}
		})
	}
}
