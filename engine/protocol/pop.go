package protocol

import "strconv"

// POP consumption request codes (RequestCode.java, RocketMQ 5).
const (
	ReqPopMessage                 int32 = 200050
	ReqAckMessage                 int32 = 200051
	ReqPeekMessage                int32 = 200052
	ReqChangeMessageInvisibleTime int32 = 200053
	ReqNotification               int32 = 200054
	ReqPollingInfo                int32 = 200055
	ReqBatchAckMessage            int32 = 200151
)

// POP system names (PopAckConstants, MixAll, KeyBuilder).
const (
	// ReviveTopicPrefix is followed by the cluster name in the revive topic
	// (rmq_sys_REVIVE_LOG_<cluster>).
	ReviveTopicPrefix = "rmq_sys_REVIVE_LOG_"
	// ReviveGroup keeps the revive service's progress on the revive topic.
	ReviveGroup = "CID_RMQ_SYS_REVIVE_GROUP"
	// PopOrderReviveQueue is the revive queue id of a FIFO (order) pop's
	// receipt handle (KeyBuilder.POP_ORDER_REVIVE_QUEUE).
	PopOrderReviveQueue = 999
	// PropertyPopCK is the receipt handle (ExtraInfo) a POP_MESSAGE
	// response adds to each message (MessageConst.PROPERTY_POP_CK).
	PropertyPopCK = "POP_CK"
	// PropertyFirstPopTime is the time of a message's first pop
	// (MessageConst.PROPERTY_FIRST_POP_TIME), kept on its retry copies.
	PropertyFirstPopTime = "1ST_POP_TIME"
)

// Consume init modes of POP_MESSAGE's initMode (ConsumeInitMode).
const (
	ConsumeInitMin int32 = 0
	ConsumeInitMax int32 = 1
)

func init() {
	for code, name := range map[int32]string{
		ReqPopMessage: "POP_MESSAGE", ReqAckMessage: "ACK_MESSAGE", ReqPeekMessage: "PEEK_MESSAGE",
		ReqChangeMessageInvisibleTime: "CHANGE_MESSAGE_INVISIBLETIME", ReqNotification: "NOTIFICATION",
		ReqPollingInfo: "POLLING_INFO", ReqBatchAckMessage: "BATCH_ACK_MESSAGE",
	} {
		requestCodeNames[code] = name
	}
}

// PopMessageRequestHeader is POP_MESSAGE's header
// (PopMessageRequestHeader.java). InvisibleTime, PollTime and BornTime
// are milliseconds; QueueID -1 pops any readable queue.
type PopMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	MaxMsgNums    int32
	InvisibleTime int64
	PollTime      int64
	BornTime      int64
	InitMode      int32
	ExpType       string // "TAG" or "SQL92"
	Exp           string
	Order         bool
	AttemptID     string
}

// Fields is the header's extFields.
func (h PopMessageRequestHeader) Fields() map[string]string {
	f := map[string]string{
		"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": itoa32(h.QueueID),
		"maxMsgNums": itoa32(h.MaxMsgNums), "invisibleTime": itoa64(h.InvisibleTime), "pollTime": itoa64(h.PollTime),
		"bornTime": itoa64(h.BornTime), "initMode": itoa32(h.InitMode), "order": strconv.FormatBool(h.Order),
	}
	setOpt(f, "expType", h.ExpType)
	setOpt(f, "exp", h.Exp)
	setOpt(f, "attemptId", h.AttemptID)
	return f
}

// PopMessageResponseHeader is POP_MESSAGE's response header
// (PopMessageResponseHeader.java): the pop's time and invisible time, the
// revive queue of its checkpoints, the messages left, and per queue read
// ("<retry> <queueId> <value>" joined by ";", retry "0" for the topic,
// "1" for its retry topic) the start offset, the message offsets
// (comma-separated) and, for FIFO pops, the delivery counts.
type PopMessageResponseHeader struct {
	PopTime         int64
	InvisibleTime   int64
	ReviveQid       int32
	RestNum         int64
	StartOffsetInfo string
	MsgOffsetInfo   string
	OrderCountInfo  string
}

// Fields is the header's extFields.
func (h PopMessageResponseHeader) Fields() map[string]string {
	f := map[string]string{"popTime": itoa64(h.PopTime), "invisibleTime": itoa64(h.InvisibleTime),
		"reviveQid": itoa32(h.ReviveQid), "restNum": itoa64(h.RestNum)}
	setOpt(f, "startOffsetInfo", h.StartOffsetInfo)
	setOpt(f, "msgOffsetInfo", h.MsgOffsetInfo)
	setOpt(f, "orderCountInfo", h.OrderCountInfo)
	return f
}

