package proxy

import (
	"context"
	"errors"
	"strconv"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func okStatus() *v2.Status { return &v2.Status{Code: v2.Code_OK, Message: v2.Code_OK.String()} }

func newStatus(code v2.Code, msg string) *v2.Status {
	if msg == "" {
		msg = code.String()
	}
	return &v2.Status{Code: code, Message: msg}
}

// remotingCode maps a broker response code as the proxy's ResponseBuilder
// does (plus the codes the proxy raises itself for the same situations).
func remotingCode(code int32) v2.Code {
	switch code {
	case protocol.RespSuccess:
		return v2.Code_OK
	case protocol.RespSystemBusy, protocol.RespFlowControl, protocol.RespPollingFull:
		return v2.Code_TOO_MANY_REQUESTS
	case protocol.RespRequestCodeNotSupported:
		return v2.Code_NOT_IMPLEMENTED
	case protocol.RespSubscriptionGroupNotExist:
		return v2.Code_CONSUMER_GROUP_NOT_FOUND
	case protocol.RespTopicNotExist:
		return v2.Code_TOPIC_NOT_FOUND
	case protocol.RespNoPermission:
		return v2.Code_FORBIDDEN
	case protocol.RespFlushDiskTimeout:
		return v2.Code_MASTER_PERSISTENCE_TIMEOUT
	case protocol.RespFlushSlaveTimeout:
		return v2.Code_SLAVE_PERSISTENCE_TIMEOUT
	case protocol.RespSlaveNotAvailable:
		return v2.Code_HA_NOT_AVAILABLE
	case protocol.RespMessageIllegal, protocol.RespInvalidParameter:
		return v2.Code_BAD_REQUEST
	}
	return v2.Code_INTERNAL_SERVER_ERROR
}

// respStatus is the status of a broker response.
func respStatus(resp *remoting.Command) *v2.Status {
	msg := resp.Remark
	if msg == "" {
		msg = strconv.Itoa(int(resp.Code))
	}
	return newStatus(remotingCode(resp.Code), msg)
}

// errStatus is the status of a failed call to the broker or of an ACL refusal.
func errStatus(err error) *v2.Status {
	switch {
	case errors.Is(err, acl.ErrDenied):
		return newStatus(v2.Code_FORBIDDEN, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return newStatus(v2.Code_PROXY_TIMEOUT, err.Error())
	}
	return newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
}

func parseInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
