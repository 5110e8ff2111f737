package decode

// Mode says how the decoder delivers one column's values to a CellSink.
type Mode uint8

const (
	// ModeValue delivers decoded values through the typed calls (Int, Decimal,
	// DateTime, ...) and text as UTF-8 through the variable-length calls.
	ModeValue Mode = iota
	// ModeRaw delivers every non-NULL value, whatever its type, as its wire
	// bytes through the variable-length calls (length prefix, PLP framing and
	// text pointers removed; no transcoding, GUIDs in wire order). For
	// checksums over raw bytes and for pass-through sinks.
	ModeRaw
	// ModeSkip makes the decoder skip the column: no call at all, not even Null.
	ModeSkip
)

// CellSink receives a result set cell by cell, in column order, row by row.
// It is the one-copy handoff (docs/ARCHITECTURE.md): the sink owns destination
// memory and the decoder writes each value into it once.
//
// For each row the decoder makes exactly one call per non-skipped column
// (Null, a typed call, or one variable-length sequence), then EndRow.
//
// A variable-length value (char/varchar/text and the N- types as UTF-8,
// binary types, xml, json, UDT bytes, vector elements, every ModeRaw value)
// is delivered as:
//
//	BeginValue(col, size)
//	zero or more parts, each either
//	    dst := Reserve(col, n); <decoder writes m <= n bytes into dst[:m]>; Commit(col, m)
//	    (the rest of dst may have been overwritten: it is scratch until Commit)
//	or, when Reserve returned nil,
//	    Write(col, p)   // p is borrowed: valid only during the call
//	EndValue(col)
//
// size is the value's length in wire bytes when known (before transcoding),
// or -1 when it is not known (PLP with unknown length). n is exact for bytes
// and single-byte text that needs no transcoding, and an upper bound when the
// decoder transcodes (UTF-16 to UTF-8 needs at most 3 bytes per code unit; a
// code page at most 3 bytes per byte). A value may arrive in several parts
// (PLP chunks, values bigger than the residency cap); the parts concatenate.
// An empty value is BeginValue followed directly by EndValue.
//
// Vector values arrive as their elements: dims × 4 little-endian float32
// bytes, the 8-byte vector header removed. sql_variant values arrive as a
// Variant call naming the base type, followed by the base value's own call.
//
// Sinks may not retain any slice passed to them after the call returns.
// No method may block on the network of the source; a sink that fails
// records its error and returns it from EndRow, which stops decoding.
type CellSink interface {
	// Columns starts a result set. cols is valid until the next Columns call.
	// The sink may set modes[i] for each column; all are ModeValue on entry.
	Columns(cols []Column, modes []Mode) error

	Null(col int)
	Bool(col int, v bool)
	// Int carries tinyint (0..255), smallint, int and bigint.
	Int(col int, v int64)
	Float32(col int, v float32)
	Float64(col int, v float64)
	Decimal(col int, v Decimal)
	// Money carries money and smallmoney as an integer scaled by 10^4.
	Money(col int, v int64)
	// Date carries date as days since 0001-01-01.
	Date(col int, days int32)
	// Time carries time(n) as 100 ns ticks since midnight.
	Time(col int, ticks int64)
	DateTime(col int, v DateTime)
	DateTimeOffset(col int, v DateTimeOffset)
	GUID(col int, v GUID)
	// Variant announces the base type of the sql_variant value that follows.
	// ti is valid only during the call.
	Variant(col int, ti *TypeInfo)

	BeginValue(col int, size int64)
	Reserve(col int, n int) []byte
	Commit(col int, n int)
	Write(col int, p []byte)
	EndValue(col int)

	// EndRow ends a row. A non-nil error stops the decoder and is returned
	// from its Next call unchanged.
	EndRow() error
}

// BytesSink is an optional fast path of a CellSink (found by type
// assertion when the sink is set, so the per-cell path pays no check). A sink that
// implements it receives every variable-length value that is wholly
// resident and needs no transcoding as one call,
//
//	Bytes(col, p)
//
// instead of the sequence BeginValue, Reserve/Commit (or Write), EndValue.
// That covers binary and varbinary, char/varchar data that is ASCII (any
// code page) or valid UTF-8 under a UTF-8 collation, vector elements of
// float32 vectors, and ModeRaw values that are not streamed; p holds
// exactly the bytes the sequence would have delivered (len(p) == 0 for an
// empty value, never NULL: NULL is still Null). p is borrowed: it points
// into the decoder's input and is valid only during the call, so the sink
// copies it once into its own memory; the value is still written once.
//
// Everything else (text that is transcoded, PLP and text/image values,
// which stream part by part) still arrives through the BeginValue
// sequence, so a BytesSink must implement both.
//
// Measured (decode/sink_fast_test.go and stream_bench_test.go, A B B A in thread CPU
// time): on poc48 (39 INTN + 9 varchar(6)) the columnar benchmark sink
// decodes about 5% faster with Bytes than with the four-call sequence
// (BenchmarkSinkAB, median pair ratio 0.95), and a sink that does nothing
// shows the decoder's side of it, about 10% (nopsink against nopbytes).
// A whole-row interface (one call per row with the values in arrays) was
// built and measured too and did not pay: no faster with a do-nothing
// sink, and 17-27% slower on poc48 with the columnar sink, whose own
// per-cell switch replaced the dispatch it saved. The per-cell cost that
// remains is mostly data-dependent branches (NULLs, varying lengths), not
// the calls.
type BytesSink interface {
	Bytes(col int, p []byte)
}

