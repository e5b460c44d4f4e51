package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

const (
	aclAdminAK = "admin-key"
	aclAdminSK = "admin-secret"
	aclUserAK  = "user-key-1"
	aclUserSK  = "user-secret"
)

func aclTestRules(t *testing.T, userTopicPerms ...string) *acl.Rules {
	t.Helper()
	r, err := acl.Compile(acl.Config{Accounts: []acl.Account{
		{AccessKey: aclAdminAK, SecretKey: aclAdminSK, Admin: true},
		{AccessKey: aclUserAK, SecretKey: aclUserSK, DefaultTopicPerm: "DENY", DefaultGroupPerm: "SUB",
			TopicPerms: userTopicPerms, GroupPerms: []string{"deniedGroup=DENY"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// signedCall sends a request signed as the official clients sign it
// (ak "" sends it unsigned).
func (e *env) signedCall(code int32, ext remoting.ExtFields, body []byte, ak, sk string) *remoting.Command {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	if ak != "" {
		acl.Sign(req.Ext(), body, req.Version, ak, sk, "")
	}
	resp, err := e.client.InvokeSync(ctx, e.b.Addr(), req)
	if err != nil {
		e.t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

func createTopicExt(topic string) remoting.ExtFields {
	return remoting.ExtFields{"topic": topic, "defaultTopic": "defaultTopic", "readQueueNums": "2",
		"writeQueueNums": "2", "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}
}

func wantRefused(t *testing.T, what string, resp *remoting.Command, remark string) {
	t.Helper()
	wantCode(t, what, resp, protocol.RespNoPermission)
	if !strings.Contains(resp.Remark, remark) {
		t.Fatalf("%s: remark %q does not say %q", what, resp.Remark, remark)
	}
}

// TestACLRefusalsStoreNothing drives raw requests through a broker with an
// ACL: an admin creates a topic, a normal account may not; a send to a
// topic the account lacks PUB on, with a wrong secret or without
// credentials is refused and stores nothing; an offset update for a denied
// group is not committed.
func TestACLRefusalsStoreNothing(t *testing.T) {
	checker := acl.NewChecker(aclTestRules(t, "open=PUB|SUB", "readonly=SUB"))
	e := startEnv(t, func(c *broker.Config) { c.AutoCreateTopic = false; c.ACL = checker })

	wantRefused(t, "user creates a topic", e.signedCall(protocol.ReqUpdateAndCreateTopic, createTopicExt("open"), nil, aclUserAK, aclUserSK),
		"request UPDATE_AND_CREATE_TOPIC (17) needs an admin account; accessKey=user-key-1 is not admin")
	if _, ok := e.b.Topics().Configs()["open"]; ok {
		t.Fatal("a refused topic create created the topic")
	}
	wantRefused(t, "unsigned create", e.signedCall(protocol.ReqUpdateAndCreateTopic, createTopicExt("open"), nil, "", ""), "carries no AccessKey")
	for _, topic := range []string{"open", "readonly"} {
		wantCode(t, "admin creates "+topic, e.signedCall(protocol.ReqUpdateAndCreateTopic, createTopicExt(topic), nil, aclAdminAK, aclAdminSK), protocol.RespSuccess)
	}

	send := func(topic, ak, sk string) *remoting.Command {
		return e.signedCall(protocol.ReqSendMessageV2, sendHeader(topic, 0, "").ExtFields(true), []byte("body-"+topic), ak, sk)
	}
	wantCode(t, "send to open", send("open", aclUserAK, aclUserSK), protocol.RespSuccess)
	puts := e.store.Puts()
	wantRefused(t, "send to readonly", send("readonly", aclUserAK, aclUserSK),
		"accessKey=user-key-1 has no PUB permission on topic:readonly (request SEND_MESSAGE_V2 (310); topicPerms grants SUB)")
	wantRefused(t, "wrong secret", send("open", aclUserAK, "not-the-secret"), "signature check failed for accessKey=user-key-1")
	wantRefused(t, "unknown key", send("open", "someone-else", aclUserSK), "no account for accessKey=someone-else")
	wantRefused(t, "unsigned send", send("open", "", ""), "carries no AccessKey")
	if got := e.store.Puts(); got != puts {
		t.Fatalf("refused sends stored %d messages", got-puts)
	}
	if n := e.store.MaxOffset("readonly", 0); n != 0 {
		t.Fatalf("readonly queue 0 max offset %d after a refused send", n)
	}

	offset := func(group string) remoting.ExtFields {
		return remoting.ExtFields{"consumerGroup": group, "topic": "open", "queueId": "0", "commitOffset": "1"}
	}
	wantRefused(t, "offset update of a denied group", e.signedCall(protocol.ReqUpdateConsumerOffset, offset("deniedGroup"), nil, aclUserAK, aclUserSK),
		"no SUB permission on group:deniedGroup (request UPDATE_CONSUMER_OFFSET (15); groupPerms grants DENY)")
	if _, ok := e.b.Offsets().Query("deniedGroup", "open", 0); ok {
		t.Fatal("a refused offset update was committed")
	}
	wantCode(t, "offset update", e.signedCall(protocol.ReqUpdateConsumerOffset, offset("okGroup"), nil, aclUserAK, aclUserSK), protocol.RespSuccess)
	if off, ok := e.b.Offsets().Query("okGroup", "open", 0); !ok || off != 1 {
		t.Fatalf("offset of okGroup %d %v, want 1", off, ok)
	}

	pull := remoting.ExtFields{"consumerGroup": "okGroup", "topic": "readonly", "queueId": "0", "queueOffset": "0",
		"maxMsgNums": "32", "sysFlag": "0", "commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0"}
	pull["consumerGroup"] = "deniedGroup"
	wantRefused(t, "pull by a denied group", e.signedCall(protocol.ReqPullMessage, pull, nil, aclUserAK, aclUserSK), "group:deniedGroup")
	pull["consumerGroup"] = "okGroup"
	pull["topic"] = "secret"
	wantRefused(t, "pull of a default-denied topic", e.signedCall(protocol.ReqPullMessage, pull, nil, aclUserAK, aclUserSK),
		"no SUB permission on topic:secret (request PULL_MESSAGE (11); defaultTopicPerm grants DENY)")

	// New rules apply to the next request.
	checker.Store(aclTestRules(t, "open=PUB|SUB", "readonly=PUB"))
	wantCode(t, "send to readonly after the swap", send("readonly", aclUserAK, aclUserSK), protocol.RespSuccess)
	if _, denied := checker.Counts(); denied == 0 {
		t.Fatal("the checker counted no refusals")
	}
}

// TestACLGlobalWhiteAddress: a loopback client in globalWhiteRemoteAddresses
// needs no credentials, admin codes included.
func TestACLGlobalWhiteAddress(t *testing.T) {
	rules, err := acl.Compile(acl.Config{GlobalWhiteRemoteAddresses: []string{"127.0.0.*"}})
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, func(c *broker.Config) { c.ACL = acl.NewChecker(rules) })
	wantCode(t, "unsigned create", e.signedCall(protocol.ReqUpdateAndCreateTopic, createTopicExt("w"), nil, "", ""), protocol.RespSuccess)
	wantCode(t, "unsigned send", e.send("w", 0, "x", ""), protocol.RespSuccess)

	rules, err = acl.Compile(acl.Config{GlobalWhiteRemoteAddresses: []string{"10.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	e.b.Config().ACL.Store(rules)
	wantRefused(t, "unsigned send from a non-white address", e.send("w", 0, "x", ""), "is not a global white address")
}
