package experiments

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/experiments/result"
)

// Clients of a loopback cell (engine.client).
const (
	ClientBrokerlab = "brokerlab" // brokerlab's own remoting client (workloads/netdriver)
	ClientRocketMQ  = "rocketmq"  // the official Apache RocketMQ Go client (workloads/rmqdriver)
	ClientRocketMQ5 = "rocketmq5" // the official RocketMQ 5 Go client over gRPC (workloads/rmq5driver)
)

// stageSource is a system that records the per-stage latency breakdown
// (engine.stages): the loopback broker's (remoting Timings and the store's
// stages of every send), or the in-process store's (each put's stages).
type stageSource interface {
	StageRecorder() *broker.StageRecorder // nil when the cell does not record stages
}

// stageRecorderOf returns sys's stage recorder, or nil.
func stageRecorderOf(sys system) *broker.StageRecorder {
	if s, ok := sys.(stageSource); ok {
		return s.StageRecorder()
	}
	return nil
}

// recordStages adds the breakdown to the cell: one stage.<name> metric per
// stage (whole-run quantiles in ns) and the
// count of sends answered without running (stage_incomplete).
func recordStages(rc *result.Cell, rec *broker.StageRecorder) {
	if rec == nil {
		return
	}
	snap := rec.Snapshot()
	if rc.Quantiles == nil {
		rc.Quantiles = map[string]result.Quantiles{}
	}
	// Quantiles only: a spectrum would give every stage its own
	// latency-by-percentile figure; the stages figure reads the quantiles.
	for name, h := range snap.Hist {
		rc.Quantiles[result.StageMetric(name)] = stageQuantiles(h)
	}
	rc.Extra = mergeExtra(rc.Extra, map[string]float64{"stage_incomplete": float64(snap.Incomplete)})
}

func stageQuantiles(h *hdr.Histogram) result.Quantiles {
	p := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9, 99.99})
	return result.Quantiles{P50: float64(p[0]), P90: float64(p[1]), P99: float64(p[2]), P999: float64(p[3]),
		P9999: float64(p[4]), Max: float64(h.Max()), Mean: h.Mean(), Count: h.TotalCount()}
}

// timedPut records an in-process put's stages when rec is set.
func timedPut(rec *broker.StageRecorder, start time.Time, lockWait, lockHold, flushWait time.Duration) {
	if rec != nil {
		rec.RecordPut(start, lockWait, lockHold, flushWait, time.Since(start))
	}
}
