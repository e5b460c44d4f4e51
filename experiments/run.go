package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/pagecache"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/plots"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/hist"
	"github.com/brokerlab/brokerlab/workloads/probe"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

// Options control a run.
type Options struct {
	// OutRoot is the results root; the run goes to OutRoot/<name>/<stamp>.
	OutRoot string
	// StoreRoot holds the cells' stores ("" = the OS temp dir). Stores are
	// removed after each cell.
	StoreRoot string
	// Quick applies the experiment's quick overrides.
	Quick bool
	// Duration, if > 0, overrides the measured duration of every cell.
	Duration time.Duration
	// Repetitions, if > 0, overrides the experiment's repetitions.
	Repetitions int
	// Progress receives a progress line every ProgressEvery and the final
	// table (nil: silent).
	Progress      io.Writer
	ProgressEvery time.Duration
	// NoPlots skips drawing figures.
	NoPlots bool
	// Command is recorded in the manifest.
	Command []string
	// Namesrv, if set, runs every brokerlab cell against the broker(s)
	// registered with this name server (host:port) instead of an engine
	// started here; the engine parameters then only name the cells.
	Namesrv string
}

// Outcome is what Run produced.
type Outcome struct {
	RunDir  string
	Cells   []result.Cell
	Figures []string
	Status  string // result.StatusOK, StatusInterrupted or StatusAborted
	// Ratios are the headline comparisons measured in this run.
	Ratios []Ratio
}

// Run runs every cell × repetition of e and writes the run directory. A
// cancelled ctx (Ctrl-C) stops the current cell, which is recorded as
// interrupted, and still writes complete result files.
func Run(ctx context.Context, e *Experiment, opt Options) (Outcome, error) {
	var out Outcome
	exp := *e
	if opt.Quick {
		exp.ApplyQuick()
	}
	if opt.Duration > 0 {
		exp.Duration = Duration(opt.Duration)
	}
	if opt.Repetitions > 0 {
		exp.Repetitions = opt.Repetitions
	}
	if err := exp.Validate(); err != nil {
		return out, err
	}
	cells, err := exp.Cells()
	if err != nil {
		return out, err
	}
	if opt.OutRoot == "" {
		opt.OutRoot = "results"
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = 10 * time.Second
	}
	storeRoot := opt.StoreRoot
	if storeRoot == "" {
		storeRoot = os.TempDir()
	}
	cfgJSON, _ := json.Marshal(exp)
	runDir, err := result.CreateRunDir(opt.OutRoot, exp.Name, result.RunStamp(time.Now(), cfgJSON))
	if err != nil {
		return out, err
	}
	out.RunDir = runDir
	man := result.CollectManifest(storeRoot, exp, exp.Seed)
	man.Experiment = exp.Name
	man.Command = opt.Command
	if opt.Quick {
		man.Notes = append(man.Notes, "quick run: --quick overrides applied (short durations; functional, not reference numbers)")
	}
	if err := result.WriteManifest(runDir, man); err != nil {
		return out, err
	}
	pr := &progress{w: opt.Progress}
	pr.printf("brokerlab: %s: %d cells × %d repetitions, %v warm-up + %v each → %s\n",
		exp.Name, len(cells), exp.Repetitions, exp.Warmup.D(), exp.Duration.D(), runDir)
	for _, p := range exp.Peers {
		if p == "nats" {
			cells = append(cells, peerCells(&exp, cells)...)
		}
	}
	status := result.StatusOK
	for rep := 0; rep < exp.Repetitions && status == result.StatusOK; rep++ {
		if slices.Contains(exp.Peers, "fio") && ctx.Err() == nil {
			d := exp.Duration.D()
			if exp.PeerDuration > 0 {
				d = exp.PeerDuration.D()
			}
			for _, c := range runFioPeers(ctx, storeRoot, fioSizes(cells), d, pr) {
				c.Rep = rep
				out.Cells = append(out.Cells, c)
			}
		}
		for i := range cells {
			if ctx.Err() != nil {
				status = result.StatusInterrupted
				break
			}
			c, err := runCell(ctx, &cells[i], rep, runDir, storeRoot, opt, pr)
			if err != nil {
				c.Error = err.Error()
				pr.printf("brokerlab: %s r%d failed: %v\n", cells[i].Name, rep, err)
			}
			out.Cells = append(out.Cells, c)
			if ctx.Err() != nil {
				status = result.StatusInterrupted
				break
			}
		}
	}
	res := result.Result{Schema: result.SchemaVersion, Experiment: exp.Name, Cells: out.Cells}
	if err := result.WriteResult(runDir, res); err != nil {
		return out, err
	}
	if err := result.WriteBenchFile(runDir, man, out.Cells); err != nil {
		return out, err
	}
	man.Finish(status, time.Now())
	if err := result.WriteManifest(runDir, man); err != nil {
		return out, err
	}
	out.Status = status
	out.Ratios = Ratios(out.Cells)
	if len(out.Ratios) > 0 {
		var b strings.Builder
		for _, r := range out.Ratios {
			fmt.Fprintf(&b, "RATIO %s %.3f\t# %s\n", r.Name, r.Value, r.Why)
		}
		if err := result.WriteFileAtomic(filepath.Join(runDir, "ratios.txt"), []byte(b.String()), 0o644); err != nil {
			return out, err
		}
	}
	pr.table(out.Cells)
	if !opt.NoPlots {
		figs, err := plots.RenderRun(runDir)
		out.Figures = figs
		if err != nil {
			pr.printf("brokerlab: figures: %v\n", err)
		}
		if len(figs) > 0 {
			pr.printf("figures: %d files in %s\n", len(figs), filepath.Dir(figs[0]))
		}
	}
	return out, nil
}

