// Package csv is the CSV sink of tdsextract (the cell-sink contract it
// implements: docs/ARCHITECTURE.md).
//
// Values are formatted by the decode.Append*Text helpers straight into the
// sink's own line buffer: variable-length values are written there by the
// decoder (Reserve returns a slice of the buffer), and quoting is decided
// after the bytes are in, by scanning them once and, only when needed,
// shifting them right in place to add the quotes and double embedded ones.
// The buffer (256 KiB by default) is written to the file or the compressor
// when full, so each value is copied once into the buffer and once out of
// it, and a row costs no allocation.
//
// Output rules:
//   - RFC 4180: fields containing the delimiter, the quote, CR or LF are
//     quoted, embedded quotes doubled; the header row holds the column names.
//   - NULL is an unquoted empty field and an empty string a quoted "" by
//     default, so they stay distinguishable (PostgreSQL's COPY CSV reads
//     them the same way). With a non-empty null token (e.g. "\N") NULL is
//     that token unquoted and a value equal to it is quoted.
//   - Per-type text, every value exact: exact decimals, money with 4 decimals,
//     datetime2/time with their scale's digits, datetime with 3 and
//     smalldatetime with none (as SQL Server shows them), datetimeoffset as
//     local time with its original offset, GUIDs canonical lower-case,
//     floats shortest round-trip, vector as a JSON array ([1,2.5]),
//     sql_variant as its base value's text, binary as hex (or \x hex,
//     base64).
//   - The "postgres" dialect is exactly what
//     COPY t FROM ... WITH (FORMAT csv, HEADER true) reads back: bytea as
//     \x hex, vectors as {..} array literals for real[], the value \. quoted.
//   - Text and binary values above 1 MiB are streamed to the file part by
//     part (text then always quoted), so memory stays bounded for (max)
//     columns of any size.
//
// Files are written under a temporary name in the destination directory,
// fsynced, and renamed to their final names only in Publish; Abort removes
// them, so a failed run leaves nothing under a final name. With max_rows or
// max_bytes the output is split into numbered files: name.0001.csv,
// name.0002.csv, ... (each with the header).
package csv
