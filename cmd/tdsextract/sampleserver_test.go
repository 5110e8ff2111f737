package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

// runSampleServer starts the sample-server command in the background and
// waits for it to report its address; it returns the address, the
// connection string it prints for clients, and a stop function that ends
// it and returns its exit code.
func runSampleServer(t *testing.T, args ...string) (addr, connString string, stop func() int) {
	t.Helper()
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "stdout"))
	errf, _ := os.Create(filepath.Join(dir, "stderr"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, append([]string{"sample-server", "--listen", "127.0.0.1:0", "--quiet"}, args...), out, errf)
	}()
	stop = func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("sample-server did not stop when its context ended")
			return -1
		}
	}
	addrRE := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	connRE := regexp.MustCompile(`^connect with: (\S+)$`)
	for deadline := time.Now().Add(30 * time.Second); (addr == "" || connString == "") && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, _ := os.Open(out.Name())
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				addr = m[1]
			}
			if m := connRE.FindStringSubmatch(sc.Text()); m != nil {
				connString = m[1]
			}
		}
		f.Close()
	}
	if addr == "" || connString == "" {
		stop()
		b, _ := os.ReadFile(errf.Name())
		t.Fatalf("sample-server did not report its address and connection string; stderr: %s", b)
	}
	return addr, connString, stop
}

// sample-server serves until its context ends; its flags configure the
// data and the login, and it writes its CA for clients on request.
func TestSampleServerCommand(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	addr, _, stop := runSampleServer(t, "--rows", "poc48=123,events=10", "--user", "etl", "--password", "pw;with@odd:chars", "--write-ca", ca,
		"--snapshot-isolation=false")
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
	ctx, tmo := context.Background(), session.TimeoutOf(10*time.Second)
	n, err := catalog.Count(ctx, conn, "dbo", "poc48", "", tmo)
	if err != nil || n != 123 {
		t.Fatalf("COUNT_BIG(*) = %d, %v; want 123 from --rows", n, err)
	}
	// Rows can be added to dbo.events with T-SQL, as to SQL Server.
	res, err := conn.Query(ctx, session.Query{SQL: "INSERT INTO dbo.events (kind, amount) VALUES (@k, 1.25)",
		Params: []session.Param{{Name: "k", Value: "from-cli"}}, Timeout: tmo}, nil)
	if err != nil || len(res.RowCounts) != 1 || res.RowCounts[0] != 1 {
		t.Fatalf("INSERT: %+v, %v", res, err)
	}
	if n, err = catalog.Count(ctx, conn, "dbo", "events", "kind = N'from-cli'", tmo); err != nil || n != 1 {
		t.Fatalf("inserted rows: %d, %v", n, err)
	}
	// --snapshot-isolation=false: a SNAPSHOT read fails as SQL Server's does.
	_, err = conn.Query(ctx, session.Query{SQL: "SET TRANSACTION ISOLATION LEVEL SNAPSHOT; SELECT TOP (1) id FROM dbo.events", Timeout: tmo}, nil)
	var se *session.ServerError
	if !errors.As(err, &se) || se.Number != 3952 {
		t.Fatalf("SNAPSHOT read with --snapshot-isolation=false: %v, want error 3952", err)
	}
	conn.Close()
	if code := stop(); code != 0 {
		t.Fatalf("sample-server exited %d", code)
	}
}

// The connection string sample-server prints is one its encryption mode
// accepts, with and without --write-ca.
func TestSampleServerPrintsAWorkingConnectionString(t *testing.T) {
	for _, mode := range []string{"off", "on", "required", "notsup", "strict"} {
		for _, writeCA := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/write-ca=%v", mode, writeCA), func(t *testing.T) {
				args := []string{"--encrypt", mode}
				if writeCA {
					args = append(args, "--write-ca", filepath.Join(t.TempDir(), "ca.pem"))
				}
				_, conn, stop := runSampleServer(t, args...)
				defer stop()
				cfg, err := session.ParseConnString(conn)
				if err != nil {
					t.Fatalf("%s: %v", conn, err)
				}
				full := mode == "on" || mode == "required" || mode == "strict"
				if (full && writeCA) != strings.Contains(conn, "certificate=") || (full && !writeCA) != strings.Contains(conn, "TrustServerCertificate=true") {
					t.Errorf("%s: for full TLS want the CA when written, else TrustServerCertificate", conn)
				}
				cfg.Password = tdsserver.DefaultPassword
				cfg.ConnectTimeout = 10 * time.Second
				c, err := session.Connect(context.Background(), cfg)
				if err != nil {
					t.Fatalf("%s: %v", conn, err)
				}
				defer c.Close()
				if n, err := catalog.Count(context.Background(), c, "sales", "products", "", session.TimeoutOf(10*time.Second)); err != nil || n != 200 {
					t.Fatalf("%s: COUNT_BIG(*) = %d, %v", conn, n, err)
				}
			})
		}
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
	// Tables that do not exist are errors that list the tables there are.
	for _, args := range [][]string{
		{"sample-server", "--rows", "nosuch=5"},
		{"sample-server", "--rows", "orders=5"},
		{"sample-server", "--fault-table", "nosuch", "--fault-split-tokens"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitConfig || !strings.Contains(errOut, "no such table") || !strings.Contains(errOut, "dbo.poc48") || !strings.Contains(errOut, "sales.orders") {
			t.Errorf("%v: code %d, stderr %q; want %d naming the known tables", args, code, errOut, exitConfig)
		}
	}
}
