package promexport

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// BrokerCollector is a prometheus.Collector over one broker. Collect reads
// the broker's snapshots (RuntimeStats, ConsumerLags, Gauges,
// FlowControl, the store's Stats) and the request histograms of the
// RequestStats observer NewBrokerCollector installed; it never blocks the
// broker's request paths (see the engine types for what each snapshot
// locks, all briefly). Safe for concurrent use.
type BrokerCollector struct {
	b   *broker.Broker
	req *remoting.RequestStats
	now func() time.Time

	messagesIn, throughputIn, messagesOut, throughputOut *prometheus.Desc
	rpcLatency                                           *prometheus.Desc
	lagMessages, lagLatency                              *prometheus.Desc
	topics, groups, watermark, connections, heldPulls    *prometheus.Desc
	putFailures, producerConns, consumerConns            *prometheus.Desc
	bad                                                  badInputDescs

	dispatchBehind, flushBehind, storageSize                   *prometheus.Desc
	appends, appendBytes, flushes, flushLatency, flushMax      *prometheus.Desc
	flushBatch, lockHeldTotal, lockHeldMax                     *prometheus.Desc
	lockHold, lockWait, flushWait                              *prometheus.Desc
	pcBusy, sendQueueRejected, flushTimeouts, putFlushTimeouts *prometheus.Desc
	onewayRefused, cleanDispatchWaits, dispatchSkippedBytes    *prometheus.Desc
}

// NewBrokerCollector builds the collector and installs its request
// observer on b. REQUIRES: called before b.Start (observers are fixed once
// the broker's server starts).
func NewBrokerCollector(b *broker.Broker) *BrokerCollector {
	cfg := b.Config()
	nl := prometheus.Labels{"cluster": cfg.ClusterName, "node_type": "broker", "node_id": cfg.BrokerName}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nl)
	}
	c := &BrokerCollector{
		b:   b,
		req: remoting.NewRequestStats(),
		now: time.Now,

		messagesIn:    d("rocketmq_messages_in_total", "Messages stored by sends, per topic (retry and dead-letter topics excluded, as in RocketMQ).", "topic"),
		throughputIn:  d("rocketmq_throughput_in_total", "Body bytes of the messages stored by sends, per topic.", "topic"),
		messagesOut:   d("rocketmq_messages_out_total", "Messages served by pulls, per topic and consumer group.", "topic", "consumer_group"),
		throughputOut: d("rocketmq_throughput_out_total", "Record bytes served by pulls, per topic and consumer group.", "topic", "consumer_group"),
		rpcLatency:    rpcLatencyDesc(nl),
		lagMessages: d("rocketmq_consumer_lag_messages",
			"Messages stored but not yet consumed (committed), per consumer group and topic.", "topic", "consumer_group"),
		lagLatency: d("rocketmq_consumer_lag_latency",
			"Age in milliseconds of the oldest message a consumer group has not consumed, per topic (0 when caught up).", "topic", "consumer_group"),
		topics:      d("rocketmq_topic_number", "Topics in the broker's topic table."),
		groups:      d("rocketmq_consumer_group_number", "Subscription groups in the broker's table."),
		watermark:   d("rocketmq_processor_watermark", "Requests waiting for a worker, per processor (send: the send queue).", "processor"),
		connections: d("brokerlab_connections", "Open remoting connections."),
		heldPulls:   d("brokerlab_held_pulls", "Pull requests parked by long polling."),
		putFailures: d("brokerlab_put_failures_total", "Sends the store refused (not stored)."),
		producerConns: d("rocketmq_producer_connections",
			"Live producer connections (one per client and producer group), per client language and version.",
			"language", "version", "protocol_type"),
		consumerConns: d("rocketmq_consumer_connections",
			"Live consumer connections (group members), per group, client language and version, and consume mode.",
			"consumer_group", "language", "version", "consume_mode", "protocol_type"),
		bad: newBadInputDescs(nl),

		dispatchBehind: d("rocketmq_storage_dispatch_behind_bytes", "Commit-log bytes written but not yet dispatched to consume queues and index."),
		flushBehind:    d("rocketmq_storage_flush_behind_bytes", "Commit-log bytes written but not yet flushed."),
		storageSize:    d("brokerlab_commitlog_bytes", "Commit-log extent: max offset minus min offset (bytes still stored)."),
		cleanDispatchWaits: d("brokerlab_clean_dispatch_waits_total",
			"Cleaning passes that kept a commit-log segment due for deletion because the dispatcher had not built its consume queues and index yet."),
		dispatchSkippedBytes: d("brokerlab_dispatch_skipped_bytes_total",
			"Commit-log bytes deleted before they were dispatched (their messages are in no consume queue); 0 unless segments vanish under a running store."),
		appends:      d("brokerlab_commitlog_appends_total", "Records appended to the commit log."),
		appendBytes:  d("brokerlab_commitlog_append_bytes_total", "Record bytes appended to the commit log."),
		flushes:      d("brokerlab_flushes_total", "Flushes made by the flush policy (appends per flush = rate(appends) / rate(flushes))."),
		flushLatency: d("brokerlab_flush_latency_seconds", "Duration of the flush policy's flush calls."),
		flushMax:     d("brokerlab_flush_latency_max_seconds", "Longest flush since the store opened."),
		flushBatch: d("brokerlab_flush_batch_size",
			"Waiting commits served per flush (group commit batch size; 0 or 1 in the first bucket; async flushes serve none)."),
		flushTimeouts:    d("brokerlab_flush_timeouts_total", "Commits the flush policy answered with a timeout."),
		putFlushTimeouts: d("brokerlab_put_flush_disk_timeouts_total", "Puts answered FLUSH_DISK_TIMEOUT."),
		lockHeldTotal:    d("brokerlab_append_lock_held_seconds_total", "Total time the commit log's append lock was held."),
		lockHeldMax:      d("brokerlab_append_lock_held_max_seconds", "Longest hold of the append lock since the store opened."),
		lockHold:         d("brokerlab_append_lock_hold_seconds", "Append-lock hold time per send (a batch holds it once)."),
		lockWait:         d("brokerlab_append_lock_wait_seconds", "Time a send waited for its queue's lock and the append lock."),
		flushWait:        d("brokerlab_flush_wait_seconds", "Time a send waited for the flush policy after appending (0 under async)."),
		pcBusy: d("brokerlab_page_cache_busy_rejections_total",
			"Sends refused SYSTEM_BUSY because the page cache was busy (append lock held too long): stage=arrival [REJECTREQUEST], queued [PCBUSY_CLEAN_QUEUE], append [PC_SYNCHRONIZED].", "stage"),
		sendQueueRejected: d("brokerlab_send_queue_rejections_total",
			"Sends refused SYSTEM_BUSY by the send queue: reason=full [OVERLOAD] or timeout [TIMEOUT_CLEAN_QUEUE].", "reason"),
		onewayRefused: d("brokerlab_oneway_sends_refused_total",
			"Oneway sends not stored, which their producers never hear of: reason=busy (SYSTEM_BUSY by the broker's flow control), other (any other non-SUCCESS answer) or remoting (refused by the remoting server before the broker saw it: too many in flight, executor full, shutting down; any oneway code).", "reason"),
	}
	b.AddObserver(c.req)
	return c
}

