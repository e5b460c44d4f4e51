package brokerconf

import (
	"errors"
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
