package sqlexec

import (
	"crypto/rand"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
)

// Server identity reported by @@VERSION and SERVERPROPERTY. The version is
// the SQL Server 2022 RTM build the TDS server announces in LOGINACK; the
// text says what the server really is.
const (
	ProductVersion = "16.0.1000.6"
	VersionText    = "Microsoft SQL Server 2022 (RTM) - 16.0.1000.6 (X64) \n\ttdsextract sample server: a TDS test double serving generated data, not Microsoft software\n\tDeveloper Edition (64-bit) on Linux"
	ServerName     = "tdsextract"
)

type funcSpec struct{ min, max int }

var scalarFuncs = map[string]funcSpec{
	"DB_NAME": {0, 1}, "DB_ID": {0, 1}, "SCHEMA_NAME": {0, 1}, "SCHEMA_ID": {0, 1},
	"OBJECT_ID": {1, 2}, "OBJECT_NAME": {1, 2}, "OBJECT_SCHEMA_NAME": {1, 2}, "COLUMNPROPERTY": {3, 3},
	"OBJECTPROPERTY": {2, 2}, "COL_NAME": {2, 2}, "COL_LENGTH": {2, 2}, "SERVERPROPERTY": {1, 1},
	"DATABASEPROPERTYEX": {2, 2},
	"LEN":                {1, 1}, "DATALENGTH": {1, 1}, "SUBSTRING": {3, 3}, "LEFT": {2, 2}, "RIGHT": {2, 2},
	"UPPER": {1, 1}, "LOWER": {1, 1}, "LTRIM": {1, 1}, "RTRIM": {1, 1}, "TRIM": {1, 1},
	"REPLACE": {3, 3}, "CHARINDEX": {2, 3}, "ISNULL": {2, 2}, "COALESCE": {2, 64}, "NULLIF": {2, 2},
	"CONCAT": {2, 64}, "ABS": {1, 1}, "ISNUMERIC": {1, 1}, "QUOTENAME": {1, 2},
	"GETDATE": {0, 0}, "GETUTCDATE": {0, 0}, "SYSDATETIME": {0, 0}, "SYSUTCDATETIME": {0, 0},
	"SYSDATETIMEOFFSET": {0, 0}, "CURRENT_TIMESTAMP": {0, 0}, "NEWID": {0, 0},
	"SUSER_SNAME": {0, 1}, "SUSER_NAME": {0, 1}, "USER_NAME": {0, 1}, "CURRENT_USER": {0, 0},
	"SESSION_USER": {0, 0}, "SYSTEM_USER": {0, 0}, "USER": {0, 0}, "HOST_NAME": {0, 0}, "APP_NAME": {0, 0},
	"IDENT_SEED": {1, 1}, "IDENT_INCR": {1, 1}, "IDENT_CURRENT": {1, 1}, "SESSIONPROPERTY": {1, 1},
	"IIF": {3, 3}, "MIN_ACTIVE_ROWVERSION": {0, 0},
}

func sysVarType(name string) (decode.TypeInfo, bool) {
	switch name {
	case "VERSION":
		return tiNVarChar(300), true
	case "SPID", "LANGID":
		return tiOf(decode.KindSmallInt), true
	case "SERVERNAME", "SERVICENAME", "LANGUAGE":
		return tiNVarChar(128), true
	case "TRANCOUNT", "ROWCOUNT", "ERROR", "TEXTSIZE", "OPTIONS", "LOCK_TIMEOUT", "MICROSOFTVERSION",
		"PROCID", "NESTLEVEL", "FETCH_STATUS", "MAX_CONNECTIONS", "CURSOR_ROWS":
		return tiOf(decode.KindInt), true
	case "MAX_PRECISION", "DATEFIRST":
		return tiOf(decode.KindTinyInt), true
	case "IDENTITY":
		return tiDecimal(38, 0), true
	case "DBTS":
		return tiVarBinary(8), true
	}
	return decode.TypeInfo{}, false
}

