package broker_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// txnConfig sets the transaction check knobs.
func txnConfig(interval, timeout time.Duration, checkMax int) func(*broker.Config) {
	return func(c *broker.Config) {
		c.TransactionCheckInterval, c.TransactionTimeout, c.TransactionCheckMax = interval, timeout, checkMax
	}
}

// producerHeartbeat registers e.client's connection as a member of
// producer group pg.
func (e *env) producerHeartbeat(pg string) {
	e.t.Helper()
	body, err := json.Marshal(broker.HeartbeatData{ClientID: "txn@1", ProducerDataSet: []broker.ProducerData{{GroupName: pg}},
		ConsumerDataSet: []broker.ConsumerData{}})
	if err != nil {
		e.t.Fatal(err)
	}
	wantCode(e.t, "producer heartbeat", e.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess)
}

// halfSent is what a producer learns from sending a half message.
type halfSent struct {
	uniq        string
	queueOffset int64
	physOffset  int64
}

// sendHalf sends a half message of producer group "pg" to topic/queue 0 as
// the Go transaction producer does (TRAN_MSG, PGROUP, SYSFLAG prepared).
func (e *env) sendHalf(topic, body string) halfSent {
	e.t.Helper()
	uniq := record.NewUniqID()
	h := sendHeader(topic, 0, props(record.PropertyTransactionPrepared, "true", record.PropertyProducerGroup, "pg",
		record.PropertyUniqKey, uniq, record.PropertyTags, "tx"))
	h.SysFlag = record.TransactionPrepared
	resp := e.call(protocol.ReqSendMessageV2, h.ExtFields(true), []byte(body))
	wantCode(e.t, "send half", resp, protocol.RespSuccess)
	_, phys, err := record.ParseOffsetMsgID(resp.ExtFields["msgId"])
	if err != nil {
		e.t.Fatalf("half msgId %q: %v", resp.ExtFields["msgId"], err)
	}
	if resp.ExtFields["transactionId"] != uniq || extInt(e.t, resp, "queueId") != 0 {
		e.t.Fatalf("half send reply %v", resp.ExtFields)
	}
	return halfSent{uniq: uniq, queueOffset: extInt(e.t, resp, "queueOffset"), physOffset: phys}
}

func endTxnExt(pg string, queueOffset, physOffset int64, state int32, fromCheck bool, uniq string) remoting.ExtFields {
	ext := remoting.ExtFields{"producerGroup": pg, "msgId": uniq, "transactionId": uniq}
	ext.SetInt64("tranStateTableOffset", queueOffset)
	ext.SetInt64("commitLogOffset", physOffset)
	ext.SetInt32("commitOrRollback", state)
	ext.SetBool("fromTransactionCheck", fromCheck)
	return ext
}

// endOneway sends END_TRANSACTION oneway, as the Go client does.
func (e *env) endOneway(ext remoting.ExtFields) {
	e.t.Helper()
	if err := e.client.InvokeOneway(context.Background(), e.b.Addr(), remoting.NewRequest(protocol.ReqEndTransaction, ext)); err != nil {
		e.t.Fatal(err)
	}
}

// records pulls every record of queue 0 of topic.
func (e *env) records(topic string) []record.Record {
	e.t.Helper()
	resp := e.pull("reader", topic, 0, 0, 64)
	if resp.Code != protocol.RespSuccess {
		return nil
	}
	return decodeAll(e.t, resp.Body)
}

// nextCheck waits for the broker's next CHECK_TRANSACTION_STATE push.
func (e *env) nextCheck(within time.Duration) *remoting.Command {
	e.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case req := <-e.pushes:
			if req.Code == protocol.ReqCheckTransactionState {
				return req
			}
		case <-deadline:
			return nil
		}
	}
}

// drainChecks lets scans in flight finish and drops the checks they sent.
func (e *env) drainChecks() {
	time.Sleep(150 * time.Millisecond)
	for {
		select {
		case <-e.pushes:
		default:
			return
		}
	}
}

