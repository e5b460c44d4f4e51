package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// opsState is the state of the operator features: the broker settings
// UPDATE_BROKER_CONFIG changes at run time.
type opsState struct {
	// Settings UPDATE_BROKER_CONFIG changes live (ops_config.go), first
	// taken from Config.
	autoCreateSubGroup atomic.Bool
	autoCreateTopic    atomic.Bool
	longPolling        atomic.Bool
	shortPolling       atomic.Int64 // time.Duration

	cfgMu      sync.Mutex // serializes UPDATE_BROKER_CONFIG
	cfgVersion struct {
		sync.Mutex
		v protocol.DataVersion
	}
}

// registerOps registers the operator and admin request codes (issue 13 §1).
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG and DELETE_TOPIC_IN_BROKER are routed
// by processors.go to getAllSubscriptionGroupConfig and deleteTopic.
func (b *Broker) registerOps() {
	b.rt = newRuntimeStats()
	b.ops.autoCreateSubGroup.Store(b.cfg.AutoCreateSubscriptionGroup)
	b.ops.autoCreateTopic.Store(b.cfg.AutoCreateTopic)
	b.ops.longPolling.Store(b.cfg.LongPolling)
	b.ops.shortPolling.Store(int64(b.cfg.ShortPollingTime))
	b.ops.cfgVersion.v = protocol.DataVersion{Timestamp: time.Now().UnixMilli()}
	b.handle(protocol.ReqGetBrokerRuntimeInfo, b.getBrokerRuntimeInfo, nil)
	b.handle(protocol.ReqGetTopicStatsInfo, b.getTopicStatsInfo, nil)
	b.handle(protocol.ReqGetConsumeStats, b.getConsumeStats, nil)
	b.handle(protocol.ReqGetConsumerConnectionList, b.getConsumerConnectionList, nil)
	b.handle(protocol.ReqGetProducerConnectionList, b.getProducerConnectionList, nil)
	b.handle(protocol.ReqQueryTopicConsumeByWho, b.queryTopicConsumeByWho, nil)
	b.handle(protocol.ReqUpdateAndCreateSubscriptionGroup, b.updateAndCreateSubscriptionGroup, nil)
	b.handle(protocol.ReqDeleteSubscriptionGroup, b.deleteSubscriptionGroup, nil)
	b.handle(protocol.ReqInvokeBrokerToResetOffset, b.invokeBrokerToResetOffset, nil)
	b.handle(protocol.ReqInvokeBrokerToGetConsumerStatus, b.invokeBrokerToGetConsumerStatus, nil)
	b.handle(protocol.ReqGetBrokerConfig, b.getBrokerConfig, nil)
	b.handle(protocol.ReqUpdateBrokerConfig, b.updateBrokerConfig, nil)
}

func bodyResponse(body []byte) *remoting.Command {
	resp := success()
	resp.Body = body
	return resp
}

// ---- subscription groups ----

// subGroups returns the subscription group table (meta.Service.Groups).
func (b *Broker) subGroups() (*meta.Groups, error) { return b.meta.Groups() }

// findSubGroup returns a group's config, creating it with the defaults when
// autoCreateSubscriptionGroup is on (SubscriptionGroupManager
// .findSubscriptionGroupConfig); ok is false for an unknown group otherwise.
func (b *Broker) findSubGroup(group string) (c protocol.SubscriptionGroupConfig, ok bool, err error) {
	t, err := b.subGroups()
	if err != nil {
		return c, false, err
	}
	if c, ok := t.Get(group); ok {
		return c, true, nil
	}
	if !b.ops.autoCreateSubGroup.Load() || meta.ValidateGroupName(group) != nil {
		return c, false, nil
	}
	c, err = t.CreateIfAbsent(group)
	if err != nil {
		return c, false, err
	}
	b.log.Info("subscription group auto-created", "group", group)
	return c, true, nil
}

