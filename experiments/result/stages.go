package result

import "strings"

// StageMetricPrefix starts the Quantiles keys of the per-stage latency
// breakdown ("stage.lock_wait"): a cell run with engine.stages records one
// metric per stage of its sends — the broker's stages over loopback, the
// store's in process (see engine/broker.Stage).
const StageMetricPrefix = "stage."

// Stages are the breakdown's stage names in request order; StageTotal is
// the whole (not a part). Over loopback a send's stages partition
// frame read → reply written; in process only process, lock_wait,
// lock_hold and flush_wait are recorded.
var Stages = []string{"frame_read", "decode", "queue_wait", "process", "lock_wait", "lock_hold", "flush_wait", "reply_write"}

// StageTotal is the whole of a send's recorded stages.
const StageTotal = "total"

// StageMetric is the Quantiles key of a stage.
func StageMetric(stage string) string { return StageMetricPrefix + stage }

// IsStageMetric reports whether a Quantiles key belongs to the breakdown.
func IsStageMetric(metric string) bool { return strings.HasPrefix(metric, StageMetricPrefix) }

// HasStages reports whether c recorded a stage breakdown.
func (c *Cell) HasStages() bool {
	for m := range c.Quantiles {
		if IsStageMetric(m) {
			return true
		}
	}
	return false
}
