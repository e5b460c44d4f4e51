package broker

import (
	"context"
	"encoding/json"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// queryConsumerOffset handles QUERY_CONSUMER_OFFSET (14) as Java's
// ConsumerManageProcessor does: the committed offset if the group has one
// for the queue; otherwise offset 0 with SUCCESS when the queue's minimum
// offset is 0 and its first message is still held in memory
// (MessageStore.InMemory), so a new group starting from the last offset on
// a young topic still gets the backlog; otherwise QUERY_NOT_FOUND, and the
// consumer applies its ConsumeFromWhere. setZeroIfNotFound=false (5.x
// header) asks for QUERY_NOT_FOUND instead of the zero.
func (b *Broker) queryConsumerOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, topic, queueID, err := groupTopicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	setZero, err := req.ExtFields.OptBool("setZeroIfNotFound", true)
	if err != nil {
		return nil, err
	}
	off, ok := b.store.ConsumerOffset(group, topic, queueID)
	switch {
	case ok && off >= 0:
	case !setZero:
		return remoting.NewResponse(protocol.RespQueryNotFound, "Not found, do not set to zero, maybe this group boot first"), nil
	case b.store.MinOffset(topic, queueID) <= 0 && b.store.InMemory(topic, queueID, 0):
		off = 0
	default:
		return remoting.NewResponse(protocol.RespQueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"), nil
	}
	resp := success()
	resp.Ext().SetInt64("offset", off)
	return resp, nil
}

// updateConsumerOffset handles UPDATE_CONSUMER_OFFSET (15); negative
// offsets (the Go client commits -1 for queues it never read) are ignored.
func (b *Broker) updateConsumerOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, topic, queueID, err := groupTopicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	off, err := req.ExtFields.Int64("commitOffset")
	if err != nil {
		return nil, err
	}
	if off >= 0 {
		b.store.CommitConsumerOffset(group, topic, queueID, off)
	}
	return success(), nil
}

func groupTopicQueue(ext remoting.ExtFields) (group, topic string, queueID int32, err error) {
	if group, err = ext.String("consumerGroup"); err != nil {
		return
	}
	if topic, err = ext.String("topic"); err != nil {
		return
	}
	queueID, err = ext.Int32("queueId")
	return
}

func topicQueue(ext remoting.ExtFields) (topic string, queueID int32, err error) {
	if topic, err = ext.String("topic"); err != nil {
		return
	}
	queueID, err = ext.Int32("queueId")
	return
}

// getMaxOffset handles GET_MAX_OFFSET (30): the next write offset.
func (b *Broker) getMaxOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Ext().SetInt64("offset", b.store.MaxOffset(topic, queueID))
	return resp, nil
}

// getMinOffset handles GET_MIN_OFFSET (31).
func (b *Broker) getMinOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Ext().SetInt64("offset", b.store.MinOffset(topic, queueID))
	return resp, nil
}

// searchOffsetByTimestamp handles SEARCH_OFFSET_BY_TIMESTAMP (29).
func (b *Broker) searchOffsetByTimestamp(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	ts, err := req.ExtFields.Int64("timestamp")
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Ext().SetInt64("offset", b.store.OffsetByTime(topic, queueID, ts))
	return resp, nil
}

// getEarliestMsgStoreTime handles GET_EARLIEST_MSG_STORETIME (32):
// timestamp -1 for an empty queue.
func (b *Broker) getEarliestMsgStoreTime(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	ts, err := b.store.EarliestMessageTime(topic, queueID)
	if err != nil {
		ts = -1
	}
	resp := success()
	resp.Ext().SetInt64("timestamp", ts)
	return resp, nil
}

// getConsumerList handles GET_CONSUMER_LIST_BY_GROUP (38): every live
// member, the caller included (the Go client drops all its queues on an
// empty list).
func (b *Broker) getConsumerList(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	ids := b.clients.members(group)
	if len(ids) == 0 {
		return responsef(protocol.RespSystemError, "no consumer for this group, %s", group), nil
	}
	body, err := json.Marshal(struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}{ids})
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Body = body
	return resp, nil
}