func TestTxnHalfInvisibleThenCommittedOnce(t *testing.T) {
	e := startEnv(t, txnConfig(50*time.Millisecond, time.Hour, 15))
	e.createTopic("T", 1)
	h := e.sendHalf("T", "payload")

	if n := e.maxOffset("T", 0); n != 0 {
		t.Fatalf("real topic holds %d messages before the commit", n)
	}
	wantCode(t, "pull before commit", e.pull("g", "T", 0, 0, 32), protocol.RespPullNotFound)
	half := e.onlyRecord(protocol.TransHalfTopic)
	if prop(half, record.PropertyRealTopic) != "T" || prop(half, record.PropertyRealQueueID) != "0" ||
		prop(half, broker.PropertyTransactionID) != h.uniq || record.TransactionType(half.SysFlag) != record.TransactionNot ||
		half.PhysicalOffset != h.physOffset || half.QueueOffset != h.queueOffset {
		t.Fatalf("half record %+v props %q", half, half.Properties)
	}

	// Wrong producer group, offsets: refused, nothing stored.
	wantCode(t, "wrong group", e.call(protocol.ReqEndTransaction, endTxnExt("other", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespSystemError)
	wantCode(t, "wrong queue offset", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset+5, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespSystemError)
	wantCode(t, "no half there", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset+1, record.TransactionCommit, false, h.uniq), nil), protocol.RespSystemError)
	wantCode(t, "bad state", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, 3, false, h.uniq), nil), protocol.RespSystemError)
	if n := e.maxOffset("T", 0); n != 0 {
		t.Fatalf("a refused end stored %d messages", n)
	}

	e.endOneway(endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq))
	eventually(t, "the commit", func() bool { return e.maxOffset("T", 0) == 1 })
	got := e.onlyRecord("T")
	if string(got.Body) != "payload" || prop(got, record.PropertyUniqKey) != h.uniq || prop(got, record.PropertyTags) != "tx" ||
		prop(got, record.PropertyRealTopic) != "" || prop(got, record.PropertyTransactionPrepared) != "" ||
		record.TransactionType(got.SysFlag) != record.TransactionCommit || got.PreparedTransactionOffset != h.physOffset {
		t.Fatalf("committed record %+v props %q", got, got.Properties)
	}
	op := e.onlyRecord(protocol.TransOpHalfTopic)
	if string(op.Body) != strconv.FormatInt(h.queueOffset, 10) || prop(op, record.PropertyTags) != "d" {
		t.Fatalf("op record body %q tags %q", op.Body, prop(op, record.PropertyTags))
	}

	// Ending it again stores nothing more.
	wantCode(t, "second commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespSuccess)
	wantCode(t, "rollback after commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionRollback, false, h.uniq), nil), protocol.RespSuccess)
	if n := e.maxOffset("T", 0); n != 1 {
		t.Fatalf("real topic holds %d messages after repeated ends", n)
	}
	// The check service passes the resolved half.
	eventually(t, "the half offset to advance", func() bool {
		off, ok := e.b.Offsets().Query(broker.TransGroup, protocol.TransHalfTopic, 0)
		return ok && off == 1
	})
}

func TestTxnRollbackNeverVisibleNorChecked(t *testing.T) {
	e := startEnv(t, txnConfig(30*time.Millisecond, 150*time.Millisecond, 15))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "never")
	wantCode(t, "rollback", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionRollback, false, h.uniq), nil), protocol.RespSuccess)
	if op := e.onlyRecord(protocol.TransOpHalfTopic); string(op.Body) != "0" {
		t.Fatalf("op record %q", op.Body)
	}
	eventually(t, "the scan to pass the half and its op record", func() bool {
		half, ok1 := e.b.Offsets().Query(broker.TransGroup, protocol.TransHalfTopic, 0)
		op, ok2 := e.b.Offsets().Query(broker.TransGroup, protocol.TransOpHalfTopic, 0)
		return ok1 && ok2 && half == 1 && op == 1
	})
	if req := e.nextCheck(200 * time.Millisecond); req != nil {
		t.Fatalf("a rolled-back half was checked: %v", req.ExtFields)
	}
	if n := e.maxOffset("T", 0); n != 0 {
		t.Fatalf("rolled-back message visible (%d)", n)
	}
}