// progress prints lines; safe for concurrent use.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) printf(format string, args ...any) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	fmt.Fprintf(p.w, format, args...)
	p.mu.Unlock()
}

func (p *progress) table(cells []result.Cell) {
	if p == nil || p.w == nil || len(cells) == 0 {
		return
	}
	p.printf("\n%-9s %-52s %3s %11s %9s %10s %10s %10s %s\n", "system", "cell", "rep", "msg/s", "MB/s", "p50", "p99", "p99.9", "")
	for _, c := range cells {
		q := c.Quantiles[c.PrimaryMetric()]
		p.printf("%-9s %-52s %3d %11.0f %9.2f %10s %10s %10s %s\n", c.SystemOrDefault(), c.Name, c.Rep, c.MsgPerSec, c.MBPerSec,
			hist.FormatNs(int64(q.P50)), hist.FormatNs(int64(q.P99)), hist.FormatNs(int64(q.P999)), c.Error)
	}
}

// cellRun gathers what one cell observes besides the histograms.
type cellRun struct {
	mu      sync.Mutex
	markers []markerAt
	points  []probe.Point
}

type markerAt struct {
	t           time.Time
	kind, label string
}

func (r *cellRun) mark(t time.Time, kind, label string) {
	r.mu.Lock()
	r.markers = append(r.markers, markerAt{t, kind, label})
	r.mu.Unlock()
}

