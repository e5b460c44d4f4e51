package admin

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// getConsumerConnectionList handles GET_CONSUMER_CONNECTION_LIST (203).
func (s *Service) getConsumerConnectionList(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	cc, ok := s.deps.Clients.ConsumerConnection(group)
	if !ok {
		return responsef(protocol.RespConsumerNotOnline, "the consumer group[%s] not online", group), nil
	}
	body, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// getProducerConnectionList handles GET_PRODUCER_CONNECTION_LIST (204).
func (s *Service) getProducerConnectionList(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("producerGroup")
	if err != nil {
		return nil, err
	}
	conns := s.deps.Clients.ProducerConnections(group)
	if len(conns) == 0 {
		return responsef(protocol.RespSystemError, "the producer group[%s] not exist", group), nil
	}
	body, err := json.Marshal(protocol.ProducerConnection{ConnectionSet: conns})
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// queryTopicConsumeByWho handles QUERY_TOPIC_CONSUME_BY_WHO (300): GroupList
// {"groupList":[...]}, the online groups subscribed to the topic and the
// groups with offsets stored for it.
func (s *Service) queryTopicConsumeByWho(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	set := map[string]struct{}{}
	for _, g := range s.deps.Clients.ConsumerGroupNames() {
		if s.deps.Clients.Subscription(g, topic) != nil {
			set[g] = struct{}{}
		}
	}
	for _, g := range s.deps.Meta.Offsets.Groups(topic) {
		set[g] = struct{}{}
	}
	groups := make([]string, 0, len(set))
	for g := range set {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	body, err := json.Marshal(struct {
		GroupList []string `json:"groupList"`
	}{groups})
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}
