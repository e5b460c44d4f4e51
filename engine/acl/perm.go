package acl

import (
	"fmt"
	"strings"
)

// Perm is a permission bit set, with RocketMQ's values (Permission.java).
type Perm uint8

const (
	PermDeny Perm = 1      // refuses whatever else is set
	PermAny  Perm = 1 << 1 // needed: PUB or SUB will do
	PermPub  Perm = 1 << 2 // produce to a topic
	PermSub  Perm = 1 << 3 // consume a topic, act as a consumer group

	PermPubSub = PermPub | PermSub
)

// ParsePerm parses a permission as plain_acl.yml spells it: PUB, SUB,
// PUB|SUB, SUB|PUB or DENY (surrounding spaces ignored). RocketMQ reads
// anything else as DENY silently; here it is an error, so a typo cannot
// quietly lock an application out.
func ParsePerm(s string) (Perm, error) {
	switch strings.TrimSpace(s) {
	case "PUB":
		return PermPub, nil
	case "SUB":
		return PermSub, nil
	case "PUB|SUB", "SUB|PUB":
		return PermPubSub, nil
	case "DENY":
		return PermDeny, nil
	}
	return 0, fmt.Errorf("%w: permission %q: want PUB, SUB, PUB|SUB or DENY", ErrBadConfig, s)
}

// String spells p as plain_acl.yml does.
func (p Perm) String() string {
	switch {
	case p&PermDeny != 0:
		return "DENY"
	case p&PermPubSub == PermPubSub:
		return "PUB|SUB"
	case p&PermPub != 0:
		return "PUB"
	case p&PermSub != 0:
		return "SUB"
	case p&PermAny != 0:
		return "ANY"
	}
	return "NONE"
}

// Allows reports whether p, an owned permission, grants needed (Permission.checkPermission):
// never when owned has DENY; ANY needs PUB or SUB; otherwise one common bit.
func (p Perm) Allows(needed Perm) bool {
	owned := p
	if owned&PermDeny != 0 {
		return false
	}
	if needed&PermAny != 0 {
		return owned&PermPubSub != 0
	}
	return needed&owned != 0
}
