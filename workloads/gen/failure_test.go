package gen

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/workloads/fakedriver"
)

// A failed send is never dropped: it is counted by code and enters the
// latency record (its failed counterpart) at no less than the send timeout,
// in closed and in open loop; throughput stays the acknowledged sends'.
func TestFailedSendsEnterTheLatencyRecord(t *testing.T) {
	t.Parallel()
	busy := fmt.Errorf("send: %w", &remoting.ResponseError{Code: protocol.RespSystemBusy, Remark: "busy"})
	for _, mode := range []string{"closed", "open"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			d := fakedriver.New(fakedriver.Config{})
			d.SetError(busy)
			var p Producer
			metric := MetricService
			if mode == "open" {
				cfg := DefaultOpenLoopConfig()
				cfg.Rate, cfg.Count, cfg.SendTimeout = 5000, 50, time.Second
				p = openLoop(t, cfg, d)
				metric = MetricResponse
			} else {
				cfg := DefaultClosedLoopConfig()
				cfg.Count, cfg.SendTimeout = 50, time.Second
				cp, err := NewClosedLoop(cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				p = cp
			}
			res, _ := run(t, context.Background(), DefaultRunConfig(), []Producer{p}, nil)
			sum := res.Summary
			name := protocol.ResponseCodeName(protocol.RespSystemBusy)
			if n := sum.Counters[CounterSendFailedPrefix+name]; n != 50 {
				t.Fatalf("failed by code %v: want 50 %s", sum.Counters, name)
			}
			f := sum.Metrics[FailedMetric(metric)]
			if f.Count != 50 || f.P50 < int64(time.Second)*99/100 {
				t.Fatalf("%s: %+v, want 50 sends at >= the 1 s timeout", FailedMetric(metric), f)
			}
			if n := sum.Metrics[MetricService].Count; n != 0 {
				t.Fatalf("%d acknowledged sends, want none", n)
			}
		})
	}
}

func TestFailureCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("x: %w", &remoting.ResponseError{Code: protocol.RespFlushDiskTimeout}), protocol.ResponseCodeName(protocol.RespFlushDiskTimeout)},
		{fmt.Errorf("put: %w", flush.ErrTimeout), "FLUSH_DISK_TIMEOUT"},
		{context.DeadlineExceeded, "TIMEOUT"},
		{errors.New("boom"), "OTHER"},
	} {
		if got := FailureCode(tc.err); got != tc.want {
			t.Errorf("FailureCode(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
