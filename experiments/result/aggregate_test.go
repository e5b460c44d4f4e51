package result

import (
	"reflect"
	"testing"
)

func TestStatOf(t *testing.T) {
	cases := []struct {
		in   []float64
		want Stat
	}{
		{nil, Stat{}},
		{[]float64{5}, Stat{5, 5, 5, 1}},
		{[]float64{3, 1, 2}, Stat{1, 2, 3, 3}},
		{[]float64{4, 1, 3, 2}, Stat{1, 2.5, 4, 4}},
	}
	for _, tc := range cases {
		in := append([]float64(nil), tc.in...)
		if got := StatOf(in); got != tc.want {
			t.Errorf("StatOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.in) && tc.in != nil {
			t.Errorf("StatOf sorted its input")
		}
	}
}

func TestAggregate(t *testing.T) {
	mk := func(name string, rep int, rate, p99 float64) Cell {
		return Cell{Name: name, Rep: rep, MsgPerSec: rate, MBPerSec: rate / 1000, Primary: "e2e",
			Quantiles: map[string]Quantiles{"e2e": {P50: p99 / 4, P99: p99}},
			Params:    map[string]string{"k": name[2:]}, Extra: map[string]float64{"x": float64(rep)}}
	}
	cells := []Cell{
		mk("k=b", 0, 300, 30), mk("k=a", 0, 100, 10), mk("k=b", 1, 100, 50),
		mk("k=b", 2, 200, 40), mk("k=a", 1, 110, 11), mk("k=a", 2, 90, 12),
		{Name: "k=a", Rep: 3, MsgPerSec: 1e9, Error: "aborted"},
		{Name: "k=a", System: SystemFio, MsgPerSec: 7},
	}
	got := Aggregate(cells)
	if len(got) != 3 {
		t.Fatalf("summaries: %+v", got)
	}
	b, a, fio := got[0], got[1], got[2]
	if b.Name != "k=b" || b.Reps != 3 || b.MsgPerSec != (Stat{100, 200, 300, 3}) || b.MBPerSec != (Stat{0.1, 0.2, 0.3, 3}) {
		t.Errorf("k=b: %+v", b)
	}
	if q := b.Quantiles["e2e"]; q.P99 != (Stat{30, 40, 50, 3}) || q.P50 != (Stat{7.5, 10, 12.5, 3}) {
		t.Errorf("k=b quantiles: %+v", q)
	}
	if a.Reps != 3 || a.MsgPerSec != (Stat{90, 100, 110, 3}) || a.Extra["x"] != (Stat{0, 1, 2, 3}) {
		t.Errorf("k=a (failed rep must be left out): %+v", a)
	}
	if fio.System != SystemFio || fio.Reps != 1 || fio.MsgPerSec.Median != 7 {
		t.Errorf("peer cell grouped with brokerlab: %+v", fio)
	}
	if b.Params["k"] != "b" || b.Primary != "e2e" {
		t.Errorf("params/primary: %+v", b)
	}
}
