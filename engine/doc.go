// Package engine is tdsextract's session layer and job runner: it connects
// to SQL Server (connection strings in URL and ADO form, PRELOGIN, TLS in
// the disable, optional, mandatory and strict (TDS 8.0) modes, LOGIN7,
// routing), runs requests whose result sets stream through decode.Stream
// into a decode.CellSink, and runs jobs: extracts streamed once into every
// sink registered for them, with verification and atomic publish.
//
// The request deadline is a budget charged only while a read really waits
// on the network (DESIGN.md §5): rows served from buffered bytes never
// touch a timer. Cancellation sends ATTENTION and drains to its
// acknowledgement so the session stays usable.
//
// engine knows no concrete sink and no configuration library: sinks
// register factories in a Registry, and the CLI hands it plain structs.
//
// Specification: https://learn.microsoft.com/openspecs/windows_protocols/ms-tds
// (3.2 client details, 2.2.6.4 LOGIN7, 2.2.6.5 PRELOGIN).
package engine
