package protocol

import (
	"errors"
	"testing"
)

// The pull and registration headers parse what they encode; a missing
// required field is named, a malformed one refused, absent optional ones
// take their defaults.
func TestPullAndRegisterHeaders(t *testing.T) {
	p := PullMessageHeader{ConsumerGroup: "g", Topic: "T", QueueID: 3, QueueOffset: 42, MaxMsgNums: 32, SysFlag: 2,
		CommitOffset: 7, SuspendTimeoutMillis: 1000, Subscription: "a || b", ExpressionType: "TAG", BrokerName: "b1"}
	if got, err := ParsePullMessageHeader(p.ExtFields()); err != nil || got != p {
		t.Fatalf("pull: %+v %v", got, err)
	}
	ext := p.ExtFields()
	delete(ext, "commitOffset")
	delete(ext, "expressionType")
	if got, err := ParsePullMessageHeader(ext); err != nil || got.CommitOffset != -1 || got.ExpressionType != "TAG" {
		t.Fatalf("pull defaults: %+v %v", got, err)
	}
	delete(ext, "queueOffset")
	var fe *FieldError
	if _, err := ParsePullMessageHeader(ext); !errors.As(err, &fe) || fe.Key != "queueOffset" || !errors.Is(err, ErrMissingField) {
		t.Fatalf("missing queueOffset: %v", err)
	}

	r := RegisterBrokerHeader{BrokerName: "b", BrokerAddr: "127.0.0.1:10911", ClusterName: "c", HAServerAddr: "127.0.0.1:10912",
		BrokerID: 1, HeartbeatTimeoutMillis: 30000, EnableActingMaster: true, BodyCrc32: 99, ZoneName: "z"}
	if got, err := ParseRegisterBrokerHeader(r.ExtFields()); err != nil || got != r {
		t.Fatalf("register: %+v %v", got, err)
	}
	ext = r.ExtFields()
	ext["brokerId"] = "one"
	if _, err := ParseRegisterBrokerHeader(ext); !errors.Is(err, ErrMalformedField) {
		t.Fatalf("malformed brokerId: %v", err)
	}

	e := map[string]string{"producerGroup": "pg", "tranStateTableOffset": "1", "commitLogOffset": "2", "commitOrRollback": "8", "msgId": "m"}
	if h, err := ParseEndTransactionHeader(e); err != nil || h.CommitOrRollback != 8 || h.FromTransactionCheck || h.MsgID != "m" {
		t.Fatalf("end transaction: %+v %v", h, err)
	}
	delete(e, "msgId")
	if _, err := ParseEndTransactionHeader(e); !errors.As(err, &fe) || fe.Key != "msgId" {
		t.Fatalf("missing msgId: %v", err)
	}
}
