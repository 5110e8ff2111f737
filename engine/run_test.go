package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
	"github.com/tdsextract/tdsextract/internal/secret"
	"github.com/tdsextract/tdsextract/sinks"
)

// recordSink records what the runner does with it.
type recordSink struct {
	decode.Capture
	name   string
	log    *[]string
	mu     *sync.Mutex
	failAt string // "open" or "publish"
	rows   int
}

func (s *recordSink) note(ev string) {
	s.mu.Lock()
	*s.log = append(*s.log, s.name+" "+ev)
	s.mu.Unlock()
}

func (s *recordSink) EndRow() error { s.rows++; return s.Capture.EndRow() }

func (s *recordSink) Open(_ context.Context, info sinks.ExtractInfo) error {
	s.note(fmt.Sprintf("open %s est %d", info.Name, info.EstimatedRows))
	switch s.failAt {
	case "open":
		return errors.New("cannot open")
	case "skip":
		return fmt.Errorf("output exists: %w", sinks.ErrSkip)
	}
	return nil
}

func (s *recordSink) Publish(context.Context) (sinks.Stats, error) {
	s.note(fmt.Sprintf("publish %d", s.rows))
	if s.failAt == "publish" {
		return sinks.Stats{}, errors.New("cannot publish")
	}
	return sinks.Stats{Rows: int64(s.rows)}, nil
}

func (s *recordSink) Abort(context.Context) error { s.note("abort"); return nil }

func TestRunnerSteps(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 2, Rows: map[string]int64{"warehouse.movements": 300}})
	srv, err := tdsserver.Start(tdsserver.Config{Addr: "127.0.0.1:0", DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	var (
		log []string
		mu  sync.Mutex
	)
	reg, err := sinks.NewRegistry(sinks.Factory{
		Name:    "rec",
		Options: sinks.Spec{{Name: "name", Type: sinks.String, Required: true}, {Name: "fail", Type: sinks.Enum, Values: []string{"", "open", "publish", "skip"}, Default: ""}},
		New: func(o map[string]any) (sinks.Sink, error) {
			return &recordSink{name: o["name"].(string), failAt: o["fail"].(string), log: &log, mu: &mu}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	src := SourceConfig{Connection: secret.Secret("sqlserver://sa@" + srv.Addr() + "?database=sample&encrypt=disable"), PasswordEnv: "ENGINE_TEST_PW", Timeout: "1m"}
	t.Setenv("ENGINE_TEST_PW", tdsserver.DefaultPassword)
	rec := func(name, fail string) SinkConfig {
		return SinkConfig{Type: "rec", Options: map[string]any{"name": name, "fail": fail}}
	}
	run := func(ex ...ExtractConfig) (*Summary, error) {
		log = nil
		r := &Runner{Registry: reg}
		return r.Run(context.Background(), &JobConfig{Name: "t", Source: src, Extracts: ex})
	}

	// A verified table extract into two sinks: counted, opened with the
	// count, streamed once, published in order.
	sum, err := run(ExtractConfig{Table: "warehouse.movements", Verify: "count", Where: "quantity > 0", Sinks: []SinkConfig{rec("a", ""), rec("b", "")}})
	if err != nil {
		t.Fatal(err)
	}
	es := sum.Extracts[0]
	var want int64
	mv, _ := db.Table("warehouse", "movements")
	var row []any
	for i := range mv.Rows {
		if row = mv.Row(i, row); row[4].(int64) > 0 {
			want++
		}
	}
	if es.Rows != want || es.SourceRows != want || es.Verified != "count" || len(es.Sinks) != 2 || es.Sinks[1].Rows != want ||
		!strings.HasSuffix(es.SQL, "FROM [warehouse].[movements] WHERE quantity > 0") {
		t.Errorf("summary %+v", es)
	}
	wantLog := fmt.Sprintf("[a open warehouse.movements est %d b open warehouse.movements est %d a publish %d b publish %d]", want, want, want, want)
	if fmt.Sprint(log) != wantLog {
		t.Errorf("log %v\nwant %s", log, wantLog)
	}

	// Without verify and filter the estimate is the catalog's row count.
	if _, err := run(ExtractConfig{Table: "warehouse.movements", Sinks: []SinkConfig{rec("a", "")}}); err != nil || log[0] != "a open warehouse.movements est 300" {
		t.Errorf("estimate: %v %v", log, err)
	}

	// A sink that cannot open: the ones opened before are aborted, nothing publishes.
	_, err = run(ExtractConfig{Name: "q", Query: "SELECT 1 AS one", Sinks: []SinkConfig{rec("a", ""), rec("b", "open")}})
	var je *JobError
	if !errors.As(err, &je) || je.Kind != KindExtract || fmt.Sprint(log) != "[a open q est -1 b open q est -1 a abort b abort]" {
		t.Errorf("open failure: %v %v", err, log)
	}

	// A sink that asks to be skipped is not fed; when all do, no query runs.
	sum, err = run(ExtractConfig{Name: "q", Query: "SELECT 1 AS one", Sinks: []SinkConfig{rec("a", "skip"), rec("b", "")}})
	if err != nil || fmt.Sprint(log) != "[a open q est -1 a abort b open q est -1 b publish 1]" || len(sum.Extracts[0].Sinks) != 2 || sum.Extracts[0].Sinks[0].Skipped == "" {
		t.Errorf("one sink skipped: %v %v %+v", err, log, sum.Extracts[0].Sinks)
	}
	queries := srv.Stats().Queries
	sum, err = run(ExtractConfig{Name: "q", Query: "SELECT 1 AS one", Sinks: []SinkConfig{rec("a", "skip"), rec("b", "skip")}})
	if err != nil || !sum.OK || fmt.Sprint(log) != "[a open q est -1 a abort b open q est -1 b abort]" || srv.Stats().Queries != queries {
		t.Errorf("every sink skipped: %v %v, %d queries", err, log, srv.Stats().Queries-queries)
	}

	// A failed publish aborts the sinks not yet published.
	_, err = run(ExtractConfig{Name: "q", Query: "SELECT 1 AS one", Sinks: []SinkConfig{rec("a", ""), rec("b", "publish"), rec("c", "")}})
	if err == nil || fmt.Sprint(log) != "[a open q est -1 b open q est -1 c open q est -1 a publish 1 b publish 1 b abort c abort]" {
		t.Errorf("publish failure: %v %v", err, log)
	}

	// An unknown column is a configuration error naming the extract's key.
	_, err = run(ExtractConfig{Table: "warehouse.sites", Columns: []string{"site_id", "nope"}, Sinks: []SinkConfig{rec("a", "")}})
	var ce *ConfigError
	if !errors.As(err, &je) || je.Kind != KindConfig || !errors.As(err, &ce) || ce.Field != "extracts[0].columns" || len(log) != 0 {
		t.Errorf("unknown column: %v %+v %v", err, ce, log)
	}
}
