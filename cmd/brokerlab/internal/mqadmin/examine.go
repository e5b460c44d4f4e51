package mqadmin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Operations across a cluster or a topic's route, as DefaultMQAdminExtImpl
// and CommandUtil perform them.

// SelectBrokerAddr is BrokerData.selectBrokerAddr: the master, else the
// slave with the lowest id; "" if none.
func SelectBrokerAddr(bd *protocol.BrokerData) string {
	if a := bd.MasterAddr(); a != "" {
		return a
	}
	ids := slices.Sorted(maps.Keys(bd.BrokerAddrs))
	if len(ids) == 0 {
		return ""
	}
	return bd.BrokerAddrs[ids[0]]
}

// BrokerAddr is one broker process of a cluster.
type BrokerAddr struct {
	Cluster    string `json:"cluster"`
	BrokerName string `json:"brokerName"`
	BrokerID   int64  `json:"brokerId"`
	Addr       string `json:"addr"`
}

// ClusterBrokers lists cluster's brokers (CommandUtil.fetchMaster*ByClusterName),
// sorted by broker name then id: masters only unless slaves. ErrNotFound if
// the name servers know no such cluster.
func (a *Admin) ClusterBrokers(ctx context.Context, cluster string, slaves bool) ([]BrokerAddr, error) {
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	return clusterBrokers(ci, cluster, slaves)
}

func clusterBrokers(ci *protocol.ClusterInfo, cluster string, slaves bool) ([]BrokerAddr, error) {
	names, ok := ci.ClusterAddrTable[cluster]
	if !ok {
		return nil, fmt.Errorf("%w: cluster %q (make sure the cluster exists and the name server is the right one)", ErrNotFound, cluster)
	}
	var out []BrokerAddr
	for _, name := range slices.Sorted(slices.Values(names)) {
		bd, ok := ci.BrokerAddrTable[name]
		if !ok {
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(bd.BrokerAddrs)) {
			if id != protocol.MasterID && !slaves {
				continue
			}
			out = append(out, BrokerAddr{Cluster: cluster, BrokerName: name, BrokerID: id, Addr: bd.BrokerAddrs[id]})
		}
	}
	return out, nil
}

// routeBrokers returns the selected address of each broker of a route, by broker name.
func routeBrokers(rd *protocol.TopicRouteData) []BrokerAddr {
	var out []BrokerAddr
	for i := range rd.BrokerDatas {
		bd := &rd.BrokerDatas[i]
		if addr := SelectBrokerAddr(bd); addr != "" {
			out = append(out, BrokerAddr{Cluster: bd.Cluster, BrokerName: bd.BrokerName, Addr: addr})
		}
	}
	slices.SortFunc(out, func(x, y BrokerAddr) int { return strings.Compare(x.BrokerName, y.BrokerName) })
	return out
}

// ExamineTopicStats merges the topic stats of every broker of topic's
// route (DefaultMQAdminExtImpl.examineTopicStats).
func (a *Admin) ExamineTopicStats(ctx context.Context, topic string) (*TopicStats, error) {
	rd, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := &TopicStats{Queues: []TopicOffset{}}
	for _, b := range routeBrokers(rd) {
		ts, err := a.TopicStats(ctx, b.Addr, topic)
		if err != nil {
			return nil, err
		}
		out.Queues = append(out.Queues, ts.Queues...)
		out.TopicPutTps += ts.TopicPutTps
	}
	if len(out.Queues) == 0 {
		return nil, fmt.Errorf("%w: no topic stats for %q", ErrNotFound, topic)
	}
	slices.SortFunc(out.Queues, func(x, y TopicOffset) int { return x.MessageQueue.Compare(y.MessageQueue) })
	return out, nil
}

// ExamineConsumeStats merges a group's progress from every broker of the
// route of its retry topic, else of topic (examineConsumeStats); on topic
// only if it is set.
func (a *Admin) ExamineConsumeStats(ctx context.Context, group, topic string) (*ConsumeStats, error) {
	rd, err := a.TopicRoute(ctx, protocol.RetryTopic(group))
	if err != nil && topic != "" {
		rd, err = a.TopicRoute(ctx, topic)
	}
	if err != nil {
		return nil, err
	}
	out := &ConsumeStats{Queues: []OffsetWrapper{}}
	for _, b := range routeBrokers(rd) {
		cs, err := a.ConsumeStats(ctx, b.Addr, group, topic)
		if err != nil {
			return nil, err
		}
		out.Queues = append(out.Queues, cs.Queues...)
		out.ConsumeTps += cs.ConsumeTps
	}
	slices.SortFunc(out.Queues, func(x, y OffsetWrapper) int { return x.MessageQueue.Compare(y.MessageQueue) })
	return out, nil
}

