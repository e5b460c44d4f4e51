package experiments

import (
	"fmt"
	"math"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/pagemodel"
	"github.com/brokerlab/brokerlab/workloads/probe"
)

// ModelInput is the page-cache model's input for one cell of e: the
// store's layout, path, flush policy, budget, retention and page drops,
// the kernel settings k and the append rate appendBps (bytes/s), over the
// cell's warm-up and measured time at its interval.
func ModelInput(e Experiment, appendBps float64, k pagemodel.Kernel) pagemodel.Input {
	in := pagemodel.Input{
		AppendBps: appendBps, SegmentSize: int64(e.Engine.SegmentSize), Path: e.Engine.Path, Flush: e.Engine.Flush,
		FlushInterval: e.Engine.FlushInterval.D(), Budget: int64(e.Engine.Budget), Retain: int64(e.Engine.Retain),
		Kernel: k, Horizon: e.Warmup.D() + e.Duration.D(), Step: e.Interval.D(),
	}
	if e.Engine.DontNeed {
		in.DropInterval = e.Interval.D()
	}
	return in
}

// attachPrediction stores the model's prediction in rc's residency beside
// the measurement: the model runs on the measured append rate (bytes the
// store accepted over the load's run time), so it checks the page-cache
// part of the model, not a throughput model. Times are shifted to the
// residency's (seconds from the measured phase's start). With a budget it
// also records the bytes written over the budget (written_over_budget). A
// cell without
// residency, store counters or readable kernel settings gets none.
func attachPrediction(rc *result.Cell, e Experiment, appended int64, loadStart, loadEnd, measureFrom time.Time) {
	run := loadEnd.Sub(loadStart).Seconds()
	if b := e.Engine.Budget; b > 0 && appended > 0 {
		rc.Extra = mergeExtra(rc.Extra, map[string]float64{"written_over_budget": float64(appended) / float64(b)})
	}
	if rc.Residency == nil || appended <= 0 || run <= 0 {
		return
	}
	k, err := pagemodel.ReadKernel("", "")
	if err != nil {
		return
	}
	p, err := pagemodel.Predict(ModelInput(e, float64(appended)/run, k))
	if err != nil {
		return
	}
	rc.Residency.Model = ResidencyModel(p, measureFrom.Sub(loadStart))
	if c, ok := rc.Residency.CheckModel(); ok {
		rc.Extra = mergeExtra(rc.Extra, modelCheckExtra(c))
	}
}

