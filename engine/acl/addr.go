package acl

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// AddrPattern is a compiled white remote address: RocketMQ's
// RemoteAddressStrategy. Forms, for IPv4 and IPv6 alike:
//
//	""                      matches nothing (an account without a white address)
//	*  *.*.*.*  *:*:*:*:*:*:*:*   matches every address
//	192.168.0.1             one address (IPv6 in any spelling: ::1, 0:0::1)
//	192.168.0.1,10.0.0.2    a list of addresses
//	192.168.0.{1,2,30}      a list sharing the leading segments
//	192.168.1.1-10          a range in a segment
//	192.168.*.*  192.168.*  a wildcard segment; missing trailing segments are wildcards
//	2001:db8::1-ff:*        IPv6 segments are hexadecimal
//
// Each segment of a range pattern is checked on its own, so 10.1-2.*.5
// matches 10.2.7.5 but not 10.2.7.6 (RocketMQ ignores the segments after its
// first range or wildcard).
//
// An AddrPattern is immutable and safe for concurrent use.
type AddrPattern struct {
	text  string
	kind  addrKind
	set   map[netip.Addr]struct{} // addrOne, addrSet
	v6    bool                    // addrRange: the pattern has 8 hextets, else 4 octets
	lo    [8]uint16               // addrRange: per-segment bounds, inclusive
	hi    [8]uint16
	nsegs int
}

type addrKind uint8

const (
	addrNone addrKind = iota
	addrAll
	addrSet
	addrRange
)

// ParseAddrPattern compiles one white address pattern.
func ParseAddrPattern(s string) (AddrPattern, error) {
	s = strings.TrimSpace(s)
	p := AddrPattern{text: s}
	switch {
	case s == "":
		p.kind = addrNone
		return p, nil
	case s == "*" || s == "*.*.*.*" || s == "*:*:*:*:*:*:*:*":
		p.kind = addrAll
		return p, nil
	case strings.HasSuffix(s, "}"):
		i := strings.LastIndexByte(s, '{')
		if i < 0 {
			return p, badAddr(s, "a '}' without '{'")
		}
		head := s[:i]
		if head == "" || (!strings.HasSuffix(head, ".") && !strings.HasSuffix(head, ":")) {
			return p, badAddr(s, "the {a,b} list must be the last segment")
		}
		var addrs []string
		for _, tail := range strings.Split(s[i+1:len(s)-1], ",") {
			addrs = append(addrs, head+strings.TrimSpace(tail))
		}
		return p.setOf(addrs)
	case strings.Contains(s, ","):
		return p.setOf(strings.Split(s, ","))
	case strings.ContainsAny(s, "*-"):
		p.kind = addrRange
		if strings.Contains(s, ":") {
			return p, p.parseRange6(s)
		}
		return p, p.parseRange4(s)
	}
	return p.setOf([]string{s})
}

// MustParseAddrPattern is ParseAddrPattern for constant patterns; it panics
// on an error.
func MustParseAddrPattern(s string) AddrPattern {
	p, err := ParseAddrPattern(s)
	if err != nil {
		panic(err)
	}
	return p
}

func badAddr(s, why string) error {
	return fmt.Errorf("%w: white address %q: %s", ErrBadConfig, s, why)
}

func (p AddrPattern) setOf(addrs []string) (AddrPattern, error) {
	p.kind = addrSet
	p.set = make(map[netip.Addr]struct{}, len(addrs))
	for _, a := range addrs {
		ip, err := netip.ParseAddr(strings.TrimSpace(a))
		if err != nil || ip.Zone() != "" {
			return p, badAddr(p.text, fmt.Sprintf("%q is not an IP address", strings.TrimSpace(a)))
		}
		p.set[ip.Unmap()] = struct{}{}
	}
	return p, nil
}

func (p *AddrPattern) parseRange4(s string) error {
	segs := strings.Split(s, ".")
	if len(segs) > 4 {
		return badAddr(s, "more than 4 segments")
	}
	for len(segs) < 4 {
		if strings.TrimSpace(segs[len(segs)-1]) != "*" {
			return badAddr(s, "fewer than 4 segments and the last is not *")
		}
		segs = append(segs, "*")
	}
	p.nsegs = 4
	for i, seg := range segs {
		lo, hi, err := parseSegment(seg, 10, 255)
		if err != nil {
			return badAddr(s, err.Error())
		}
		p.lo[i], p.hi[i] = lo, hi
	}
	return nil
}

