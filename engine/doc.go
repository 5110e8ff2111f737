// Package engine is tdsextract's job layer: it runs a job's extracts, each
// on a session of its own (engine/session), streams every result set once
// through the tee into all of the extract's sinks (package sinks defines the
// contract), verifies row counts, and publishes or aborts the sinks together.
//
// What a SQL Server database holds (tables, columns, the SELECT a table
// extract runs) comes from engine/catalog; how bytes travel (login, TLS,
// the lazily armed request deadline, cancellation) is engine/session's.
// engine knows no concrete sink and no configuration library: sinks come
// from a Registry and the CLI hands over plain structs.
package engine
