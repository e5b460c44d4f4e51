package experiments

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/pagecache"
	"github.com/brokerlab/brokerlab/experiments/result"
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
	// Reference applies the experiment's reference overrides and the
	// reference minimums (60 s warm-up, 5 repetitions, 5 min measured when
	// the flush/writeback cycle matters).
	Reference bool
	// Replay runs the experiment exactly as given (a run's recorded
	// resolved config): Quick, Reference, Duration and Repetitions are
	// refused.
	Replay bool
	// AllowDirty lets a modified source tree write into the repository's
	// results/; the diff is saved beside the run.
	AllowDirty bool
	// Command is recorded in the manifest.
	Command []string
	// Namesrv, if set, runs every brokerlab cell against the broker(s)
	// registered with this name server (host:port) instead of an engine
	// started here; the engine parameters then only name the cells.
	Namesrv string
}

// Outcome is what Run produced. Figures are derived from the run
// directory's files by the caller (brokerlab run, brokerlab plot).
type Outcome struct {
	RunDir string
	Cells  []result.Cell
	Status string // result.StatusOK, StatusInterrupted or StatusAborted
	// Ratios are the headline comparisons measured in this run.
	Ratios []Ratio
}

// Run runs every cell × repetition of e and writes the run directory. A
// cancelled ctx (Ctrl-C) stops the current cell, which is recorded as
// interrupted, and still writes complete result files.
// Plan is what Run will do with an experiment and its options: the
// resolved config (overrides and minimums applied), the cells of
// brokerlab and NATS in declaration order with their own measured
// durations, and the fio jobs.
type Plan struct {
	Exp   Experiment
	All   []Cell // every declared cell, fio's included (the pairings' selectors)
	Cells []Cell
	Fio   []FioJob
}

// NewPlan resolves e with opt's overrides (--quick, --reference,
// --duration, --reps; a replay takes e as recorded) and validates it.
func NewPlan(e *Experiment, opt Options) (Plan, error) {
	var pl Plan
	exp := *e
	switch {
	case opt.Replay && (opt.Quick || opt.Reference || opt.Duration > 0 || opt.Repetitions > 0):
		return pl, fmt.Errorf("%w: a replay reruns the recorded config: no --quick, --reference, --duration or --reps", ErrConfig)
	case opt.Quick && opt.Reference:
		return pl, fmt.Errorf("%w: --quick and --reference exclude each other", ErrConfig)
	case opt.Replay:
	default:
		exp.Mode = ""
		if opt.Quick {
			exp.ApplyQuick()
		}
		if opt.Duration > 0 {
			exp.Duration = Duration(opt.Duration)
		}
		if opt.Repetitions > 0 {
			exp.Repetitions = opt.Repetitions
		}
		if opt.Reference {
			exp.ApplyReference() // after the overrides: the minimums hold
		}
	}
	if err := exp.Validate(); err != nil {
		return pl, err
	}
	all, err := exp.AllCells()
	if err != nil {
		return pl, err
	}
	var cells []Cell
	for _, c := range all {
		if c.System != result.SystemFio {
			cells = append(cells, c)
		}
	}
	cellDurations(&exp, cells)
	pl = Plan{Exp: exp, All: all, Cells: cells}
	if slices.Contains(exp.Peers, "fio") {
		pl.Fio = fioPlan(cells)
	}
	return pl, nil
}

// PeerDuration is the measured time of each fio job.
func (pl Plan) PeerDuration() time.Duration {
	if pl.Exp.PeerDuration > 0 {
		return pl.Exp.PeerDuration.D()
	}
	return pl.Exp.Duration.D()
}

// Estimate is the planned wall time: every repetition runs each cell's
// warm-up, measured time and settle pause, and each fio job. Setup
// (prefill, file systems, child processes) and the drain come on top.
func (pl Plan) Estimate() time.Duration {
	perRep := time.Duration(len(pl.Fio)) * pl.PeerDuration()
	for _, c := range pl.Cells {
		perRep += pl.Exp.Warmup.D() + c.Exp.Duration.D() + pl.Exp.Settle.D()
	}
	return time.Duration(pl.Exp.Repetitions) * perRep
}

// WritePlan prints the plan: the resolved run, one line per cell with its
// measured time, the fio jobs and the estimate.
func WritePlan(w io.Writer, pl Plan) {
	e := &pl.Exp
	mode := e.Mode
	if mode == "" {
		mode = "default"
	}
	fmt.Fprintf(w, "%s (%s): %d cells + %d fio jobs × %d repetitions, %v warm-up, %v settle, seed %d\n",
		e.Name, mode, len(pl.Cells), len(pl.Fio), e.Repetitions, e.Warmup.D(), e.Settle.D(), e.Seed)
	for _, c := range pl.Cells {
		sys := c.System
		if sys == "" {
			sys = "brokerlab"
		}
		fmt.Fprintf(w, "  %-9s %-64s %v measured\n", sys, c.Name, c.Exp.Duration.D())
	}
	for _, j := range pl.Fio {
		fmt.Fprintf(w, "  fio       %-64s %v measured\n", j.Name(), pl.PeerDuration())
	}
	fmt.Fprintf(w, "estimate: %v (cells, fio and settle pauses; setup comes on top)\n", pl.Estimate().Round(time.Second))
}

