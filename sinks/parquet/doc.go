// Package parquet is the Parquet sink of tdsextract, built on
// github.com/parquet-go/parquet-go (the cell-sink contract and the type
// mapping: docs/ARCHITECTURE.md).
//
// Data path: each cell call writes the value once into a typed batch the
// sink owns (a uint64 per fixed-width value, a byte arena plus end offsets
// for byte arrays, definition levels for nullable columns); nothing is
// allocated per row or per cell and no parquet.Row is built. When a batch
// reaches the row-group size (row_group_bytes, default 32 MiB, or
// row_group_rows) its columns are shared out, largest first, to one
// goroutine per CPU (GOMAXPROCS), each turning whole columns, 8192 values
// at a time, into parquet.Values pointing at the batch's bytes, writing
// them into the row group's column writers and flushing (encoding and
// compressing) their pages, while decoding fills the next batch; finished
// row groups are committed to the file in order by the sink's goroutine.
// Up to `parallel` row groups encode at once. With two or more CPUs a
// batch is also encoded while it fills: every eighth of row_group_bytes
// (of the batch the extract will fill, when the source's row count says
// it ends sooner) the rows not yet sent go to such a job (encode.go), so
// even a table of one row group keeps both cores busy, and the handoff
// only sends the rest. The first such job of a file opens it; the run's
// encoding trials (below) start in the background as soon as the first
// batch holds their sample, and that job takes their result, so the
// decoder never waits for them and the encoders start early. Where a run's CPU goes (BenchmarkParquetRun, six shapes,
// 2 CPUs, profiled): a quarter to a third decoding into the batch,
// parquet-go's column writes 8% (sales.order_lines) to 38% (temporal,
// zstd included: up to 23%), the encoding trials 6-15%, and building the
// parquet.Values took 11-28% until the encoders filled them in place, a
// chunk of 8192 at a time with no call or append per value (18% less CPU
// per row, geomean of the shapes). parquet-go's ColumnWriter takes only
// parquet.Values, so typed writes would mean going around it. Written
// through apache/arrow-go instead, with the same choices, the same rows
// cost as much CPU or more (BenchmarkParquetArrow).
//
// Encodings (choose.go): every column's encoding is chosen by trial on a
// sample of the run's first rows (its first 8192 rows with two or more
// CPUs; with one, 8 runs of consecutive rows over the first batch; a
// table wider than 512 bytes a row samples 4 MiB of values, at least 1,024
// rows, which took wide601 with one thread from 0.56 to 0.73 of DuckDB's
// writer's rows/s at the same file size): PLAIN,
// RLE_DICTIONARY, DELTA_BINARY_PACKED (integers, dates, timestamps),
// BYTE_STREAM_SPLIT (floats) and DELTA_LENGTH_BYTE_ARRAY (byte arrays)
// are applied and compressed, and the smallest, scaled to the row group,
// wins; a column compression does not shrink by 3% is stored
// uncompressed. Definition levels are RLE/bit-packed in version 1 data
// pages (compressed with the values), booleans bit-packed. zstd runs at
// klauspost/compress's fastest level with entropy coding of literals
// always on, its encoders shared by every sink of the process (codec.go).
// A published sink's value arrays are kept (up to one default row group)
// for the next sink of the process (pool.go).
//
// Memory bound: (parallel + 1) batches of about row_group_bytes each
// (a batch's columns grow straight to the row group size predicted from
// its first rows, plus 1/16, and batches are reused), plus
// the compressed pages of the row groups in flight (at most their
// uncompressed size) and one page buffer (page_bytes) per column per
// encoding row group. With the defaults on a 2-core machine (parallel 1)
// that is about 2 × 32 MiB plus the compressed output of one row group;
// TestParquetMemoryBound checks it (opt-in, PARQUET_MEMTEST_ROWS). The
// batch is counted as 8 bytes per value plus the bytes of variable-length
// values, so a wide table reaches it in fewer rows, not with more memory:
// wide601 (601 columns, about 6 KB a row held) makes row groups of about
// 5,500 rows. While a row group encodes, parquet-go's column buffers
// hold up to page_bytes (256 KiB) of each column, at most about one more
// copy of the row group: with the defaults, budget 3 × 32 MiB for a wide
// table. Lower row_group_bytes (e.g. 8MiB) and page_bytes (e.g. 64KiB)
// for wide or LOB tables on small machines.
// A single value larger than a row group is held whole (Parquet stores
// values whole).
//
// Types: bit BOOLEAN; tinyint INT32 INT(8,false); smallint
// INT32 INT(16,true); int INT32; bigint INT64; real FLOAT; float DOUBLE;
// decimal(p,s) DECIMAL(p,s) as INT32 (p<=9), INT64 (p<=18) or big-endian
// two's complement FIXED_LEN_BYTE_ARRAY of the minimal length for p;
// money DECIMAL(19,4) FIXED_LEN_BYTE_ARRAY(9); smallmoney DECIMAL(10,4)
// INT64; date DATE; time(7) TIME NANOS, time(0..6) TIME MICROS (not
// UTC-adjusted); datetime2 TIMESTAMP MICROS, datetime and smalldatetime
// MILLIS rounded as SQL Server shows them (all not UTC-adjusted);
// datetimeoffset TIMESTAMP MICROS UTC-adjusted plus, by default, an INT16
// column "<name>__offset_minutes" right after it with the original
// offset; uniqueidentifier UUID (RFC byte order);
// char/varchar/text/nchar/nvarchar/ntext/xml STRING; json
// JSON; binary(n) and rowversion FIXED_LEN_BYTE_ARRAY(n); varbinary, image,
// hierarchyid and other UDTs BYTE_ARRAY; geography and geometry, which the
// factory asks for as stored (ReadsSpatial), BYTE_ARRAY WKB with
// GeoParquet 1.1 metadata (geo.go); vector LIST<FLOAT>; sql_variant STRING holding the
// text of its base value. Columns keep the source's names and order;
// nullable source columns are OPTIONAL, the others REQUIRED.
//
// Timestamps are MICROS by default (timestamp_unit: micros): every SQL
// Server date fits, and it is what Spark, BigQuery, DuckDB, pyarrow and
// Polars read. The 100 ns digit of a scale-7 datetime2 or datetimeoffset
// is truncated, never rounded (rounding would carry 9999-12-31
// 23:59:59.9999999 into year 10000), and the mapping reports it lossy.
// timestamp_unit: nanos keeps the digit but TIMESTAMP NANOS covers only
// 1677-09-21 .. 2262-04-11: a value outside fails the run with an error
// naming the column and the row.
//
// Files are written under a temporary name next to the final one, fsynced
// and renamed in Publish; Abort removes them. max_rows / max_bytes split
// the output into numbered files name.0001.parquet, name.0002.parquet, ...
// if_exists says what happens to an output an earlier run left, as for
// csv: replace it once this run succeeds (removing the numbered parts it
// does not cover; a failed run leaves the old output as it was), skip the
// sink, or fail; with partition_by the output is the partition root.
//
// Hive partitions (partition_by: [col, ...]): each row goes to
// <root>/<col>=<value>/.../part-0001.parquet, where <root> is
// <path>/<extract> when path is a directory and the templated path
// otherwise. Values are written as Hive and Spark write them: integers as
// decimal text, bit as true/false, date as YYYY-MM-DD, uniqueidentifier in
// canonical form, strings as they are except that control characters, DEL
// and " # % ' * / : = ? \ { [ ] ^ become %XX (upper-case hex); NULL and
// the empty string become __HIVE_DEFAULT_PARTITION__; column names are
// escaped the same way. Only bit, integer, date, uniqueidentifier and
// char/varchar/nchar/nvarchar columns up to 8000 bytes can partition;
// anything else (float, decimal, binary, LOBs, xml, json, sql_variant,
// times) is refused when the columns arrive, before any row: cast in the
// query instead. The partition columns are left out of the files (readers
// rebuild them from the paths) unless partition_columns_in_file: true. A
// partition directory name longer than 255 bytes fails the run. An
// extract without rows writes no file. Files of another run already under
// <root> are neither removed nor merged (same-named files are replaced).
//
// Partitioned, the cell calls fill a one-row staging batch; EndRow builds
// the row's key from the raw partition values in a reused buffer, finds
// its partition (the previous row's partition without a lookup when the
// key repeats, else a map lookup that does not allocate) and copies the
// row into that partition's batch, so each value is copied once more than
// unpartitioned and a row still allocates nothing in steady state. Each
// partition has its own batch, file and numbered parts; a partition's
// batch becomes a row group at row_group_bytes / row_group_rows, and
// max_rows / max_bytes cut its files as above.
//
// Memory bound, partitioned: at most max_open_partitions (default 32)
// partitions are open; a row for another one first closes the least
// recently used (its rows are written as a row group, its file finished
// and kept for Publish, its buffers released; a later row for it opens
// its next file, part-0002.parquet, ...). The rows buffered across all
// open partitions are capped by partition_buffer_bytes (default
// row_group_bytes): beyond it, the partition holding the most is written
// out as a (smaller) row group. At most `parallel` row groups encode at
// once across all partitions and at most parallel+1 spare batches are
// kept. So memory is about 2 × partition_buffer_bytes (batches grow by
// doubling) + parallel × row_group_bytes in flight plus their compressed
// pages + (parallel+1) spare batches, plus per open partition a 256 KiB
// write buffer and its Parquet writer (about 5 KiB per column: measured
// +100 MiB for 32 open partitions of a 600-column table); partitions that
// are not open cost a few hundred bytes each (name, finished files). A
// row group of another partition than the last allocates its page
// buffers afresh (page_bytes per column), so with many interleaved
// partitions of a wide table lower page_bytes too.
// With many partitions prefer a lower row_group_bytes, or sort the query
// by the partition columns so each partition is written in one go.
package parquet
