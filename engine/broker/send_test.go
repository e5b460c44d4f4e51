package broker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func TestSendAndPullRoundTrip(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 4)

	// SEND_MESSAGE_V2 (short names) and SEND_MESSAGE (long names, as the Go client).
	r1 := e.mustSend("T", 1, "first", props(record.PropertyTags, "A", record.PropertyKeys, "k1 k2"))
	h := sendHeader("T", 1, props(record.PropertyTags, "B", record.PropertyUniqKey, "C0A800010000000000000000000000FF"))
	r2 := e.call(protocol.ReqSendMessage, h.ExtFields(false), []byte("second"))
	wantCode(t, "send 10", r2, protocol.RespSuccess)

	if q, off := extInt(t, r1, "queueId"), extInt(t, r1, "queueOffset"); q != 1 || off != 0 {
		t.Fatalf("first send: queueId %d queueOffset %d", q, off)
	}
	if off := extInt(t, r2, "queueOffset"); off != 1 {
		t.Fatalf("second send: queueOffset %d", off)
	}
	if r2.ExtFields["transactionId"] != "C0A800010000000000000000000000FF" {
		t.Fatalf("transactionId %q should be the producer's UNIQ_KEY", r2.ExtFields["transactionId"])
	}
	if len(r1.ExtFields["transactionId"]) != 32 {
		t.Fatalf("broker-made UNIQ_KEY %q", r1.ExtFields["transactionId"])
	}

	resp := e.pull("g", "T", 1, 0, 32)
	wantCode(t, "pull", resp, protocol.RespSuccess)
	recs := decodeAll(t, resp.Body)
	if len(recs) != 2 {
		t.Fatalf("pulled %d records", len(recs))
	}
	for i, r := range recs {
		if string(r.Topic) != "T" || r.QueueID != 1 || r.QueueOffset != int64(i) {
			t.Fatalf("record %d: topic %s queue %d offset %d", i, r.Topic, r.QueueID, r.QueueOffset)
		}
	}
	if string(recs[0].Body) != "first" || string(recs[1].Body) != "second" {
		t.Fatalf("bodies %q %q", recs[0].Body, recs[1].Body)
	}
	if v, _ := record.PropertyBytes(recs[0].Properties, record.PropertyUniqKey); string(v) != r1.ExtFields["transactionId"] {
		t.Fatalf("stored UNIQ_KEY %q, reply %q", v, r1.ExtFields["transactionId"])
	}
	if v, _ := record.PropertyBytes(recs[0].Properties, record.PropertyCluster); string(v) != "DefaultCluster" {
		t.Fatalf("CLUSTER property %q", v)
	}
	if extInt(t, resp, "nextBeginOffset") != 2 || extInt(t, resp, "maxOffset") != 2 || resp.ExtFields["suggestWhichBrokerId"] != "0" {
		t.Fatalf("pull ext %v", resp.ExtFields)
	}

	// msgId is the offset message id of the stored record.
	host, phys, err := record.ParseOffsetMsgID(r1.ExtFields["msgId"])
	if err != nil || phys != recs[0].PhysicalOffset || host.String() != e.b.Addr() {
		t.Fatalf("msgId %s → %v %d %v; record at %d, broker %s", r1.ExtFields["msgId"], host, phys, err, recs[0].PhysicalOffset, e.b.Addr())
	}
	view := e.call(protocol.ReqViewMessageByID, remoting.ExtFields{"topic": "T", "offset": itoa(phys)}, nil)
	wantCode(t, "view", view, protocol.RespSuccess)
	if got := decodeAll(t, view.Body); len(got) != 1 || string(got[0].Body) != "first" {
		t.Fatalf("view by id: %v", got)
	}
	wantCode(t, "view missing", e.call(protocol.ReqViewMessageByID, remoting.ExtFields{"offset": "999999"}, nil), protocol.RespSystemError)

	q := e.call(protocol.ReqQueryMessage, remoting.ExtFields{"topic": "T", "key": "k2", "maxNum": "32", "beginTimestamp": "0", "endTimestamp": "9999999999999"}, nil)
	wantCode(t, "query by key", q, protocol.RespSuccess)
	if got := decodeAll(t, q.Body); len(got) != 1 || string(got[0].Body) != "first" {
		t.Fatalf("query by key: %d records", len(got))
	}
	wantCode(t, "query missing key", e.call(protocol.ReqQueryMessage, remoting.ExtFields{"topic": "T", "key": "nope", "maxNum": "32", "beginTimestamp": "0", "endTimestamp": "9999999999999"}, nil), protocol.RespQueryNotFound)

	tq := remoting.ExtFields{"topic": "T", "queueId": "1"}
	if got := extInt(t, e.call(protocol.ReqGetMaxOffset, tq, nil), "offset"); got != 2 {
		t.Fatalf("max offset %d", got)
	}
	if got := extInt(t, e.call(protocol.ReqGetMinOffset, tq, nil), "offset"); got != 0 {
		t.Fatalf("min offset %d", got)
	}
	earliest := extInt(t, e.call(protocol.ReqGetEarliestMsgStoretime, tq, nil), "timestamp")
	if earliest != recs[0].StoreTimestamp {
		t.Fatalf("earliest store time %d, record %d", earliest, recs[0].StoreTimestamp)
	}
	ts := remoting.ExtFields{"topic": "T", "queueId": "1", "timestamp": itoa(recs[1].StoreTimestamp + 1)}
	if got := extInt(t, e.call(protocol.ReqSearchOffsetByTimestamp, ts, nil), "offset"); got != 2 {
		t.Fatalf("offset after the last store time %d", got)
	}
	empty := remoting.ExtFields{"topic": "T", "queueId": "3"}
	if got := extInt(t, e.call(protocol.ReqGetEarliestMsgStoretime, empty, nil), "timestamp"); got != -1 {
		t.Fatalf("earliest of an empty queue %d", got)
	}
}

