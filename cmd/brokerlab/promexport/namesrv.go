package promexport

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// NamesrvCollector is a prometheus.Collector over one name server: request
// latency per code (rocketmq_rpc_latency; its _count is the request
// count), the registered brokers per cluster and the topics with routes.
// Safe for concurrent use.
type NamesrvCollector struct {
	s   *namesrv.Server
	req *remoting.RequestStats

	rpcLatency                                *prometheus.Desc
	brokers, brokerNames, topics, connections *prometheus.Desc
	bad                                       badInputDescs
}

// NewNamesrvCollector builds the collector and installs its request
// observer on s. cluster labels every series (RocketMQ's name server has
// no cluster; "" is fine) and nodeID names the server (its address).
// REQUIRES: called before s.Start.
func NewNamesrvCollector(s *namesrv.Server, nodeID string) *NamesrvCollector {
	nl := prometheus.Labels{"node_type": "nameserver", "node_id": nodeID}
	c := &NamesrvCollector{
		s:          s,
		req:        remoting.NewRequestStats(),
		rpcLatency: rpcLatencyDesc(nl),
		brokers: prometheus.NewDesc("brokerlab_namesrv_brokers",
			"Live broker processes registered with the name server (one per address), per cluster.", []string{"cluster"}, nl),
		brokerNames: prometheus.NewDesc("brokerlab_namesrv_broker_names",
			"Broker groups (a master and its slaves share a name) registered, per cluster.", []string{"cluster"}, nl),
		topics: prometheus.NewDesc("brokerlab_namesrv_topics",
			"Topics with queue data on some registered broker.", nil, nl),
		connections: prometheus.NewDesc("brokerlab_connections", "Open remoting connections.", nil, nl),
		bad:         newBadInputDescs(nl),
	}
	s.AddObserver(c.req)
	return c
}

// Describe implements prometheus.Collector.
func (c *NamesrvCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rpcLatency
	ch <- c.brokers
	ch <- c.brokerNames
	ch <- c.topics
	ch <- c.connections
	c.bad.describe(ch)
}

// Collect implements prometheus.Collector.
func (c *NamesrvCollector) Collect(ch chan<- prometheus.Metric) {
	collectRPCLatency(ch, c.rpcLatency, c.req)
	n := c.s.Counts()
	for _, cl := range n.Clusters {
		ch <- metric(c.brokers, prometheus.GaugeValue, float64(cl.Brokers), cl.Cluster)
		ch <- metric(c.brokerNames, prometheus.GaugeValue, float64(cl.BrokerNames), cl.Cluster)
	}
	ch <- metric(c.topics, prometheus.GaugeValue, float64(n.Topics))
	ch <- metric(c.connections, prometheus.GaugeValue, float64(n.Connections))
	c.bad.collect(ch, c.s.Stats())
}
