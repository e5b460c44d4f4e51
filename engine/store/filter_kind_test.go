package store

import "testing"

type unitsOnly bool

func (unitsOnly) MatchesConsumeQueue(int64) bool { return true }
func (unitsOnly) MatchesCommitLog([]byte) bool   { return true }
func (u unitsOnly) UnitsOnly() bool              { return bool(u) }

type recordFilter struct{}

func (recordFilter) MatchesConsumeQueue(int64) bool { return true }
func (recordFilter) MatchesCommitLog([]byte) bool   { return true }

// TestFilterNeedsRecords: only filters that look at records are applied
// record by record; a tag filter, or one that says it decides on units
// alone, lets GetMessage read matching records contiguously.
func TestFilterNeedsRecords(t *testing.T) {
	for _, c := range []struct {
		name string
		f    MessageFilter
		want bool
	}{
		{"none", nil, false},
		{"tags", NewTagFilter("TagA || TagB"), false},
		{"units only", unitsOnly(true), false},
		{"units only false", unitsOnly(false), true},
		{"record filter", recordFilter{}, true},
	} {
		if got := filterNeedsRecords(c.f); got != c.want {
			t.Errorf("%s: needs records %v, want %v", c.name, got, c.want)
		}
	}
}
