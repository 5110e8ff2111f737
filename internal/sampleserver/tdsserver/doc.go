// Package tdsserver is a TDS 7.4 / 8.0 server for tests, the demo and
// benchmarks: it serves the generated sample database (internal/sampleserver/sampledb)
// through the SQL subset of internal/sampleserver/sqlexec over real TDS on TCP, and it is
// trusted only as far as independent clients (go-mssqldb, FreeTDS tsql,
// freebcp and isql over tdsodbc, pgloader) read it correctly: its tests run
// all of them against it.
//
// # Connection (MS-TDS 3.3.5)
//
// PRELOGIN (2.2.6.5) is answered with VERSION 16.0.4135, the negotiated
// ENCRYPTION, INSTOPT, MARS off and, when the client sent it,
// FEDAUTHREQUIRED. Encryption follows Config.Encryption and the client's
// ENCRYPTION byte:
//
//	server \ client  OFF                      ON / REQ        NOT_SUP
//	off (default)    OFF: TLS for LOGIN7 only ON: full TLS    NOT_SUP: no TLS
//	on               ON: full TLS             ON: full TLS    NOT_SUP: no TLS
//	required         REQ: full TLS            REQ: full TLS   REQ, then close
//	notsup           NOT_SUP: no TLS          (client quits)  NOT_SUP: no TLS
//	strict           TDS 8.0: TLS (ALPN tds/8.0, TLS 1.2+) on the raw TCP
//	                 connection before PRELOGIN, whatever the byte says
//
// In the 7.x flow the TLS handshake travels inside PRELOGIN packets and is
// capped at TLS 1.2 (as SQL Server does); afterwards TLS records go raw on
// the socket. With OFF/OFF only the LOGIN7 message is encrypted.
//
// LOGIN7 (2.2.6.4) is checked against Config.Users (SQL authentication;
// user names case-insensitive) or, with the FEDAUTH feature, against
// Config.AccessTokens. A failure is ERROR 18456 class 14 "Login failed for
// user '...'." (after 4060 for an unknown database), DONE(ERROR), close.
// Success is answered, in the order of MS-TDS example 4.4, with ENVCHANGE
// database (1), INFO 5701, ENVCHANGE collation (7,
// SQL_Latin1_General_CP1_CI_AS), ENVCHANGE language (2), ENVCHANGE packet
// size (4) = min(client's, MaxPacketSize), INFO 5703, LOGINACK (TDS 7.4, or
// the client's 7.2/7.3; "Microsoft SQL Server" 16.0.4135), FEATUREEXTACK
// acknowledging UTF8_SUPPORT, JSONSUPPORT and VECTORSUPPORT
// (and FEDAUTH) only when requested, and DONE. Every packet header carries
// the connection's SPID (51, 52, ...). Config.RouteTo instead answers LOGIN7
// with LOGINACK, ENVCHANGE routing (20) and DONE, then closes, as an Azure
// SQL gateway redirects.
//
// # Requests
//
// SQLBatch (several statements; SET, USE, SET FMTONLY ON/OFF handled by
// sqlexec), RPC sp_executesql (ProcID 10), sp_prepare (11), sp_execute (12),
// sp_prepexec (13), sp_unprepare (15), by ProcID or by name, several RPCs
// in one message; TransMgr begin/commit/rollback. Each result set is
// COLMETADATA, ROW or NBCROW tokens, then DONE (DONEINPROC inside an RPC)
// with COUNT and MORE as appropriate; an RPC ends with RETURNSTATUS, the
// RETURNVALUE of the @handle output parameter where there is one, and
// DONEPROC. Errors are ERROR followed by DONE(ERROR). The reset-connection
// status bits reset the session and are acknowledged with ENVCHANGE 18.
// RPC parameter values are decoded with decode.DecodeCell into the generic
// value types sqlexec takes; text/ntext/image parameters (FreeTDS's ODBC
// driver sends statements as ntext) are accepted in the RPC form, LONGLEN
// without a text pointer (2.2.6.6).
//
// A client that did not negotiate JSONSUPPORT or VECTORSUPPORT gets json
// columns as nvarchar(max) and vector columns as varchar(max) text (the
// text SQL Server produces, sampledb.VectorText), as SQL Server 2025 does;
// char data in UTF-8 collations is sent as it is whether or not UTF8_SUPPORT
// was negotiated, as SQL Server does.
//
// Rows stream from sqlexec's RowSource in pre-encoded blocks framed straight
// into packets of the negotiated size and written with one system call per
// 128 KiB; nothing is allocated per row.
//
// ATTENTION (0x06) is read concurrently while a result streams: the server
// stops after the current block, closes the message with DONE(ATTN) and
// EOM. An attention arriving between requests is answered with DONE(ATTN).
//
// # Fault knobs and the sample-server flags
//
// Faults apply to every query response, or only to responses reading the
// table Faults.Table (flag --fault-table NAME, "name" or "schema.name").
// They never affect PRELOGIN or LOGIN7. Rows are counted per result set,
// bytes per response message. Flags of `tdsextract sample-server`, mapped
// 1:1 to Config and Faults fields:
//
//	--listen ADDR                  Config.Addr (default 127.0.0.1:14330)
//	--user NAME --password PW      Config.Users = {NAME: PW} (default sa / Sample-Passw0rd)
//	--encrypt MODE                 Config.Encryption: off|on|required|notsup|strict
//	--cert FILE --key FILE         Config.CertFile, Config.KeyFile (PEM); default a generated CA + cert
//	--write-ca FILE                Server.WriteCA(FILE) after Start
//	--packet-size N                Config.MaxPacketSize: the largest packet size agreed to (512..32767)
//	--seed N, --rows table=N       sampledb.Config (seed, per-table row counts; a table
//	                               that does not exist is an error listing the tables)
//	--snapshot-isolation=false     sampledb.Config.NoSnapshot: reads under SNAPSHOT fail with 3952
//	--fault-close-after-bytes N    Faults.CloseAfterBytes: after N bytes of a response
//	                               (headers included) are written, the TCP connection closes
//	--fault-close-after-rows N     Faults.CloseAfterRows: after N rows of a result set are
//	                               written and flushed, the connection closes (no DONE)
//	--fault-stall-after-rows N     Faults.StallAfterRows, with
//	--fault-stall DURATION         Faults.Stall: after N rows the server flushes and sends
//	                               nothing for DURATION (ATTENTION ends the stall: the client's
//	                               timeout works), then continues
//	--fault-trickle BYTES_PER_SEC  Faults.TrickleBytesPerSec: responses written at this rate
//	--fault-split-tokens           Faults.SplitTokens: packets of 1..13 payload bytes, so every
//	                               token and value straddles packet boundaries
//	--fault-malformed-at-row N     Faults.MalformedAtRow: row N (1-based) replaced by an undefined
//	                               token id (0x5A) and garbage; the message ends there (EOM, no DONE)
//	--fault-hostile-length-at-row N  Faults.HostileLengthAtRow: row N replaced by an NBCROW whose
//	                               first (max)/xml/json column announces a PLP total of 2^62 bytes
//	                               and a first chunk of 2^32-16 bytes (or, when the result has no
//	                               such column, a COLMETADATA announcing 65534 columns); the message
//	                               ends there
//	--fault-table NAME             Faults.Table (it must name a table or catalog view)
//
// On start the command prints a connection string that its --encrypt mode
// accepts: encrypt=optional for off (login-only TLS, not verified, as
// SQL Server's default), disable for notsup, mandatory for on and
// required, strict for strict; with full TLS, certificate=FILE when
// --write-ca FILE (or --cert FILE) was given, else TrustServerCertificate=true.
//
// Server.SetFaults replaces the knobs of a running server for the requests
// that follow. Faults.Validate rejects negative values, a stall without its
// partner flag, malformed and hostile together, and a table without any
// fault. Server.Stats counts connections, logins, attentions, queries, rows
// and bytes, so tests can assert that an ATTENTION arrived.
package tdsserver
