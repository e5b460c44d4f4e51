package admin

import (
	"context"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// invokeBrokerToResetOffset handles INVOKE_BROKER_TO_RESET_OFFSET (222) in
// RocketMQ's client-push mode (Broker2Client.resetOffset): per write queue
// of the topic the target is the max offset (timestamp −1), a given offset
// (5.x header offset with queueId ≥ 0) or the first offset stored at or
// after timestamp; it replaces the group's offset when isForce or when it
// is smaller. The new offsets are committed on the broker, pushed to every
// live consumer of the group (RESET_CONSUMER_CLIENT_OFFSET, oneway, body
// ResetOffsetBody) and returned in a ResetOffsetBody
// {"offsetTable":{MQ:offset}}. A group without offsets on the topic is a
// SYSTEM_ERROR. A group without live consumers is answered SUCCESS with the
// same body, as RocketMQ 5's server-side reset (useServerSideResetOffset)
// answers: the committed offsets are where the group starts when it comes
// back (4.x refused with CONSUMER_NOT_ONLINE and committed nothing).
func (s *Service) invokeBrokerToResetOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	group, err := ext.String("group")
	if err != nil {
		return nil, err
	}
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	ts, err := ext.Int64("timestamp")
	if err != nil {
		return nil, err
	}
	force, err := ext.OptBool("isForce", true)
	if err != nil {
		return nil, err
	}
	queueID, err := ext.OptInt32("queueId", -1)
	if err != nil {
		return nil, err
	}
	explicit, err := ext.OptInt64("offset", -1)
	if err != nil {
		return nil, err
	}
	tc, ok := s.deps.Meta.Topics.Get(topic)
	if !ok {
		return responsef(protocol.RespTopicNotExist, "[reset-offset] topic [%s] not exist", topic), nil
	}
	table := map[int32]int64{}
	for q := range tc.WriteQueueNums {
		if queueID >= 0 && q != queueID {
			continue
		}
		cur, ok := s.deps.Meta.Offsets.Query(group, topic, q)
		if !ok {
			return responsef(protocol.RespSystemError, "THe consumer group <%s> not exist", group), nil
		}
		var target int64
		switch {
		case queueID >= 0 && explicit >= 0:
			minOff, maxOff := s.deps.Store.MinOffset(topic, q), s.deps.Store.MaxOffset(topic, q)
			if explicit < minOff || explicit > maxOff {
				return responsef(protocol.RespInvalidParameter, "offset %d of queue %d is outside [%d, %d]",
					explicit, q, minOff, maxOff), nil
			}
			target = explicit
		case ts < 0:
			target = s.deps.Store.MaxOffset(topic, q)
		default:
			target = max(s.deps.Store.OffsetByTime(topic, q, ts), 0)
		}
		if force || target < cur {
			table[q] = target
		} else {
			table[q] = cur
		}
	}
	entries := make([]mqEntry, 0, len(table))
	for q, off := range table {
		s.deps.Meta.Offsets.Commit(group, topic, q, off)
		entries = append(entries, mqEntry{protocol.MessageQueue{BrokerName: s.cfg.BrokerName, QueueID: q, Topic: topic}, []byte(strconv.FormatInt(off, 10))})
	}
	body := append([]byte(`{"offsetTable":`), appendMQMap(nil, entries)...)
	body = append(body, '}')

	conns := s.deps.Clients.MemberConns(group)
	if len(conns) == 0 {
		// RocketMQ 5's server-side reset: the committed offsets are the
		// reset; the group starts from them when it comes back.
		s.log.Info("consumer offsets reset (no live consumer)", "group", group, "topic", topic, "timestamp", ts)
		return bodyResponse(body), nil
	}
	for _, c := range conns {
		push := remoting.NewRequest(protocol.ReqResetConsumerClientOffset, remoting.ExtFields{
			"topic": topic, "group": group, "timestamp": strconv.FormatInt(ts, 10), "isForce": strconv.FormatBool(force),
		})
		if queueID >= 0 {
			push.ExtFields.SetInt32("queueId", queueID)
		}
		push.Body = body
		if err := c.Send(push); err != nil {
			s.log.Warn("reset offset push failed", "group", group, "remote", c.RemoteAddr().String(), "err", err)
		}
	}
	s.log.Info("consumer offsets reset", "group", group, "topic", topic, "timestamp", ts, "clients", len(conns))
	return bodyResponse(body), nil
}

// consumerStatusTimeout bounds each GET_CONSUMER_STATUS_FROM_CLIENT call
// (Java: 5 s).
const consumerStatusTimeout = 5 * time.Second

// invokeBrokerToGetConsumerStatus handles INVOKE_BROKER_TO_GET_CONSUMER_STATUS
// (223; header topic, group, optional clientAddr = a client id) as
// Broker2Client.getConsumeStatus: it asks every live consumer of the group
// (or the one named) for its offsets of topic (GET_CONSUMER_STATUS_FROM_CLIENT,
// 221) and answers GetConsumerStatusBody
// {"consumerTable":{clientId:{MQ:offset}},"messageQueueTable":{}}. Clients
// that fail or time out are left out; none online is a SYSTEM_ERROR.
func (s *Service) invokeBrokerToGetConsumerStatus(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	group, err := req.ExtFields.String("group")
	if err != nil {
		return nil, err
	}
	only := req.ExtFields.OptString("clientAddr", "")
	members := s.deps.Clients.MemberClients(group)
	if len(members) == 0 {
		return responsef(protocol.RespSystemError, "No Any Consumer online in the consumer group: [%s]", group), nil
	}
	body := []byte(`{"consumerTable":{`)
	n := 0
	for _, m := range members {
		if only != "" && m.ID != only {
			continue
		}
		ask := remoting.NewRequest(protocol.ReqGetConsumerStatusFromClient, remoting.ExtFields{"topic": topic, "group": group})
		cctx, cancel := context.WithTimeout(ctx, consumerStatusTimeout)
		resp, err := m.Conn.Invoke(cctx, ask)
		cancel()
		if err != nil || resp.Code != protocol.RespSuccess {
			s.log.Warn("get consumer status failed", "group", group, "client", m.ID, "err", err)
			continue
		}
		raw, ok := FieldOf(resp.Body, "messageQueueTable")
		if !ok {
			continue
		}
		table, err := ParseMQMap(raw)
		if err != nil {
			s.log.Warn("consumer status body", "group", group, "client", m.ID, "err", err)
			continue
		}
		entries := make([]mqEntry, 0, len(table))
		for mq, v := range table {
			entries = append(entries, mqEntry{mq, v})
		}
		if n > 0 {
			body = append(body, ',')
		}
		n++
		body = appendJSONString(body, m.ID)
		body = append(body, ':')
		body = appendMQMap(body, entries)
	}
	body = append(body, `},"messageQueueTable":{}}`...)
	return bodyResponse(body), nil
}
