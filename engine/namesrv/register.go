package namesrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// ErrTopicNotExist is GET_ROUTEINFO_BY_TOPIC's TOPIC_NOT_EXIST (17).
var ErrTopicNotExist = errors.New("namesrv: topic does not exist")

// ErrMalformedBody reports a request body that does not decode.
var ErrMalformedBody = errors.New("namesrv: malformed body")

// RegisterBrokerRequest is what a broker sends to each name server every 30 s.
type RegisterBrokerRequest struct {
	ClusterName  string
	BrokerName   string
	BrokerAddr   string // "ip:port" clients connect to
	HAServerAddr string // "ip:haPort"; "" if the broker has no HA service
	BrokerID     int64  // protocol.MasterID (0) for a master
	// HeartbeatTimeout, if set, replaces the name server's BrokerTimeout for
	// this broker (sent as heartbeatTimeoutMillis).
	HeartbeatTimeout   time.Duration
	EnableActingMaster bool
	ZoneName           string
	Body               protocol.RegisterBrokerBody
}

// RegisterBroker sends REGISTER_BROKER (103) to nsAddr: body as
// protocol.RegisterBrokerBody JSON, bodyCrc32 set, version DefaultVersion (≥ 37).
func RegisterBroker(ctx context.Context, client *remoting.Client, nsAddr string, req RegisterBrokerRequest) (RegisterBrokerResult, error) {
	body := req.Body
	if body.FilterServerList == nil {
		body.FilterServerList = []string{}
	}
	if body.TopicConfigSerializeWrapper.TopicConfigTable == nil {
		body.TopicConfigSerializeWrapper.TopicConfigTable = map[string]protocol.TopicConfig{}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return RegisterBrokerResult{}, fmt.Errorf("namesrv: encode register body: %w", err)
	}
	h := protocol.RegisterBrokerHeader{BrokerName: req.BrokerName, BrokerAddr: req.BrokerAddr, ClusterName: req.ClusterName,
		HAServerAddr: req.HAServerAddr, BrokerID: req.BrokerID, BodyCrc32: bodyCRC32(payload),
		EnableActingMaster: req.EnableActingMaster, HeartbeatTimeoutMillis: req.HeartbeatTimeout.Milliseconds(), ZoneName: req.ZoneName}
	ext := remoting.ExtFields(h.ExtFields())
	cmd := remoting.NewRequest(protocol.ReqRegisterBroker, ext)
	cmd.Body = payload
	resp, err := client.InvokeSync(ctx, nsAddr, cmd)
	if err != nil {
		return RegisterBrokerResult{}, fmt.Errorf("namesrv: register broker at %s: %w", nsAddr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return RegisterBrokerResult{}, fmt.Errorf("namesrv: register broker at %s: %w", nsAddr,
			&remoting.ResponseError{Code: resp.Code, Remark: resp.Remark})
	}
	return RegisterBrokerResult{HAServerAddr: resp.ExtFields["haServerAddr"], MasterAddr: resp.ExtFields["masterAddr"]}, nil
}

// UnregisterBrokerRequest identifies the broker process leaving.
type UnregisterBrokerRequest struct {
	ClusterName string
	BrokerName  string
	BrokerAddr  string
	BrokerID    int64
}

// UnregisterBroker sends UNREGISTER_BROKER (104) to nsAddr.
func UnregisterBroker(ctx context.Context, client *remoting.Client, nsAddr string, req UnregisterBrokerRequest) error {
	ext := remoting.ExtFields{"brokerName": req.BrokerName, "brokerAddr": req.BrokerAddr, "clusterName": req.ClusterName}
	ext.SetInt64("brokerId", req.BrokerID)
	resp, err := client.InvokeSync(ctx, nsAddr, remoting.NewRequest(protocol.ReqUnregisterBroker, ext))
	if err != nil {
		return fmt.Errorf("namesrv: unregister broker at %s: %w", nsAddr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("namesrv: unregister broker at %s: %w", nsAddr, &remoting.ResponseError{Code: resp.Code, Remark: resp.Remark})
	}
	return nil
}

// GetRouteInfo asks nsAddr for topic's route (GET_ROUTEINFO_BY_TOPIC, 105);
// ErrTopicNotExist if the name server does not know it.
func GetRouteInfo(ctx context.Context, client *remoting.Client, nsAddr, topic string) (*protocol.TopicRouteData, error) {
	resp, err := client.InvokeSync(ctx, nsAddr, remoting.NewRequest(protocol.ReqGetRouteInfoByTopic, remoting.ExtFields{"topic": topic}))
	if err != nil {
		return nil, fmt.Errorf("namesrv: route of %q from %s: %w", topic, nsAddr, err)
	}
	switch resp.Code {
	case protocol.RespSuccess:
		return protocol.DecodeTopicRouteData(resp.Body)
	case protocol.RespTopicNotExist:
		return nil, fmt.Errorf("%w: %q", ErrTopicNotExist, topic)
	}
	return nil, fmt.Errorf("namesrv: route of %q from %s: %w", topic, nsAddr, &remoting.ResponseError{Code: resp.Code, Remark: resp.Remark})
}

// GetClusterInfo asks nsAddr for its broker and cluster tables (GET_BROKER_CLUSTER_INFO, 106).
func GetClusterInfo(ctx context.Context, client *remoting.Client, nsAddr string) (*protocol.ClusterInfo, error) {
	resp, err := client.InvokeSync(ctx, nsAddr, remoting.NewRequest(protocol.ReqGetBrokerClusterInfo, nil))
	if err != nil {
		return nil, fmt.Errorf("namesrv: cluster info from %s: %w", nsAddr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return nil, fmt.Errorf("namesrv: cluster info from %s: %w", nsAddr, &remoting.ResponseError{Code: resp.Code, Remark: resp.Remark})
	}
	return protocol.DecodeClusterInfo(resp.Body)
}
