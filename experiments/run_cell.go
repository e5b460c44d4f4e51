package experiments

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/pagecache"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/gen"
	"github.com/brokerlab/brokerlab/workloads/hist"
	"github.com/brokerlab/brokerlab/workloads/probe"
)

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

// runCell measures one repetition of a cell: it opens the cell's system
// over a fresh store under storeRoot, prefills it if asked, runs the load
// with the probes, and turns what it measured into the cell's result (its
// interval log written into runDir).
func runCell(ctx context.Context, cell *Cell, rep int, runDir, storeRoot string, opt Options, pr *progress, host hostProbe) (result.Cell, error) {
	exp := cell.Exp
	rc := skippedCell(cell, rep)
	storeDir, err := os.MkdirTemp(storeRoot, "brokerlab-store-")
	if err != nil {
		return rc, err
	}
	defer os.RemoveAll(storeDir)

	col := hist.NewCollector(hist.DefaultConfig())
	// Only the first repetition keeps its interval log: its one reader, the
	// hiccup figure, draws repetition 0 of each cell, and a run's later
	// repetitions' logs were most of results/ (result.json keeps every
	// repetition's quantiles, spectrum and series).
	var hlog *hlogFile
	if rep == 0 {
		if hlog, err = createHlog(runDir, cell.Name, rep); err != nil {
			return rc, err
		}
		defer hlog.Close()
		col.SetLog(hlog.z)
		rc.Files.Hlog = hlog.name
	}

	run := &cellRun{}
	hooks := cellHooks(col, run)
	budget := joinBudget(exp, cell.Name, pr, &rc)
	if budget != nil {
		defer budget.release()
	}
	cs := &cellSystem{open: systemOpener(cell, opt, storeDir, hooks)}
	if err := cs.openIt(); err != nil {
		return rc, fmt.Errorf("open engine: %w", err)
	}
	defer cs.closeIfOpen()
	if exp.Workload.Prefill > 0 {
		if err := cs.prefillCold(ctx, exp, opt.Namesrv == "", &rc); err != nil {
			return rc, err
		}
	}
	sys := cs.sys
	producers, consumers, lags, primary, err := buildLoad(exp, sys)
	if err != nil {
		return rc, err
	}
	rc.Primary = primary

	stopProbes, err := startProbes(ctx, exp, sys, run)
	if err != nil {
		return rc, err
	}

	var measureFrom time.Time
	var lastPrint time.Time
	start := time.Now()
	win := startWindow(host, sys, start, exp.Warmup.D(), exp.Duration.D())
	stageRec := stageRecorderOf(sys)
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
				printInterval(pr, cell.Name, rep, start, iv, primary, run)
			}
		},
	}
	res, runErr := gen.Run(ctx, rcfg, col, producers, consumers)
	win.end()
	stopProbes()
	st := sys.Stats()
	closeErr := cs.close()
	if err := hlog.Close(); err != nil {
		return rc, fmt.Errorf("hlog: %w", err)
	}
	if err := col.LogErr(); err != nil {
		return rc, err
	}
	if res.MeasureFrom.IsZero() {
		res.MeasureFrom = start
	}
	fillCell(&rc, col, res, run, st)
	rc.Extra = mergeExtra(rc.Extra, budget.extras(pr, cell.Name))
	attachPrediction(&rc, exp, st.AppendedBytes, start, res.Summary.End, res.MeasureFrom)
	if exp.Workload.Mode == "open" {
		rc.MarkSaturation(exp.Workload.Rate)
	}
	if err := win.cpu.record(&rc); err != nil && runErr == nil && closeErr == nil {
		runErr = err
	}
	recordStages(&rc, stageRec)
	win.record(&rc, st)
	recordCatchUp(&rc, lags)
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

// measureWindow is the host state and the bytes appended at the end of
// the warm-up and at the end of the run, and a child server's CPU time over
// the measured window. Its timer goroutine and the cell's goroutine share
// it: mu guards the start snapshot.
type measureWindow struct {
	host  hostProbe
	sys   system
	cpu   *cpuWindow
	timer *time.Timer // the warm-up's end
	cpuT  *time.Timer // the measured window's end

	mu        sync.Mutex
	a         hostSnap
	appendedA int64
	b         hostSnap
}

