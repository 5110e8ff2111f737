//go:build cgo

// Package duckdbtest opens an in-process DuckDB (github.com/duckdb/duckdb-go,
// a test-only peer: it needs cgo and links DuckDB's prebuilt library) for
// the Parquet sink's interop tests and the bench harness's DuckDB writer
// leg. Without cgo, Open says why it cannot.
package duckdbtest

import (
	"database/sql"
	"fmt"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// Open returns an in-memory DuckDB database limited to threads worker
// threads (0: DuckDB's default, one per core), on one connection so that
// settings and temporary tables hold for every statement.
func Open(threads int) (*sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	db.SetMaxOpenConns(1)
	if threads > 0 {
		if _, err := db.Exec(fmt.Sprintf("SET threads = %d", threads)); err != nil {
			db.Close()
			return nil, fmt.Errorf("duckdb: %w", err)
		}
	}
	return db, nil
}
