package namesrv

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// brokerAddrKey identifies a registered broker process.
type brokerAddrKey struct {
	cluster string
	addr    string
}

// brokerLiveInfo is what the last registration of a broker process left.
type brokerLiveInfo struct {
	lastUpdate   time.Time
	timeout      time.Duration
	dataVersion  protocol.DataVersion
	conn         *remoting.Conn // the connection it registered over; nil in unit tests
	haServerAddr string
	brokerName   string
	brokerID     int64
}

// routeTable is the name server's state; every field is guarded by mu.
type routeTable struct {
	mu            sync.RWMutex
	topicQueues   map[string]map[string]protocol.QueueData // topic → brokerName → queue data
	brokers       map[string]*protocol.BrokerData          // brokerName → addresses
	clusters      map[string]map[string]struct{}           // cluster → broker names
	live          map[brokerAddrKey]*brokerLiveInfo
	filterServers map[brokerAddrKey][]string

	deleteTopicWithRegistration bool
}

func newRouteTable(deleteTopicWithRegistration bool) *routeTable {
	return &routeTable{
		topicQueues:                 make(map[string]map[string]protocol.QueueData),
		brokers:                     make(map[string]*protocol.BrokerData),
		clusters:                    make(map[string]map[string]struct{}),
		live:                        make(map[brokerAddrKey]*brokerLiveInfo),
		filterServers:               make(map[brokerAddrKey][]string),
		deleteTopicWithRegistration: deleteTopicWithRegistration,
	}
}

// registration is one decoded REGISTER_BROKER request.
type registration struct {
	ClusterName        string
	BrokerName         string
	BrokerAddr         string
	HAServerAddr       string
	ZoneName           string
	BrokerID           int64
	Timeout            time.Duration
	EnableActingMaster bool
	Topics             protocol.TopicConfigSerializeWrapper
	FilterServers      []string // nil: leave as is; empty: clear
	Conn               *remoting.Conn
	Now                time.Time
}

// RegisterBrokerResult is what REGISTER_BROKER tells a slave about its master.
type RegisterBrokerResult struct {
	HAServerAddr string
	MasterAddr   string
}

// register applies a registration (RouteInfoManager.registerBroker).
func (rt *routeTable) register(r registration) RegisterBrokerResult {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	key := brokerAddrKey{r.ClusterName, r.BrokerAddr}

	names := rt.clusters[r.ClusterName]
	if names == nil {
		names = make(map[string]struct{})
		rt.clusters[r.ClusterName] = names
	}
	names[r.BrokerName] = struct{}{}

	bd := rt.brokers[r.BrokerName]
	registerFirst := bd == nil
	if bd == nil {
		bd = &protocol.BrokerData{BrokerAddrs: make(map[int64]string), BrokerName: r.BrokerName, Cluster: r.ClusterName}
		rt.brokers[r.BrokerName] = bd
	}
	bd.EnableActingMaster = r.EnableActingMaster
	if r.ZoneName != "" {
		bd.ZoneName = r.ZoneName
	}
	// An address lives under one id only (a slave switched to master moves).
	for id, a := range bd.BrokerAddrs {
		if a == r.BrokerAddr && id != r.BrokerID {
			delete(bd.BrokerAddrs, id)
		}
	}
	// A different process already holds this id with a newer state: refuse.
	if old, ok := bd.BrokerAddrs[r.BrokerID]; ok && old != r.BrokerAddr {
		if oldLive := rt.live[brokerAddrKey{r.ClusterName, old}]; oldLive != nil &&
			oldLive.dataVersion.StateVersion > r.Topics.DataVersion.StateVersion {
			delete(rt.live, key)
			return RegisterBrokerResult{}
		}
	}
	prevAddr := bd.BrokerAddrs[r.BrokerID]
	bd.BrokerAddrs[r.BrokerID] = r.BrokerAddr
	registerFirst = registerFirst || prevAddr == ""

	isMaster := r.BrokerID == protocol.MasterID
	isPrimeSlave := !isMaster && r.BrokerID == slices.Min(slices.Collect(maps.Keys(bd.BrokerAddrs)))
	if isMaster || isPrimeSlave {
		prev := rt.live[key]
		versionChanged := prev == nil || prev.dataVersion != r.Topics.DataVersion
		if rt.deleteTopicWithRegistration && len(r.Topics.TopicQueueMappingInfoMap) == 0 {
			for topic, byBroker := range rt.topicQueues {
				if _, ok := byBroker[r.BrokerName]; ok {
					if _, still := r.Topics.TopicConfigTable[topic]; !still {
						rt.removeQueueDataLocked(topic, r.BrokerName)
					}
				}
			}
		}
		for _, tc := range r.Topics.TopicConfigTable {
			_, known := rt.topicQueues[tc.TopicName][r.BrokerName]
			if registerFirst || versionChanged || !known {
				if isPrimeSlave && bd.EnableActingMaster {
					tc.Perm &^= protocol.PermWrite
				}
				rt.putQueueDataLocked(r.BrokerName, tc)
			}
		}
	}

	rt.live[key] = &brokerLiveInfo{lastUpdate: r.Now, timeout: r.Timeout, dataVersion: r.Topics.DataVersion,
		conn: r.Conn, haServerAddr: r.HAServerAddr, brokerName: r.BrokerName, brokerID: r.BrokerID}
	if r.FilterServers != nil {
		if len(r.FilterServers) == 0 {
			delete(rt.filterServers, key)
		} else {
			rt.filterServers[key] = slices.Clone(r.FilterServers)
		}
	}

	var res RegisterBrokerResult
	if !isMaster {
		if masterAddr := bd.BrokerAddrs[protocol.MasterID]; masterAddr != "" {
			if ml := rt.live[brokerAddrKey{r.ClusterName, masterAddr}]; ml != nil {
				res = RegisterBrokerResult{HAServerAddr: ml.haServerAddr, MasterAddr: masterAddr}
			}
		}
	}
	return res
}

