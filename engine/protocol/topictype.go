package protocol

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TopicMessageTypeAttribute is the topic attribute naming the kind of
// messages a topic takes (TopicAttributes.TOPIC_MESSAGE_TYPE_ATTRIBUTE).
const TopicMessageTypeAttribute = "message.type"

// TopicMessageType is a topic's (or a message's) kind (TopicMessageType.java).
type TopicMessageType string

// Message types.
const (
	MessageTypeUnspecified TopicMessageType = "UNSPECIFIED"
	MessageTypeNormal      TopicMessageType = "NORMAL"
	MessageTypeFIFO        TopicMessageType = "FIFO"
	MessageTypeDelay       TopicMessageType = "DELAY"
	MessageTypeTransaction TopicMessageType = "TRANSACTION"
	MessageTypeMixed       TopicMessageType = "MIXED"
)

// topicAttributes lists the topic attributes Java accepts (TopicAttributes)
// with their allowed values.
var topicAttributes = map[string][]string{
	TopicMessageTypeAttribute: {"UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED"},
	"queue.type":              {"BatchCQ", "SimpleCQ"},
	"cleanup.policy":          {"DELETE", "COMPACTION"},
}

// ErrBadAttributes: an attribute change that does not parse, names an
// unsupported key or value, or removes one on create.
var ErrBadAttributes = errors.New("protocol: bad topic attributes")

// ErrMessageTypeMismatch: a message's type does not match its topic's
// (the proxy's MESSAGE_PROPERTY_CONFLICT_WITH_TYPE; remoting MESSAGE_ILLEGAL).
var ErrMessageTypeMismatch = errors.New("protocol: message type does not match the topic's")

// AlterTopicAttributes applies an attribute change in AttributeParser's
// form ("+a=b,+c=d,-e") to current and returns the result (current is not
// modified). On create a removal ("-e") is refused, as Java's
// AttributeUtil.alterCurrentAttributes does.
func AlterTopicAttributes(create bool, current map[string]string, change string) (map[string]string, error) {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	change = strings.TrimSpace(change)
	if change == "" {
		return out, nil
	}
	for _, kv := range strings.Split(change, ",") {
		kv = strings.TrimSpace(kv)
		switch {
		case strings.HasPrefix(kv, "+"):
			k, v, ok := strings.Cut(kv[1:], "=")
			if !ok || k == "" || v == "" {
				return nil, fmt.Errorf("%w: %q is not +key=value", ErrBadAttributes, kv)
			}
			allowed, known := topicAttributes[k]
			if !known {
				return nil, fmt.Errorf("%w: unsupported key %q", ErrBadAttributes, k)
			}
			if !slices.Contains(allowed, v) {
				return nil, fmt.Errorf("%w: value %q of %s is not one of %v", ErrBadAttributes, v, k, allowed)
			}
			out[k] = v
		case strings.HasPrefix(kv, "-"):
			k := kv[1:]
			if create {
				return nil, fmt.Errorf("%w: only add attribute is supported while creating topic, key: %s", ErrBadAttributes, k)
			}
			if _, known := topicAttributes[k]; !known {
				return nil, fmt.Errorf("%w: unsupported key %q", ErrBadAttributes, k)
			}
			delete(out, k)
		default:
			return nil, fmt.Errorf("%w: %q starts with neither + nor -", ErrBadAttributes, kv)
		}
	}
	return out, nil
}

// TopicMessageTypeOf is a topic's message type: its message.type
// attribute, NORMAL when it has none (TopicConfig.getTopicMessageType).
func TopicMessageTypeOf(tc TopicConfig) TopicMessageType {
	if v, ok := tc.Attributes[TopicMessageTypeAttribute]; ok && v != "" {
		return TopicMessageType(v)
	}
	return MessageTypeNormal
}

// Message properties the message type is read from (MessageConst).
const (
	PropertyShardingKey  = "__SHARDINGKEY"
	PropertyTransferFlag = "TRANSFER_FLAG"
)

// MessageTypeOf is the type of a message by its properties
// (TopicMessageType.parseFromMessageProperty): TRAN_MSG=true is
// TRANSACTION; a delay level or timer property DELAY; a sharding key
// (message group) FIFO; anything else NORMAL. prop looks a property up.
func MessageTypeOf(prop func(name string) (string, bool)) TopicMessageType {
	if v, _ := prop("TRAN_MSG"); v == "true" {
		return MessageTypeTransaction
	}
	for _, p := range []string{"DELAY", "TIMER_DELIVER_MS", "TIMER_DELAY_SEC", "TIMER_DELAY_MS"} {
		if _, ok := prop(p); ok {
			return MessageTypeDelay
		}
	}
	if _, ok := prop(PropertyShardingKey); ok {
		return MessageTypeFIFO
	}
	return MessageTypeNormal
}

// CheckMessageType is the proxy's rule (DefaultTopicMessageTypeValidator):
// a message of type actual may go to a topic of type expected when they
// are equal or the topic is MIXED; an UNSPECIFIED message never.
func CheckMessageType(expected, actual TopicMessageType) error {
	if actual == MessageTypeUnspecified || (actual != expected && expected != MessageTypeMixed) {
		return fmt.Errorf("%w: TopicMessageType validate failed, the expected type is %s, but actual type is %s",
			ErrMessageTypeMismatch, expected, actual)
	}
	return nil
}
