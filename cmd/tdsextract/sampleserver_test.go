package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
)

// sample-server serves until its context ends; its flags configure the
// data and the login, and it writes its CA for clients on request.
func TestSampleServerCommand(t *testing.T) {
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "stdout"))
	errf, _ := os.Create(filepath.Join(dir, "stderr"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca := filepath.Join(dir, "ca.pem")
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"sample-server", "--listen", "127.0.0.1:0", "--rows", "poc48=123",
			"--user", "etl", "--password", "pw;with@odd:chars", "--write-ca", ca, "--quiet"}, out, errf)
	}()
	addrRE := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, _ := os.Open(out.Name())
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				addr = m[1]
			}
		}
		f.Close()
	}
	if addr == "" {
		cancel()
		<-done
		b, _ := os.ReadFile(errf.Name())
		t.Fatalf("sample-server did not report its address; stderr: %s", b)
	}
	if _, err := os.Stat(ca); err != nil {
		t.Errorf("--write-ca: %v", err)
	}
	cfg, err := session.ParseConnString("sqlserver://etl@" + addr + "?database=sample&encrypt=disable")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = "pw;with@odd:chars"
	conn, err := session.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect to sample-server: %v", err)
	}
	n, err := catalog.Count(context.Background(), conn, "dbo", "poc48", "", session.TimeoutOf(10*time.Second))
	conn.Close()
	if err != nil || n != 123 {
		t.Fatalf("COUNT_BIG(*) = %d, %v; want 123 from --rows", n, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("sample-server exited %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sample-server did not stop when its context ended")
	}
}

func TestSampleServerBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"sample-server", "--packet-size", "100"},
		{"sample-server", "--rows", "poc48"},
		{"sample-server", "--encrypt", "sometimes"},
		{"sample-server", "--fault-stall-after-rows", "5"},
		{"sample-server", "--cert", "x.pem"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitConfig || errOut == "" {
			t.Errorf("%v: code %d, stderr %q; want %d and a message", args, code, errOut, exitConfig)
		}
	}
}
