package gen

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// DefaultSendTimeout is the time a failed send counts for in the latency
// record when it failed sooner: RocketMQ's producer sendMsgTimeout (3 s).
// A send that failed later (a 5 s FLUSH_DISK_TIMEOUT) counts for its own
// elapsed time.
const DefaultSendTimeout = 3 * time.Second

// Failed sends are never dropped from the latency record: each is recorded
// under the failed counterpart of its latency metric (MetricServiceFailed,
// and MetricResponseFailed in open loop) at max(elapsed, the send timeout),
// and counted under CounterSendFailedPrefix + its FailureCode. A reader
// merges a metric with its failed counterpart (FailedMetric) for the
// percentiles, while throughput stays the acknowledged sends'.
const (
	MetricServiceFailed  = "service_failed"
	MetricResponseFailed = "response_failed"
	// CounterSendFailedPrefix + FailureCode(err) counts failed sends by code.
	CounterSendFailedPrefix = "send_failed."
)

// FailedMetric names the metric a latency metric's failed sends are
// recorded under ("" when it has none).
func FailedMetric(metric string) string {
	switch metric {
	case MetricService:
		return MetricServiceFailed
	case MetricResponse:
		return MetricResponseFailed
	}
	return ""
}

// FailureCode classifies a send error: the broker's response code name
// (FLUSH_DISK_TIMEOUT, SYSTEM_BUSY, …), FLUSH_DISK_TIMEOUT for an in-process
// flush timeout, TIMEOUT for a deadline, else OTHER.
func FailureCode(err error) string {
	if re, ok := remoting.AsResponseError(err); ok {
		return protocol.ResponseCodeName(re.Code)
	}
	switch {
	case errors.Is(err, flush.ErrTimeout):
		return "FLUSH_DISK_TIMEOUT"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "TIMEOUT"
	}
	return "OTHER"
}

// failedLatency is what a failed send counts for.
func failedLatency(elapsed, timeout time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = DefaultSendTimeout
	}
	return max(elapsed, timeout)
}
