package filter

import (
	"math"
	"strconv"
	"strings"
)

// maxDepth bounds nesting (parentheses and unary operators), so a hostile
// expression cannot exhaust the stack.
const maxDepth = 1000

// Compile parses a SQL92 selector with Java's grammar and its compile-time
// checks (see the package doc). Errors wrap ErrSyntax.
func Compile(src string) (*Expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, syntaxErrorf(t.pos, "unexpected %s", t)
	}
	root, err := asBoolean(n, 0)
	if err != nil {
		return nil, err
	}
	return &Expr{src: src, root: root}, nil
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

// peek2 is the token after the next.
func (p *parser) peek2() token {
	if p.i+1 < len(p.toks) {
		return p.toks[p.i+1]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func (p *parser) expectOp(op string) error {
	if t := p.next(); t.kind != tOp || t.text != op {
		return syntaxErrorf(t.pos, "expected %q, found %s", op, t)
	}
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return syntaxErrorf(p.peek().pos, "expression nested deeper than %d", maxDepth)
	}
	return nil
}

// asBoolean is Java's asBooleanExpression: a boolean node as is, a
// property cast to boolean, anything else an error.
func asBoolean(n node, pos int) (node, error) {
	if n.boolean() {
		return n, nil
	}
	if _, ok := n.(*propNode); ok {
		return &castNode{x: n}, nil
	}
	return nil, syntaxErrorf(pos, "expression will not result in a boolean value: %s", n)
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tOr {
		t := p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		if l, err = logic(true, l, r, t.pos); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (p *parser) and() (node, error) {
	l, err := p.equality()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tAnd {
		t := p.next()
		r, err := p.equality()
		if err != nil {
			return nil, err
		}
		if l, err = logic(false, l, r, t.pos); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func logic(or bool, l, r node, pos int) (node, error) {
	lb, err := asBoolean(l, pos)
	if err != nil {
		return nil, err
	}
	rb, err := asBoolean(r, pos)
	if err != nil {
		return nil, err
	}
	return &logicNode{or: or, l: lb, r: rb}, nil
}

func (p *parser) equality() (node, error) {
	l, err := p.comparison()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tOp && (t.text == "=" || t.text == "<>"):
			p.next()
			r, err := p.comparison()
			if err != nil {
				return nil, err
			}
			if err := checkEqualOperands(l, r, t.pos); err != nil {
				return nil, err
			}
			l = &eqNode{l: l, r: r}
			if t.text == "<>" {
				l = &notNode{x: l}
			}
		case t.kind == tIs:
			p.next()
			not := false
			if p.peek().kind == tNot {
				p.next()
				not = true
			}
			if nt := p.next(); nt.kind != tNull {
				return nil, syntaxErrorf(nt.pos, "expected NULL after IS, found %s", nt)
			}
			l = &eqNode{l: l, r: &constNode{v: nullValue, boolLit: true}, isNull: true}
			if not {
				l = &notNode{x: l}
			}
		default:
			return l, nil
		}
	}
}

// checkEqualOperands is Java's checkEqualOperand (no NULL literal) and
// checkEqualOperandCompatability (a boolean constant only equals another).
func checkEqualOperands(l, r node, pos int) error {
	for _, n := range []node{l, r} {
		if c, ok := n.(*constNode); ok && c.v.k == kNull {
			return syntaxErrorf(pos, "'%s' cannot be compared", n)
		}
	}
	lc, lok := l.(*constNode)
	rc, rok := r.(*constNode)
	if lok && rok && lc.boolLit && !rc.boolLit {
		return syntaxErrorf(pos, "'%s' cannot be compared with '%s'", l, r)
	}
	return nil
}

// checkOrdered is Java's checkLessThanOperand: a constant must be a
// number, and a boolean expression cannot be ordered.
func checkOrdered(n node, pos int) error {
	if c, ok := n.(*constNode); ok {
		if c.v.isNumber() {
			return nil
		}
		return syntaxErrorf(pos, "value '%s' cannot be compared", n)
	}
	if n.boolean() {
		return syntaxErrorf(pos, "value '%s' cannot be compared", n)
	}
	return nil
}

func ordered(op cmpOp, l, r node, pos int) (node, error) {
	if err := checkOrdered(l, pos); err != nil {
		return nil, err
	}
	if err := checkOrdered(r, pos); err != nil {
		return nil, err
	}
	return &cmpNode{op: op, l: l, r: r}, nil
}

var cmpOps = map[string]cmpOp{">": opGT, ">=": opGE, "<": opLT, "<=": opLE}

func (p *parser) comparison() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		not := false
		if t.kind == tNot {
			switch p.peek2().kind {
			case tBetween, tIn, tContains, tStartsWith, tEndsWith:
				p.next()
				not = true
				t = p.peek()
			default:
				return l, nil
			}
		}
		switch t.kind {
		case tOp:
			op, ok := cmpOps[t.text]
			if !ok {
				return l, nil
			}
			p.next()
			r, err := p.unary()
			if err != nil {
				return nil, err
			}
			if l, err = ordered(op, l, r, t.pos); err != nil {
				return nil, err
			}
		case tBetween:
			p.next()
			low, err := p.unary()
			if err != nil {
				return nil, err
			}
			if at := p.next(); at.kind != tAnd {
				return nil, syntaxErrorf(at.pos, "expected AND in BETWEEN, found %s", at)
			}
			high, err := p.unary()
			if err != nil {
				return nil, err
			}
			if l, err = between(l, low, high, not, t.pos); err != nil {
				return nil, err
			}
		case tIn:
			p.next()
			prop, ok := l.(*propNode)
			if !ok {
				return nil, syntaxErrorf(t.pos, "expected a property for IN, got: %s", l)
			}
			list, err := p.stringList()
			if err != nil {
				return nil, err
			}
			set := make(map[string]struct{}, len(list))
			for _, s := range list {
				set[s] = struct{}{}
			}
			l = &inNode{x: prop, list: list, set: set, not: not}
		case tContains, tStartsWith, tEndsWith:
			p.next()
			s := p.next()
			if s.kind != tString {
				return nil, syntaxErrorf(s.pos, "expected a string literal after %s, found %s", strings.ToUpper(t.text), s)
			}
			op := map[tokKind]strOp{tContains: opContains, tStartsWith: opStartsWith, tEndsWith: opEndsWith}[t.kind]
			l = &strNode{op: op, not: not, x: l, search: s.text}
		default:
			return l, nil
		}
	}
}

// between is Java's createBetween (two constant bounds must be non-NULL
// and in order) and createNotBetween.
func between(x, low, high node, not bool, pos int) (node, error) {
	if not {
		l, err := ordered(opLT, x, low, pos)
		if err != nil {
			return nil, err
		}
		r, err := ordered(opGT, x, high, pos)
		if err != nil {
			return nil, err
		}
		return &logicNode{or: true, l: l, r: r}, nil
	}
	lc, lok := low.(*constNode)
	hc, hok := high.(*constNode)
	if lok && hok {
		if lc.v.k == kNull || hc.v.k == kNull {
			return nil, syntaxErrorf(pos, "illegal values of between, values can not be null")
		}
		c, err := compareValues(hc.v, lc.v)
		if err != nil {
			return nil, syntaxErrorf(pos, "illegal values of between: %v", err)
		}
		if c < 0 {
			return nil, syntaxErrorf(pos, "illegal values of between, left value(%s) must less than or equal to right value(%s)", lc, hc)
		}
	}
	l, err := ordered(opGE, x, low, pos)
	if err != nil {
		return nil, err
	}
	r, err := ordered(opLE, x, high, pos)
	if err != nil {
		return nil, err
	}
	return &logicNode{l: l, r: r}, nil
}

func (p *parser) stringList() ([]string, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var list []string
	for {
		t := p.next()
		if t.kind != tString {
			return nil, syntaxErrorf(t.pos, "expected a string literal in IN list, found %s", t)
		}
		list = append(list, t.text)
		if p.isOp(",") {
			p.next()
			continue
		}
		return list, p.expectOp(")")
	}
}

func (p *parser) unary() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.peek()
	switch {
	case t.kind == tOp && t.text == "+":
		p.next()
		return p.unary()
	case t.kind == tOp && t.text == "-":
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &negNode{x: x}, nil
	case t.kind == tNot:
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		b, err := asBoolean(x, t.pos)
		if err != nil {
			return nil, err
		}
		return &notNode{x: b}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return &constNode{v: value{k: kString, s: t.text}}, nil
	case tDecimal:
		return decimal(t)
	case tFloat:
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil && !isRangeErr(err) {
			return nil, syntaxErrorf(t.pos, "bad number %s", t.text)
		}
		// Java's createFloat refuses values above Double.MAX_VALUE and below
		// Double.MIN_VALUE (the smallest positive double, so 0.0 as well).
		if f > math.MaxFloat64 || f < math.SmallestNonzeroFloat64 {
			return nil, syntaxErrorf(t.pos, "float literal %s is out of range", t.text)
		}
		return &constNode{v: value{k: kDouble, f: f}}, nil
	case tTrue:
		return &constNode{v: trueValue, boolLit: true}, nil
	case tFalse:
		return &constNode{v: falseValue, boolLit: true}, nil
	case tNull:
		return &constNode{v: nullValue, boolLit: true}, nil
	case tIdent:
		return &propNode{name: t.text}, nil
	case tOp:
		if t.text == "(" {
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer func() { p.depth-- }()
			n, err := p.or()
			if err != nil {
				return nil, err
			}
			return n, p.expectOp(")")
		}
	}
	return nil, syntaxErrorf(t.pos, "unexpected %s", t)
}

// decimal is Java's createFromDecimal: a Long literal (L suffix optional)
// that is an Integer when it fits in 32 bits.
func decimal(t token) (node, error) {
	text := strings.TrimRight(t.text, "lL")
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, syntaxErrorf(t.pos, "decimal literal %s is out of range", t.text)
	}
	k := kLong
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		k = kInt
	}
	return &constNode{v: value{k: k, n: n}}, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
