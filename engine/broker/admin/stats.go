package admin

import (
	"context"
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// getTopicStatsInfo handles GET_TOPIC_STATS_INFO (202): TopicStatsTable
// {"offsetTable":{MQ:{"lastUpdateTimestamp","maxOffset","minOffset"}},
// "topicPutTps":d} over max(read, write) queues.
func (s *Service) getTopicStatsInfo(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	tc, ok := s.deps.Meta.Topics.Get(topic)
	if !ok {
		return responsef(protocol.RespTopicNotExist, "topic[%s] not exist", topic), nil
	}
	st := s.deps.Store
	n := max(tc.ReadQueueNums, tc.WriteQueueNums)
	entries := make([]mqEntry, 0, n)
	for q := range n {
		to := protocol.TopicOffset{MinOffset: max(st.MinOffset(topic, q), 0), MaxOffset: max(st.MaxOffset(topic, q), 0)}
		if to.MaxOffset > 0 {
			to.LastUpdateTimestamp = st.StoreTime(topic, q, to.MaxOffset-1)
		}
		entries = append(entries, mqEntry{protocol.MessageQueue{BrokerName: s.cfg.BrokerName, QueueID: q, Topic: topic}, mustJSON(to)})
	}
	body := append([]byte(`{"offsetTable":`), appendMQMap(nil, entries)...)
	body = append(body, `,"topicPutTps":`...)
	body = append(body, javaDouble(s.Traffic.Snapshot().Topics[topic].PutTPS)...)
	body = append(body, '}')
	return bodyResponse(body), nil
}

// consumeTopics is the topic list of GET_CONSUME_STATS: topicList (";"
// separated), else topic, else every topic the group has offsets for.
func (s *Service) consumeTopics(group string, ext remoting.ExtFields) []string {
	if l := ext.OptString("topicList", ""); l != "" {
		var out []string
		for _, t := range strings.Split(l, ";") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	if t := ext.OptString("topic", ""); t != "" {
		return []string{t}
	}
	return s.topicsWithOffsets(group)
}

// topicsWithOffsets lists the topics (sorted) on which group committed an
// offset for some readable queue.
func (s *Service) topicsWithOffsets(group string) []string {
	var out []string
	for name, tc := range s.deps.Meta.Topics.Wrapper().TopicConfigTable {
		for q := range tc.ReadQueueNums {
			if _, ok := s.deps.Meta.Offsets.Query(group, name, q); ok {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// getConsumeStats handles GET_CONSUME_STATS (208): ConsumeStats
// {"consumeTps":d,"offsetTable":{MQ:{"brokerOffset","consumerOffset",
// "lastTimestamp","pullOffset"}}}. Topics an online group does not
// subscribe are left out, as Java does.
func (s *Service) getConsumeStats(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	cl, st := s.deps.Clients, s.deps.Store
	online := len(cl.Members(group)) > 0
	rt := s.Traffic.Snapshot()
	var entries []mqEntry
	tps := 0.0
	for _, topic := range s.consumeTopics(group, req.ExtFields) {
		tc, ok := s.deps.Meta.Topics.Get(topic)
		if !ok {
			continue
		}
		if online && cl.Subscription(group, topic) == nil && !strings.HasPrefix(topic, protocol.RetryTopicPrefix) {
			continue
		}
		for q := range tc.ReadQueueNums {
			w := protocol.OffsetWrapper{BrokerOffset: max(st.MaxOffset(topic, q), 0)}
			if off, ok := s.deps.Meta.Offsets.Query(group, topic, q); ok && off > 0 {
				w.ConsumerOffset = off
			}
			w.PullOffset = w.ConsumerOffset
			if w.ConsumerOffset > 0 {
				w.LastTimestamp = st.StoreTime(topic, q, w.ConsumerOffset-1)
			}
			entries = append(entries, mqEntry{protocol.MessageQueue{BrokerName: s.cfg.BrokerName, QueueID: q, Topic: topic}, mustJSON(w)})
		}
		tps += rt.Groups[group+"@"+topic].TPS
	}
	body := append([]byte(`{"consumeTps":`), javaDouble(tps)...)
	body = append(body, `,"offsetTable":`...)
	body = appendMQMap(body, entries)
	body = append(body, '}')
	return bodyResponse(body), nil
}
