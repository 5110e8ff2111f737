// Package sqlexec is the SQL subset understood by the tdsextract test server
// (internal/sampleserver/tdsserver), executed over the generated sample database of
// package internal/sampleserver/sampledb.
//
// Exec parses a batch (one or more statements; a syntax error fails the
// whole batch, as SQL Server compiles before it runs) and executes each
// statement against a Session:
//
//   - SELECT [DISTINCT] [TOP (n) [PERCENT]] <list> [FROM <table> [alias]
//     [TABLESAMPLE (n PERCENT|ROWS) [REPEATABLE (seed)]] (on the first
//     table; runs of rows stand in for SQL Server's pages, tablesample.go)
//     [[INNER|LEFT|CROSS] JOIN ... ON ...]] [WHERE ...] [GROUP BY ...
//     [HAVING ...]] [ORDER BY ... [OFFSET n ROWS [FETCH NEXT m ROWS ONLY]]],
//     with bracketed/quoted identifiers, one- to three-part names,
//     case-insensitive names, text compared by the collation of the column
//     involved (comparisons, IN, BETWEEN, ORDER BY, GROUP BY, DISTINCT,
//     MIN/MAX: case-insensitive under _CI_, case-sensitive lower case
//     first under _CS_, code points under _BIN/_BIN2, trailing blanks
//     ignored by all; values.go), three-valued logic,
//     @parameters, CASE, LIKE, IN, BETWEEN, arithmetic, COUNT/COUNT_BIG/MIN/
//     MAX/SUM/AVG, the scalar functions catalog queries use (OBJECT_ID,
//     SCHEMA_NAME, COLUMNPROPERTY, SUBSTRING, LEN, REPLACE, ...), @@VERSION,
//     @@SPID, DB_NAME(), SERVERPROPERTY(), CAST/CONVERT with the styles
//     pgloader and tdsextract's engine use (126, 127, 114, 120, 121, ...),
//     and the CLR methods STAsBinary()/STAsText()/ToString() of geography,
//     geometry and hierarchyid columns (udt.go);
//   - the catalog views (INFORMATION_SCHEMA.*, sys.*) are ordinary tables of
//     sampledb, so the three catalog queries pgloader 3.6.9 sends are simply
//     executed (joins, CASE, LIKE, COLUMNPROPERTY) rather than recognised;
//   - SET options (FMTONLY, TEXTSIZE, ROWCOUNT, LANGUAGE, isolation level,
//     and every ON/OFF option), USE, BEGIN TRAN/COMMIT/ROLLBACK, EXEC
//     sp_executesql, and prepared statements (Prepare/Execute/Unprepare for
//     sp_prepexec, sp_execute and sp_unprepare);
//   - INSERT [INTO] dbo.events [(columns)] VALUES (...)[, (...)] (insert.go),
//     the one write: every statement reads the newest version of the
//     database, except in a transaction under SET TRANSACTION ISOLATION
//     LEVEL SNAPSHOT, which reads the version of its first read until it
//     ends; under SNAPSHOT a database with snapshot isolation off answers
//     error 3952. @@DBTS and MIN_ACTIVE_ROWVERSION() follow the rowversions
//     handed out.
//
// Results are metadata plus a RowSource that appends encoded ROW or NBCROW
// tokens (MS-TDS 2.2.7.19, 2.2.7.17) on demand, so a billion-row table
// streams without being materialised. The WHERE clause is analysed into a
// set of key intervals (AND, OR, NOT, IN, BETWEEN, comparisons; keyrange.go)
// that maps to row ranges by binary search over the table's monotonic key:
// a key lookup or range on a huge table reads only its rows. A select list
// of bare columns uses the table's pre-encoded fast path
// (sampledb.Table.AppendRowsColumns); anything else is evaluated row by row.
//
// Everything outside the subset yields the error SQL Server itself would
// return (102 syntax, 156 keyword, 105 unclosed quote, 208 invalid object,
// 207 invalid column, 4104, 209, 137, 195, 2812 unknown procedure, 911
// unknown database, 3906 read-only database, 245/8114/8115/241 conversions,
// ...), or error 50000 naming the unsupported feature; never a panic or a
// hang: a filtering RowSource returns control after a bounded number of
// rows, and statements that must read rows before answering (sorts on
// non-key columns, joins, aggregates with non-key filters) are refused up
// front beyond Session.ScanLimit rows.
package sqlexec
