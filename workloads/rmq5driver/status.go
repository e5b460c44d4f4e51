package rmq5driver

import (
	"context"
	"fmt"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// sendError wraps a failed send's error: a status with a remoting
// counterpart also wraps a *remoting.ResponseError of that code, a timeout
// (the proxy's or the context's) wraps context.DeadlineExceeded, any other
// status wraps ErrSendStatus; the client's error is always kept.
func sendError(err error) error {
	st, ok := rmq.AsErrRpcStatus(err)
	if !ok {
		return fmt.Errorf("rmq5driver: send: %w", err)
	}
	code := v2.Code(st.GetCode())
	// The proxy's own mapping, inverted: a failed send counts under the
	// same code name (gen.FailureCode) whichever client family made it.
	if rc, ok := proxy.RemotingCode(code); ok {
		return fmt.Errorf("rmq5driver: send: %w (%w)", &remoting.ResponseError{Code: rc, Remark: st.GetMessage()}, err)
	}
	if code == v2.Code_PROXY_TIMEOUT || code == v2.Code_REQUEST_TIMEOUT {
		return fmt.Errorf("rmq5driver: send: %w (%w)", context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%w: %s (%w)", ErrSendStatus, code, err)
}

// notFound reports a receive that found nothing (MESSAGE_NOT_FOUND: an
// empty long poll), which is not an error.
func notFound(err error) bool {
	st, ok := rmq.AsErrRpcStatus(err)
	return ok && v2.Code(st.GetCode()) == v2.Code_MESSAGE_NOT_FOUND
}
