// Package decode implements the TDS wire protocol ([MS-TDS]) for tdsextract:
// packets, the PRELOGIN, LOGIN7, SQLBatch, RPC and ATTENTION messages, the
// server's token stream, TYPE_INFO, every SQL Server value type and the
// one-copy cell-sink contract (CellSink) through which decoded values reach
// a sink's own memory, and the SQL Server type model (Kind, Decl) that
// every other package asks what a type is called and what it is.
//
// It knows no sockets, clocks or configuration: parsers take byte slices and
// encoders append to them, so each piece can be fuzzed, benchmarked and
// golden-tested alone. Both directions are here because the test server in
// internal/sampleserver/tdsserver encodes what the engine decodes.
//
// Specification: https://learn.microsoft.com/openspecs/windows_protocols/ms-tds
package decode