func TestTxnUnknownIsCheckedThenCommittedByTheAnswer(t *testing.T) {
	e := startEnv(t, txnConfig(50*time.Millisecond, 200*time.Millisecond, 15))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "later")
	wantCode(t, "unknown", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionNot, false, h.uniq), nil), protocol.RespSuccess)

	req := e.nextCheck(waitLimit)
	if req == nil {
		t.Fatal("no CHECK_TRANSACTION_STATE")
	}
	if req.ExtFields["msgId"] != h.uniq || req.ExtFields["transactionId"] != h.uniq {
		t.Fatalf("check header %v", req.ExtFields)
	}
	tso, _ := req.ExtFields.Int64("tranStateTableOffset")
	clo, _ := req.ExtFields.Int64("commitLogOffset")
	if _, off, err := record.ParseOffsetMsgID(req.ExtFields["offsetMsgId"]); err != nil || off != clo || tso <= h.queueOffset {
		t.Fatalf("check header %v", req.ExtFields)
	}
	msg, err := record.Decode(req.Body, true)
	if err != nil {
		t.Fatalf("check body: %v", err)
	}
	if string(msg.Topic) != "T" || msg.QueueID != 0 || string(msg.Body) != "later" || msg.QueueOffset != tso || msg.PhysicalOffset != clo ||
		prop(msg, record.PropertyUniqKey) != h.uniq || prop(msg, record.PropertyProducerGroup) != "pg" ||
		prop(msg, broker.PropertyTransactionCheckTimes) != "1" ||
		prop(msg, broker.PropertyTransactionPreparedQueueOffset) != strconv.FormatInt(h.queueOffset, 10) {
		t.Fatalf("check body %+v props %q", msg, msg.Properties)
	}
	if n := e.maxOffset("T", 0); n != 0 {
		t.Fatalf("checked half visible (%d)", n)
	}

	// The producer answers with the copy it was shown.
	e.endOneway(endTxnExt("pg", tso, clo, record.TransactionCommit, true, h.uniq))
	eventually(t, "the checked commit", func() bool { return e.maxOffset("T", 0) == 1 })
	e.drainChecks()
	if got := e.onlyRecord("T"); string(got.Body) != "later" || got.PreparedTransactionOffset != clo {
		t.Fatalf("committed %+v", got)
	}
	// A late commit of the first half stores nothing more, and nothing is
	// checked again.
	wantCode(t, "late commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespSuccess)
	if req := e.nextCheck(400 * time.Millisecond); req != nil {
		t.Fatalf("checked again after the commit: %v", req.ExtFields)
	}
	if n := e.maxOffset("T", 0); n != 1 {
		t.Fatalf("real topic holds %d", n)
	}
}

func TestTxnDiscardedAfterMaxChecks(t *testing.T) {
	e := startEnv(t, txnConfig(30*time.Millisecond, 0, 3))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "stuck")

	for i := 1; i <= 3; i++ {
		req := e.nextCheck(waitLimit)
		if req == nil {
			t.Fatalf("check %d missing", i)
		}
		msg, err := record.Decode(req.Body, false)
		if err != nil || prop(msg, broker.PropertyTransactionCheckTimes) != strconv.Itoa(i) {
			t.Fatalf("check %d: times %q (%v)", i, prop(msg, broker.PropertyTransactionCheckTimes), err)
		}
	}
	eventually(t, "the discard", func() bool { return e.maxOffset(protocol.TransCheckMaxTimeTopic, 0) == 1 })
	e.drainChecks()
	if req := e.nextCheck(300 * time.Millisecond); req != nil {
		t.Fatalf("checked after the max: %v", req.ExtFields)
	}
	d := e.onlyRecord(protocol.TransCheckMaxTimeTopic)
	if string(d.Body) != "stuck" || prop(d, record.PropertyUniqKey) != h.uniq || prop(d, record.PropertyRealTopic) != "T" {
		t.Fatalf("discarded %+v props %q", d, d.Properties)
	}
	if n := e.maxOffset("T", 0); n != 0 {
		t.Fatalf("discarded half visible (%d)", n)
	}
}

func TestTxnNoProducerOnlineStillCounts(t *testing.T) {
	// Java re-puts and counts a check even when no producer is connected.
	e := startEnv(t, txnConfig(20*time.Millisecond, 0, 2))
	e.createTopic("T", 1)
	e.sendHalf("T", "orphan")
	eventually(t, "the discard", func() bool { return e.maxOffset(protocol.TransCheckMaxTimeTopic, 0) == 1 })
	if n := e.maxOffset(protocol.TransHalfTopic, 0); n != 3 { // the half and two copies
		t.Fatalf("half queue holds %d", n)
	}
}

