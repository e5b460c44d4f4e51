package record

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	const maxBody = 1000
	for _, tc := range []struct {
		name   string
		modify func(*Message)
		want   error // nil: valid
	}{
		{"worked example", func(*Message) {}, nil},
		{"all allowed characters", func(m *Message) { m.Topic = "azAZ09%|_-" }, nil},
		{"127-char topic", func(m *Message) { m.Topic = strings.Repeat("t", 127) }, nil},
		{"255-char retry topic", func(m *Message) { m.Topic = RetryTopicPrefix + strings.Repeat("g", 248) }, nil},
		{"body at limit", func(m *Message) { m.Body = make([]byte, maxBody) }, nil},
		{"properties at limit", func(m *Message) { m.Properties = strings.Repeat("p", MaxPropertiesLen) }, nil},
		{"hosts not looked at", func(m *Message) { m.BornHost, m.StoreHost = m.StoreHost, m.BornHost }, nil},

		{"blank topic", func(m *Message) { m.Topic = "" }, ErrTopicInvalid},
		{"space", func(m *Message) { m.Topic = "Topic Test" }, ErrTopicInvalid},
		{"whitespace only", func(m *Message) { m.Topic = "  " }, ErrTopicInvalid},
		{"dot", func(m *Message) { m.Topic = "a.b" }, ErrTopicInvalid},
		{"non-ASCII", func(m *Message) { m.Topic = "主题" }, ErrTopicInvalid},
		{"128-char topic", func(m *Message) { m.Topic = strings.Repeat("t", 128) }, ErrTopicTooLong},
		{"256-char retry topic", func(m *Message) { m.Topic = RetryTopicPrefix + strings.Repeat("g", 249) }, ErrTopicTooLong},
		{"256-char DLQ topic", func(m *Message) { m.Topic = DLQTopicPrefix + strings.Repeat("g", 251) }, ErrTopicTooLong},
		{"schedule topic", func(m *Message) { m.Topic = "SCHEDULE_TOPIC_XXXX" }, ErrTopicNotSendable},
		{"half topic", func(m *Message) { m.Topic = "RMQ_SYS_TRANS_HALF_TOPIC" }, ErrTopicNotSendable},
		{"offset moved topic", func(m *Message) { m.Topic = "OFFSET_MOVED_EVENT" }, ErrTopicNotSendable},
		{"200-char DLQ topic", func(m *Message) { m.Topic = DLQTopicPrefix + strings.Repeat("g", 195) }, ErrTopicTooLongToStore},
		{"nil body", func(m *Message) { m.Body = nil }, ErrBodyEmpty},
		{"empty body", func(m *Message) { m.Body = []byte{} }, ErrBodyEmpty},
		{"body over limit", func(m *Message) { m.Body = make([]byte, maxBody+1) }, ErrBodyTooLarge},
		{"properties over limit", func(m *Message) { m.Properties = strings.Repeat("p", MaxPropertiesLen+1) }, ErrPropertiesTooLong},
	} {
		m := workedExampleMessage()
		tc.modify(&m)
		err := Validate(&m, maxBody)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		} else if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		// A batch item is checked alike, except that its body may be
		// empty; the store checks neither that nor the system topics.
		itemWant, storedWant := tc.want, tc.want
		switch tc.want {
		case ErrBodyEmpty:
			itemWant, storedWant = nil, nil
		case ErrTopicNotSendable:
			storedWant = nil
		}
		if err := ValidateBatchItem(&m, maxBody); !errors.Is(err, itemWant) {
			t.Errorf("%s: ValidateBatchItem = %v, want %v", tc.name, err, itemWant)
		}
		if err := ValidateStored(&m, maxBody); !errors.Is(err, storedWant) {
			t.Errorf("%s: ValidateStored = %v, want %v", tc.name, err, storedWant)
		}
	}
}

// TestValidateEmptyBodyOrder: the empty-body rule comes after the topic
// checks and before the properties check, as in Java's store hook.
func TestValidateEmptyBodyOrder(t *testing.T) {
	m := workedExampleMessage()
	m.Body = nil
	m.Properties = strings.Repeat("p", MaxPropertiesLen+1)
	if err := Validate(&m, 0); !errors.Is(err, ErrBodyEmpty) {
		t.Fatalf("empty body with long properties: %v, want ErrBodyEmpty", err)
	}
	if err := ValidateBatchItem(&m, 0); !errors.Is(err, ErrPropertiesTooLong) {
		t.Fatalf("batch item: %v, want ErrPropertiesTooLong", err)
	}
	m.Topic = "bad topic"
	if err := Validate(&m, 0); !errors.Is(err, ErrTopicInvalid) {
		t.Fatalf("bad topic and empty body: %v, want ErrTopicInvalid", err)
	}
}

func TestValidateDefaultMaxBody(t *testing.T) {
	m := workedExampleMessage()
	m.Body = make([]byte, DefaultMaxBodySize)
	if err := Validate(&m, 0); err != nil {
		t.Fatalf("4 MiB body: %v", err)
	}
	m.Body = make([]byte, DefaultMaxBodySize+1)
	if err := Validate(&m, -1); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("4 MiB + 1 body: %v", err)
	}
	if !TopicSendable("TopicTest") || TopicSendable("SELF_TEST_TOPIC") {
		t.Fatal("TopicSendable")
	}
}
