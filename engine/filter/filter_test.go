package filter

import (
	"errors"
	"strings"
	"testing"
)

// m builds properties from "k=v" pairs.
func m(kv ...string) Map {
	out := Map{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		out[k] = v
	}
	return out
}

// evalCase: want is TRUE, FALSE, NULL or ERR (an evaluation error).
type evalCase struct {
	expr  string
	props Map
	want  string
}

func runEval(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		e, err := Compile(c.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.expr, err)
			continue
		}
		r, err := e.Evaluate(c.props)
		got := r.String()
		if err != nil {
			if !errors.Is(err, ErrEval) {
				t.Errorf("%q over %v: error %v does not wrap ErrEval", c.expr, c.props, err)
			}
			got = "ERR"
		}
		if got != c.want {
			t.Errorf("%q over %v = %s, want %s", c.expr, c.props, got, c.want)
		}
		if match := e.Match(c.props); match != (c.want == "TRUE") {
			t.Errorf("%q over %v: Match = %v with result %s", c.expr, c.props, match, got)
		}
	}
}

// TestJavaExpressionCases replays the cases of Java's ExpressionTest
// (org.apache.rocketmq.filter) with string-valued properties, as a broker
// sees them.
func TestJavaExpressionCases(t *testing.T) {
	const (
		and     = "a=3 and b<>4 And c>5 AND d<=4"
		or      = "a=3 or b<>4 Or c>5 OR d<=4"
		in      = "a in ('3', '4', '5')"
		notIn   = "a not in ('3', '4', '5')"
		btw     = "a between 2 and 10"
		notBtw  = "a not between 2 and 10"
		isNull  = "a is null"
		notNull = "a is not null"
		equal   = "a is not null and a='hello'"
		boolean = "a=TRUE OR b=FALSE"
		nullOr  = "a is null OR a='hello'"
		strStr  = "TAGS is not null and TAGS='''''tag'''''"
	)
	runEval(t, []evalCase{
		{and, m("a=3", "b=5", "c=6", "d=1"), "TRUE"},
		{and, m("a=4", "b=5", "c=6", "d=1"), "FALSE"},
		{or, m("a=3"), "TRUE"},
		{or, m("a=4", "b=5"), "TRUE"},
		{or, m("a=4", "b=4", "c=6"), "TRUE"},
		{or, m("a=4", "b=4", "c=3", "d=2"), "TRUE"},
		{or, m("a=4", "b=4", "c=3", "d=10"), "FALSE"},
		{in, m("a=3"), "TRUE"}, {in, m("a=4"), "TRUE"}, {in, m("a=5"), "TRUE"},
		{in, m("a=8"), "FALSE"},
		{notIn, m("a=8"), "TRUE"},
		{notIn, m("a=3"), "FALSE"}, {notIn, m("a=4"), "FALSE"}, {notIn, m("a=5"), "FALSE"},
		{btw, m("a=2"), "TRUE"}, {btw, m("a=10"), "TRUE"}, {btw, m("a=3"), "TRUE"},
		{btw, m("a=1"), "FALSE"}, {btw, m("a=11"), "FALSE"},
		{notBtw, m("a=1"), "TRUE"}, {notBtw, m("a=11"), "TRUE"},
		{notBtw, m("a=2"), "FALSE"}, {notBtw, m("a=10"), "FALSE"}, {notBtw, m("a=3"), "FALSE"},
		{isNull, m("abc=2"), "TRUE"}, {isNull, m("a=2"), "FALSE"},
		{notNull, m("a=2"), "TRUE"}, {notNull, m("abc=2"), "FALSE"},
		{equal, m("a=hello"), "TRUE"}, {equal, m(), "FALSE"},
		{boolean, m("a=true", "b=false"), "TRUE"},
		{boolean, m("a=false", "b=true"), "FALSE"},
		{nullOr, m(), "TRUE"}, {nullOr, m("a=hello"), "TRUE"}, {nullOr, m("a=abc"), "FALSE"},
		{strStr, m("TAGS=''tag''"), "TRUE"},
		{"a > 3.1E10", m("a=31415000000"), "TRUE"},
		{"a > 3.14", m("a=3.1415"), "TRUE"},
		{"a > b", m("a=10", "b=20"), "FALSE"},
		{"a > b", m("a=20", "b=10"), "TRUE"},
		// testEvaluate_stringCompare: non-numeric strings cannot be ordered.
		{"a between up and low", m("a=3.14"), "NULL"},
		{"a between up and low", m("a=3.14", "up=up", "low=low"), "ERR"},
		{"key is not null and key between 0 and 100", m("key=con"), "ERR"},
		{"a between 0 and 100", m("a=abc"), "ERR"},
		{"a=b", m("a=3.14", "b=3.14"), "TRUE"},
		{"a<>b", m("a=3.14", "b=3.14"), "FALSE"},
		{"a<>b", m("a=3.14", "b=3.141"), "TRUE"},
		// CONTAINS / STARTSWITH / ENDSWITH.
		{"value contains 'x'", m("value=axb"), "TRUE"},
		{"value startswith 'ax'", m("value=axb"), "TRUE"},
		{"value endswith 'xb'", m("value=axb"), "TRUE"},
		{"value not contains 'x'", m("value=axb"), "FALSE"},
		{"value not startswith 'x'", m("value=abb"), "TRUE"},
		{"value contains ''", m("value=axb"), "FALSE"},
		{"value not contains ''", m("value=axb"), "FALSE"},
		{"value contains 'x'", m(), "FALSE"},
		{"value not endswith 'x'", m(), "FALSE"},
		{"'axb' contains 'x'", m(), "TRUE"},
		{"'axb' not startswith 'u'", m(), "TRUE"},
		{"' ' endswith ' '", m(), "TRUE"},
		{"'axb' contains '.'", m(), "FALSE"},
		{"a not in ('4', '4', '5') and b between 3 and 10 and c not contains 'axbc'", m("a=3", "b=3", "c=axbdc"), "TRUE"},
	})
}

