//go:build !cgo

package duckdbtest

import (
	"database/sql"
	"errors"
)

// Open fails: DuckDB's Go bindings need cgo (CGO_ENABLED=1 and a C
// compiler).
func Open(threads int) (*sql.DB, error) {
	return nil, errors.New("duckdb: this build has no cgo; DuckDB's Go bindings need CGO_ENABLED=1 and a C compiler")
}