func runCell(ctx context.Context, cell *Cell, rep int, runDir, storeRoot string, opt Options, pr *progress) (result.Cell, error) {
	exp := cell.Exp
	rc := result.Cell{Name: cell.Name, System: result.SystemBrokerlab, Rep: rep, Params: map[string]string{}}
	if cell.System != "" {
		rc.System = cell.System
	}
	for _, p := range cell.Params {
		rc.Params[p.Key] = p.Value
	}
	storeDir, err := os.MkdirTemp(storeRoot, "brokerlab-store-")
	if err != nil {
		return rc, err
	}
	defer os.RemoveAll(storeDir)

	col := hist.NewCollector(hist.DefaultConfig())
	stem := result.FileStem(cell.Name, rep)
	hlogName := result.HlogName(cell.Name, rep)
	hlogF, err := os.Create(filepath.Join(runDir, hlogName))
	if err != nil {
		return rc, err
	}
	defer hlogF.Close()
	col.SetLog(hlogF)
	rc.Files.Hlog = hlogName

	run := &cellRun{}
	flushRec := col.NewRecorder()
	var flushMu sync.Mutex
	hooks := sysHooks{
		onFlush: func(ev flush.Event) {
			flushMu.Lock() // a Recorder belongs to one goroutine at a time
			flushRec.Record("flush", ev.Duration)
			flushMu.Unlock()
		},
		onRoll: func(t time.Time, start int64, prepared bool) {
			label := "roll"
			if !prepared {
				label = "roll (inline create)"
			}
			run.mark(t, result.MarkerRoll, label)
		},
	}
	if exp.Engine.Budget > 0 {
		b, err := probe.NewMemoryBudget(probe.DefaultBudgetConfig(int64(exp.Engine.Budget)))
		if err != nil {
			pr.printf("brokerlab: %s: no page-cache budget: %v (running without one)\n", cell.Name, err)
			rc.Extra = map[string]float64{"budget_applied": 0}
		} else {
			if err := b.Add(os.Getpid()); err != nil {
				pr.printf("brokerlab: %s: cannot join budget cgroup: %v\n", cell.Name, err)
			}
			defer b.Remove()
		}
	}
	var sys system
	switch {
	case cell.System == result.SystemNATS:
		sys, err = openNATSSystem(exp, storeDir)
	case opt.Namesrv != "":
		sys, err = openRemoteSystem(exp, opt.Namesrv)
	case exp.Engine.Transport == "loopback":
		sys, err = openBrokerSystem(exp, storeDir, hooks)
	default:
		sys, err = openSystem(exp.Engine, storeDir, hooks)
	}
	if err != nil {
		return rc, fmt.Errorf("open engine: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			sys.Close()
		}
	}()

	producers, consumers, lags, primary, err := buildLoad(exp, sys)
	if err != nil {
		return rc, err
	}
	rc.Primary = primary
	if exp.Workload.Prefill > 0 {
		if err := prefill(ctx, exp, sys); err != nil {
			return rc, fmt.Errorf("prefill: %w", err)
		}
		if err := sys.Settle(2 * time.Minute); err != nil {
			return rc, fmt.Errorf("prefill: %w", err)
		}
		if exp.Engine.DontNeed {
			pagecache.DropDir(sys.SegmentDir()) // start the measured phase cold
		}
	}

	// Probes: residency, vmstat, faults every interval; DONTNEED if asked.
	sampler, err := probe.NewSampler(probe.SamplerConfig{Dir: sys.SegmentDir()})
	if err != nil {
		return rc, err
	}
	pctx, stopProbes := context.WithCancel(context.WithoutCancel(ctx))
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		sampler.Run(pctx, exp.Interval.D(), func(p probe.Point) {
			run.mu.Lock()
			run.points = append(run.points, p)
			run.mu.Unlock()
			if exp.Engine.DontNeed {
				pagecache.DropDir(sys.SegmentDir())
			}
		})
	}()

	var measureFrom time.Time
	var lastPrint time.Time
	start := time.Now()
	if exp.Stall != nil {
		at := exp.Warmup.D() + exp.Stall.At.D()
		t := time.AfterFunc(at, func() {
			run.mark(time.Now(), result.MarkerStall, fmt.Sprintf("stall %v", exp.Stall.Length.D()))
			sys.Stall(exp.Stall.Length.D())
		})
		defer t.Stop()
	}
	rcfg := gen.RunConfig{
		Warmup: exp.Warmup.D(), Duration: exp.Duration.D(), Interval: exp.Interval.D(), Drain: 5 * time.Second,
		OnInterval: func(iv hist.Interval) {
			if iv.Warmup {
				return
			}
			if measureFrom.IsZero() {
				measureFrom = iv.Start
				lastPrint = iv.Start
			}
			if iv.End.Sub(lastPrint) >= opt.ProgressEvery {
				lastPrint = iv.End
				s, sv := iv.Metrics[primary], iv.Metrics[gen.MetricService]
				run.mu.Lock()
				var resMiB, dirtyMiB float64
				if n := len(run.points); n > 0 {
					resMiB, dirtyMiB = float64(run.points[n-1].Resident)/(1<<20), run.points[n-1].DirtyMiB
				}
				run.mu.Unlock()
				pr.printf("%-48s r%d t=%4.0fs %9.0f msg/s %8.2f MB/s p50 %8s p99 %8s p99.9 %8s resident %7.1f MiB dirty %6.1f MiB\n",
					cell.Name, rep, iv.End.Sub(start).Seconds(), sv.Rate, sv.MBps, hist.FormatNs(s.P50), hist.FormatNs(s.P99),
					hist.FormatNs(s.P999), resMiB, dirtyMiB)
			}
		},
	}
	res, runErr := gen.Run(ctx, rcfg, col, producers, consumers)
	stopProbes()
	pwg.Wait()
	st := sys.Stats()
	closed = true
	closeErr := sys.Close()

	if _, err := col.WriteHgrmFiles(runDir, stem+"."); err != nil {
		return rc, err
	}
	if res.MeasureFrom.IsZero() {
		res.MeasureFrom = start
	}
	fillCell(&rc, col, res, run, st, stem)
	// The catch-up of lagging consumers, from their start (the warm-up
	// included: reading the backlog is the measurement).
	for i, l := range lags {
		cu := l.CatchUp()
		sfx := ""
		if i > 0 {
			sfx = fmt.Sprintf("_%d", i)
		}
		rc.Extra["catchup_backlog_msgs"+sfx] = float64(cu.Backlog)
		rc.Extra["catchup_msgs_read"+sfx] = float64(cu.Messages)
		rc.Extra["catchup_mb_per_sec"+sfx] = cu.MBps
		rc.Extra["catchup_msg_per_sec"+sfx] = cu.MsgPerSec
		rc.Extra["catchup_seconds"+sfx] = cu.Elapsed.Seconds()
		if cu.Done {
			rc.Extra["catchup_done"+sfx] = 1
		} else {
			rc.Extra["catchup_done"+sfx] = 0
		}
	}
	if res.Status == gen.StatusInterrupted || errors.Is(ctx.Err(), context.Canceled) {
		rc.Error = "interrupted"
	}
	pr.printf("%-48s r%d done: %9.0f msg/s %8.2f MB/s p50 %8s p99 %8s p99.9 %8s\n", cell.Name, rep, rc.MsgPerSec, rc.MBPerSec,
		hist.FormatNs(int64(rc.Quantiles[primary].P50)), hist.FormatNs(int64(rc.Quantiles[primary].P99)), hist.FormatNs(int64(rc.Quantiles[primary].P999)))
	if runErr != nil {
		return rc, runErr
	}
	return rc, closeErr
}

