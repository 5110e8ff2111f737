// Package session is tdsextract's session layer: it connects to SQL Server
// (connection strings in URL and ADO form, SSRP for named instances,
// PRELOGIN, TLS in the disable, optional, mandatory and strict (TDS 8.0)
// modes, LOGIN7 with SQL or access-token authentication, routing), and runs
// requests whose result sets stream through decode.Stream into a
// decode.CellSink.
//
// After login a goroutine per session reads the socket ahead of the
// decoder (1 MiB at most), so the kernel's copy and TLS decryption overlap
// with decoding.
//
// The request deadline is a budget charged only while the decoder really
// waits for the network: rows served from bytes already read never read the
// clock or touch a timer, and time a slow sink spends between rows is never
// charged. An exhausted budget still times out the next wait; "no timeout"
// is a state of its own. Cancellation is observed between rows and during
// waits; it sends ATTENTION and drains to the acknowledgement so the
// session stays usable.
//
// session knows nothing of jobs, sinks or configuration files.
//
// Specification: MS-TDS, https://learn.microsoft.com/openspecs/windows_protocols/ms-tds
// (3.2 client details, 2.2.6.4 LOGIN7, 2.2.6.5 PRELOGIN, 2.2.1.7 ATTENTION).
package session
