package broker_test

import (
	"maps"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// bodyRule says what a request code does with its body.
type bodyRule int

const (
	bodyIgnored  bodyRule = iota // takes no body: any body is answered as none
	bodyPayload                  // the body is the message: any bytes are stored, none is refused
	bodyDecoded                  // the body is decoded: an empty or undecodable one is refused
	bodyOptional                 // decoded when present: none is accepted, an undecodable one refused
)

// requestSpec describes one request code the broker serves, for the
// bad-request cases generated from it (TestEveryRequestCodeRefusesBadRequests)
// and the fuzz seeds (FuzzBrokerRequestKeepsConnection).
type requestSpec struct {
	name string
	// ext is a complete good header (every field the handler reads, with
	// a value it accepts) for the broker of newSpecEnv.
	ext remoting.ExtFields
	// required lists the fields of ext the handler cannot do without: a
	// request missing any one of them is answered SYSTEM_ERROR "the custom
	// field <name> is null"; one missing any other field is not.
	required []string
	body     []byte // a good body (nil: the code takes none)
	bodyRule bodyRule
}

// specTopic is the topic the good headers of requestSpecs name; the
// broker they are written for (startSpecEnv) has it, with one message at
// commit-log offset 0 for a view or a send-back to find.
const specTopic = "T"

// unparsedFields lists, per code, the numeric fields of requestSpecs' good
// headers the handler does not read, so "abc" in them is not refused.
// Java's header decoding would refuse it (PullMessageRequestHeader's
// subVersion is a Long): a difference, kept visible here.
var unparsedFields = map[int32][]string{
	protocol.ReqPullMessage:     {"subVersion"},
	protocol.ReqLitePullMessage: {"subVersion"},
	protocol.ReqPopMessage:      {"bornTime"},
	protocol.ReqNotification:    {"bornTime"},
}

// requestSpecs has an entry for every request code the broker registers
// (TestRequestSpecsCoverEveryRegisteredCode fails for a code without one,
// so a new processor cannot be left out of the bad-request cases).
func requestSpecs() map[int32]requestSpec {
	sendRequired := func(short bool) []string {
		if short {
			return []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		}
		return []string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag", "bornTimestamp", "flag"}
	}
	send := func(short bool) remoting.ExtFields { return sendHeader(specTopic, 0, "").ExtFields(short) }
	batch := sendHeader(specTopic, 0, "")
	batch.Batch = true
	pull := pullExt("g", specTopic, 0, 0, 32, 0, 0)
	pullRequired := []string{"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag"}
	topicQueue := remoting.ExtFields{"topic": specTopic, "queueId": "0"}
	none := remoting.ExtFields{}
	popAck := remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "0",
		"extraInfo": "0 0 60000 0 0 broker-a 0 0", "offset": "0"}
	popAckRequired := []string{"consumerGroup", "topic", "queueId", "extraInfo", "offset"}
	changeInvisible := maps.Clone(popAck)
	changeInvisible["invisibleTime"] = "1000"
	return map[int32]requestSpec{
		protocol.ReqSendMessage:   {"SEND_MESSAGE", send(false), sendRequired(false), []byte("body"), bodyPayload},
		protocol.ReqSendMessageV2: {"SEND_MESSAGE_V2", send(true), sendRequired(true), []byte("body"), bodyPayload},
		protocol.ReqSendBatchMessage: {"SEND_BATCH_MESSAGE", batch.ExtFields(true), sendRequired(true),
			record.AppendBatchItem(nil, record.BatchItem{Body: []byte("item")}), bodyDecoded},
		protocol.ReqSendReplyMessage:   {"SEND_REPLY_MESSAGE", send(false), sendRequired(false), []byte("body"), bodyPayload},
		protocol.ReqSendReplyMessageV2: {"SEND_REPLY_MESSAGE_V2", send(true), sendRequired(true), []byte("body"), bodyPayload},
		protocol.ReqConsumerSendMsgBack: {"CONSUMER_SEND_MSG_BACK",
			remoting.ExtFields{"group": "g", "offset": "0", "delayLevel": "0", "originMsgId": "", "originTopic": specTopic, "maxReconsumeTimes": "16"},
			[]string{"group", "offset"}, nil, bodyIgnored},
		protocol.ReqPullMessage:     {"PULL_MESSAGE", pull, pullRequired, nil, bodyIgnored},
		protocol.ReqLitePullMessage: {"LITE_PULL_MESSAGE", pull, pullRequired, nil, bodyIgnored},
		protocol.ReqHeartBeat: {"HEART_BEAT", none, nil,
			// A producer only: a consumer group would make the broker push
			// to the test's connection, which does not answer.
			[]byte(`{"clientID":"127.0.0.1@spec","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[]}`), bodyDecoded},
		protocol.ReqUnregisterClient: {"UNREGISTER_CLIENT", remoting.ExtFields{"clientID": "127.0.0.1@gone", "producerGroup": "pg2", "consumerGroup": "g2"},
			[]string{"clientID"}, nil, bodyIgnored},
		protocol.ReqQueryConsumerOffset: {"QUERY_CONSUMER_OFFSET",
			remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "0", "setZeroIfNotFound": "true"},
			[]string{"consumerGroup", "topic", "queueId"}, nil, bodyIgnored},
		protocol.ReqUpdateConsumerOffset: {"UPDATE_CONSUMER_OFFSET",
			remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "0", "commitOffset": "1"},
			[]string{"consumerGroup", "topic", "queueId", "commitOffset"}, nil, bodyIgnored},
		protocol.ReqGetConsumerListByGroup: {"GET_CONSUMER_LIST_BY_GROUP", remoting.ExtFields{"consumerGroup": "g"},
			[]string{"consumerGroup"}, nil, bodyIgnored},
		protocol.ReqLockBatchMQ: {"LOCK_BATCH_MQ", none, nil,
			[]byte(`{"consumerGroup":"g","clientId":"127.0.0.1@spec","onlyThisBroker":false,"mqSet":[{"topic":"T","brokerName":"broker-a","queueId":0}]}`),
			bodyDecoded},
		protocol.ReqUnlockBatchMQ: {"UNLOCK_BATCH_MQ", none, nil,
			[]byte(`{"consumerGroup":"g","clientId":"127.0.0.1@spec","mqSet":[{"topic":"T","brokerName":"broker-a","queueId":0}]}`),
			bodyDecoded},
		protocol.ReqQueryMessage: {"QUERY_MESSAGE",
			remoting.ExtFields{"topic": specTopic, "key": "k", "maxNum": "1", "beginTimestamp": "0", "endTimestamp": strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)},
			[]string{"topic", "key"}, nil, bodyIgnored},
		protocol.ReqViewMessageByID: {"VIEW_MESSAGE_BY_ID", remoting.ExtFields{"offset": "0"}, []string{"offset"}, nil, bodyIgnored},
		protocol.ReqUpdateAndCreateTopic: {"UPDATE_AND_CREATE_TOPIC",
			remoting.ExtFields{"topic": "NEWT", "defaultTopic": protocol.DefaultTopic, "readQueueNums": "2", "writeQueueNums": "2",
				"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"},
			[]string{"topic", "readQueueNums", "writeQueueNums"}, nil, bodyIgnored},
		protocol.ReqDeleteTopicInBroker:           {"DELETE_TOPIC_IN_BROKER", remoting.ExtFields{"topic": "GONE"}, []string{"topic"}, nil, bodyIgnored},
		protocol.ReqGetAllTopicConfig:             {"GET_ALL_TOPIC_CONFIG", none, nil, nil, bodyIgnored},
		protocol.ReqGetAllSubscriptionGroupConfig: {"GET_ALL_SUBSCRIPTIONGROUP_CONFIG", none, nil, nil, bodyIgnored},
		protocol.ReqGetMaxOffset:                  {"GET_MAX_OFFSET", topicQueue, []string{"topic", "queueId"}, nil, bodyIgnored},
		protocol.ReqGetMinOffset:                  {"GET_MIN_OFFSET", topicQueue, []string{"topic", "queueId"}, nil, bodyIgnored},
		protocol.ReqGetEarliestMsgStoretime:       {"GET_EARLIEST_MSG_STORETIME", topicQueue, []string{"topic", "queueId"}, nil, bodyIgnored},
		protocol.ReqSearchOffsetByTimestamp: {"SEARCH_OFFSET_BY_TIMESTAMP", remoting.ExtFields{"topic": specTopic, "queueId": "0", "timestamp": "0"},
			[]string{"topic", "queueId", "timestamp"}, nil, bodyIgnored},
		// A handle that decodes but names no timer message: refused
		// ILLEGAL_OPERATION, which is the good request's answer here.
		protocol.ReqRecallMessage: {"RECALL_MESSAGE",
			remoting.ExtFields{"producerGroup": "pg", "topic": specTopic,
				"recallHandle": protocol.RecallHandle{Topic: specTopic, BrokerName: "broker-a", Timestamp: "0", MessageID: "m"}.Encode()},
			[]string{"topic", "recallHandle"}, nil, bodyIgnored},
		protocol.ReqEndTransaction: {"END_TRANSACTION",
			remoting.ExtFields{"producerGroup": "pg", "tranStateTableOffset": "0", "commitLogOffset": "0", "commitOrRollback": "12",
				"fromTransactionCheck": "false", "msgId": "0A", "transactionId": "tx"},
			[]string{"producerGroup", "tranStateTableOffset", "commitLogOffset", "commitOrRollback", "msgId"}, nil, bodyIgnored},
		protocol.ReqCheckClientConfig: {"CHECK_CLIENT_CONFIG", none, nil,
			[]byte(`{"clientId":"127.0.0.1@spec","group":"g","subscriptionData":{"topic":"T","subString":"*","expressionType":"TAG"}}`),
			bodyOptional},
		// POP consumption (engine/broker/pop).
		protocol.ReqPopMessage: {"POP_MESSAGE",
			remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "-1", "maxMsgNums": "1", "invisibleTime": "60000",
				"pollTime": "0", "bornTime": "0", "initMode": "0", "order": "false"},
			[]string{"consumerGroup", "topic", "queueId", "maxMsgNums", "invisibleTime", "pollTime"}, nil, bodyIgnored},
		protocol.ReqAckMessage: {"ACK_MESSAGE", popAck, popAckRequired, nil, bodyIgnored},
		protocol.ReqBatchAckMessage: {"BATCH_ACK_MESSAGE", none, nil,
			[]byte(`{"brokerName":"broker-a","acks":[{"c":"g","t":"T","r":"0","so":0,"q":0,"rq":0,"pt":0,"it":60000,"b":"AQ=="}]}`), bodyDecoded},
		protocol.ReqChangeMessageInvisibleTime: {"CHANGE_MESSAGE_INVISIBLETIME", changeInvisible,
			append(popAckRequired, "invisibleTime"), nil, bodyIgnored},
		protocol.ReqPeekMessage: {"PEEK_MESSAGE", remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "0", "maxMsgNums": "1"},
			[]string{"consumerGroup", "topic", "queueId", "maxMsgNums"}, nil, bodyIgnored},
		protocol.ReqNotification: {"NOTIFICATION",
			remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "-1", "pollTime": "0", "bornTime": "0", "order": "false"},
			[]string{"consumerGroup", "topic", "queueId", "pollTime"}, nil, bodyIgnored},
		protocol.ReqPollingInfo: {"POLLING_INFO", remoting.ExtFields{"consumerGroup": "g", "topic": specTopic, "queueId": "0"},
			[]string{"consumerGroup", "topic", "queueId"}, nil, bodyIgnored},
		// Operator requests (admin/).
		protocol.ReqGetBrokerRuntimeInfo: {"GET_BROKER_RUNTIME_INFO", none, nil, nil, bodyIgnored},
		protocol.ReqGetTopicStatsInfo:    {"GET_TOPIC_STATS_INFO", remoting.ExtFields{"topic": specTopic}, []string{"topic"}, nil, bodyIgnored},
		protocol.ReqGetConsumeStats: {"GET_CONSUME_STATS", remoting.ExtFields{"consumerGroup": "g", "topic": specTopic},
			[]string{"consumerGroup"}, nil, bodyIgnored},
		protocol.ReqGetConsumerConnectionList: {"GET_CONSUMER_CONNECTION_LIST", remoting.ExtFields{"consumerGroup": "g"},
			[]string{"consumerGroup"}, nil, bodyIgnored},
		protocol.ReqGetProducerConnectionList: {"GET_PRODUCER_CONNECTION_LIST", remoting.ExtFields{"producerGroup": "pg"},
			[]string{"producerGroup"}, nil, bodyIgnored},
		protocol.ReqQueryTopicConsumeByWho: {"QUERY_TOPIC_CONSUME_BY_WHO", remoting.ExtFields{"topic": specTopic}, []string{"topic"}, nil, bodyIgnored},
		protocol.ReqUpdateAndCreateSubscriptionGroup: {"UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", none, nil,
			[]byte(`{"groupName":"sg","consumeEnable":true,"retryMaxTimes":3}`), bodyDecoded},
		protocol.ReqDeleteSubscriptionGroup: {"DELETE_SUBSCRIPTIONGROUP", remoting.ExtFields{"groupName": "gone", "cleanOffset": "false", "removeOffset": "false"},
			[]string{"groupName"}, nil, bodyIgnored},
		protocol.ReqInvokeBrokerToResetOffset: {"INVOKE_BROKER_TO_RESET_OFFSET",
			remoting.ExtFields{"group": "g", "topic": specTopic, "timestamp": "0", "isForce": "true", "queueId": "-1", "offset": "-1"},
			[]string{"group", "topic", "timestamp"}, nil, bodyIgnored},
		protocol.ReqInvokeBrokerToGetConsumerStatus: {"INVOKE_BROKER_TO_GET_CONSUMER_STATUS",
			remoting.ExtFields{"topic": specTopic, "group": "g", "clientAddr": ""}, []string{"topic", "group"}, nil, bodyIgnored},
		protocol.ReqGetBrokerConfig: {"GET_BROKER_CONFIG", none, nil, nil, bodyIgnored},
		// A live key set to its default: the good request changes nothing.
		protocol.ReqUpdateBrokerConfig: {"UPDATE_BROKER_CONFIG", none, nil, []byte("longPollingEnable=true\n"), bodyOptional},
	}
}
