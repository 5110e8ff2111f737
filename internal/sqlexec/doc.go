// Package sqlexec is the SQL subset understood by the tdsextract test server
// (internal/tdsserver), executed over the generated sample database of
// package internal/sampledb.
//
// It parses a batch (one or more statements) into a small AST and executes
// each statement against a Session: SELECT with TOP, WHERE, ORDER BY, joins
// over the (small) catalog views, COUNT/COUNT_BIG/MIN/MAX, CONVERT/CAST in
// the forms pgloader and tdsextract's own engine send, the spatial and
// hierarchyid methods STAsBinary()/ToString(), SET options (FMTONLY,
// TEXTSIZE, ...), USE, and prepared statements for sp_prepexec/sp_execute.
//
// Results are returned as metadata plus a RowSource that appends encoded
// ROW or NBCROW tokens (MS-TDS 2.2.7.19, 2.2.7.17) on demand, so a
// billion-row table streams without being materialised: a key range in the
// WHERE clause maps to a row range by binary search over the table's key,
// and a whole-row projection uses the table's pre-encoded fast path.
//
// Everything outside the subset yields the error SQL Server itself would
// return (102 syntax, 156 keyword, 208 invalid object, 207 invalid column,
// 2812 unknown procedure, ...), never a panic or a hang: every loop over
// rows is bounded by the requested range, and scans that would have to read
// more than Session.ScanLimit rows before producing a result fail with an
// error instead.
package sqlexec
