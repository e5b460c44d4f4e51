package experiments

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// ErrUnlikePair marks a declared pairing whose two cells differ in
// something other than what the pairing varies (pairing_like.go: any
// attribute of the resolved configuration its selectors do not set
// differently, measured duration and warm-up included), or in a property no
// pairing may vary (transport, message size, producer count, loop type,
// batch, offered rate; durability unless declared).
var ErrUnlikePair = fmt.Errorf("%w: unlike pairing", ErrConfig)

// errNoMatch marks a selector that matches no cell.
var errNoMatch = errors.New("matches no cell")

// Pairing is one declared comparison: the numerator cell's metric divided
// by the denominator cell's, repetition by repetition. A selector is a set
// of cell attributes (see cellAttrs: system, path, flush, transport, size,
// conc, mode, rate, batch and any name parameter) that must match exactly
// one cell of the experiment; without "system" it selects among brokerlab's.
//
//	pairings:
//	  - name: group_commit_vs_per_message_fsync
//	    numerator:   {path: mmap, flush: group, transport: inproc}
//	    denominator: {path: mmap, flush: sync, transport: inproc}
//	    metric: msg/s
//
// Metrics: msg/s, MB/s (throughput: higher is better), p50, p99, p999
// (latency of the primary metric: lower is better; only in open loop at
// equal offered rates, since in a closed loop with fixed producers latency
// restates throughput by Little's law), cpu/msg (the server process's
// CPU µs per acknowledged message: lower is better; only between cells
// that measure it, i.e. transport process on both sides) and write-amp
// (bytes the store's device wrote per byte the commit log appended,
// extra.write_amplification: lower is better; brokerlab's cells only) and
// catchup-MB/s (a lagging consumer's read rate over its backlog,
// extra.catchup_mb_per_sec: higher is better; only between cells with a
// lagging consumer, the same backlog and the same page-cache budget).
//
// Compares names the one property a pairing varies on purpose when that
// property is otherwise checked. Only "durability" may be named: an
// experiment whose question is how a message is made durable (an fsync on
// this machine, or a copy held by a replica) compares unlike durability by
// design. The pairing is then refused unless the two cells' durability does
// differ, everything else is still checked, and its RATIO line names both
// classes.
type Pairing struct {
	Name     string            `yaml:"name" json:"name"`
	Num      map[string]string `yaml:"numerator" json:"numerator"`
	Den      map[string]string `yaml:"denominator" json:"denominator"`
	Metric   string            `yaml:"metric" json:"metric"`
	Compares string            `yaml:"compares,omitempty" json:"compares,omitempty"`
}

// ComparesDurability is the only property a pairing may declare it varies.
const ComparesDurability = "durability"

// MetricCPUPerMsg compares the server's CPU time per acknowledged message
// (result.Cell.ServerCPUMicrosPerMsg).
const MetricCPUPerMsg = "cpu/msg"

// MetricWriteAmp compares the bytes the store's device wrote per byte the
// commit log appended (the host extra write_amplification, from diskstats).
const MetricWriteAmp = "write-amp"

// MetricCatchUp compares how fast a consumer that started behind read its
// backlog (the extra catchup_mb_per_sec of the cell's first lagging
// consumer): higher is better.
const MetricCatchUp = "catchup-MB/s"

// pairMetrics are the metrics a pairing may compare.
var pairMetrics = []string{"msg/s", "MB/s", "p50", "p99", "p999", MetricCPUPerMsg, MetricWriteAmp, MetricCatchUp}

func isLatencyMetric(m string) bool { return m == "p50" || m == "p99" || m == "p999" }

// lowerIsBetter reports whether a smaller value of metric m is better.
func lowerIsBetter(m string) bool {
	return isLatencyMetric(m) || m == MetricCPUPerMsg || m == MetricWriteAmp
}

