package meta

import (
	"context"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// queryConsumerOffset handles QUERY_CONSUMER_OFFSET (14) as Java's
// ConsumerManageProcessor does: the committed offset if the group has one
// for the queue; otherwise offset 0 with SUCCESS when the queue's minimum
// offset is 0 and its first message is still held in memory
// (Queues.InMemory), so a new group starting from the last offset on
// a young topic still gets the backlog; otherwise QUERY_NOT_FOUND, and the
// consumer applies its ConsumeFromWhere. setZeroIfNotFound=false (5.x
// header) asks for QUERY_NOT_FOUND instead of the zero.
func (s *Service) queryConsumerOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, topic, queueID, err := groupTopicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	setZero, err := req.ExtFields.OptBool("setZeroIfNotFound", true)
	if err != nil {
		return nil, err
	}
	off, ok := s.Offsets.Query(group, topic, queueID)
	switch {
	case ok && off >= 0:
	case !setZero:
		return remoting.NewResponse(protocol.RespQueryNotFound, "Not found, do not set to zero, maybe this group boot first"), nil
	case s.deps.Queues.MinOffset(topic, queueID) <= 0 && s.deps.Queues.InMemory(topic, queueID, 0):
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
func (s *Service) updateConsumerOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, topic, queueID, err := groupTopicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	off, err := req.ExtFields.Int64("commitOffset")
	if err != nil {
		return nil, err
	}
	if off >= 0 {
		s.Offsets.Commit(group, topic, queueID, off)
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
