package filter

import (
	"errors"
	"testing"
)

// FuzzCompileEvaluate compiles arbitrary text and evaluates whatever
// compiles over a few property sets: nothing may panic, every error wraps
// the package's sentinels, and a compiled expression's printed tree
// compiles again to one that gives the same results.
func FuzzCompileEvaluate(f *testing.F) {
	for _, s := range []string{
		"a > 5 AND b = 'x'", "a in ('3', '4', '5')", "a not between 2 and 10", "a is not null and a='hello'",
		"a=TRUE OR b=FALSE", "TAGS='''''tag'''''", "value not contains 'x'", "a > - -5", "a = --1",
		"a = 1 -- c\n", "/* c */ a = 1", "a > 3.1E10", "a >= b", "NOT (a > 5)", "a BETWEEN 1 AND 2.5",
		"a = 2147483648", "a > .5e-3", "$x = 'y'", "((a))", "a IS NULL OR b IS NOT NULL",
	} {
		f.Add(s, "6", "x")
	}
	f.Fuzz(func(t *testing.T, src, av, bv string) {
		e, err := Compile(src)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Compile(%q): %v does not wrap ErrSyntax", src, err)
			}
			return
		}
		sets := []Map{{}, {"a": av}, {"a": av, "b": bv}, {"a": bv, "b": av, "value": av, "TAGS": bv}}
		again, err := Compile(e.root.String())
		if err != nil {
			t.Fatalf("printed tree %q of %q does not compile: %v", e.root.String(), src, err)
		}
		for _, props := range sets {
			r, err := e.Evaluate(props)
			if err != nil && !errors.Is(err, ErrEval) {
				t.Fatalf("%q over %v: %v does not wrap ErrEval", src, props, err)
			}
			r2, err2 := again.Evaluate(props)
			if r != r2 || (err == nil) != (err2 == nil) {
				t.Fatalf("%q over %v = %v, %v; its printed tree %q = %v, %v", src, props, r, err, e.root.String(), r2, err2)
			}
		}
	})
}
