package protocol

// Request codes of the client-config check (RequestCode.java) served by
// engine/broker/reply.go, in addition to those in codes.go.
const (
	ReqCheckClientConfig int32 = 46
)
