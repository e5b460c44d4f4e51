package proxy_test

import (
	"context"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brokerlab/brokerlab/engine/broker"
)

func txnMessage(topic, id, body string) *v2.Message {
	m := message(topic, id, body)
	m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	return m
}

// producerSession opens a Telemetry stream announcing a producer of topics.
func (e *env) producerSession(ctx context.Context, topics ...string) v2.MessagingService_TelemetryClient {
	e.t.Helper()
	st, err := e.cli.Telemetry(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var rs []*v2.Resource
	for _, t := range topics {
		rs = append(rs, res(t))
	}
	ct := v2.ClientType_PRODUCER
	if err := st.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{ClientType: &ct,
		PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: rs}}}}}); err != nil {
		e.t.Fatal(err)
	}
	if r, err := st.Recv(); err != nil || r.GetSettings() == nil {
		e.t.Fatalf("settings reply %v %v", r, err)
	}
	return st
}

func (e *env) endTxn(ctx context.Context, topic string, entry *v2.SendResultEntry, r v2.TransactionResolution, src v2.TransactionSource) *v2.Status {
	e.t.Helper()
	resp, err := e.cli.EndTransaction(ctx, &v2.EndTransactionRequest{Topic: res(topic), MessageId: entry.MessageId,
		TransactionId: entry.TransactionId, Resolution: r, Source: src})
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.Status
}

func TestTransactionCommitRollback(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("TxT", 1, "TRANSACTION")
	ctx := callCtx(t, "c-tx", "", "")
	a := e.send(ctx, txnMessage("TxT", "TX-A", "commit me"))
	b := e.send(ctx, txnMessage("TxT", "TX-B", "roll me back"))
	if a.Status.Code != v2.Code_OK || b.Status.Code != v2.Code_OK {
		t.Fatalf("half sends: %v %v", a.Status, b.Status)
	}
	if st := e.endTxn(ctx, "TxT", b.Entries[0], v2.TransactionResolution_ROLLBACK, v2.TransactionSource_SOURCE_CLIENT); st.Code != v2.Code_OK {
		t.Fatalf("rollback: %v", st)
	}
	if st := e.endTxn(ctx, "TxT", a.Entries[0], v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_CLIENT); st.Code != v2.Code_OK {
		t.Fatalf("commit: %v", st)
	}
	msgs := e.pullAll(ctx, "TxG", "TxT", 1, 1)
	if len(msgs) != 1 || string(msgs[0].Body) != "commit me" {
		t.Fatalf("after commit and rollback: %v", msgs)
	}
	if st, _, _ := e.pull(ctx, "TxG", "TxT", 0, 1, 0); st.Code == v2.Code_OK {
		t.Fatal("the rolled back message was delivered")
	}
	// A transaction id the proxy never saw.
	if st := e.endTxn(ctx, "TxT", &v2.SendResultEntry{TransactionId: "nope"}, v2.TransactionResolution_COMMIT,
		v2.TransactionSource_SOURCE_CLIENT); st.Code != v2.Code_INVALID_TRANSACTION_ID {
		t.Fatalf("unknown transaction: %v", st)
	}
}

func TestTransactionCheckBack(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) {
		c.TransactionCheckInterval = 50 * time.Millisecond
		c.TransactionTimeout = 0
	}, nil)
	e.topic("TxCheck", 1, "TRANSACTION")
	ctx := callCtx(t, "c-check", "", "")
	sess := e.producerSession(ctx, "TxCheck")
	sent := e.send(ctx, txnMessage("TxCheck", "TX-C", "decided by the check"))
	if sent.Status.Code != v2.Code_OK {
		t.Fatalf("half: %v", sent.Status)
	}
	var cmd *v2.RecoverOrphanedTransactionCommand
	for cmd == nil {
		r, err := sess.Recv()
		if err != nil {
			t.Fatalf("waiting for the check: %v", err)
		}
		cmd = r.GetRecoverOrphanedTransactionCommand()
	}
	if cmd.Message.Topic.Name != "TxCheck" || cmd.Message.SystemProperties.MessageId != "TX-C" || string(cmd.Message.Body) != "decided by the check" {
		t.Fatalf("check command: %v", cmd)
	}
	entry := &v2.SendResultEntry{MessageId: "TX-C", TransactionId: cmd.TransactionId}
	if st := e.endTxn(ctx, "TxCheck", entry, v2.TransactionResolution_COMMIT, v2.TransactionSource_SOURCE_SERVER_CHECK); st.Code != v2.Code_OK {
		t.Fatalf("commit from the check: %v", st)
	}
	msgs := e.pullAll(ctx, "TxCG", "TxCheck", 1, 1)
	if string(msgs[0].Body) != "decided by the check" {
		t.Fatalf("committed: %v", msgs[0])
	}
}

func TestSendDelayed(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.TimerPrecision = 10 * time.Millisecond }, nil)
	e.topic("DelayT", 1, "DELAY")
	ctx := callCtx(t, "c-delay", "", "")
	m := message("DelayT", "D-1", "later")
	m.SystemProperties.MessageType = v2.MessageType_DELAY
	due := time.Now().Add(300 * time.Millisecond)
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(due)
	if r := e.send(ctx, m); r.Status.Code != v2.Code_OK {
		t.Fatalf("send: %v", r.Status)
	}
	msgs := e.pullAll(ctx, "DG", "DelayT", 1, 1)
	if time.Now().Before(due) {
		t.Fatal("delivered before its delivery time")
	}
	if string(msgs[0].Body) != "later" || msgs[0].SystemProperties.MessageType != v2.MessageType_DELAY {
		t.Fatalf("delayed message: %v", msgs[0])
	}
}
