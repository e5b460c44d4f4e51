package netdriver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// queueRef is one queue of one broker.
type queueRef struct {
	brokerName string
	addr       string
	queueID    int32
}

// route is a topic's queues, sorted by (broker name, queue id).
type route struct {
	write, read []queueRef
	expires     time.Time
}

// queue resolves a harness queue index to a broker queue.
func (d *Driver) queue(ctx context.Context, topic string, index int32, write bool) (queueRef, error) {
	if d.direct() {
		return queueRef{addr: d.cfg.Broker, queueID: index}, nil
	}
	r, err := d.route(ctx, topic)
	if err != nil {
		return queueRef{}, err
	}
	qs := r.read
	if write {
		qs = r.write
	}
	if len(qs) == 0 {
		return queueRef{}, fmt.Errorf("%w %q: no %s queue", ErrNoRoute, topic, map[bool]string{true: "writable", false: "readable"}[write])
	}
	i := int(index) % len(qs)
	if i < 0 {
		i += len(qs)
	}
	return qs[i], nil
}

func (d *Driver) direct() bool { return len(d.namesrvs) == 0 }

// route returns the cached route of topic or asks the name servers, creating
// the topic first when configured to.
func (d *Driver) route(ctx context.Context, topic string) (*route, error) {
	d.mu.RLock()
	r := d.mu.routes[topic]
	d.mu.RUnlock()
	if r != nil && time.Now().Before(r.expires) {
		return r, nil
	}
	rd, err := d.fetchRoute(ctx, topic)
	if errors.Is(err, namesrv.ErrTopicNotExist) && d.cfg.CreateQueues > 0 {
		if err := d.CreateTopic(ctx, topic, d.cfg.CreateQueues); err != nil {
			return nil, err
		}
		rd, err = d.fetchRoute(ctx, topic)
	}
	if errors.Is(err, namesrv.ErrTopicNotExist) {
		return nil, fmt.Errorf("%w %q", ErrNoRoute, topic)
	}
	if err != nil {
		return nil, err
	}
	r = buildRoute(rd)
	r.expires = time.Now().Add(d.cfg.RouteTTL)
	d.mu.Lock()
	d.mu.routes[topic] = r
	d.mu.Unlock()
	return r, nil
}

// forget drops a cached route (the broker no longer knows the topic).
func (d *Driver) forget(topic string) {
	d.mu.Lock()
	delete(d.mu.routes, topic)
	d.mu.Unlock()
}

// fetchRoute asks each name server in turn until one answers.
func (d *Driver) fetchRoute(ctx context.Context, topic string) (*protocol.TopicRouteData, error) {
	var last error
	for _, ns := range d.namesrvs {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		rd, err := namesrv.GetRouteInfo(cctx, d.client, ns, topic)
		cancel()
		if err == nil || errors.Is(err, namesrv.ErrTopicNotExist) {
			return rd, err
		}
		last = err
	}
	return nil, last
}

func buildRoute(rd *protocol.TopicRouteData) *route {
	masters := make(map[string]string, len(rd.BrokerDatas))
	for _, bd := range rd.BrokerDatas {
		if a := bd.MasterAddr(); a != "" {
			masters[bd.BrokerName] = a
		}
	}
	r := &route{}
	for _, qd := range rd.QueueDatas {
		addr, ok := masters[qd.BrokerName]
		if !ok {
			continue
		}
		if qd.Perm&protocol.PermWrite != 0 {
			for q := range qd.WriteQueueNums {
				r.write = append(r.write, queueRef{qd.BrokerName, addr, q})
			}
		}
		if qd.Perm&protocol.PermRead != 0 {
			for q := range qd.ReadQueueNums {
				r.read = append(r.read, queueRef{qd.BrokerName, addr, q})
			}
		}
	}
	order := func(a, b queueRef) int {
		return cmp.Or(cmp.Compare(a.brokerName, b.brokerName), cmp.Compare(a.queueID, b.queueID))
	}
	slices.SortFunc(r.write, order)
	slices.SortFunc(r.read, order)
	return r
}

// CreateTopic creates topic with queues read and write queues on the
// broker (direct mode) or on every master the name servers know, and waits
// until the name servers route it.
func (d *Driver) CreateTopic(ctx context.Context, topic string, queues int32) error {
	var addrs, names []string
	if d.direct() {
		addrs = []string{d.cfg.Broker}
	} else {
		var ci *protocol.ClusterInfo
		var err error
		for _, ns := range d.namesrvs {
			cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
			ci, err = namesrv.GetClusterInfo(cctx, d.client, ns)
			cancel()
			if err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("netdriver: create topic %q: %w", topic, err)
		}
		for name, bd := range ci.BrokerAddrTable {
			if a := bd.MasterAddr(); a != "" {
				addrs = append(addrs, a)
				names = append(names, name)
			}
		}
		if len(addrs) == 0 {
			return fmt.Errorf("%w %q: no broker registered", ErrNoRoute, topic)
		}
	}
	ext := remoting.ExtFields{"topic": topic, "defaultTopic": protocol.DefaultTopic, "perm": "6", "topicFilterType": protocol.DefaultTopicFilterType,
		"topicSysFlag": "0", "order": "false"}
	ext.SetInt32("readQueueNums", queues)
	ext.SetInt32("writeQueueNums", queues)
	for _, addr := range addrs {
		if _, err := d.invoke(ctx, addr, remoting.NewRequest(protocol.ReqUpdateAndCreateTopic, ext)); err != nil {
			return fmt.Errorf("netdriver: create topic %q on %s: %w", topic, addr, err)
		}
	}
	if d.direct() {
		return nil
	}
	d.forget(topic)
	deadline := time.Now().Add(10 * d.cfg.Timeout)
	for {
		rd, err := d.fetchRoute(ctx, topic)
		if err == nil && routesAll(rd, names) {
			return nil
		}
		if err != nil && !errors.Is(err, namesrv.ErrTopicNotExist) || time.Now().After(deadline) {
			return fmt.Errorf("netdriver: topic %q created but not routed to every broker: %v", topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// routesAll reports whether rd has queues on every named broker.
func routesAll(rd *protocol.TopicRouteData, brokers []string) bool {
	for _, name := range brokers {
		if !slices.ContainsFunc(rd.QueueDatas, func(qd protocol.QueueData) bool { return qd.BrokerName == name }) {
			return false
		}
	}
	return true
}
