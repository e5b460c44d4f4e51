// Package aclfile reads RocketMQ's plain_acl.yml into engine/acl rules and
// reloads it when it changes. It lives outside engine/ because it needs a
// YAML parser.
//
// # File format
//
// The document is RocketMQ's plain_acl.yml:
//
//	globalWhiteRemoteAddresses:
//	  - 10.10.103.*
//	  - 192.168.0.*
//	accounts:
//	  - accessKey: RocketMQ
//	    secretKey: 12345678
//	    whiteRemoteAddress:
//	    admin: false
//	    defaultTopicPerm: DENY
//	    defaultGroupPerm: SUB
//	    topicPerms:
//	      - topicA=DENY
//	      - topicB=PUB|SUB
//	    groupPerms:
//	      - groupA=DENY
//	      - groupB=PUB|SUB
//
// dataVersion, which RocketMQ's admin tools write, is accepted and ignored;
// any other unknown key is an error (a misspelt key would otherwise drop a
// rule silently). Scalars may be unquoted numbers (secretKey: 12345678).
//
// # Reloading
//
// A Watcher re-reads the file every interval and, when its content (SHA-256)
// differs from the rules in force, compiles it and stores the new rules on
// the checker in one atomic swap. A file that does not read, parse or
// compile leaves the rules in force and is logged once per distinct content;
// so is a missing file.
package aclfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/brokerlab/brokerlab/engine/acl"
)

// MaxFileSize bounds the file read (plain_acl.yml files are kilobytes).
const MaxFileSize = 16 << 20

// ErrTooLarge is returned for a file over MaxFileSize.
var ErrTooLarge = errors.New("aclfile: file too large")

type document struct {
	GlobalWhiteRemoteAddresses []string  `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []account `yaml:"accounts"`
	DataVersion                yaml.Node `yaml:"dataVersion"` // written by RocketMQ's tools; ignored
}

type account struct {
	AccessKey          string   `yaml:"accessKey"`
	SecretKey          string   `yaml:"secretKey"`
	WhiteRemoteAddress string   `yaml:"whiteRemoteAddress"`
	Admin              bool     `yaml:"admin"`
	DefaultTopicPerm   string   `yaml:"defaultTopicPerm"`
	DefaultGroupPerm   string   `yaml:"defaultGroupPerm"`
	TopicPerms         []string `yaml:"topicPerms"`
	GroupPerms         []string `yaml:"groupPerms"`
}

// Parse decodes a plain_acl.yml document into an acl.Config.
func Parse(data []byte) (acl.Config, error) {
	var doc document
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return acl.Config{}, fmt.Errorf("aclfile: %w", err)
	}
	cfg := acl.Config{GlobalWhiteRemoteAddresses: doc.GlobalWhiteRemoteAddresses}
	for _, a := range doc.Accounts {
		cfg.Accounts = append(cfg.Accounts, acl.Account{
			AccessKey: a.AccessKey, SecretKey: a.SecretKey, WhiteRemoteAddress: a.WhiteRemoteAddress, Admin: a.Admin,
			DefaultTopicPerm: a.DefaultTopicPerm, DefaultGroupPerm: a.DefaultGroupPerm,
			TopicPerms: a.TopicPerms, GroupPerms: a.GroupPerms,
		})
	}
	return cfg, nil
}

// Compile parses and compiles a plain_acl.yml document.
func Compile(data []byte) (*acl.Rules, error) {
	cfg, err := Parse(data)
	if err != nil {
		return nil, err
	}
	r, err := acl.Compile(cfg)
	if err != nil {
		return nil, fmt.Errorf("aclfile: %w", err)
	}
	return r, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, path, MaxFileSize)
	}
	return data, nil
}

// Watcher keeps a checker's rules in step with a file. Open makes one; Run
// or Poll drive it. Poll and Run must not be called concurrently.
type Watcher struct {
	path    string
	checker *acl.Checker
	log     *slog.Logger
	applied [sha256.Size]byte // content of the rules in force
	failed  [sha256.Size]byte // content last reported bad
	readErr string            // the read error last reported ("" = the last read worked)
}

// Open loads path into a new checker and returns a watcher for it. A file
// that does not load is an error (the broker does not start with it).
// log nil = slog.Default().
func Open(path string, log *slog.Logger) (*acl.Checker, *Watcher, error) {
	if log == nil {
		log = slog.Default()
	}
	data, err := readFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("aclfile: %w", err)
	}
	r, err := Compile(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (in %s)", err, path)
	}
	c := acl.NewChecker(r)
	return c, &Watcher{path: path, checker: c, log: log, applied: sha256.Sum256(data)}, nil
}

// Checker returns the checker the watcher updates.
func (w *Watcher) Checker() *acl.Checker { return w.checker }

// Poll re-reads the file once: changed reports that new rules were stored;
// err is why a changed file was not applied (the old rules stay).
func (w *Watcher) Poll() (changed bool, err error) {
	data, err := readFile(w.path)
	if err != nil {
		if msg := err.Error(); msg != w.readErr {
			w.readErr = msg
			w.log.Error("acl file unreadable; keeping the rules in force", "path", w.path, "err", err)
		}
		return false, fmt.Errorf("aclfile: %w", err)
	}
	w.readErr = ""
	sum := sha256.Sum256(data)
	if sum == w.applied {
		return false, nil
	}
	r, err := Compile(data)
	if err != nil {
		if sum != w.failed {
			w.failed = sum
			w.log.Error("acl file changed but is invalid; keeping the rules in force", "path", w.path, "err", err)
		}
		return false, err
	}
	w.checker.Store(r)
	w.applied = sum
	w.log.Info("acl file reloaded", "path", w.path, "accounts", len(r.Accounts()))
	return true, nil
}

// Run polls every interval until ctx is done.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = w.Poll() // logged by Poll
		}
	}
}
