package brokerconf

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, s string) *Props {
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
			if got := parse(t, tc.in).Entries(); !reflect.DeepEqual(got, tc.want) {
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

func TestTypedGettersAndUnused(t *testing.T) {
	p := parse(t, "brokerId = 1\nslaveReadEnable=TRUE\naclEnable=yes\nlistenPort=99999\nname= b \nunknownKey=1\nother=2\n")
	var id, port *int64
	var slave, acl *bool
	var name, missing string
	p.Int("brokerId", 0, 1<<20, &id)
	p.Bool("slaveReadEnable", &slave)
	p.Bool("aclEnable", &acl)
	p.Int("listenPort", 0, 65535, &port)
	p.String("name", &name)
	p.String("absent", &missing)
	if id == nil || *id != 1 || slave == nil || !*slave || name != "b" || missing != "" {
		t.Fatalf("id %v slave %v name %q", id, slave, name)
	}
	if acl != nil || port != nil {
		t.Fatalf("bad values were set: acl %v port %v", acl, port)
	}
	err := p.Err()
	if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "line 3: aclEnable") || !strings.Contains(err.Error(), "line 4: listenPort") {
		t.Fatalf("err %v", err)
	}
	got := p.Unused()
	if len(got) != 2 || got[0].Key != "unknownKey" || got[1].Key != "other" || got[1].Line != 7 {
		t.Fatalf("unused %v", got)
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
	got := parse(t, b.String()).Entries()
	for i := range got {
		got[i].Line = 0
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip:\n%s\ngot  %+v\nwant %+v", b.String(), got, in)
	}
}