func TestSendCompressedBodyIsStoredUnchanged(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	h := sendHeader("T", 0, "")
	h.SysFlag = record.FlagCompressed
	body := []byte{0x78, 0x9c, 1, 2, 3} // opaque bytes: the broker does not inflate
	wantCode(t, "send", e.call(protocol.ReqSendMessage, h.ExtFields(false), body), protocol.RespSuccess)
	recs := decodeAll(t, e.pull("g", "T", 0, 0, 1).Body)
	if len(recs) != 1 || recs[0].SysFlag&record.FlagCompressed == 0 || string(recs[0].Body) != string(body) {
		t.Fatalf("compressed body came back as sysflag %x body %v", recs[0].SysFlag, recs[0].Body)
	}
}

func TestSendErrors(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.AutoCreateTopic = false })
	e.createTopic("T", 2)

	cases := []struct {
		name  string
		topic string
		queue int32
		body  string
		props string
		code  int32
	}{
		{"bad topic chars", "bad topic", 0, "x", "", protocol.RespInvalidParameter},
		{"system topic", "SCHEDULE_TOPIC_XXXX", 0, "x", "", protocol.RespNoPermission},
		{"schedule topic", protocol.ScheduleTopic, 0, "x", "", protocol.RespNoPermission},
		{"empty body", "T", 0, "", "", protocol.RespMessageIllegal},
		{"unknown topic without auto-create", "Unknown", 0, "x", "", protocol.RespTopicNotExist},
		{"queue id too large", "T", 2, "x", "", protocol.RespInvalidParameter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, c.name, e.send(c.topic, c.queue, c.body, c.props), c.code)
		})
	}

	t.Run("body too large", func(t *testing.T) {
		wantCode(t, "big", e.send("T", 0, strings.Repeat("x", 4<<20+1), ""), protocol.RespMessageIllegal)
	})
	t.Run("missing header field", func(t *testing.T) {
		ext := sendHeader("T", 0, "").ExtFields(true)
		delete(ext, "b")
		wantCode(t, "no topic", e.call(protocol.ReqSendMessageV2, ext, []byte("x")), protocol.RespSystemError)
	})
	t.Run("transaction half message", func(t *testing.T) {
		h := sendHeader("T", 0, "")
		h.SysFlag = record.TransactionPrepared
		wantCode(t, "prepared", e.call(protocol.ReqSendMessageV2, h.ExtFields(true), []byte("x")), protocol.RespSuccess) // to the half topic (txn_test.go)
	})
	t.Run("read-only topic", func(t *testing.T) {
		resp := e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{"topic": "RO", "readQueueNums": "1", "writeQueueNums": "1", "perm": "4"}, nil)
		wantCode(t, "create", resp, protocol.RespSuccess)
		wantCode(t, "send", e.send("RO", 0, "x", ""), protocol.RespNoPermission)
	})
	t.Run("negative queue id picks a queue", func(t *testing.T) {
		resp := e.mustSend("T", -1, "x", "")
		if q := extInt(t, resp, "queueId"); q < 0 || q > 1 {
			t.Fatalf("picked queue %d", q)
		}
	})
}