// transportClass says how a cell's load reaches the system: a function call
// (brokerlab in-process; fio's system calls) or a protocol over loopback TCP
// (brokerlab's remoting; NATS with nats.go over TCP), to a server in this
// process or in a child process (transport process: the server's CPU is
// its own, not shared with the clients' process).
func transportClass(a map[string]string) string {
	switch {
	case a["transport"] == TransportProcess:
		return "loopback TCP to a server in a child process"
	case a["system"] == result.SystemNATS && a["transport"] == "loopback":
		return "loopback TCP"
	case a["system"] == result.SystemNATS:
		return "in-process protocol pipe"
	case a["transport"] == "loopback":
		return "loopback TCP"
	}
	return "in-process call (no protocol)"
}

// durabilityClass says when a send is acknowledged relative to fsync.
func durabilityClass(a map[string]string) string {
	fsynced := a["flush"] != "async" && a["flush"] != "none"
	switch {
	case a["replication"] == "sync" && fsynced:
		return "acknowledged after fsync and once a replica holds it"
	case a["replication"] == "sync":
		return "acknowledged once a replica holds it, before fsync"
	case fsynced:
		return "acknowledged after fsync"
	}
	return "acknowledged before fsync"
}

// cellAttrs are the attributes a selector matches: the resolved
// configuration, overlaid with the cell's name parameters. advice is
// "normal" when the experiment gives none, so {advice: normal} selects the
// cells that do not set it; client is "brokerlab" likewise.
func cellAttrs(c *Cell) map[string]string {
	e := c.Exp
	a := map[string]string{
		"system":    result.SystemBrokerlab,
		"path":      e.Engine.Path,
		"flush":     e.Engine.Flush,
		"transport": e.Engine.Transport,
		"size":      sizeKey(e.Workload.Size),
		"conc":      strconv.Itoa(e.Workload.Producers),
		"mode":      e.Workload.Mode,
		"batch":     strconv.Itoa(e.Workload.Batch),
		"advice":    cmp.Or(e.Engine.Advice, "normal"),
		"client":    cmp.Or(e.Engine.Client, ClientBrokerlab),
		// "" or none: acknowledged without waiting for a replica.
		"replication": e.Engine.Replication,
	}
	if e.Workload.Mode == "open" {
		a["rate"] = strconv.FormatFloat(e.Workload.Rate, 'f', -1, 64)
	}
	if c.System != "" {
		a["system"] = c.System
	}
	for _, p := range c.Params {
		if p.Key == "size" {
			a["size"] = sizeKey(p.Value)
			continue
		}
		a[p.Key] = p.Value
	}
	return a
}

// sizeKey writes "fixed:1024" and "1024" alike.
func sizeKey(s string) string { return strings.TrimPrefix(s, "fixed:") }

// matches reports whether every selector key has the attribute's value; a
// selector without "system" selects brokerlab's cells.
func matches(sel, attrs map[string]string) bool {
	if _, ok := sel["system"]; !ok && attrs["system"] != result.SystemBrokerlab {
		return false
	}
	for k, v := range sel {
		want := v
		if k == "size" {
			want = sizeKey(v)
		}
		if attrs[k] != want {
			return false
		}
	}
	return true
}

func cellID(c *Cell) string {
	if c.System != "" && c.System != result.SystemBrokerlab {
		return c.System + " " + c.Name
	}
	return c.Name
}

