package admin

import (
	"context"
	"encoding/json"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// updateAndCreateTopic handles UPDATE_AND_CREATE_TOPIC (17). It answers
// once every name server took a registration carrying the change, so a
// client that asks for the route next finds it (the Go admin creates and
// then looks the route up at once); a name server that does not take it
// within RegisterTimeout is named in a SYSTEM_ERROR, the topic staying
// created on the broker and registered again periodically.
func (s *Service) updateAndCreateTopic(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateTopic(topic); err != nil {
		return remoting.NewResponse(protocol.RespSystemError, err.Error()), nil
	}
	if !record.TopicSendable(topic) || topic == protocol.DefaultTopic || topic == protocol.ScheduleTopic {
		return responsef(protocol.RespSystemError, "the topic[%s] is conflict with system topic", topic), nil
	}
	tc := protocol.NewTopicConfig(topic, 0)
	if tc.ReadQueueNums, err = ext.Int32("readQueueNums"); err != nil {
		return nil, err
	}
	if tc.WriteQueueNums, err = ext.Int32("writeQueueNums"); err != nil {
		return nil, err
	}
	if tc.Perm, err = ext.OptInt32("perm", protocol.DefaultPerm); err != nil {
		return nil, err
	}
	if tc.TopicSysFlag, err = ext.OptInt32("topicSysFlag", 0); err != nil {
		return nil, err
	}
	if tc.Order, err = ext.OptBool("order", false); err != nil {
		return nil, err
	}
	tc.TopicFilterType = ext.OptString("topicFilterType", "SINGLE_TAG")
	if tc.ReadQueueNums <= 0 || tc.WriteQueueNums <= 0 || tc.ReadQueueNums > 1024 || tc.WriteQueueNums > 1024 {
		return responsef(protocol.RespInvalidParameter, "queue nums must be in 1..1024: read %d, write %d",
			tc.ReadQueueNums, tc.WriteQueueNums), nil
	}
	cur, exists := s.deps.Meta.Topics.Get(topic)
	if tc.Attributes, err = protocol.AlterTopicAttributes(!exists, cur.Attributes, ext.OptString("attributes", "")); err != nil {
		return remoting.NewResponse(protocol.RespInvalidParameter, err.Error()), nil
	}
	ver, err := s.deps.Meta.Topics.Put(tc)
	if err != nil {
		return responsef(protocol.RespSystemError, "update topic %s: %v", topic, err), nil
	}
	s.log.Info("topic updated", "topic", topic, "read", tc.ReadQueueNums, "write", tc.WriteQueueNums, "perm", tc.Perm)
	if resp := s.deps.AwaitRoute(topic, "updated", ver); resp != nil {
		return resp, nil
	}
	return success(), nil
}

// deleteTopic handles DELETE_TOPIC_IN_BROKER (215): the config, the consume
// queues and every group's offsets on the topic go (the commit-log records
// age out with the store's cleaning and are never served again), answered
// once every name server took the registration without it, as a create is.
func (s *Service) deleteTopic(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	if !record.TopicSendable(topic) || topic == protocol.DefaultTopic || topic == protocol.ScheduleTopic {
		return responsef(protocol.RespSystemError, "the topic[%s] is a system topic and cannot be deleted", topic), nil
	}
	_, ver, err := s.deps.Meta.Topics.Delete(topic)
	if err != nil {
		return responsef(protocol.RespSystemError, "delete topic %s: %v", topic, err), nil
	}
	if err := s.purgeTopic(topic); err != nil { // queues and offsets
		return responsef(protocol.RespSystemError, "delete topic %s data: %v", topic, err), nil
	}
	if resp := s.deps.AwaitRoute(topic, "deleted", ver); resp != nil {
		return resp, nil
	}
	return success(), nil
}

// getAllTopicConfig handles GET_ALL_TOPIC_CONFIG (21).
func (s *Service) getAllTopicConfig(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	body, err := json.Marshal(s.deps.Meta.Topics.Wrapper())
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// purgeTopic removes what a deleted topic leaves behind: its consume
// queues in the store, then every group's offsets on it (Java's
// deleteTopics and cleanOffsetByTopic). When the store refuses (its
// dispatch is behind, it is closed) the offsets stay too.
func (s *Service) purgeTopic(topic string) error {
	if err := s.deps.Store.DeleteTopicData(topic); err != nil {
		return err
	}
	return s.deps.Meta.Offsets.RemoveTopic(topic)
}