// checkConsumeGroup applies the group's config to a pull, as Java's
// PullMessageProcessor: an unknown group (with auto-creation off) gets
// SUBSCRIPTION_GROUP_NOT_EXIST, a group with consumeEnable=false
// NO_PERMISSION, and so does a broadcasting group with
// consumeBroadcastEnable=false. A table that cannot be loaded does not stop
// pulls.
func (b *Broker) checkConsumeGroup(group string) (int32, string) {
	c, ok, err := b.findSubGroup(group)
	switch {
	case err != nil:
		b.log.Warn("subscription group lookup failed; pull allowed", "group", group, "err", err)
		return protocol.RespSuccess, ""
	case !ok:
		return protocol.RespSubscriptionGroupNotExist, fmt.Sprintf("subscription group [%s] does not exist", group)
	case !c.ConsumeEnable:
		return protocol.RespNoPermission, "subscription group no permission, " + group
	case !c.ConsumeBroadcastEnable && b.clients.MessageModel(group) == Broadcasting:
		return protocol.RespNoPermission, fmt.Sprintf("the consumer group[%s] can not consume by broadcast way", group)
	}
	return protocol.RespSuccess, ""
}

// groupRetryMaxTimes is the group's retryMaxTimes, or the broker's
// MaxReconsumeTimes for a group without a config.
func (b *Broker) groupRetryMaxTimes(group string) int32 {
	if c, ok, err := b.findSubGroup(group); err == nil && ok {
		return c.RetryMaxTimes
	}
	return b.cfg.MaxReconsumeTimes
}

// groupRetryQueueNums is the queue count a group's %RETRY% topic is
// created with: its retryQueueNums (at least 1), 1 without a config.
func (b *Broker) groupRetryQueueNums(group string) int32 {
	if c, ok, err := b.findSubGroup(group); err == nil && ok {
		return max(c.RetryQueueNums, 1)
	}
	return 1
}

// retryQueue picks the queue of a sent-back message: a random writable
// queue of the retry topic, as Java's send-back does.
func retryQueue(tc protocol.TopicConfig) int32 {
	if tc.WriteQueueNums <= 1 {
		return 0
	}
	return rand.Int32N(tc.WriteQueueNums)
}

// notifyEnabled reports whether a group's members are told when its
// membership changes (notifyConsumerIdsChangedEnable; true without a
// config).
func (b *Broker) notifyEnabled(group string) bool {
	t, err := b.subGroups()
	if err != nil {
		return true
	}
	c, ok := t.Get(group)
	return !ok || c.NotifyConsumerIdsChangedEnable
}

// ensureHeartbeatGroups creates the configs of a heartbeat's consumer
// groups (Java's ClientManageProcessor does, with auto-creation on).
func (b *Broker) ensureHeartbeatGroups(hb *HeartbeatData) {
	for _, cd := range hb.ConsumerDataSet {
		if cd.GroupName == "" {
			continue
		}
		if _, _, err := b.findSubGroup(cd.GroupName); err != nil {
			b.log.Warn("subscription group auto-create failed", "group", cd.GroupName, "err", err)
		}
	}
}

