package filter

import (
	"fmt"
	"strings"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString  // text holds the decoded value
	tDecimal // text holds the literal, L suffix included
	tFloat
	tOp // text holds the operator: = <> > >= < <= ( ) , + -
	// Keywords.
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
)

var keywords = map[string]tokKind{
	"NOT": tNot, "AND": tAnd, "OR": tOr, "BETWEEN": tBetween, "IN": tIn, "TRUE": tTrue, "FALSE": tFalse,
	"NULL": tNull, "IS": tIs, "CONTAINS": tContains, "STARTSWITH": tStartsWith, "ENDSWITH": tEndsWith,
}

type token struct {
	kind tokKind
	text string
	pos  int // byte offset in the source
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// lex splits src into tokens the way the JavaCC token manager of Java's
// SelectorParser does (longest match, keywords before identifiers).
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
			continue
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			// A line comment needs its line end; without one "--" is two minus signs.
			if nl := strings.IndexAny(src[i:], "\n\r"); nl >= 0 {
				i += nl + 1
				continue
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, syntaxErrorf(i, "unterminated comment")
			}
			i += 2 + end + 2
			continue
		}
		start := i
		switch {
		case isIdentStart(c):
			for i < len(src) && isIdentPart(src[i]) {
				i++
			}
			word := src[start:i]
			if k, ok := keywords[strings.ToUpper(word)]; ok {
				toks = append(toks, token{kind: k, text: word, pos: start})
			} else {
				toks = append(toks, token{kind: tIdent, text: word, pos: start})
			}
		case c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, syntaxErrorf(start, "unterminated string literal")
				}
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						b.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(src[i])
				i++
			}
			toks = append(toks, token{kind: tString, text: b.String(), pos: start})
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			kind, n := scanNumber(src[i:])
			i += n
			toks = append(toks, token{kind: kind, text: src[start:i], pos: start})
		default:
			op := ""
			for _, o := range []string{"<>", ">=", "<=", "=", ">", "<", "(", ")", ",", "+", "-"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, syntaxErrorf(i, "unexpected character %q", rune(c))
			}
			i += len(op)
			toks = append(toks, token{kind: tOp, text: op, pos: start})
		}
	}
	return append(toks, token{kind: tEOF, pos: len(src)}), nil
}

// scanNumber returns the longest numeric token at the start of s:
// DECIMAL_LITERAL ("0" | [1-9][0-9]*[lL]?) or FLOATING_POINT_LITERAL
// (digits "." digits* exp? | "." digits+ exp? | digits exp).
func scanNumber(s string) (tokKind, int) {
	d := 0
	for d < len(s) && isDigit(s[d]) {
		d++
	}
	dec := 0
	if d > 0 {
		if s[0] == '0' {
			dec = 1
		} else {
			dec = d
			if d < len(s) && (s[d] == 'l' || s[d] == 'L') {
				dec++
			}
		}
	}
	flt := 0
	if d < len(s) && s[d] == '.' {
		j := d + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if d > 0 || j > d+1 {
			flt = j + exponentLen(s[j:])
		}
	} else if d > 0 {
		if e := exponentLen(s[d:]); e > 0 {
			flt = d + e
		}
	}
	if flt > dec {
		return tFloat, flt
	}
	return tDecimal, dec
}

func exponentLen(s string) int {
	if len(s) < 2 || (s[0] != 'e' && s[0] != 'E') {
		return 0
	}
	j := 1
	if s[j] == '+' || s[j] == '-' {
		j++
	}
	k := j
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	if k == j {
		return 0
	}
	return k
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '$'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// quote renders s as a selector string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
