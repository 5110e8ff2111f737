// Package postgres is tdsextract's PostgreSQL sink: SQL Server rows into
// PostgreSQL tables through binary COPY, each value copied once, each
// table loaded all or nothing.
//
// # The data path
//
// The decoder hands every cell to the sink (decode.CellSink), which writes
// it straight in PostgreSQL's binary COPY format (the "Binary Format" of
// the COPY reference: a field count per tuple, then per field an int32
// length and the type's send/recv form) into a COPY buffer: fixed-size
// values by typed calls (no boxing, no []any), text and bytes by the
// decoder writing into memory the sink reserves in that buffer. A full
// buffer goes to a goroutine running pgconn's CopyFrom, which copies it
// into its own 64 KiB message buffer (one memmove) and writes it to the
// socket while decoding fills the next buffer: decoding and sending
// overlap, and the decoder waits only when every buffer is in flight
// (PostgreSQL is then the slower side). Encoding the tuples straight into
// pgconn's buffer instead saves the memmove but makes the decoder wait for
// every socket write, since pgconn has one buffer and writes it before it
// asks for the next; both designs were built and measured against a real
// PostgreSQL 15 (BenchmarkHandoff; the README's Performance section has
// the figures): they took the same wall and CPU time within a few per
// cent (the load is PostgreSQL-bound), so the sink keeps the owned
// buffers, which overlap and need no special path for a tuple bigger than
// 64 KiB. A tuple is only sent whole (a rejected row can still be
// dropped), so memory is buffers × buffer_size plus the largest row. Rows
// cost no allocation (TestNoAllocsPerRow, testing.AllocsPerRun over the
// real decoder).
//
// # Types
//
// Every SQL Server type maps to the closest PostgreSQL type that holds
// its values exactly (DefaultType; README "Type mapping"):
//
//	bit                       boolean
//	tinyint, smallint         smallint
//	int, bigint               integer, bigint
//	real, float               real, double precision
//	decimal/numeric(p,s)      numeric(p,s), from the 128-bit decimal in
//	                          numeric's base-10000 binary form (decimal(38,38) too)
//	money, smallmoney         numeric(19,4), numeric(10,4)
//	date                      date
//	time(n)                   time(min(n,6))
//	datetime, smalldatetime   timestamp(3) (as SQL Server shows it), timestamp(0)
//	datetime2(n)              timestamp(min(n,6))
//	datetimeoffset(n)         timestamptz(min(n,6)), the instant; the offset in
//	                          <name>__offset_minutes smallint (offset_column)
//	char(n)                   char(n) in single-byte code pages, else varchar(n)
//	varchar(n), nvarchar(n)   varchar(n) (PostgreSQL counts characters: never
//	                          fewer than SQL Server's bytes or UTF-16 units hold)
//	(max), text, ntext        text
//	binary types, rowversion  bytea
//	uniqueidentifier          uuid (RFC byte order)
//	xml                       xml
//	json                      jsonb (binary format version 1)
//	vector(n)                 real[]
//	sql_variant               text of the base value; its type in <name>__type
//	geography, geometry       bytea (the engine's SELECT sends STAsBinary() WKB)
//	hierarchyid               text (the engine's SELECT sends ToString())
//
// PostgreSQL keeps microseconds: the 100 ns digit of time(7), datetime2(7)
// and datetimeoffset(7) is truncated, never rounded, so no value moves into
// the next second, day or year (9999-12-31 23:59:59.9999999 stays in 9999);
// Mapping (inspect) reports those columns lossy, and a datetimeoffset
// without its offset column and a sql_variant without its type column.
// The columns option renames columns and overrides types; an override the
// sink cannot write exactly (text into uuid, a numeric with fewer
// fraction digits) is an error before anything is written.
//
// # Values PostgreSQL refuses
//
// SQL Server text may hold NUL (U+0000), which PostgreSQL's text types
// cannot; jsonb cannot hold the escape \u0000; an existing table's
// varchar(n) or smallint may be narrower than the source. The sink finds
// these on the client, before they reach the server, and refused_values
// decides: fail (the default) names the row, its key and the column;
// reject writes the row to reject_file (JSON lines: row number, key
// columns, column, reason; beside the run summary) and loads the rest;
// replace replaces NULs (nul_replacement) and fails on the rest.
//
// # Tables, all or nothing
//
// Each load is one transaction: BEGIN in Open; in Columns the table is
// created from the mapping (the same columns the COPY writes, so DDL and
// data cannot drift), adopted as it is (append, truncate: every mapped
// column must exist with a type the values fit; a citext column, or a
// domain over one, takes text: the extension's type is recognised by its
// extension, since its OID differs from database to database), truncated,
// or, for
// replace, a new table is created beside it; the COPY; then Publish swaps
// the new table in (replace) and commits. PostgreSQL's DDL is
// transactional, so a failed, cancelled or killed load leaves the target
// exactly as it was: Abort makes the COPY fail and rolls back, and a
// process killed mid-COPY has its transaction rolled back by PostgreSQL
// when the connection drops. A staging table renamed into place outside a
// transaction would need cleaning after a crash; in the transaction there
// is nothing to clean. replace loads the new table while the old one stays
// readable and takes its lock only at the swap; truncate keeps the table's
// indexes, grants and dependents and holds its lock for the load. A
// missing target schema is created before the transaction (parallel loads
// into one new schema would collide inside it), so a failed load can
// leave an empty schema, never a table or a row.
//
// Names follow the identifier policy: lower case by default (usable
// unquoted), or as the source spells them; quoted in SQL only when needed
// (QuoteIdent agrees with PostgreSQL's quote_ident); cut at 63 bytes as
// PostgreSQL would; two columns that would get one name are an error
// before anything is written.
//
// # Connection
//
// connection is a postgres:// URL or a keyword/value string (pgconn's
// parser, libpq's rules and PG* environment variables, sslmode disable to
// verify-full); the password can come from password_env or password_file.
// An unreachable server or a refused login is a sinks.ConnectError (the
// CLI's exit code 3); no error shows the password. Each sink has its own
// session, so extracts that run in parallel load in parallel.
//
// # For Go callers (the migrate command)
//
// MapColumns, DefaultType, ParseType, FoldIdent and QuoteIdent give the
// mapping and the names without a server; Table.CreateSQL and
// Table.CopySQL the statements the sink runs; Connect the connection with
// the sink's rules. A Config built in Go can set BeforeCommit to run more
// DDL in the load's transaction (indexes, constraints) after the last row
// and before COMMIT; Sink.Target gives the table and mapping loaded.
//
// # Options
//
//	| option | type | default | meaning |
//	| --- | --- | --- | --- |
//	| `connection` | string | (required) | the PostgreSQL server: a URL `postgres://user@host:5432/db?sslmode=verify-full` or a keyword/value string `host=... port=... dbname=... user=... sslmode=...`; what it leaves out comes from the PG* environment variables as with libpq |
//	| `password_env` | string | `""` | environment variable holding the password (instead of writing it in the connection) |
//	| `password_file` | string | `""` | file whose first line is the password |
//	| `schema` | string | the connection's current schema (usually public) | target schema; a template where {schema}, {table} and {extract} are the source schema, table and extract name; created when missing |
//	| `table` | string | `"{table}"` | target table; a template as for schema ({table} is the extract name for a query) |
//	| `mode` | append \| create \| truncate \| replace | `"append"` | append: add the rows, creating the table when missing; create: the table must not exist; truncate: empty it first, keeping its definition; replace: drop it and create it from the mapping. Each is one transaction: readers see the old table or the new, never part |
//	| `identifiers` | lower \| preserve | `"lower"` | lower: names folded to lower case (usable unquoted); preserve: names as the source spells them. Either way names are quoted in SQL when needed, and two columns that would get one name are an error before anything is written |
//	| `columns` | object | `(none)` | per-column rules, a list of {source, name, type}: rename a column and/or override its PostgreSQL type (e.g. text, bigint, numeric(20,4)) |
//	| `refused_values` | fail \| reject \| replace | `"fail"` | what to do with a value PostgreSQL would refuse (a NUL character in text, `\u0000` in jsonb, a string longer than an existing varchar(n), a number outside an existing column's range): fail the load naming the row and column; reject the row to reject_file; or replace NULs by nul_replacement (other refused values still fail) |
//	| `nul_replacement` | string | `""` | what refused_values: replace puts in place of each NUL (default: nothing, the NUL is removed) |
//	| `reject_file` | string | `"{extract}.rejects.jsonl"` | where refused_values: reject writes the rejected rows (one JSON object a line: row number, key, column, reason); relative paths are beside the run summary (the job's summary_file), else in the working directory; a template as for schema |
//	| `key_columns` | list | the first column | source columns that identify a row in the reject file |
//	| `offset_column` | bool | `true` | add after each datetimeoffset column a smallint `<name>__offset_minutes` with the original offset (timestamptz keeps the instant only) |
//	| `variant_type_column` | bool | `true` | add after each sql_variant column a text `<name>__type` with the base type of each value (the value is stored as its text) |
//	| `not_null` | bool | `true` | created tables declare NOT NULL where the source column is not nullable |
//	| `freeze` | bool | `true` | rows loaded into a table the load created or truncated (modes create, truncate, replace, a new table in append) are written frozen (COPY FREEZE): no later VACUUM rewrites every page to freeze them, and the first reads dirty no page; false for a plain COPY |
//	| `buffer_size` | size | `256KiB` | size of each COPY buffer the rows are encoded into |
//	| `buffers` | int | `4` | COPY buffers in flight: encoding fills one while the others are sent |
//	| `connect_timeout` | duration | `30s` | bound on connecting and logging in |
//	| `application_name` | string | `"tdsextract"` | application_name of the session (pg_stat_activity) |
package postgres
