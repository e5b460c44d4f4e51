package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// defaultPullBatch replaces a maxMsgNums ≤ 0 (the Go pull consumer sends 0).
const defaultPullBatch = 32

// pullResponse builds a PULL_MESSAGE reply: every reply, whatever its code,
// carries nextBeginOffset, minOffset, maxOffset and suggestWhichBrokerId
// (the Go client rewinds to 0 when nextBeginOffset is missing).
func pullResponse(code int32, remark string, next, minOff, maxOff int64) *remoting.Command {
	resp := remoting.NewResponse(code, remark)
	ext := resp.Ext()
	ext.SetInt64("nextBeginOffset", next)
	ext.SetInt64("minOffset", minOff)
	ext.SetInt64("maxOffset", maxOff)
	ext["suggestWhichBrokerId"] = "0"
	return resp
}

// echoPullOffset gives an error reply to a pull the requested offset as
// nextBeginOffset, so a client that reads it stays where it was.
func echoPullOffset(resp *remoting.Command, req *remoting.Command) {
	ext := resp.Ext()
	next := req.ExtFields["queueOffset"]
	if next == "" {
		next = "0"
	}
	ext["nextBeginOffset"] = next
	ext["minOffset"] = "0"
	ext["maxOffset"] = "0"
	ext["suggestWhichBrokerId"] = "0"
}

// pullMessage is the PULL_MESSAGE (11) processor.
func (b *Broker) pullMessage(_ context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	resp, hold := b.pull(conn, req, true)
	if hold == nil {
		return resp, nil
	}
	hold.conn = conn
	b.holds.hold(hold)
	return nil, remoting.ErrReplyLater
}

// pull serves a pull. With allowSuspend (the first attempt) it also commits
// the piggy-backed offset and, when nothing is there and the consumer allows
// it, returns a heldPull instead of a response (long polling).
func (b *Broker) pull(conn *remoting.Conn, req *remoting.Command, allowSuspend bool) (*remoting.Command, *heldPull) {
	p, err := protocol.ParsePullMessageHeader(req.ExtFields)
	if err != nil {
		resp := conn.BadRequest(req, err)
		echoPullOffset(resp, req)
		return resp, nil
	}
	fail := func(code int32, format string, args ...any) (*remoting.Command, *heldPull) {
		return pullResponse(code, fmt.Sprintf(format, args...), p.QueueOffset, 0, 0), nil
	}
	tc, ok := b.topics.Get(p.Topic)
	if !ok {
		return fail(protocol.RespTopicNotExist, "topic[%s] not exist, apply first please!", p.Topic)
	}
	if !readable(tc) {
		return fail(protocol.RespNoPermission, "the topic[%s] pulling message is forbidden", p.Topic)
	}
	if p.QueueID < 0 || p.QueueID >= tc.ReadQueueNums {
		return fail(protocol.RespSystemError, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]",
			p.QueueID, p.Topic, tc.ReadQueueNums)
	}
	filter, fcode, remark := b.pullFilter(p)
	if fcode != protocol.RespSuccess {
		return fail(fcode, "%s", remark)
	}
	if code, remark := b.admin.CheckConsumeGroup(p.ConsumerGroup); code != protocol.RespSuccess {
		return fail(code, "%s", remark)
	}
	if allowSuspend && p.SysFlag&protocol.PullFlagCommitOffset != 0 && p.CommitOffset >= 0 {
		b.offsets.Commit(p.ConsumerGroup, p.Topic, p.QueueID, p.CommitOffset)
	}
	maxNums := int(p.MaxMsgNums)
	if maxNums <= 0 {
		maxNums = defaultPullBatch
	}
	res := b.store.Get(p.ConsumerGroup, p.Topic, p.QueueID, p.QueueOffset, maxNums, filter)
	b.admin.Traffic.CountGet(p.ConsumerGroup, p.Topic, res.Buffer)
	code := b.slavePullCode(pullCode(res.Status, p.QueueOffset))
	resp := pullResponse(code, res.Status.String(), res.NextBeginOffset, res.MinOffset, res.MaxOffset)
	resp.Ext()["suggestWhichBrokerId"] = b.suggestBrokerID(res)
	if code == protocol.RespSuccess {
		resp.Body = res.Buffer
	}
	if code == protocol.RespPullNotFound && allowSuspend && p.SysFlag&protocol.PullFlagSuspend != 0 {
		if wait := b.suspendTime(p.SuspendTimeoutMillis); wait > 0 {
			return nil, &heldPull{req: req, key: queueKey{p.Topic, p.QueueID}, offset: p.QueueOffset, deadline: time.Now().Add(wait)}
		}
	}
	b.consumeDone(conn, &p, resp, res.NextBeginOffset)
	return resp, nil
}

// suspendTime is how long a pull that found nothing is held.
func (b *Broker) suspendTime(requestedMillis int64) time.Duration {
	if d, short := b.admin.ShortPolling(); short { // cfg.LongPolling, live (admin/config.go)
		return d
	}
	d := time.Duration(requestedMillis) * time.Millisecond
	if b.cfg.MaxSuspend > 0 {
		d = min(d, b.cfg.MaxSuspend)
	}
	return d
}

// pullCode maps a GetStatus to the PULL_MESSAGE response code
// (PullMessageProcessor.composeResponseHeader).
func pullCode(s GetStatus, offset int64) int32 {
	switch s {
	case GetFound:
		return protocol.RespSuccess
	case GetMessageWasRemoving, GetNoMatchedMessage:
		return protocol.RespPullRetryImmediately
	case GetNoMatchedLogicQueue, GetNoMessageInQueue:
		if offset != 0 {
			return protocol.RespPullOffsetMoved
		}
		return protocol.RespPullNotFound
	case GetOffsetFoundNull, GetOffsetOverflowOne:
		return protocol.RespPullNotFound
	case GetOffsetOverflowBadly, GetOffsetTooSmall, GetOffsetReset:
		return protocol.RespPullOffsetMoved
	}
	return protocol.RespSystemError
}