// TestSemantics covers null handling, conversions and precedence.
func TestSemantics(t *testing.T) {
	runEval(t, []evalCase{
		// The brief's selector.
		{"a > 5 AND b = 'x'", m("a=6", "b=x"), "TRUE"},
		{"a > 5 AND b = 'x'", m("a=5", "b=x"), "FALSE"},
		{"a > 5 AND b = 'x'", m("a=6", "b=y"), "FALSE"},
		{"a > 5 AND b = 'x'", m("b=x"), "NULL"},
		{"a > 5 AND b = 'x'", m("a=4"), "FALSE"}, // FALSE AND NULL
		{"a > 5 OR b = 'x'", m("a=6"), "TRUE"},   // TRUE OR NULL
		{"a > 5 OR b = 'x'", m("a=4"), "NULL"},
		// Comparisons with NULL are NULL, whatever the operator.
		{"a = 1", m(), "NULL"}, {"a <> 1", m(), "NULL"}, {"a < 1", m(), "NULL"}, {"a >= 1", m(), "NULL"},
		{"NOT (a = 1)", m(), "NULL"}, {"a IN ('1')", m(), "NULL"}, {"a NOT IN ('1')", m(), "NULL"},
		{"a BETWEEN 1 AND 2", m(), "NULL"}, {"a NOT BETWEEN 1 AND 2", m(), "NULL"},
		{"1 = a", m(), "FALSE"}, // a NULL right side is FALSE in Java's equality
		{"a = b", m(), "TRUE"},  // two NULLs are the same null
		{"a", m("a=true"), "FALSE"},
		{"a", m(), "NULL"},
		{"NULL", m(), "NULL"},
		{"TRUE", m(), "TRUE"},
		{"NOT FALSE", m(), "TRUE"},
		// Conversions: Integer literals convert with Integer.valueOf.
		{"a = 5", m("a=5"), "TRUE"},
		{"a = 5", m("a=+5"), "TRUE"},
		{"a = 5", m("a=05"), "TRUE"},
		{"a = 5", m("a=5.0"), "ERR"},
		{"a = 5", m("a= 5"), "ERR"},
		{"a = 5", m("a=abc"), "ERR"},
		{"a = 5 OR b = 'x'", m("a=abc", "b=x"), "ERR"}, // an error anywhere fails the message
		{"a > 1", m("a=3000000000"), "ERR"},            // not an Integer
		{"a > 1L", m("a=3000000000"), "ERR"},           // 1L is still an Integer literal
		{"a > 2147483648", m("a=3000000000"), "TRUE"},  // a Long literal
		{"a > 1.0", m("a=3000000000"), "TRUE"},
		{"a = 5.0", m("a=5"), "TRUE"},
		{"a = 5.0", m("a= 5 "), "TRUE"}, // Double.valueOf trims
		{"a = 5.0", m("a=5d"), "TRUE"},
		{"a < 1.0", m("a=-Infinity"), "TRUE"},
		{"a > 1.0", m("a=NaN"), "TRUE"}, // Double.compare puts NaN above all
		{"a > 1.0", m("a=inf"), "ERR"},
		{"a = 2.5", m("a=2.5"), "TRUE"},
		{"a > -5", m("a=-4"), "TRUE"},
		{"a > - -5", m("a=6"), "TRUE"},
		{"a < -2147483648", m("a=-2147483649"), "TRUE"},
		{"a = 1", m("a=1"), "TRUE"},
		{"a = '1'", m("a=1"), "TRUE"},
		{"a = '1'", m("a=01"), "FALSE"},
		{"a <> 'x'", m("a=y"), "TRUE"},
		// Booleans: Boolean.valueOf on the string side.
		{"a = TRUE", m("a=TRUE"), "TRUE"},
		{"a = TRUE", m("a=yes"), "FALSE"},
		{"a = FALSE", m("a=yes"), "TRUE"},
		{"1 = TRUE", m(), "FALSE"},
		// Two strings ordered as doubles.
		{"a >= b", m("a=2", "b=10"), "FALSE"},
		{"a >= b", m("a=10", "b=10.0"), "TRUE"},
		{"a > b", m("a=x", "b=1"), "ERR"},
		// IN holds strings only.
		{"a IN ('1', '2', '3', '4', '5', '6')", m("a=6"), "TRUE"},
		{"a NOT IN ('1')", m("a=2"), "TRUE"},
		{"a IN ('x''y')", m("a=x'y"), "TRUE"},
		// Precedence: AND over OR, comparisons over NOT's operand.
		{"a = 1 OR a = 2 AND b = 3", m("a=1"), "TRUE"},
		{"(a = 1 OR a = 2) AND b = 3", m("a=1", "b=4"), "FALSE"},
		{"NOT (a > 5) AND b = 'x'", m("a=4", "b=x"), "TRUE"},
		{"NOT a = 'x'", m("a=x"), "ERR"},   // (NOT a) = 'x': FALSE compared with 'x'
		{"a = 1 = TRUE", m("a=1"), "TRUE"}, // (a = 1) = TRUE
		{"a = 1 = 'x'", m("a=1"), "ERR"},   // a Boolean compared with a string
		// Case-insensitive keywords, case-sensitive names.
		{"A is null and a is not null", m("a=1"), "TRUE"},
		{"a BeTwEeN 1 aNd 3", m("a=2"), "TRUE"},
		// Comments.
		{"a = 1 -- trailing\n AND b = 2", m("a=1", "b=2"), "TRUE"},
		{"a = 1 /* inline */ AND b = 2", m("a=1", "b=2"), "TRUE"},
		{"a = --1", m("a=1"), "TRUE"}, // no line end: two minus signs
		{"$x_1 = 'v'", m("$x_1=v"), "TRUE"},
		{"TAGS = 'tagA'", m("TAGS=tagA"), "TRUE"},
	})
}

