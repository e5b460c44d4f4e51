package acl

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrBadConfig is wrapped by Compile's errors: the rules were not changed.
	ErrBadConfig = errors.New("acl: bad config")
	// ErrDenied is wrapped by every refusal (a *DeniedError).
	ErrDenied = errors.New("acl: denied")
)

// MinKeyLength is RocketMQ's lower bound on access and secret keys: both
// must be longer than 6 characters (AclConstants.ACCESS_KEY_MIN_LENGTH).
const MinKeyLength = 6

// Config is a plain_acl.yml document.
type Config struct {
	// GlobalWhiteRemoteAddresses are AddrPattern strings whose clients need
	// no credentials at all.
	GlobalWhiteRemoteAddresses []string
	Accounts                   []Account
}

// Account is one entry of plain_acl.yml's accounts list, as written.
type Account struct {
	AccessKey string
	SecretKey string
	// WhiteRemoteAddress is an AddrPattern: requests with this account's
	// AccessKey from a matching address skip the signature and permission
	// checks (RocketMQ). "" matches nothing.
	WhiteRemoteAddress string
	// Admin accounts may send the admin-only codes and skip the permission
	// checks.
	Admin bool
	// DefaultTopicPerm and DefaultGroupPerm apply to topics and groups
	// without an entry below; "" is DENY, as in RocketMQ.
	DefaultTopicPerm string
	DefaultGroupPerm string
	// TopicPerms and GroupPerms are "Name=PERM" entries.
	TopicPerms []string
	GroupPerms []string
}

// Rules are a compiled Config. Immutable; safe for concurrent use.
type Rules struct {
	global   []AddrPattern
	accounts map[string]*account
}

type account struct {
	accessKey, secretKey string
	white                AddrPattern
	admin                bool
	defaultTopic         Perm
	defaultGroup         Perm
	// perms holds topics by name and groups as "%RETRY%<group>", like
	// RocketMQ's resourcePermMap.
	perms map[string]Perm
}

// Compile validates cfg into Rules. Every problem is an error wrapping
// ErrBadConfig naming the account and entry: keys of 6 characters or fewer,
// a duplicated access key, an entry that is not Name=PERM, an unknown
// permission, a white address that does not parse.
func Compile(cfg Config) (*Rules, error) {
	r := &Rules{accounts: make(map[string]*account, len(cfg.Accounts))}
	for _, s := range cfg.GlobalWhiteRemoteAddresses {
		p, err := ParseAddrPattern(s)
		if err != nil {
			return nil, fmt.Errorf("globalWhiteRemoteAddresses: %w", err)
		}
		if p.kind != addrNone {
			r.global = append(r.global, p)
		}
	}
	for i, a := range cfg.Accounts {
		acc, err := compileAccount(a)
		if err != nil {
			return nil, fmt.Errorf("accounts[%d]: %w", i, err)
		}
		if _, dup := r.accounts[acc.accessKey]; dup {
			return nil, fmt.Errorf("accounts[%d]: %w: accessKey %q appears twice", i, ErrBadConfig, acc.accessKey)
		}
		r.accounts[acc.accessKey] = acc
	}
	return r, nil
}

// MustCompile is Compile for fixed configs (tests); it panics on an error.
func MustCompile(cfg Config) *Rules {
	r, err := Compile(cfg)
	if err != nil {
		panic(err)
	}
	return r
}

func compileAccount(a Account) (*account, error) {
	if len(a.AccessKey) <= MinKeyLength || len(a.SecretKey) <= MinKeyLength {
		return nil, fmt.Errorf("%w: accessKey %q: accessKey and secretKey must be longer than %d characters",
			ErrBadConfig, a.AccessKey, MinKeyLength)
	}
	acc := &account{accessKey: a.AccessKey, secretKey: a.SecretKey, admin: a.Admin,
		defaultTopic: PermDeny, defaultGroup: PermDeny, perms: map[string]Perm{}}
	var err error
	if acc.white, err = ParseAddrPattern(a.WhiteRemoteAddress); err != nil {
		return nil, fmt.Errorf("accessKey %q: %w", a.AccessKey, err)
	}
	if a.DefaultTopicPerm != "" {
		if acc.defaultTopic, err = ParsePerm(a.DefaultTopicPerm); err != nil {
			return nil, fmt.Errorf("accessKey %q: defaultTopicPerm: %w", a.AccessKey, err)
		}
	}
	if a.DefaultGroupPerm != "" {
		if acc.defaultGroup, err = ParsePerm(a.DefaultGroupPerm); err != nil {
			return nil, fmt.Errorf("accessKey %q: defaultGroupPerm: %w", a.AccessKey, err)
		}
	}
	// Groups first, then topics, as PlainAccessResource.build adds them.
	if err := addPerms(acc, a.GroupPerms, true); err != nil {
		return nil, err
	}
	if err := addPerms(acc, a.TopicPerms, false); err != nil {
		return nil, err
	}
	return acc, nil
}

func addPerms(acc *account, entries []string, groups bool) error {
	what := "topicPerms"
	if groups {
		what = "groupPerms"
	}
	for _, e := range entries {
		name, perm, ok := strings.Cut(e, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.Contains(perm, "=") {
			return fmt.Errorf("%w: accessKey %q: %s entry %q: want Name=PERM", ErrBadConfig, acc.accessKey, what, e)
		}
		p, err := ParsePerm(perm)
		if err != nil {
			return fmt.Errorf("accessKey %q: %s entry %q: %w", acc.accessKey, what, e, err)
		}
		if groups {
			name = groupKey(name)
		}
		acc.perms[name] = p
	}
	return nil
}

// Accounts lists the access keys, for logs.
func (r *Rules) Accounts() []string {
	out := make([]string, 0, len(r.accounts))
	for k := range r.accounts {
		out = append(out, k)
	}
	return out
}