// ExamineConsumerConnection asks a broker of the group's retry topic route
// (or brokerAddr if set) for its consumers; ErrNotFound wrapping
// CONSUMER_NOT_ONLINE if it has none.
func (a *Admin) ExamineConsumerConnection(ctx context.Context, group, brokerAddr string) (*ConsumerConnection, error) {
	if brokerAddr == "" {
		rd, err := a.TopicRoute(ctx, protocol.RetryTopic(group))
		if err != nil {
			return nil, err
		}
		bs := routeBrokers(rd)
		if len(bs) == 0 {
			return nil, fmt.Errorf("%w: no broker serves %s", ErrNotFound, protocol.RetryTopic(group))
		}
		brokerAddr = bs[0].Addr
	}
	cc, err := a.ConsumerConnection(ctx, brokerAddr, group)
	if err != nil {
		return nil, err
	}
	if len(cc.Connections) == 0 {
		return nil, notOnline(fmt.Sprintf("consumer group %q has no connection on %s", group, brokerAddr))
	}
	return cc, nil
}

func notOnline(msg string) error {
	return fmt.Errorf("%w: %w", ErrNotFound, &remoting.ResponseError{Code: protocol.RespConsumerNotOnline, Remark: msg})
}

// ExamineProducerConnection asks a broker of topic's route for a producer
// group's connections; ErrNotFound if it has none.
func (a *Admin) ExamineProducerConnection(ctx context.Context, group, topic string) ([]Connection, error) {
	rd, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	bs := routeBrokers(rd)
	if len(bs) == 0 {
		return nil, fmt.Errorf("%w: no broker serves %s", ErrNotFound, topic)
	}
	conns, err := a.ProducerConnection(ctx, bs[0].Addr, group)
	if err != nil {
		return nil, err
	}
	if len(conns) == 0 {
		return nil, fmt.Errorf("%w: producer group %q has no connection on %s", ErrNotFound, group, bs[0].Addr)
	}
	return conns, nil
}

// QueryTopicConsumeByWho asks the first broker of topic's route which
// groups consume it.
func (a *Admin) QueryTopicConsumeByWho(ctx context.Context, topic string) ([]string, error) {
	rd, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	bs := routeBrokers(rd)
	if len(bs) == 0 {
		return []string{}, nil
	}
	return a.ConsumeByWho(ctx, bs[0].Addr, topic)
}

// RollbackStats is one queue reset by the offline path
// (ResetOffsetByTimeOldCommand's columns).
type RollbackStats struct {
	protocol.MessageQueue
	BrokerOffset    int64 `json:"brokerOffset"`
	ConsumerOffset  int64 `json:"consumerOffset"`
	TimestampOffset int64 `json:"timestampOffset"`
	RollbackOffset  int64 `json:"rollbackOffset"`
}

// ResetResult is what ResetOffsetByTime did: Offsets when the brokers
// pushed the reset to live consumers, Rollback when the group was offline
// and the offsets were committed directly.
type ResetResult struct {
	Offline  bool            `json:"offline"`
	Offsets  []QueueOffset   `json:"offsets,omitempty"`
	Rollback []RollbackStats `json:"rollback,omitempty"`
}

// ResetOffsetByTime resets group's offsets on topic to timestamp on every
// broker of the route (resetOffsetByTimestamp); when a broker answers
// CONSUMER_NOT_ONLINE it falls back, as mqadmin does, to committing the
// offsets found by SEARCH_OFFSET_BY_TIMESTAMP with UPDATE_CONSUMER_OFFSET
// (resetOffsetByTimestampOld): queues the group consumed, or every read
// queue if it consumed none; backwards only unless force.
func (a *Admin) ResetOffsetByTime(ctx context.Context, topic, group string, timestamp int64, force bool) (*ResetResult, error) {
	rd, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	res := &ResetResult{}
	var offline []BrokerAddr
	for _, b := range routeBrokers(rd) {
		offs, err := a.ResetOffset(ctx, b.Addr, topic, group, timestamp, force)
		if ResponseCode(err) == protocol.RespConsumerNotOnline {
			offline = append(offline, b)
			continue
		}
		if err != nil {
			return nil, err
		}
		res.Offsets = append(res.Offsets, offs...)
	}
	if len(offline) == 0 {
		slices.SortFunc(res.Offsets, func(x, y QueueOffset) int { return x.MessageQueue.Compare(y.MessageQueue) })
		return res, nil
	}
	if len(res.Offsets) > 0 {
		return nil, fmt.Errorf("mqadmin: reset offset: group %q is online on some brokers and offline on %s", group, offline[0].Addr)
	}
	res.Offline = true
	readQueues := map[string]int32{}
	for _, qd := range rd.QueueDatas {
		readQueues[qd.BrokerName] = qd.ReadQueueNums
	}
	for _, b := range offline {
		rs, err := a.resetOffline(ctx, b, readQueues[b.BrokerName], topic, group, timestamp, force)
		if err != nil {
			return nil, err
		}
		res.Rollback = append(res.Rollback, rs...)
	}
	slices.SortFunc(res.Rollback, func(x, y RollbackStats) int { return x.MessageQueue.Compare(y.MessageQueue) })
	return res, nil
}