func (sc *scope) sysVar(name string) any {
	s := sc.s
	switch name {
	case "VERSION":
		return VersionText
	case "SPID":
		return int64(s.SPID)
	case "LANGID":
		return int64(0)
	case "SERVERNAME":
		return ServerName
	case "SERVICENAME":
		return "MSSQLSERVER"
	case "LANGUAGE":
		return s.Language
	case "TRANCOUNT":
		return int64(s.TranCount)
	case "TEXTSIZE":
		if s.TextSize == 0 {
			return int64(2147483647)
		}
		return int64(s.TextSize)
	case "OPTIONS":
		return int64(5176) // ANSI_WARNINGS, ANSI_PADDING, ANSI_NULLS, ARITHABORT, QUOTED_IDENTIFIER, ... as ODBC clients set
	case "LOCK_TIMEOUT":
		return int64(-1)
	case "MICROSOFTVERSION":
		return int64(16<<24 | 0<<16 | 1000)
	case "MAX_PRECISION":
		return int64(38)
	case "DATEFIRST":
		return int64(7)
	case "MAX_CONNECTIONS":
		return int64(32767)
	case "IDENTITY":
		return nil
	case "DBTS":
		return sampledb.RowVersion(s.db.DBTS())
	}
	return int64(0)
}

func (sc *scope) funcType(x *funcExpr) (decode.TypeInfo, bool) {
	if x.Recv != nil {
		switch x.Name {
		case "STASBINARY", "STASBINARYZM", "SERIALIZE":
			return tiVarBinary(-1), true
		case "STASTEXT", "TOSTRING":
			if x.Name == "TOSTRING" {
				t := sc.srcs[x.Recv.src].t.Columns[x.Recv.col].Type
				if t.Kind() == decode.KindHierarchyID {
					return tiNVarChar(4000), true
				}
			}
			return tiNVarChar(1 << 20), true
		case "STSRID", "GETLEVEL", "STNUMPOINTS":
			return tiOf(decode.KindInt), true
		}
	}
	argType := func(i int) (decode.TypeInfo, bool) {
		if i < len(x.Args) {
			return sc.typeOf(x.Args[i])
		}
		return tiOf(decode.KindInt), true
	}
	switch x.Name {
	case "COUNT":
		return tiOf(decode.KindInt), false
	case "COUNT_BIG":
		return tiOf(decode.KindBigInt), false
	case "MIN", "MAX":
		t, _ := argType(0)
		return decode.NullableForm(t), true
	case "SUM", "AVG":
		t, _ := argType(0)
		switch t.Kind().Class() {
		case decode.ClassDecimal:
			s := t.Scale
			if x.Name == "AVG" && s < 6 {
				s = 6
			}
			return tiDecimal(38, s), true
		case decode.ClassMoney:
			return tiOf(decode.KindMoney), true
		case decode.ClassFloat:
			return tiOf(decode.KindFloat), true
		}
		if t.Kind() == decode.KindBigInt {
			return tiOf(decode.KindBigInt), true
		}
		return tiOf(decode.KindInt), true
	case "DB_NAME", "SCHEMA_NAME", "OBJECT_NAME", "OBJECT_SCHEMA_NAME", "COL_NAME", "SUSER_SNAME", "SUSER_NAME",
		"USER_NAME", "CURRENT_USER", "SESSION_USER", "SYSTEM_USER", "USER", "HOST_NAME", "APP_NAME":
		return tiNVarChar(128), true
	case "QUOTENAME":
		return tiNVarChar(258), true
	case "DB_ID":
		return tiOf(decode.KindSmallInt), true
	case "SCHEMA_ID", "OBJECT_ID", "COLUMNPROPERTY", "OBJECTPROPERTY", "LEN", "DATALENGTH", "CHARINDEX", "ISNUMERIC":
		if x.Name == "COL_LENGTH" {
			return tiOf(decode.KindSmallInt), true
		}
		return tiOf(decode.KindInt), true
	case "COL_LENGTH":
		return tiOf(decode.KindSmallInt), true
	case "SERVERPROPERTY", "DATABASEPROPERTYEX", "SESSIONPROPERTY":
		return tiOf(decode.KindVariant), true
	case "SUBSTRING", "LEFT", "RIGHT", "UPPER", "LOWER", "LTRIM", "RTRIM", "TRIM":
		t, n := argType(0)
		k := t.Kind()
		if x.Name == "SUBSTRING" && (k == decode.KindBinary || k == decode.KindVarBinary || k == decode.KindImage) {
			return tiVarBinary(int(t.Size)), n
		}
		// The result is variable-length text of the argument's length.
		switch {
		case !k.IsText():
			t = tiVarChar(30)
		case k == decode.KindChar:
			t.Type = decode.TypeBigVarChar
		case k == decode.KindNChar:
			t.Type = decode.TypeNVarChar
		case k == decode.KindText:
			t = tiVarChar(8000)
		case k == decode.KindNText || k == decode.KindXML || k == decode.KindJSON:
			t = tiNVarChar(4000)
		}
		return t, n
	case "REPLACE", "CONCAT":
		unicode := false
		for i := range x.Args {
			t, _ := argType(i)
			if isUnicodeType(&t) {
				unicode = true
			}
		}
		if unicode {
			return tiNVarChar(4000), true
		}
		return tiVarChar(8000), true
	case "ISNULL":
		t, _ := argType(0)
		_, n2 := argType(1)
		return decode.NullableForm(t), n2
	case "COALESCE", "IIF":
		var ts []decode.TypeInfo
		start := 0
		if x.Name == "IIF" {
			start = 1
		}
		for i := start; i < len(x.Args); i++ {
			if !isNullLit(x.Args[i]) {
				t, _ := argType(i)
				ts = append(ts, t)
			}
		}
		return decode.NullableForm(unifyTypes(ts)), true
	case "NULLIF":
		t, _ := argType(0)
		return decode.NullableForm(t), true
	case "ABS":
		t, n := argType(0)
		return decode.NullableForm(t), n
	case "GETDATE", "GETUTCDATE", "CURRENT_TIMESTAMP":
		return tiOf(decode.KindDateTime), false
	case "SYSDATETIME", "SYSUTCDATETIME":
		return tiOf(decode.KindDateTime2), false
	case "SYSDATETIMEOFFSET":
		return tiOf(decode.KindDateTimeOffset), false
	case "NEWID":
		return tiOf(decode.KindUniqueIdentifier), false
	case "MIN_ACTIVE_ROWVERSION":
		// binary(8), NOT NULL: the lowest rowversion an open transaction
		// may still commit; with no open writer, @@DBTS + 1.
		return decode.TypeInfo{Type: decode.TypeBigBinary, Size: 8}, false
	case "IDENT_SEED", "IDENT_INCR", "IDENT_CURRENT":
		return tiDecimal(38, 0), true
	}
	return tiOf(decode.KindInt), true
}