// AckMessageRequestHeader is ACK_MESSAGE's header
// (AckMessageRequestHeader.java): ExtraInfo is the message's receipt
// handle (its POP_CK property), Offset its queue offset.
type AckMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	ExtraInfo     string
	Offset        int64
}

// Fields is the header's extFields.
func (h AckMessageRequestHeader) Fields() map[string]string {
	return map[string]string{"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": itoa32(h.QueueID),
		"extraInfo": h.ExtraInfo, "offset": itoa64(h.Offset)}
}

// ChangeInvisibleTimeRequestHeader is CHANGE_MESSAGE_INVISIBLETIME's
// header (ChangeInvisibleTimeRequestHeader.java); InvisibleTime in ms,
// counted from now.
type ChangeInvisibleTimeRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	ExtraInfo     string
	Offset        int64
	InvisibleTime int64
}

// Fields is the header's extFields.
func (h ChangeInvisibleTimeRequestHeader) Fields() map[string]string {
	return map[string]string{"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": itoa32(h.QueueID),
		"extraInfo": h.ExtraInfo, "offset": itoa64(h.Offset), "invisibleTime": itoa64(h.InvisibleTime)}
}

// ChangeInvisibleTimeResponseHeader is its response header: the new
// handle is built from these (ExtraInfoUtil.buildExtraInfo).
type ChangeInvisibleTimeResponseHeader struct {
	PopTime       int64
	InvisibleTime int64
	ReviveQid     int32
}

// Fields is the header's extFields.
func (h ChangeInvisibleTimeResponseHeader) Fields() map[string]string {
	return map[string]string{"popTime": itoa64(h.PopTime), "invisibleTime": itoa64(h.InvisibleTime),
		"reviveQid": itoa32(h.ReviveQid)}
}

// PeekMessageRequestHeader is PEEK_MESSAGE's header
// (PeekMessageRequestHeader.java).
type PeekMessageRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	MaxMsgNums    int32
}

// Fields is the header's extFields.
func (h PeekMessageRequestHeader) Fields() map[string]string {
	return map[string]string{"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": itoa32(h.QueueID),
		"maxMsgNums": itoa32(h.MaxMsgNums)}
}

// NotificationRequestHeader is NOTIFICATION's header
// (NotificationRequestHeader.java); its response header has hasMsg and
// pollingFull (booleans).
type NotificationRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	PollTime      int64
	BornTime      int64
	Order         bool
	AttemptID     string
}

// Fields is the header's extFields.
func (h NotificationRequestHeader) Fields() map[string]string {
	f := map[string]string{"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": itoa32(h.QueueID),
		"pollTime": itoa64(h.PollTime), "bornTime": itoa64(h.BornTime), "order": strconv.FormatBool(h.Order)}
	setOpt(f, "attemptId", h.AttemptID)
	return f
}

// PollingInfoRequestHeader is POLLING_INFO's header
// (PollingInfoRequestHeader.java); its response header has pollingNum.
type PollingInfoRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
}

// Fields is the header's extFields.
func (h PollingInfoRequestHeader) Fields() map[string]string {
	return map[string]string{"consumerGroup": h.ConsumerGroup, "topic": h.Topic, "queueId": itoa32(h.QueueID)}
}

// BatchAck is one entry of BATCH_ACK_MESSAGE's body (BatchAck.java, JSON
// keys as fastjson writes them): the acked messages of one pop of one
// queue, by their offsets' bits relative to StartOffset.
type BatchAck struct {
	ConsumerGroup string `json:"c"`
	Topic         string `json:"t"`
	Retry         string `json:"r"` // "1": the group's retry topic of Topic
	StartOffset   int64  `json:"so"`
	QueueID       int32  `json:"q"`
	ReviveQueueID int32  `json:"rq"`
	PopTime       int64  `json:"pt"`
	InvisibleTime int64  `json:"it"`
	// BitSet holds the acked offsets' bits (offset - StartOffset), as
	// BitSetSerializerDeserializer writes a java.util.BitSet: its
	// toByteArray (bit i in byte i/8, bit i%8), base64 in JSON.
	BitSet []byte `json:"b"`
}

// BatchAckMessageRequestBody is BATCH_ACK_MESSAGE's body
// (BatchAckMessageRequestBody.java).
type BatchAckMessageRequestBody struct {
	BrokerName string     `json:"brokerName"`
	Acks       []BatchAck `json:"acks"`
}

func itoa32(n int32) string { return strconv.FormatInt(int64(n), 10) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func setOpt(f map[string]string, k, v string) {
	if v != "" {
		f[k] = v
	}
}
