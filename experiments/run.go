package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brokerlab/brokerlab/experiments/ombresult"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/hist"
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
	// ReplayNote, when a replay runs other code than the recorded run
	// (--at-head; see ReplayRevision), is recorded in the manifest's
	// warnings.
	ReplayNote string
	// AllowDirty lets a modified source tree write into the repository's
	// results/; the diff is saved beside the run.
	AllowDirty bool
	// Command is recorded in the manifest.
	Command []string
	// Namesrv, if set, runs every brokerlab cell against the broker(s)
	// registered with this name server (host:port) instead of an engine
	// started here; the engine parameters then only name the cells.
	Namesrv string
	// OMB is the workload header of the run's OMB result files (an OMB
	// workload file's fields; nil: derived from each cell).
	OMB *ombresult.Meta
}

// Outcome is what Run produced. Figures are derived from the run
// directory's files by the caller (brokerlab run, brokerlab plot).
type Outcome struct {
	RunDir string
	Cells  []result.Cell
	Status string // result.StatusOK, StatusInterrupted or StatusAborted
	// Ratios are the headline comparisons measured in this run.
	Ratios []Ratio
	// ModelChecks are the page-cache model's model-versus-measurement
	// lines (ModelChecks), also written to ratios.txt.
	ModelChecks []string
}

// Run runs every cell × repetition of e and writes the run directory. A
// cancelled ctx (Ctrl-C) stops the current cell, which is recorded as
// interrupted, and still writes complete result files.
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
		if exp.Transient {
			man.Notes = append(man.Notes, fmt.Sprintf("reference run of a transient: the file's %v warm-up and %v interval, >= %d repetitions, >= %v measured",
				exp.Warmup.D(), exp.Interval.D(), ReferenceReps, ReferenceMinDuration.D()))
			break
		}
		man.Notes = append(man.Notes, fmt.Sprintf("reference run: >= %v warm-up, >= %d repetitions, >= %v measured where the flush/writeback cycle matters",
			ReferenceWarmup.D(), ReferenceReps, ReferenceDuration.D()))
	}
	if opt.Replay {
		man.Notes = append(man.Notes, "replay of a recorded resolved config")
		if opt.ReplayNote != "" {
			man.Warnings = append(man.Warnings, opt.ReplayNote)
		}
	}
	if diff != nil {
		if err := writeSourceDiff(runDir, diff); err != nil {
			return out, err
		}
		man.SourceDiff = SourceDiffFile
		man.Warnings = append(man.Warnings, "made from a modified source tree (--allow-dirty): see "+SourceDiffFile)
	}
	pr := &progress{w: opt.Progress}
	budgetPreflight(cells, &man, pr)
	fss := mountFileSystems(ctx, cells, storeRoot, &man)
	defer fss.Close()
	if err := result.WriteManifest(runDir, man); err != nil {
		return out, err
	}
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
			for _, c := range runFioPeers(ctx, fss, storeRoot, fioJobs, rep, peerD, fioFileSize, pr) {
				c.Order = len(cells)
				out.Cells = append(out.Cells, c)
			}
		}
	}
	res := result.Result{Schema: result.SchemaVersion, Experiment: exp.Name, Cells: out.Cells}
	if err := result.WriteResult(runDir, res); err != nil {
		return out, err
	}
	if _, err := writeOMBResults(runDir, pl.All, out.Cells, opt.OMB); err != nil {
		man.Warnings = append(man.Warnings, err.Error())
	}
	if err := result.FinishRun(runDir, man, out.Cells, status); err != nil {
		return out, err
	}
	out.Status = status
	out.Ratios = ComputeRatios(exp.Pairings, pl.All, out.Cells)
	out.ModelChecks = ModelChecks(out.Cells)
	if len(out.Ratios)+len(out.ModelChecks) > 0 {
		text := ratioLines(out.Ratios)
		for _, l := range out.ModelChecks {
			text += l + "\n"
		}
		if err := result.WriteFileAtomic(filepath.Join(runDir, RatiosFile), []byte(text), 0o644); err != nil {
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
	p.printf("\n%-9s %-52s %3s %11s %9s %10s %10s %10s %10s %8s %s\n", "system", "cell", "rep", "msg/s", "MB/s", "p50", "p99", "p99.9",
		"attempted", "failed", "")
	for _, c := range cells {
		q := c.Quantiles[c.PrimaryMetric()]
		p.printf("%-9s %-52s %3d %11.0f %9.2f %10s %10s %10s %10d %8d %s\n", c.SystemOrDefault(), c.Name, c.Rep, c.MsgPerSec, c.MBPerSec,
			hist.FormatNs(int64(q.P50)), hist.FormatNs(int64(q.P99)), hist.FormatNs(int64(q.P999)), c.Attempted, c.Failed,
			strings.TrimSpace(sendsSummary(&c)+" "+cpuSummary(&c)+" "+c.Error))
	}
}

// sendsSummary names a cell's failures by code and its saturation.
func sendsSummary(c *result.Cell) string {
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(c.FailedByCode)) {
		parts = append(parts, fmt.Sprintf("%s=%d", code, c.FailedByCode[code]))
	}
	if c.Saturated {
		parts = append(parts, fmt.Sprintf("SATURATED (%.0f of %.0f msg/s offered)", c.MsgPerSec, c.OfferedRate))
	}
	return strings.Join(parts, " ")
}

// openSystem builds the engine for a cell.
var openSystem = func(en Engine, dir string, h sysHooks) (system, error) {
	return openStoreSystem(en, dir, h)
}
