package proxy_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"log/slog"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/proxy"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const waitLimit = 10 * time.Second

// env is a broker over a memstore with its gRPC front end, both on loopback,
// and a gRPC client of it.
type env struct {
	t   *testing.T
	b   *broker.Broker
	p   *proxy.Server
	cli v2.MessagingServiceClient
}

func startEnv(t *testing.T, mutateBroker func(*broker.Config), mutateProxy func(*proxy.Config)) *env {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Logger = quiet
	cfg.RegisterInterval = time.Hour
	cfg.SendQueueMaxWait = 10 * time.Second
	if mutateBroker != nil {
		mutateBroker(&cfg)
	}
	b, err := broker.New(cfg, broker.WithStore(memstore.New()))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	pc := proxy.Config{Listen: "127.0.0.1:0", Broker: b, Logger: quiet}
	if mutateProxy != nil {
		mutateProxy(&pc)
	}
	p, err := proxy.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	conn, err := grpc.NewClient(p.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &env{t: t, b: b, p: p, cli: v2.NewMessagingServiceClient(conn)}
}

// topic creates a topic with queues queues and message.type typ ("" = none).
func (e *env) topic(name string, queues int32, typ string) {
	e.t.Helper()
	tc := protocol.NewTopicConfig(name, queues)
	if typ != "" {
		tc.Attributes["message.type"] = typ
	}
	if _, err := e.b.Topics().Put(tc); err != nil {
		e.t.Fatal(err)
	}
}

// ctx is a call context carrying the client id clientID and, with ak set,
// a v5 signature over the date.
func callCtx(t *testing.T, clientID, ak, sk string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	now := time.Now().UTC().Format("20060102T150405Z")
	kv := []string{"x-mq-client-id", clientID, "x-mq-language", "GOLANG", "x-mq-protocol", "v2", "x-mq-date-time", now}
	if ak != "" {
		h := hmac.New(sha1.New, []byte(sk))
		h.Write([]byte(now))
		kv = append(kv, "authorization", "MQv2-HMAC-SHA1 Credential="+ak+"//ROCKETMQ, SignedHeaders=x-mq-date-time, Signature="+hex.EncodeToString(h.Sum(nil)))
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func res(name string) *v2.Resource { return &v2.Resource{Name: name} }

func ptr[T any](v T) *T { return &v }

// message is a v5 message of topic with body and id.
func message(topic, id, body string) *v2.Message {
	return &v2.Message{Topic: res(topic), Body: []byte(body),
		SystemProperties: &v2.SystemProperties{MessageId: id, MessageType: v2.MessageType_NORMAL, Tag: ptr("tagA"), Keys: []string{"k1"}}}
}

func (e *env) send(ctx context.Context, msgs ...*v2.Message) *v2.SendMessageResponse {
	e.t.Helper()
	resp, err := e.cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: msgs})
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// pull reads queue qid of topic from offset as group.
func (e *env) pull(ctx context.Context, group, topic string, qid int32, offset int64, poll time.Duration) (*v2.Status, []*v2.Message, int64) {
	e.t.Helper()
	st, err := e.cli.PullMessage(ctx, &v2.PullMessageRequest{Group: res(group), MessageQueue: &v2.MessageQueue{Topic: res(topic), Id: qid},
		Offset: offset, BatchSize: 32, LongPollingTimeout: durpb(poll)})
	if err != nil {
		e.t.Fatal(err)
	}
	var status *v2.Status
	var msgs []*v2.Message
	next := int64(-1)
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			e.t.Fatal(err)
		}
		switch c := r.Content.(type) {
		case *v2.PullMessageResponse_Status:
			status = c.Status
		case *v2.PullMessageResponse_Message:
			msgs = append(msgs, c.Message)
		case *v2.PullMessageResponse_NextOffset:
			next = c.NextOffset
		}
	}
	return status, msgs, next
}

// pullAll reads every queue of topic from 0 until n messages arrived.
func (e *env) pullAll(ctx context.Context, group, topic string, queues int32, n int) []*v2.Message {
	e.t.Helper()
	var out []*v2.Message
	offsets := make([]int64, queues)
	deadline := time.Now().Add(waitLimit)
	for len(out) < n && time.Now().Before(deadline) {
		for q := range queues {
			st, msgs, next := e.pull(ctx, group, topic, q, offsets[q], 0)
			if st.GetCode() == v2.Code_OK {
				out = append(out, msgs...)
				offsets[q] = next
			}
		}
	}
	if len(out) < n {
		e.t.Fatalf("pulled %d messages of %d", len(out), n)
	}
	return out
}
