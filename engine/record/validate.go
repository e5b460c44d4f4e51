package record

import (
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Broker limits (rocketmq-store.md §8.2).
const (
	// DefaultMaxBodySize is maxMessageSize's default, 4 MiB.
	DefaultMaxBodySize = 4 << 20
	// TopicMaxLen is TopicValidator.TOPIC_MAX_LENGTH.
	TopicMaxLen = 127
	// RetryOrDLQTopicMaxLen is the limit for %RETRY% and %DLQ% topics.
	RetryOrDLQTopicMaxLen = 255

	// RetryTopicPrefix and DLQTopicPrefix are protocol's, named here for
	// the validators below.
	RetryTopicPrefix = protocol.RetryTopicPrefix
	DLQTopicPrefix   = protocol.DLQTopicPrefix
)

// notSendableTopics are the system topics a client may not send to.
var notSendableTopics = [...]string{
	protocol.ScheduleTopic,
	protocol.TransHalfTopic,
	protocol.TransOpHalfTopic,
	protocol.TransCheckMaxTimeTopic,
	protocol.SelfTestTopic,
	protocol.OffsetMovedEvent,
}

// ValidateTopic applies TopicValidator.validateTopic: non-blank, only
// characters of ^[%|a-zA-Z0-9_-]+$ (ErrTopicInvalid), at most 127
// characters, or 255 for topics starting with %RETRY% or %DLQ%
// (ErrTopicTooLong).
func ValidateTopic(topic string) error {
	if topic == "" {
		return fmt.Errorf("%w: blank", ErrTopicInvalid)
	}
	for i := 0; i < len(topic); i++ {
		if !topicChar(topic[i]) {
			return fmt.Errorf("%w: %q", ErrTopicInvalid, topic)
		}
	}
	limit := TopicMaxLen
	if strings.HasPrefix(topic, RetryTopicPrefix) || strings.HasPrefix(topic, DLQTopicPrefix) {
		limit = RetryOrDLQTopicMaxLen
	}
	if len(topic) > limit {
		return fmt.Errorf("%w: %d characters, limit %d", ErrTopicTooLong, len(topic), limit)
	}
	return nil
}

func topicChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '%' || c == '|' || c == '_' || c == '-'
}

// TopicSendable reports whether clients may send to topic (it is not one of
// the system topics SCHEDULE_TOPIC_XXXX, RMQ_SYS_TRANS_HALF_TOPIC,
// RMQ_SYS_TRANS_OP_HALF_TOPIC, TRANS_CHECK_MAX_TIME_TOPIC, SELF_TEST_TOPIC,
// OFFSET_MOVED_EVENT).
func TopicSendable(topic string) bool {
	for _, t := range notSendableTopics {
		if topic == t {
			return false
		}
	}
	return true
}

// Validate applies the broker's checks on a producer's single message (a
// SEND_MESSAGE or SEND_MESSAGE_V2 request), in the order the broker makes
// them, and returns nil or an error wrapping one sentinel (test with
// errors.Is; the sentinel's comment names the response code):
//
//	ValidateTopic                                ErrTopicInvalid, ErrTopicTooLong
//	system topic                                 ErrTopicNotSendable
//	over 127 bytes, not %RETRY% (store hook)     ErrTopicTooLongToStore
//	empty body (store hook)                      ErrBodyEmpty
//	body over maxBodySize                        ErrBodyTooLarge
//	properties over 32767 bytes                  ErrPropertiesTooLong
//
// The empty-body rule is Java's store hook refusing a null body
// (HookUtils.checkBeforePutMessage), which is what a request without body
// bytes carries: RemotingCommand.decode leaves the body null when the frame
// has none. It applies to the request's body, so ValidateBatchItem (one
// message of a batch, whose request body is the whole batch) and
// ValidateStored (any record the store writes) leave it out.
//
// The broker's last check, record over maxBodySize + 64 KiB, cannot fail
// once the others pass (topic and properties add less than 33 KiB), so
// Validate leaves it out.
//
// maxBodySize is maxMessageSize; <= 0 means DefaultMaxBodySize. Validate
// checks what the producer sent: the broker's own rewrites (delay-level
// topics, added properties) are not re-validated, and hosts are not looked
// at. The queue id is checked against the topic's config by the caller.
func Validate(m *Message, maxBodySize int) error {
	return validate(m, maxBodySize, true, false)
}

// ValidateBatchItem is Validate for one message of a SEND_BATCH_MESSAGE
// request: an empty body passes, and is stored with BODYLENGTH 0 and
// BODYCRC 0, as Java's broker stores it (its store hook sees the batch's
// body, not the items', and its batch encoder writes each item's body as it
// comes).
func ValidateBatchItem(m *Message, maxBodySize int) error {
	return validate(m, maxBodySize, true, true)
}

// ValidateStored is Validate without the producer-only rules that system
// topics (SCHEDULE_TOPIC_XXXX, …) may not be sent to and that a body may
// not be empty: what the store checks for every record it writes, the
// broker's own rewrites included. An empty body is a valid record
// (BODYLENGTH 0, BODYCRC 0): a batch item's, or a re-put one's (a retry,
// a delayed or timer message coming due, a committed transaction).
func ValidateStored(m *Message, maxBodySize int) error {
	return validate(m, maxBodySize, false, true)
}

// validate is Validate, with the system-topic rule when producer is set and
// the empty-body rule unless emptyOK is.
func validate(m *Message, maxBodySize int, producer, emptyOK bool) error {
	if err := ValidateTopic(m.Topic); err != nil {
		return err
	}
	if producer && !TopicSendable(m.Topic) {
		return fmt.Errorf("%w: %s", ErrTopicNotSendable, m.Topic)
	}
	if len(m.Topic) > MaxTopicLenV1 && !strings.HasPrefix(m.Topic, RetryTopicPrefix) {
		return fmt.Errorf("%w: %d bytes", ErrTopicTooLongToStore, len(m.Topic))
	}
	if len(m.Body) == 0 && !emptyOK {
		return ErrBodyEmpty
	}
	if maxBodySize <= 0 {
		maxBodySize = DefaultMaxBodySize
	}
	if len(m.Body) > maxBodySize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrBodyTooLarge, len(m.Body), maxBodySize)
	}
	if len(m.Properties) > MaxPropertiesLen {
		return fmt.Errorf("%w: %d bytes", ErrPropertiesTooLong, len(m.Properties))
	}
	return nil
}
