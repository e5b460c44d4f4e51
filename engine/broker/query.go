package broker

import (
	"context"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// queryMessage handles QUERY_MESSAGE (12): records of topic indexed under
// key within [beginTimestamp, endTimestamp].
func (b *Broker) queryMessage(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	ext := req.ExtFields
	topic, err := ext.String("topic")
	if err != nil {
		return nil, err
	}
	key, err := ext.String("key")
	if err != nil {
		return nil, err
	}
	maxNum, err := ext.OptInt32("maxNum", 32)
	if err != nil {
		return nil, err
	}
	begin, err := ext.OptInt64("beginTimestamp", 0)
	if err != nil {
		return nil, err
	}
	end, err := ext.OptInt64("endTimestamp", 1<<62)
	if err != nil {
		return nil, err
	}
	if maxNum <= 0 {
		maxNum = 32
	}
	res, err := b.store.QueryByKey(topic, strings.TrimSpace(key), int(maxNum), begin, end)
	if err != nil {
		return responsef(protocol.RespSystemError, "query message: %v", err), nil
	}
	if len(res.Buffer) == 0 {
		return remoting.NewResponse(protocol.RespQueryNotFound, "can not find message, maybe time range not correct"), nil
	}
	resp := success()
	resp.Ext().SetInt64("indexLastUpdateTimestamp", res.IndexLastUpdateTimestamp)
	resp.Ext().SetInt64("indexLastUpdatePhyoffset", res.IndexLastUpdatePhyOffset)
	resp.Body = res.Buffer
	return resp, nil
}

// viewMessageByID handles VIEW_MESSAGE_BY_ID (33): the record at the
// commit-log offset taken from an offset message id.
func (b *Broker) viewMessageByID(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	off, err := req.ExtFields.Int64("offset")
	if err != nil {
		return nil, err
	}
	raw, err := b.store.ReadRecord(off)
	if err != nil {
		return responsef(protocol.RespSystemError, "can not find message by the offset, %d: %v", off, err), nil
	}
	resp := success()
	resp.Body = append([]byte(nil), raw...)
	return resp, nil
}
