package broker

import (
	"context"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// heartbeat handles HEART_BEAT (34): the client's groups replace what it
// announced before; clustering groups get their %RETRY% topic; groups whose
// membership changed are told (NOTIFY_CONSUMER_IDS_CHANGED).
func (b *Broker) heartbeat(_ context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	hb, err := DecodeHeartbeat(req.Body)
	if err != nil {
		return nil, remoting.NewBadRequest("%v", err)
	}
	var retryTopic string
	var newest int64
	for _, cd := range hb.ConsumerDataSet {
		if cd.MessageModel == Broadcasting || cd.GroupName == "" {
			continue
		}
		_, _, ver, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(protocol.RetryTopic(cd.GroupName), b.groupRetryQueueNums(cd.GroupName)))
		if err != nil {
			b.log.Warn("create retry topic failed", "group", cd.GroupName, "err", err)
		}
		if ver > newest {
			retryTopic, newest = protocol.RetryTopic(cd.GroupName), ver
		}
	}
	// The groups' retry topics are routable when the heartbeat is answered
	// (registered before the client is recorded, as Java creates them first).
	resp := b.routeResponse(retryTopic, "created", newest)
	b.ensureHeartbeatGroups(hb)
	changed := b.clients.heartbeat(conn, hb, time.Now())
	b.clients.setClientMeta(hb.ClientID, req.Language, req.Version)
	b.notifyConsumerIDsChanged(changed)
	if resp != nil {
		return resp, nil
	}
	return success(), nil
}

// unregisterClient handles UNREGISTER_CLIENT (35).
func (b *Broker) unregisterClient(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	id, err := req.ExtFields.String("clientID")
	if err != nil {
		return nil, err
	}
	changed := b.clients.unregister(id, req.ExtFields.OptString("producerGroup", ""), req.ExtFields.OptString("consumerGroup", ""))
	b.notifyConsumerIDsChanged(changed)
	return success(), nil
}