func TestCompileErrors(t *testing.T) {
	bad := []string{
		"", "   ", "5", "'x'", "-a", "a +", "(a = 1", "a = 1)", "a = 1 b = 2",
		"a and between 2 and 10", // Java's ParserTest invalidExpression
		" a between 10 and 0",    // illegalBetween
		"a > 100000000000000000000000",
		"a > 9223372036854775808",
		"a > 1e400", "a > 0.0", "a > 1e-400",
		"a = NULL", "NULL = a", "TRUE = 1", "TRUE = 'x'", "a > 'x'", "a > TRUE", "'x' < a", "a > NULL",
		"(a = 1) > 2", "NOT a > 5", "NOT 5", "5 AND a", "a AND 'x'",
		"a IN ()", "a IN (1, 2)", "a IN 'x'", "'x' IN ('x')", "a NOT",
		"a contains x", "a not contains x", "a contains 123", "'axb' contains ",
		"a BETWEEN 1", "a BETWEEN 1 OR 2", "a BETWEEN NULL AND 2", "a BETWEEN 'a' AND 'b'",
		"a IS 5", "a IS NOT 5", "a == 1", "a != 1", "a = 'unterminated", "a = 1 /* open",
		"a.b = 1", "a = 0L", "a = 05", "a = 5e", "a = .", "a = 1 ;", "a = \"x\"",
		strings.Repeat("(", 1500) + "a" + strings.Repeat(")", 1500),
		strings.Repeat("NOT ", 1500) + "a",
	}
	for _, s := range bad {
		if e, err := Compile(s); err == nil {
			t.Errorf("Compile(%q) = %s, want an error", s, e.root)
		} else if !errors.Is(err, ErrSyntax) {
			t.Errorf("Compile(%q): %v does not wrap ErrSyntax", s, err)
		}
	}
	good := []string{
		"a=3 and b<>4 And c>5 AND d<=4", "a in ('3', '4', '5')", "(a not in ('6', '4', '5')) or (b in ('3', '4', '5'))",
		"(a between 2 and 10) AND (b not between 6 and 9)", "a is null", "a is not null", "a <= now",
		"a=3 and b contains 'xxx' and c not contains 'xxx'", "a between 1 and 1", "a between 1 and 2.5",
		"a not between 10 and 0", "a between -10 and 0", "a > 5L", "a > 1.5E-3", "a > .5", "a > 5.", "a > 05.5",
		"5 IS NULL", "'x' = a", "a = b", "TRUE = FALSE", "1 = TRUE", "+a = 1", "-a = 1", "a = 2147483648",
		"a > 9223372036854775807", "(((a = 1)))", "a = 1 -- comment\n", "a", "NOT a",
		strings.Repeat("(", 150) + "a" + strings.Repeat(")", 150),
		strings.TrimSuffix(strings.Repeat("a = 1 AND ", 2000), " AND "),
	}
	for _, s := range good {
		if _, err := Compile(s); err != nil {
			t.Errorf("Compile(%q): %v", s, err)
		}
	}
}

// TestConcurrentEvaluate shares one compiled expression between goroutines
// (run with -race).
func TestConcurrentEvaluate(t *testing.T) {
	e, err := Compile("a > 5 AND b IN ('x', 'y') AND c IS NULL")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for g := range 4 {
		go func() {
			ok := true
			for i := range 1000 {
				props := m("a="+string(rune('0'+(i+g)%10)), "b=x")
				ok = ok && e.Match(props) == ((i+g)%10 > 5)
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("concurrent evaluation gave a wrong result")
		}
	}
}

func TestString(t *testing.T) {
	e, err := Compile("a > 5 AND b NOT IN ('x', 'y''z') OR NOT (c STARTSWITH 'p') OR d IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	want := "(((a > 5) AND b NOT IN ('x', 'y''z')) OR (NOT (c STARTSWITH 'p'))) OR (NOT (d IS NULL)))"
	if got := e.root.String(); got != "("+want {
		t.Errorf("tree = %s, want (%s", got, want)
	}
	if e.String() != "a > 5 AND b NOT IN ('x', 'y''z') OR NOT (c STARTSWITH 'p') OR d IS NOT NULL" {
		t.Errorf("String() = %q", e.String())
	}
}
