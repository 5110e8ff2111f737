package sqlexec

import (
	"errors"
	"strings"

	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// insertStmt is INSERT [INTO] table [(columns)] VALUES (...)[, (...)]:
// the one write the sample database takes, on its appendable table
// (dbo.events). Any other INSERT form, and INSERT into a generated table,
// is refused as a write on a read-only database.
type insertStmt struct {
	Line    int32
	Name    []string
	Columns []string
	Rows    [][]expr
}

func (s *insertStmt) line() int32 { return s.Line }

// insertStmt parses an INSERT ... VALUES; any other INSERT form is
// skipped and reported unsupported (a read-only write).
func (p *parser) insertStmt() (stmt, error) {
	t := p.next() // INSERT
	start := p.pos
	other := func() (stmt, error) {
		p.pos = start - 1
		p.skipStatement()
		return &unsupportedStmt{Line: t.Line, Verb: "INSERT"}, nil
	}
	p.accept("INTO")
	name, err := p.multiPart()
	if err != nil {
		return other()
	}
	s := &insertStmt{Line: t.Line, Name: name}
	if p.acceptOp("(") {
		for {
			c := p.next()
			if c.Kind != tkIdent && c.Kind != tkQIdent {
				return nil, errSyntax(c)
			}
			s.Columns = append(s.Columns, c.Text)
			if p.acceptOp(")") {
				break
			}
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
	}
	if !p.accept("VALUES") {
		return other()
	}
	for {
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		var row []expr
		for {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			row = append(row, e)
			if p.acceptOp(")") {
				break
			}
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		s.Rows = append(s.Rows, row)
		if !p.acceptOp(",") {
			return s, nil
		}
	}
}

// execInsert evaluates the VALUES (literals, parameters, functions such as
// SYSUTCDATETIME()), converts them to the column types and adds the rows
// in one new version of the database.
func (s *Session) execInsert(st *insertStmt, ps *paramSet) (Result, error) {
	src, err := s.resolveSource(fromItem{Name: st.Name, Line: st.Line})
	if err != nil {
		return Result{}, err
	}
	t := src.t
	if t.Catalog || !t.Appendable() {
		return Result{}, errReadOnly(st.Line, s.Database)
	}
	cols := st.Columns
	if cols == nil {
		for i := range t.Columns {
			if !strings.EqualFold(t.Columns[i].Name, t.Identity) && t.SQLType(i) != "timestamp" {
				cols = append(cols, t.Columns[i].Name)
			}
		}
	}
	idx := make([]int, len(cols))
	for k, c := range cols {
		if idx[k] = t.ColumnIndex(c); idx[k] < 0 {
			return Result{}, errInvalidColumn(st.Line, c)
		}
		if strings.EqualFold(c, t.Identity) {
			return Result{}, newError(544, 16, 1, st.Line, "Cannot insert explicit value for identity column in table '%s' when IDENTITY_INSERT is set to OFF.", t.Name)
		}
		if t.SQLType(idx[k]) == "timestamp" {
			return Result{}, newError(273, 16, 1, st.Line, "Cannot insert an explicit value into a timestamp column. Use INSERT with a column list to exclude the timestamp column, or insert a DEFAULT into the timestamp column.")
		}
	}
	sc := &scope{s: s, ps: ps}
	rows := make([][]any, 0, len(st.Rows))
	for _, in := range st.Rows {
		if len(in) != len(cols) {
			if len(in) > len(cols) {
				return Result{}, newError(110, 15, 1, st.Line, "There are more columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
			}
			return Result{}, newError(109, 15, 1, st.Line, "There are fewer columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
		}
		row := make([]any, len(in))
		for k, e := range in {
			if err := sc.bind(e, false); err != nil {
				return Result{}, err
			}
			v, err := sc.eval(e, &env{})
			if err != nil {
				return Result{}, err
			}
			if v, err = coerce(v, &t.Columns[idx[k]].Type, st.Line); err != nil {
				return Result{}, err
			}
			if v == nil && !t.Nullable(idx[k]) {
				return Result{}, newError(515, 16, 2, st.Line, "Cannot insert the value NULL into column '%s', table '%s.%s.%s'; column does not allow nulls. INSERT fails.",
					t.Columns[idx[k]].Name, s.db.Name(), t.Schema, t.Name)
			}
			row[k] = v
		}
		rows = append(rows, row)
	}
	if _, err := s.db.Insert(t.Schema, t.Name, cols, rows); err != nil {
		if errors.Is(err, sampledb.ErrNotAppendable) {
			return Result{}, errReadOnly(st.Line, s.Database)
		}
		return Result{}, &Error{Number: 50000, Class: 16, State: 1, Line: st.Line, Message: err.Error()}
	}
	return Result{RowCount: int64(len(rows)), Done: true, Affected: true}, nil
}

// refresh picks the version of the database a statement reads: the one a
// SNAPSHOT transaction pinned, else the newest.
func (s *Session) refresh() {
	if s.snap != nil {
		s.db = s.snap
		return
	}
	s.db = s.db.Current()
}

// readUserTable is called when a statement reads a user table. Under
// SNAPSHOT isolation it fails with error 3952 when the database does not
// allow snapshot isolation, as SQL Server does, and otherwise pins the
// version the transaction reads until it ends (outside an explicit
// transaction every statement is its own snapshot).
func (s *Session) readUserTable(line int32) error {
	if s.Isolation != "SNAPSHOT" {
		return nil
	}
	if !s.db.SnapshotAllowed() {
		return newError(3952, 16, 1, line, "Snapshot isolation transaction failed accessing database '%s' because snapshot isolation is not allowed in this database. Use ALTER DATABASE to allow snapshot isolation.", s.db.Name())
	}
	if s.TranCount > 0 && s.snap == nil {
		s.snap = s.db
	}
	return nil
}