// REQUIRES: rt.mu held for writing.
func (rt *routeTable) putQueueDataLocked(brokerName string, tc protocol.TopicConfig) {
	byBroker := rt.topicQueues[tc.TopicName]
	if byBroker == nil {
		byBroker = make(map[string]protocol.QueueData)
		rt.topicQueues[tc.TopicName] = byBroker
	}
	byBroker[brokerName] = protocol.QueueData{BrokerName: brokerName, Perm: tc.Perm, ReadQueueNums: tc.ReadQueueNums,
		TopicSysFlag: tc.TopicSysFlag, WriteQueueNums: tc.WriteQueueNums}
}

// REQUIRES: rt.mu held for writing.
func (rt *routeTable) removeQueueDataLocked(topic, brokerName string) {
	byBroker := rt.topicQueues[topic]
	delete(byBroker, brokerName)
	if len(byBroker) == 0 {
		delete(rt.topicQueues, topic)
	}
}

// unregister removes one broker process (RouteInfoManager.unregisterBroker).
func (rt *routeTable) unregister(cluster, addr, brokerName string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.unregisterLocked(brokerAddrKey{cluster, addr}, brokerName)
}

// REQUIRES: rt.mu held for writing.
func (rt *routeTable) unregisterLocked(key brokerAddrKey, brokerName string) {
	delete(rt.live, key)
	delete(rt.filterServers, key)
	bd := rt.brokers[brokerName]
	if bd == nil {
		return
	}
	for id, a := range bd.BrokerAddrs {
		if a == key.addr {
			delete(bd.BrokerAddrs, id)
		}
	}
	if len(bd.BrokerAddrs) > 0 {
		return
	}
	delete(rt.brokers, brokerName)
	if names := rt.clusters[bd.Cluster]; names != nil {
		delete(names, brokerName)
		if len(names) == 0 {
			delete(rt.clusters, bd.Cluster)
		}
	}
	for topic := range rt.topicQueues {
		rt.removeQueueDataLocked(topic, brokerName)
	}
}

// brokerNameOfLocked finds the broker name an address is registered under.
// REQUIRES: rt.mu held.
func (rt *routeTable) brokerNameOfLocked(key brokerAddrKey) string {
	if li := rt.live[key]; li != nil {
		return li.brokerName
	}
	for name, bd := range rt.brokers {
		if bd.Cluster != key.cluster {
			continue
		}
		for _, a := range bd.BrokerAddrs {
			if a == key.addr {
				return name
			}
		}
	}
	return ""
}