// getAllSubscriptionGroupConfig handles GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201): the persisted table, SubscriptionGroupWrapper JSON.
func (b *Broker) getAllSubscriptionGroupConfig(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	t, err := b.subGroups()
	if err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	body, err := json.Marshal(t.Wrapper())
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// updateAndCreateSubscriptionGroup handles UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// (200): the body is a SubscriptionGroupConfig; fields it leaves out get
// the defaults.
func (b *Broker) updateAndCreateSubscriptionGroup(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	c, err := meta.DecodeSubscriptionGroupConfig(req.Body)
	if err != nil {
		return nil, remoting.NewBadRequest("%v", err)
	}
	if err := meta.ValidateGroupName(c.GroupName); err != nil {
		return remoting.NewResponse(protocol.RespInvalidParameter, err.Error()), nil
	}
	if c.RetryQueueNums < 0 || c.RetryMaxTimes < -1 {
		return responsef(protocol.RespInvalidParameter, "retryQueueNums %d / retryMaxTimes %d out of range",
			c.RetryQueueNums, c.RetryMaxTimes), nil
	}
	t, err := b.subGroups()
	if err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	if err := t.Put(c); err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	b.log.Info("subscription group updated", "group", c.GroupName, "consumeEnable", c.ConsumeEnable,
		"retryMaxTimes", c.RetryMaxTimes)
	return success(), nil
}

// deleteSubscriptionGroup handles DELETE_SUBSCRIPTIONGROUP (207): header
// groupName, and cleanOffset (5.x) or removeOffset (4.9.x) to drop the
// group's consumer offsets too.
func (b *Broker) deleteSubscriptionGroup(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("groupName")
	if err != nil {
		return nil, err
	}
	clean, err := req.ExtFields.OptBool("cleanOffset", false)
	if err != nil {
		return nil, err
	}
	remove, err := req.ExtFields.OptBool("removeOffset", false)
	if err != nil {
		return nil, err
	}
	t, err := b.subGroups()
	if err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	if _, err := t.Delete(group); err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	if clean || remove {
		if err := b.offsets.RemoveGroup(group); err != nil {
			return responsef(protocol.RespSystemError, "remove offsets of %s: %v", group, err), nil
		}
	}
	b.log.Info("subscription group deleted", "group", group, "offsetsRemoved", clean || remove)
	return success(), nil
}

// syncSubGroups copies the master's subscription group table to a slave
// (SlaveSynchronize.syncSubscriptionGroupConfig): GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// from the master replaces the slave's table when its DataVersion differs.
func (b *Broker) syncSubGroups() error {
	addr := b.masterAddr()
	if addr == "" {
		return nil
	}
	t, err := b.subGroups()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.RegisterTimeout)
	defer cancel()
	resp, err := b.ns.InvokeSync(ctx, addr, remoting.NewRequest(protocol.ReqGetAllSubscriptionGroupConfig, nil))
	if err != nil {
		return err
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("broker: GET_ALL_SUBSCRIPTIONGROUP_CONFIG from %s: code %d %s", addr, resp.Code, resp.Remark)
	}
	var w protocol.SubscriptionGroupWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		return fmt.Errorf("broker: GET_ALL_SUBSCRIPTIONGROUP_CONFIG from %s: %w", addr, err)
	}
	return t.Replace(w)
}

// ---- runtime info ----

