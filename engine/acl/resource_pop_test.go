package acl

import (
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// POP codes need the topic and the group (%RETRY%<group>) SUB, as Java's
// @RocketMQResource annotations on their headers say.
func TestResourcesOfPopCodes(t *testing.T) {
	want := []Need{{Resource: "T", Perm: PermSub}, {Resource: RetryGroupTopicPrefix + "g", Perm: PermSub}}
	ext := map[string]string{"topic": "T", "consumerGroup": "g"}
	for _, code := range []int32{protocol.ReqPopMessage, protocol.ReqAckMessage, protocol.ReqChangeMessageInvisibleTime,
		protocol.ReqPeekMessage, protocol.ReqNotification, protocol.ReqPollingInfo} {
		got, err := Resources(code, ext, nil)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", protocol.RequestCodeName(code), got, err, want)
		}
	}
	got, err := Resources(protocol.ReqBatchAckMessage, nil, []byte(`{"acks":[{"c":"g","t":"T"}]}`))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("BATCH_ACK_MESSAGE: %v %v, want %v", got, err, want)
	}
	// RECALL_MESSAGE: the topic PUB (RecallMessageRequestHeader's action).
	got, err = Resources(protocol.ReqRecallMessage, map[string]string{"topic": "T", "recallHandle": "h"}, nil)
	if want := []Need{{Resource: "T", Perm: PermPub}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("RECALL_MESSAGE: %v %v, want %v", got, err, want)
	}
	if _, err := Resources(protocol.ReqBatchAckMessage, nil, []byte("{garbage")); err == nil {
		t.Error("BATCH_ACK_MESSAGE with a body that does not decode: no error")
	}
}