// buildLoad makes the producers and consumers of a cell and names the
// primary latency metric: response time from the intended send for an open
// loop, service time for a closed loop.
func buildLoad(exp Experiment, sys system) ([]gen.Producer, []gen.Consumer, []*gen.LagConsumer, string, error) {
	w := exp.Workload
	mc, err := messageConfig(exp)
	if err != nil {
		return nil, nil, nil, "", err
	}
	var producers []gen.Producer
	primary := gen.MetricService
	switch w.Mode {
	case "open":
		oc := gen.DefaultOpenLoopConfig()
		oc.Rate = w.Rate
		oc.Arrival = gen.Arrival(w.Schedule)
		oc.Workers = w.Producers
		oc.Message = mc
		p, err := gen.NewOpenLoop(oc, sys.Driver())
		if err != nil {
			return nil, nil, nil, "", err
		}
		producers = append(producers, p)
		primary = gen.MetricResponse
	default:
		cc := gen.DefaultClosedLoopConfig()
		cc.Producers = w.Producers
		cc.Message = mc
		p, err := gen.NewClosedLoop(cc, sys.Driver())
		if err != nil {
			return nil, nil, nil, "", err
		}
		producers = append(producers, p)
	}
	var consumers []gen.Consumer
	var lags []*gen.LagConsumer
	src := sys.Source()
	if (w.Tailing > 0 || w.Lagging > 0) && src == nil {
		return nil, nil, nil, "", fmt.Errorf("%w: this engine configuration cannot serve consumers", ErrConfig)
	}
	queues := allQueues(exp)
	for i := 0; i < w.Tailing; i++ {
		cc := gen.DefaultConsumerConfig()
		cc.Queues = queues
		c, err := gen.NewTailConsumer(cc, src)
		if err != nil {
			return nil, nil, nil, "", err
		}
		consumers = append(consumers, c)
	}
	for i := 0; i < w.Lagging; i++ {
		lc := gen.DefaultLagConfig()
		lc.Queues = queues
		lc.BehindBytes = int64(w.LagBytes)
		c, err := gen.NewLagConsumer(lc, src)
		if err != nil {
			return nil, nil, nil, "", err
		}
		consumers = append(consumers, c)
		lags = append(lags, c)
	}
	return producers, consumers, lags, primary, nil
}

func topicNames(exp Experiment) []string {
	names := make([]string, exp.Workload.Topics)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%d", i)
	}
	return names
}

