package proxy_test

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/proxy"
)

func TestACL(t *testing.T) {
	rules := acl.MustCompile(acl.Config{Accounts: []acl.Account{
		{AccessKey: "writer-key", SecretKey: "writer-secret", DefaultTopicPerm: "DENY", DefaultGroupPerm: "SUB", TopicPerms: []string{"AclT=PUB"}},
		{AccessKey: "reader-key", SecretKey: "reader-secret", DefaultTopicPerm: "SUB", DefaultGroupPerm: "SUB"},
	}})
	checker := acl.NewChecker(rules)
	e := startEnv(t, func(c *broker.Config) { c.ACL = checker }, func(c *proxy.Config) { c.ACL = checker })
	e.topic("AclT", 1, "")
	if r := e.send(callCtx(t, "w", "writer-key", "writer-secret"), message("AclT", "A-1", "x")); r.Status.Code != v2.Code_OK {
		t.Fatalf("permitted send: %v", r.Status)
	}
	if r := e.send(callCtx(t, "r", "reader-key", "reader-secret"), message("AclT", "A-2", "x")); r.Status.Code != v2.Code_FORBIDDEN {
		t.Fatalf("send without PUB: %v", r.Status)
	}
	if r := e.send(callCtx(t, "n", "", ""), message("AclT", "A-3", "x")); r.Status.Code != v2.Code_FORBIDDEN {
		t.Fatalf("unsigned send: %v", r.Status)
	}
	_, err := e.cli.SendMessage(callCtx(t, "b", "writer-key", "wrong-secret"), &v2.SendMessageRequest{Messages: []*v2.Message{message("AclT", "A-4", "x")}})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("bad signature: %v", err)
	}
	msgs := e.pullAll(callCtx(t, "r", "reader-key", "reader-secret"), "AclG", "AclT", 1, 1)
	if string(msgs[0].Body) != "x" {
		t.Fatalf("pulled %v", msgs[0])
	}
}
