package migrate

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/engine/catalog"
	"github.com/tdsextract/tdsextract/engine/session"
	"github.com/tdsextract/tdsextract/internal/pgtest"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks/postgres"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// sampleRows keeps the sample small: the tests are about the schema and
// every value, not volume.
var sampleRows = map[string]int64{"sales.customers": 300, "sales.products": 120, "sales.orders": 900,
	"sales.order_lines": 2500, "warehouse.sites": 12, "warehouse.stock": 600, "warehouse.movements": 1500}

// startSource starts the sample server on db and returns the session
// config to reach it.
func startSource(t testing.TB, db *sampledb.DB) session.Config {
	t.Helper()
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return session.Config{Host: "127.0.0.1", Port: srv.Port(), User: tdsserver.DefaultUser, Password: tdsserver.DefaultPassword,
		Database: "sample", Encrypt: session.EncryptDisable, ConnectTimeout: 20 * time.Second}
}

// freshDB creates an empty database on the shared server and returns its
// connection string and a connection to it.
func freshDB(t testing.TB, name string) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.Shared(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = name
	dbURL := cfg.ConnString()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return dbURL, conn
}

func migrateConfig(src session.Config, target string, include ...string) *Config {
	return &Config{Source: src, Timeout: session.TimeoutOf(time.Minute), Filter: catalog.Filter{Include: include},
		Target: postgres.ConnConfig{Connection: secret.Secret(target), ConnectTimeout: 20 * time.Second}, Parallel: 3}
}

func TestExplore(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: sampleRows})
	src := startSource(t, db)
	url, _ := freshDB(t, "explore")
	_ = url
	c := migrateConfig(src, url, "sales.*", "warehouse.*")
	c.Verify = VerifyChecksum
	ctx := context.Background()
	plan, err := Discover(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	plan.Write(os.Stdout)
	sum, err := Run(ctx, c, plan)
	for _, ts := range sum.Tables {
		t.Logf("%+v", ts)
	}
	for _, s := range sum.Steps {
		if s.Status != StepDone {
			t.Logf("%+v", s)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
