package broker

import (
	"context"
	"errors"
	"net/netip"
	"runtime"

	"github.com/brokerlab/brokerlab/engine/broker/reply"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Properties of request-reply (MessageConst), defined by engine/broker/reply.
const (
	PropertyCorrelationID = reply.PropertyCorrelationID
	PropertyReplyToClient = reply.PropertyReplyToClient
	PropertyMessageTTL    = reply.PropertyMessageTTL
	PropertyMessageType   = reply.PropertyMessageType
	PropertyPushReplyTime = reply.PropertyPushReplyTime
	// ReplyMessageType is MSG_TYPE of a reply.
	ReplyMessageType = reply.MessageType
)

// newReply builds the request-reply service on the send path's checks,
// the store and the client table.
func (b *Broker) newReply() *reply.Service {
	return reply.New(reply.Deps{
		StoreReplies: b.cfg.StoreReplyMessage,
		Refuse:       b.refuseOnSlave,
		Prepare:      b.prepareReply,
		Put: func(ctx context.Context, m *record.Message) (string, int64, string, error) {
			res, err := b.store.Put(ctx, m)
			if !res.Status.Stored() || len(res.PhysOffsets) == 0 {
				return "", 0, res.Status.String(), err
			}
			return record.OffsetMsgID(b.storeHost, res.PhysOffsets[0]), res.QueueOffset, res.Status.String(), err
		},
		ProducerConn: b.clients.ProducerConnByID,
		BornHost:     bornHost,
		StoreHost:    func() netip.AddrPort { return b.storeHost },
		Logger:       b.log,
	})
}

// prepareReply checks a reply as a send is checked (an empty body passes:
// it is pushed) and picks its queue.
func (b *Broker) prepareReply(conn *remoting.Conn, h protocol.SendMessageHeader, body []byte) (*record.Message, *remoting.Command) {
	m := &record.Message{
		Topic: h.Topic, Flag: h.Flag, SysFlag: h.SysFlag, Body: body, Properties: h.Properties,
		BornTimestamp: h.BornTimestamp, BornHost: bornHost(conn), StoreHost: b.storeHost, ReconsumeTimes: h.ReconsumeTimes,
	}
	if resp := b.checkBatchItem(m); resp != nil {
		return nil, resp
	}
	tc, resp := b.topicForSend(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums)
	if resp != nil {
		return nil, resp
	}
	if m.QueueID, resp = b.pickQueue(tc, h.QueueID); resp != nil {
		return nil, resp
	}
	return m, nil
}

// replyExecutor is Java's replyMessageExecutor; its workers wait for the
// requester's answer to the push.
func (b *Broker) replyExecutor() *remoting.Executor {
	return b.server.NewExecutor("reply", remoting.ExecutorConfig{Workers: 16 + 2*runtime.NumCPU(), QueueSize: 10000})
}

// createReplyTopic adds the cluster's reply topic (TopicConfigManager does
// at start): one read and one write queue, read-write.
func (b *Broker) createReplyTopic() error {
	if _, _, _, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(protocol.ReplyTopic(b.cfg.ClusterName), 1)); err != nil {
		return errors.Join(errors.New("broker: create reply topic"), err)
	}
	return nil
}
