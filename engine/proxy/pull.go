package proxy

import (
	"context"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// PullMessage reads a queue from an offset through the broker's
// PULL_MESSAGE (long polling while it is empty) and streams the status, the
// messages and the next offset.
func (s *Server) PullMessage(req *v2.PullMessageRequest, stream grpc.ServerStreamingServer[v2.PullMessageResponse]) error {
	ctx, cancelCall := s.callContext(stream.Context())
	defer cancelCall()
	status := func(st *v2.Status) error {
		return stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Status{Status: st}})
	}
	group, mq := req.GetGroup().GetName(), req.GetMessageQueue()
	topic := mq.GetTopic().GetName()
	if group == "" {
		return status(newStatus(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group is empty"))
	}
	batch := req.GetBatchSize()
	if batch <= 0 {
		batch = maxReceiveBatch
	}
	poll := pollTime(ctx, req.LongPollingTimeout)
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic, "subscription": "*", "expressionType": "TAG"}
	if fe := req.GetFilterExpression(); fe != nil && fe.GetExpression() != "" {
		ext["subscription"] = fe.GetExpression()
		if fe.GetType() == v2.FilterType_SQL {
			ext["expressionType"] = "SQL92"
		}
	}
	ext.SetInt32("queueId", mq.GetId())
	ext.SetInt64("queueOffset", req.GetOffset())
	ext.SetInt32("maxMsgNums", batch)
	flags := protocol.PullFlagSubscription
	if poll > 0 {
		flags |= protocol.PullFlagSuspend
	}
	ext.SetInt32("sysFlag", flags)
	ext.SetInt64("commitOffset", 0)
	ext.SetInt64("suspendTimeoutMillis", poll.Milliseconds())
	ext.SetInt64("subVersion", time.Now().UnixMilli())
	if err := s.authorize(ctx, protocol.ReqPullMessage, ext, nil); err != nil {
		return status(errStatus(err))
	}
	cctx, cancel := context.WithTimeout(ctx, poll+defaultRequestTimeout)
	defer cancel()
	resp, err := s.invoke(cctx, remoting.NewRequest(protocol.ReqPullMessage, ext))
	if err != nil {
		return status(errStatus(err))
	}
	next := parseInt(resp.ExtFields["nextBeginOffset"])
	var msgs []*v2.Message
	st := okStatus()
	switch resp.Code {
	case protocol.RespSuccess:
		recs, err := record.DecodeAll(resp.Body, false)
		if err != nil {
			return status(newStatus(v2.Code_INTERNAL_SERVER_ERROR, "undecodable pull result: "+err.Error()))
		}
		for i := range recs {
			msgs = append(msgs, toProto(&recs[i], "", 0))
		}
	case protocol.RespPullNotFound, protocol.RespPullRetryImmediately:
		st = newStatus(v2.Code_MESSAGE_NOT_FOUND, "no new message")
	case protocol.RespPullOffsetMoved:
		st = newStatus(v2.Code_ILLEGAL_OFFSET, "the offset is illegal; next offset is in the response")
	default:
		return status(respStatus(resp))
	}
	if err := status(st); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	return stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_NextOffset{NextOffset: next}})
}

// UpdateOffset commits a pull consumer's offset (UPDATE_CONSUMER_OFFSET).
func (s *Server) UpdateOffset(ctx context.Context, req *v2.UpdateOffsetRequest) (*v2.UpdateOffsetResponse, error) {
	ext := remoting.ExtFields{"consumerGroup": req.GetGroup().GetName(), "topic": req.GetMessageQueue().GetTopic().GetName()}
	ext.SetInt32("queueId", req.GetMessageQueue().GetId())
	ext.SetInt64("commitOffset", req.GetOffset())
	_, st := s.offsetCall(ctx, protocol.ReqUpdateConsumerOffset, ext)
	return &v2.UpdateOffsetResponse{Status: st}, nil
}

// GetOffset answers a pull consumer's committed offset (QUERY_CONSUMER_OFFSET).
func (s *Server) GetOffset(ctx context.Context, req *v2.GetOffsetRequest) (*v2.GetOffsetResponse, error) {
	ext := remoting.ExtFields{"consumerGroup": req.GetGroup().GetName(), "topic": req.GetMessageQueue().GetTopic().GetName()}
	ext.SetInt32("queueId", req.GetMessageQueue().GetId())
	resp, st := s.offsetCall(ctx, protocol.ReqQueryConsumerOffset, ext)
	if resp == nil {
		return &v2.GetOffsetResponse{Status: st}, nil
	}
	return &v2.GetOffsetResponse{Status: st, Offset: parseInt(resp.ExtFields["offset"])}, nil
}

// QueryOffset answers a queue's first or last offset, or the offset of a
// store time (GET_MIN_OFFSET, GET_MAX_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP).
func (s *Server) QueryOffset(ctx context.Context, req *v2.QueryOffsetRequest) (*v2.QueryOffsetResponse, error) {
	ext := remoting.ExtFields{"topic": req.GetMessageQueue().GetTopic().GetName()}
	ext.SetInt32("queueId", req.GetMessageQueue().GetId())
	code := protocol.ReqGetMaxOffset
	switch req.GetQueryOffsetPolicy() {
	case v2.QueryOffsetPolicy_BEGINNING:
		code = protocol.ReqGetMinOffset
	case v2.QueryOffsetPolicy_TIMESTAMP:
		code = protocol.ReqSearchOffsetByTimestamp
		ext.SetInt64("timestamp", req.GetTimestamp().AsTime().UnixMilli())
	}
	resp, st := s.offsetCall(ctx, code, ext)
	if resp == nil {
		return &v2.QueryOffsetResponse{Status: st}, nil
	}
	return &v2.QueryOffsetResponse{Status: st, Offset: parseInt(resp.ExtFields["offset"])}, nil
}

// offsetCall sends an offset request; resp is nil unless it succeeded.
func (s *Server) offsetCall(ctx context.Context, code int32, ext remoting.ExtFields) (*remoting.Command, *v2.Status) {
	if err := s.authorize(ctx, code, ext, nil); err != nil {
		return nil, errStatus(err)
	}
	resp, err := s.invoke(ctx, remoting.NewRequest(code, ext))
	if err != nil {
		return nil, errStatus(err)
	}
	switch resp.Code {
	case protocol.RespSuccess:
		return resp, okStatus()
	case protocol.RespQueryNotFound:
		return nil, newStatus(v2.Code_OFFSET_NOT_FOUND, resp.Remark)
	}
	return nil, respStatus(resp)
}
