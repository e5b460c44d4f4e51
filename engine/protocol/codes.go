package protocol

import "strconv"

// Request codes (RequestCode.java). Codes the broker, the name server or the
// official Go client use; the numbers are the wire values.
const (
	ReqSendMessage              int32 = 10
	ReqPullMessage              int32 = 11
	ReqQueryMessage             int32 = 12
	ReqQueryBrokerOffset        int32 = 13
	ReqQueryConsumerOffset      int32 = 14
	ReqUpdateConsumerOffset     int32 = 15
	ReqUpdateAndCreateTopic     int32 = 17
	ReqUpdateAndCreateTopicList int32 = 18
	ReqGetAllTopicConfig        int32 = 21
	ReqGetTopicConfigList       int32 = 22
	ReqUpdateBrokerConfig       int32 = 25
	ReqGetBrokerConfig          int32 = 26
	ReqTriggerDeleteFiles       int32 = 27
	ReqGetBrokerRuntimeInfo     int32 = 28
	ReqSearchOffsetByTimestamp  int32 = 29
	ReqGetMaxOffset             int32 = 30
	ReqGetMinOffset             int32 = 31
	ReqGetEarliestMsgStoretime  int32 = 32
	ReqViewMessageByID          int32 = 33
	ReqHeartBeat                int32 = 34
	ReqUnregisterClient         int32 = 35
	ReqConsumerSendMsgBack      int32 = 36
	ReqEndTransaction           int32 = 37
	ReqGetConsumerListByGroup   int32 = 38
	ReqCheckTransactionState    int32 = 39 // broker → producer
	ReqNotifyConsumerIDsChanged int32 = 40 // broker → consumer, oneway
	ReqLockBatchMQ              int32 = 41
	ReqUnlockBatchMQ            int32 = 42
	ReqGetAllConsumerOffset     int32 = 43
	ReqGetAllDelayOffset        int32 = 45

	ReqPutKVConfig          int32 = 100
	ReqGetKVConfig          int32 = 101
	ReqDeleteKVConfig       int32 = 102
	ReqRegisterBroker       int32 = 103
	ReqUnregisterBroker     int32 = 104
	ReqGetRouteInfoByTopic  int32 = 105
	ReqGetBrokerClusterInfo int32 = 106

	ReqUpdateAndCreateSubscriptionGroup int32 = 200
	ReqGetAllSubscriptionGroupConfig    int32 = 201
	ReqGetTopicStatsInfo                int32 = 202
	ReqWipeWritePermOfBroker            int32 = 205
	ReqGetAllTopicListFromNameserver    int32 = 206
	ReqGetConsumeStats                  int32 = 208
	ReqDeleteTopicInBroker              int32 = 215
	ReqDeleteTopicInNamesrv             int32 = 216
	ReqRegisterTopicInNamesrv           int32 = 217
	ReqResetConsumerClientOffset        int32 = 220 // broker → consumer
	ReqGetConsumerStatusFromClient      int32 = 221 // broker → consumer
	ReqGetTopicsByCluster               int32 = 224

	ReqCleanExpiredConsumeQueue int32 = 306
	ReqGetConsumerRunningInfo   int32 = 307 // broker → consumer
	ReqConsumeMessageDirectly   int32 = 309 // broker → consumer
	ReqSendMessageV2            int32 = 310
	ReqSendBatchMessage         int32 = 320
	ReqQueryDataVersion         int32 = 322
	ReqSendReplyMessage         int32 = 324
	ReqSendReplyMessageV2       int32 = 325
	ReqPushReplyMessageToClient int32 = 326
	ReqAddWritePermOfBroker     int32 = 327
	ReqDeleteExpiredCommitLog   int32 = 329
	ReqGetTopicConfig           int32 = 351
	ReqLitePullMessage          int32 = 361
	ReqBrokerHeartbeat          int32 = 904

	// Codes brokerlab serves no processor for but checks (the ACL's
	// admin-only set): ACL administration, static topics, topic cleaning and
	// subscription-group lists.
	ReqUpdateAndCreateACLConfig             int32 = 50
	ReqDeleteACLConfig                      int32 = 51
	ReqGetBrokerClusterACLInfo              int32 = 52
	ReqUpdateGlobalWhiteAddrsConfig         int32 = 53
	ReqUpdateAndCreateSubscriptionGroupList int32 = 225
	ReqCleanUnusedTopic                     int32 = 316
	ReqUpdateAndCreateStaticTopic           int32 = 513
)

