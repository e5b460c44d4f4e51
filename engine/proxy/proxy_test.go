package proxy_test

import (
	"strconv"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
)

func durpb(d time.Duration) *durationpb.Duration { return durationpb.New(d) }

func TestQueryRoute(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("RouteT", 4, "FIFO")
	ctx := callCtx(t, "c1", "", "")
	resp, err := e.cli.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: res("RouteT"),
		Endpoints: &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status.Code != v2.Code_OK || len(resp.MessageQueues) != 4 {
		t.Fatalf("route: %v, %d queues", resp.Status, len(resp.MessageQueues))
	}
	for i, mq := range resp.MessageQueues {
		if mq.Id != int32(i) || mq.Permission != v2.Permission_READ_WRITE || len(mq.AcceptMessageTypes) != 1 ||
			mq.AcceptMessageTypes[0] != v2.MessageType_FIFO {
			t.Fatalf("queue %d: %v", i, mq)
		}
		ep := mq.Broker.Endpoints.Addresses[0]
		if ep.Host != "127.0.0.1" || e.p.Addr() != "127.0.0.1:"+itoa(ep.Port) {
			t.Fatalf("endpoint %v, proxy at %s", ep, e.p.Addr())
		}
	}
	resp, err = e.cli.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: res("NoSuchTopic")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status.Code != v2.Code_TOPIC_NOT_FOUND {
		t.Fatalf("unknown topic: %v", resp.Status)
	}
	as, err := e.cli.QueryAssignment(ctx, &v2.QueryAssignmentRequest{Topic: res("RouteT"), Group: res("G")})
	if err != nil {
		t.Fatal(err)
	}
	if as.Status.Code != v2.Code_OK || len(as.Assignments) != 1 || as.Assignments[0].MessageQueue.Id != -1 {
		t.Fatalf("assignment: %v", as)
	}
}

func TestTelemetrySettingsHandshake(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("TelT", 2, "")
	ctx := callCtx(t, "c-tel", "", "")
	st, err := e.cli.Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ct := v2.ClientType_PRODUCER
	err = st.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{ClientType: &ct,
		PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{res("TelT")}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got := reply.GetSettings().GetPublishing()
	if reply.GetStatus().GetCode() != v2.Code_OK || got == nil || got.MaxBodySize != 4<<20 || !got.ValidateMessageType {
		t.Fatalf("settings reply: %v", reply)
	}
	hb, err := e.cli.Heartbeat(ctx, &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER})
	if err != nil || hb.Status.Code != v2.Code_OK {
		t.Fatalf("heartbeat: %v %v", hb, err)
	}
	_ = st.CloseSend()
}

func TestSendAndPull(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("SendT", 2, "")
	ctx := callCtx(t, "c-send", "", "")
	resp := e.send(ctx, message("SendT", "ID-1", "hello"), message("SendT", "ID-2", "world"))
	if resp.Status.Code != v2.Code_OK || len(resp.Entries) != 2 || resp.Entries[0].MessageId != "ID-1" {
		t.Fatalf("send: %v", resp)
	}
	msgs := e.pullAll(ctx, "PullG", "SendT", 2, 2)
	bodies := map[string]string{}
	for _, m := range msgs {
		bodies[m.SystemProperties.MessageId] = string(m.Body)
		if m.SystemProperties.GetTag() != "tagA" || len(m.SystemProperties.Keys) != 1 || m.Topic.Name != "SendT" {
			t.Fatalf("message %v", m)
		}
	}
	if bodies["ID-1"] != "hello" || bodies["ID-2"] != "world" {
		t.Fatalf("bodies %v", bodies)
	}
	// An empty queue answers MESSAGE_NOT_FOUND with the next offset.
	st, _, next := e.pull(ctx, "PullG", "SendT", 0, 100, 0)
	if st.Code != v2.Code_MESSAGE_NOT_FOUND && st.Code != v2.Code_ILLEGAL_OFFSET {
		t.Fatalf("pull past the end: %v next %d", st, next)
	}
	// Offsets: commit, read back, queue ends.
	mq := &v2.MessageQueue{Topic: res("SendT"), Id: 0}
	up, err := e.cli.UpdateOffset(ctx, &v2.UpdateOffsetRequest{Group: res("PullG"), MessageQueue: mq, Offset: 1})
	if err != nil || up.Status.Code != v2.Code_OK {
		t.Fatalf("update offset: %v %v", up, err)
	}
	got, err := e.cli.GetOffset(ctx, &v2.GetOffsetRequest{Group: res("PullG"), MessageQueue: mq})
	if err != nil || got.Status.Code != v2.Code_OK || got.Offset != 1 {
		t.Fatalf("get offset: %v %v", got, err)
	}
	var total int64
	for q := range int32(2) {
		end, err := e.cli.QueryOffset(ctx, &v2.QueryOffsetRequest{MessageQueue: &v2.MessageQueue{Topic: res("SendT"), Id: q},
			QueryOffsetPolicy: v2.QueryOffsetPolicy_END})
		if err != nil || end.Status.Code != v2.Code_OK {
			t.Fatalf("query offset: %v %v", end, err)
		}
		total += end.Offset
	}
	if total != 2 {
		t.Fatalf("queue ends add up to %d, want 2", total)
	}
}

func TestSendRefusals(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("NormalT", 1, "")
	e.topic("FifoT", 4, "FIFO")
	ctx := callCtx(t, "c-ref", "", "")
	fifo := message("NormalT", "ID-F", "x")
	fifo.SystemProperties.MessageType = v2.MessageType_FIFO
	fifo.SystemProperties.MessageGroup = ptr("g1")
	cases := []struct {
		name string
		m    *v2.Message
		want v2.Code
	}{
		{"type mismatch", fifo, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
		{"unknown topic", message("NoSuchTopic", "ID-U", "x"), v2.Code_TOPIC_NOT_FOUND},
		{"empty body", message("NormalT", "ID-E", ""), v2.Code_MESSAGE_BODY_EMPTY},
		{"no message id", message("NormalT", "", "x"), v2.Code_ILLEGAL_MESSAGE_ID},
		{"normal to a FIFO topic", message("FifoT", "ID-N", "x"), v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE},
	}
	for _, c := range cases {
		if got := e.send(ctx, c.m).Status.Code; got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSendFIFOGroupsKeepAQueue(t *testing.T) {
	e := startEnv(t, nil, nil)
	e.topic("FifoQ", 4, "FIFO")
	ctx := callCtx(t, "c-fifo", "", "")
	for i := range 6 {
		m := message("FifoQ", "F-"+itoa(int32(i)), "m"+itoa(int32(i)))
		m.SystemProperties.MessageType = v2.MessageType_FIFO
		m.SystemProperties.MessageGroup = ptr("order-7")
		if r := e.send(ctx, m); r.Status.Code != v2.Code_OK {
			t.Fatalf("send: %v", r.Status)
		}
	}
	msgs := e.pullAll(ctx, "FG", "FifoQ", 4, 6)
	for i, m := range msgs {
		if m.SystemProperties.QueueId != msgs[0].SystemProperties.QueueId || string(m.Body) != "m"+itoa(int32(i)) ||
			m.SystemProperties.GetMessageGroup() != "order-7" || m.SystemProperties.MessageType != v2.MessageType_FIFO {
			t.Fatalf("message %d: %v", i, m)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
