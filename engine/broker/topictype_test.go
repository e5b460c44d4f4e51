package broker_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// UPDATE_AND_CREATE_TOPIC keeps +message.type=FIFO in the topic's
// attributes, and a send of another type to it is MESSAGE_ILLEGAL.
func TestTopicMessageTypeAttribute(t *testing.T) {
	e := startEnv(t, nil)
	create := func(topic, attrs string) *remoting.Command {
		return e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
			"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6",
			"topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false", "attributes": attrs,
		}, nil)
	}
	wantCode(t, "create FIFO topic", create("F", "+message.type=FIFO"), protocol.RespSuccess)
	if tc, _ := e.b.Topics().Get("F"); tc.Attributes[protocol.TopicMessageTypeAttribute] != "FIFO" {
		t.Fatalf("attributes %v", tc.Attributes)
	}
	wantCode(t, "normal message to a FIFO topic", e.send("F", 0, "n", ""), protocol.RespMessageIllegal)
	wantCode(t, "FIFO message", e.send("F", 0, "f", props(protocol.PropertyShardingKey, "g1")), protocol.RespSuccess)
	wantCode(t, "delay message", e.send("F", 0, "d", props("DELAY", "1")), protocol.RespMessageIllegal)

	wantCode(t, "unknown value", create("X", "+message.type=BOGUS"), protocol.RespInvalidParameter)
	wantCode(t, "unknown key", create("X", "+nope=1"), protocol.RespInvalidParameter)
	wantCode(t, "removal on create", create("X", "-message.type"), protocol.RespInvalidParameter)

	wantCode(t, "mixed", create("F", "+message.type=MIXED"), protocol.RespSuccess)
	wantCode(t, "normal message to a MIXED topic", e.send("F", 0, "n", ""), protocol.RespSuccess)
	wantCode(t, "remove the type", create("F", "-message.type"), protocol.RespSuccess)
	if tc, _ := e.b.Topics().Get("F"); len(tc.Attributes) != 0 {
		t.Fatalf("attributes after removal %v", tc.Attributes)
	}
	// A topic without the attribute takes every type on remoting.
	e.createTopic("N", 1)
	wantCode(t, "delay message to an untyped topic", e.send("N", 0, "d", props("DELAY", "1")), protocol.RespSuccess)
}