func allQueues(exp Experiment) []workloads.QueueRef {
	var qs []workloads.QueueRef
	for _, t := range topicNames(exp) {
		for q := 0; q < exp.Workload.Queues; q++ {
			qs = append(qs, workloads.QueueRef{Topic: t, QueueID: int32(q)})
		}
	}
	return qs
}

func messageConfig(exp Experiment) (gen.MessageConfig, error) {
	w := exp.Workload
	mc := gen.DefaultMessageConfig()
	mc.Seed = uint64(exp.Seed)
	var err error
	if mc.Size, err = randvar.ParseVar(w.Size); err != nil {
		return mc, fmt.Errorf("%w: workload.size: %w", ErrConfig, err)
	}
	mc.Topics = topicNames(exp)
	if mc.Topic, err = randvar.ParseVar(fmt.Sprintf("roundrobin:0-%d", w.Topics-1)); err != nil {
		return mc, err
	}
	qspec := fmt.Sprintf("%s:0-%d", w.QueueChoice, w.Queues-1)
	if w.QueueChoice == "zipf" {
		qspec = fmt.Sprintf("zipf:0-%d", w.Queues-1)
	}
	if mc.Queue, err = randvar.ParseVar(qspec); err != nil {
		return mc, fmt.Errorf("%w: queue choice: %w", ErrConfig, err)
	}
	if mc.Key, err = randvar.ParseVar("uniform:0-1000000"); err != nil {
		return mc, err
	}
	return mc, nil
}

// prefill writes Workload.Prefill bytes before the measured run (cold-read
// experiments need a backlog).
func prefill(ctx context.Context, exp Experiment, sys system) error {
	mc, err := messageConfig(exp)
	if err != nil {
		return err
	}
	fac, err := gen.NewFactory(mc)
	if err != nil {
		return err
	}
	b := fac.NewBuilder()
	var written int64
	for seq := uint64(0); written < int64(exp.Workload.Prefill); seq++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m := b.Message(seq)
		if err := sys.Driver().Send(ctx, m); err != nil {
			return err
		}
		written += int64(len(m.Body))
	}
	return nil
}

// spectrumPercentiles are the points kept of each histogram: dense towards
// the tail (1 - 10^-k for k in steps of 0.1 up to 99.999 %).
var spectrumPercentiles = func() []float64 {
	ps := []float64{0}
	for k := 0.1; k <= 5.0001; k += 0.1 {
		ps = append(ps, 100*(1-math.Pow(10, -k)))
	}
	return append(ps, 100)
}()

func spectrum(h *hdrhistogram.Histogram) []result.SpectrumPoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	pts := make([]result.SpectrumPoint, 0, len(spectrumPercentiles))
	for _, p := range spectrumPercentiles {
		pts = append(pts, result.SpectrumPoint{Percentile: p, ValueNs: float64(h.ValueAtQuantile(p))})
	}
	return pts
}

