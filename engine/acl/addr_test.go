package acl

import (
	"errors"
	"testing"
)

func TestAddrPatterns(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"", nil, []string{"127.0.0.1", "10.0.0.1:80"}},
		{"*", []string{"1.2.3.4", "[::1]:5", "anything"}, nil},
		{"*.*.*.*", []string{"1.2.3.4"}, nil},
		{"192.168.0.1", []string{"192.168.0.1", "192.168.0.1:10911", "[::ffff:192.168.0.1]:1"}, []string{"192.168.0.2", "192.168.0.10"}},
		{"192.168.0.{1,2, 30}", []string{"192.168.0.1", "192.168.0.2:7", "192.168.0.30"}, []string{"192.168.0.3", "192.168.1.1"}},
		{"192.168.1.1,10.0.0.2", []string{"192.168.1.1", "10.0.0.2:9"}, []string{"192.168.1.2"}},
		{"192.168.1.1-10", []string{"192.168.1.1", "192.168.1.10:1"}, []string{"192.168.1.0", "192.168.1.11", "192.168.2.5"}},
		{"192.168.*.*", []string{"192.168.0.0", "192.168.255.255"}, []string{"192.169.0.1"}},
		{"192.168.*", []string{"192.168.7.9"}, []string{"10.168.7.9"}},
		{"192.168.1-2.*", []string{"192.168.1.200", "192.168.2.0"}, []string{"192.168.3.1"}},
		{"10.1-2.*.5", []string{"10.2.7.5"}, []string{"10.2.7.6", "10.3.7.5"}},
		{"::1", []string{"[::1]:1", "0:0:0:0:0:0:0:1"}, []string{"127.0.0.1", "::2"}},
		{"2001:db8::1-ff:*", []string{"2001:db8::ff:1", "[2001:db8::1:abcd]:5"}, []string{"2001:db8::100:1", "2001:db9::1:1"}},
		{"fe80:*", []string{"fe80::1"}, []string{"fe81::1", "10.0.0.1"}},
	}
	for _, c := range cases {
		p, err := ParseAddrPattern(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		for _, a := range c.match {
			if !p.Match(a) {
				t.Errorf("%q does not match %s", c.pattern, a)
			}
		}
		for _, a := range c.miss {
			if p.Match(a) {
				t.Errorf("%q matches %s", c.pattern, a)
			}
		}
	}
}

func TestAddrPatternErrors(t *testing.T) {
	for _, s := range []string{"192.168.1", "192.168.1.300", "192.168.1.10-2", "192.168.1.-5", "1.2.3.4.5", "192.168.{1,2}.3",
		"host.example", "192.168.0.{1,x}", "1.2.3.4,nope", "1:2:3", "1::2::3", "g::1-2", "1.2.3.*x"} {
		if _, err := ParseAddrPattern(s); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%q: err %v, want ErrBadConfig", s, err)
		}
	}
}
