package protocol

// Operator and admin request codes (RequestCode.java) served by the broker's
// ops processors (engine/broker/admin), in addition to those in codes.go.
const (
	ReqGetConsumerConnectionList       int32 = 203
	ReqGetProducerConnectionList       int32 = 204
	ReqDeleteSubscriptionGroup         int32 = 207
	ReqInvokeBrokerToResetOffset       int32 = 222
	ReqInvokeBrokerToGetConsumerStatus int32 = 223
	ReqQueryTopicConsumeByWho          int32 = 300
)