// startTxnRealEnv starts a broker over engine/store in dir.
func startTxnRealEnv(t *testing.T, dir, ns string, mutate func(*broker.Config)) (*env, func()) {
	t.Helper()
	e := &env{t: t}
	cfg := testConfig()
	cfg.NamesrvAddrs = []string{ns}
	mutate(&cfg)
	b, err := broker.New(cfg, broker.OpenStore(smallStoreConfig(dir, flush.Kinds()[0]), cfg.DelayLevels))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := b.Shutdown(context.Background()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	e.b = b
	e.client, e.pushes = newClient(t)
	return e, stop
}

func TestTxnSurvivesRestart(t *testing.T) {
	ns := startNamesrv(t)
	dir := t.TempDir()
	// A long timeout first: nothing is checked before the restart.
	e, stop := startTxnRealEnv(t, dir, ns.Addr(), txnConfig(30*time.Millisecond, time.Hour, 15))
	e.createTopic("T", 1)
	committed := e.sendHalf("T", "commit-after-restart")
	pending := e.sendHalf("T", "pending-across-restart")
	rolled := e.sendHalf("T", "rolled-back")
	wantCode(t, "rollback", e.call(protocol.ReqEndTransaction, endTxnExt("pg", rolled.queueOffset, rolled.physOffset, record.TransactionRollback, false, rolled.uniq), nil), protocol.RespSuccess)
	stop()

	e, _ = startTxnRealEnv(t, dir, ns.Addr(), txnConfig(30*time.Millisecond, 0, 15))
	e.producerHeartbeat("pg")
	wantCode(t, "commit after restart", e.call(protocol.ReqEndTransaction, endTxnExt("pg", committed.queueOffset, committed.physOffset, record.TransactionCommit, false, committed.uniq), nil), protocol.RespSuccess)
	eventually(t, "the commit to be dispatched", func() bool { return e.maxOffset("T", 0) == 1 })
	if got := e.onlyRecord("T"); string(got.Body) != "commit-after-restart" {
		t.Fatalf("committed %q", got.Body)
	}

	// The pending half is checked; the rolled-back one never is (the one
	// committed just now may be, if a scan ran before the commit).
	var req *remoting.Command
	for req == nil || req.ExtFields["msgId"] != pending.uniq {
		if req = e.nextCheck(waitLimit); req == nil {
			t.Fatal("pending half not checked after the restart")
		}
		if req.ExtFields["msgId"] == rolled.uniq {
			t.Fatal("a half rolled back before the restart was checked")
		}
	}
	tso, _ := req.ExtFields.Int64("tranStateTableOffset")
	clo, _ := req.ExtFields.Int64("commitLogOffset")
	e.endOneway(endTxnExt("pg", tso, clo, record.TransactionCommit, true, pending.uniq))
	eventually(t, "the checked commit", func() bool { return e.maxOffset("T", 0) == 2 })
	e.drainChecks()
	if req := e.nextCheck(300 * time.Millisecond); req != nil {
		t.Fatalf("checked %s after every half was resolved", req.ExtFields["msgId"])
	}
	recs := e.records("T")
	if len(recs) != 2 || string(recs[1].Body) != "pending-across-restart" {
		t.Fatalf("real topic after restart: %d records", len(recs))
	}
}

func TestTxnBatchWithTransactionBitsRefused(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	var batch []byte
	for _, b := range []string{"a", "b"} {
		batch = record.AppendBatchItem(batch, record.BatchItem{Body: []byte(b)})
	}
	h := sendHeader("T", 0, "")
	h.Batch = true
	h.SysFlag = record.TransactionPrepared
	wantCode(t, "prepared batch", e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), batch), protocol.RespMessageIllegal)
	if e.maxOffset("T", 0) != 0 || e.maxOffset(protocol.TransHalfTopic, 0) != 0 {
		t.Fatal("a refused batch was stored")
	}
}

