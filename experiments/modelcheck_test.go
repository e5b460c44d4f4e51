package experiments

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// The model-check lines summarise each cell's repetitions; a failed
// repetition and peers are left out; a throttle onset that only one side
// reaches gets its own line; ratioclaims-style parsing sees the numbers.
func TestModelChecksLines(t *testing.T) {
	cells := []result.Cell{
		{Name: "path=pwrite", Rep: 0, Extra: map[string]float64{result.ExtraModelResident: 1.1, result.ExtraModelDirty: 0.7}},
		{Name: "path=pwrite", Rep: 1, Extra: map[string]float64{result.ExtraModelResident: 0.9, result.ExtraModelDirty: 0.9, result.ExtraModelThrottle: 0.5}},
		{Name: "path=pwrite", Rep: 2, Error: "boom", Extra: map[string]float64{result.ExtraModelResident: 5}},
		{Name: "path=direct", Rep: 0, Extra: map[string]float64{result.ExtraModelResident: 1.0, result.ExtraModelThrottleMismatch: 1}},
		{Name: "fio", System: result.SystemFio, Extra: map[string]float64{result.ExtraModelResident: 3}},
	}
	got := strings.Join(ModelChecks(cells), "\n")
	for _, want := range []string{
		"RATIO model_resident/path=pwrite 1.0 [0.90–1.1] n=2\t#",
		"RATIO model_dirty/path=pwrite 0.80 [0.70–0.90] n=2\t#",
		"RATIO model_throttle_onset/path=pwrite 0.50 [0.50–0.50] n=1\t#",
		"RATIO model_resident/path=direct 1.0 [1.0–1.0] n=1\t#",
		"RATIO model_throttle_onset/path=direct n/a\t# in 1 repetition(s) only one",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "fio") || strings.Count(got, "RATIO ") != 5 {
		t.Errorf("lines:\n%s", got)
	}
}
