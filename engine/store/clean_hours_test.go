package store

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// deleteWhen's hours, checked against the clock CleanOnce is given: the
// pass is time-to-delete exactly in the listed hours (local time), and a
// malformed list is refused at Open.
func TestCleanDeleteWhenHours(t *testing.T) {
	for _, tc := range []struct {
		deleteWhen string
		hours      []int // the hours that are time to delete
	}{
		{"04", []int{4}},
		{"4", []int{4}},
		{"01;02;03", []int{1, 2, 3}},
		{" 00 ; 23 ", []int{0, 23}},
		{"12;12;", []int{12}},
		{"", nil},
	} {
		t.Run(tc.deleteWhen, func(t *testing.T) {
			cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
			cfg.DeleteWhen = tc.deleteWhen
			cfg.DiskUsage = func(string) (float64, error) { return 0.10, nil }
			s := openStore(t, cfg)
			defer mustClose(t, s)
			want := map[int]bool{}
			for _, h := range tc.hours {
				want[h] = true
			}
			for h := 0; h < 24; h++ {
				rep, err := s.CleanOnce(at(h))
				if err != nil {
					t.Fatal(err)
				}
				if rep.TimeToDelete != want[h] || rep.SpaceToDelete {
					t.Errorf("deleteWhen %q at %02d:30: time %v space %v, want time %v", tc.deleteWhen, h, rep.TimeToDelete, rep.SpaceToDelete, want[h])
				}
			}
		})
	}
	for _, bad := range []string{"24", "4am", "-1", "04,05"} {
		if err := CheckDeleteWhen(bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("CheckDeleteWhen(%q) = %v, want ErrInvalidConfig", bad, err)
		}
		cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
		cfg.DeleteWhen = bad
		if s, err := Open(cfg); !errors.Is(err, ErrInvalidConfig) {
			if err == nil {
				_ = s.Close()
			}
			t.Errorf("Open with DeleteWhen %q: %v, want ErrInvalidConfig", bad, err)
		}
	}
}