func TestTxnCheckImmunityTime(t *testing.T) {
	e := startEnv(t, txnConfig(30*time.Millisecond, 0, 15))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	sendImmune := func(body string) halfSent {
		uniq := record.NewUniqID()
		h := sendHeader("T", 0, props(record.PropertyTransactionPrepared, "true", record.PropertyProducerGroup, "pg",
			record.PropertyUniqKey, uniq, broker.PropertyCheckImmunityTime, "1"))
		h.SysFlag = record.TransactionPrepared
		resp := e.call(protocol.ReqSendMessageV2, h.ExtFields(true), []byte(body))
		wantCode(t, "send half", resp, protocol.RespSuccess)
		_, phys, _ := record.ParseOffsetMsgID(resp.ExtFields["msgId"])
		return halfSent{uniq: uniq, queueOffset: extInt(t, resp, "queueOffset"), physOffset: phys}
	}
	start := time.Now()
	a, b := sendImmune("a"), sendImmune("b")
	// Within its immunity a half is ended as usual.
	wantCode(t, "commit a", e.call(protocol.ReqEndTransaction, endTxnExt("pg", a.queueOffset, a.physOffset, record.TransactionCommit, false, a.uniq), nil), protocol.RespSuccess)

	req := e.nextCheck(waitLimit)
	if req == nil {
		t.Fatal("b was never checked")
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("checked after %v, inside the 1 s immunity", waited)
	}
	if req.ExtFields["msgId"] != b.uniq {
		t.Fatalf("checked %s, want b %s", req.ExtFields["msgId"], b.uniq)
	}
	// After it, only the answer to a check ends it.
	wantCode(t, "late commit of b", e.call(protocol.ReqEndTransaction, endTxnExt("pg", b.queueOffset, b.physOffset, record.TransactionCommit, false, b.uniq), nil), protocol.RespIllegalOperation)
	if n := e.maxOffset("T", 0); n != 1 {
		t.Fatalf("real topic holds %d before the check's answer", n)
	}
	tso, _ := req.ExtFields.Int64("tranStateTableOffset")
	clo, _ := req.ExtFields.Int64("commitLogOffset")
	wantCode(t, "checked commit of b", e.call(protocol.ReqEndTransaction, endTxnExt("pg", tso, clo, record.TransactionCommit, true, b.uniq), nil), protocol.RespSuccess)
	e.drainChecks()
	if req := e.nextCheck(300 * time.Millisecond); req != nil {
		t.Fatalf("checked %s after both were committed", req.ExtFields["msgId"])
	}
	recs := e.records("T")
	if len(recs) != 2 || string(recs[0].Body) != "a" || string(recs[1].Body) != "b" {
		t.Fatalf("real topic: %d records", len(recs))
	}
}

func TestTxnFailedCommitStaysPending(t *testing.T) {
	e := startEnv(t, txnConfig(30*time.Millisecond, 200*time.Millisecond, 15))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "retry-me")
	e.store.SetPutHook(func(_ context.Context, m *record.Message) (broker.PutStatus, error) {
		if m.Topic == "T" {
			return broker.PutServiceNotAvailable, nil
		}
		return broker.PutOK, nil
	})
	wantCode(t, "failed commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespServiceNotAvailable)
	if e.maxOffset(protocol.TransOpHalfTopic, 0) != 0 {
		t.Fatal("an op record was written for a commit that failed")
	}
	e.store.SetPutHook(nil)

	// The half was not given up: it is checked, and the answer commits it.
	req := e.nextCheck(waitLimit)
	if req == nil || req.ExtFields["msgId"] != h.uniq {
		t.Fatalf("check after a failed commit: %v", req)
	}
	tso, _ := req.ExtFields.Int64("tranStateTableOffset")
	clo, _ := req.ExtFields.Int64("commitLogOffset")
	wantCode(t, "checked commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", tso, clo, record.TransactionCommit, true, h.uniq), nil), protocol.RespSuccess)
	if got := e.onlyRecord("T"); string(got.Body) != "retry-me" {
		t.Fatalf("committed %q", got.Body)
	}
}

