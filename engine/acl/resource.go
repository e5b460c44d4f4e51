package acl

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RetryGroupTopicPrefix prefixes a group's retry topic, the key groups are
// checked under (MixAll.RETRY_GROUP_TOPIC_PREFIX).
const RetryGroupTopicPrefix = "%RETRY%"

// TraceTopic is RocketMQ's message-trace topic; publishing to it needs no
// permission once the signature is right (TopicValidator.RMQ_SYS_TRACE_TOPIC).
const TraceTopic = "RMQ_SYS_TRACE_TOPIC"

// Request codes the checker knows (RequestCode.java). Kept here rather than
// in engine/remoting so the package depends on nothing but std.
const (
	codeSendMessage                     int32 = 10
	codePullMessage                     int32 = 11
	codeQueryMessage                    int32 = 12
	codeQueryConsumerOffset             int32 = 14
	codeUpdateConsumerOffset            int32 = 15
	codeUpdateAndCreateTopic            int32 = 17
	codeUpdateAndCreateTopicList        int32 = 18
	codeUpdateBrokerConfig              int32 = 25
	codeTriggerDeleteFiles              int32 = 27
	codeHeartBeat                       int32 = 34
	codeUnregisterClient                int32 = 35
	codeConsumerSendMsgBack             int32 = 36
	codeGetConsumerListByGroup          int32 = 38
	codeUpdateAndCreateACLConfig        int32 = 50
	codeDeleteACLConfig                 int32 = 51
	codeGetBrokerClusterACLInfo         int32 = 52
	codeUpdateGlobalWhiteAddrsConfig    int32 = 53
	codeUpdateAndCreateSubscriptionGrp  int32 = 200
	codeWipeWritePermOfBroker           int32 = 205
	codeDeleteSubscriptionGroup         int32 = 207
	codeDeleteTopicInBroker             int32 = 215
	codeInvokeBrokerToResetOffset       int32 = 222
	codeCleanExpiredConsumeQueue        int32 = 306
	codeSendMessageV2                   int32 = 310
	codeSendBatchMessage                int32 = 320
	codeAddWritePermOfBroker            int32 = 327
	codeDeleteExpiredCommitLog          int32 = 329
	codeLitePullMessage                 int32 = 361
	codeUpdateAndCreateStaticTopic      int32 = 513
	codeCleanUnusedTopic                int32 = 316
	codeUpdateAndCreateSubscriptionList int32 = 225
)

// adminCodes are the request codes only admin accounts may send: RocketMQ's
// Permission.ADMIN_CODE (topic create/update/delete, static topics,
// subscription-group create/update/delete, broker config updates, the ACL
// admin codes) plus the other codes that change a broker's topics, offsets,
// permissions or files: UPDATE_AND_CREATE_TOPIC_LIST,
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, INVOKE_BROKER_TO_RESET_OFFSET,
// WIPE/ADD_WRITE_PERM_OF_BROKER, TRIGGER_DELETE_FILES,
// CLEAN_EXPIRED_CONSUMEQUEUE, CLEAN_UNUSED_TOPIC and DELETE_EXPIRED_COMMITLOG.
var adminCodes = map[int32]bool{
	codeUpdateAndCreateTopic: true, codeUpdateBrokerConfig: true, codeDeleteTopicInBroker: true,
	codeUpdateAndCreateSubscriptionGrp: true, codeDeleteSubscriptionGroup: true,
	codeUpdateAndCreateStaticTopic: true, codeUpdateAndCreateACLConfig: true, codeDeleteACLConfig: true,
	codeGetBrokerClusterACLInfo: true, codeUpdateGlobalWhiteAddrsConfig: true,

	codeUpdateAndCreateTopicList: true, codeUpdateAndCreateSubscriptionList: true,
	codeInvokeBrokerToResetOffset: true, codeWipeWritePermOfBroker: true, codeAddWritePermOfBroker: true,
	codeTriggerDeleteFiles: true, codeCleanExpiredConsumeQueue: true, codeCleanUnusedTopic: true,
	codeDeleteExpiredCommitLog: true,
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
	case codeSendMessage:
		sendTopic(ext["topic"])
	case codeSendMessageV2, codeSendBatchMessage:
		sendTopic(ext["b"])
	case codeConsumerSendMsgBack:
		group("group")
	case codePullMessage, codeLitePullMessage:
		add(ext["topic"], PermSub)
		group("consumerGroup")
	case codeQueryMessage:
		add(ext["topic"], PermSub)
	case codeHeartBeat:
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
	case codeUnregisterClient, codeGetConsumerListByGroup:
		group("consumerGroup")
	case codeUpdateConsumerOffset, codeQueryConsumerOffset:
		group("consumerGroup")
		add(ext["topic"], PermSub)
	}
	return needs, nil
}
