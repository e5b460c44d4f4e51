package javaprops

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, s string) []Entry {
	t.Helper()
	p, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return p
}

func TestParseJavaPropertiesSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Entry
	}{
		{"equals", "a=1\nb = 2\n", []Entry{{"a", "1", 1}, {"b", "2", 2}}},
		{"colon and space separators", "a:1\nb 2\nc\t:  3", []Entry{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"comments and blanks", "# c\n  ! bang\n\n   \na=1\n", []Entry{{"a", "1", 5}}},
		{"comment not continued", "# c \\\na=1", []Entry{{"a", "1", 2}}},
		{"value keeps inner and trailing blanks", "a = x y \n", []Entry{{"a", "x y ", 1}}},
		{"second separator is value", "a==b\nc=:d", []Entry{{"a", "=b", 1}, {"c", ":d", 2}}},
		{"continuation", "list = a,\\\n     b,\\\n  c\nz=1", []Entry{{"list", "a,b,c", 1}, {"z", "1", 4}}},
		{"even backslashes do not continue", "a=x\\\\\nb=2", []Entry{{"a", `x\`, 1}, {"b", "2", 2}}},
		{"escapes", `k\ ey\:\=x = \tv\u0041\n\\z\q`, []Entry{{"k ey:=x", "\tvA\n\\zq", 1}}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", []Entry{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"key only", "flag\n", []Entry{{"flag", "", 1}}},
		{"last value wins in first place", "a=1\nb=2\na=3", []Entry{{"a", "3", 3}, {"b", "2", 2}}},
		{"continuation at end of input", "a=1\\", []Entry{{"a", "1", 1}}},
		{"utf8", "name=brøker", []Entry{{"name", "brøker", 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parse(t, tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseBadEscape(t *testing.T) {
	for _, in := range []string{`a=\u00`, `a=\uZZZZ`} {
		if _, err := Parse(strings.NewReader(in)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: err %v, want ErrSyntax", in, err)
		}
	}
}

// Whatever Write writes, Parse reads back unchanged.
func TestWriteRoundTrip(t *testing.T) {
	in := []Entry{
		{Key: "plain", Value: "v"},
		{Key: "sp ace=:#!", Value: " lead and trail "},
		{Key: "esc", Value: "a\\b\tc\nd\re\ff"},
		{Key: "ctl", Value: "\x01x\x7f"},
		{Key: "#notcomment", Value: "#x!y=z:w"},
		{Key: "empty", Value: ""},
		{Key: "uni", Value: "日本"},
	}
	var b bytes.Buffer
	if err := WriteComment(&b, "header\nsecond line"); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, in); err != nil {
		t.Fatal(err)
	}
	got := parse(t, b.String())
	for i := range got {
		got[i].Line = 0
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip:\n%s\ngot  %+v\nwant %+v", b.String(), got, in)
	}
}

// ParseMap and FormatMap are MixAll's string2Properties and
// properties2String: a body written by one reads back equal by the other.
func TestMapRoundTrip(t *testing.T) {
	in := map[string]string{"flushDiskType": "ASYNC_FLUSH", "brokerName": "b", "empty": ""}
	text := FormatMap(in)
	if text != "brokerName=b\nempty=\nflushDiskType=ASYNC_FLUSH\n" {
		t.Fatalf("FormatMap = %q", text)
	}
	got, err := ParseMap([]byte("# c\n! c\n a = 1 \nb:2\n\nc=x=y\nflag\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1 ", "b": "2", "c": "x=y", "flag": ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseMap = %v, want %v", got, want)
	}
	if back, err := ParseMap([]byte(text)); err != nil || !reflect.DeepEqual(back, in) {
		t.Fatalf("round trip %v %v", back, err)
	}
}
