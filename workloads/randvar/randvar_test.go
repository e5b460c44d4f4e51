package randvar

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func sample(t *testing.T, spec string, n int, seed uint64) []uint64 {
	t.Helper()
	d, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := newRNG(seed)
	out := make([]uint64, n)
	for i := range out {
		out[i] = d.Uint64(rng)
	}
	return out
}

func mean(xs []uint64) float64 {
	s := 0.0
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

func TestFixed(t *testing.T) {
	for _, spec := range []string{"fixed:1024", "1024", "1KiB", "fixed: 1k"} {
		for _, v := range sample(t, spec, 100, 1) {
			if v != 1024 {
				t.Fatalf("%s: got %d", spec, v)
			}
		}
	}
}

func TestUniformRangeAndMean(t *testing.T) {
	xs := sample(t, "uniform:128-4096", 100000, 7)
	seen := map[uint64]bool{}
	for _, x := range xs {
		if x < 128 || x > 4096 {
			t.Fatalf("value %d outside [128,4096]", x)
		}
		seen[x] = true
	}
	if !seen[128] || !seen[4096] {
		t.Fatal("endpoints never drawn: the range must be inclusive")
	}
	want := (128.0 + 4096.0) / 2
	if m := mean(xs); math.Abs(m-want)/want > 0.01 {
		t.Fatalf("mean %.1f, want %.1f ±1%%", m, want)
	}
}

func TestWeightedFrequencies(t *testing.T) {
	d, err := Parse("weighted:128=0.5,1024=0.3,4096=0.2")
	if err != nil {
		t.Fatal(err)
	}
	rng := newRNG(3)
	const n = 200000
	count := map[uint64]int{}
	for i := 0; i < n; i++ {
		count[d.Uint64(rng)]++
	}
	if len(count) != 3 {
		t.Fatalf("values drawn: %v", count)
	}
	for v, p := range map[uint64]float64{128: 0.5, 1024: 0.3, 4096: 0.2} {
		if got := float64(count[v]) / n; math.Abs(got-p) > 0.01 {
			t.Fatalf("P(%d) = %.3f, want %.2f ±0.01", v, got, p)
		}
	}
	if m, want := d.(*Weighted).Mean(), 0.5*128+0.3*1024+0.2*4096; math.Abs(m-want) > 1e-9 {
		t.Fatalf("Mean %v want %v", m, want)
	}
	// Weights are relative: 1,1 == 0.5,0.5.
	xs := sample(t, "weighted:1=1,2=1", 100000, 4)
	if m := mean(xs); math.Abs(m-1.5) > 0.01 {
		t.Fatalf("mean %.3f want 1.5", m)
	}
}

func TestZipfSkew(t *testing.T) {
	z, err := NewZipf(1, 1000, DefaultTheta)
	if err != nil {
		t.Fatal(err)
	}
	rng := newRNG(11)
	const n = 300000
	count := make([]int, 1001)
	for i := 0; i < n; i++ {
		v := z.Uint64(rng)
		if v < 1 || v > 1000 {
			t.Fatalf("value %d outside [1,1000]", v)
		}
		count[v]++
	}
	// Gray et al.'s method draws the two most frequent values with their exact
	// probabilities (the tail is an approximation of the law).
	for _, k := range []uint64{0, 1} {
		got := float64(count[k+1]) / n
		if want := z.P(k); math.Abs(got-want)/want > 0.05 {
			t.Fatalf("P(%d) = %.4f, want %.4f ±5%%", k+1, got, want)
		}
	}
	if !(count[1] > count[2] && count[2] > count[10] && count[10] > count[500]) {
		t.Fatalf("not decreasing: c1=%d c2=%d c10=%d c500=%d", count[1], count[2], count[10], count[500])
	}
	top := 0
	for v := 1; v <= 100; v++ {
		top += count[v]
	}
	if frac := float64(top) / n; frac < 0.6 {
		t.Fatalf("top 10%% of values carry %.2f of draws, want > 0.6 (zipf 0.99)", frac)
	}
	// Less skew, less head mass.
	z8, _ := NewZipf(1, 1000, 0.5)
	c1 := 0
	for i := 0; i < n; i++ {
		if z8.Uint64(rng) == 1 {
			c1++
		}
	}
	if c1 >= count[1] {
		t.Fatalf("theta 0.5 drew value 1 %d times, theta 0.99 %d times", c1, count[1])
	}
}

func TestRoundRobin(t *testing.T) {
	d, err := Parse("rr:3-5")
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for i := 0; i < 7; i++ {
		got = append(got, d.Uint64(nil))
	}
	want := []uint64{3, 4, 5, 3, 4, 5, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	if v := d.(Indexed).At(4); v != 4 {
		t.Fatalf("At(4) = %d want 4", v)
	}
}

func TestSeededReproducibility(t *testing.T) {
	for _, spec := range []string{"uniform:1-1000000", "zipf:1-5000", "weighted:1=1,2=2,3=3"} {
		a, b := sample(t, spec, 1000, 42), sample(t, spec, 1000, 42)
		c := sample(t, spec, 1000, 43)
		same := true
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: same seed diverged at %d", spec, i)
			}
			if a[i] != c[i] {
				same = false
			}
		}
		if same {
			t.Fatalf("%s: different seeds gave the same sequence", spec)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                      "empty spec",
		"bogus:1":               `unknown kind "bogus"`,
		"uniform:10-1":          "min 10 > max 1",
		"uniform:10":            "want min-max",
		"zipf:1-100,theta=1":    "theta 1 must be in (0, 1)",
		"zipf:1-100,skew=0.5":   "want theta=",
		"zipf:0-99999999999":    "more than",
		"weighted:1=0.5,2":      `entry "2": want value=weight`,
		"weighted:1=0.5,2=-1":   "must be positive",
		"weighted:1=x":          "weight is not a number",
		"fixed:-3":              "not a non-negative integer",
		"abc":                   "a bare spec must be a number",
		"fixed:99999999999999G": "overflows",
	} {
		_, err := Parse(spec)
		if !errors.Is(err, ErrSpec) {
			t.Fatalf("%q: err %v, want ErrSpec", spec, err)
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "randvar:") {
			t.Fatalf("%q: err %q, want it to mention %q", spec, err, want)
		}
	}
}

func TestVarTextAndFlag(t *testing.T) {
	var cfg struct {
		Size Var `json:"size"`
		Key  Var `json:"key"`
	}
	if err := json.Unmarshal([]byte(`{"size":"uniform:1KiB-4KiB","key":""}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Size.String() != "uniform:1KiB-4KiB" || !cfg.Key.IsZero() {
		t.Fatalf("got %+v", cfg)
	}
	if v := cfg.Size.Uint64(newRNG(1)); v < 1024 || v > 4096 {
		t.Fatalf("value %d", v)
	}
	out, _ := json.Marshal(cfg)
	if string(out) != `{"size":"uniform:1KiB-4KiB","key":""}` {
		t.Fatalf("marshal: %s", out)
	}
	if err := json.Unmarshal([]byte(`{"size":"uniform:9-1"}`), &cfg); !errors.Is(err, ErrSpec) {
		t.Fatalf("bad spec through JSON: %v", err)
	}
	var v Var
	if err := v.Set("zipf:1-10,theta=0.5"); err != nil || v.Type() != "dist" {
		t.Fatal(err)
	}
	w := NewVar(Fixed(7))
	if w.String() != "fixed:7" || w.Uint64(nil) != 7 {
		t.Fatalf("NewVar: %q", w.String())
	}
	// String() of each Dist parses back to the same distribution.
	for _, spec := range []string{"fixed:5", "uniform:1-9", "zipf:2-50,theta=0.7", "zipf:1-9", "weighted:1=0.25,7=0.75", "roundrobin:0-3"} {
		d, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if s := d.(interface{ String() string }).String(); s != spec {
			t.Fatalf("String() = %q, want %q", s, spec)
		}
	}
}
