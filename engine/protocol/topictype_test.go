package protocol

import (
	"errors"
	"testing"
)

func TestCheckMessageType(t *testing.T) {
	for _, c := range []struct {
		topic, msg TopicMessageType
		ok         bool
	}{
		{MessageTypeNormal, MessageTypeNormal, true},
		{MessageTypeFIFO, MessageTypeNormal, false},
		{MessageTypeMixed, MessageTypeDelay, true},
		{MessageTypeMixed, MessageTypeUnspecified, false},
		{MessageTypeTransaction, MessageTypeTransaction, true},
	} {
		err := CheckMessageType(c.topic, c.msg)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrMessageTypeMismatch)) {
			t.Errorf("topic %s message %s: %v", c.topic, c.msg, err)
		}
	}
	props := map[string]string{"__SHARDINGKEY": "g"}
	if got := MessageTypeOf(func(n string) (string, bool) { v, ok := props[n]; return v, ok }); got != MessageTypeFIFO {
		t.Errorf("sharding key: %s", got)
	}
	props = map[string]string{"TRAN_MSG": "true", "DELAY": "2"}
	if got := MessageTypeOf(func(n string) (string, bool) { v, ok := props[n]; return v, ok }); got != MessageTypeTransaction {
		t.Errorf("transaction: %s", got)
	}
	if got := TopicMessageTypeOf(NewTopicConfig("T", 1)); got != MessageTypeNormal {
		t.Errorf("untyped topic: %s", got)
	}
}

func TestAlterTopicAttributes(t *testing.T) {
	cur := map[string]string{"message.type": "FIFO"}
	got, err := AlterTopicAttributes(false, cur, "+cleanup.policy=DELETE,-message.type")
	if err != nil || len(got) != 1 || got["cleanup.policy"] != "DELETE" || cur["message.type"] != "FIFO" {
		t.Fatalf("alter: %v %v (current %v)", got, err, cur)
	}
	for _, bad := range []string{"message.type=FIFO", "+message.type", "+x=1", "+message.type=fifo"} {
		if _, err := AlterTopicAttributes(false, nil, bad); !errors.Is(err, ErrBadAttributes) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := AlterTopicAttributes(true, nil, "-message.type"); !errors.Is(err, ErrBadAttributes) {
		t.Errorf("removal on create: %v", err)
	}
}