func Run(ctx context.Context, e *Experiment, opt Options) (Outcome, error) {
	var out Outcome
	pl, err := NewPlan(e, opt)
	if err != nil {
		return out, err
	}
	exp, cells, fioJobs := pl.Exp, pl.Cells, pl.Fio // cells: brokerlab's and NATS's, in declaration order
	if opt.OutRoot == "" {
		opt.OutRoot = "results"
	}
	diff, err := defaultSourceState().checkSource(opt.OutRoot, opt.AllowDirty)
	if err != nil {
		return out, err
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = 10 * time.Second
	}
	storeRoot := opt.StoreRoot
	if storeRoot == "" {
		storeRoot = os.TempDir()
	}
	cfgJSON, _ := json.Marshal(exp)
	stamp := result.RunStamp(time.Now(), cfgJSON)
	runDir, err := result.CreateRunDir(opt.OutRoot, exp.Name, stamp)
	if err != nil {
		return out, err
	}
	out.RunDir = runDir
	man := result.CollectManifest(storeRoot, exp, exp.Seed)
	man.Experiment = exp.Name
	man.Command = opt.Command
	man.Mode = exp.Mode
	switch exp.Mode {
	case "quick":
		man.Notes = append(man.Notes, "QUICK run: --quick overrides applied (short warm-up and measurement; functional check, not reference numbers)")
	case "reference":
		man.Notes = append(man.Notes, fmt.Sprintf("reference run: >= %v warm-up, >= %d repetitions, >= %v measured where the flush/writeback cycle matters",
			ReferenceWarmup.D(), ReferenceReps, ReferenceDuration.D()))
	}
	if opt.Replay {
		man.Notes = append(man.Notes, "replay of a recorded resolved config")
	}
	if diff != nil {
		if err := writeSourceDiff(runDir, diff); err != nil {
			return out, err
		}
		man.SourceDiff = SourceDiffFile
		man.Warnings = append(man.Warnings, "made from a modified source tree (--allow-dirty): see "+SourceDiffFile)
	}
	fss := mountFileSystems(ctx, cells, storeRoot, &man)
	defer fss.Close()
	if err := result.WriteManifest(runDir, man); err != nil {
		return out, err
	}
	pr := &progress{w: opt.Progress}
	peerD := pl.PeerDuration()
	pr.printf("brokerlab: %s: %d cells + %d fio ceilings × %d repetitions, %v warm-up + %v each, order shuffled per repetition (seed %d), ≈ %v in all → %s\n",
		exp.Name, len(cells), len(fioJobs), exp.Repetitions, exp.Warmup.D(), exp.Duration.D(), exp.Seed,
		pl.Estimate().Round(time.Second), runDir)
	if exp.Mode == "quick" {
		pr.printf("brokerlab: QUICK run (--quick): short durations, a functional check, not reference numbers\n")
	}
	host := hostProbe{procRoot: "/proc", devices: deviceNames(man.Store)}
	status := result.StatusOK
	for rep := 0; rep < exp.Repetitions && status == result.StatusOK; rep++ {
		for pos, i := range cellOrder(len(cells), exp.Seed, rep) {
			if ctx.Err() != nil {
				status = result.StatusInterrupted
				break
			}
			settleHost(ctx, exp.Settle.D())
			root, err := fss.root(cells[i].Exp.Engine.FS, storeRoot)
			var c result.Cell
			if err == nil {
				c, err = runCell(ctx, &cells[i], rep, runDir, root, opt, pr, host)
			} else {
				c = skippedCell(&cells[i], rep)
			}
			c.Order = pos
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
		if status == result.StatusOK && len(fioJobs) > 0 && ctx.Err() == nil {
			settleHost(ctx, exp.Settle.D())
			for _, c := range runFioPeers(ctx, fss, storeRoot, fioJobs, cells, out.Cells, rep, peerD, fioFileSize, pr) {
				c.Order = len(cells)
				out.Cells = append(out.Cells, c)
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
	out.Ratios = ComputeRatios(exp.Pairings, pl.All, out.Cells)
	if len(out.Ratios) > 0 {
		if err := result.WriteFileAtomic(filepath.Join(runDir, RatiosFile), []byte(ratioLines(out.Ratios)), 0o644); err != nil {
			return out, err
		}
	}
	pr.table(out.Cells)
	return out, nil
}

// RatiosFile holds a run's RATIO lines.
const RatiosFile = "ratios.txt"

// fioFileSize is the file an O_DIRECT ceiling job writes (the page cache
// plays no part, so its size does not need to exceed RAM); buffered jobs
// split it between their jobs.
const fioFileSize = 1 << 30

// cellOrder is the order of the cells in repetition rep: a permutation
// drawn from the seed, different in every repetition, so that drift over a
// run (writeback debt, thermal state, other tenants) does not always hit
// the same cell.
func cellOrder(n int, seed int64, rep int) []int {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(rep)+1))
	return r.Perm(n)
}

// settleHost writes back everything dirty (sync(2)), waits (bounded) until
// the kernel's Dirty + Writeback fall below 32 MiB, then pauses d, so that
// one cell's writeback is not measured in the next.
func settleHost(ctx context.Context, d time.Duration) {
	if ctx.Err() != nil {
		return
	}
	syscall.Sync()
	deadline := time.Now().Add(max(5*d, time.Second))
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if kib, ok := readDirtyKiB("/proc"); !ok || kib < 32<<10 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// deviceNames are the diskstats names of the store's device: the mount
// source's base name (a partition) and the whole disk.
func deviceNames(st result.StoreInfo) []string {
	var out []string
	if strings.HasPrefix(st.Device, "/dev/") {
		out = append(out, filepath.Base(st.Device))
	}
	if st.BlockDevice != "" && st.BlockDevice != result.Unknown {
		out = append(out, st.BlockDevice)
	}
	return out
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
			hist.FormatNs(int64(q.P50)), hist.FormatNs(int64(q.P99)), hist.FormatNs(int64(q.P999)), strings.TrimSpace(cpuSummary(&c)+" "+c.Error))
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

// skippedCell is a cell's result before (or instead of) its measurement:
// name, system, repetition and parameters.
func skippedCell(cell *Cell, rep int) result.Cell {
	rc := result.Cell{Name: cell.Name, System: result.SystemBrokerlab, Rep: rep, Params: map[string]string{}}
	if cell.System != "" {
		rc.System = cell.System
	}
	for _, p := range cell.Params {
		rc.Params[p.Key] = p.Value
	}
	return rc
}

func runCell(ctx context.Context, cell *Cell, rep int, runDir, storeRoot string, opt Options, pr *progress, host hostProbe) (result.Cell, error) {
	exp := cell.Exp
	rc := skippedCell(cell, rep)
	storeDir, err := os.MkdirTemp(storeRoot, "brokerlab-store-")
	if err != nil {
		return rc, err
	}
	defer os.RemoveAll(storeDir)

	col := hist.NewCollector(hist.DefaultConfig())
	// The interval log is kept gzip'd; .hgrm files and figures are derived
	// from it and result.json on demand (brokerlab plot --out DIR).
	hlogName := result.HlogName(cell.Name, rep) + ".gz"
	hlogF, err := os.Create(filepath.Join(runDir, hlogName))
	if err != nil {
		return rc, err
	}
	hlogZ := gzip.NewWriter(hlogF)
	hlogClosed := false
	closeHlog := func() error {
		if hlogClosed {
			return nil
		}
		hlogClosed = true
		zerr := hlogZ.Close()
		if ferr := hlogF.Close(); zerr == nil {
			zerr = ferr
		}
		return zerr
	}
	defer closeHlog()
	col.SetLog(hlogZ)
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
	open := func() (system, error) {
		switch {
		case cell.System == result.SystemNATS && exp.Engine.Transport == TransportProcess:
			return openProcNATSSystem(exp, storeDir)
		case cell.System == result.SystemNATS:
			return openNATSSystem(exp, storeDir)
		case opt.Namesrv != "":
			return openRemoteSystem(exp, opt.Namesrv)
		case exp.Engine.Transport == TransportProcess:
			return openProcBrokerSystem(exp, storeDir)
		case exp.Engine.Transport == "loopback":
			return openBrokerSystem(exp, storeDir, hooks)
		}
		return openSystem(exp.Engine, storeDir, hooks)
	}
	sys, err := open()
	if err != nil {
		return rc, fmt.Errorf("open engine: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			sys.Close()
		}
	}()

	if exp.Workload.Prefill > 0 {
		if err := prefill(ctx, exp, sys); err != nil {
			return rc, fmt.Errorf("prefill: %w", err)
		}
		if err := sys.Settle(2 * time.Minute); err != nil {
			return rc, fmt.Errorf("prefill: %w", err)
		}
		if opt.Namesrv == "" {
			// Cold means cold, the same for every path: close the store (its
			// mappings go), write everything back, evict the store's files
			// from the page cache (and so from the budget cgroup's), reopen,
			// evict what recovery read, and record residency at t0.
			closed = true
			if err := sys.Close(); err != nil {
				return rc, fmt.Errorf("prefill: close before reopen: %w", err)
			}
			syscall.Sync()
			segDir := sys.SegmentDir()
			pagecache.DropDir(segDir)
			if sys, err = open(); err != nil {
				return rc, fmt.Errorf("reopen after prefill: %w", err)
			}
			closed = false
			pagecache.DropDir(sys.SegmentDir())
			if res, size := dirResidency(sys.SegmentDir()); size > 0 {
				rc.Extra = mergeExtra(rc.Extra, map[string]float64{"resident_fraction_t0": float64(res) / float64(size),
					"resident_bytes_t0": float64(res), "backlog_bytes_t0": float64(size)})
			}
		}
	}
	producers, consumers, lags, primary, err := buildLoad(exp, sys)
	if err != nil {
		return rc, err
	}
	rc.Primary = primary

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
	// Host state and bytes appended at the end of warm-up and at the end.
	var hostMu sync.Mutex
	hostA := host.snap(start)
	appendedA := sys.Stats().AppendedBytes
	stageRec := stageRecorderOf(sys)
	// A server in a child process: its CPU time over the measured window.
	cpu := newCPUWindow(sys)
	cpuEnd := time.AfterFunc(exp.Warmup.D()+exp.Duration.D(), cpu.finish)
	hostT := time.AfterFunc(exp.Warmup.D(), func() {
		cpu.begin()
		h, a := host.snap(time.Now()), sys.Stats().AppendedBytes
		hostMu.Lock()
		hostA, appendedA = h, a
		hostMu.Unlock()
	})
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
		OnStart: func(env gen.Env) {
			if stageRec != nil {
				stageRec.MeasureFrom(env.MeasureFrom) // the breakdown covers the measured sends
			}
		},
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
	hostT.Stop()
	cpuEnd.Stop()
	cpu.finish() // when the run ended before the window's end (error, Ctrl-C)
	hostB := host.snap(time.Now())
	stopProbes()
	pwg.Wait()
	st := sys.Stats()
	closed = true
	closeErr := sys.Close()
	if err := closeHlog(); err != nil {
		return rc, fmt.Errorf("hlog: %w", err)
	}
	if err := col.LogErr(); err != nil {
		return rc, err
	}
	if res.MeasureFrom.IsZero() {
		res.MeasureFrom = start
	}
	fillCell(&rc, col, res, run, st)
	if err := cpu.record(&rc); err != nil && runErr == nil && closeErr == nil {
		runErr = err
	}
	recordStages(&rc, stageRec)
	hostMu.Lock()
	appended := st.AppendedBytes - appendedA
	if st.AppendedBytes == 0 {
		appended = rc.Bytes // a peer without store counters: payload bytes
	}
	rc.Extra = mergeExtra(rc.Extra, hostExtras(hostA, hostB, appended))
	rc.Extra["appended_bytes"] = float64(appended)
	hostMu.Unlock()
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
	pr.printf("%-48s r%d done: %9.0f msg/s %8.2f MB/s p50 %8s p99 %8s p99.9 %8s%s\n", cell.Name, rep, rc.MsgPerSec, rc.MBPerSec,
		hist.FormatNs(int64(rc.Quantiles[primary].P50)), hist.FormatNs(int64(rc.Quantiles[primary].P99)), hist.FormatNs(int64(rc.Quantiles[primary].P999)),
		cpuSummary(&rc))
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

// mergeExtra copies add into dst (allocating it when nil).
func mergeExtra(dst, add map[string]float64) map[string]float64 {
	if dst == nil {
		dst = map[string]float64{}
	}
	for k, v := range add {
		dst[k] = v
	}
	return dst
}

// dirResidency sums the page-cache residency (mincore) of a directory's
// files: resident and total bytes.
func dirResidency(dir string) (resident, size int64) {
	frs, err := pagecache.ResidencyDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, f := range frs {
		resident += f.ResidentBytes()
		size += f.Size
	}
	return resident, size
}

// fillCell turns what a cell measured into its result.
func fillCell(rc *result.Cell, col *hist.Collector, res gen.Result, run *cellRun, st sysStats) {
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
	for name, s := range sum.Metrics {
		if s.Count == 0 {
			continue
		}
		rc.Quantiles[name] = result.Quantiles{P50: float64(s.P50), P90: float64(s.P90), P99: float64(s.P99),
			P999: float64(s.P999), P9999: float64(s.P9999), Max: float64(s.Max), Mean: s.Mean, Count: s.Count}
		rc.Spectrum[name] = spectrum(col.Histogram(name))
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
		if st.ReplicationLagAt != nil {
			if lag, ok := st.ReplicationLagAt(iv.End); ok {
				if p.Extra == nil {
					p.Extra = map[string]float64{}
				}
				p.Extra["replication_lag_bytes"] = float64(lag)
			}
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
