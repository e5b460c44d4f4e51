package protocol

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsOnlyStd keeps the package a leaf: transport, store and server
// packages import it, never the other way round.
func TestImportsOnlyStd(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
			t.Errorf("engine/protocol imports %s; it may import only the standard library", imp)
		}
	}
}

func TestSystemTopicNames(t *testing.T) {
	if got := RetryTopic("g"); got != "%RETRY%g" {
		t.Errorf("RetryTopic = %q", got)
	}
	if got := DLQTopic("g"); got != "%DLQ%g" {
		t.Errorf("DLQTopic = %q", got)
	}
	if got := ReplyTopic("C"); got != "C_REPLY_TOPIC" {
		t.Errorf("ReplyTopic = %q", got)
	}
}

func TestMessageQueueCompare(t *testing.T) {
	a := MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}
	for _, c := range []struct {
		b    MessageQueue
		want int
	}{
		{MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}, 0},
		{MessageQueue{Topic: "U", BrokerName: "a", QueueID: 0}, -1},
		{MessageQueue{Topic: "T", BrokerName: "c", QueueID: 0}, -1},
		{MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}, 1},
	} {
		if got := a.Compare(c.b); got != c.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", a, c.b, got, c.want)
		}
	}
}
