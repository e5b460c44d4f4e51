package admin

import (
	"context"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

func topicQueue(ext remoting.ExtFields) (topic string, queueID int32, err error) {
	if topic, err = ext.String("topic"); err != nil {
		return
	}
	queueID, err = ext.Int32("queueId")
	return
}

// getMaxOffset handles GET_MAX_OFFSET (30): the next write offset.
func (s *Service) getMaxOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Ext().SetInt64("offset", s.deps.Store.MaxOffset(topic, queueID))
	return resp, nil
}

// getMinOffset handles GET_MIN_OFFSET (31).
func (s *Service) getMinOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Ext().SetInt64("offset", s.deps.Store.MinOffset(topic, queueID))
	return resp, nil
}

// searchOffsetByTimestamp handles SEARCH_OFFSET_BY_TIMESTAMP (29).
func (s *Service) searchOffsetByTimestamp(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	ts, err := req.ExtFields.Int64("timestamp")
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Ext().SetInt64("offset", s.deps.Store.OffsetByTime(topic, queueID, ts))
	return resp, nil
}

// getEarliestMsgStoreTime handles GET_EARLIEST_MSG_STORETIME (32):
// timestamp -1 for an empty queue.
func (s *Service) getEarliestMsgStoreTime(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, queueID, err := topicQueue(req.ExtFields)
	if err != nil {
		return nil, err
	}
	ts, err := s.deps.Store.EarliestMessageTime(topic, queueID)
	if err != nil {
		ts = -1
	}
	resp := success()
	resp.Ext().SetInt64("timestamp", ts)
	return resp, nil
}