func TestTxnOpRecordFailureStillEndsTheTransaction(t *testing.T) {
	e := startEnv(t, txnConfig(30*time.Millisecond, 100*time.Millisecond, 15))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "no-op-record")
	e.store.SetPutHook(func(_ context.Context, m *record.Message) (broker.PutStatus, error) {
		if m.Topic == protocol.TransOpHalfTopic {
			return broker.PutServiceNotAvailable, nil
		}
		return broker.PutOK, nil
	})
	wantCode(t, "commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespSuccess)
	if e.maxOffset(protocol.TransOpHalfTopic, 0) != 0 || e.maxOffset("T", 0) != 1 {
		t.Fatal("want the message committed and no op record")
	}
	// This run remembers it: not checked, not committed twice.
	if req := e.nextCheck(400 * time.Millisecond); req != nil {
		t.Fatalf("checked a committed half: %v", req.ExtFields)
	}
	wantCode(t, "again", e.call(protocol.ReqEndTransaction, endTxnExt("pg", h.queueOffset, h.physOffset, record.TransactionCommit, false, h.uniq), nil), protocol.RespSuccess)
	if n := e.maxOffset("T", 0); n != 1 {
		t.Fatalf("real topic holds %d", n)
	}
}

func TestTxnProgressBeyondTheQueuesEndFollowsThemBack(t *testing.T) {
	// As after a crash that lost the queues' tails while their progress
	// was persisted: the scan goes back to the queues' ends.
	e := startEnv(t, txnConfig(30*time.Millisecond, 100*time.Millisecond, 15))
	e.b.Offsets().Commit(broker.TransGroup, protocol.TransHalfTopic, 0, 100)
	e.b.Offsets().Commit(broker.TransGroup, protocol.TransOpHalfTopic, 0, 50)
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "after-crash")
	if h.queueOffset != 0 {
		t.Fatalf("half at %d", h.queueOffset)
	}
	req := e.nextCheck(waitLimit)
	if req == nil || req.ExtFields["msgId"] != h.uniq {
		t.Fatalf("no check of the half below the persisted progress: %v", req)
	}
	tso, _ := req.ExtFields.Int64("tranStateTableOffset")
	clo, _ := req.ExtFields.Int64("commitLogOffset")
	wantCode(t, "checked commit", e.call(protocol.ReqEndTransaction, endTxnExt("pg", tso, clo, record.TransactionCommit, true, h.uniq), nil), protocol.RespSuccess)
	eventually(t, "the op progress to come back", func() bool {
		op, ok := e.b.Offsets().Query(broker.TransGroup, protocol.TransOpHalfTopic, 0)
		return ok && op <= 1
	})
	if got := e.onlyRecord("T"); string(got.Body) != "after-crash" {
		t.Fatalf("committed %q", got.Body)
	}
}

func TestTxnCheckKnobsChangeAtRunTime(t *testing.T) {
	e := startEnv(t, txnConfig(time.Hour, time.Hour, 15))
	e.createTopic("T", 1)
	e.producerHeartbeat("pg")
	h := e.sendHalf("T", "tuned")

	resp := e.call(protocol.ReqGetBrokerConfig, nil, nil)
	wantCode(t, "get config", resp, protocol.RespSuccess)
	for _, kv := range []string{"transactionCheckInterval=3600000\n", "transactionTimeOut=3600000\n", "transactionCheckMax=15\n"} {
		if !strings.Contains(string(resp.Body), kv) {
			t.Fatalf("broker config lacks %q:\n%s", kv, resp.Body)
		}
	}
	wantCode(t, "bad interval", e.call(protocol.ReqUpdateBrokerConfig, nil, []byte("transactionCheckInterval=0\n")), protocol.RespInvalidParameter)
	if req := e.nextCheck(200 * time.Millisecond); req != nil {
		t.Fatal("checked before the knobs changed")
	}
	// The hour-long wait is cut short: the new interval applies at once.
	wantCode(t, "update", e.call(protocol.ReqUpdateBrokerConfig, nil,
		[]byte("transactionCheckInterval=30\ntransactionTimeOut=0\ntransactionCheckMax=1\n")), protocol.RespSuccess)
	req := e.nextCheck(waitLimit)
	if req == nil || req.ExtFields["msgId"] != h.uniq {
		t.Fatalf("no check after the update: %v", req)
	}
	// One check is the maximum now: the next scan discards it.
	eventually(t, "the discard after one check", func() bool { return e.maxOffset(protocol.TransCheckMaxTimeTopic, 0) == 1 })
}
