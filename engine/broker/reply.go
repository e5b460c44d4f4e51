package broker

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Request-reply (RocketMQ 4.6+): a requester sends an ordinary message with
// CORRELATION_ID, REPLY_TO_CLIENT (its client id) and TTL; the consumer
// answers with a message of MSG_TYPE "reply" to the cluster's reply topic,
// sent as SEND_REPLY_MESSAGE(_V2); the broker pushes that reply to the
// requester's connection (PUSH_REPLY_MESSAGE_TO_CLIENT) and, with
// StoreReplyMessage, also stores it in the reply topic.

// Properties of request-reply (MessageConst).
const (
	PropertyCorrelationID = "CORRELATION_ID"
	PropertyReplyToClient = "REPLY_TO_CLIENT"
	PropertyMessageTTL    = "TTL"
	PropertyMessageType   = "MSG_TYPE"
	PropertyPushReplyTime = "PUSH_REPLY_TIME"
	// ReplyMessageType is MSG_TYPE of a reply.
	ReplyMessageType = "reply"
)

// replyPushTimeout bounds one PUSH_REPLY_MESSAGE_TO_CLIENT call
// (Broker2Client.callClient: 10 s).
const replyPushTimeout = 10 * time.Second

// registerReply registers request-reply (324/325) and CHECK_CLIENT_CONFIG (46).
func (b *Broker) registerReply() {
	// Java's replyMessageExecutor; its workers wait for the requester's
	// answer to the push.
	reply := b.server.NewExecutor("reply", remoting.ExecutorConfig{Workers: 16 + 2*runtime.NumCPU(), QueueSize: 10000})
	b.handle(protocol.ReqSendReplyMessage, b.sendReplyMessage, reply)
	b.handle(protocol.ReqSendReplyMessageV2, b.sendReplyMessage, reply)
	b.handle(protocol.ReqCheckClientConfig, b.checkClientConfig, nil)
}

// createReplyTopic adds the cluster's reply topic (TopicConfigManager does
// at start): one read and one write queue, read-write.
func (b *Broker) createReplyTopic() error {
	if _, _, _, err := b.topics.CreateIfAbsent(protocol.NewTopicConfig(protocol.ReplyTopic(b.cfg.ClusterName), 1)); err != nil {
		return errors.Join(errors.New("broker: create reply topic"), err)
	}
	return nil
}

// sendReplyMessage is ReplyMessageProcessor: the checks of a send, the
// push to the requester named by REPLY_TO_CLIENT (its answer decides the
// response: SUCCESS with msgId "0", or SYSTEM_ERROR saying why), then,
// with StoreReplyMessage, the put into the topic (a stored reply's msgId,
// queueId and queueOffset replace the placeholders; a failed put is only
// logged, as in Java). A reply with an empty body (the official Go client's
// consumer.CreateReplyMessage leaves Body empty) is pushed and answered
// like any other, but not stored: Java's store refuses its null body.
func (b *Broker) sendReplyMessage(ctx context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if resp := b.refuseOnSlave(); resp != nil {
		return resp, nil
	}
	h, err := remoting.ParseSendMessageHeader(req.ExtFields)
	if err != nil {
		return nil, err
	}
	m := &record.Message{
		Topic: h.Topic, Flag: h.Flag, SysFlag: h.SysFlag, Body: req.Body, Properties: h.Properties,
		BornTimestamp: h.BornTimestamp, BornHost: bornHost(conn), StoreHost: b.storeHost, ReconsumeTimes: h.ReconsumeTimes,
	}
	if resp := b.checkBatchItem(m); resp != nil { // an empty body is pushed (see below)
		return resp, nil
	}
	tc, resp := b.topicForSend(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums)
	if resp != nil {
		return resp, nil
	}
	queueID, resp := b.pickQueue(tc, h.QueueID)
	if resp != nil {
		return resp, nil
	}
	m.QueueID = queueID

	resp = remoting.NewResponse(protocol.RespSuccess, "")
	ext := resp.Ext()
	ext["MSG_REGION"] = "DefaultRegion"
	ext["TRACE_ON"] = "true"
	if remark, ok := b.pushReply(ctx, conn, h, req.Body); ok {
		ext["msgId"] = "0"
		ext.SetInt32("queueId", queueID)
		ext.SetInt64("queueOffset", 0)
	} else {
		resp.Code, resp.Remark = protocol.RespSystemError, remark
	}
	if !b.cfg.StoreReplyMessage {
		return resp, nil
	}
	if len(m.Body) == 0 {
		// A reply without body bytes reaches Java's store as a null body,
		// which its store hook refuses; the push above stands.
		b.log.Warn("store reply message failed", "topic", m.Topic, "status", "MESSAGE_ILLEGAL", "err", record.ErrBodyEmpty)
		return resp, nil
	}
	res, err := b.store.Put(ctx, m)
	if !res.Status.Stored() || len(res.PhysOffsets) == 0 {
		b.log.Warn("store reply message failed", "topic", m.Topic, "status", res.Status.String(), "err", err)
		return resp, nil
	}
	ext["msgId"] = record.OffsetMsgID(b.storeHost, res.PhysOffsets[0])
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("queueOffset", res.QueueOffset)
	return resp, nil
}

