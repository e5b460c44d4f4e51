package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestParseMillis(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.Local)
	want := time.Date(2026, 12, 1, 8, 15, 30, 123e6, time.Local).UnixMilli()
	for in, exp := range map[string]int64{
		"now": now.UnixMilli(), "1700000000123": 1700000000123, " 42 ": 42,
		"2026-12-01#08:15:30:123": want, "2026-12-01#08:15:30:000": want - 123,
	} {
		if got, err := parseMillis(in, now); err != nil || got != exp {
			t.Errorf("parseMillis(%q) = %d, %v; want %d", in, got, err, exp)
		}
	}
	for _, in := range []string{"", "yesterday", "2026-12-01 08:15:30", "2026-12-01#08:15:30:12", "2026-12-01#08:15:30:abc", "2026-13-01#08:15:30:000"} {
		if got, err := parseMillis(in, now); err == nil {
			t.Errorf("parseMillis(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseAttributes(t *testing.T) {
	got, err := parseAttributes("+a=b, +c=d,-e")
	if err != nil || !reflect.DeepEqual(got, map[string]string{"+a": "b", "+c": "d", "-e": ""}) {
		t.Fatalf("parseAttributes: %v %v", got, err)
	}
	for _, bad := range []string{"a=b", "+a", "-e=f"} {
		if _, err := parseAttributes(bad); err == nil {
			t.Errorf("parseAttributes(%q) accepted", bad)
		}
	}
}

func TestBoolArgAndHelpers(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var order, enable bool
	boolArgVarP(fs, &order, "order", "o", false, "")
	boolArgVarP(fs, &enable, "enable", "s", true, "")
	// mqadmin style: the value is the next argument.
	if err := fs.Parse([]string{"-o", "true", "-s", "false", "rest"}); err != nil || !order || enable || fs.Arg(0) != "rest" {
		t.Fatalf("parse: %v order=%t enable=%t args=%v", err, order, enable, fs.Args())
	}
	if err := fs.Parse([]string{"-o", "maybe"}); err == nil {
		t.Fatal("-o maybe accepted")
	}
	if frontStringAtLeast("abcdef", 3) != "abc" || frontStringAtLeast("ab", 3) != "ab" {
		t.Fatal("frontStringAtLeast")
	}
	if perm2String(6) != "RW-" || perm2String(4) != "R--" || perm2String(7) != "RWX" {
		t.Fatal("perm2String")
	}
}