// tableByName resolves an object name as OBJECT_ID does ("t", "s.t",
// "db.s.t", brackets allowed).
func (sc *scope) tableByName(name string) *sampledb.Table {
	toks, err := lex(name)
	if err != nil {
		return nil
	}
	var parts []string
	for _, t := range toks {
		switch t.Kind {
		case tkIdent, tkQIdent:
			parts = append(parts, t.Text)
		case tkOp:
			if t.Text != "." {
				return nil
			}
		case tkEOF:
		default:
			return nil
		}
	}
	if len(parts) == 0 || len(parts) > 3 {
		return nil
	}
	if len(parts) == 3 && !strings.EqualFold(parts[0], sc.s.db.Name()) {
		return nil
	}
	schema := ""
	if len(parts) >= 2 {
		schema = parts[len(parts)-2]
	}
	t, _ := sc.s.lookupTable(schema, parts[len(parts)-1])
	return t
}

func (sc *scope) tableByID(id int64) *sampledb.Table {
	for _, t := range sc.s.db.Tables() {
		if int64(t.ObjectID) == id {
			return t
		}
	}
	return nil
}

// schemaIDs follows SQL Server: dbo 1, guest 2, INFORMATION_SCHEMA 3, sys 4,
// user schemas from 5 in order of first appearance (sampledb's sys.schemas
// is built the same way).
func (sc *scope) schemaIDs() map[string]int64 {
	m := map[string]int64{"dbo": 1, "guest": 2, "information_schema": 3, "sys": 4}
	if t, ok := sc.s.catalog("sys", "schemas"); ok {
		idc, nc := t.ColumnIndex("schema_id"), t.ColumnIndex("name")
		if idc >= 0 && nc >= 0 {
			var row []any
			for i := int64(0); i < t.Rows; i++ {
				row = t.Row(i, row)
				id, ok1 := row[idc].(int64)
				n, ok2 := row[nc].(string)
				if ok1 && ok2 {
					m[strings.ToLower(n)] = id
				}
			}
			return m
		}
	}
	next := int64(5)
	for _, t := range sc.s.db.Tables() {
		if _, ok := m[strings.ToLower(t.Schema)]; !ok {
			m[strings.ToLower(t.Schema)] = next
			next++
		}
	}
	return m
}