func (p *AddrPattern) parseRange6(s string) error {
	p.v6 = true
	p.nsegs = 8
	var segs []string
	if head, tail, ok := strings.Cut(s, "::"); ok {
		if strings.Contains(tail, "::") {
			return badAddr(s, "more than one ::")
		}
		var h, t []string
		if head != "" {
			h = strings.Split(head, ":")
		}
		if tail != "" {
			t = strings.Split(tail, ":")
		}
		if len(h)+len(t) > 7 {
			return badAddr(s, "more than 8 segments")
		}
		segs = append(segs, h...)
		for range 8 - len(h) - len(t) {
			segs = append(segs, "0")
		}
		segs = append(segs, t...)
	} else {
		segs = strings.Split(s, ":")
		if len(segs) > 8 {
			return badAddr(s, "more than 8 segments")
		}
		for len(segs) < 8 {
			if strings.TrimSpace(segs[len(segs)-1]) != "*" {
				return badAddr(s, "fewer than 8 segments and the last is not *")
			}
			segs = append(segs, "*")
		}
	}
	for i, seg := range segs {
		lo, hi, err := parseSegment(seg, 16, 0xffff)
		if err != nil {
			return badAddr(s, err.Error())
		}
		p.lo[i], p.hi[i] = lo, hi
	}
	return nil
}

// parseSegment parses "*", "a-b" or "a" in base.
func parseSegment(seg string, base int, maxv uint64) (lo, hi uint16, err error) {
	seg = strings.TrimSpace(seg)
	if seg == "*" {
		return 0, uint16(maxv), nil
	}
	a, b, isRange := strings.Cut(seg, "-")
	x, err := strconv.ParseUint(strings.TrimSpace(a), base, 16)
	if err != nil || x > maxv {
		return 0, 0, fmt.Errorf("segment %q is not a number in 0..%s", seg, strconv.FormatUint(maxv, base))
	}
	if !isRange {
		return uint16(x), uint16(x), nil
	}
	y, err := strconv.ParseUint(strings.TrimSpace(b), base, 16)
	if err != nil || y > maxv || y < x {
		return 0, 0, fmt.Errorf("segment %q is not a range within 0..%s", seg, strconv.FormatUint(maxv, base))
	}
	return uint16(x), uint16(y), nil
}

// String returns the pattern as written.
func (p AddrPattern) String() string { return p.text }

// Match reports whether addr, an IP address with or without a port
// ("10.0.0.1", "10.0.0.1:5000", "[::1]:5000"), matches the pattern. An
// IPv4-mapped IPv6 address is matched as IPv4.
func (p AddrPattern) Match(addr string) bool {
	switch p.kind {
	case addrNone:
		return false
	case addrAll:
		return true
	}
	ip, ok := parseRemote(addr)
	if !ok {
		return false
	}
	return p.MatchIP(ip)
}

// MatchIP is Match for a parsed address.
func (p AddrPattern) MatchIP(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	switch p.kind {
	case addrNone:
		return false
	case addrAll:
		return true
	case addrSet:
		_, ok := p.set[ip]
		return ok
	}
	var segs [8]uint16
	if p.v6 {
		if !ip.Is6() {
			return false
		}
		b := ip.As16()
		for i := range 8 {
			segs[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
	} else {
		if !ip.Is4() {
			return false
		}
		b := ip.As4()
		for i := range 4 {
			segs[i] = uint16(b[i])
		}
	}
	for i := range p.nsegs {
		if segs[i] < p.lo[i] || segs[i] > p.hi[i] {
			return false
		}
	}
	return true
}

// parseRemote parses a remote address with or without a port.
func parseRemote(addr string) (netip.Addr, bool) {
	addr = strings.TrimSpace(addr)
	if ip, err := netip.ParseAddr(addr); err == nil {
		return ip.Unmap().WithZone(""), true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}
