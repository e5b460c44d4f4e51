package plots

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/experiments/result"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// maxHiccupLines bounds the lines of the hiccup figure.
const maxHiccupLines = 8

// Hiccups draws the maximum latency of each reporting interval over time
// (jHiccup's picture), read from the cells' interval logs (.hlog or
// .hlog.gz in runDir): one line per cell for its primary metric, from its
// first repetition (the one runs keep a log of), log y in ms. A stall
// shows as a spike that the whole-run percentiles average away.
func Hiccups(runDir string, cells []result.Cell) (*Figure, error) {
	var lines []labelledLine
	lo, hi, tMax := math.Inf(1), 0.0, 0.0
	for _, c := range usable(cells) {
		if len(lines) == maxHiccupLines {
			break
		}
		if c.Rep != 0 {
			continue
		}
		ivs, err := result.ReadCellHlog(runDir, &c)
		if err != nil {
			continue
		}
		tag := c.PrimaryMetric()
		var t0 int64 = -1
		var xys plotter.XYs
		for _, iv := range ivs {
			if iv.Tag != tag || iv.Hist.TotalCount() == 0 {
				continue
			}
			if t0 < 0 {
				t0 = iv.StartMs
			}
			y := float64(iv.Hist.Max()) / 1e6
			if !(y > 0) {
				continue
			}
			x := float64(iv.EndMs-t0) / 1000
			xys = append(xys, plotter.XY{X: x, Y: y})
			lo, hi, tMax = math.Min(lo, y), math.Max(hi, y), math.Max(tMax, x)
		}
		if len(xys) > 0 {
			lines = append(lines, labelledLine{cellLabel(c.SystemOrDefault(), c.Name) + " (" + tag + ")", xys})
		}
	}
	if len(lines) == 0 {
		return nil, noData("hiccups", "no cell has an interval log")
	}
	p := newPanel("Maximum latency per interval (hiccups)", "time since the measured phase began (s)", "interval max latency (ms)")
	if err := addLines(p, lines, 1); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 0, math.Max(tMax, 1)
	setLogY(p, lo, hi)
	return &Figure{Name: "hiccups", Panels: [][]*plot.Plot{{p}}, Width: 18 * cmLength, Height: 10 * cmLength}, nil
}

// describeRun is the second title line of a run's figures: loop type,
// producers, message size and which clock the latency is measured on,
// from the run's resolved config and its cells (swept values are named as
// swept).
func describeRun(run *result.Run, cells []result.Cell) string {
	var cfg struct {
		Workload struct {
			Mode      string  `json:"mode"`
			Producers int     `json:"producers"`
			Rate      float64 `json:"rate"`
			Size      string  `json:"size"`
			Tailing   int     `json:"tailing"`
		} `json:"workload"`
	}
	if run.Manifest != nil {
		_ = json.Unmarshal(run.Manifest.Config, &cfg)
	}
	w := cfg.Workload
	vals := map[string][]string{}
	var primaries []string
	for _, c := range cells {
		if c.SystemOrDefault() == result.SystemFio {
			continue
		}
		for _, k := range []string{"conc", "size", "rate"} {
			v := c.Params[k]
			if !slices.Contains(vals[k], v) {
				vals[k] = append(vals[k], v)
			}
		}
		if pm := c.PrimaryMetric(); pm != "" && !slices.Contains(primaries, pm) {
			primaries = append(primaries, pm)
		}
	}
	swept := func(k string) bool { return len(vals[k]) > 1 }
	var parts []string
	switch {
	case swept("rate") && slices.Contains(vals["rate"], ""):
		parts = append(parts, "closed and open loop")
	case swept("rate"):
		parts = append(parts, "open loop, offered rate swept")
	case w.Mode == "open" || (len(vals["rate"]) == 1 && vals["rate"][0] != ""):
		r := w.Rate
		if len(vals["rate"]) == 1 && vals["rate"][0] != "" {
			r, _ = strconv.ParseFloat(vals["rate"][0], 64)
		}
		parts = append(parts, fmt.Sprintf("open loop at %s msg/s", formatNumber(r)))
	case w.Mode != "":
		parts = append(parts, "closed loop")
	}
	switch {
	case swept("conc"):
		parts = append(parts, "producers swept")
	case len(vals["conc"]) == 1 && vals["conc"][0] != "":
		parts = append(parts, plural(vals["conc"][0], "producer"))
	case w.Producers > 0:
		parts = append(parts, plural(strconv.Itoa(w.Producers), "producer"))
	}
	switch {
	case swept("size"):
		parts = append(parts, "message size swept")
	case len(vals["size"]) == 1 && vals["size"][0] != "":
		parts = append(parts, sizeLabel(vals["size"][0]))
	case w.Size != "":
		parts = append(parts, sizeLabel(w.Size))
	}
	var clocks []string
	for _, pm := range primaries {
		switch pm {
		case "service":
			clocks = append(clocks, "service time (from the actual send)")
		case "response":
			clocks = append(clocks, "response time (from the intended send)")
		default:
			clocks = append(clocks, pm)
		}
	}
	if len(clocks) > 0 {
		parts = append(parts, "latency = "+strings.Join(clocks, " / "))
	}
	if w.Tailing > 0 {
		parts = append(parts, plural(strconv.Itoa(w.Tailing), "tailing consumer"))
	}
	return wrapParts(parts, subtitleWidth)
}

// subtitleWidth is the longest subtitle line, in characters.
const subtitleWidth = 64

// wrapParts joins parts with ", ", starting a new line before a part that
// would make the line longer than width.
func wrapParts(parts []string, width int) string {
	var b strings.Builder
	line := 0
	for i, p := range parts {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		if i > 0 && line+len(sep)+len([]rune(p)) > width {
			b.WriteString(",\n")
			line = 0
			sep = ""
		}
		b.WriteString(sep + p)
		line += len([]rune(sep + p))
	}
	return b.String()
}

func plural(n, noun string) string {
	if n == "1" {
		return n + " " + noun
	}
	return n + " " + noun + "s"
}

// sizeLabel reads a size spec: "fixed:1024" → "1KiB messages".
func sizeLabel(spec string) string {
	s := strings.TrimPrefix(spec, "fixed:")
	if v, ok := parseBytes(s); ok {
		return formatBytesIEC(v) + " messages"
	}
	return spec + " message sizes"
}