// getBrokerRuntimeInfo handles GET_BROKER_RUNTIME_INFO (28): a KVTable
// {"table":{key:value}} of the values mqadmin brokerStatus prints, every
// value a string; only keys this broker measures are given.
func (b *Broker) getBrokerRuntimeInfo(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	body, err := json.Marshal(struct {
		Table map[string]string `json:"table"`
	}{b.runtimeInfo(time.Now())})
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// BrokerVersionDesc is the version this broker reports (brokerVersionDesc):
// the RocketMQ release whose protocol it follows.
const BrokerVersionDesc = "V5_3_3"

func (b *Broker) runtimeInfo(now time.Time) map[string]string {
	st := b.rt.snapshot()
	m := map[string]string{}
	u := func(k string, v uint64) { m[k] = strconv.FormatUint(v, 10) }
	i := func(k string, v int64) { m[k] = strconv.FormatInt(v, 10) }
	rates := func(r [3]float64) string {
		return javaDouble(r[0]) + " " + javaDouble(r[1]) + " " + javaDouble(r[2])
	}
	m["brokerVersionDesc"] = BrokerVersionDesc
	m["brokerActive"] = strconv.FormatBool(b.cfg.Role != Slave)
	i("bootTimestamp", st.BootTime.UnixMilli())
	m["runtime"] = formatRuntime(now.Sub(st.BootTime))
	u("msgPutTotalTodayNow", st.MsgsIn)
	u("msgGetTotalTodayNow", st.MsgsOut)
	u("msgPutTotalTodayMorning", st.PutTodayMorning)
	u("msgPutTotalYesterdayMorning", st.PutYesterdayMorning)
	u("msgGetTotalTodayMorning", st.GetTodayMorning)
	u("msgGetTotalYesterdayMorning", st.GetYesterdayMorning)
	m["putTps"] = rates(st.PutTPS)
	m["getTransferredTps"] = rates(st.GetTransferredTPS)
	m["getFoundTps"] = rates(st.GetFoundTPS)
	m["getMissTps"] = rates(st.GetMissTPS)
	m["getTotalTps"] = rates(st.GetTotalTPS)
	u("putMessageTimesTotal", max(st.MsgsIn, 1)) // Java reports at least 1
	u("putMessageSizeTotal", st.BytesIn)
	u("putMessageFailedTimes", st.PutFailures)
	m["putMessageAverageSize"] = javaDouble(float64(st.BytesIn) / float64(max(st.MsgsIn, 1)))
	i("startAcceptSendRequestTimeStamp", 0) // Java's default: sends accepted from boot
	u("sendThreadPoolQueueSize", uint64(b.sendQ.len()))
	i("sendThreadPoolQueueCapacity", int64(b.cfg.SendQueueSize))
	i("pullThreadPoolQueueCapacity", int64(b.cfg.PullExecutor.QueueSize))
	i("queryThreadPoolQueueCapacity", int64(b.cfg.QueryExecutor.QueueSize))
	if ds, ok := b.store.(DiskStatser); ok {
		d := ds.DiskStats()
		i("commitLogMinOffset", d.MinPhyOffset)
		i("commitLogMaxOffset", d.MaxPhyOffset)
		i("dispatchBehindBytes", d.DispatchBehindBytes)
		if d.HasEarliest {
			i("earliestMessageTimeStamp", d.EarliestTime)
		}
		if ratio, total, free, err := diskUsage(d.Root); err == nil {
			m["commitLogDiskRatio"] = javaDouble(ratio)
			m["commitLogDiskRatio_"+d.Root] = javaDouble(ratio)
			m["commitLogDirCapacity"] = fmt.Sprintf("Total : %s, Free : %s.", humanBytes(total), humanBytes(free))
		}
		if es, ok := b.store.(EngineStore); ok {
			addStoreDiskRatios(m, es.EngineStore()) // ops_diskratio.go
		}
		i("pageCacheLockTimeMills", d.LockHeld.Milliseconds())
		if ts := b.TimerStats(); ts.Enabled {
			i("timerOffsetBehind", ts.OffsetBehind)
			i("timerPendingMessages", ts.Pending)
			i("timerDeliveredMessages", ts.Delivered)
		}
		remain := d.MaxPhyOffset - d.FlushedOffset
		m["remainHowManyDataToFlush"] = humanBytes(uint64(max(remain, 0)))
	}
	return m
}

// javaDouble formats like Java's Double.toString for ordinary magnitudes:
// at least one fractional digit ("0.0", "12.5").
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEN") {
		s += ".0"
	}
	return s
}

// formatRuntime is StoreStatsService's runtime text.
func formatRuntime(d time.Duration) string {
	ms := d.Milliseconds()
	const sec, minute, hour, day = 1000, 60 * 1000, 3600 * 1000, 24 * 3600 * 1000
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]",
		ms/day, ms%day/hour, ms%hour/minute, ms%minute/sec)
}

// humanBytes is MixAll.humanReadableByteCount(bytes, false): binary units.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	exp, div := 0, uint64(unit)
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// ---- topic and consume stats ----

// storeTimeAt is the store timestamp of the message at a queue offset, 0
// when it cannot be read.
func (b *Broker) storeTimeAt(topic string, queueID int32, offset int64) int64 {
	if offset < 0 {
		return 0
	}
	res := b.store.Get("", topic, queueID, offset, 1, nil)
	if res.Status != GetFound || len(res.Buffer) == 0 {
		return 0
	}
	ts, err := record.PeekStoreTimestamp(res.Buffer)
	if err != nil {
		return 0
	}
	return ts
}

