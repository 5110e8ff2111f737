// Package catalog is what tdsextract knows of a SQL Server database before
// it reads rows, read from the catalog views every SQL Server answers
// (sys.tables, sys.columns, sys.indexes, sys.foreign_keys, ...): tables and
// views with their columns (type, nullability, identity, computed
// expression, default, collation), primary keys, unique constraints,
// indexes, foreign keys, check constraints, sequences, row counts and the
// clustered key with the extremes of its leading column.
//
// It is the one source of this knowledge for every user of it: the job
// runner (which columns a table extract selects, its COUNT and row
// estimate), `inspect`, and migrations and partition plans. The SELECT of
// a table extract is built here too (Project), with the default
// conversions of the types no sink can take raw and the job's overrides
// applied in one place, so what `inspect` describes is what a run sends.
//
// Load sends a handful of batches, one catalog view per statement, and
// parses each result in a function of its own that needs no server; it
// knows nothing of sinks.
package catalog
