// Package migrate moves a whole SQL Server database, or the tables a
// filter selects, into PostgreSQL: its schema, its data and what makes
// the data mean what it meant (identities, sequences, defaults, keys,
// indexes, constraints, views).
//
// Discover reads the source once through engine/catalog (the one
// introspection layer of tdsextract) and Build turns what it found into a
// Plan without touching the target: the DDL of every step in the order a
// run needs (schemas, sequences, tables; the data; keys, indexes and
// checks; foreign keys; views), with every lossy type mapping, everything
// that does not translate (with its original text) and every difference
// worth knowing listed. Column types and names come from the PostgreSQL
// sink's mapping (postgres.MapColumns), so the tables the plan creates
// are the ones the sink's COPY loads; this makes migrate the one engine
// package that knows a concrete sink.
//
// T-SQL expressions (defaults, computed columns, CHECK constraints,
// filtered-index predicates, a view's SELECT) are translated by a small
// tokenizer and recursive-descent parser of their own (tsql.go) and a
// translator that knows each operand's type class (translate.go): not by
// rewriting text, which cannot tell a string literal from a name or a +
// on numbers from a + on text.
//
// Run executes a plan: every DDL step in its own transaction together
// with its row in the target's state table, every table's (or key
// range's) rows through the PostgreSQL sink in one transaction that also
// restarts the identity, verifies the rows (count, or a checksum of every
// value sent against every value read back) and records the step. A
// failure therefore leaves a table empty or whole, never partly loaded,
// and a resumed run (Config.Resume) runs exactly the steps the state
// table does not hold. The key ranges of a split table are recorded in
// the state table before any loads, and a resumed run loads those, so a
// range is reloaded with the bounds it failed with; a failed range does
// not stop the table's other ranges.
//
// The summary says where the time went: each phase's wall time, each
// step's and each key range's seconds, and the time spent verifying.
package migrate
