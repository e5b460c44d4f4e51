package result

// ResidencyModel is a predicted page-cache timeline (workloads/pagemodel):
// the store's resident and dirty bytes at each T (seconds from the start
// of the measured phase, like Residency.T), and the predicted onsets of
// background writeback and of append throttling (seconds on the same axis,
// meaningful only when Background or Throttle is true: the onset happens
// within the horizon). Params records the model's inputs.
type ResidencyModel struct {
	T            []float64          `json:"t"`
	ResidentMiB  []float64          `json:"resident_mib"`
	DirtyMiB     []float64          `json:"dirty_mib"`
	BackgroundAt float64            `json:"background_at_s"`
	ThrottleAt   float64            `json:"throttle_at_s"`
	Background   bool               `json:"background"`
	Throttle     bool               `json:"throttle"`
	Params       map[string]float64 `json:"params,omitempty"`
	Notes        []string           `json:"notes,omitempty"`
}
