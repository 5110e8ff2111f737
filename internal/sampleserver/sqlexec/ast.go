package sqlexec

import "github.com/tdsextract/tdsextract/decode"

// The AST of the supported subset. Binding (binder.go) resolves names in
// place, so an AST is used for one execution only (Exec parses every time;
// parsing is cheap next to any result).

type stmt interface{ line() int32 }

type selectStmt struct {
	Line     int32
	Distinct bool
	Top      expr // nil without TOP
	Percent  bool
	Items    []selectItem
	From     []fromItem // the first has Join == joinNone
	Where    expr
	GroupBy  []expr
	Having   expr
	OrderBy  []orderItem
	Offset   expr // OFFSET n ROWS (nil when absent)
	Fetch    expr // FETCH NEXT m ROWS ONLY (nil when absent)
}

type selectItem struct {
	Star     bool     // * or qual.*
	StarQual []string // qualifier of qual.*
	Expr     expr
	Alias    string
	HasAlias bool
}

type joinKind uint8

const (
	joinNone joinKind = iota
	joinInner
	joinLeft
	joinCross
)

type fromItem struct {
	Name   []string // multi-part name, last = object
	Alias  string
	Sample *tableSample // TABLESAMPLE (tablesample.go), nil without
	Join   joinKind
	On     expr
	Line   int32
}

type orderItem struct {
	Expr expr
	Desc bool
}

type setStmt struct {
	Line    int32
	Options []string // upper case option names
	On      bool     // ON/OFF for boolean options
	Value   token    // for valued options (TEXTSIZE n, DATEFORMAT x, ...)
}

type useStmt struct {
	Line int32
	DB   string
}

type execStmt struct {
	Line int32
	Proc []string
	Args []execArg
}

type execArg struct {
	Name   string // without @, empty for positional
	Value  expr
	Output bool
}

// unsupportedStmt is a statement SQL Server would run but the sample
// database cannot (writes, DDL, control flow).
type unsupportedStmt struct {
	Line int32
	Verb string
}

// txnStmt is BEGIN TRAN / COMMIT / ROLLBACK (accepted on a read-only db).
type txnStmt struct {
	Line int32
	Verb string // BEGIN, COMMIT, ROLLBACK
}

func (s *selectStmt) line() int32      { return s.Line }
func (s *setStmt) line() int32         { return s.Line }
func (s *useStmt) line() int32         { return s.Line }
func (s *execStmt) line() int32        { return s.Line }
func (s *unsupportedStmt) line() int32 { return s.Line }
func (s *txnStmt) line() int32         { return s.Line }

// Expressions.

type expr interface{}

type litKind uint8

const (
	litNull litKind = iota
	litInt
	litDecimal
	litFloat
	litString
	litNString
	litBinary
)

type litExpr struct {
	Kind litKind
	Text string // source text of numbers; content of strings
	V    any    // generic value (int64, decode.Decimal, float64, string, []byte, nil)
}

type paramExpr struct {
	Name string // without @, as written
	Line int32
}

type sysVarExpr struct {
	Name string // without @@, upper case
	Line int32
}

type colExpr struct {
	Parts []string
	Line  int32
	// bound
	src, col int
	bound    bool
}

type funcExpr struct {
	Name     string // upper case
	Args     []expr
	Star     bool // COUNT(*)
	Distinct bool
	Line     int32
	Recv     *colExpr // method call receiver ([col].STAsBinary())
	Method   string   // method name as written
	aggIndex int      // bound: index of the aggregate slot
}

type typeSpec struct {
	Name string // lower case
	Args []int64
	Max  bool
}

type castExpr struct {
	E       expr
	T       typeSpec
	Style   expr // CONVERT style, nil if none
	Convert bool
	Line    int32

	// Set by bind (every evaluated expression is bound first), so that eval
	// does not derive them again for every row.
	target, srcT decode.TypeInfo
}

type whenClause struct{ Cond, Then expr }

type caseExpr struct {
	Operand expr // simple CASE operand, nil for searched CASE
	Whens   []whenClause
	Else    expr
}

type unaryExpr struct {
	Op string // "-", "+", "~", "NOT"
	E  expr
}

type binExpr struct {
	Op   string // arithmetic "+ - * / % & | ^", comparison "= <> < <= > >=", "AND", "OR"
	L, R expr
	Line int32
}

type isNullExpr struct {
	E   expr
	Not bool
}

type inExpr struct {
	E    expr
	List []expr
	Not  bool
}

type betweenExpr struct {
	E, Lo, Hi expr
	Not       bool
}

type likeExpr struct {
	E, Pat expr
	Escape expr
	Not    bool
}
