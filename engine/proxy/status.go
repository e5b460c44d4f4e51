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

// codeTable is the proxy's mapping of broker response codes to gRPC codes,
// as its ResponseBuilder maps them (plus the codes the proxy raises itself
// for the same situations). Where several broker codes share a gRPC code,
// the first listed is the one RemotingCode gives back.
var codeTable = []struct {
	remoting int32
	grpc     v2.Code
}{
	{protocol.RespSuccess, v2.Code_OK},
	{protocol.RespSystemBusy, v2.Code_TOO_MANY_REQUESTS},
	{protocol.RespFlowControl, v2.Code_TOO_MANY_REQUESTS},
	{protocol.RespPollingFull, v2.Code_TOO_MANY_REQUESTS},
	{protocol.RespRequestCodeNotSupported, v2.Code_NOT_IMPLEMENTED},
	{protocol.RespSubscriptionGroupNotExist, v2.Code_CONSUMER_GROUP_NOT_FOUND},
	{protocol.RespTopicNotExist, v2.Code_TOPIC_NOT_FOUND},
	{protocol.RespNoPermission, v2.Code_FORBIDDEN},
	{protocol.RespFlushDiskTimeout, v2.Code_MASTER_PERSISTENCE_TIMEOUT},
	{protocol.RespFlushSlaveTimeout, v2.Code_SLAVE_PERSISTENCE_TIMEOUT},
	{protocol.RespSlaveNotAvailable, v2.Code_HA_NOT_AVAILABLE},
	{protocol.RespMessageIllegal, v2.Code_BAD_REQUEST},
	{protocol.RespInvalidParameter, v2.Code_BAD_REQUEST},
}

// remotingCode maps a broker response code to the proxy's gRPC code
// (INTERNAL_SERVER_ERROR for one it does not map).
func remotingCode(code int32) v2.Code {
	for _, e := range codeTable {
		if e.remoting == code {
			return e.grpc
		}
	}
	return v2.Code_INTERNAL_SERVER_ERROR
}

// RemotingCode is the inverse: the broker response code a gRPC status code
// stands for (the first of several), so that a client of either family
// can count a failure under one name; false for a code the proxy raises
// only itself (MESSAGE_NOT_FOUND, timeouts, INTERNAL_SERVER_ERROR, ...).
func RemotingCode(code v2.Code) (int32, bool) {
	if code == v2.Code_OK {
		return 0, false
	}
	for _, e := range codeTable {
		if e.grpc == code {
			return e.remoting, true
		}
	}
	return 0, false
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