// modelCheckExtra is c's defined values as Extra entries.
func modelCheckExtra(c result.ModelCheck) map[string]float64 {
	out := map[string]float64{}
	for k, v := range map[string]float64{result.ExtraModelResident: c.ResidentRatio, result.ExtraModelDirty: c.DirtyRatio, result.ExtraModelThrottle: c.ThrottleErrPe} {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	if c.HasDirty && c.ModelThrottle != c.MeasuredThrottle {
		out[result.ExtraModelThrottleMismatch] = 1
	}
	return out
}

// ModelChecks are the model-versus-measurement lines of a run, one per
// probed cell and quantity, over its repetitions, in the RATIO format (the
// value is model/measured, or the throttle onset's error in writeback
// periods): issue 33's targets are 0.8–1.2 and ≤ 1. A quantity no
// repetition defines (no dirty pages to speak of, no throttling in model
// and measurement) has no line; a throttle onset that only one side
// reaches is a line of its own.
func ModelChecks(cells []result.Cell) []string {
	type key struct{ name, extra string }
	vals := map[key][]float64{}
	mismatch := map[string]int{}
	var order []string
	seen := map[string]bool{}
	for i := range cells {
		c := &cells[i]
		if c.Error != "" || c.SystemOrDefault() != result.SystemBrokerlab {
			continue
		}
		for _, k := range []string{result.ExtraModelResident, result.ExtraModelDirty, result.ExtraModelThrottle} {
			if v, ok := c.Extra[k]; ok {
				vals[key{c.Name, k}] = append(vals[key{c.Name, k}], v)
				if !seen[c.Name] {
					seen[c.Name] = true
					order = append(order, c.Name)
				}
			}
		}
		if c.Extra[result.ExtraModelThrottleMismatch] == 1 {
			mismatch[c.Name]++
		}
	}
	var lines []string
	for _, name := range order {
		for _, q := range []struct{ extra, label, what string }{
			{result.ExtraModelResident, "model_resident", "model / measured resident MiB, steady-state mean (second half of the measured phase); target 0.8–1.2"},
			{result.ExtraModelDirty, "model_dirty", "model / measured dirty MiB, steady-state mean (second half of the measured phase); target 0.8–1.2"},
			{result.ExtraModelThrottle, "model_throttle_onset", "|model − measured| time dirty pages reach the throttle level, in writeback periods; target ≤ 1"},
		} {
			vs := vals[key{name, q.extra}]
			if len(vs) == 0 {
				continue
			}
			st := result.StatOf(vs)
			lines = append(lines, fmt.Sprintf("RATIO %s/%s %s [%s–%s] n=%d\t# %s (median and min–max over repetitions)",
				q.label, name, Sig2(st.Median), Sig2(st.Min), Sig2(st.Max), st.N, q.what))
		}
		if n := mismatch[name]; n > 0 {
			lines = append(lines, fmt.Sprintf("RATIO model_throttle_onset/%s n/a\t# in %d repetition(s) only one of the model and the measurement reached the throttle level", name, n))
		}
	}
	return lines
}

// ResidencyModel turns a prediction into its result form, its times
// shifted by -offset (the time from the first append to the measured
// phase).
func ResidencyModel(p pagemodel.Prediction, offset time.Duration) *result.ResidencyModel {
	const mib = 1 << 20
	shift := func(t float64) float64 { return t - offset.Seconds() }
	m := &result.ResidencyModel{Notes: p.Notes, Params: map[string]float64{
		"append_bps": p.Input.AppendBps, "segment_size": float64(p.Input.SegmentSize), "budget": float64(p.Input.Budget),
		"dirtyable": float64(p.Dirtyable), "background": float64(p.Background), "hard": float64(p.Hard),
		"throttle_level": float64(p.ThrottleLevel), "resident_cap": float64(p.ResidentCap),
		"expire_s": p.Input.Kernel.Expire.Seconds(), "period_s": p.Input.Kernel.Period.Seconds(),
	}}
	if p.BackgroundAt >= 0 {
		m.Background, m.BackgroundAt = true, shift(p.BackgroundAt)
	}
	if p.ThrottleAt >= 0 {
		m.Throttle, m.ThrottleAt = true, shift(p.ThrottleAt)
	}
	for i, t := range p.T {
		m.T = append(m.T, shift(t))
		m.ResidentMiB = append(m.ResidentMiB, float64(p.Resident[i])/mib)
		m.DirtyMiB = append(m.DirtyMiB, float64(p.Dirty[i])/mib)
	}
	return m
}

// budgetPreflight says at a run's start whether the page-cache budget its
// cells ask for can be enforced here: it makes and removes one budget
// cgroup of the largest size and records the outcome in the manifest (a
// warning when it cannot: the cells then run without a budget, each marked
// budget_applied 0).
func budgetPreflight(cells []Cell, man *result.Manifest, pr *progress) {
	var most int64
	for _, c := range cells {
		most = max(most, int64(c.Exp.Engine.Budget))
	}
	if most <= 0 {
		return
	}
	b, err := probe.NewMemoryBudget(probe.DefaultBudgetConfig(most))
	if err != nil {
		msg := fmt.Sprintf("page-cache budget UNENFORCED: cells ask for a memory-cgroup budget (up to %d bytes) but none can be made here: %v", most, err)
		man.Warnings = append(man.Warnings, msg)
		pr.printf("brokerlab: %s\n", msg)
		return
	}
	b.Remove()
	msg := fmt.Sprintf("page-cache budget enforced by a cgroup %s memory cgroup per cell (limit read back %d bytes)", b.Version, b.Limit)
	man.Notes = append(man.Notes, msg)
	pr.printf("brokerlab: %s\n", msg)
}