// pushReply sends PUSH_REPLY_MESSAGE_TO_CLIENT with Java's
// ReplyMessageRequestHeader to the producer connection of the client in
// REPLY_TO_CLIENT; the pushed properties gain PUSH_REPLY_TIME. It returns
// whether the client answered SUCCESS, else the remark why not.
func (b *Broker) pushReply(ctx context.Context, from *remoting.Conn, h remoting.SendMessageHeader, body []byte) (string, bool) {
	clientID, ok := record.Property(h.Properties, PropertyReplyToClient)
	if !ok {
		return "reply message properties[" + PropertyReplyToClient + "] is null", false
	}
	to := b.clients.ProducerConnByID(clientID)
	if to == nil {
		to = b.replies.conn(clientID)
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
		"bornHost":      bornHost(from).String(),
		"storeHost":     b.storeHost.String(),
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
	ctx, cancel := context.WithTimeout(ctx, replyPushTimeout)
	defer cancel()
	answer, err := to.Invoke(ctx, push)
	if err != nil {
		b.log.Warn("push reply message failed", "client", clientID, "err", err)
		return "push reply message to " + clientID + "fail.", false
	}
	if answer.Code != protocol.RespSuccess {
		b.log.Warn("push reply message refused", "client", clientID, "code", answer.Code, "remark", answer.Remark)
		return "push reply message to " + clientID + "fail.", false
	}
	return "", true
}

// replyState remembers, for each connection, the client id the latest
// request message sent over it named in REPLY_TO_CLIENT. Java finds the
// requester only among producers that sent a heartbeat; the official Go
// client's producer sends its first heartbeat to a broker only when it
// already knows a route at its 1 s heartbeat or after 30 s (Request skips
// the heartbeat when the name server knows the topic), so a reply to a
// request sent in between would find no channel. The connection the
// request came over reaches the same client, whose remoting client serves
// PUSH_REPLY_MESSAGE_TO_CLIENT on any of its connections. One id per
// connection bounds the table; closed connections leave it. Safe for
// concurrent use.
type replyState struct {
	mu     sync.Mutex
	byID   map[string]*remoting.Conn
	byConn map[*remoting.Conn]string
}

// noteRequester records conn as the way to the client a request message
// (properties props) names in REPLY_TO_CLIENT.
func (b *Broker) noteRequester(conn *remoting.Conn, props string) {
	id, ok := record.Property(props, PropertyReplyToClient)
	if !ok || id == "" || conn == nil {
		return
	}
	r := &b.replies
	r.mu.Lock()
	defer r.mu.Unlock()
	old, known := r.byConn[conn]
	if known && old == id {
		return
	}
	if r.byID == nil {
		r.byID, r.byConn = make(map[string]*remoting.Conn), make(map[*remoting.Conn]string)
	}
	if known && r.byID[old] == conn {
		delete(r.byID, old)
	}
	r.byID[id], r.byConn[conn] = conn, id
	if !known {
		conn.OnClose(r.forget)
	}
}

// forget drops a closed connection.
func (r *replyState) forget(conn *remoting.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.byConn[conn]; ok {
		delete(r.byConn, conn)
		if r.byID[id] == conn {
			delete(r.byID, id)
		}
	}
}

// conn returns the live connection a request named id came over, or nil.
func (r *replyState) conn(id string) *remoting.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.byID[id]; c != nil && c.Err() == nil {
		return c
	}
	return nil
}

// checkClientRequestBody is CheckClientRequestBody.
type checkClientRequestBody struct {
	ClientID         string            `json:"clientId"`
	Group            string            `json:"group"`
	SubscriptionData *SubscriptionData `json:"subscriptionData"`
}

// checkClientConfig is CHECK_CLIENT_CONFIG (46), as ClientManageProcessor
// answers it: SUCCESS for no subscription and for TAG; for another type
// SYSTEM_ERROR unless EnablePropertyFilter, then SUBSCRIPTION_PARSE_FAILED
// with the compiler's message when the expression does not compile.
func (b *Broker) checkClientConfig(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	var body checkClientRequestBody
	if len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, &body); err != nil {
			return nil, remoting.NewBadRequest("CHECK_CLIENT_CONFIG body: %v", err)
		}
	}
	sd := body.SubscriptionData
	if sd == nil || sd.ExpressionType == "" || sd.ExpressionType == ExpressionTag {
		return success(), nil
	}
	if !b.cfg.EnablePropertyFilter {
		return remoting.NewResponse(protocol.RespSystemError, remarkPropertyFilterDisabled+sd.ExpressionType), nil
	}
	if _, err := compileFilter(sd.SubString, sd.ExpressionType); err != nil {
		b.log.Warn("client filter expression does not compile", "client", body.ClientID, "group", body.Group,
			"expression", sd.SubString, "err", err)
		return remoting.NewResponse(protocol.RespSubscriptionParseFailed, err.Error()), nil
	}
	return success(), nil
}