func TestPutStatusesMapToResponseCodes(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 1)
	cases := []struct {
		status broker.PutStatus
		code   int32
		stored bool
	}{
		{broker.PutFlushDiskTimeout, protocol.RespFlushDiskTimeout, true},
		{broker.PutFlushSlaveTimeout, protocol.RespFlushSlaveTimeout, true},
		{broker.PutSlaveNotAvailable, protocol.RespSlaveNotAvailable, true},
		{broker.PutServiceNotAvailable, protocol.RespServiceNotAvailable, false},
		{broker.PutCreateMappedFileFailed, protocol.RespSystemError, false},
		{broker.PutMessageIllegal, protocol.RespMessageIllegal, false},
		{broker.PutPropertiesSizeExceeded, protocol.RespMessageIllegal, false},
		{broker.PutOSPageCacheBusy, protocol.RespSystemBusy, false},
		{broker.PutUnknownError, protocol.RespSystemError, false},
	}
	for _, c := range cases {
		t.Run(c.status.String(), func(t *testing.T) {
			e.store.SetPutHook(func(context.Context, *record.Message) (broker.PutStatus, error) {
				if c.stored {
					return c.status, nil
				}
				return c.status, errors.New("injected")
			})
			defer e.store.SetPutHook(nil)
			before := e.store.Puts()
			resp := e.send("T", 0, "x", "")
			wantCode(t, c.status.String(), resp, c.code)
			if stored := e.store.Puts() > before; stored != c.stored {
				t.Fatalf("stored %v, want %v", stored, c.stored)
			}
			if c.stored && len(resp.ExtFields["msgId"]) != 32 {
				t.Fatalf("stored with a warning but no msgId: %v", resp.ExtFields)
			}
		})
	}
}

func TestAutoCreateTopicFromTBW102(t *testing.T) {
	e := startEnv(t, nil)
	// The producer of an unknown topic sends with the TBW102 route, capped at 4 queues.
	resp := e.mustSend("NewTopic", 3, "x", "")
	if q := extInt(t, resp, "queueId"); q != 3 {
		t.Fatalf("queue %d", q)
	}
	eventually(t, "route of the auto-created topic", func() bool {
		rd, ok := e.ns.TopicRoute("NewTopic")
		return ok && len(rd.QueueDatas) == 1 && rd.QueueDatas[0].WriteQueueNums == 4 && rd.QueueDatas[0].Perm == 6
	})
	rd, ok := e.ns.TopicRoute(protocol.DefaultTopic)
	if !ok || rd.QueueDatas[0].Perm != 7 || rd.BrokerDatas[0].BrokerAddrs[0] != e.b.Addr() {
		t.Fatalf("TBW102 route %+v", rd)
	}
}

func TestSendBatch(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	var body []byte
	for i := range 3 {
		body = record.AppendBatchItem(body, record.BatchItem{Flag: int32(i), Body: []byte{'m', byte('0' + i)}, Properties: props(record.PropertyTags, "X")})
	}
	h := sendHeader("T", 1, "")
	h.Batch = true
	resp := e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), body)
	wantCode(t, "batch", resp, protocol.RespSuccess)
	ids := strings.Split(resp.ExtFields["msgId"], ",")
	if len(ids) != 3 || extInt(t, resp, "queueOffset") != 0 {
		t.Fatalf("batch reply %v", resp.ExtFields)
	}
	recs := decodeAll(t, e.pull("g", "T", 1, 0, 32).Body)
	if len(recs) != 3 {
		t.Fatalf("pulled %d", len(recs))
	}
	for i, r := range recs {
		_, phys, err := record.ParseOffsetMsgID(ids[i])
		if err != nil || phys != r.PhysicalOffset || r.QueueOffset != int64(i) || r.Flag != int32(i) || string(r.Body) != "m"+string(rune('0'+i)) {
			t.Fatalf("record %d: %+v (id %s)", i, r, ids[i])
		}
	}
	wantCode(t, "bad body", e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), []byte{0, 0, 0, 99}), protocol.RespMessageIllegal)
	h.Topic = protocol.RetryTopic("g")
	wantCode(t, "retry topic", e.call(protocol.ReqSendBatchMessage, h.ExtFields(true), body), protocol.RespMessageIllegal)
}

func TestUnknownRequestCode(t *testing.T) {
	e := startEnv(t, nil)
	wantCode(t, "code 9999", e.call(9999, nil, nil), protocol.RespRequestCodeNotSupported)
}
