package sqlexec

import "fmt"

// Error is an error as SQL Server reports it in an ERROR token (MS-TDS
// 2.2.7.10): the server sends Number, State, Class, Message and Line as they
// are. The numbers and texts are SQL Server's own (sys.messages), so clients
// that branch on them behave as against a real server.
type Error struct {
	Number  int32
	State   uint8
	Class   uint8
	Message string
	Line    int32
}

func (e *Error) Error() string {
	return fmt.Sprintf("sqlexec: mssql error %d (state %d, class %d, line %d): %s", e.Number, e.State, e.Class, e.Line, e.Message)
}

func newError(number int32, class, state uint8, line int32, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Number: number, State: state, Class: class, Message: msg, Line: line}
}

// Messages used in several places (texts as in SQL Server's sys.messages).
func errSyntax(t token) *Error {
	near := t.Raw
	if t.Kind == tkEOF {
		near = ""
	}
	if t.Kind == tkIdent && reserved[upper(t.Text)] {
		return newError(156, 15, 1, t.Line, "Incorrect syntax near the keyword '%s'.", t.Text)
	}
	return newError(102, 15, 1, t.Line, "Incorrect syntax near '%s'.", truncate(near, 128))
}

// nameError returns the constructor of one message that names an object,
// a column or a variable: the five such messages differ only in their
// number, class, state and text.
func nameError(number int32, class, state uint8, format string) func(line int32, name string) *Error {
	return func(line int32, name string) *Error {
		return newError(number, class, state, line, format, name)
	}
}

var (
	errInvalidObject   = nameError(208, 16, 1, "Invalid object name '%s'.")
	errInvalidColumn   = nameError(207, 16, 1, "Invalid column name '%s'.")
	errNotBound        = nameError(4104, 16, 1, "The multi-part identifier \"%s\" could not be bound.")
	errAmbiguous       = nameError(209, 16, 1, "Ambiguous column name '%s'.")
	errUnknownFunction = nameError(195, 15, 10, "'%s' is not a recognized built-in function name.")
	errMustDeclare     = nameError(137, 15, 2, "Must declare the scalar variable \"@%s\".")
	errNoProc          = nameError(2812, 16, 62, "Could not find stored procedure '%s'.")
	errReadOnly        = nameError(3906, 16, 1, "Failed to update database \"%s\" because the database is read-only.")
)

// errUnsupported reports T-SQL that SQL Server runs but this test server
// does not (user error 50000, so a client sees a plain failure, not a
// syntax error of SQL Server's own). what reads "<what> is/are not supported".
func errUnsupported(line int32, what string) *Error {
	return newError(50000, 16, 1, line, "sqlexec: %s not supported by the tdsextract test server", what)
}

// reserved holds T-SQL reserved keywords (upper case): a syntax error at
// one of them is reported as error 156 instead of 102, as SQL Server does.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		"ADD", "ALL", "ALTER", "AND", "ANY", "AS", "ASC", "AUTHORIZATION", "BACKUP", "BEGIN", "BETWEEN",
		"BREAK", "BROWSE", "BULK", "BY", "CASCADE", "CASE", "CHECK", "CHECKPOINT", "CLOSE", "CLUSTERED",
		"COALESCE", "COLLATE", "COLUMN", "COMMIT", "COMPUTE", "CONSTRAINT", "CONTAINS", "CONTINUE",
		"CONVERT", "CREATE", "CROSS", "CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
		"CURRENT_USER", "CURSOR", "DATABASE", "DBCC", "DEALLOCATE", "DECLARE", "DEFAULT", "DELETE",
		"DENY", "DESC", "DISTINCT", "DISTRIBUTED", "DOUBLE", "DROP", "ELSE", "END", "ERRLVL", "ESCAPE",
		"EXCEPT", "EXEC", "EXECUTE", "EXISTS", "EXIT", "EXTERNAL", "FETCH", "FILE", "FILLFACTOR", "FOR",
		"FOREIGN", "FREETEXT", "FROM", "FULL", "FUNCTION", "GOTO", "GRANT", "GROUP", "HAVING", "HOLDLOCK",
		"IDENTITY", "IF", "IN", "INDEX", "INNER", "INSERT", "INTERSECT", "INTO", "IS", "JOIN", "KEY",
		"KILL", "LEFT", "LIKE", "LINENO", "MERGE", "NATIONAL", "NOCHECK", "NONCLUSTERED", "NOT", "NULL",
		"NULLIF", "OF", "OFF", "OFFSETS", "ON", "OPEN", "OPTION", "OR", "ORDER", "OUTER", "OVER",
		"PERCENT", "PIVOT", "PLAN", "PRIMARY", "PRINT", "PROC", "PROCEDURE", "PUBLIC", "RAISERROR", "READ",
		"RECONFIGURE", "REFERENCES", "REPLICATION", "RESTORE", "RESTRICT", "RETURN", "REVERT", "REVOKE",
		"RIGHT", "ROLLBACK", "ROWCOUNT", "ROWGUIDCOL", "RULE", "SAVE", "SCHEMA", "SELECT", "SESSION_USER",
		"SET", "SETUSER", "SHUTDOWN", "SOME", "STATISTICS", "SYSTEM_USER", "TABLE", "TABLESAMPLE",
		"TEXTSIZE", "THEN", "TO", "TOP", "TRAN", "TRANSACTION", "TRIGGER", "TRUNCATE", "UNION", "UNIQUE",
		"UNPIVOT", "UPDATE", "USE", "USER", "VALUES", "VARYING", "VIEW", "WAITFOR", "WHEN", "WHERE",
		"WHILE", "WITH",
	} {
		m[k] = true
	}
	return m
}()

func upper(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
