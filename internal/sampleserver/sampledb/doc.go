// Package sampledb is the deterministic sample database served by the TDS
// test server (internal/sampleserver/tdsserver) and queried through the SQL subset of
// internal/sampleserver/sqlexec. It holds no rows: row i of every generated table is a
// pure function of (seed, table, i), so row counts can go up to billions
// (Config.Rows, Config.Scale) and the same seed always yields the same
// bytes. It does no networking.
//
// # Tables
//
// Schema dbo unless noted; default row counts in DefaultRows.
//
//   - poc48: id + i02..i39 (int, INTN 4 on the wire, ~5% NULL) + s1..s9
//     (varchar(6), SQL_Latin1_General_CP1_CI_AS, ~5% NULL). id is the
//     primary key 1..n and never NULL; it keeps the nullable wire type so all
//     39 int columns share one wire shape, the benchmark's (COLMETADATA says
//     nullable, the catalog says NOT NULL).
//   - odbc5: id int, big bigint, name varchar(50), label nvarchar(50) (with
//     non-ASCII and supplementary characters), score float.
//   - wide601: id + 600 columns cycling over 20 types (int, bigint, smallint,
//     tinyint, bit, real, float, decimal(18,0), decimal(38,4), numeric(9,2),
//     money, date, time(7), datetime2(7), datetimeoffset(7),
//     uniqueidentifier, varchar(20), nvarchar(20), char(10), varbinary(16)),
//     named cNNN_type, ~10% NULL.
//   - lob: id + b01..b24 varbinary(max) of 128 bytes (one PLP chunk).
//   - lob_nvarchar: id + doc nvarchar(max) of 32768 UTF-16 code units
//     (64 KiB) in PLP chunks of 8000 bytes; every other document is sent
//     with the unknown-length PLP marker.
//   - temporal: id, ts datetime2(7), tso datetimeoffset(7) (offsets over
//     -14:00..+14:00), amount decimal(38,10), uid uniqueidentifier, price money.
//   - lineitem: TPC-H lineitem columns and distributions. Rows come in
//     blocks of 32 holding 8 orders of 1..7 lines; order keys are sparse as
//     in dbgen (8 used keys in every 32). Key: (l_orderkey, l_linenumber).
//   - type_matrix: one column per SQL Server type (json and vector(3)
//     included) with edge rows: 0 minimum, 1 maximum / max-length, 2 zero
//     and empty, 3 NULL (every column but id and the rowversion), 4 Unicode
//     and supplementary-plane text, 5 negative/fractional; later rows hold
//     seeded values and cycle sql_variant through 24 base types.
//   - sales.customers, sales.products, sales.orders, sales.order_lines:
//     identity keys, primary and foreign keys (order_lines -> orders ON
//     DELETE CASCADE, -> products; orders -> customers), defaults
//     ((getdate()), ((0)), ((1)), (N'new')), secondary and unique indexes,
//     and referential integrity: order lines are spread in order over the
//     orders, unit_price is the product's price and orders.total is the sum
//     of quantity*unit_price of its lines (see Sales).
//   - events: id int IDENTITY (key), ts datetime2(7), kind nvarchar(20),
//     amount decimal(18,2) NULL, rv rowversion; generated rows one second
//     apart from EventsBase. The one table rows can be added to while the
//     server runs (DB.Insert, or T-SQL INSERT through sqlexec): each insert
//     makes a new version of the database (DB.Current), which statements
//     started afterwards read, so tests of incremental exports can add rows
//     between runs, or during one.
//   - readings (clustered primary key reading_at datetime2(7), strictly
//     increasing) and devices (clustered primary key device_id
//     uniqueidentifier, random): tables to split on keys that are not
//     integers.
//   - codes (only when Config.Rows names it, OptionalTables): id int
//     primary key (nonclustered), code varchar(24) CI_AS under a clustered
//     index that is not unique, every value in four spellings the
//     collation holds equal (case and trailing blanks; CodeVariant), one
//     value shared by an eighth of the rows, ncode nvarchar(24), and the
//     same keys under Latin1_General_CS_AS (cscode) and
//     Latin1_General_BIN2 (bcode): a table to split on string keys.
//   - finance.invoices (invoice_no decimal(12,0)
//     IDENTITY(5000,5), issued_at datetimeoffset(7) DEFAULT
//     (sysdatetimeoffset())) and finance.ledger (entry_no numeric(20,0)
//     IDENTITY(1,1), invoice_no decimal(12,0) referencing the invoices):
//     identities on exact numeric types, one within and one beyond a
//     bigint's precision; and six views of UNION, UNION ALL, EXCEPT,
//     INTERSECT, TOP (5) ... ORDER BY and a CTE over them.
//   - text_cp1252 (Latin1_General_CI_AS), text_cp1251
//     (Cyrillic_General_CI_AS), text_cp932 (Japanese_CI_AS), text_utf8
//     (Latin1_General_100_CI_AS_SC_UTF8): the same strings (TextSamples) in
//     varchar(100), nvarchar(100), varchar(max) and (code-page tables) text.
//
// An int key column becomes bigint when the configured row count exceeds
// 2^31-1 (foreign keys referencing it follow).
//
// # Keys
//
// Tables with an integer key (KeyColumn >= 0) map keys to rows without
// scanning: KeyValue(i) is non-decreasing in i (i+1 for id and identity
// keys), LowerBound(k) is the first row with key >= k, and RowForKey the
// row of an exact key, so "key >= a AND key < b" is the row range
// [LowerBound(a), LowerBound(b)).
//
// # Encoding
//
// AppendRows (and AppendRowsColumns for projections) appends ROW or NBCROW
// tokens. The benchmark shapes use a pre-encoded fast path (precomputed
// string pools, typed encoders written in this package, no allocation);
// every other table goes through decode.AppendRow. The tests check that the
// fast path's bytes equal decode's independent generic encoding of Row(i),
// and that decode's Stream decodes them back to Row(i) cell by cell.
//
// Table.Row returns the generic value types of package decode (nil, bool,
// int64, float32, float64, decode.Decimal, decode.Money, decode.Date,
// decode.Time, decode.DateTime, decode.DateTimeOffset, decode.GUID, string,
// []byte, []float32, decode.Variant), exactly what decode.Capture yields for
// the bytes AppendRows produces.
//
// # Client features
//
// Table.Features names the client feature a column needs to be sent with
// its native type: type_matrix.c_json needs JSONSUPPORT, c_vector_3
// VECTORSUPPORT, and the varchar columns of text_utf8 UTF8_SUPPORT. For a
// client without JSONSUPPORT/VECTORSUPPORT, serve Table.Downgrade(json,
// vector), which turns json into nvarchar(max) and vector into varchar(max)
// text (VectorText), as SQL Server does.
//
// # Catalog
//
// DB.Catalog returns the catalog views schema discovery needs, as ordinary
// tables with SQL Server's column names and types (sysname is
// nvarchar(128)): INFORMATION_SCHEMA.TABLES, COLUMNS, TABLE_CONSTRAINTS,
// KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS and sys.schemas, objects,
// tables, columns, types, indexes, index_columns, identity_columns,
// default_constraints, foreign_keys, foreign_key_columns, partitions.
// Table.SQLType gives each column's declared type ("decimal(38,10)",
// "nvarchar(max)", "timestamp").
package sampledb
