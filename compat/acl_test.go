package compat_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/aclfile"
	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// The official Go client signs every request once credentials are given
// (producer.WithCredentials, consumer.WithCredentials,
// admin.WithCredentials): its ACL interceptor adds AccessKey and a
// Signature computed as RocketMQ's AclClientRPCHook does.

const (
	aclAdminKey    = "aclAdmin01"
	aclAdminSecret = "adminSecret01"
	aclUserKey     = "aclUser001"
	aclUserSecret  = "userSecret01"

	aclTopicOpen   = "AclOpen"
	aclTopicDenied = "AclDenied"
	aclGroup       = "acl_cg"
)

// aclYAML is a plain_acl.yml: an admin, and a user who may publish and
// subscribe AclOpen, is denied AclDenied (deniedPerm) and everything else,
// and may act as any consumer group.
func aclYAML(deniedPerm string) string {
	return `globalWhiteRemoteAddresses: []
accounts:
  - accessKey: ` + aclAdminKey + `
    secretKey: ` + aclAdminSecret + `
    admin: true
  - accessKey: ` + aclUserKey + `
    secretKey: ` + aclUserSecret + `
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - ` + aclTopicOpen + `=PUB|SUB
      - ` + aclTopicDenied + `=` + deniedPerm + `
`
}

// startACLCluster starts a name server and a broker over a memstore whose
// ACL is the file at path, reloaded every 100 ms.
func startACLCluster(t *testing.T, path string) (*cluster, *acl.Checker) {
	t.Helper()
	checker, w, err := aclfile.Open(path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, 100*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	ncfg := namesrv.DefaultConfig()
	ncfg.Remoting.Addr = "127.0.0.1:0"
	ncfg.Logger = quiet
	ns := namesrv.New(ncfg)
	if err := ns.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Shutdown(context.Background()) })
	bcfg := broker.DefaultConfig()
	bcfg.ListenAddr = "127.0.0.1:0"
	bcfg.HA.ListenAddr = "127.0.0.1:0"
	bcfg.NamesrvAddrs = []string{ns.Addr()}
	bcfg.AutoCreateTopic = false
	bcfg.Logger = quiet
	bcfg.ACL = checker
	b, err := broker.New(bcfg, broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	c := &cluster{t: t, ns: ns, b: b, listen: b.Addr(), rc: remoting.NewClient(ccfg),
		nsr: primitive.NewPassthroughResolver([]string{ns.Addr()})}
	t.Cleanup(func() { _ = c.rc.Close() })
	return c, checker
}

// aclCreateTopic creates topic with the official admin signing as key. The
// admin registers its ACL interceptor only in GetAllSubscriptionGroup (its
// CreateTopic alone sends unsigned), and it ignores the response code of
// CreateTopic: the call is made, and the caller checks the broker's topics.
func aclCreateTopic(t *testing.T, c *cluster, key, secret, topic string) {
	t.Helper()
	adm, err := admin.NewAdmin(admin.WithResolver(c.nsr), admin.WithCredentials(primitive.Credentials{AccessKey: key, SecretKey: secret}))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := adm.GetAllSubscriptionGroup(ctx, c.b.Addr(), 3*time.Second); err != nil {
		t.Fatalf("GetAllSubscriptionGroup as %s: %v", key, err)
	}
	if err := adm.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.b.Addr()),
		admin.WithReadQueueNums(2), admin.WithWriteQueueNums(2)); err != nil {
		t.Fatalf("CreateTopic %s as %s: %v", topic, key, err)
	}
}

func hasTopic(c *cluster, topic string) bool {
	_, ok := c.b.Topics().Configs()[topic]
	return ok
}

func aclProducer(t *testing.T, c *cluster, key, secret string) syncProducer {
	t.Helper()
	p, err := producer.NewDefaultProducer(producer.WithNsResolver(c.nsr), producer.WithGroupName("acl_pg"),
		producer.WithRetry(0), producer.WithInstanceName("acl-"+key+"-"+secret),
		producer.WithCredentials(primitive.Credentials{AccessKey: key, SecretKey: secret}))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

func wantSendRefused(t *testing.T, p syncProducer, topic, remark string) {
	t.Helper()
	_, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("refused")))
	if err == nil || !strings.Contains(err.Error(), "CODE: 16") || !strings.Contains(err.Error(), remark) {
		t.Fatalf("send to %s: err %v, want NO_PERMISSION (16) saying %q", topic, err, remark)
	}
}

// TestACLOfficialClientCredentials: with the right keys the official client
// sends and consumes; a non-admin cannot create a topic, a wrong secret is
// refused, a denied topic is refused, and a changed ACL file takes effect
// without a restart.
func TestACLOfficialClientCredentials(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	if err := os.WriteFile(path, []byte(aclYAML("DENY")), 0o600); err != nil {
		t.Fatal(err)
	}
	c, checker := startACLCluster(t, path)

	// A normal account may not create topics; the admin may.
	_, deniedBefore := checker.Counts()
	aclCreateTopic(t, c, aclUserKey, aclUserSecret, aclTopicOpen)
	if hasTopic(c, aclTopicOpen) {
		t.Fatal("a non-admin account created a topic")
	}
	if _, denied := checker.Counts(); denied == deniedBefore {
		t.Fatal("the non-admin topic create was not refused by the ACL")
	}
	for _, topic := range []string{aclTopicOpen, aclTopicDenied} {
		aclCreateTopic(t, c, aclAdminKey, aclAdminSecret, topic)
		if !hasTopic(c, topic) {
			t.Fatalf("the admin account did not create %s", topic)
		}
		c.waitRoute(topic)
	}

	// The right key sends and consumes.
	p := aclProducer(t, c, aclUserKey, aclUserSecret)
	want := bodies("acl", 10)
	for _, b := range want {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(aclTopicOpen, []byte(b))); err != nil {
			t.Fatalf("send with the right key: %v", err)
		}
	}
	rec := newReceived()
	startConsumer(t, c, aclGroup, "acl-consumer", aclTopicOpen, rec,
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithCredentials(primitive.Credentials{AccessKey: aclUserKey, SecretKey: aclUserSecret}))
	waitUntil(t, "the messages sent with the right key", 15*time.Second, func() bool { return rec.has("", want) })

	// A wrong secret is refused, and so is a topic the account is denied.
	wrong := aclProducer(t, c, aclUserKey, "not-the-secret")
	wantSendRefused(t, wrong, aclTopicOpen, "signature check failed for accessKey="+aclUserKey)
	wantSendRefused(t, p, aclTopicDenied, "accessKey="+aclUserKey+" has no PUB permission on topic:"+aclTopicDenied)
	// (c.maxOffset asks the broker unsigned, which the ACL refuses: read the store.)
	if n := c.b.Store().MaxOffset(aclTopicDenied, 0) + c.b.Store().MaxOffset(aclTopicDenied, 1); n != 0 {
		t.Fatalf("refused sends stored %d messages", n)
	}

	// Reload: grant PUB on the denied topic in the file; the next sends pass.
	if err := os.WriteFile(path, []byte(aclYAML("PUB")), 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the reloaded ACL to allow "+aclTopicDenied, 10*time.Second, func() bool {
		_, err := p.SendSync(context.Background(), primitive.NewMessage(aclTopicDenied, []byte("after-reload")))
		return err == nil
	})
}