// getTopicStatsInfo handles GET_TOPIC_STATS_INFO (202): TopicStatsTable
// {"offsetTable":{MQ:{"lastUpdateTimestamp","maxOffset","minOffset"}},
// "topicPutTps":d} over max(read, write) queues.
func (b *Broker) getTopicStatsInfo(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	tc, ok := b.topics.Get(topic)
	if !ok {
		return responsef(protocol.RespTopicNotExist, "topic[%s] not exist", topic), nil
	}
	n := max(tc.ReadQueueNums, tc.WriteQueueNums)
	entries := make([]mqEntry, 0, n)
	for q := range n {
		to := protocol.TopicOffset{MinOffset: max(b.store.MinOffset(topic, q), 0), MaxOffset: max(b.store.MaxOffset(topic, q), 0)}
		if to.MaxOffset > 0 {
			to.LastUpdateTimestamp = b.storeTimeAt(topic, q, to.MaxOffset-1)
		}
		entries = append(entries, mqEntry{protocol.MessageQueue{BrokerName: b.cfg.BrokerName, QueueID: q, Topic: topic}, mustJSON(to)})
	}
	body := append([]byte(`{"offsetTable":`), appendMQMap(nil, entries)...)
	body = append(body, `,"topicPutTps":`...)
	body = append(body, javaDouble(b.rt.snapshot().Topics[topic].PutTPS)...)
	body = append(body, '}')
	return bodyResponse(body), nil
}

// consumeTopics is the topic list of GET_CONSUME_STATS: topicList (";"
// separated), else topic, else every topic the group has offsets for.
func (b *Broker) consumeTopics(group string, ext remoting.ExtFields) []string {
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
	return b.topicsWithOffsets(group)
}

