package sqlexec

import (
	"strconv"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// EnvChange types a statement can cause (MS-TDS 2.2.7.9; the same numbers as
// decode.EnvDatabase and decode.EnvLanguage).
const (
	EnvDatabase byte = 1
	EnvLanguage byte = 2
)

// EnvChange is an environment change the server reports in an ENVCHANGE
// token after the statement (USE: database; SET LANGUAGE: language).
type EnvChange struct {
	Type               byte
	NewValue, OldValue string
}

// Info is an informational message (INFO token, class <= 10), such as
// 5701 "Changed database context to 'x'." after USE.
type Info struct {
	Number  int32
	State   uint8
	Class   uint8
	Message string
	Line    int32
}

// Param is a parameter value of sp_executesql / sp_execute: Value is one of
// the generic value types of package decode (nil for NULL), Type the
// declared TYPE_INFO (used for the result type of a bare @param).
type Param struct {
	Name  string // with or without the leading @; empty for positional
	Value any
	Type  decode.TypeInfo
}

// RowSource produces the rows of a result set, encoded, on demand.
type RowSource interface {
	// AppendRows appends up to max encoded ROW (or NBCROW when nbc) tokens
	// to dst and returns the extended buffer, the number of rows appended
	// and whether the source is exhausted. It may return n == 0 with done
	// false after a bounded amount of work (a filter that skipped many rows),
	// so the caller can look for an attention between calls. Rows are
	// encoded for the result's Columns.
	AppendRows(dst []byte, max int, nbc bool) (out []byte, n int, done bool)
}

// Result is the outcome of one statement of a batch.
type Result struct {
	// Columns is the result set's metadata; nil for a statement without a
	// result set (SET, USE, ...).
	Columns []decode.Column
	// Rows produces the rows; nil when Columns is nil or under FMTONLY.
	Rows RowSource
	// RowCount is the number of rows the statement returns when known up
	// front (for DONE's count), -1 when unknown (count the rows streamed).
	RowCount int64
	// EnvChanges and Infos are sent before the statement's DONE.
	EnvChanges []EnvChange
	Infos      []Info
	// Done reports that the statement ends with a DONE token of its own
	// (SELECT, USE, EXEC). SET statements and transaction statements
	// produce none, as on SQL Server.
	Done bool
	// Table is the source table's name ("schema.table") for fault filtering
	// (--fault-table); empty for statements without a source table.
	Table string
	// Affected reports that RowCount is the rows the statement changed
	// (INSERT), sent in its DONE.
	Affected bool
}

// Session is the per-connection state the SQL subset needs.
type Session struct {
	// Database is the current database (set by USE; the server may set it
	// from LOGIN7's Database before the first batch).
	Database string
	// FMTOnly is SET FMTONLY: SELECTs return metadata only.
	FMTOnly bool
	// TextSize is SET TEXTSIZE in bytes; 0 = unlimited. It truncates (max),
	// text, ntext and image values of SELECT results, as SQL Server does.
	TextSize int
	// Options holds the boolean SET options by upper-case name.
	Options map[string]bool
	// Language is SET LANGUAGE (default us_english).
	Language string
	// RowCountLimit is SET ROWCOUNT (0 = none).
	RowCountLimit int64
	// Prepared maps sp_prepare handles to their statement text.
	Prepared map[int32]string
	// ScanLimit bounds how many rows a statement may read before it can
	// return anything (aggregates with non-key filters, sorts, joins);
	// beyond it the statement fails instead of stalling the connection.
	ScanLimit int64
	// SPID is reported by @@SPID.
	SPID int16
	// TranCount is @@TRANCOUNT (BEGIN TRAN / COMMIT / ROLLBACK).
	TranCount int
	// Isolation is SET TRANSACTION ISOLATION LEVEL ("READ COMMITTED" by
	// default). Under SNAPSHOT a transaction reads the version of the
	// database it first read user data in until it ends; every other
	// statement reads the newest version (rows inserted are visible to
	// the next statement).
	Isolation string
	// snap is the version a SNAPSHOT transaction pinned; nil outside one.
	snap *sampledb.DB

	db         *sampledb.DB
	nextHandle int32
	preparedP  map[int32][]string // declared parameter names per handle
}

// DefaultScanLimit is the default Session.ScanLimit.
const DefaultScanLimit = 10_000_000

// NewSession returns a session on db, in db's database.
func NewSession(db *sampledb.DB) *Session {
	return &Session{
		Database:  db.Name(),
		Options:   map[string]bool{},
		Language:  "us_english",
		Isolation: "READ COMMITTED",
		Prepared:  map[int32]string{},
		ScanLimit: DefaultScanLimit,
		SPID:      51,
		db:        db,
		preparedP: map[int32][]string{},
	}
}

// DB returns the session's database.
func (s *Session) DB() *sampledb.DB { return s.db }

// Exec parses and runs a batch. A syntax error fails the whole batch before
// anything runs (results nil). A statement error stops the batch: the
// results of the statements before it are returned with the error, and the
// server sends them before the error, as SQL Server does.
func (s *Session) Exec(sql string, params []Param) ([]Result, error) {
	stmts, err := parseBatch(sql)
	if err != nil {
		return nil, err
	}
	ps := newParamSet(params)
	var out []Result
	for _, st := range stmts {
		s.refresh()
		r, err := s.execStmt(st, ps)
		if err != nil {
			return out, err
		}
		out = append(out, r...)
	}
	return out, nil
}

// oneResult is the outcome of a statement that returns one result.
func oneResult(r Result, err error) ([]Result, error) {
	if err != nil {
		return nil, err
	}
	return []Result{r}, nil
}

func (s *Session) execStmt(st stmt, ps *paramSet) ([]Result, error) {
	switch st := st.(type) {
	case *selectStmt:
		return oneResult(s.execSelect(st, ps))
	case *setStmt:
		return nil, s.execSet(st, ps)
	case *useStmt:
		return oneResult(s.execUse(st))
	case *execStmt:
		return s.execProc(st, ps)
	case *txnStmt:
		switch st.Verb {
		case "BEGIN":
			s.TranCount++
		case "COMMIT":
			if s.TranCount == 0 {
				return nil, newError(3902, 16, 1, st.Line, "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.")
			}
			s.TranCount--
		case "ROLLBACK":
			if s.TranCount == 0 {
				return nil, newError(3903, 16, 1, st.Line, "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.")
			}
			s.TranCount = 0
		}
		if s.TranCount == 0 {
			s.snap = nil
		}
		return nil, nil
	case *insertStmt:
		return oneResult(s.execInsert(st, ps))
	case *unsupportedStmt:
		switch st.Verb {
		case "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "TRUNCATE", "MERGE", "BULK":
			return nil, errReadOnly(st.Line, s.Database)
		}
		return nil, errUnsupported(st.Line, ""+st.Verb+" statements are")
	}
	return nil, &Error{Number: 50000, Class: 16, State: 1, Line: st.line(), Message: "sqlexec: unsupported statement"}
}

func (s *Session) execSet(st *setStmt, ps *paramSet) error {
	num := func() (int64, error) {
		v := st.Value
		if v.Kind == tkVar {
			x, ok := ps.get(v.Text)
			if !ok {
				return 0, errMustDeclare(v.Line, v.Text)
			}
			n, ok := x.(int64)
			if !ok {
				return 0, errSyntax(v)
			}
			return n, nil
		}
		n, err := strconv.ParseInt(v.Text, 10, 64)
		if err != nil {
			return 0, errSyntax(v)
		}
		return n, nil
	}
	switch st.Options[0] {
	case "TEXTSIZE":
		n, err := num()
		if err != nil {
			return err
		}
		// 0 or -1 restore the default (unlimited here: clients that read
		// LOBs set their own value anyway).
		if n <= 0 || n >= 1<<31-1 {
			s.TextSize = 0
		} else {
			s.TextSize = int(n)
		}
		return nil
	case "ROWCOUNT":
		n, err := num()
		if err != nil {
			return err
		}
		if n < 0 {
			n = 0
		}
		s.RowCountLimit = n
		return nil
	case "LOCK_TIMEOUT", "DATEFIRST", "QUERY_GOVERNOR_COST_LIMIT":
		_, err := num()
		return err
	case "LANGUAGE":
		lang := strings.ToLower(st.Value.Text)
		if lang != "us_english" && lang != "english" {
			return &Error{Number: 50000, Class: 16, State: 1, Line: st.Line,
				Message: "sqlexec: language '" + st.Value.Text + "' is not available on the tdsextract test server (only us_english)"}
		}
		s.Language = "us_english"
		return nil
	case "TRANSACTION ISOLATION LEVEL":
		s.Isolation = st.Value.Text
		return nil
	case "DATEFORMAT", "DEADLOCK_PRIORITY", "CONTEXT_INFO":
		return nil
	}
	for _, o := range st.Options {
		if !knownSetOptions[o] {
			return errSyntax(token{Kind: tkIdent, Text: o, Raw: o, Line: st.Line})
		}
		s.Options[o] = st.On
		if o == "FMTONLY" {
			s.FMTOnly = st.On
		}
	}
	return nil
}

// knownSetOptions are the ON/OFF options of SET (Transact-SQL).
var knownSetOptions = map[string]bool{
	"ANSI_DEFAULTS": true, "ANSI_NULL_DFLT_OFF": true, "ANSI_NULL_DFLT_ON": true, "ANSI_NULLS": true,
	"ANSI_PADDING": true, "ANSI_WARNINGS": true, "ARITHABORT": true, "ARITHIGNORE": true,
	"CONCAT_NULL_YIELDS_NULL": true, "CURSOR_CLOSE_ON_COMMIT": true, "FMTONLY": true,
	"FORCEPLAN": true, "IMPLICIT_TRANSACTIONS": true, "NOCOUNT": true, "NOEXEC": true,
	"NUMERIC_ROUNDABORT": true, "PARSEONLY": true, "QUOTED_IDENTIFIER": true, "REMOTE_PROC_TRANSACTIONS": true,
	"SHOWPLAN_ALL": true, "SHOWPLAN_TEXT": true, "SHOWPLAN_XML": true, "STATISTICS": true, "XACT_ABORT": true,
	"IO": true, "PROFILE": true, "TIME": true, "XML": true, "NO_BROWSETABLE": true, "OFFSETS": true,
}

// knownDatabases lists the system databases every SQL Server has, besides
// the sample database.
var knownDatabases = []string{"master", "tempdb", "model", "msdb"}

func (s *Session) execUse(st *useStmt) (Result, error) {
	name := ""
	if strings.EqualFold(st.DB, s.db.Name()) {
		name = s.db.Name()
	}
	for _, d := range knownDatabases {
		if strings.EqualFold(st.DB, d) {
			name = d
		}
	}
	if name == "" {
		return Result{}, newError(911, 16, 1, st.Line, "Database '%s' does not exist. Make sure that the name is entered correctly.", st.DB)
	}
	old := s.Database
	s.Database = name
	return Result{
		RowCount:   -1,
		Done:       true,
		EnvChanges: []EnvChange{{Type: EnvDatabase, NewValue: name, OldValue: old}},
		Infos:      []Info{{Number: 5701, State: 2, Class: 0, Line: st.Line, Message: "Changed database context to '" + name + "'."}},
	}, nil
}

// inSampleDB reports whether user tables are visible.
func (s *Session) inSampleDB() bool { return strings.EqualFold(s.Database, s.db.Name()) }

// Prepare stores a statement for sp_prepare / sp_prepexec and returns its
// handle. paramDecl is the declaration list ("@P1 int, @P2 nvarchar(10)"),
// whose names give positional sp_execute parameters their names.
func (s *Session) Prepare(sql string, paramDecl string) int32 {
	s.nextHandle++
	h := s.nextHandle
	s.Prepared[h] = sql
	s.preparedP[h] = declNames(paramDecl)
	return h
}

// Execute runs a prepared statement (sp_execute, and sp_prepexec after
// Prepare). Unnamed parameters take the declared names in order.
func (s *Session) Execute(handle int32, params []Param) ([]Result, error) {
	sql, ok := s.Prepared[handle]
	if !ok {
		return nil, newError(8179, 16, 2, 1, "Could not find prepared statement with handle %d.", handle)
	}
	names := s.preparedP[handle]
	ps := make([]Param, len(params))
	copy(ps, params)
	for i := range ps {
		if ps[i].Name == "" && i < len(names) {
			ps[i].Name = names[i]
		}
	}
	return s.Exec(sql, ps)
}

// Unprepare drops a prepared statement (sp_unprepare).
func (s *Session) Unprepare(handle int32) {
	delete(s.Prepared, handle)
	delete(s.preparedP, handle)
}

// declNames extracts the parameter names of a declaration list.
func declNames(decl string) []string {
	toks, err := lex(decl)
	if err != nil {
		return nil
	}
	var names []string
	depth := 0
	expectName := true
	for _, t := range toks {
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
		case t.isOp(",") && depth == 0:
			expectName = true
		case t.Kind == tkVar && expectName:
			names = append(names, t.Text)
			expectName = false
		}
	}
	return names
}

// paramSet is the parameters of one execution, by lower-case name.
type paramSet struct {
	vals  map[string]any
	types map[string]decode.TypeInfo
}

func newParamSet(params []Param) *paramSet {
	ps := &paramSet{vals: map[string]any{}, types: map[string]decode.TypeInfo{}}
	for i, p := range params {
		n := strings.ToLower(strings.TrimPrefix(p.Name, "@"))
		if n == "" {
			n = "p" + strconv.Itoa(i+1)
		}
		ps.vals[n] = p.Value
		ps.types[n] = p.Type
	}
	return ps
}

func (ps *paramSet) get(name string) (any, bool) {
	v, ok := ps.vals[strings.ToLower(name)]
	return v, ok
}

func (ps *paramSet) typeOf(name string) (decode.TypeInfo, bool) {
	t, ok := ps.types[strings.ToLower(name)]
	return t, ok
}