func (a *Admin) resetOffline(ctx context.Context, b BrokerAddr, readQueues int32, topic, group string, timestamp int64, force bool) ([]RollbackStats, error) {
	cs, err := a.ConsumeStats(ctx, b.Addr, group, "")
	if err != nil {
		return nil, err
	}
	var queues []OffsetWrapper
	for _, q := range cs.Queues {
		if q.Topic == topic {
			queues = append(queues, q)
		}
	}
	if len(queues) == 0 {
		ts, err := a.TopicStats(ctx, b.Addr, topic)
		if err != nil {
			return nil, err
		}
		byID := map[int32]TopicOffset{}
		for _, q := range ts.Queues {
			byID[q.QueueID] = q
		}
		for id := int32(0); id < readQueues; id++ {
			t := byID[id]
			queues = append(queues, OffsetWrapper{MessageQueue: protocol.MessageQueue{Topic: topic, BrokerName: b.BrokerName, QueueID: id},
				BrokerOffset: t.MaxOffset, ConsumerOffset: t.MinOffset})
		}
	}
	out := make([]RollbackStats, 0, len(queues))
	for _, q := range queues {
		var off int64
		if timestamp == -1 {
			off, err = a.MaxOffset(ctx, b.Addr, q.Topic, q.QueueID)
		} else {
			off, err = a.SearchOffset(ctx, b.Addr, q.Topic, q.QueueID, timestamp)
		}
		if err != nil {
			return nil, err
		}
		rs := RollbackStats{MessageQueue: q.MessageQueue, BrokerOffset: q.BrokerOffset, ConsumerOffset: q.ConsumerOffset,
			TimestampOffset: off, RollbackOffset: q.ConsumerOffset}
		if force || off <= q.ConsumerOffset {
			rs.RollbackOffset = off
			if err := a.UpdateConsumerOffset(ctx, b.Addr, group, q.MessageQueue, off); err != nil {
				return nil, err
			}
		}
		out = append(out, rs)
	}
	return out, nil
}

// QueryMessageByKey asks every broker of topic's route for the messages
// indexed under key and keeps those whose topic and KEYS (or, if uniq, the
// client id) match, as MQAdminImpl.queryMessage does.
func (a *Admin) QueryMessageByKey(ctx context.Context, topic, key string, maxNum int32, begin, end int64, uniq bool) ([]Message, error) {
	rd, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	var out []Message
	for _, b := range routeBrokers(rd) {
		qr, err := a.QueryMessage(ctx, b.Addr, topic, key, maxNum, begin, end, uniq)
		if err != nil {
			return nil, err
		}
		for _, m := range qr.Messages {
			if matchesKey(&m, topic, key, uniq) {
				out = append(out, m)
			}
		}
	}
	if out == nil {
		out = []Message{}
	}
	return out, nil
}

func matchesKey(m *Message, topic, key string, uniq bool) bool {
	if uniq {
		return m.MsgID == key
	}
	if m.Topic != topic {
		return false
	}
	return slices.Contains(strings.Split(m.Keys, record.KeySeparator), key)
}

// QueryMessageByID finds a message by id (queryMessage(cluster, topic,
// msgId)): an offset id is read from the broker it names
// (VIEW_MESSAGE_BY_ID); an id that does not parse as one, or whose broker
// does not answer with it, is looked up as a client id (UNIQ_KEY) with
// QUERY_MESSAGE over all stored messages (Java looks back three days).
func (a *Admin) QueryMessageByID(ctx context.Context, topic, msgID string) (*Message, error) {
	var viewErr error
	if host, off, err := record.ParseOffsetMsgID(msgID); err == nil {
		m, err := a.ViewMessage(ctx, host.String(), topic, off)
		if err == nil {
			return m, nil
		}
		viewErr = err
	}
	msgs, err := a.QueryMessageByKey(ctx, topic, msgID, 32, 0, 1<<62, true)
	if err != nil {
		return nil, errors.Join(viewErr, err)
	}
	if len(msgs) == 0 {
		return nil, errors.Join(fmt.Errorf("%w: message %s of topic %s", ErrNotFound, msgID, topic), viewErr)
	}
	return &msgs[0], nil
}