// Describe implements prometheus.Collector.
func (c *BrokerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.messagesIn, c.throughputIn, c.messagesOut, c.throughputOut, c.rpcLatency, c.lagMessages, c.lagLatency,
		c.topics, c.groups, c.watermark, c.connections, c.heldPulls, c.putFailures, c.producerConns, c.consumerConns,
		c.dispatchBehind, c.flushBehind, c.storageSize, c.appends, c.appendBytes, c.flushes, c.flushLatency, c.flushMax,
		c.flushBatch, c.flushTimeouts, c.putFlushTimeouts, c.lockHeldTotal, c.lockHeldMax, c.lockHold, c.lockWait,
		c.flushWait, c.pcBusy, c.sendQueueRejected, c.onewayRefused, c.cleanDispatchWaits, c.dispatchSkippedBytes,
	} {
		ch <- d
	}
	c.bad.describe(ch)
}

// Collect implements prometheus.Collector.
func (c *BrokerCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- metric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- metric(d, prometheus.GaugeValue, v, labels...)
	}

	rt := c.b.RuntimeStats()
	for topic, t := range rt.Topics {
		if excludedTopic(topic) || t.MsgsIn == 0 {
			continue
		}
		counter(c.messagesIn, t.MsgsIn, topic)
		counter(c.throughputIn, t.BytesIn, topic)
	}
	for _, g := range rt.Groups {
		if excludedTopic(g.Topic) {
			continue
		}
		counter(c.messagesOut, g.Msgs, g.Topic, g.Group)
		counter(c.throughputOut, g.Bytes, g.Topic, g.Group)
	}
	counter(c.putFailures, rt.PutFailures)
	collectRPCLatency(ch, c.rpcLatency, c.req)

	nowMs := c.now().UnixMilli()
	for _, l := range c.b.ConsumerLags() {
		gauge(c.lagMessages, float64(l.Lag), l.Topic, l.Group)
		age := int64(0)
		if l.Lag > 0 && l.EarliestUnconsumed > 0 {
			age = max(nowMs-l.EarliestUnconsumed, 0)
		}
		gauge(c.lagLatency, float64(age), l.Topic, l.Group)
	}

	g := c.b.Gauges()
	gauge(c.topics, float64(g.Topics))
	gauge(c.groups, float64(g.ConsumerGroups))
	gauge(c.watermark, float64(g.QueuedSends), "send")
	gauge(c.connections, float64(g.Connections))
	gauge(c.heldPulls, float64(g.HeldPulls))
	bs := c.b.Stats()
	c.bad.collect(ch, remoting.ServerStats{BadRequests: bs.BadRequests, BadInputCloses: bs.BadInputCloses})

	producers, consumers := c.b.ClientCounts()
	for _, p := range producers {
		gauge(c.producerConns, float64(p.Count), strings.ToLower(p.Language), strconv.Itoa(int(p.Version)), "remoting")
	}
	for _, k := range consumers {
		gauge(c.consumerConns, float64(k.Count), k.Group, strings.ToLower(k.Language), strconv.Itoa(int(k.Version)),
			consumeMode(k.ConsumeType), "remoting")
	}

	fc := c.b.FlowControl()
	counter(c.pcBusy, fc.PageCacheBusyRejected, "arrival")
	counter(c.pcBusy, fc.PageCacheBusyCleaned, "queued")
	counter(c.sendQueueRejected, fc.QueueFull, "full")
	counter(c.sendQueueRejected, fc.QueueTimeouts, "timeout")
	counter(c.onewayRefused, fc.OnewayRefusedBusy, "busy")
	counter(c.onewayRefused, fc.OnewayRefusedOther, "other")
	counter(c.onewayRefused, fc.OnewayRejectedByServer, "remoting")

	stages := c.req.StoreStages()
	ch <- constHistogram(c.lockHold, stages.LockHold, time.Second)
	ch <- constHistogram(c.lockWait, stages.LockWait, time.Second)
	ch <- constHistogram(c.flushWait, stages.FlushWait, time.Second)

	c.collectStore(ch, counter, gauge)
}

