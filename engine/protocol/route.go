package protocol

// QueueData is one broker's share of a topic in a route.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	Perm           int32  `json:"perm"`
	ReadQueueNums  int32  `json:"readQueueNums"`
	TopicSysFlag   int32  `json:"topicSysFlag"`
	WriteQueueNums int32  `json:"writeQueueNums"`
}

// BrokerData is one broker name's addresses by broker id (0 = master).
type BrokerData struct {
	BrokerAddrs        map[int64]string `json:"brokerAddrs"`
	BrokerName         string           `json:"brokerName"`
	Cluster            string           `json:"cluster"`
	EnableActingMaster bool             `json:"enableActingMaster"`
	ZoneName           string           `json:"zoneName,omitempty"`
}

// MasterAddr returns the address of broker id 0, or "".
func (b *BrokerData) MasterAddr() string { return b.BrokerAddrs[MasterID] }

// Clone returns a copy of b that shares no map with it.
func (b *BrokerData) Clone() BrokerData {
	c := *b
	c.BrokerAddrs = make(map[int64]string, len(b.BrokerAddrs))
	for id, a := range b.BrokerAddrs {
		c.BrokerAddrs[id] = a
	}
	return c
}

// TopicRouteData answers GET_ROUTEINFO_BY_TOPIC. Encode it with
// EncodeTopicRouteData (encoding/json would quote the brokerAddrs keys
// always and emit null for an empty filter table).
type TopicRouteData struct {
	BrokerDatas       []BrokerData        `json:"brokerDatas"`
	FilterServerTable map[string][]string `json:"filterServerTable"`
	OrderTopicConf    string              `json:"orderTopicConf,omitempty"`
	QueueDatas        []QueueData         `json:"queueDatas"`
}

// ClusterInfo answers GET_BROKER_CLUSTER_INFO.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// TopicList answers GET_ALL_TOPIC_LIST_FROM_NAMESERVER and GET_TOPICS_BY_CLUSTER.
type TopicList struct {
	BrokerAddr string   `json:"brokerAddr,omitempty"`
	TopicList  []string `json:"topicList"`
}

// KVTable is a string table: the REGISTER_BROKER response body (order-topic
// configs) and GET_BROKER_RUNTIME_INFO's body.
type KVTable struct {
	Table map[string]string `json:"table"`
}
