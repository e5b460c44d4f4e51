package broker

import (
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// checkTopicMessageType refuses a single send whose message type
// (protocol.MessageTypeOf) does not match its topic's message.type
// attribute, as RocketMQ 5's proxy does (enableTopicMessageTypeCheck),
// answered MESSAGE_ILLEGAL as the remoting proxy answers it. Unlike the
// proxy, a topic without the attribute takes every type: a RocketMQ
// broker's own remoting port checks nothing, and topics created before
// the attribute existed keep working; the gRPC front end applies the
// proxy's rule (no attribute = NORMAL) itself. Retry and DLQ topics and
// messages with TRANSFER_FLAG are not checked.
func checkTopicMessageType(tc protocol.TopicConfig, props string) *remoting.Command {
	if _, ok := tc.Attributes[protocol.TopicMessageTypeAttribute]; !ok {
		return nil
	}
	if isRetryTopic(tc.TopicName) || len(tc.TopicName) >= len(protocol.DLQTopicPrefix) && tc.TopicName[:len(protocol.DLQTopicPrefix)] == protocol.DLQTopicPrefix {
		return nil
	}
	lookup := func(name string) (string, bool) { return record.Property(props, name) }
	if _, ok := lookup(protocol.PropertyTransferFlag); ok {
		return nil
	}
	if err := protocol.CheckMessageType(protocol.TopicMessageTypeOf(tc), protocol.MessageTypeOf(lookup)); err != nil {
		return remoting.NewResponse(protocol.RespMessageIllegal, err.Error())
	}
	return nil
}
