package acl

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// Request is what the checker needs of one remoting request.
type Request struct {
	Code int32
	// CodeName names Code in refusals ("UPDATE_AND_CREATE_TOPIC"); "" prints
	// the number only.
	CodeName string
	// Version is the request header's version (it decides whether
	// _UNIQUE_KEY_QUERY is signed).
	Version int32
	// RemoteAddr is the client's address, with or without a port.
	RemoteAddr string
	Ext        map[string]string
	Body       []byte
}

// DeniedError is a refusal; it wraps ErrDenied and its message is the remark
// sent back with NO_PERMISSION.
type DeniedError struct {
	AccessKey string // "" when the request carried none
	Reason    string
}

func (e *DeniedError) Error() string { return e.Reason }
func (e *DeniedError) Unwrap() error { return ErrDenied }

func denied(ak, format string, args ...any) error {
	return &DeniedError{AccessKey: ak, Reason: "acl: " + fmt.Sprintf(format, args...)}
}

// Checker decides requests against the current Rules. Store replaces the
// rules atomically; a request is decided under one set of rules. Safe for
// concurrent use.
type Checker struct {
	rules   atomic.Pointer[Rules]
	allowed atomic.Uint64
	denied  atomic.Uint64
}

// NewChecker returns a checker over r (non-nil).
func NewChecker(r *Rules) *Checker {
	c := &Checker{}
	c.Store(r)
	return c
}

// Store makes r the rules for the requests that follow.
func (c *Checker) Store(r *Rules) {
	if r == nil {
		panic("acl: Store(nil)")
	}
	c.rules.Store(r)
}

// Rules returns the current rules.
func (c *Checker) Rules() *Rules { return c.rules.Load() }

// Counts returns how many requests were let through and refused.
func (c *Checker) Counts() (allowed, denied uint64) { return c.allowed.Load(), c.denied.Load() }

// Check decides req: nil lets it through, otherwise a *DeniedError.
func (c *Checker) Check(req Request) error {
	err := c.rules.Load().Check(req)
	if err != nil {
		c.denied.Add(1)
	} else {
		c.allowed.Add(1)
	}
	return err
}

// Check decides req under r (see the package doc for the order).
func (r *Rules) Check(req Request) error {
	ip, ipOK := parseRemote(req.RemoteAddr)
	if ipOK {
		for _, p := range r.global {
			if p.MatchIP(ip) {
				return nil
			}
		}
	}
	code := strconv.Itoa(int(req.Code))
	if req.CodeName != "" {
		code = req.CodeName + " (" + code + ")"
	}
	ak, ok := req.Ext[FieldAccessKey]
	if !ok || ak == "" {
		return denied("", "request %s carries no AccessKey and %s is not a global white address", code, req.RemoteAddr)
	}
	acc := r.accounts[ak]
	if acc == nil {
		return denied(ak, "no account for accessKey=%s", ak)
	}
	if ipOK && acc.white.MatchIP(ip) {
		return nil
	}
	if sig := req.Ext[FieldSignature]; sig == "" || !verify(Content(req.Ext, req.Body, req.Version), acc.secretKey, sig) {
		return denied(ak, "signature check failed for accessKey=%s on request %s (wrong secretKey, or the request was altered)", ak, code)
	}
	needs, err := Resources(req.Code, req.Ext, req.Body)
	if err != nil {
		return denied(ak, "accessKey=%s request %s: %v", ak, code, err)
	}
	for _, n := range needs {
		if n.Resource == TraceTopic && n.Perm == PermPub {
			return nil
		}
	}
	if acc.admin {
		return nil
	}
	if AdminOnly(req.Code) {
		return denied(ak, "request %s needs an admin account; accessKey=%s is not admin", code, ak)
	}
	for _, n := range needs {
		owned, explicit := acc.perms[n.Resource]
		source := "topicPerms"
		if n.IsGroup() {
			source = "groupPerms"
		}
		if !explicit {
			owned, source = acc.defaultTopic, "defaultTopicPerm"
			if n.IsGroup() {
				owned, source = acc.defaultGroup, "defaultGroupPerm"
			}
		}
		if !owned.Allows(n.Perm) {
			return denied(ak, "accessKey=%s has no %s permission on %s (request %s; %s grants %s)",
				ak, n.Perm, n, code, source, owned)
		}
	}
	return nil
}
