// Package engine is tdsextract's job layer. A job (JobConfig, plain
// values the CLI decoded strictly) is resolved once into a typed Plan
// (Resolve): every key checked, every default applied, timeouts and
// verify modes typed, sink options resolved against their sink's spec,
// and the units to run. The Runner executes a plan unit by unit, each on a
// session of its own (engine/session), in small steps: connect, describe
// the table, build the SELECT, count or estimate, open the sinks, stream
// the result set once through the tee into all of them, verify, publish
// (or abort them together).
//
// What a SQL Server database holds (tables, columns, keys, the SELECT of
// a table extract) comes from engine/catalog; how bytes travel (login,
// TLS, the lazily armed request deadline, cancellation) is
// engine/session's. engine knows no concrete sink and no configuration
// library: sinks come from a Registry and the CLI hands over plain
// structs.
package engine