// collectStore emits the engine/store metrics; a broker over another store
// (memstore) has none, except the arrival-stage busy count above and a
// zero append-stage one.
func (c *BrokerCollector) collectStore(ch chan<- prometheus.Metric, counter func(*prometheus.Desc, uint64, ...string), gauge func(*prometheus.Desc, float64, ...string)) {
	es, ok := c.b.Store().(broker.EngineStore)
	if !ok {
		counter(c.pcBusy, 0, "append")
		return
	}
	s := es.EngineStore()
	st := s.Stats()
	cl := st.CommitLog
	counter(c.pcBusy, cl.BusyRefused, "append")
	gauge(c.dispatchBehind, float64(st.DispatchBehindBytes))
	gauge(c.flushBehind, float64(max(cl.MaxOffset-cl.FlushedOffset, 0)))
	gauge(c.storageSize, float64(max(cl.MaxOffset-s.MinPhyOffset(), 0)))
	counter(c.cleanDispatchWaits, st.CleanWaitsForDispatch)
	counter(c.dispatchSkippedBytes, st.DispatchSkippedBytes)
	counter(c.appends, cl.Appends)
	counter(c.appendBytes, cl.Bytes)
	ch <- metric(c.lockHeldTotal, prometheus.CounterValue, time.Duration(cl.LockHeldNanos).Seconds())
	f := st.Flush
	counter(c.flushes, f.Flushes)
	counter(c.flushTimeouts, f.Timeouts)
	counter(c.putFlushTimeouts, st.FlushTimeouts)
	gauge(c.flushMax, f.MaxFlush.Seconds())
	gauge(c.lockHeldMax, cl.MaxLockHeld.Seconds())

	lat := make(map[float64]uint64, flush.LatencyBuckets-1)
	var cum uint64
	for i := range flush.LatencyBuckets - 1 {
		cum += f.Latency[i]
		lat[flush.LatencyUpper(i).Seconds()] = cum
	}
	cum += f.Latency[flush.LatencyBuckets-1]
	ch <- histogram(c.flushLatency, cum, time.Duration(f.FlushNanos).Seconds(), lat)

	batch := make(map[float64]uint64, flush.BatchBuckets-1)
	cum = 0
	for i := range flush.BatchBuckets - 1 {
		cum += f.BatchSizes[i]
		batch[float64(flush.BucketUpper(i))] = cum
	}
	cum += f.BatchSizes[flush.BatchBuckets-1]
	ch <- histogram(c.flushBatch, cum, float64(f.Waiters), batch)
}

// consumeMode is RocketMQ's consume_mode label of a consume type.
func consumeMode(consumeType string) string {
	switch consumeType {
	case "CONSUME_PASSIVELY":
		return "push"
	case "CONSUME_ACTIVELY":
		return "pull"
	case "CONSUME_POP":
		return "pop"
	}
	return strings.ToLower(consumeType)
}

// excludedTopic reports the topics RocketMQ leaves out of its in/out
// message counters: retry and dead-letter topics.
func excludedTopic(topic string) bool {
	return strings.HasPrefix(topic, record.RetryTopicPrefix) || strings.HasPrefix(topic, record.DLQTopicPrefix)
}