// topicsWithOffsets lists the topics (sorted) on which group committed an
// offset for some readable queue.
func (b *Broker) topicsWithOffsets(group string) []string {
	var out []string
	for name, tc := range b.topics.Wrapper().TopicConfigTable {
		for q := range tc.ReadQueueNums {
			if _, ok := b.offsets.Query(group, name, q); ok {
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
func (b *Broker) getConsumeStats(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	online := len(b.clients.Members(group)) > 0
	rt := b.rt.snapshot()
	var entries []mqEntry
	tps := 0.0
	for _, topic := range b.consumeTopics(group, req.ExtFields) {
		tc, ok := b.topics.Get(topic)
		if !ok {
			continue
		}
		if online && b.clients.Subscription(group, topic) == nil && !isRetryTopic(topic) {
			continue
		}
		for q := range tc.ReadQueueNums {
			w := protocol.OffsetWrapper{BrokerOffset: max(b.store.MaxOffset(topic, q), 0)}
			if off, ok := b.offsets.Query(group, topic, q); ok && off > 0 {
				w.ConsumerOffset = off
			}
			w.PullOffset = w.ConsumerOffset
			if w.ConsumerOffset > 0 {
				w.LastTimestamp = b.storeTimeAt(topic, q, w.ConsumerOffset-1)
			}
			entries = append(entries, mqEntry{protocol.MessageQueue{BrokerName: b.cfg.BrokerName, QueueID: q, Topic: topic}, mustJSON(w)})
		}
		tps += rt.Groups[group+"@"+topic].TPS
	}
	body := append([]byte(`{"consumeTps":`), javaDouble(tps)...)
	body = append(body, `,"offsetTable":`...)
	body = appendMQMap(body, entries)
	body = append(body, '}')
	return bodyResponse(body), nil
}

// ---- connections ----

// getConsumerConnectionList handles GET_CONSUMER_CONNECTION_LIST (203).
func (b *Broker) getConsumerConnectionList(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	cc, ok := b.clients.ConsumerConnection(group)
	if !ok {
		return responsef(protocol.RespConsumerNotOnline, "the consumer group[%s] not online", group), nil
	}
	body, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// getProducerConnectionList handles GET_PRODUCER_CONNECTION_LIST (204).
func (b *Broker) getProducerConnectionList(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("producerGroup")
	if err != nil {
		return nil, err
	}
	conns := b.clients.ProducerConnections(group)
	if len(conns) == 0 {
		return responsef(protocol.RespSystemError, "the producer group[%s] not exist", group), nil
	}
	body, err := json.Marshal(protocol.ProducerConnection{ConnectionSet: conns})
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// queryTopicConsumeByWho handles QUERY_TOPIC_CONSUME_BY_WHO (300): GroupList
// {"groupList":[...]}, the online groups subscribed to the topic and the
// groups with offsets stored for it.
func (b *Broker) queryTopicConsumeByWho(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	set := map[string]struct{}{}
	for _, g := range b.clients.ConsumerGroupNames() {
		if b.clients.Subscription(g, topic) != nil {
			set[g] = struct{}{}
		}
	}
	for _, g := range b.offsets.Groups(topic) {
		set[g] = struct{}{}
	}
	groups := make([]string, 0, len(set))
	for g := range set {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	body, err := json.Marshal(struct {
		GroupList []string `json:"groupList"`
	}{groups})
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// ---- offset reset ----

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
func (b *Broker) invokeBrokerToResetOffset(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
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
	tc, ok := b.topics.Get(topic)
	if !ok {
		return responsef(protocol.RespTopicNotExist, "[reset-offset] topic [%s] not exist", topic), nil
	}
	table := map[int32]int64{}
	for q := range tc.WriteQueueNums {
		if queueID >= 0 && q != queueID {
			continue
		}
		cur, ok := b.offsets.Query(group, topic, q)
		if !ok {
			return responsef(protocol.RespSystemError, "THe consumer group <%s> not exist", group), nil
		}
		var target int64
		switch {
		case queueID >= 0 && explicit >= 0:
			minOff, maxOff := b.store.MinOffset(topic, q), b.store.MaxOffset(topic, q)
			if explicit < minOff || explicit > maxOff {
				return responsef(protocol.RespInvalidParameter, "offset %d of queue %d is outside [%d, %d]",
					explicit, q, minOff, maxOff), nil
			}
			target = explicit
		case ts < 0:
			target = b.store.MaxOffset(topic, q)
		default:
			target = max(b.store.OffsetByTime(topic, q, ts), 0)
		}
		if force || target < cur {
			table[q] = target
		} else {
			table[q] = cur
		}
	}
	entries := make([]mqEntry, 0, len(table))
	for q, off := range table {
		b.offsets.Commit(group, topic, q, off)
		entries = append(entries, mqEntry{protocol.MessageQueue{BrokerName: b.cfg.BrokerName, QueueID: q, Topic: topic}, []byte(strconv.FormatInt(off, 10))})
	}
	body := append([]byte(`{"offsetTable":`), appendMQMap(nil, entries)...)
	body = append(body, '}')

	conns := b.clients.MemberConns(group)
	if len(conns) == 0 {
		// RocketMQ 5's server-side reset: the committed offsets are the
		// reset; the group starts from them when it comes back.
		b.log.Info("consumer offsets reset (no live consumer)", "group", group, "topic", topic, "timestamp", ts)
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
			b.log.Warn("reset offset push failed", "group", group, "remote", c.RemoteAddr().String(), "err", err)
		}
	}
	b.log.Info("consumer offsets reset", "group", group, "topic", topic, "timestamp", ts, "clients", len(conns))
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
func (b *Broker) invokeBrokerToGetConsumerStatus(ctx context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	group, err := req.ExtFields.String("group")
	if err != nil {
		return nil, err
	}
	only := req.ExtFields.OptString("clientAddr", "")
	members := b.clients.MemberClients(group)
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
			b.log.Warn("get consumer status failed", "group", group, "client", m.ID, "err", err)
			continue
		}
		raw, ok := FieldOf(resp.Body, "messageQueueTable")
		if !ok {
			continue
		}
		table, err := ParseMQMap(raw)
		if err != nil {
			b.log.Warn("consumer status body", "group", group, "client", m.ID, "err", err)
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

// ---- topic deletion ----

// purgeTopic removes what a deleted topic leaves behind: its consume
// queues in the store, then every group's offsets on it (Java's
// deleteTopics and cleanOffsetByTopic). When the store refuses (its
// dispatch is behind, it is closed) the offsets stay too.
func (b *Broker) purgeTopic(topic string) error {
	if err := b.store.DeleteTopicData(topic); err != nil {
		return err
	}
	return b.offsets.RemoveTopic(topic)
}
