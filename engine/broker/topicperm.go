package broker

import (
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// The topic predicates the processors apply (the table is meta.Topics).

func isRetryTopic(topic string) bool { return strings.HasPrefix(topic, protocol.RetryTopicPrefix) }

func isDLQTopic(topic string) bool { return strings.HasPrefix(topic, protocol.DLQTopicPrefix) }

func readable(tc protocol.TopicConfig) bool { return tc.Perm&protocol.PermRead != 0 }

func writable(tc protocol.TopicConfig) bool { return tc.Perm&protocol.PermWrite != 0 }
