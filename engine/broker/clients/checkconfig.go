package clients

import (
	"context"
	"encoding/json"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// RemarkPropertyFilterDisabled is the remark of a refused SQL92
// subscription while EnablePropertyFilter is off (PullMessageProcessor,
// ClientManageProcessor), followed by the expression type.
const RemarkPropertyFilterDisabled = "The broker does not support consumer to filter message by "

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
func (s *Service) checkClientConfig(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
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
	if !s.deps.EnablePropertyFilter {
		return remoting.NewResponse(protocol.RespSystemError, RemarkPropertyFilterDisabled+sd.ExpressionType), nil
	}
	if _, err := s.compile(sd.SubString, sd.ExpressionType); err != nil {
		s.log.Warn("client filter expression does not compile", "client", body.ClientID, "group", body.Group,
			"expression", sd.SubString, "err", err)
		return remoting.NewResponse(protocol.RespSubscriptionParseFailed, err.Error()), nil
	}
	return success(), nil
}

// compile compiles an expression with Deps.CompileFilter (none: every
// expression compiles).
func (s *Service) compile(expr, typ string) (Filter, error) {
	if s.deps.CompileFilter == nil {
		return nil, nil
	}
	return s.deps.CompileFilter(expr, typ)
}
