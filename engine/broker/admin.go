package broker

import (
	"context"
	"encoding/json"
	"strings"

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
func (b *Broker) updateAndCreateTopic(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
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
	cur, exists := b.topics.Get(topic)
	if tc.Attributes, err = protocol.AlterTopicAttributes(!exists, cur.Attributes, ext.OptString("attributes", "")); err != nil {
		return remoting.NewResponse(protocol.RespInvalidParameter, err.Error()), nil
	}
	ver, err := b.topics.Put(tc)
	if err != nil {
		return responsef(protocol.RespSystemError, "update topic %s: %v", topic, err), nil
	}
	b.log.Info("topic updated", "topic", topic, "read", tc.ReadQueueNums, "write", tc.WriteQueueNums, "perm", tc.Perm)
	if resp := b.routeResponse(topic, "updated", ver); resp != nil {
		return resp, nil
	}
	return success(), nil
}

// deleteTopic handles DELETE_TOPIC_IN_BROKER (215): the config, the consume
// queues and every group's offsets on the topic go (the commit-log records
// age out with the store's cleaning and are never served again), answered
// once every name server took the registration without it, as a create is.
func (b *Broker) deleteTopic(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	if !record.TopicSendable(topic) || topic == protocol.DefaultTopic || topic == protocol.ScheduleTopic {
		return responsef(protocol.RespSystemError, "the topic[%s] is a system topic and cannot be deleted", topic), nil
	}
	_, ver, err := b.topics.Delete(topic)
	if err != nil {
		return responsef(protocol.RespSystemError, "delete topic %s: %v", topic, err), nil
	}
	if err := b.purgeTopic(topic); err != nil { // queues and offsets (ops.go)
		return responsef(protocol.RespSystemError, "delete topic %s data: %v", topic, err), nil
	}
	if resp := b.routeResponse(topic, "deleted", ver); resp != nil {
		return resp, nil
	}
	return success(), nil
}

// getAllTopicConfig handles GET_ALL_TOPIC_CONFIG (21).
func (b *Broker) getAllTopicConfig(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	body, err := json.Marshal(b.topics.Wrapper())
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Body = body
	return resp, nil
}

// queryMessage handles QUERY_MESSAGE (12): records of topic indexed under
// key within [beginTimestamp, endTimestamp].
func (b *Broker) queryMessage(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	key, err := ext.String("key")
	if err != nil {
		return nil, err
	}
	maxNum, err := ext.OptInt32("maxNum", 32)
	if err != nil {
		return nil, err
	}
	begin, err := ext.OptInt64("beginTimestamp", 0)
	if err != nil {
		return nil, err
	}
	end, err := ext.OptInt64("endTimestamp", 1<<62)
	if err != nil {
		return nil, err
	}
	if maxNum <= 0 {
		maxNum = 32
	}
	res, err := b.store.QueryByKey(topic, strings.TrimSpace(key), int(maxNum), begin, end)
	if err != nil {
		return responsef(protocol.RespSystemError, "query message: %v", err), nil
	}
	if len(res.Buffer) == 0 {
		return remoting.NewResponse(protocol.RespQueryNotFound, "can not find message, maybe time range not correct"), nil
	}
	resp := success()
	resp.Ext().SetInt64("indexLastUpdateTimestamp", res.IndexLastUpdateTimestamp)
	resp.Ext().SetInt64("indexLastUpdatePhyoffset", res.IndexLastUpdatePhyOffset)
	resp.Body = res.Buffer
	return resp, nil
}

// viewMessageByID handles VIEW_MESSAGE_BY_ID (33): the record at the
// commit-log offset taken from an offset message id.
func (b *Broker) viewMessageByID(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	off, err := req.ExtFields.Int64("offset")
	if err != nil {
		return nil, err
	}
	raw, err := b.store.ReadRecord(off)
	if err != nil {
		return responsef(protocol.RespSystemError, "can not find message by the offset, %d: %v", off, err), nil
	}
	resp := success()
	resp.Body = append([]byte(nil), raw...)
	return resp, nil
}