// selectOne finds the one cell a selector names.
func selectOne(p Pairing, side string, sel map[string]string, cells []Cell) (*Cell, error) {
	if len(sel) == 0 {
		return nil, fmt.Errorf("%w: pairing %q: %s selector is empty", ErrConfig, p.Name, side)
	}
	var found []*Cell
	for i := range cells {
		if matches(sel, cellAttrs(&cells[i])) {
			found = append(found, &cells[i])
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("%w: pairing %q: %s %v %w", ErrConfig, p.Name, side, sel, errNoMatch)
	}
	names := make([]string, len(found))
	for i, c := range found {
		names[i] = cellID(c)
	}
	return nil, fmt.Errorf("%w: pairing %q: %s %v matches %d cells (%s): add keys to pick one",
		ErrConfig, p.Name, side, sel, len(found), strings.Join(names, ", "))
}

// checkLike returns an ErrUnlikePair error listing every difference that
// makes the two cells unfit to compare with metric.
func checkLike(p Pairing, num, den *Cell) error {
	a, b := cellAttrs(num), cellAttrs(den)
	var diffs []string
	differ := func(what, x, y string) {
		if x != y {
			diffs = append(diffs, fmt.Sprintf("%s differs (%s vs %s)", what, x, y))
		}
	}
	differ("transport", transportClass(a), transportClass(b))
	differ("message size", a["size"], b["size"])
	differ("producer count", a["conc"], b["conc"])
	switch da, db := durabilityClass(a), durabilityClass(b); {
	case p.Compares != ComparesDurability:
		differ("durability", da, db)
	case da == db:
		diffs = append(diffs, fmt.Sprintf("declares compares: %s, but both cells are %s", ComparesDurability, da))
	}
	differ("loop type", a["mode"], b["mode"])
	differ("batch", a["batch"], b["batch"])
	if a["mode"] == "open" || b["mode"] == "open" {
		differ("offered rate (msg/s)", a["rate"], b["rate"])
	}
	// Metrics only some cells measure: each side must be such a cell.
	for _, side := range []struct {
		name  string
		c     *Cell
		attrs map[string]string
	}{{"numerator", num, a}, {"denominator", den, b}} {
		switch {
		case p.Metric == MetricCPUPerMsg && side.attrs["transport"] != TransportProcess:
			diffs = append(diffs, fmt.Sprintf("%s %s measures no server CPU (transport %s; %s needs transport process on both sides)",
				side.name, cellID(side.c), side.attrs["transport"], MetricCPUPerMsg))
		case p.Metric == MetricWriteAmp && side.attrs["system"] != result.SystemBrokerlab:
			diffs = append(diffs, fmt.Sprintf("%s %s appends to no commit log (system %s; %s compares brokerlab's cells)",
				side.name, cellID(side.c), side.attrs["system"], MetricWriteAmp))
		case p.Metric == MetricCatchUp && (side.attrs["system"] != result.SystemBrokerlab || side.c.Exp.Workload.Lagging == 0):
			diffs = append(diffs, fmt.Sprintf("%s %s has no lagging consumer (%s compares brokerlab's cells with lagging > 0)",
				side.name, cellID(side.c), MetricCatchUp))
		}
	}
	if p.Metric == MetricCatchUp {
		wa, wb := num.Exp.Workload, den.Exp.Workload
		differ("backlog behind the consumer (lag_bytes)", wa.LagBytes.String(), wb.LagBytes.String())
		differ("prefill", wa.Prefill.String(), wb.Prefill.String())
		differ("page-cache budget", num.Exp.Engine.Budget.String(), den.Exp.Engine.Budget.String())
	}
	if num.System != result.SystemFio && den.System != result.SystemFio {
		// A ceiling (fio) has no broker configuration to compare; every
		// other pair is equal in all but its variable.
		diffs = append(diffs, configDiffs(p, num, den)...)
	}
	if isLatencyMetric(p.Metric) && (a["mode"] != "open" || b["mode"] != "open") {
		diffs = append(diffs, "latency is compared in open loop only (in a closed loop with fixed producers it restates throughput: Little's law)")
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w %q: %s / %s: %s", ErrUnlikePair, p.Name, cellID(num), cellID(den), strings.Join(diffs, "; "))
}

// validatePairings checks every pairing against the experiment's cells
// (brokerlab's, and the peers' it will run).
func (e *Experiment) validatePairings() error {
	if len(e.Pairings) == 0 {
		return nil
	}
	cells, err := e.AllCells()
	if err != nil {
		return err
	}
	return e.validatePairingsOn(cells)
}

// validatePairingsOn checks every pairing against the given cells (a plan's,
// with their own measured durations).
func (e *Experiment) validatePairingsOn(cells []Cell) error {
	seen := map[string]bool{}
	for _, p := range e.Pairings {
		if p.Name == "" || strings.ContainsAny(p.Name, " \t/=") {
			return fmt.Errorf("%w: pairing name %q: want a word such as group_commit_vs_per_message_fsync", ErrConfig, p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("%w: pairing %q declared twice", ErrConfig, p.Name)
		}
		seen[p.Name] = true
		if p.Compares != "" && p.Compares != ComparesDurability {
			return fmt.Errorf("%w: pairing %q: compares %q: only %q may be declared", ErrConfig, p.Name, p.Compares, ComparesDurability)
		}
		if !slices.Contains(pairMetrics, p.Metric) {
			return fmt.Errorf("%w: pairing %q: metric %q: want one of %s", ErrConfig, p.Name, p.Metric, strings.Join(pairMetrics, ", "))
		}
		num, err1 := selectOne(p, "numerator", p.Num, cells)
		den, err2 := selectOne(p, "denominator", p.Den, cells)
		if err := errors.Join(err1, err2); err != nil {
			if (e.Mode == "quick" || e.Mode == "reference") && errors.Is(err, errNoMatch) {
				// The quick and reference matrices may leave a pairing's
				// cells out: its ratio is n/a, and says so.
				continue
			}
			return err
		}
		if num == den {
			return fmt.Errorf("%w: pairing %q: numerator and denominator are the same cell %s", ErrConfig, p.Name, cellID(num))
		}
		if err := checkLike(p, num, den); err != nil {
			return err
		}
	}
	return nil
}

// Ratio is one declared pairing as measured: the ratio of the numerator's
// metric to the denominator's in each repetition, summarised as the median
// with the min–max range. No best-of-N: every repetition counts.
type Ratio struct {
	Name   string
	Metric string
	Num    string // numerator cell
	Den    string // denominator cell
	Stat   result.Stat
	// Missing says why the ratio could not be computed ("" when it was).
	Missing string
	// Varies names the declared difference (Pairing.Compares) as measured:
	// "durability: <numerator's class> vs <denominator's>".
	Varies string
	// Flag is a warning printed in the RATIO line: a ratio above 1 over a
	// ceiling (a fio denominator) means the ceiling is not one.
	Flag string
}

// ComputeRatios evaluates the pairings on a run's cells. Repetition r of
// the numerator is divided by repetition r of the denominator; failed cells
// are left out.
func ComputeRatios(pairs []Pairing, all []Cell, cells []result.Cell) []Ratio {
	var out []Ratio
	for _, p := range pairs {
		r := Ratio{Name: p.Name, Metric: p.Metric}
		num, err1 := selectOne(p, "numerator", p.Num, all)
		den, err2 := selectOne(p, "denominator", p.Den, all)
		if err := errors.Join(err1, err2); err != nil {
			r.Missing = err.Error()
			if errors.Is(err, errNoMatch) {
				r.Missing = "not measured: this run's matrix leaves its cells out (" + r.Missing + ")"
			}
			out = append(out, r)
			continue
		}
		r.Num, r.Den = cellID(num), cellID(den)
		if p.Compares == ComparesDurability {
			r.Varies = fmt.Sprintf("%s: %s vs %s", ComparesDurability, durabilityClass(cellAttrs(num)), durabilityClass(cellAttrs(den)))
		}
		if isLatencyMetric(p.Metric) {
			if why := saturatedSide(cells, num, den); why != "" {
				r.Missing = "refused: " + why + ": an open loop that falls behind its offered rate has a latency that grows with the run's length"
				out = append(out, r)
				continue
			}
		}
		nv := repValues(cells, num, p.Metric)
		dv := repValues(cells, den, p.Metric)
		var ratios []float64
		for _, rep := range slices.Sorted(maps.Keys(nv)) {
			d, ok := dv[rep]
			if ok && d > 0 && nv[rep] > 0 {
				ratios = append(ratios, nv[rep]/d)
			}
		}
		if len(ratios) == 0 {
			r.Missing = "no repetition measured both cells"
		}
		r.Stat = result.StatOf(ratios)
		if den.System == result.SystemFio && !lowerIsBetter(p.Metric) && len(ratios) > 0 && r.Stat.Max > 1 {
			r.Flag = fmt.Sprintf("ABOVE CEILING: %s exceeds its ceiling %s (max %s): the ceiling or the measurement is wrong",
				r.Num, r.Den, Sig2(r.Stat.Max))
		}
		out = append(out, r)
	}
	return out
}

// saturatedSide names the first of num and den that was saturated in some
// repetition (result.Cell.Saturated), "" when neither was.
func saturatedSide(cells []result.Cell, num, den *Cell) string {
	for _, side := range []struct {
		name string
		c    *Cell
	}{{"numerator", num}, {"denominator", den}} {
		sys := cmp.Or(side.c.System, result.SystemBrokerlab)
		for i := range cells {
			rc := &cells[i]
			if rc.Saturated && rc.Error == "" && rc.SystemOrDefault() == sys && rc.Name == side.c.Name {
				return fmt.Sprintf("%s %s is saturated in repetition %d (acknowledged %.0f of %.0f msg/s offered)",
					side.name, cellID(side.c), rc.Rep, rc.MsgPerSec, rc.OfferedRate)
			}
		}
	}
	return ""
}

// repValues maps a cell's repetitions to the metric's value.
func repValues(cells []result.Cell, c *Cell, metric string) map[int]float64 {
	sys := c.System
	if sys == "" {
		sys = result.SystemBrokerlab
	}
	out := map[int]float64{}
	for i := range cells {
		rc := &cells[i]
		if rc.Error != "" || rc.SystemOrDefault() != sys || rc.Name != c.Name {
			continue
		}
		var v float64
		switch metric {
		case MetricCPUPerMsg:
			v = rc.ServerCPUMicrosPerMsg
		case "msg/s":
			v = rc.MsgPerSec
		case "MB/s":
			v = rc.MBPerSec
		case MetricWriteAmp:
			v = rc.Extra["write_amplification"]
		case MetricCatchUp:
			v = rc.Extra["catchup_mb_per_sec"]
		default:
			q := rc.Quantiles[rc.PrimaryMetric()]
			switch metric {
			case "p50":
				v = q.P50
			case "p99":
				v = q.P99
			case "p999":
				v = q.P999
			}
		}
		if v > 0 && !math.IsInf(v, 0) {
			out[rc.Rep] = v
		}
	}
	return out
}

// Sig2 formats v with two significant digits and no exponent: 0.33, 4.5, 120.
func Sig2(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	e := int(math.Floor(math.Log10(math.Abs(v))))
	p := math.Pow(10, float64(e-1))
	r := math.Round(v/p) * p
	// Rounding may carry into the next decade (9.96 → 10).
	e = int(math.Floor(math.Log10(math.Abs(r))))
	dec := max(1-e, 0)
	return strconv.FormatFloat(r, 'f', dec, 64)
}

// String is the ratio's line: "RATIO name median [min–max] n=N # num / den (metric)".
func (r Ratio) String() string {
	if r.Missing != "" {
		return fmt.Sprintf("RATIO %s n/a\t# %s", r.Name, r.Missing)
	}
	better := "higher is better"
	if lowerIsBetter(r.Metric) {
		better = "lower is better"
	}
	varies := ""
	if r.Varies != "" {
		varies = "; declared to differ in " + r.Varies
	}
	flag := ""
	if r.Flag != "" {
		flag = "; " + r.Flag
	}
	return fmt.Sprintf("RATIO %s %s [%s–%s] n=%d\t# %s / %s (%s, %s; median and min–max over repetitions%s)%s",
		r.Name, Sig2(r.Stat.Median), Sig2(r.Stat.Min), Sig2(r.Stat.Max), r.Stat.N, r.Num, r.Den, r.Metric, better, varies, flag)
}

// WriteRatios prints one line per ratio.
func WriteRatios(w io.Writer, rs []Ratio) {
	for _, r := range rs {
		fmt.Fprintln(w, r.String())
	}
}
