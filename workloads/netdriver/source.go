package netdriver

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Pull implements workloads.Source with PULL_MESSAGE, never suspended.
// PULL_NOT_FOUND and PULL_RETRY_IMMEDIATELY return no bodies and the
// broker's nextBeginOffset; PULL_OFFSET_MOVED (the offset is below the
// queue's first message or past its end) also returns nextBeginOffset, where
// the consumer should go on, with no error.
func (d *Driver) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	q, err := d.queue(ctx, topic, queueID, false)
	if err != nil {
		return nil, offset, err
	}
	ext := protocol.PullMessageHeader{ConsumerGroup: d.cfg.ConsumerGroup, Topic: topic, QueueID: q.queueID, QueueOffset: offset,
		MaxMsgNums: int32(max), Subscription: "*", ExpressionType: "TAG", BrokerName: q.brokerName}.ExtFields()
	resp, err := d.invoke(ctx, q.addr, remoting.NewRequest(protocol.ReqPullMessage, ext))
	switch {
	case err == nil:
	case resp != nil && (resp.Code == protocol.RespPullNotFound || resp.Code == protocol.RespPullRetryImmediately ||
		resp.Code == protocol.RespPullOffsetMoved):
		next, perr := resp.ExtFields.Int64("nextBeginOffset")
		if perr != nil {
			return nil, offset, fmt.Errorf("%w: %w", ErrBadResponse, perr)
		}
		return nil, next, nil
	default:
		d.forgetOnTopicError(topic, err)
		return nil, offset, err
	}
	next, err := resp.ExtFields.Int64("nextBeginOffset")
	if err != nil {
		return nil, offset, fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
	var bodies [][]byte
	for buf := resp.Body; len(buf) > 0; {
		rec, err := record.Decode(buf, false)
		if err != nil {
			return nil, offset, fmt.Errorf("%w: record %d: %w", ErrBadResponse, len(bodies), err)
		}
		buf = buf[rec.TotalSize:]
		body := rec.Body
		if rec.SysFlag&record.FlagCompressed != 0 {
			if body, err = inflate(body); err != nil {
				return nil, offset, fmt.Errorf("%w: record %d: %w", ErrBadResponse, len(bodies), err)
			}
		}
		bodies = append(bodies, body)
	}
	return bodies, next, nil
}

func inflate(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// MaxOffset implements workloads.Source with GET_MAX_OFFSET.
func (d *Driver) MaxOffset(topic string, queueID int32) (int64, error) {
	ctx := context.Background()
	q, err := d.queue(ctx, topic, queueID, false)
	if err != nil {
		return 0, err
	}
	ext := remoting.ExtFields{"topic": topic}
	ext.SetInt32("queueId", q.queueID)
	resp, err := d.invoke(ctx, q.addr, remoting.NewRequest(protocol.ReqGetMaxOffset, ext))
	if err != nil {
		return 0, err
	}
	off, err := resp.ExtFields.Int64("offset")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
	return off, nil
}
