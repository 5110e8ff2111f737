// Package e2e holds the end-to-end tests of the CSV sink against
// independent readers:
//
//   - TestCSVEqualsGoMssqldb exports every sample table (internal/sampleserver/sampledb,
//     served by internal/sampleserver/tdsserver) with the engine's job Runner into the
//     csv sink, in the default dialect and in the postgres dialect, reads the
//     same SELECT (engine.BuildSelect, so spatial types arrive as
//     STAsBinary() WKB and hierarchyid as ToString() text) with go-mssqldb,
//     an independent TDS client, formats go-mssqldb's values by the CSV
//     rules documented in sinks/csv, parses the CSV with
//     encoding/csv and compares every cell, NULL and the empty string kept
//     apart.
//   - TestCSVLoadsIntoPostgres loads the postgres-dialect CSV of every
//     sample table into PostgreSQL 15 (internal/pgtest) with
//     COPY ... FROM STDIN WITH (FORMAT csv, HEADER true), into tables typed
//     as the default PostgreSQL mapping types them (pgType), and compares
//     row counts and per-column
//     aggregates with the same aggregates computed in Go from go-mssqldb's
//     reading.
//   - TestExportPeakRSS (opt-in, TDSEXTRACT_RSS=1) measures the peak RSS
//     of `tdsextract export`: 10 million rows within the bound of 100
//     thousand.
//
// What is compared where go-mssqldb cannot give the value as the engine
// sees it (details in format_test.go):
//   - geography/geometry: both read [col].STAsBinary() (the engine's own
//     SELECT), compared as WKB bytes; hierarchyid: both read ToString().
//   - json and vector: go-mssqldb negotiates neither feature, so the server
//     sends nvarchar(max) JSON text and varchar(max) vector text as SQL
//     Server 2025 does; the vector text is parsed as float32 and compared
//     with the CSV's shortest floats.
//   - sql_variant: go-mssqldb returns the base value but not its type; the
//     base type (not the value) comes from sampledb.
//   - varchar in a UTF-8 collation (text_utf8): go-mssqldb v1.11.2 decodes
//     it as cp1252, lossily; the test checks that its reading is exactly the
//     cp1252 view of the expected UTF-8 bytes and compares the CSV with the
//     row's nvarchar column, which holds the same string.
//
// The package has no code of its own beyond this file: everything is in
// the tests: independent readers (go-mssqldb, encoding/csv, PostgreSQL)
// and the real thing, never a mock.
package e2e