// Response codes (ResponseCode.java ⊃ RemotingSysResponseCode.java).
const (
	RespSuccess                    int32 = 0
	RespSystemError                int32 = 1
	RespSystemBusy                 int32 = 2
	RespRequestCodeNotSupported    int32 = 3
	RespTransactionFailed          int32 = 4
	RespFlushDiskTimeout           int32 = 10
	RespSlaveNotAvailable          int32 = 11
	RespFlushSlaveTimeout          int32 = 12
	RespMessageIllegal             int32 = 13
	RespServiceNotAvailable        int32 = 14
	RespVersionNotSupported        int32 = 15
	RespNoPermission               int32 = 16
	RespTopicNotExist              int32 = 17
	RespTopicExistAlready          int32 = 18
	RespPullNotFound               int32 = 19
	RespPullRetryImmediately       int32 = 20
	RespPullOffsetMoved            int32 = 21
	RespQueryNotFound              int32 = 22
	RespSubscriptionParseFailed    int32 = 23
	RespSubscriptionNotExist       int32 = 24
	RespSubscriptionNotLatest      int32 = 25
	RespSubscriptionGroupNotExist  int32 = 26
	RespFilterDataNotExist         int32 = 27
	RespFilterDataNotLatest        int32 = 28
	RespInvalidParameter           int32 = 29
	RespTransactionShouldCommit    int32 = 200
	RespTransactionShouldRollback  int32 = 201
	RespTransactionStateUnknow     int32 = 202
	RespTransactionStateGroupWrong int32 = 203
	RespConsumerNotOnline          int32 = 206
	RespConsumeMsgTimeout          int32 = 207
	RespNoMessage                  int32 = 208
	RespPollingFull                int32 = 209
	RespPollingTimeout             int32 = 210
	RespFlowControl                int32 = 215
	RespNotLeaderForQueue          int32 = 501
	RespGoAway                     int32 = 1500
)

// Versions (MQVersion.Version ordinals) that change behaviour on the wire.
const (
	VersionV3_0_11  int32 = 37  // name server reads REGISTER_BROKER bodies as RegisterBrokerBody from here on
	VersionV4_9_4   int32 = 401 // name server answers GET_ROUTEINFO_BY_TOPIC with standard JSON from here on
	VersionV5_3_3   int32 = 479
	VersionGoClient int32 = 317 // what rocketmq-client-go/v2 sends on every request
)

// PULL_MESSAGE sysFlag bits (PullSysFlag).
const (
	PullFlagCommitOffset int32 = 0x1  // commitOffset piggy-backs a consumer offset commit
	PullFlagSuspend      int32 = 0x2  // the broker may hold (long-poll) the request
	PullFlagSubscription int32 = 0x4  // the subscription field is meaningful
	PullFlagClassFilter  int32 = 0x8  // class filter mode
	PullFlagLitePull     int32 = 0x10 // lite pull consumer
)

