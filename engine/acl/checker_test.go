package acl

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

const (
	ak1 = "RocketMQ" // a normal account
	sk1 = "12345678"
	ak2 = "rocketmq2" // an admin
	sk2 = "87654321"
)

func testRules(t *testing.T) *Rules {
	t.Helper()
	r, err := Compile(Config{
		GlobalWhiteRemoteAddresses: []string{"10.10.103.*", "192.168.0.{1,2}"},
		Accounts: []Account{
			{AccessKey: ak1, SecretKey: sk1, WhiteRemoteAddress: "", DefaultTopicPerm: "DENY", DefaultGroupPerm: "SUB",
				TopicPerms: []string{"topicA=DENY", "topicB=PUB|SUB", "topicC=SUB", "topicP=PUB"},
				GroupPerms: []string{"groupA=DENY", "groupB=PUB|SUB", "groupC=SUB"}},
			{AccessKey: ak2, SecretKey: sk2, WhiteRemoteAddress: "192.168.1.*", Admin: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func signed(code int32, ext map[string]string, body []byte, ak, sk string) Request {
	Sign(ext, body, 317, ak, sk, "")
	return Request{Code: code, Version: 317, RemoteAddr: "127.0.0.1:40000", Ext: ext, Body: body}
}

func wantDenied(t *testing.T, err error, substr string) {
	t.Helper()
	var d *DeniedError
	if !errors.Is(err, ErrDenied) || !errors.As(err, &d) {
		t.Fatalf("err %v, want a DeniedError", err)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("remark %q does not say %q", err, substr)
	}
}

// TestPermissionMatrix walks each request code's resources through the
// explicit and default permissions of a non-admin account.
func TestPermissionMatrix(t *testing.T) {
	r := testRules(t)
	hb := func(group string, topics ...string) []byte {
		s := `{"clientID":"c@1","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[{"groupName":"` + group + `","subscriptionDataSet":[`
		for i, tp := range topics {
			if i > 0 {
				s += ","
			}
			s += `{"topic":"` + tp + `","subString":"*"}`
		}
		return []byte(s + `]}]}`)
	}
	cases := []struct {
		name string
		code int32
		ext  map[string]string
		body []byte
		deny string // "" = allowed; otherwise a substring of the remark
	}{
		{"send PUB topic", protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, []byte("m"), ""},
		{"send PUB|SUB topic", protocol.ReqSendMessageV2, map[string]string{"b": "topicB"}, nil, ""},
		{"send SUB-only topic", protocol.ReqSendMessageV2, map[string]string{"b": "topicC"}, nil, "no PUB permission on topic:topicC (request 310; topicPerms grants SUB)"},
		{"send DENY topic", protocol.ReqSendBatchMessage, map[string]string{"b": "topicA"}, nil, "no PUB permission on topic:topicA"},
		{"send default DENY topic", protocol.ReqSendMessage, map[string]string{"topic": "other"}, nil, "defaultTopicPerm grants DENY"},
		{"send to a retry topic is SUB on the group", protocol.ReqSendMessageV2, map[string]string{"b": "%RETRY%groupC"}, nil, ""},
		{"send to a denied group's retry topic", protocol.ReqSendMessageV2, map[string]string{"b": "%RETRY%groupA"}, nil, "no SUB permission on group:groupA"},
		{"pull SUB topic, SUB group", protocol.ReqPullMessage, map[string]string{"topic": "topicC", "consumerGroup": "groupC"}, nil, ""},
		{"pull default group SUB", protocol.ReqPullMessage, map[string]string{"topic": "topicB", "consumerGroup": "anyGroup"}, nil, ""},
		{"pull PUB-only topic", protocol.ReqPullMessage, map[string]string{"topic": "topicP", "consumerGroup": "groupC"}, nil, "no SUB permission on topic:topicP"},
		{"pull denied group", protocol.ReqPullMessage, map[string]string{"topic": "topicC", "consumerGroup": "groupA"}, nil, "no SUB permission on group:groupA (request 11; groupPerms grants DENY)"},
		{"lite pull denied topic", protocol.ReqLitePullMessage, map[string]string{"topic": "topicA", "consumerGroup": "groupC"}, nil, "topic:topicA"},
		{"query offset", protocol.ReqQueryConsumerOffset, map[string]string{"topic": "topicC", "consumerGroup": "groupB"}, nil, ""},
		{"query offset denied group", protocol.ReqQueryConsumerOffset, map[string]string{"topic": "topicC", "consumerGroup": "groupA"}, nil, "group:groupA"},
		{"update offset denied topic", protocol.ReqUpdateConsumerOffset, map[string]string{"topic": "topicA", "consumerGroup": "groupC"}, nil, "topic:topicA"},
		{"send back to a SUB group", protocol.ReqConsumerSendMsgBack, map[string]string{"group": "groupB"}, nil, ""},
		{"send back to a denied group", protocol.ReqConsumerSendMsgBack, map[string]string{"group": "groupA"}, nil, "group:groupA"},
		{"heartbeat", protocol.ReqHeartBeat, nil, hb("groupC", "topicC", "topicB"), ""},
		{"heartbeat subscribing a denied topic", protocol.ReqHeartBeat, nil, hb("groupC", "topicC", "topicA"), "topic:topicA"},
		{"heartbeat of a denied group", protocol.ReqHeartBeat, nil, hb("groupA", "topicC"), "group:groupA"},
		{"heartbeat body garbage", protocol.ReqHeartBeat, nil, []byte("{"), "heartbeat body"},
		{"consumer list of a denied group", protocol.ReqGetConsumerListByGroup, map[string]string{"consumerGroup": "groupA"}, nil, "group:groupA"},
		{"unregister producer only", protocol.ReqUnregisterClient, map[string]string{"producerGroup": "pg", "clientID": "c"}, nil, ""},
		{"query message denied topic", protocol.ReqQueryMessage, map[string]string{"topic": "topicA", "key": "k"}, nil, "topic:topicA"},
		{"a code without resources", 30, map[string]string{"topic": "topicA", "queueId": "0"}, nil, ""},
		{"create topic", protocol.ReqUpdateAndCreateTopic, map[string]string{"topic": "topicB"}, nil, "needs an admin account; accessKey=RocketMQ is not admin"},
		{"delete topic", protocol.ReqDeleteTopicInBroker, map[string]string{"topic": "topicB"}, nil, "needs an admin"},
		{"subscription group create", protocol.ReqUpdateAndCreateSubscriptionGroup, nil, []byte("{}"), "needs an admin"},
		{"broker config update", protocol.ReqUpdateBrokerConfig, nil, nil, "needs an admin"},
		{"reset offset", protocol.ReqInvokeBrokerToResetOffset, map[string]string{"topic": "topicC", "group": "groupC"}, nil, "needs an admin"},
	}
	for _, c := range cases {
		ext := map[string]string{}
		for k, v := range c.ext {
			ext[k] = v
		}
		err := r.Check(signed(c.code, ext, c.body, ak1, sk1))
		if c.deny == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.deny) || !errors.Is(err, ErrDenied) {
			t.Errorf("%s: err %v, want a refusal saying %q", c.name, err, c.deny)
		}
	}
	// The admin account passes everything, admin codes included.
	for _, c := range cases {
		if c.code == protocol.ReqHeartBeat && c.deny == "heartbeat body" {
			continue
		}
		ext := map[string]string{}
		for k, v := range c.ext {
			ext[k] = v
		}
		if err := r.Check(signed(c.code, ext, c.body, ak2, sk2)); err != nil {
			t.Errorf("admin %s: %v", c.name, err)
		}
	}
}

func TestSignatureAndIdentity(t *testing.T) {
	r := testRules(t)
	ok := signed(protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, []byte("body"), ak1, sk1)
	if err := r.Check(ok); err != nil {
		t.Fatal(err)
	}
	wrong := signed(protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, []byte("body"), ak1, "wrong-secret")
	wantDenied(t, r.Check(wrong), "signature check failed for accessKey=RocketMQ")

	// Changing a field or the body after signing breaks the signature.
	tampered := signed(protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, []byte("body"), ak1, sk1)
	tampered.Ext["topic"] = "topicB"
	wantDenied(t, r.Check(tampered), "signature check failed")
	tampered = signed(protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, []byte("body"), ak1, sk1)
	tampered.Body = []byte("other")
	wantDenied(t, r.Check(tampered), "signature check failed")

	noSig := signed(protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, nil, ak1, sk1)
	delete(noSig.Ext, FieldSignature)
	wantDenied(t, r.Check(noSig), "signature check failed")

	anon := Request{Code: protocol.ReqSendMessage, RemoteAddr: "127.0.0.1:1", Ext: map[string]string{"topic": "topicP"}}
	wantDenied(t, r.Check(anon), "carries no AccessKey and 127.0.0.1:1 is not a global white address")
	anon.Ext = nil
	anon.CodeName = "SEND_MESSAGE"
	wantDenied(t, r.Check(anon), "request SEND_MESSAGE (10) carries no AccessKey")

	unknown := signed(protocol.ReqSendMessage, map[string]string{"topic": "topicP"}, nil, "nobody-here", sk1)
	wantDenied(t, r.Check(unknown), "no account for accessKey=nobody-here")

	// The security token is part of the signed content.
	tok := map[string]string{"topic": "topicP"}
	Sign(tok, nil, 317, ak1, sk1, "session-token")
	if err := r.Check(Request{Code: protocol.ReqSendMessage, Version: 317, RemoteAddr: "127.0.0.1:1", Ext: tok}); err != nil {
		t.Fatalf("with a security token: %v", err)
	}
	tok[FieldSecurityToken] = "other-token"
	wantDenied(t, r.Check(Request{Code: protocol.ReqSendMessage, Version: 317, RemoteAddr: "127.0.0.1:1", Ext: tok}), "signature")
}

func TestWhiteAddresses(t *testing.T) {
	r := testRules(t)
	// Globally white: no credentials at all, even for admin codes.
	for _, addr := range []string{"10.10.103.7:5000", "192.168.0.2:1"} {
		if err := r.Check(Request{Code: protocol.ReqUpdateAndCreateTopic, RemoteAddr: addr}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := r.Check(Request{Code: protocol.ReqUpdateAndCreateTopic, RemoteAddr: "192.168.0.3:1"}); err == nil {
		t.Error("192.168.0.3 is not white")
	}
	// The admin account's white address skips the signature (RocketMQ).
	req := Request{Code: protocol.ReqSendMessage, RemoteAddr: "192.168.1.20:1", Ext: map[string]string{FieldAccessKey: ak2, "topic": "x"}}
	if err := r.Check(req); err != nil {
		t.Fatalf("account white address: %v", err)
	}
	req.RemoteAddr = "192.168.2.20:1"
	wantDenied(t, r.Check(req), "signature check failed for accessKey=rocketmq2")
	// A white address is per account: another key from there is still checked.
	req = Request{Code: protocol.ReqSendMessage, RemoteAddr: "192.168.1.20:1", Ext: map[string]string{FieldAccessKey: ak1, "topic": "topicP"}}
	wantDenied(t, r.Check(req), "signature check failed for accessKey=RocketMQ")
}

func TestTraceTopicNeedsOnlyTheSignature(t *testing.T) {
	r := testRules(t)
	if err := r.Check(signed(protocol.ReqSendMessageV2, map[string]string{"b": TraceTopic}, nil, ak1, sk1)); err != nil {
		t.Fatal(err)
	}
	wantDenied(t, r.Check(signed(protocol.ReqSendMessageV2, map[string]string{"b": TraceTopic}, nil, ak1, "badsecret")), "signature")
}

func TestCompileErrors(t *testing.T) {
	good := Account{AccessKey: "abcdefg", SecretKey: "1234567"}
	cases := map[string]Config{
		"short access key": {Accounts: []Account{{AccessKey: "abcdef", SecretKey: "1234567"}}},
		"short secret key": {Accounts: []Account{{AccessKey: "abcdefg", SecretKey: "123456"}}},
		"duplicate key":    {Accounts: []Account{good, good}},
		"bad perm":         {Accounts: []Account{{AccessKey: "abcdefg", SecretKey: "1234567", DefaultTopicPerm: "PUB | SUB"}}},
		"bad entry":        {Accounts: []Account{{AccessKey: "abcdefg", SecretKey: "1234567", TopicPerms: []string{"topicA"}}}},
		"entry two =":      {Accounts: []Account{{AccessKey: "abcdefg", SecretKey: "1234567", GroupPerms: []string{"g=SUB=PUB"}}}},
		"entry bad perm":   {Accounts: []Account{{AccessKey: "abcdefg", SecretKey: "1234567", GroupPerms: []string{"g=READ"}}}},
		"bad white":        {Accounts: []Account{{AccessKey: "abcdefg", SecretKey: "1234567", WhiteRemoteAddress: "1.2.3"}}},
		"bad global":       {GlobalWhiteRemoteAddresses: []string{"10.0.0.300"}},
	}
	for name, cfg := range cases {
		if _, err := Compile(cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: err %v, want ErrBadConfig", name, err)
		}
	}
	if _, err := Compile(Config{Accounts: []Account{good}}); err != nil {
		t.Fatal(err)
	}
}

func TestPermAllows(t *testing.T) {
	perms := []Perm{PermDeny, PermPub, PermSub, PermPubSub, PermDeny | PermPubSub}
	want := map[Perm][3]bool{ // needed PUB, SUB, ANY
		PermDeny:              {false, false, false},
		PermPub:               {true, false, true},
		PermSub:               {false, true, true},
		PermPubSub:            {true, true, true},
		PermDeny | PermPubSub: {false, false, false},
	}
	for _, owned := range perms {
		for i, needed := range []Perm{PermPub, PermSub, PermAny} {
			if got := owned.Allows(needed); got != want[owned][i] {
				t.Errorf("%v allows %v = %v", owned, needed, got)
			}
		}
	}
	for s, p := range map[string]Perm{"PUB": PermPub, " SUB ": PermSub, "PUB|SUB": PermPubSub, "SUB|PUB": PermPubSub, "DENY": PermDeny} {
		if got, err := ParsePerm(s); err != nil || got != p {
			t.Errorf("ParsePerm(%q) = %v, %v", s, got, err)
		}
	}
}

func TestCheckerSwapsRules(t *testing.T) {
	c := NewChecker(testRules(t))
	req := func() Request {
		return signed(protocol.ReqSendMessage, map[string]string{"topic": "topicA"}, nil, ak1, sk1)
	}
	if err := c.Check(req()); err == nil {
		t.Fatal("topicA is denied")
	}
	c.Store(MustCompile(Config{Accounts: []Account{{AccessKey: ak1, SecretKey: sk1, TopicPerms: []string{"topicA=PUB"}}}}))
	if err := c.Check(req()); err != nil {
		t.Fatalf("after the swap: %v", err)
	}
	if a, d := c.Counts(); a != 1 || d != 1 {
		t.Fatalf("counts %d allowed %d denied, want 1 and 1", a, d)
	}
}
