// Package sinks is the contract between tdsextract's extraction engine and
// its destinations: the Sink interface and its lifecycle, what a sink is
// told about an extract (ExtractInfo) and reports back (Stats), the type
// mapping a sink describes before anything runs (ColumnMapping), and the
// Registry of factories. Each destination lives in a package of its own
// below this one (sinks/csv, sinks/parquet, ...). This package is small on
// purpose: a sink imports it and package decode, never the session or job
// layers, so a sink (or a plugin) carries no networking of the source.
package sinks