// startWindow snapshots now and again when the warm-up ends (where the
// child's CPU window begins); the CPU window ends after warmup + measured.
func startWindow(host hostProbe, sys system, start time.Time, warmup, measured time.Duration) *measureWindow {
	w := &measureWindow{host: host, sys: sys, a: host.snap(start), appendedA: sys.Stats().AppendedBytes, cpu: newCPUWindow(sys)}
	w.cpuT = time.AfterFunc(warmup+measured, w.cpu.finish)
	w.timer = time.AfterFunc(warmup, func() {
		w.cpu.begin()
		h, a := host.snap(time.Now()), sys.Stats().AppendedBytes
		w.mu.Lock()
		w.a, w.appendedA = h, a
		w.mu.Unlock()
	})
	return w
}

// end stops the timers, ends the CPU window when the run ended before it
// (error, Ctrl-C) and takes the end snapshot.
func (w *measureWindow) end() {
	w.timer.Stop()
	w.cpuT.Stop()
	w.cpu.finish()
	w.b = w.host.snap(time.Now())
}

// record puts the host's state over the window and the bytes appended in
// it (st: the system's final stats) into rc's extras.
func (w *measureWindow) record(rc *result.Cell, st sysStats) {
	w.mu.Lock()
	defer w.mu.Unlock()
	appended := st.AppendedBytes - w.appendedA
	if st.AppendedBytes == 0 {
		appended = rc.Bytes // a peer without store counters: payload bytes
	}
	rc.Extra = mergeExtra(rc.Extra, hostExtras(w.a, w.b, appended))
	rc.Extra["appended_bytes"] = float64(appended)
}

// hlogFile is a cell's gzip'd interval log. The interval log is kept
// gzip'd; .hgrm files and figures are derived from it and result.json on
// demand (brokerlab plot --out DIR).
type hlogFile struct {
	name   string // in the run directory
	f      *os.File
	z      *gzip.Writer
	closed bool
}

func createHlog(runDir, cellName string, rep int) (*hlogFile, error) {
	name := result.HlogName(cellName, rep) + ".gz"
	f, err := os.Create(filepath.Join(runDir, name))
	if err != nil {
		return nil, err
	}
	return &hlogFile{name: name, f: f, z: gzip.NewWriter(f)}, nil
}

// Close ends the gzip stream and closes the file; later calls, and calls on
// a nil hlogFile (a repetition without a log), do nothing.
func (h *hlogFile) Close() error {
	if h == nil || h.closed {
		return nil
	}
	h.closed = true
	zerr := h.z.Close()
	if ferr := h.f.Close(); zerr == nil {
		zerr = ferr
	}
	return zerr
}

