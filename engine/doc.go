// Package engine is tdsextract's session layer and job runner: it connects
// to SQL Server (connection strings in URL and ADO form, PRELOGIN, TLS in
// the disable, optional, mandatory and strict (TDS 8.0) modes, LOGIN7,
// routing), runs requests whose result sets stream through decode.Stream
// into a decode.CellSink, and runs jobs: extracts streamed once into every
// sink registered for them, with verification and atomic publish.
//
// After login a goroutine per session reads the socket ahead of the
// decoder (at most 1 MiB), so the kernel's copy and TLS overlap with
// decoding. The request deadline is a budget charged only while the
// decoder really waits for the network (DESIGN.md §5): rows served from
// bytes already read never touch a timer. Cancellation sends ATTENTION and drains to its
// acknowledgement so the session stays usable.
//
// engine knows no concrete sink and no configuration library: sinks
// register factories in a Registry, and the CLI hands it plain structs.
//
// Specification: https://learn.microsoft.com/openspecs/windows_protocols/ms-tds
// (3.2 client details, 2.2.6.4 LOGIN7, 2.2.6.5 PRELOGIN).
package engine
