package broker

import (
	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// The heartbeat bodies are the client service's (clients/).
type (
	HeartbeatData    = clients.HeartbeatData
	ProducerData     = clients.ProducerData
	ConsumerData     = clients.ConsumerData
	SubscriptionData = clients.SubscriptionData
	ClientCount      = clients.ClientCount
)

// Message models.
const (
	Clustering   = clients.Clustering
	Broadcasting = clients.Broadcasting
)

// DecodeHeartbeat parses a HEART_BEAT body (clients.DecodeHeartbeat).
func DecodeHeartbeat(b []byte) (*HeartbeatData, error) { return clients.DecodeHeartbeat(b) }

// beforeHeartbeat is the client service's Deps.BeforeHeartbeat: clustering
// groups get their %RETRY% topic, routable when the heartbeat is answered
// (registered before the client is recorded, as Java creates them first),
// and their subscription groups.
func (b *Broker) beforeHeartbeat(hb *HeartbeatData) *remoting.Command {
	var retryTopic string
	var newest int64
	for _, cd := range hb.ConsumerDataSet {
		if cd.MessageModel == Broadcasting || cd.GroupName == "" {
			continue
		}
		_, _, ver, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(protocol.RetryTopic(cd.GroupName), b.admin.RetryQueueNums(cd.GroupName)))
		if err != nil {
			b.log.Warn("create retry topic failed", "group", cd.GroupName, "err", err)
		}
		if ver > newest {
			retryTopic, newest = protocol.RetryTopic(cd.GroupName), ver
		}
	}
	resp := b.routeResponse(retryTopic, "created", newest)
	b.admin.EnsureHeartbeatGroups(hb)
	return resp
}
