package aclfile

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/acl"
)

// plainACL is RocketMQ's distributed plain_acl.yml, verbatim in shape.
const plainACL = `globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      # the group should convert to retry topic
      - groupA=DENY
      - groupB=PUB|SUB
      - groupC=SUB

  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    # if it is admin, it could access all resources
    admin: true
dataVersion:
  - counter: 1
    timestamp: 1700000000000
`

func sendReq(ak, sk, topic, remote string) acl.Request {
	ext := map[string]string{"b": topic}
	acl.Sign(ext, []byte("x"), 317, ak, sk, "")
	return acl.Request{Code: 310, Version: 317, RemoteAddr: remote, Ext: ext, Body: []byte("x")}
}

func TestParseRocketMQSample(t *testing.T) {
	cfg, err := Parse([]byte(plainACL))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Accounts) != 2 || cfg.Accounts[0].SecretKey != "12345678" || !cfg.Accounts[1].Admin ||
		cfg.Accounts[1].WhiteRemoteAddress != "192.168.1.*" || len(cfg.Accounts[0].GroupPerms) != 3 ||
		cfg.GlobalWhiteRemoteAddresses[1] != "192.168.0.*" {
		t.Fatalf("parsed %+v", cfg)
	}
	r, err := Compile([]byte(plainACL))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(sendReq("RocketMQ", "12345678", "topicB", "127.0.0.1:1")); err != nil {
		t.Fatal(err)
	}
	if err := r.Check(sendReq("RocketMQ", "12345678", "topicA", "127.0.0.1:1")); !errors.Is(err, acl.ErrDenied) {
		t.Fatalf("topicA: %v", err)
	}
	if err := r.Check(acl.Request{Code: 17, RemoteAddr: "192.168.0.9:1"}); err != nil {
		t.Fatalf("global white address: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown key":   "accounts:\n  - accessKey: abcdefgh\n    secretKey: 12345678\n    topicPerm: [a=PUB]\n",
		"not yaml":      "accounts: [",
		"bad perm":      "accounts:\n  - accessKey: abcdefgh\n    secretKey: 12345678\n    defaultTopicPerm: WRITE\n",
		"short key":     "accounts:\n  - accessKey: abc\n    secretKey: 12345678\n",
		"bad global ip": "globalWhiteRemoteAddresses: [300.1.1.1]\n",
	} {
		if _, err := Compile([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Compile(nil); err != nil {
		t.Errorf("an empty file (no accounts, nobody allowed): %v", err)
	}
}

// syncBuffer is a log sink safe to read while the watcher writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWatcherReloadsAndKeepsRulesOnBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(plainACL)
	var logs syncBuffer
	c, w, err := Open(path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	topicA := func() error { return c.Check(sendReq("RocketMQ", "12345678", "topicA", "127.0.0.1:1")) }
	if topicA() == nil {
		t.Fatal("topicA is denied in the sample")
	}
	if changed, err := w.Poll(); changed || err != nil {
		t.Fatalf("unchanged file: changed %v err %v", changed, err)
	}

	write(strings.Replace(plainACL, "topicA=DENY", "topicA=PUB", 1))
	if changed, err := w.Poll(); !changed || err != nil {
		t.Fatalf("changed file: changed %v err %v", changed, err)
	}
	if err := topicA(); err != nil {
		t.Fatalf("after the reload: %v", err)
	}

	// A bad file keeps the rules in force, and is reported once.
	write(strings.Replace(plainACL, "topicA=DENY", "topicA=MAYBE", 1))
	for range 3 {
		if changed, err := w.Poll(); changed || !errors.Is(err, acl.ErrBadConfig) {
			t.Fatalf("bad file: changed %v err %v", changed, err)
		}
	}
	if err := topicA(); err != nil {
		t.Fatalf("a bad file changed the rules: %v", err)
	}
	if n := strings.Count(logs.String(), "invalid; keeping the rules in force"); n != 1 {
		t.Fatalf("bad file logged %d times, want once:\n%s", n, logs.String())
	}
	// So does a missing file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Poll(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if err := topicA(); err != nil {
		t.Fatalf("a missing file changed the rules: %v", err)
	}

	// Run applies the original file again.
	write(plainACL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, 10*time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for topicA() == nil {
		if time.Now().After(deadline) {
			t.Fatal("Run did not reload the file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestOpenRefusesABadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	if _, _, err := Open(path, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if err := os.WriteFile(path, []byte("accounts:\n  - accessKey: short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(path, nil); !errors.Is(err, acl.ErrBadConfig) || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad: %v", err)
	}
}