var requestCodeNames = map[int32]string{
	ReqSendMessage: "SEND_MESSAGE", ReqPullMessage: "PULL_MESSAGE", ReqQueryMessage: "QUERY_MESSAGE",
	ReqQueryBrokerOffset: "QUERY_BROKER_OFFSET", ReqQueryConsumerOffset: "QUERY_CONSUMER_OFFSET",
	ReqUpdateConsumerOffset: "UPDATE_CONSUMER_OFFSET", ReqUpdateAndCreateTopic: "UPDATE_AND_CREATE_TOPIC",
	ReqUpdateAndCreateTopicList: "UPDATE_AND_CREATE_TOPIC_LIST", ReqGetAllTopicConfig: "GET_ALL_TOPIC_CONFIG",
	ReqGetTopicConfigList: "GET_TOPIC_CONFIG_LIST", ReqUpdateBrokerConfig: "UPDATE_BROKER_CONFIG",
	ReqGetBrokerConfig: "GET_BROKER_CONFIG", ReqTriggerDeleteFiles: "TRIGGER_DELETE_FILES",
	ReqGetBrokerRuntimeInfo: "GET_BROKER_RUNTIME_INFO", ReqSearchOffsetByTimestamp: "SEARCH_OFFSET_BY_TIMESTAMP",
	ReqGetMaxOffset: "GET_MAX_OFFSET", ReqGetMinOffset: "GET_MIN_OFFSET",
	ReqGetEarliestMsgStoretime: "GET_EARLIEST_MSG_STORETIME", ReqViewMessageByID: "VIEW_MESSAGE_BY_ID",
	ReqHeartBeat: "HEART_BEAT", ReqUnregisterClient: "UNREGISTER_CLIENT",
	ReqConsumerSendMsgBack: "CONSUMER_SEND_MSG_BACK", ReqEndTransaction: "END_TRANSACTION",
	ReqGetConsumerListByGroup: "GET_CONSUMER_LIST_BY_GROUP", ReqCheckTransactionState: "CHECK_TRANSACTION_STATE",
	ReqNotifyConsumerIDsChanged: "NOTIFY_CONSUMER_IDS_CHANGED", ReqLockBatchMQ: "LOCK_BATCH_MQ",
	ReqUnlockBatchMQ: "UNLOCK_BATCH_MQ", ReqGetAllConsumerOffset: "GET_ALL_CONSUMER_OFFSET",
	ReqGetAllDelayOffset: "GET_ALL_DELAY_OFFSET", ReqPutKVConfig: "PUT_KV_CONFIG", ReqGetKVConfig: "GET_KV_CONFIG",
	ReqDeleteKVConfig: "DELETE_KV_CONFIG", ReqRegisterBroker: "REGISTER_BROKER",
	ReqUnregisterBroker: "UNREGISTER_BROKER", ReqGetRouteInfoByTopic: "GET_ROUTEINFO_BY_TOPIC",
	ReqGetBrokerClusterInfo:             "GET_BROKER_CLUSTER_INFO",
	ReqUpdateAndCreateSubscriptionGroup: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP",
	ReqGetAllSubscriptionGroupConfig:    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", ReqGetTopicStatsInfo: "GET_TOPIC_STATS_INFO",
	ReqWipeWritePermOfBroker:         "WIPE_WRITE_PERM_OF_BROKER",
	ReqGetAllTopicListFromNameserver: "GET_ALL_TOPIC_LIST_FROM_NAMESERVER", ReqGetConsumeStats: "GET_CONSUME_STATS",
	ReqDeleteTopicInBroker: "DELETE_TOPIC_IN_BROKER", ReqDeleteTopicInNamesrv: "DELETE_TOPIC_IN_NAMESRV",
	ReqRegisterTopicInNamesrv: "REGISTER_TOPIC_IN_NAMESRV", ReqResetConsumerClientOffset: "RESET_CONSUMER_CLIENT_OFFSET",
	ReqGetConsumerStatusFromClient: "GET_CONSUMER_STATUS_FROM_CLIENT", ReqGetTopicsByCluster: "GET_TOPICS_BY_CLUSTER",
	ReqCleanExpiredConsumeQueue: "CLEAN_EXPIRED_CONSUMEQUEUE", ReqGetConsumerRunningInfo: "GET_CONSUMER_RUNNING_INFO",
	ReqConsumeMessageDirectly: "CONSUME_MESSAGE_DIRECTLY", ReqSendMessageV2: "SEND_MESSAGE_V2",
	ReqSendBatchMessage: "SEND_BATCH_MESSAGE", ReqQueryDataVersion: "QUERY_DATA_VERSION",
	ReqSendReplyMessage: "SEND_REPLY_MESSAGE", ReqSendReplyMessageV2: "SEND_REPLY_MESSAGE_V2",
	ReqPushReplyMessageToClient: "PUSH_REPLY_MESSAGE_TO_CLIENT", ReqAddWritePermOfBroker: "ADD_WRITE_PERM_OF_BROKER",
	ReqDeleteExpiredCommitLog: "DELETE_EXPIRED_COMMITLOG", ReqGetTopicConfig: "GET_TOPIC_CONFIG",
	ReqLitePullMessage: "LITE_PULL_MESSAGE", ReqBrokerHeartbeat: "BROKER_HEARTBEAT",
	ReqUpdateAndCreateACLConfig: "UPDATE_AND_CREATE_ACL_CONFIG", ReqDeleteACLConfig: "DELETE_ACL_CONFIG",
	ReqGetBrokerClusterACLInfo: "GET_BROKER_CLUSTER_ACL_INFO", ReqUpdateGlobalWhiteAddrsConfig: "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG",
	ReqUpdateAndCreateSubscriptionGroupList: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST",
	ReqCleanUnusedTopic:                     "CLEAN_UNUSED_TOPIC", ReqUpdateAndCreateStaticTopic: "UPDATE_AND_CREATE_STATIC_TOPIC",
}