func (sc *scope) schemaName(id int64) any {
	for n, v := range sc.schemaIDs() {
		if v == id {
			switch n {
			case "information_schema":
				return "INFORMATION_SCHEMA"
			}
			for _, t := range sc.s.db.Tables() {
				if strings.EqualFold(t.Schema, n) {
					return t.Schema
				}
			}
			return n
		}
	}
	return nil
}

func (sc *scope) evalFunc(x *funcExpr, e *env) (any, error) {
	// ISNULL/COALESCE/IIF evaluate lazily; the rest evaluate all arguments.
	switch x.Name {
	case "ISNULL", "COALESCE":
		for _, a := range x.Args {
			v, err := sc.eval(a, e)
			if err != nil {
				return nil, err
			}
			if v != nil {
				t, _ := sc.funcType(x)
				return coerce(v, &t, x.Line)
			}
		}
		return nil, nil
	case "IIF":
		c, err := sc.eval(x.Args[0], e)
		if err != nil {
			return nil, err
		}
		if c == true {
			return sc.eval(x.Args[1], e)
		}
		return sc.eval(x.Args[2], e)
	}
	args := make([]any, len(x.Args))
	for i, a := range x.Args {
		v, err := sc.eval(a, e)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	str := func(i int) (string, bool) {
		if i >= len(args) || args[i] == nil {
			return "", false
		}
		return valueText(args[i], nil), true
	}
	num := func(i int) (int64, bool) {
		if i >= len(args) || args[i] == nil {
			return 0, false
		}
		switch v := args[i].(type) {
		case int64:
			return v, true
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
		if f, ok := asFloat(args[i]); ok {
			return int64(f), true
		}
		return 0, false
	}
	switch x.Name {
	case "DB_NAME":
		if len(args) == 0 {
			return sc.s.Database, nil
		}
		id, ok := num(0)
		if !ok {
			return nil, nil
		}
		switch id {
		case 1:
			return "master", nil
		case 2:
			return "tempdb", nil
		case 3:
			return "model", nil
		case 4:
			return "msdb", nil
		case 5:
			return sc.s.db.Name(), nil
		}
		return nil, nil
	case "DB_ID":
		name := sc.s.Database
		if len(args) > 0 {
			n, ok := str(0)
			if !ok {
				return nil, nil
			}
			name = n
		}
		for i, d := range append(append([]string{}, knownDatabases...), sc.s.db.Name()) {
			if strings.EqualFold(d, name) {
				return int64(i + 1), nil
			}
		}
		return nil, nil
	case "SCHEMA_NAME":
		if len(args) == 0 {
			return "dbo", nil
		}
		id, ok := num(0)
		if !ok {
			return nil, nil
		}
		return sc.schemaName(id), nil
	case "SCHEMA_ID":
		if len(args) == 0 {
			return int64(1), nil
		}
		n, ok := str(0)
		if !ok {
			return nil, nil
		}
		if id, ok := sc.schemaIDs()[strings.ToLower(n)]; ok {
			return id, nil
		}
		return nil, nil
	case "OBJECT_ID":
		n, ok := str(0)
		if !ok {
			return nil, nil
		}
		if t := sc.tableByName(n); t != nil {
			if len(args) == 2 {
				if ty, _ := str(1); strings.TrimSpace(strings.ToUpper(ty)) != "U" {
					return nil, nil
				}
			}
			return int64(t.ObjectID), nil
		}
		return nil, nil
	case "OBJECT_NAME", "OBJECT_SCHEMA_NAME":
		id, ok := num(0)
		if !ok {
			return nil, nil
		}
		t := sc.tableByID(id)
		if t == nil {
			return nil, nil
		}
		if x.Name == "OBJECT_NAME" {
			return t.Name, nil
		}
		return t.Schema, nil
	case "COLUMNPROPERTY":
		id, ok := num(0)
		col, ok2 := str(1)
		prop, ok3 := str(2)
		if !ok || !ok2 || !ok3 {
			return nil, nil
		}
		t := sc.tableByID(id)
		if t == nil {
			return nil, nil
		}
		ci := t.ColumnIndex(col)
		if ci < 0 {
			return nil, nil
		}
		c := &t.Columns[ci]
		switch strings.ToLower(prop) {
		case "isidentity":
			return b2i(strings.EqualFold(t.Identity, c.Name)), nil
		case "allowsnull":
			return b2i(c.Nullable()), nil
		case "columnid":
			return int64(ci + 1), nil
		case "iscomputed", "isrowguidcol", "isfulltextindexed", "ishidden", "isxmlindexable":
			return int64(0), nil
		case "precision":
			if c.Type.Precision > 0 {
				return int64(c.Type.Precision), nil
			}
			return int64(charLen(&c.Type)), nil
		case "scale":
			return int64(c.Type.Scale), nil
		}
		return nil, nil
	case "OBJECTPROPERTY":
		id, ok := num(0)
		prop, ok2 := str(1)
		if !ok || !ok2 {
			return nil, nil
		}
		t := sc.tableByID(id)
		if t == nil {
			return nil, nil
		}
		switch strings.ToLower(prop) {
		case "isusertable", "istable":
			return int64(1), nil
		case "ismsshipped", "isview", "isprocedure", "issystemtable":
			return int64(0), nil
		case "tablehasidentity":
			return b2i(t.Identity != ""), nil
		case "tablehasprimarykey":
			return b2i(len(t.Key) > 0), nil
		}
		return nil, nil
	case "COL_NAME":
		id, ok := num(0)
		ci, ok2 := num(1)
		if !ok || !ok2 {
			return nil, nil
		}
		t := sc.tableByID(id)
		if t == nil || ci < 1 || ci > int64(len(t.Columns)) {
			return nil, nil
		}
		return t.Columns[ci-1].Name, nil
	case "COL_LENGTH":
		tn, ok := str(0)
		cn, ok2 := str(1)
		if !ok || !ok2 {
			return nil, nil
		}
		t := sc.tableByName(tn)
		if t == nil {
			return nil, nil
		}
		ci := t.ColumnIndex(cn)
		if ci < 0 {
			return nil, nil
		}
		ti := &t.Columns[ci].Type
		if ti.Size == decode.MaxVarLen {
			return int64(-1), nil
		}
		return int64(ti.Size), nil
	case "SERVERPROPERTY":
		p, ok := str(0)
		if !ok {
			return nil, nil
		}
		return sc.serverProperty(p), nil
	case "DATABASEPROPERTYEX":
		p, _ := str(1)
		switch strings.ToLower(p) {
		case "collation":
			return decode.Variant{Type: tiNVarChar(128), Value: "SQL_Latin1_General_CP1_CI_AS"}, nil
		case "status":
			return decode.Variant{Type: tiNVarChar(128), Value: "ONLINE"}, nil
		case "updateability":
			return decode.Variant{Type: tiNVarChar(128), Value: "READ_ONLY"}, nil
		}
		return nil, nil
	case "SESSIONPROPERTY":
		p, _ := str(0)
		if on, ok := sc.s.Options[strings.ToUpper(p)]; ok {
			return decode.Variant{Type: tiOf(decode.KindInt), Value: b2i(on)}, nil
		}
		return nil, nil
	case "LEN":
		s, ok := str(0)
		if !ok {
			return nil, nil
		}
		return int64(utf8.RuneCountInString(strings.TrimRight(s, " "))), nil
	case "DATALENGTH":
		if args[0] == nil {
			return nil, nil
		}
		t, _ := sc.typeOf(x.Args[0])
		switch v := args[0].(type) {
		case string:
			if isUnicodeType(&t) {
				return int64(2 * decode.UTF16Len(v)), nil
			}
			return int64(len(v)), nil
		case []byte:
			return int64(len(v)), nil
		}
		return int64(len(valueText(args[0], &t))), nil
	case "SUBSTRING":
		if args[0] == nil || args[1] == nil || args[2] == nil {
			return nil, nil
		}
		start, _ := num(1)
		n, _ := num(2)
		if n < 0 {
			return nil, newError(537, 16, 3, x.Line, "Invalid length parameter passed to the LEFT or SUBSTRING function.")
		}
		if b, ok := args[0].([]byte); ok {
			lo, hi := clampRange(start, n, int64(len(b)))
			return b[lo:hi], nil
		}
		r := []rune(valueText(args[0], nil))
		lo, hi := clampRange(start, n, int64(len(r)))
		return string(r[lo:hi]), nil
	case "LEFT", "RIGHT":
		s, ok := str(0)
		n, ok2 := num(1)
		if !ok || !ok2 {
			return nil, nil
		}
		if n < 0 {
			return nil, newError(536, 16, 1, x.Line, "Invalid length parameter passed to the %s function.", strings.ToLower(x.Name))
		}
		r := []rune(s)
		if n > int64(len(r)) {
			n = int64(len(r))
		}
		if x.Name == "LEFT" {
			return string(r[:n]), nil
		}
		return string(r[int64(len(r))-n:]), nil
	case "UPPER", "LOWER", "LTRIM", "RTRIM", "TRIM":
		s, ok := str(0)
		if !ok {
			return nil, nil
		}
		switch x.Name {
		case "UPPER":
			return strings.ToUpper(s), nil
		case "LOWER":
			return strings.ToLower(s), nil
		case "LTRIM":
			return strings.TrimLeft(s, " "), nil
		case "RTRIM":
			return strings.TrimRight(s, " "), nil
		}
		return strings.Trim(s, " "), nil
	case "REPLACE":
		s, ok := str(0)
		from, ok2 := str(1)
		to, ok3 := str(2)
		if !ok || !ok2 || !ok3 {
			return nil, nil
		}
		if from == "" {
			return s, nil
		}
		return replaceFold(s, from, to), nil
	case "CHARINDEX":
		sub, ok := str(0)
		s, ok2 := str(1)
		if !ok || !ok2 {
			return nil, nil
		}
		start := int64(1)
		if len(args) == 3 {
			if n, ok := num(2); ok && n > 1 {
				start = n
			}
		}
		r := []rune(strings.ToLower(s))
		if start > int64(len(r)) {
			return int64(0), nil
		}
		idx := strings.Index(string(r[start-1:]), strings.ToLower(sub))
		if idx < 0 {
			return int64(0), nil
		}
		return start + int64(utf8.RuneCountInString(string(r[start-1:])[:idx])), nil
	case "NULLIF":
		if args[0] == nil {
			return nil, nil
		}
		if args[1] != nil {
			if c, ok := compare(args[0], args[1]); ok && c == 0 {
				return nil, nil
			}
		}
		return args[0], nil
	case "CONCAT":
		var b strings.Builder
		for i := range args {
			if s, ok := str(i); ok {
				b.WriteString(s)
			}
		}
		return b.String(), nil
	case "ABS":
		if args[0] == nil {
			return nil, nil
		}
		if c, ok := compare(args[0], int64(0)); ok && c < 0 {
			return negate(args[0])
		}
		return args[0], nil
	case "ISNUMERIC":
		s, ok := str(0)
		if !ok {
			return int64(0), nil
		}
		_, isNum := stringToNumber(s)
		return b2i(isNum), nil
	case "QUOTENAME":
		s, ok := str(0)
		if !ok {
			return nil, nil
		}
		q := "["
		if len(args) == 2 {
			if c, ok := str(1); ok && c != "" {
				q = c[:1]
			}
		}
		switch q {
		case "[", "]":
			return "[" + strings.ReplaceAll(s, "]", "]]") + "]", nil
		case "\"":
			return "\"" + strings.ReplaceAll(s, "\"", "\"\"") + "\"", nil
		case "'":
			return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
		}
		return nil, nil
	case "GETDATE", "CURRENT_TIMESTAMP":
		dt := decode.DateTimeFromTime(time.Now())
		dt.Ticks = dt.Ticks / 33333 * 33333 // datetime resolution (1/300 s)
		return dt, nil
	case "GETUTCDATE":
		dt := decode.DateTimeFromTime(time.Now().UTC())
		dt.Ticks = dt.Ticks / 33333 * 33333
		return dt, nil
	case "SYSDATETIME":
		return decode.DateTimeFromTime(time.Now()), nil
	case "SYSUTCDATETIME":
		return decode.DateTimeFromTime(time.Now().UTC()), nil
	case "SYSDATETIMEOFFSET":
		return decode.DateTimeOffsetFromTime(time.Now()), nil
	case "MIN_ACTIVE_ROWVERSION":
		return sampledb.RowVersion(sc.s.db.DBTS() + 1), nil
	case "NEWID":
		var g decode.GUID
		_, _ = rand.Read(g[:])
		g[6] = g[6]&0x0F | 0x40
		g[8] = g[8]&0x3F | 0x80
		return g, nil
	case "SUSER_SNAME", "SUSER_NAME", "SYSTEM_USER":
		return "sa", nil
	case "USER_NAME", "CURRENT_USER", "SESSION_USER", "USER":
		return "dbo", nil
	case "HOST_NAME":
		return "", nil
	case "APP_NAME":
		return "", nil
	case "IDENT_SEED", "IDENT_INCR", "IDENT_CURRENT":
		n, ok := str(0)
		if !ok {
			return nil, nil
		}
		t := sc.tableByName(n)
		if t == nil || t.Identity == "" {
			return nil, nil
		}
		seed, incr, last, used := t.IdentityValues()
		v := seed
		switch {
		case x.Name == "IDENT_INCR":
			v = incr
		case x.Name == "IDENT_CURRENT" && used:
			v = last
		}
		d, _ := bigToDecimal(bigInt(v), 38, 0)
		return d, nil
	}
	return nil, errUnknownFunction(x.Line, x.Name)
}

func clampRange(start, n, length int64) (int64, int64) {
	lo := start - 1
	hi := lo + n
	if lo < 0 {
		lo = 0
	}
	if hi > length {
		hi = length
	}
	if hi < lo {
		hi = lo
	}
	if lo > length {
		lo, hi = length, length
	}
	return lo, hi
}

// replaceFold replaces every case-insensitive occurrence of from.
func replaceFold(s, from, to string) string {
	ls, lf := strings.ToLower(s), strings.ToLower(from)
	if len(ls) != len(s) || len(lf) != len(from) {
		return strings.ReplaceAll(s, from, to)
	}
	var b strings.Builder
	for {
		i := strings.Index(ls, lf)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(to)
		s, ls = s[i+len(from):], ls[i+len(from):]
	}
}

func (sc *scope) serverProperty(p string) any {
	str := func(s string) any { return decode.Variant{Type: tiNVarChar(128), Value: s} }
	num := func(n int64) any { return decode.Variant{Type: decode.TypeInfo{Type: decode.TypeInt4}, Value: n} }
	switch strings.ToLower(p) {
	case "productversion":
		return str(ProductVersion)
	case "productmajorversion":
		return str("16")
	case "productminorversion":
		return str("0")
	case "productbuild":
		return str("1000")
	case "productlevel":
		return str("RTM")
	case "edition":
		return str("Developer Edition (64-bit)")
	case "engineedition":
		return num(3)
	case "editionid":
		return decode.Variant{Type: decode.TypeInfo{Type: decode.TypeInt8}, Value: int64(-2117995310)}
	case "servername", "machinename", "computernamephysicalnetbios":
		return str(ServerName)
	case "instancename":
		return nil
	case "collation":
		return str("SQL_Latin1_General_CP1_CI_AS")
	case "isintegratedsecurityonly", "isclustered", "ishadrenabled", "isfulltextinstalled", "issingleuser":
		return num(0)
	case "processid":
		return num(1)
	}
	return nil
}
