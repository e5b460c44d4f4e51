package filter

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of this package.
var (
	// ErrSyntax is wrapped by every Compile error.
	ErrSyntax = errors.New("filter: invalid SQL92 expression")
	// ErrEval is wrapped by evaluation errors (a string that does not
	// convert to the number it is compared with, two strings compared
	// with ">" that are not numbers).
	ErrEval = errors.New("filter: evaluation failed")
)

func syntaxErrorf(pos int, format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrSyntax, pos, fmt.Sprintf(format, args...))
}

func evalErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrEval, fmt.Sprintf(format, args...))
}

// Properties gives an expression the message's properties.
type Properties interface {
	// Property returns the named property's value and whether it is set.
	Property(name string) (string, bool)
}

// Map is Properties over a map.
type Map map[string]string

// Property implements Properties.
func (m Map) Property(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// Result is the three-valued outcome of an evaluation.
type Result uint8

// Results.
const (
	Null Result = iota // unknown: an operand was absent
	False
	True
)

func (r Result) String() string {
	switch r {
	case True:
		return "TRUE"
	case False:
		return "FALSE"
	}
	return "NULL"
}

// Expr is a compiled selector. Immutable; safe for concurrent use.
type Expr struct {
	src  string
	root node
}

// String returns the selector's source text.
func (e *Expr) String() string { return e.src }

// Evaluate evaluates the selector over props. The result is Null when it
// depends on an absent property; err wraps ErrEval when a conversion
// failed (Java throws; the message then does not match).
func (e *Expr) Evaluate(props Properties) (Result, error) {
	v, err := e.root.eval(props)
	if err != nil {
		return Null, err
	}
	switch {
	case v.k == kBool && v.b:
		return True, nil
	case v.k == kBool:
		return False, nil
	}
	return Null, nil
}

// Match reports whether a message with props is selected: the expression
// is TRUE (NULL, FALSE and evaluation errors do not match).
func (e *Expr) Match(props Properties) bool {
	r, err := e.Evaluate(props)
	return err == nil && r == True
}

// node is an expression tree node.
type node interface {
	eval(props Properties) (value, error)
	// boolean reports whether the node is a BooleanExpression in Java's
	// type hierarchy (comparisons, logic, boolean constants and NULL).
	boolean() bool
	String() string
}

// constNode is a literal. TRUE, FALSE and NULL are boolean constants
// (Java's BooleanConstantExpression); strings and numbers are not.
type constNode struct {
	v       value
	boolLit bool
}

func (n *constNode) eval(Properties) (value, error) { return n.v, nil }
func (n *constNode) boolean() bool                  { return n.boolLit }
func (n *constNode) String() string                 { return n.v.String() }

type propNode struct{ name string }

func (n *propNode) eval(props Properties) (value, error) {
	if props == nil {
		return nullValue, nil
	}
	if s, ok := props.Property(n.name); ok {
		return value{k: kString, s: s}, nil
	}
	return nullValue, nil
}
func (n *propNode) boolean() bool  { return false }
func (n *propNode) String() string { return n.name }

// negNode is unary minus: numbers are negated (with Java's wrap-around),
// anything else is NULL.
type negNode struct{ x node }

func (n *negNode) eval(props Properties) (value, error) {
	v, err := n.x.eval(props)
	if err != nil {
		return v, err
	}
	switch v.k {
	case kInt:
		return value{k: kInt, n: int64(-int32(v.n))}, nil
	case kLong:
		return value{k: kLong, n: -v.n}, nil
	case kDouble:
		return value{k: kDouble, f: -v.f}, nil
	}
	return nullValue, nil
}
func (n *negNode) boolean() bool  { return false }
func (n *negNode) String() string { return "(- " + n.x.String() + ")" }

type notNode struct{ x node }

func (n *notNode) eval(props Properties) (value, error) {
	v, err := n.x.eval(props)
	if err != nil || v.k != kBool {
		return nullValue, err
	}
	return boolValue(!v.b), nil
}
func (n *notNode) boolean() bool  { return true }
func (n *notNode) String() string { return "(NOT " + n.x.String() + ")" }

// castNode uses a property where a boolean is expected: NULL when absent,
// else FALSE (property values are strings, never Booleans).
type castNode struct{ x node }

func (n *castNode) eval(props Properties) (value, error) {
	v, err := n.x.eval(props)
	if err != nil || v.k == kNull {
		return nullValue, err
	}
	return boolValue(v.k == kBool && v.b), nil
}
func (n *castNode) boolean() bool  { return true }
func (n *castNode) String() string { return n.x.String() }

type logicNode struct {
	or   bool
	l, r node
}

func (n *logicNode) eval(props Properties) (value, error) {
	// AND stops at FALSE, OR at TRUE; otherwise NULL wins over the other value.
	stop := !n.or
	lv, err := n.l.eval(props)
	if err != nil {
		return nullValue, err
	}
	if lv.k == kBool && lv.b != stop {
		return lv, nil
	}
	rv, err := n.r.eval(props)
	if err != nil {
		return nullValue, err
	}
	if rv.k == kBool && rv.b != stop {
		return rv, nil
	}
	if lv.k != kBool || rv.k != kBool {
		return nullValue, nil
	}
	return boolValue(!n.or), nil
}
func (n *logicNode) boolean() bool { return true }
func (n *logicNode) String() string {
	op := " AND "
	if n.or {
		op = " OR "
	}
	return "(" + n.l.String() + op + n.r.String() + ")"
}

// eqNode is Java's doCreateEqual: one NULL side gives NULL when it is the
// left one and FALSE when it is the right one; two NULLs are equal.
type eqNode struct {
	l, r   node
	isNull bool // "l IS NULL" (r is the NULL constant)
}

func (n *eqNode) eval(props Properties) (value, error) {
	lv, err := n.l.eval(props)
	if err != nil {
		return nullValue, err
	}
	rv, err := n.r.eval(props)
	if err != nil {
		return nullValue, err
	}
	switch {
	case lv.k == kNull && rv.k == kNull:
		return trueValue, nil
	case lv.k == kNull:
		return nullValue, nil
	case rv.k == kNull:
		return falseValue, nil
	case lv.equals(rv):
		return trueValue, nil
	}
	c, err := compareValues(lv, rv)
	if err != nil {
		return nullValue, err
	}
	return boolValue(c == 0), nil
}
func (n *eqNode) boolean() bool { return true }
func (n *eqNode) String() string {
	if n.isNull {
		return "(" + n.l.String() + " IS NULL)"
	}
	return "(" + n.l.String() + " = " + n.r.String() + ")"
}

type cmpOp uint8

const (
	opGT cmpOp = iota
	opGE
	opLT
	opLE
)

var cmpSymbols = [...]string{opGT: ">", opGE: ">=", opLT: "<", opLE: "<="}

// cmpNode is >, >=, <, <=: NULL when either side is; two strings compare
// as doubles.
type cmpNode struct {
	op   cmpOp
	l, r node
}

func (n *cmpNode) eval(props Properties) (value, error) {
	lv, err := n.l.eval(props)
	if err != nil || lv.k == kNull {
		return nullValue, err
	}
	rv, err := n.r.eval(props)
	if err != nil || rv.k == kNull {
		return nullValue, err
	}
	if lv.k == kString && rv.k == kString {
		lf, lok := parseJavaDouble(lv.s)
		rf, rok := parseJavaDouble(rv.s)
		if !lok || !rok {
			return nullValue, evalErrorf("cannot compare strings %s and %s with %s", lv, rv, cmpSymbols[n.op])
		}
		lv, rv = value{k: kDouble, f: lf}, value{k: kDouble, f: rf}
	}
	c, err := compareValues(lv, rv)
	if err != nil {
		return nullValue, err
	}
	switch n.op {
	case opGT:
		return boolValue(c > 0), nil
	case opGE:
		return boolValue(c >= 0), nil
	case opLT:
		return boolValue(c < 0), nil
	}
	return boolValue(c <= 0), nil
}
func (n *cmpNode) boolean() bool { return true }
func (n *cmpNode) String() string {
	return "(" + n.l.String() + " " + cmpSymbols[n.op] + " " + n.r.String() + ")"
}

// inNode is [NOT] IN: NULL unless the property holds a string.
type inNode struct {
	x    *propNode
	list []string
	set  map[string]struct{}
	not  bool
}

func (n *inNode) eval(props Properties) (value, error) {
	v, err := n.x.eval(props)
	if err != nil || v.k != kString {
		return nullValue, err
	}
	_, in := n.set[v.s]
	return boolValue(in != n.not), nil
}
func (n *inNode) boolean() bool { return true }
func (n *inNode) String() string {
	items := make([]string, len(n.list))
	for i, s := range n.list {
		items[i] = quote(s)
	}
	op := " IN ("
	if n.not {
		op = " NOT IN ("
	}
	return n.x.String() + op + strings.Join(items, ", ") + ")"
}

type strOp uint8

const (
	opContains strOp = iota
	opStartsWith
	opEndsWith
)

var strOpNames = [...]string{opContains: "CONTAINS", opStartsWith: "STARTSWITH", opEndsWith: "ENDSWITH"}

// strNode is [NOT] CONTAINS/STARTSWITH/ENDSWITH: FALSE (not NULL) for a
// non-string operand or an empty search string, in both forms.
type strNode struct {
	op     strOp
	not    bool
	x      node
	search string
}

func (n *strNode) eval(props Properties) (value, error) {
	if n.search == "" {
		return falseValue, nil
	}
	v, err := n.x.eval(props)
	if err != nil {
		return nullValue, err
	}
	if v.k != kString {
		return falseValue, nil
	}
	var hit bool
	switch n.op {
	case opContains:
		hit = strings.Contains(v.s, n.search)
	case opStartsWith:
		hit = strings.HasPrefix(v.s, n.search)
	default:
		hit = strings.HasSuffix(v.s, n.search)
	}
	return boolValue(hit != n.not), nil
}
func (n *strNode) boolean() bool { return true }
func (n *strNode) String() string {
	op := " "
	if n.not {
		op = " NOT "
	}
	return "(" + n.x.String() + op + strOpNames[n.op] + " " + quote(n.search) + ")"
}
