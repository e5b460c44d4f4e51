package reply

import (
	"context"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// sendReplyMessage is ReplyMessageProcessor: the checks of a send, the
// push to the requester named by REPLY_TO_CLIENT (its answer decides the
// response: SUCCESS with msgId "0", or SYSTEM_ERROR saying why), then,
// with StoreReplyMessage, the put into the topic (a stored reply's msgId,
// queueId and queueOffset replace the placeholders; a failed put is only
// logged, as in Java). A reply with an empty body (the official Go client's
// consumer.CreateReplyMessage leaves Body empty) is pushed and answered
// like any other, but not stored: Java's store refuses its null body.
func (s *Service) sendReplyMessage(ctx context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if resp := s.deps.Refuse(); resp != nil {
		return resp, nil
	}
	h, err := protocol.ParseSendMessageHeader(req.ExtFields)
	if err != nil {
		return nil, err
	}
	m, resp := s.deps.Prepare(conn, h, req.Body) // an empty body is pushed (see below)
	if resp != nil {
		return resp, nil
	}
	queueID := m.QueueID

	resp = remoting.NewResponse(protocol.RespSuccess, "")
	ext := resp.Ext()
	ext["MSG_REGION"] = "DefaultRegion"
	ext["TRACE_ON"] = "true"
	if remark, ok := s.pushReply(ctx, conn, h, req.Body); ok {
		ext["msgId"] = "0"
		ext.SetInt32("queueId", queueID)
		ext.SetInt64("queueOffset", 0)
	} else {
		resp.Code, resp.Remark = protocol.RespSystemError, remark
	}
	if !s.deps.StoreReplies {
		return resp, nil
	}
	if len(m.Body) == 0 {
		// A reply without body bytes reaches Java's store as a null body,
		// which its store hook refuses; the push above stands.
		s.log.Warn("store reply message failed", "topic", m.Topic, "status", "MESSAGE_ILLEGAL", "err", record.ErrBodyEmpty)
		return resp, nil
	}
	msgID, queueOffset, status, err := s.deps.Put(ctx, m)
	if msgID == "" {
		s.log.Warn("store reply message failed", "topic", m.Topic, "status", status, "err", err)
		return resp, nil
	}
	ext["msgId"] = msgID
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("queueOffset", queueOffset)
	return resp, nil
}

// pushReply sends PUSH_REPLY_MESSAGE_TO_CLIENT with Java's
// ReplyMessageRequestHeader to the producer connection of the client in
// REPLY_TO_CLIENT; the pushed properties gain PUSH_REPLY_TIME. It returns
// whether the client answered SUCCESS, else the remark why not.
func (s *Service) pushReply(ctx context.Context, from *remoting.Conn, h protocol.SendMessageHeader, body []byte) (string, bool) {
	clientID, ok := record.Property(h.Properties, PropertyReplyToClient)
	if !ok {
		return "reply message properties[" + PropertyReplyToClient + "] is null", false
	}
	to := s.deps.ProducerConn(clientID)
	if to == nil {
		to = s.requesters.conn(clientID)
	}
	if to == nil {
		return "push reply message fail, channel of <" + clientID + "> not found.", false
	}
	now := time.Now().UnixMilli()
	props := string(record.AppendProperty([]byte(h.Properties), PropertyPushReplyTime, strconv.FormatInt(now, 10)))
	ext := remoting.ExtFields{
		"producerGroup": h.ProducerGroup,
		"topic":         h.Topic,
		"defaultTopic":  h.DefaultTopic,
		"properties":    props,
		"bornHost":      s.deps.BornHost(from).String(),
		"storeHost":     s.deps.StoreHost().String(),
	}
	ext.SetInt32("defaultTopicQueueNums", h.DefaultTopicQueueNums)
	ext.SetInt32("queueId", h.QueueID)
	ext.SetInt32("sysFlag", h.SysFlag)
	ext.SetInt64("bornTimestamp", h.BornTimestamp)
	ext.SetInt32("flag", h.Flag)
	ext.SetInt32("reconsumeTimes", h.ReconsumeTimes)
	ext.SetBool("unitMode", h.UnitMode)
	ext.SetInt64("storeTimestamp", now)
	push := remoting.NewRequest(protocol.ReqPushReplyMessageToClient, ext)
	push.Body = body
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	answer, err := to.Invoke(ctx, push)
	if err != nil {
		s.log.Warn("push reply message failed", "client", clientID, "err", err)
		return "push reply message to " + clientID + "fail.", false
	}
	if answer.Code != protocol.RespSuccess {
		s.log.Warn("push reply message refused", "client", clientID, "code", answer.Code, "remark", answer.Remark)
		return "push reply message to " + clientID + "fail.", false
	}
	return "", true
}
