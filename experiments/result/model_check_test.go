package result

import (
	"math"
	"testing"
)

// A synthetic residency with a known answer: the model is 10 % above the
// measured resident MiB and 20 % below its dirty MiB in the second half,
// and dirty pages reach the throttle level 4 s later than modelled (a
// 5 s writeback period: 0.8 periods).
func TestCheckModelKnownAnswer(t *testing.T) {
	r := &Residency{Model: &ResidencyModel{Throttle: true, ThrottleAt: 4,
		Params: map[string]float64{"period_s": 5, "throttle_level": 80 << 20}}}
	for i := 0; i <= 20; i++ {
		ts := float64(i)
		r.T = append(r.T, ts)
		res, dirty := min(100, 10*ts), min(100, 10*ts) // measured: 80 MiB dirty at 8 s, then 100
		r.ResidentMiB = append(r.ResidentMiB, res)
		r.DirtyMiB = append(r.DirtyMiB, dirty)
	}
	// The model at half-second points: resident 1.1×, dirty 0.8× of the
	// measurement's steady 100 MiB.
	for i := 0; i <= 40; i++ {
		ts := float64(i) / 2
		r.Model.T = append(r.Model.T, ts)
		r.Model.ResidentMiB = append(r.Model.ResidentMiB, min(110, 11*ts))
		r.Model.DirtyMiB = append(r.Model.DirtyMiB, min(80, 8*ts))
	}
	c, ok := r.CheckModel()
	if !ok {
		t.Fatal("no check")
	}
	if c.From != 10 || math.Abs(c.ResidentRatio-1.1) > 1e-9 || math.Abs(c.DirtyRatio-0.8) > 1e-9 {
		t.Fatalf("check %+v", c)
	}
	if !c.MeasuredThrottle || c.MeasuredThrottleAt != 8 || math.Abs(c.ThrottleErrPe-0.8) > 1e-9 {
		t.Fatalf("throttle %+v", c)
	}
	// Without dirty samples (mincore's fractions only): resident only.
	r.DirtyMiB = nil
	c, ok = r.CheckModel()
	if !ok || c.HasDirty || !math.IsNaN(c.DirtyRatio) || !math.IsNaN(c.ThrottleErrPe) || c.MeasuredThrottle {
		t.Fatalf("no-dirty check %+v", c)
	}
	// No model, or no measured MiB: no check.
	if _, ok := (&Residency{T: r.T, ResidentMiB: r.ResidentMiB}).CheckModel(); ok {
		t.Fatal("check without a model")
	}
	if _, ok := (&Residency{T: r.T, Model: r.Model}).CheckModel(); ok {
		t.Fatal("check without measured MiB")
	}
}
