package broker

import (
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/admin"
)

// What the broker exposes for monitoring beyond Stats and RuntimeStats:
// consumer lag, flow-control refusals and table sizes. Everything here is
// computed when asked (an exporter's scrape) from state the broker keeps
// anyway, except the flow-control counters, which are atomic adds on the
// refusal paths only.

// ConsumerLag is one consumer group's backlog on one topic
// (admin.ConsumerLag).
type ConsumerLag = admin.ConsumerLag

// ConsumerLags returns the lag of every (group, topic) pair the broker
// knows of (admin.Service.ConsumerLags). Nil before Start.
func (b *Broker) ConsumerLags() []ConsumerLag {
	if !b.running.Load() || b.topics == nil {
		return nil
	}
	return b.admin.ConsumerLags()
}

// flowCounters count the sends refused by the broker's flow control
// (BrokerFastFailure and the send queue); updated on refusals only.
type flowCounters struct {
	pcBusyRejected, pcBusyCleaned, queueFull, queueTimeouts atomic.Uint64
	onewayBusy, onewayOther                                 atomic.Uint64 // oneway sends refused (sendqueue.go)
}

// FlowControl counts the sends answered SYSTEM_BUSY by flow control since
// the broker was built.
type FlowControl struct {
	// PageCacheBusyRejected: refused on arrival while the store reported
	// its page cache busy ([REJECTREQUEST]); PageCacheBusyCleaned: queued
	// sends answered by the fast-failure scan while it was busy
	// ([PCBUSY_CLEAN_QUEUE]). Appends the store itself refused
	// ([PC_SYNCHRONIZED]) are counted by the store (commitlog BusyRefused).
	PageCacheBusyRejected, PageCacheBusyCleaned uint64
	// QueueFull: refused because the send queue was full ([OVERLOAD]);
	// QueueTimeouts: waited in the queue past SendQueueMaxWait
	// ([TIMEOUT_CLEAN_QUEUE]).
	QueueFull, QueueTimeouts uint64
	// OnewayRefusedBusy and OnewayRefusedOther count the oneway sends
	// (SEND_MESSAGE/_V2 and batches with the oneway flag) that were not
	// stored: answered SYSTEM_BUSY by flow control (also counted above),
	// or any other non-SUCCESS code (no such topic, illegal message, store
	// not available, ...). A oneway producer hears no answer, so these are
	// the messages that vanish without a trace on its side.
	OnewayRefusedBusy, OnewayRefusedOther uint64
	// OnewayRejectedByServer counts the oneway requests of any code that
	// the remoting server refused before the broker saw them (too many in
	// flight on the connection, an executor's queue full, shutting down).
	OnewayRejectedByServer uint64
}

// FlowControl returns the flow-control counters.
func (b *Broker) FlowControl() FlowControl {
	return FlowControl{
		PageCacheBusyRejected:  b.flow.pcBusyRejected.Load(),
		PageCacheBusyCleaned:   b.flow.pcBusyCleaned.Load(),
		QueueFull:              b.flow.queueFull.Load(),
		QueueTimeouts:          b.flow.queueTimeouts.Load(),
		OnewayRefusedBusy:      b.flow.onewayBusy.Load(),
		OnewayRefusedOther:     b.flow.onewayOther.Load(),
		OnewayRejectedByServer: b.server.OnewayRejected(),
	}
}

// Gauges are the broker's current table sizes and queues.
type Gauges struct {
	Topics         int // topic table entries (system topics included)
	ConsumerGroups int // subscription group table entries
	OnlineGroups   int // consumer groups with a live member
	Connections    int // open client connections
	HeldPulls      int // pulls parked by long polling
	QueuedSends    int // sends waiting for a send worker
	Uptime         time.Duration
}

// Gauges returns the current table sizes; zero before Start.
func (b *Broker) Gauges() Gauges {
	if !b.running.Load() || b.topics == nil {
		return Gauges{}
	}
	st := b.Stats()
	g := Gauges{
		Topics:       len(b.topics.Wrapper().TopicConfigTable),
		OnlineGroups: len(b.clients.ConsumerGroupNames()),
		Connections:  b.server.ConnCount(),
		HeldPulls:    st.HeldPulls,
		QueuedSends:  st.QueuedSends,
	}
	if t, err := b.meta.Groups(); err == nil {
		g.ConsumerGroups = len(t.Names())
	}
	g.Uptime = time.Since(b.admin.Traffic.Boot())
	return g
}

// ClientCounts returns the live producer connections (one per client in a
// producer group) and consumer connections (one per member of each consumer
// group), counted by language and version (and group and consume type),
// sorted. It holds the client table's lock for one walk.
func (b *Broker) ClientCounts() (producers, consumers []ClientCount) {
	return b.clients.Counts()
}
