package proxy

import (
	"context"
	"net"
	"strconv"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Topic message types (TopicAttributes' message.type; TopicMessageType).
const (
	attrMessageType = "message.type"
	typeUnspecified = "UNSPECIFIED"
	typeNormal      = "NORMAL"
	typeFIFO        = "FIFO"
	typeDelay       = "DELAY"
	typeTransaction = "TRANSACTION"
	typeMixed       = "MIXED"
)

// topicMessageType is a topic's message.type; NORMAL when unset (TopicConfig.getTopicMessageType).
func topicMessageType(tc protocol.TopicConfig) string {
	if t := tc.Attributes[attrMessageType]; t != "" {
		return t
	}
	return typeNormal
}

func acceptedTypes(topicType string) []v2.MessageType {
	switch topicType {
	case typeNormal:
		return []v2.MessageType{v2.MessageType_NORMAL}
	case typeFIFO:
		return []v2.MessageType{v2.MessageType_FIFO}
	case typeDelay:
		return []v2.MessageType{v2.MessageType_DELAY}
	case typeTransaction:
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case typeMixed:
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	}
	return []v2.MessageType{v2.MessageType_MESSAGE_TYPE_UNSPECIFIED}
}

func permission(perm int32) v2.Permission {
	r, w := perm&protocol.PermRead != 0, perm&protocol.PermWrite != 0
	switch {
	case r && w:
		return v2.Permission_READ_WRITE
	case r:
		return v2.Permission_READ
	case w:
		return v2.Permission_WRITE
	}
	return v2.Permission_NONE
}

// endpoints are the addresses clients reach this proxy at: those the client
// used (from the request) with the proxy's port, else the listen address.
func (s *Server) endpoints(req *v2.Endpoints) *v2.Endpoints {
	_, portStr, _ := net.SplitHostPort(s.addr)
	port, _ := strconv.Atoi(portStr)
	if req != nil && len(req.Addresses) > 0 {
		out := &v2.Endpoints{Scheme: req.Scheme}
		for _, a := range req.Addresses {
			out.Addresses = append(out.Addresses, &v2.Address{Host: a.Host, Port: int32(port)})
		}
		return out
	}
	host, _, _ := net.SplitHostPort(s.addr)
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host, _, _ = net.SplitHostPort(s.b.Addr())
	}
	scheme := v2.AddressScheme_IPv4
	if ip := net.ParseIP(host); ip == nil {
		scheme = v2.AddressScheme_DOMAIN_NAME
	} else if ip.To4() == nil {
		scheme = v2.AddressScheme_IPv6
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: host, Port: int32(port)}}}
}

func (s *Server) brokerOf(ep *v2.Endpoints) *v2.Broker {
	cfg := s.b.Config()
	return &v2.Broker{Name: cfg.BrokerName, Id: int32(cfg.BrokerID), Endpoints: ep}
}

// QueryRoute answers the topic's queues on this broker, as RouteActivity
// builds them: read-only queues first, then write-only, then read-write.
func (s *Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	topic := req.GetTopic().GetName()
	tc, ok := s.topicConfig(topic)
	if !ok {
		return &v2.QueryRouteResponse{Status: newStatus(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" not found")}, nil
	}
	br := s.brokerOf(s.endpoints(req.GetEndpoints()))
	res := &v2.Resource{Name: topic, ResourceNamespace: req.GetTopic().GetResourceNamespace()}
	types := acceptedTypes(topicMessageType(tc))
	var r, w, rw, n int32
	readable, writable := tc.Perm&protocol.PermRead != 0, tc.Perm&protocol.PermWrite != 0
	switch {
	case readable && writable:
		rw = min(tc.ReadQueueNums, tc.WriteQueueNums)
		r, w = tc.ReadQueueNums-rw, tc.WriteQueueNums-rw
	case writable:
		w = tc.WriteQueueNums
	case readable:
		r = tc.ReadQueueNums
	default:
		n = max(1, tc.ReadQueueNums, tc.WriteQueueNums)
	}
	var mqs []*v2.MessageQueue
	id := int32(0)
	add := func(count int32, p v2.Permission) {
		for range count {
			mqs = append(mqs, &v2.MessageQueue{Topic: res, Id: id, Permission: p, Broker: br, AcceptMessageTypes: types})
			id++
		}
	}
	add(r, v2.Permission_READ)
	add(w, v2.Permission_WRITE)
	add(rw, v2.Permission_READ_WRITE)
	add(n, v2.Permission_NONE)
	return &v2.QueryRouteResponse{Status: okStatus(), MessageQueues: mqs}, nil
}

// QueryAssignment gives a POP consumer the broker as one assignment with
// queue id -1 (the broker balances), or FORBIDDEN without a readable queue.
func (s *Server) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	topic := req.GetTopic().GetName()
	tc, ok := s.topicConfig(topic)
	if !ok {
		return &v2.QueryAssignmentResponse{Status: newStatus(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" not found")}, nil
	}
	if tc.Perm&protocol.PermRead == 0 || tc.ReadQueueNums <= 0 {
		return &v2.QueryAssignmentResponse{Status: newStatus(v2.Code_FORBIDDEN, "no readable queue")}, nil
	}
	mq := &v2.MessageQueue{Topic: req.GetTopic(), Id: -1, Permission: permission(tc.Perm),
		Broker: s.brokerOf(s.endpoints(req.GetEndpoints())), AcceptMessageTypes: acceptedTypes(topicMessageType(tc))}
	return &v2.QueryAssignmentResponse{Status: okStatus(), Assignments: []*v2.Assignment{{MessageQueue: mq}}}, nil
}
