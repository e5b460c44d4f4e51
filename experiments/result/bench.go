package result

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Units written to bench.txt. Percentiles are not per-op, so they carry no
// "/op" (Go runtime convention); benchstat shows them as p50-sec etc.
const (
	UnitNsPerOp = "ns/op"
	UnitMBps    = "MB/s"
	UnitOpsPerS = "ops/s"
	UnitP50     = "p50-ns"
	UnitP99     = "p99-ns"
	UnitP999    = "p999-ns"
	// The measured sends: attempted = acked + failed.
	UnitAttempted = "sends-attempted"
	UnitAcked     = "sends-acked"
	UnitFailed    = "sends-failed"
)

// DefaultOp is the benchmark base name used when Cell.Op is empty.
const DefaultOp = "Produce"

// writeConfig writes a benchfmt file-configuration line. Keys are fixed
// here and follow benchfmt's rule: lower-case first letter, no spaces or
// upper case.
func writeConfig(w io.Writer, key, value string) error {
	value = strings.Join(strings.Fields(value), " ") // one line, no stray tabs
	_, err := fmt.Fprintf(w, "%s: %s\n", key, value)
	return err
}

// WriteBench writes Go benchmark format: file-configuration lines from the
// manifest, unit metadata, then one line per cell that did not fail:
//
//	BenchmarkProduce/path=mmap/flush=group/size=1024/conc=64 <ops> <ns/op> ns/op <MB/s> MB/s <ops/s> ops/s <p50> p50-ns <p99> p99-ns <p999> p999-ns
//
// The iteration count is Ops (1 when unknown, and ns/op is then omitted).
// Percentiles come from the cell's primary metric. "system: <s>" and
// "metric: <m>" configuration lines are repeated whenever they change, so
// benchstat can pivot on them (-col system). Cells with Error set are left
// out; cells with no value at all are left out.
func WriteBench(w io.Writer, m Manifest, cells []Cell) error {
	bw := bufio.NewWriter(w)
	header := [][2]string{
		{"experiment", m.Experiment},
		{"goos", m.Host.OS},
		{"goarch", m.Host.Arch},
		{"cpu", m.Host.CPUModel},
		{"ncpu", strconv.Itoa(m.Host.CPUCount)},
		{"mem-total-bytes", strconv.FormatInt(m.Host.MemTotalBytes, 10)},
		{"kernel", m.Host.Kernel},
		{"hostname", m.Host.Hostname},
		{"commit", m.Git.SHA},
		{"dirty", strconv.FormatBool(m.Git.Dirty)},
		{"fs", m.Store.FSType},
		{"mount-options", m.Store.MountOptions},
		{"device", m.Store.Device},
		{"vm-dirty-ratio", m.VM.DirtyRatio},
		{"vm-dirty-background-ratio", m.VM.DirtyBackgroundRatio},
		{"vm-dirty-expire-centisecs", m.VM.DirtyExpireCentisecs},
		{"vm-dirty-writeback-centisecs", m.VM.DirtyWritebackCentisecs},
		{"go", m.Go.Version},
		{"gomaxprocs", strconv.Itoa(m.Go.GOMAXPROCS)},
		{"seed", strconv.FormatInt(m.Seed, 10)},
	}
	for _, kv := range header {
		v := kv[1]
		if v == "" {
			v = Unknown
		}
		if err := writeConfig(bw, kv[0], v); err != nil {
			return fmt.Errorf("result: write bench: %w", err)
		}
	}
	for _, u := range []string{UnitP50, UnitP99, UnitP999} {
		fmt.Fprintf(bw, "Unit %s better=lower\n", u)
	}
	fmt.Fprintf(bw, "Unit %s better=higher\n", UnitOpsPerS)

	system, metric := "", ""
	for i := range cells {
		c := &cells[i]
		if c.Error != "" {
			continue
		}
		if _, err := ParseName(c.Name); err != nil {
			return fmt.Errorf("result: write bench: cells[%d]: %w", i, err)
		}
		op := c.Op
		if op == "" {
			op = DefaultOp
		}
		if !validOp(op) {
			return fmt.Errorf("%w: cells[%d]: op %q must be letters, digits or _", ErrInvalid, i, op)
		}
		line, ok := benchValues(c)
		if !ok {
			continue
		}
		if s := c.SystemOrDefault(); s != system {
			system = s
			if err := writeConfig(bw, "system", s); err != nil {
				return fmt.Errorf("result: write bench: %w", err)
			}
		}
		if pm := c.PrimaryMetric(); pm != "" && pm != metric {
			metric = pm
			if err := writeConfig(bw, "metric", pm); err != nil {
				return fmt.Errorf("result: write bench: %w", err)
			}
		}
		if _, err := fmt.Fprintf(bw, "Benchmark%s/%s %s\n", op, c.Name, line); err != nil {
			return fmt.Errorf("result: write bench: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("result: write bench: %w", err)
	}
	return nil
}

func validOp(op string) bool {
	for _, r := range op {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return op != ""
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// benchValues formats "<iters> v unit …" for a cell, ok=false when it has
// no finite value to report.
func benchValues(c *Cell) (string, bool) {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	var b strings.Builder
	iters := c.Ops
	if iters <= 0 {
		iters = 1
	}
	b.WriteString(strconv.FormatInt(iters, 10))
	n := 0
	add := func(v float64, unit string) {
		if !finite(v) {
			return
		}
		b.WriteString(" " + fmtFloat(v) + " " + unit)
		n++
	}
	if c.Ops > 0 && c.Duration > 0 {
		add(float64(c.Duration.Nanoseconds())/float64(c.Ops), UnitNsPerOp)
	}
	if c.MBPerSec > 0 {
		add(c.MBPerSec, UnitMBps)
	}
	if c.MsgPerSec > 0 {
		add(c.MsgPerSec, UnitOpsPerS)
	}
	if c.Attempted > 0 {
		add(float64(c.Attempted), UnitAttempted)
		add(float64(c.Acked), UnitAcked)
		add(float64(c.Failed), UnitFailed)
	}
	if q, ok := c.Quantiles[c.PrimaryMetric()]; ok && q.Count > 0 {
		add(q.P50, UnitP50)
		add(q.P99, UnitP99)
		add(q.P999, UnitP999)
	}
	return b.String(), n > 0
}

// ReadBench parses Go benchmark format (bench.txt, or go test -bench output
// with key=value sub-benchmark names) into cells, with
// golang.org/x/perf/benchfmt (the reader benchstat uses): "key: value"
// file-configuration lines apply to the results after them; "Unit" lines
// and other text are ignored. The returned map is the file configuration
// in force at the first result. Values are read in their original units
// (benchfmt's tidied units are undone); units other than the ones
// WriteBench emits go into Cell.Extra under their unit name. Results whose
// names are not key=value lists are skipped; a malformed Benchmark line is
// an error naming the file and line.
func ReadBench(r io.Reader, fileName string) ([]Cell, map[string]string, error) {
	br := benchfmt.NewReader(r, fileName)
	var first map[string]string
	var cells []Cell
	reps := map[string]int{}
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, nil, fmt.Errorf("result: read bench: %w", rec)
		case *benchfmt.Result:
			config := map[string]string{}
			for _, c := range rec.Config {
				if c.File {
					config[c.Key] = string(c.Value)
				}
			}
			c, ok := cellFromResult(rec, config)
			if !ok {
				continue
			}
			if first == nil {
				first = config
			}
			key := c.System + "\x00" + c.Name
			c.Rep = reps[key]
			reps[key]++
			cells = append(cells, c)
		}
	}
	if err := br.Err(); err != nil {
		return nil, nil, fmt.Errorf("result: read bench %s: %w", fileName, err)
	}
	if first == nil {
		first = map[string]string{}
	}
	return cells, first, nil
}

// cellFromResult turns one benchfmt result into a cell; ok=false when its
// name has no key=value parts.
func cellFromResult(rec *benchfmt.Result, config map[string]string) (Cell, bool) {
	full := rec.Name.String()
	base, name, _ := strings.Cut(full, "/")
	if name == "" {
		return Cell{}, false
	}
	if endsInGomaxprocs(name) {
		name = name[:strings.LastIndexByte(name, '-')]
	}
	params, err := ParamMap(name)
	if err != nil {
		return Cell{}, false
	}
	c := Cell{Name: name, Params: params, Op: base, System: config["system"], Ops: int64(rec.Iters)}
	if c.System == "" {
		c.System = SystemBrokerlab
	}
	var q Quantiles
	haveQ := false
	for _, v := range rec.Values {
		val, unit := v.Value, v.Unit
		if v.OrigUnit != "" {
			val, unit = v.OrigValue, v.OrigUnit
		}
		switch unit {
		case UnitNsPerOp:
			c.Duration = durationNs(val * float64(rec.Iters))
		case UnitMBps:
			c.MBPerSec = val
		case UnitOpsPerS:
			c.MsgPerSec = val
		case UnitP50:
			q.P50, haveQ = val, true
		case UnitP99:
			q.P99, haveQ = val, true
		case UnitP999:
			q.P999, haveQ = val, true
		case UnitAttempted:
			c.Attempted = int64(val)
		case UnitAcked:
			c.Acked = int64(val)
		case UnitFailed:
			c.Failed = int64(val)
		default:
			if c.Extra == nil {
				c.Extra = map[string]float64{}
			}
			c.Extra[unit] = val
		}
	}
	if haveQ {
		metric := config["metric"]
		if metric == "" {
			metric = "latency"
		}
		c.Primary = metric
		c.Quantiles = map[string]Quantiles{metric: q}
	}
	if c.Duration > 0 && c.MBPerSec > 0 {
		c.Bytes = int64(math.Round(c.MBPerSec * 1e6 * c.Duration.Seconds()))
	}
	return c, true
}
