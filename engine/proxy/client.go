package proxy

import (
	"context"
	"encoding/json"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Heartbeat forwards the client's groups to the broker as HEART_BEAT: a
// producer's topics as producer groups (so transaction checks find it), a
// consumer's group with its subscriptions.
func (s *Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	c := callOf(ctx)
	ss := s.sessions.get(c.clientID)
	hb := clients.HeartbeatData{ClientID: c.clientID}
	switch req.GetClientType() {
	case v2.ClientType_PRODUCER:
		if ss == nil {
			return &v2.HeartbeatResponse{Status: okStatus()}, nil
		}
		hb.ProducerDataSet = producerData(ss)
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER, v2.ClientType_PULL_CONSUMER, v2.ClientType_LITE_PUSH_CONSUMER:
		group := req.GetGroup().GetName()
		if group == "" {
			return &v2.HeartbeatResponse{Status: newStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group is empty")}, nil
		}
		cd := clients.ConsumerData{GroupName: group, ConsumeType: "CONSUME_POP", MessageModel: "CLUSTERING",
			ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET", SubscriptionDataSet: []clients.SubscriptionData{}}
		if req.GetClientType() == v2.ClientType_PULL_CONSUMER {
			cd.ConsumeType = "CONSUME_ACTIVELY"
		}
		if ss != nil {
			for _, e := range ss.settings.Load().GetSubscription().GetSubscriptions() {
				sd := clients.SubscriptionData{Topic: e.GetTopic().GetName(), SubString: e.GetExpression().GetExpression(), ExpressionType: "TAG"}
				if e.GetExpression().GetType() == v2.FilterType_SQL {
					sd.ExpressionType = "SQL92"
				}
				if sd.SubString == "" {
					sd.SubString = "*"
				}
				cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, sd)
			}
		}
		hb.ConsumerDataSet = []clients.ConsumerData{cd}
	default:
		return &v2.HeartbeatResponse{Status: newStatus(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "unrecognized client type")}, nil
	}
	return &v2.HeartbeatResponse{Status: s.sendHeartbeat(ctx, &hb)}, nil
}

func producerData(ss *session) []clients.ProducerData {
	var out []clients.ProducerData
	for _, t := range ss.producerTopics() {
		out = append(out, clients.ProducerData{GroupName: t})
	}
	return out
}

// heartbeatProducer registers a producer session's topics as its groups.
func (s *Server) heartbeatProducer(ctx context.Context, ss *session) {
	hb := clients.HeartbeatData{ClientID: ss.clientID, ProducerDataSet: producerData(ss)}
	if st := s.sendHeartbeat(ctx, &hb); st.Code != v2.Code_OK {
		s.log.Warn("producer heartbeat refused", "client", ss.clientID, "status", st.Message)
	}
}

func (s *Server) sendHeartbeat(ctx context.Context, hb *clients.HeartbeatData) *v2.Status {
	if hb.ProducerDataSet == nil {
		hb.ProducerDataSet = []clients.ProducerData{}
	}
	if hb.ConsumerDataSet == nil {
		hb.ConsumerDataSet = []clients.ConsumerData{}
	}
	body, err := json.Marshal(hb)
	if err != nil {
		return errStatus(err)
	}
	if err := s.authorize(ctx, protocol.ReqHeartBeat, remoting.ExtFields{}, body); err != nil {
		return errStatus(err)
	}
	r := remoting.NewRequest(protocol.ReqHeartBeat, remoting.ExtFields{})
	r.Body = body
	resp, err := s.invoke(ctx, r)
	if err != nil {
		return errStatus(err)
	}
	if resp.Code != protocol.RespSuccess {
		return respStatus(resp)
	}
	return okStatus()
}

// NotifyClientTermination unregisters the client's group from the broker.
func (s *Server) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	c := callOf(ctx)
	ext := remoting.ExtFields{"clientID": c.clientID}
	if g := req.GetGroup().GetName(); g != "" {
		ext["consumerGroup"] = g
	}
	st := okStatus()
	if ss := s.sessions.get(c.clientID); ss != nil {
		for _, t := range ss.producerTopics() {
			e := remoting.ExtFields{"clientID": c.clientID, "producerGroup": t}
			if resp, err := s.invoke(ctx, remoting.NewRequest(protocol.ReqUnregisterClient, e)); err != nil {
				st = errStatus(err)
			} else if resp.Code != protocol.RespSuccess {
				st = respStatus(resp)
			}
		}
	}
	if g, ok := ext["consumerGroup"]; ok {
		s.clearLeases(c.clientID, g) // CLIENT_UNREGISTER: its leases come back
		if resp, err := s.invoke(ctx, remoting.NewRequest(protocol.ReqUnregisterClient, ext)); err != nil {
			st = errStatus(err)
		} else if resp.Code != protocol.RespSuccess {
			st = respStatus(resp)
		}
	}
	return &v2.NotifyClientTerminationResponse{Status: st}, nil
}

// unregister drops a closed session's client from the broker's tables.
func (s *Server) unregister(ctx context.Context, ss *session) {
	st := ss.settings.Load()
	for _, t := range ss.producerTopics() {
		_, _ = s.invoke(ctx, remoting.NewRequest(protocol.ReqUnregisterClient, remoting.ExtFields{"clientID": ss.clientID, "producerGroup": t}))
	}
	if g := st.GetSubscription().GetGroup().GetName(); g != "" {
		_, _ = s.invoke(ctx, remoting.NewRequest(protocol.ReqUnregisterClient, remoting.ExtFields{"clientID": ss.clientID, "consumerGroup": g}))
	}
}

// brokerRequest handles what the broker pushes on the proxy's connection:
// CHECK_TRANSACTION_STATE becomes a RecoverOrphanedTransactionCommand on
// the Telemetry stream of a live producer of the message's topic.
func (s *Server) brokerRequest(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if req.Code != protocol.ReqCheckTransactionState {
		if req.IsOneway() {
			return nil, nil
		}
		return remoting.NewResponse(protocol.RespRequestCodeNotSupported, "not supported by the grpc proxy"), nil
	}
	rec, err := record.Decode(req.Body, false)
	if err != nil {
		s.log.Warn("undecodable transaction check", "err", err)
		return nil, nil
	}
	topic := string(rec.Topic)
	txID := req.ExtFields["transactionId"]
	group, _ := rec.Property(record.PropertyProducerGroup)
	ss := s.sessions.producerOf(string(group))
	if ss == nil {
		ss = s.sessions.producerOf(topic)
	}
	if ss == nil {
		s.log.Warn("transaction check: no live grpc producer", "topic", topic, "transactionId", txID)
		return nil, nil
	}
	uniq := req.ExtFields["msgId"]
	s.txns.put(topic, txID, txnRecord{group: string(group), queueOffset: parseInt(req.ExtFields["tranStateTableOffset"]),
		commitLogOffset: parseInt(req.ExtFields["commitLogOffset"]), msgID: uniq})
	cmd := &v2.TelemetryCommand{Status: okStatus(), Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
		RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{Message: toProto(&rec, "", 0), TransactionId: txID}}}
	if err := ss.send(cmd); err != nil {
		s.log.Warn("transaction check not pushed", "client", ss.clientID, "err", err)
	}
	return nil, nil
}