// connClosed drops every broker process that last registered over conn.
func (rt *routeTable) connClosed(conn *remoting.Conn) []brokerAddrKey {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var removed []brokerAddrKey
	for key, li := range rt.live {
		if li.conn == conn {
			removed = append(removed, key)
		}
	}
	for _, key := range removed {
		rt.unregisterLocked(key, rt.brokerNameOfLocked(key))
	}
	return removed
}

// scanNotActive drops brokers whose last registration is older than their
// timeout at now and returns the connections they registered over.
func (rt *routeTable) scanNotActive(now time.Time) (removed []brokerAddrKey, conns []*remoting.Conn) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for key, li := range rt.live {
		if li.lastUpdate.Add(li.timeout).Before(now) {
			removed = append(removed, key)
			if li.conn != nil {
				conns = append(conns, li.conn)
			}
		}
	}
	for _, key := range removed {
		rt.unregisterLocked(key, rt.brokerNameOfLocked(key))
	}
	return removed, conns
}

// touch refreshes a broker's liveness (BROKER_HEARTBEAT, QUERY_DATA_VERSION).
func (rt *routeTable) touch(cluster, addr string, now time.Time) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	li := rt.live[brokerAddrKey{cluster, addr}]
	if li == nil {
		return false
	}
	li.lastUpdate = now
	return true
}

// dataVersion returns the version a broker last registered with.
func (rt *routeTable) dataVersion(cluster, addr string) (protocol.DataVersion, bool) {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	li := rt.live[brokerAddrKey{cluster, addr}]
	if li == nil {
		return protocol.DataVersion{}, false
	}
	return li.dataVersion, true
}

// topicRoute builds the route of topic (RouteInfoManager.pickupTopicRouteData);
// false if no queue data or no broker address is known for it.
func (rt *routeTable) topicRoute(topic string) (*protocol.TopicRouteData, bool) {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	byBroker := rt.topicQueues[topic]
	if len(byBroker) == 0 {
		return nil, false
	}
	rd := &protocol.TopicRouteData{FilterServerTable: make(map[string][]string)}
	for _, name := range slices.Sorted(maps.Keys(byBroker)) {
		rd.QueueDatas = append(rd.QueueDatas, byBroker[name])
		bd := rt.brokers[name]
		if bd == nil {
			continue
		}
		rd.BrokerDatas = append(rd.BrokerDatas, bd.Clone())
		for _, addr := range bd.BrokerAddrs {
			if fs := rt.filterServers[brokerAddrKey{bd.Cluster, addr}]; len(fs) > 0 {
				rd.FilterServerTable[addr] = slices.Clone(fs)
			}
		}
	}
	if len(rd.BrokerDatas) == 0 {
		return nil, false
	}
	return rd, true
}

// clusterInfo copies the broker and cluster tables.
func (rt *routeTable) clusterInfo() *protocol.ClusterInfo {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	ci := &protocol.ClusterInfo{BrokerAddrTable: make(map[string]protocol.BrokerData), ClusterAddrTable: make(map[string][]string)}
	for name, bd := range rt.brokers {
		ci.BrokerAddrTable[name] = bd.Clone()
	}
	for cluster, names := range rt.clusters {
		ci.ClusterAddrTable[cluster] = slices.Sorted(maps.Keys(names))
	}
	return ci
}

// topics lists every topic with queue data, sorted.
func (rt *routeTable) topics() []string {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return slices.Sorted(maps.Keys(rt.topicQueues))
}

// topicsByCluster lists the topics with queue data on a broker of cluster.
func (rt *routeTable) topicsByCluster(cluster string) []string {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	var out []string
	for topic, byBroker := range rt.topicQueues {
		for name := range byBroker {
			if _, ok := rt.clusters[cluster][name]; ok {
				out = append(out, topic)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// deleteTopic removes topic, or only its queues on cluster's brokers.
func (rt *routeTable) deleteTopic(topic, cluster string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if cluster == "" {
		delete(rt.topicQueues, topic)
		return
	}
	for name := range rt.clusters[cluster] {
		rt.removeQueueDataLocked(topic, name)
	}
}
