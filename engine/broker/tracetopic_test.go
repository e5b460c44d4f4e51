package broker_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
)

// TestTraceTopicCreatedAtStart: traceTopicEnable creates the trace topic,
// with one queue, before the broker registers; without it there is none.
func TestTraceTopicCreatedAtStart(t *testing.T) {
	e := startEnv(t, func(c *broker.Config) { c.TraceTopic = "RMQ_SYS_TRACE_TOPIC" })
	tc, ok := e.b.Topics().Get("RMQ_SYS_TRACE_TOPIC")
	if !ok || tc.ReadQueueNums != 1 || tc.WriteQueueNums != 1 {
		t.Fatalf("trace topic = %+v, %v", tc, ok)
	}
	off := startEnv(t, nil)
	if _, ok := off.b.Topics().Get("RMQ_SYS_TRACE_TOPIC"); ok {
		t.Fatal("trace topic created without traceTopicEnable")
	}
}