// cellHooks record the engine's flushes into col's "flush" metric and its
// segment rolls as markers of run.
func cellHooks(col *hist.Collector, run *cellRun) sysHooks {
	flushRec := col.NewRecorder()
	var flushMu sync.Mutex
	return sysHooks{
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
}

// cellBudget is a cell's page-cache budget: a memory cgroup this process
// (and the children it starts) joined, its limit following the anonymous
// memory charged to it so that the page cache gets Engine.Budget
// (probe.MemoryBudget.FollowAnon). Used by the cell's goroutine only.
type cellBudget struct {
	b       *probe.MemoryBudget
	stop    func() (int64, error)
	maxAnon int64
}

// budgetFollowPeriod is how often the limit follows the anonymous memory.
const budgetFollowPeriod = 100 * time.Millisecond

// joinBudget puts this process into a page-cache budget cgroup when the
// engine asks for one (nil without a budget). A budget that cannot be made
// is recorded in rc (budget_applied 0) and the cell runs without one.
func joinBudget(exp Experiment, cellName string, pr *progress, rc *result.Cell) *cellBudget {
	if exp.Engine.Budget <= 0 {
		return nil
	}
	b, err := probe.NewMemoryBudget(probe.DefaultBudgetConfig(int64(exp.Engine.Budget)))
	if err != nil {
		pr.printf("brokerlab: %s: no page-cache budget: %v (running without one)\n", cellName, err)
		rc.Extra = map[string]float64{"budget_applied": 0}
		return nil
	}
	if err := b.Add(os.Getpid()); err != nil {
		pr.printf("brokerlab: %s: cannot join budget cgroup: %v\n", cellName, err)
	}
	return &cellBudget{b: b, stop: b.FollowAnon(int64(exp.Engine.Budget), budgetFollowPeriod)}
}

// extras stops following and returns what the cell records of its budget:
// the largest anonymous memory charged beside the page cache
// (budget_anon_max_mib). A budget whose limit could not follow is
// reported (budget_follow_failed 1): its page cache had less room.
func (cb *cellBudget) extras(pr *progress, cellName string) map[string]float64 {
	if cb == nil {
		return nil
	}
	anon, err := cb.stop()
	out := map[string]float64{"budget_anon_max_mib": float64(anon) / (1 << 20)}
	if err != nil {
		pr.printf("brokerlab: %s: the budget's limit did not follow its anonymous memory: %v\n", cellName, err)
		out["budget_follow_failed"] = 1
	}
	return out
}

// release leaves the budget and removes it.
func (cb *cellBudget) release() {
	cb.stop()
	cb.b.Remove()
}

// systemOpener opens the system a cell measures over storeDir: a NATS peer
// (in process or in a child), a remote cluster (--namesrv), a broker in a
// child process or over loopback, or the store in process.
func systemOpener(cell *Cell, opt Options, storeDir string, hooks sysHooks) func() (system, error) {
	exp := cell.Exp
	return func() (system, error) {
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
}

// cellSystem is a cell's open system, which a cold prefill closes and
// reopens.
type cellSystem struct {
	open   func() (system, error)
	sys    system
	closed bool
}

func (c *cellSystem) openIt() error {
	sys, err := c.open()
	if err != nil {
		return err
	}
	c.sys, c.closed = sys, false
	return nil
}

// close closes the system (once).
func (c *cellSystem) close() error {
	c.closed = true
	return c.sys.Close()
}

// closeIfOpen closes the system unless it was closed already (deferred
// for the error paths).
func (c *cellSystem) closeIfOpen() {
	if !c.closed {
		c.sys.Close()
	}
}

// prefillCold writes the workload's prefill and waits until consumers see
// all of it. With reopen (a system started here, not a remote cluster),
// cold means cold, the same for every path: close the store (its mappings
// go), write everything back, evict the store's files from the page cache
// (and so from the budget cgroup's), reopen, evict what recovery read, and
// record residency at t0 in rc.
func (c *cellSystem) prefillCold(ctx context.Context, exp Experiment, reopen bool, rc *result.Cell) error {
	if err := prefill(ctx, exp, c.sys); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	if err := c.sys.Settle(2 * time.Minute); err != nil {
		return fmt.Errorf("prefill: %w", err)
	}
	if !reopen {
		return nil
	}
	if err := c.close(); err != nil {
		return fmt.Errorf("prefill: close before reopen: %w", err)
	}
	syscall.Sync()
	pagecache.DropDir(c.sys.SegmentDir())
	if err := c.openIt(); err != nil {
		return fmt.Errorf("reopen after prefill: %w", err)
	}
	pagecache.DropDir(c.sys.SegmentDir())
	if res, size := dirResidency(c.sys.SegmentDir()); size > 0 {
		rc.Extra = mergeExtra(rc.Extra, map[string]float64{"resident_fraction_t0": float64(res) / float64(size),
			"resident_bytes_t0": float64(res), "backlog_bytes_t0": float64(size)})
	}
	return nil
}

// startProbes samples residency, vmstat and faults every interval into
// run (and drops the segments from the page cache each time with
// engine.dontneed) until stop, which waits for the sampler to end.
func startProbes(ctx context.Context, exp Experiment, sys system, run *cellRun) (stop func(), err error) {
	sampler, err := probe.NewSampler(probe.SamplerConfig{Dir: sys.SegmentDir()})
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sampler.Run(pctx, exp.Interval.D(), func(p probe.Point) {
			run.mu.Lock()
			run.points = append(run.points, p)
			run.mu.Unlock()
			if exp.Engine.DontNeed {
				pagecache.DropDir(sys.SegmentDir())
			}
		})
	}()
	return func() { cancel(); wg.Wait() }, nil
}

// printInterval prints a progress line for the measured interval iv.
func printInterval(pr *progress, cellName string, rep int, start time.Time, iv hist.Interval, primary string, run *cellRun) {
	s, sv := iv.Metrics[primary], iv.Metrics[gen.MetricService]
	run.mu.Lock()
	var resMiB, dirtyMiB float64
	if n := len(run.points); n > 0 {
		resMiB, dirtyMiB = float64(run.points[n-1].Resident)/(1<<20), run.points[n-1].DirtyMiB
	}
	run.mu.Unlock()
	pr.printf("%-48s r%d t=%4.0fs %9.0f msg/s %8.2f MB/s p50 %8s p99 %8s p99.9 %8s resident %7.1f MiB dirty %6.1f MiB\n",
		cellName, rep, iv.End.Sub(start).Seconds(), sv.Rate, sv.MBps, hist.FormatNs(s.P50), hist.FormatNs(s.P99),
		hist.FormatNs(s.P999), resMiB, dirtyMiB)
}

// recordCatchUp records the catch-up of lagging consumers, from their
// start (the warm-up included: reading the backlog is the measurement).
func recordCatchUp(rc *result.Cell, lags []*gen.LagConsumer) {
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
}
