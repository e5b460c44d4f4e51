package namesrv

import (
	"slices"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// AddObserver adds a remoting observer to the name server's server (told
// about every answered request with its Timings; remoting.RequestStats
// keeps latency histograms per request code). REQUIRES: called before Start.
func (s *Server) AddObserver(o remoting.Observer) { s.rs.AddObserver(o) }

// ClusterCounts is one cluster's registered brokers.
type ClusterCounts struct {
	Cluster string
	// BrokerNames are the broker groups (master and slaves share a name);
	// Brokers the live broker processes (one per registered address).
	BrokerNames, Brokers int
}

// Counts are the sizes of the name server's tables.
type Counts struct {
	// Topics with queue data on some broker.
	Topics int
	// Clusters, sorted by name.
	Clusters []ClusterCounts
	// Connections is the number of open connections (brokers and clients).
	Connections int
}

// Counts returns the table sizes. It takes the route table's read lock
// once, for a walk over the cluster and liveness tables.
func (s *Server) Counts() Counts {
	c := Counts{Connections: s.rs.ConnCount()}
	rt := s.routes
	rt.mu.RLock()
	c.Topics = len(rt.topicQueues)
	byCluster := make(map[string]*ClusterCounts, len(rt.clusters))
	for name, brokers := range rt.clusters {
		byCluster[name] = &ClusterCounts{Cluster: name, BrokerNames: len(brokers)}
	}
	for key := range rt.live {
		cc, ok := byCluster[key.cluster]
		if !ok {
			cc = &ClusterCounts{Cluster: key.cluster}
			byCluster[key.cluster] = cc
		}
		cc.Brokers++
	}
	rt.mu.RUnlock()
	for _, cc := range byCluster {
		c.Clusters = append(c.Clusters, *cc)
	}
	slices.SortFunc(c.Clusters, func(a, b ClusterCounts) int {
		switch {
		case a.Cluster < b.Cluster:
			return -1
		case a.Cluster > b.Cluster:
			return 1
		}
		return 0
	})
	return c
}