var responseCodeNames = map[int32]string{
	RespSuccess: "SUCCESS", RespSystemError: "SYSTEM_ERROR", RespSystemBusy: "SYSTEM_BUSY",
	RespRequestCodeNotSupported: "REQUEST_CODE_NOT_SUPPORTED", RespTransactionFailed: "TRANSACTION_FAILED",
	RespFlushDiskTimeout: "FLUSH_DISK_TIMEOUT", RespSlaveNotAvailable: "SLAVE_NOT_AVAILABLE",
	RespFlushSlaveTimeout: "FLUSH_SLAVE_TIMEOUT", RespMessageIllegal: "MESSAGE_ILLEGAL",
	RespServiceNotAvailable: "SERVICE_NOT_AVAILABLE", RespVersionNotSupported: "VERSION_NOT_SUPPORTED",
	RespNoPermission: "NO_PERMISSION", RespTopicNotExist: "TOPIC_NOT_EXIST",
	RespTopicExistAlready: "TOPIC_EXIST_ALREADY", RespPullNotFound: "PULL_NOT_FOUND",
	RespPullRetryImmediately: "PULL_RETRY_IMMEDIATELY", RespPullOffsetMoved: "PULL_OFFSET_MOVED",
	RespQueryNotFound: "QUERY_NOT_FOUND", RespSubscriptionParseFailed: "SUBSCRIPTION_PARSE_FAILED",
	RespSubscriptionNotExist: "SUBSCRIPTION_NOT_EXIST", RespSubscriptionNotLatest: "SUBSCRIPTION_NOT_LATEST",
	RespSubscriptionGroupNotExist: "SUBSCRIPTION_GROUP_NOT_EXIST", RespFilterDataNotExist: "FILTER_DATA_NOT_EXIST",
	RespFilterDataNotLatest: "FILTER_DATA_NOT_LATEST", RespInvalidParameter: "INVALID_PARAMETER",
	RespTransactionShouldCommit: "TRANSACTION_SHOULD_COMMIT", RespTransactionShouldRollback: "TRANSACTION_SHOULD_ROLLBACK",
	RespTransactionStateUnknow: "TRANSACTION_STATE_UNKNOW", RespTransactionStateGroupWrong: "TRANSACTION_STATE_GROUP_WRONG",
	RespConsumerNotOnline: "CONSUMER_NOT_ONLINE", RespConsumeMsgTimeout: "CONSUME_MSG_TIMEOUT",
	RespNoMessage: "NO_MESSAGE", RespPollingFull: "POLLING_FULL", RespPollingTimeout: "POLLING_TIMEOUT",
	RespFlowControl: "FLOW_CONTROL", RespNotLeaderForQueue: "NOT_LEADER_FOR_QUEUE", RespGoAway: "GO_AWAY",
}

// RequestCodeName returns the Java name of a request code, or its number.
func RequestCodeName(code int32) string {
	if n, ok := requestCodeNames[code]; ok {
		return n
	}
	return strconv.Itoa(int(code))
}

// ResponseCodeName returns the Java name of a response code, or its number.
func ResponseCodeName(code int32) string {
	if n, ok := responseCodeNames[code]; ok {
		return n
	}
	return strconv.Itoa(int(code))
}
