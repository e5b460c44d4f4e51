package remoting

import (
	"errors"
	"strings"
	"testing"
)

func TestExtFieldsTyped(t *testing.T) {
	e := ExtFields{"n": "-42", "big": "9223372036854775807", "b": "TRUE", "s": "", "bad": "4x", "f": "false"}
	if v, err := e.Int64("big"); err != nil || v != 1<<63-1 {
		t.Fatalf("Int64 big: %v %v", v, err)
	}
	if v, err := e.Int32("n"); err != nil || v != -42 {
		t.Fatalf("Int32: %v %v", v, err)
	}
	if v, err := e.Bool("b"); err != nil || !v {
		t.Fatalf("Bool: %v %v", v, err)
	}
	if v, err := e.String("s"); err != nil || v != "" {
		t.Fatalf("String present-but-empty: %q %v", v, err)
	}
	_, err := e.Int64("missing")
	var fe *FieldError
	if !errors.Is(err, ErrMissingField) || !errors.As(err, &fe) || fe.Key != "missing" {
		t.Fatalf("missing: %v", err)
	}
	_, err = e.Int32("big")
	if !errors.Is(err, ErrMalformedField) || !strings.Contains(err.Error(), `"big"`) {
		t.Fatalf("overflow: %v", err)
	}
	if _, err := e.Int64("bad"); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("bad int: %v", err)
	}
	if _, err := e.Bool("bad"); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("bad bool: %v", err)
	}
	if _, err := e.Int64("s"); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("empty int must be malformed (Java Integer.parseInt): %v", err)
	}
	if v, err := e.OptInt32("missing", 7); err != nil || v != 7 {
		t.Fatalf("OptInt32 default: %v %v", v, err)
	}
	if _, err := e.OptInt64("bad", 7); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("OptInt64 malformed: %v", err)
	}
	if v, err := e.OptBool("f", true); err != nil || v {
		t.Fatalf("OptBool: %v %v", v, err)
	}
	if e.OptString("missing", "d") != "d" || e.OptString("n", "d") != "-42" {
		t.Fatal("OptString")
	}
	e.SetInt64("x", -1)
	e.SetInt32("y", 5)
	e.SetBool("z", true)
	if e["x"] != "-1" || e["y"] != "5" || e["z"] != "true" {
		t.Fatalf("setters: %v", e)
	}
}
