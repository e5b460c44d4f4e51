package acl

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// RetryGroupTopicPrefix prefixes a group's retry topic, the key groups are
// checked under (MixAll.RETRY_GROUP_TOPIC_PREFIX).
const RetryGroupTopicPrefix = protocol.RetryTopicPrefix

// TraceTopic is RocketMQ's message-trace topic; publishing to it needs no
// permission once the signature is right (TopicValidator.RMQ_SYS_TRACE_TOPIC).
const TraceTopic = protocol.TraceTopic

// adminCodes are the request codes only admin accounts may send: RocketMQ's
// Permission.ADMIN_CODE (topic create/update/delete, static topics,
// subscription-group create/update/delete, broker config updates, the ACL
// admin codes) plus the other codes that change a broker's topics, offsets,
// permissions or files: UPDATE_AND_CREATE_TOPIC_LIST,
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, INVOKE_BROKER_TO_RESET_OFFSET,
// WIPE/ADD_WRITE_PERM_OF_BROKER, TRIGGER_DELETE_FILES,
// CLEAN_EXPIRED_CONSUMEQUEUE, CLEAN_UNUSED_TOPIC and DELETE_EXPIRED_COMMITLOG.
var adminCodes = map[int32]bool{
	protocol.ReqUpdateAndCreateTopic: true, protocol.ReqUpdateBrokerConfig: true, protocol.ReqDeleteTopicInBroker: true,
	protocol.ReqUpdateAndCreateSubscriptionGroup: true, protocol.ReqDeleteSubscriptionGroup: true,
	protocol.ReqUpdateAndCreateStaticTopic: true, protocol.ReqUpdateAndCreateACLConfig: true, protocol.ReqDeleteACLConfig: true,
	protocol.ReqGetBrokerClusterACLInfo: true, protocol.ReqUpdateGlobalWhiteAddrsConfig: true,

	protocol.ReqUpdateAndCreateTopicList: true, protocol.ReqUpdateAndCreateSubscriptionGroupList: true,
	protocol.ReqInvokeBrokerToResetOffset: true, protocol.ReqWipeWritePermOfBroker: true, protocol.ReqAddWritePermOfBroker: true,
	protocol.ReqTriggerDeleteFiles: true, protocol.ReqCleanExpiredConsumeQueue: true, protocol.ReqCleanUnusedTopic: true,
	protocol.ReqDeleteExpiredCommitLog: true,
}

// AdminOnly reports whether code is refused to non-admin accounts.
func AdminOnly(code int32) bool { return adminCodes[code] }

// Need is one resource a request touches and the permission it needs.
type Need struct {
	// Resource is a topic name, or "%RETRY%<group>" for a consumer group.
	Resource string
	Perm     Perm
}

// IsGroup reports whether the resource is a consumer group.
func (n Need) IsGroup() bool { return strings.HasPrefix(n.Resource, RetryGroupTopicPrefix) }

// String is "topic:T" or "group:G".
func (n Need) String() string { return resourceString(n.Resource) }

func resourceString(r string) string {
	if g, ok := strings.CutPrefix(r, RetryGroupTopicPrefix); ok {
		return "group:" + g
	}
	return "topic:" + r
}

func groupKey(g string) string { return RetryGroupTopicPrefix + g }

// Resources lists what a request needs (PlainAccessResource.parse for the
// remoting protocol), in request order:
//
//	SEND_MESSAGE (topic), SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE (b):
//	    the topic PUB, or SUB when it is a %RETRY% topic
//	CONSUMER_SEND_MSG_BACK: the group SUB
//	PULL_MESSAGE, LITE_PULL_MESSAGE: the topic SUB and consumerGroup SUB
//	QUERY_MESSAGE: the topic SUB
//	HEART_BEAT: each consumer group in the body SUB and each topic it subscribes SUB
//	UNREGISTER_CLIENT, GET_CONSUMER_LIST_BY_GROUP: consumerGroup SUB
//	UPDATE_CONSUMER_OFFSET, QUERY_CONSUMER_OFFSET: consumerGroup SUB and the topic SUB
//	POP_MESSAGE, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME, PEEK_MESSAGE, NOTIFICATION,
//	POLLING_INFO: the topic SUB and consumerGroup SUB; BATCH_ACK_MESSAGE: each ack's topic and group SUB
//
// Other codes need no resource (only a valid signature, and admin for
// AdminOnly codes). QUERY_CONSUMER_OFFSET and LITE_PULL_MESSAGE are checked
// here although RocketMQ's remoting ACL leaves them out: they read a group's
// progress and a topic's messages as the pull and offset update beside them
// do. An absent or empty group or topic field adds nothing (the handler
// answers it); a HEART_BEAT body that does not decode is an error.
func Resources(code int32, ext map[string]string, body []byte) ([]Need, error) {
	var needs []Need
	add := func(resource string, p Perm) {
		if resource != "" && resource != RetryGroupTopicPrefix {
			needs = append(needs, Need{Resource: resource, Perm: p})
		}
	}
	group := func(field string) {
		if g := ext[field]; g != "" {
			add(groupKey(g), PermSub)
		}
	}
	sendTopic := func(t string) {
		if strings.HasPrefix(t, RetryGroupTopicPrefix) {
			add(t, PermSub)
		} else {
			add(t, PermPub)
		}
	}
	switch code {
	case protocol.ReqSendMessage:
		sendTopic(ext["topic"])
	case protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage:
		sendTopic(ext["b"])
	case protocol.ReqRecallMessage:
		add(ext["topic"], PermPub)
	case protocol.ReqConsumerSendMsgBack:
		group("group")
	case protocol.ReqPullMessage, protocol.ReqLitePullMessage:
		add(ext["topic"], PermSub)
		group("consumerGroup")
	case protocol.ReqQueryMessage:
		add(ext["topic"], PermSub)
	case protocol.ReqHeartBeat:
		var hb struct {
			ConsumerDataSet []struct {
				GroupName           string `json:"groupName"`
				SubscriptionDataSet []struct {
					Topic string `json:"topic"`
				} `json:"subscriptionDataSet"`
			} `json:"consumerDataSet"`
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &hb); err != nil {
				return nil, fmt.Errorf("acl: heartbeat body: %w", err)
			}
		}
		for _, c := range hb.ConsumerDataSet {
			if c.GroupName != "" {
				add(groupKey(c.GroupName), PermSub)
			}
			for _, s := range c.SubscriptionDataSet {
				add(s.Topic, PermSub)
			}
		}
	case protocol.ReqUnregisterClient, protocol.ReqGetConsumerListByGroup:
		group("consumerGroup")
	case protocol.ReqUpdateConsumerOffset, protocol.ReqQueryConsumerOffset:
		group("consumerGroup")
		add(ext["topic"], PermSub)
	case protocol.ReqPopMessage, protocol.ReqAckMessage, protocol.ReqChangeMessageInvisibleTime, protocol.ReqPeekMessage,
		protocol.ReqNotification, protocol.ReqPollingInfo:
		add(ext["topic"], PermSub)
		group("consumerGroup")
	case protocol.ReqBatchAckMessage:
		var ba protocol.BatchAckMessageRequestBody
		if len(body) > 0 {
			if err := json.Unmarshal(body, &ba); err != nil {
				return nil, fmt.Errorf("acl: batch ack body: %w", err)
			}
		}
		for _, a := range ba.Acks {
			add(a.Topic, PermSub)
			if a.ConsumerGroup != "" {
				add(groupKey(a.ConsumerGroup), PermSub)
			}
		}
	}
	return needs, nil
}
