package namesrv

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// bodyCRC32 is UtilAll.crc32: IEEE CRC32 masked to a non-negative int32.
func bodyCRC32(b []byte) int32 { return int32(crc32.ChecksumIEEE(b) & 0x7FFFFFFF) }

func (s *Server) registerBroker(_ context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	h, err := protocol.ParseRegisterBrokerHeader(req.ExtFields)
	if err != nil {
		return nil, err
	}
	if h.BodyCrc32 != 0 && bodyCRC32(req.Body) != h.BodyCrc32 {
		s.log.Warn("namesrv: register body crc32 mismatch", "broker", h.BrokerAddr)
		return remoting.NewResponse(protocol.RespSystemError, "crc32 not match"), nil
	}
	if h.Compressed {
		return remoting.NewResponse(protocol.RespSystemError, "compressed register body not supported"), nil
	}
	var body protocol.RegisterBrokerBody
	if len(req.Body) > 0 {
		fixed := protocol.QuoteNumericKeys(req.Body)
		if req.Version >= protocol.VersionV3_0_11 {
			err = json.Unmarshal(fixed, &body)
		} else {
			err = json.Unmarshal(fixed, &body.TopicConfigSerializeWrapper)
		}
		if err != nil {
			return nil, remoting.NewBadRequest("%v: register broker: %v", ErrMalformedBody, err)
		}
	}
	timeout := s.cfg.BrokerTimeout
	if h.HeartbeatTimeoutMillis > 0 {
		timeout = time.Duration(h.HeartbeatTimeoutMillis) * time.Millisecond
	}
	res := s.routes.register(registration{
		ClusterName: h.ClusterName, BrokerName: h.BrokerName, BrokerAddr: h.BrokerAddr,
		HAServerAddr: h.HAServerAddr, ZoneName: h.ZoneName, BrokerID: h.BrokerID, Timeout: timeout,
		EnableActingMaster: h.EnableActingMaster, Topics: body.TopicConfigSerializeWrapper,
		FilterServers: body.FilterServerList, Conn: conn, Now: s.now(),
	})
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	if res.HAServerAddr != "" || res.MasterAddr != "" {
		resp.Ext()["haServerAddr"] = res.HAServerAddr
		resp.Ext()["masterAddr"] = res.MasterAddr
	}
	resp.Body = []byte(`{"table":{}}`)
	return resp, nil
}

func (s *Server) unregisterBroker(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	name, err1 := ext.String("brokerName")
	addr, err2 := ext.String("brokerAddr")
	cluster, err3 := ext.String("clusterName")
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return nil, err
		}
	}
	s.routes.unregister(cluster, addr, name)
	s.log.Info("namesrv: broker unregistered", "cluster", cluster, "broker", name, "addr", addr)
	return remoting.NewResponse(protocol.RespSuccess, ""), nil
}

// standardJSON reports whether the requester gets quoted map keys (Java:
// version ≥ V4_9_4 or acceptStandardJsonOnly).
func standardJSON(req *remoting.Command) bool {
	if req.Version >= protocol.VersionV4_9_4 {
		return true
	}
	std, _ := req.ExtFields.OptBool("acceptStandardJsonOnly", false)
	return std
}

func (s *Server) getRouteInfo(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	rd, ok := s.routes.topicRoute(topic)
	if !ok {
		return remoting.NewResponse(protocol.RespTopicNotExist,
			"No topic route info in name server for the topic: "+topic), nil
	}
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.Body = protocol.EncodeTopicRouteData(rd, standardJSON(req))
	return resp, nil
}

func (s *Server) getBrokerClusterInfo(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.Body = protocol.EncodeClusterInfo(s.routes.clusterInfo(), standardJSON(req))
	return resp, nil
}

func topicListResponse(topics []string) *remoting.Command {
	if topics == nil {
		topics = []string{}
	}
	body, _ := json.Marshal(protocol.TopicList{TopicList: topics}) // strings always marshal
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

func (s *Server) getAllTopicList(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	return topicListResponse(s.routes.topics()), nil
}

func (s *Server) getTopicsByCluster(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	cluster, err := req.ExtFields.String("cluster")
	if err != nil {
		return nil, err
	}
	return topicListResponse(s.routes.topicsByCluster(cluster)), nil
}

func (s *Server) deleteTopic(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	topic, err := req.ExtFields.String("topic")
	if err != nil {
		return nil, err
	}
	s.routes.deleteTopic(topic, req.ExtFields.OptString("clusterName", ""))
	return remoting.NewResponse(protocol.RespSuccess, ""), nil
}

func (s *Server) queryDataVersion(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	addr, err1 := req.ExtFields.String("brokerAddr")
	cluster, err2 := req.ExtFields.String("clusterName")
	for _, err := range []error{err1, err2} {
		if err != nil {
			return nil, err
		}
	}
	var dv protocol.DataVersion
	if err := json.Unmarshal(req.Body, &dv); err != nil {
		return nil, remoting.NewBadRequest("%v: data version: %v", ErrMalformedBody, err)
	}
	current, known := s.routes.dataVersion(cluster, addr)
	s.routes.touch(cluster, addr, s.now())
	resp := remoting.NewResponse(protocol.RespSuccess, "")
	resp.Ext().SetBool("changed", !known || current != dv)
	if known {
		resp.Body, _ = json.Marshal(current) // plain struct always marshals
	}
	return resp, nil
}

func (s *Server) brokerHeartbeat(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	addr, err1 := req.ExtFields.String("brokerAddr")
	cluster, err2 := req.ExtFields.String("clusterName")
	for _, err := range []error{err1, err2} {
		if err != nil {
			return nil, err
		}
	}
	s.routes.touch(cluster, addr, s.now())
	return remoting.NewResponse(protocol.RespSuccess, ""), nil
}