// UTF16Sink is an optional fast path of a CellSink, found like BytesSink.
// A sink that implements it receives every wholly resident UTF-16 text
// value in ModeValue (nchar, nvarchar up to 4000, a sql_variant's nchar
// base value; never PLP or ntext, which stream) as one call,
//
//	UTF16(col, p)
//
// instead of the sequence BeginValue, Reserve/Commit, EndValue. p holds
// the value's UTF-16LE wire bytes, an even count (len(p) == 0 for an
// empty value, never NULL: NULL is still Null); it is borrowed and valid
// only during the call. The sink converts p with UTF16ToUTF8 straight
// into its own memory (reserving MaxUTF16ToUTF8(len(p)) bytes), which
// yields exactly the UTF-8 the sequence would have delivered: the value
// is still written once, into the sink's memory, and by the decoder's
// converter.
//
// Measured (sinks/parquet BenchmarkParquetExtract, dec-ns/row, A B
// interleaved): on sales.orders, whose two nvarchar columns hold short
// ASCII text, the Parquet sink's decoding goroutine went from 155 to 110
// ns a row. A two-call form (the sink returns its destination, the
// decoder converts into it and commits) measured the same; the CSV sink
// gained nothing measurable (its per-value quoting dominates) and does
// not implement it.
type UTF16Sink interface {
	UTF16(col int, p []byte)
}

// LendSink is an optional fast path of a CellSink, found like BytesSink,
// through which the sink lends the decoder its memory for fixed-width
// integer columns, so that the commonest cells of all (a NOT NULL int,
// bigint or short decimal) are stored by the row loop itself, with no call.
//
// After each Columns call (that returned nil) the decoder calls
//
//	Lend(slots)
//
// with len(slots) == len(cols), every entry nil. The sink sets slots[i]
// for a column whose values it keeps as a []uint64 that Int or Decimal
// would append to. From then on, in place of
//
//	Int(i, v)      the decoder may append uint64(v) to *slots[i]
//	Decimal(i, v)  it may append the unscaled value with the sign applied,
//	               when that fits an int64 (always, for precision <= 18),
//	               as a uint64
//
// and it does so only when len(*slots[i]) < cap(*slots[i]): a full slice,
// NULL, and every other value still take the call, which must append to
// the same slice. The sink promises that these appends are exactly what
// the call would have done (a sink that keeps levels, counts per value or
// converts the value must not lend that column). The sink may replace an
// entry it set, or clear it, during any of its own calls (when it starts a
// new batch, say); the decoder reads the entry afresh for every value and
// never writes through it after the next Columns call. An entry left nil
// by Lend stays unused for the result set.
//
// Measured on the Parquet sink's cell path (sinks/parquet
// BenchmarkParquetCellPath, medians of 5 A B pairs): sales.order_lines,
// six NOT NULL integer and decimal columns, went from 42.8 to 31.1 ns a
// row. Unlike the refuted whole-row interface (see BytesSink), no second
// per-column switch runs in the sink: the row loop's own case stores. A
// sink that lends nothing pays the test of the plan's slot in every
// integer and decimal cell: decoding into decode.Nop, whose calls do
// nothing, order_lines went from 28 to 34 ns a row (medians of 7 pairs);
// against a sink's own work per cell (CSV text, a COPY row) it is noise.
type LendSink interface {
	Lend(slots []*[]uint64)
}

// lendPut appends v to the slice a lent column's slot points at when the
// column is lent (slot non-nil), the slot is set and the slice has room.
// It is small enough to be inlined into the row loop; the self-assignment
// of the reslice stores only the length.
func lendPut(slot **[]uint64, v uint64) bool {
	if slot == nil {
		return false
	}
	d := *slot
	if d == nil {
		return false
	}
	n := len(*d)
	if n >= cap(*d) {
		return false
	}
	(*d)[:n+1][n] = v
	*d = (*d)[:n+1]
	return true
}