// fillCell turns what a cell measured into its result.
func fillCell(rc *result.Cell, col *hist.Collector, res gen.Result, run *cellRun, st sysStats, stem string) {
	sum := res.Summary
	// Throughput comes from the acknowledged sends (service metric, which
	// carries sizes); latency headlines from the primary metric.
	tput := sum.Metrics[gen.MetricService]
	rc.Duration = sum.End.Sub(sum.Start)
	if rc.Duration <= 0 {
		rc.Duration = time.Duration(tput.Seconds * float64(time.Second))
	}
	rc.Ops = tput.Count
	rc.Bytes = tput.Bytes
	rc.MsgPerSec = tput.Rate
	rc.MBPerSec = tput.MBps
	rc.Quantiles = map[string]result.Quantiles{}
	rc.Spectrum = map[string][]result.SpectrumPoint{}
	rc.Files.Hgrm = map[string]string{}
	rc.Files.HgrmUnitNs = col.Config().HgrmScale
	for name, s := range sum.Metrics {
		if s.Count == 0 {
			continue
		}
		rc.Quantiles[name] = result.Quantiles{P50: float64(s.P50), P90: float64(s.P90), P99: float64(s.P99),
			P999: float64(s.P999), P9999: float64(s.P9999), Max: float64(s.Max), Mean: s.Mean, Count: s.Count}
		rc.Spectrum[name] = spectrum(col.Histogram(name))
		rc.Files.Hgrm[name] = stem + "." + name + ".hgrm"
	}
	t0 := res.MeasureFrom
	run.mu.Lock()
	points := append([]probe.Point(nil), run.points...)
	markers := append([]markerAt(nil), run.markers...)
	run.mu.Unlock()
	pointAt := func(t time.Time) *probe.Point {
		var best *probe.Point
		for i := range points {
			if !points[i].Time.After(t.Add(time.Second / 2)) {
				best = &points[i]
			}
		}
		return best
	}
	for _, iv := range res.Intervals {
		if iv.Warmup {
			continue
		}
		s, sv := iv.Metrics[rc.Primary], iv.Metrics[gen.MetricService]
		p := result.Point{T: iv.End.Sub(t0).Seconds(), Rate: sv.Rate, MBps: sv.MBps, P50: float64(s.P50), P99: float64(s.P99), P999: float64(s.P999)}
		if pt := pointAt(iv.End); pt != nil {
			p.ResidentMiB = float64(pt.Resident) / (1 << 20)
			p.DirtyMiB = pt.DirtyMiB
			p.Extra = map[string]float64{"majflt": float64(pt.MajFlt), "writeback_mib": pt.WbMiB}
		}
		if f, ok := iv.Metrics["flush"]; ok && f.Count > 0 {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			p.Extra["flush_p99_ns"] = float64(f.P99)
			p.Extra["flushes"] = float64(f.Count)
		}
		if d, ok := iv.Metrics[gen.MetricSendDelay]; ok && d.Count > 0 {
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			p.Extra["send_delay_p99_ns"] = float64(d.P99)
		}
		rc.Series = append(rc.Series, p)
	}
	for _, m := range markers {
		if t := m.t.Sub(t0).Seconds(); t >= 0 {
			rc.Markers = append(rc.Markers, result.Marker{T: t, Kind: m.kind, Label: m.label})
		}
	}
	rc.Residency = residency(points, t0)
	for i, n := range st.Flush.BatchSizes {
		if n > 0 {
			rc.FlushBatches = append(rc.FlushBatches, result.BatchBucket{UpTo: int64(flush.BucketUpper(i)), Count: int64(n)})
		}
	}
	if rc.Extra == nil {
		rc.Extra = map[string]float64{}
	}
	rc.Extra["flushes"] = float64(st.Flush.Flushes)
	if st.Flush.Flushes > 0 {
		rc.Extra["flush_mean_ns"] = float64(st.Flush.FlushNanos) / float64(st.Flush.Flushes)
		rc.Extra["appends_per_flush"] = float64(st.Flush.Commits) / float64(st.Flush.Flushes)
	}
	rc.Extra["flush_timeouts"] = float64(st.Flush.Timeouts)
	rc.Extra["rolls"] = float64(st.Rolls)
	rc.Extra["inline_creates"] = float64(st.SyncCreates)
	rc.Extra["max_lock_held_ns"] = float64(st.MaxLockHeld)
	if st.CacheHitRate >= 0 {
		rc.Extra["cache_hit_ratio"] = st.CacheHitRate
	}
	for k, v := range sum.Counters {
		rc.Extra[strings.ReplaceAll(k, " ", "_")] = float64(v)
	}
	var majflt int64
	for _, p := range points {
		majflt += p.MajFlt
	}
	rc.Extra["majflt"] = float64(majflt)
}

// residency turns per-interval probe points into a segment × time matrix.
func residency(points []probe.Point, t0 time.Time) *result.Residency {
	set := map[string]bool{}
	for _, p := range points {
		for _, f := range p.Files {
			set[f.Name] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	r := &result.Residency{}
	for n := range set {
		r.Segments = append(r.Segments, n)
	}
	sort.Strings(r.Segments)
	idx := map[string]int{}
	for i, n := range r.Segments {
		idx[n] = i
	}
	r.Fraction = make([][]float64, len(r.Segments))
	for _, p := range points {
		r.T = append(r.T, p.Time.Sub(t0).Seconds())
		for s := range r.Fraction {
			r.Fraction[s] = append(r.Fraction[s], -1)
		}
		col := len(r.T) - 1
		for _, f := range p.Files {
			r.Fraction[idx[f.Name]][col] = f.Fraction()
		}
	}
	return r
}

// openSystem builds the engine for a cell.
var openSystem = func(en Engine, dir string, h sysHooks) (system, error) {
	return openStoreSystem(en, dir, h)
}
