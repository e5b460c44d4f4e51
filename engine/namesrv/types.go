package namesrv

import "encoding/json"

// Permission bits of a topic or broker (PermName).
const (
	PermPriority int32 = 8
	PermRead     int32 = 4
	PermWrite    int32 = 2
	PermInherit  int32 = 1
	// DefaultPerm is read + write, what topics get unless configured otherwise.
	DefaultPerm = PermRead | PermWrite
)

// MasterID is the broker id of a master; slaves have ids ≥ 1.
const MasterID int64 = 0

// DataVersion versions a broker's topic table; the name server re-reads the
// topics of a registration only when it changed.
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

// TopicConfig is one topic as the broker configures it (fields in fastjson order).
type TopicConfig struct {
	Attributes      map[string]string `json:"attributes"`
	Order           bool              `json:"order"`
	Perm            int32             `json:"perm"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	TopicFilterType string            `json:"topicFilterType"` // "SINGLE_TAG"
	TopicName       string            `json:"topicName"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
}

// NewTopicConfig returns a read-write topic with queues read and write queues.
func NewTopicConfig(name string, queues int32) TopicConfig {
	return TopicConfig{Attributes: map[string]string{}, Perm: DefaultPerm, ReadQueueNums: queues,
		TopicFilterType: "SINGLE_TAG", TopicName: name, WriteQueueNums: queues}
}

// TopicConfigSerializeWrapper is a broker's topic table with its version; the
// body of GET_ALL_TOPIC_CONFIG (21) and part of RegisterBrokerBody. The
// mapping fields (static topics) are carried but not interpreted.
type TopicConfigSerializeWrapper struct {
	DataVersion                DataVersion                `json:"dataVersion"`
	MappingDataVersion         *DataVersion               `json:"mappingDataVersion,omitempty"`
	TopicConfigTable           map[string]TopicConfig     `json:"topicConfigTable"`
	TopicQueueMappingDetailMap map[string]json.RawMessage `json:"topicQueueMappingDetailMap,omitempty"`
	TopicQueueMappingInfoMap   map[string]json.RawMessage `json:"topicQueueMappingInfoMap,omitempty"`
}

// RegisterBrokerBody is the body of REGISTER_BROKER (103).
type RegisterBrokerBody struct {
	FilterServerList            []string                    `json:"filterServerList"`
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper `json:"topicConfigSerializeWrapper"`
}

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

func (b *BrokerData) clone() BrokerData {
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

// KVTable is the REGISTER_BROKER response body (order-topic configs).
type KVTable struct {
	Table map[string]string `json:"table"`
}
