package plots

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// percentileTicks labels an x axis of 1/(1-p): 1 → 0%, 2 → 50%,
// 10 → 90%, …, 1e5 → 99.999%, 1e6 → 99.9999%.
func percentileTicks(min, max float64) []plot.Tick {
	marks := []struct {
		v float64
		l string
	}{{1, "0%"}, {2, "50%"}, {10, "90%"}, {100, "99%"}, {1e3, "99.9%"}, {1e4, "99.99%"}, {1e5, "99.999%"}, {1e6, "99.9999%"}}
	var ts []plot.Tick
	for _, m := range marks {
		if m.v >= min*(1-1e-9) && m.v <= max*(1+1e-9) {
			ts = append(ts, plot.Tick{Value: m.v, Label: m.l})
		}
	}
	return ts
}

// log125Ticks labels 1, 2 and 5 times powers of ten (minor ticks at the
// other integers) on a log axis. It never panics: a non-positive range
// yields no ticks.
func log125Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > 0) || max < min {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := base * float64(m)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = formatNumber(v)
			}
			ts = append(ts, t)
		}
	}
	labelled := 0
	for _, t := range ts {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled < 2 { // a narrow range: label every tick, or the ends
		for i := range ts {
			ts[i].Label = formatNumber(ts[i].Value)
		}
		if len(ts) < 2 {
			ts = []plot.Tick{{Value: min, Label: formatNumber(min)}, {Value: max, Label: formatNumber(max)}}
		}
	}
	return ts
}

// pow2Ticks labels the powers of two inside [min, max] with format.
func pow2Ticks(format func(float64) string) plot.TickerFunc {
	return func(min, max float64) []plot.Tick {
		if !(min > 0) || !(max > 0) || max < min {
			return nil
		}
		var ts []plot.Tick
		for e := math.Floor(math.Log2(min)); e <= math.Ceil(math.Log2(max)); e++ {
			v := math.Exp2(e)
			if v >= min*(1-1e-9) && v <= max*(1+1e-9) {
				ts = append(ts, plot.Tick{Value: v, Label: format(v)})
			}
		}
		return ts
	}
}

// siTicks is gonum's default ticker with labels in compact SI form (50k, 1.2M).
func siTicks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = formatNumber(ts[i].Value)
		}
	}
	return ts
}

// formatNumber prints v compactly: 0.5, 20, 1k, 2.5k, 1M.
func formatNumber(v float64) string {
	abs := math.Abs(v)
	switch {
	case abs >= 1e9:
		return trimFloat(v/1e9) + "G"
	case abs >= 1e6:
		return trimFloat(v/1e6) + "M"
	case abs >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

// trimFloat prints v with at most 3 significant digits below 1000 and no
// exponent: 0.0012, 0.25, 12.5, 999.
func trimFloat(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	e := math.Floor(math.Log10(math.Abs(v)))
	scale := math.Pow(10, 2-e)
	r := math.Round(v*scale) / scale
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// formatBytesIEC prints a byte count with a binary suffix: 8MiB, 1GiB, 1.5KiB.
func formatBytesIEC(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return trimFloat(v) + units[i]
}

// parseBytes reads a size: a plain number of bytes, or a number with an
// IEC suffix (KiB, MiB, GiB, TiB: binary), an SI suffix (KB, MB, GB, TB:
// decimal) or a bare K/M/G/T (binary, as in "64M"). Case-insensitive.
func parseBytes(s string) (float64, bool) {
	t := strings.TrimSpace(strings.ToLower(s))
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
	} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v * mult, true
}

// parseCount reads a count or rate: a number with an optional decimal
// k/M/G suffix ("50k" = 50000).
func parseCount(s string) (float64, bool) {
	t := strings.TrimSpace(s)
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"), strings.HasSuffix(t, "K"):
		mult, t = 1e3, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		mult, t = 1e6, t[:len(t)-1]
	case strings.HasSuffix(t, "G"):
		mult, t = 1e9, t[:len(t)-1]
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v * mult, true
}

// latencyUnit is the display unit of latencies: always ms, so every figure
// reads alike (log axes carry values from 0.001 ms to seconds).
func latencyUnit(float64) (divisor float64, name string) { return 1e6, "ms" }

// logRange widens [lo, hi] (both > 0) slightly for a log axis; it returns
// ok=false when there is no positive range.
func logRange(lo, hi float64) (float64, float64, bool) {
	if !(lo > 0) || !(hi > 0) || math.IsInf(hi, 0) {
		return 0, 0, false
	}
	if hi <= lo {
		return lo / 2, lo * 2, true
	}
	return lo / 1.2, hi * 1.2, true
}
