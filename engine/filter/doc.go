// Package filter compiles and evaluates RocketMQ's SQL92 message selectors
// (the subset of JMS selectors in org.apache.rocketmq.filter, used by
// consumers subscribed with expressionType SQL92) against a message's
// properties.
//
// # Language
//
// Keywords are case-insensitive; identifiers are [A-Za-z_$][A-Za-z0-9_$]*
// and name message properties (a keyword is never an identifier).
//
//	expr       = or
//	or         = and { OR and }
//	and        = equality { AND equality }
//	equality   = comparison { "=" comparison | "<>" comparison | IS NULL | IS NOT NULL }
//	comparison = unary { (">" | ">=" | "<" | "<=") unary
//	                   | [NOT] BETWEEN unary AND unary
//	                   | [NOT] IN "(" string { "," string } ")"
//	                   | [NOT] (CONTAINS | STARTSWITH | ENDSWITH) string }
//	unary      = "+" unary | "-" unary | NOT unary | primary
//	primary    = literal | identifier | "(" or ")"
//	literal    = 'string' ('' escapes a quote) | decimal [L] | float
//	           | TRUE | FALSE | NULL
//
// As in Java, NOT binds tighter than comparisons: "NOT a > 5" is an error
// (a boolean cannot be compared); write "NOT (a > 5)". Comments are
// "-- … newline" and "/* … */".
//
// # Semantics (Java's, including its corner cases)
//
// Property values are strings; an absent property is NULL. Decimal
// literals are Java Integers when they fit in 32 bits, else Longs; float
// literals are Doubles (0.0 and literals beyond Double.MAX_VALUE are
// refused at compile time, as Java's ConstantExpression.createFloat does).
// Comparing a string with a number converts the string to the number's
// type (Integer.valueOf, Long.valueOf, Double.valueOf); comparing a string
// with a boolean uses Boolean.valueOf. ">", ">=", "<", "<=" between two
// strings compare them as doubles. A conversion that fails is an
// evaluation error, and an evaluation error anywhere makes the whole
// message not match (the broker logs and skips it in Java). Comparisons
// with NULL are NULL; AND and OR are three-valued (FALSE AND NULL is FALSE,
// TRUE OR NULL is TRUE); NOT NULL is NULL; a message matches only when the
// expression is TRUE. "a = b" with both absent is TRUE (Java compares the
// two nulls by identity). IN and NOT IN match string values only;
// CONTAINS/STARTSWITH/ENDSWITH (and their NOT forms) are FALSE for NULL,
// non-strings and an empty search string.
//
// # Concurrency
//
// A compiled *Expr is immutable and safe for concurrent use.
package filter
