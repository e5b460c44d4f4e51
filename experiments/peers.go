package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/natsdriver"
)

// natsSystem is NATS JetStream embedded in this process, listening on
// 127.0.0.1 and driven by nats.go over loopback TCP: the peer of brokerlab's
// broker over loopback. Durable cells (flush=sync) use SyncAlways; async
// cells use JetStream's default sync interval.
type natsSystem struct {
	d   *natsdriver.Driver
	dir string
}

func openNATSSystem(exp Experiment, dir string) (*natsSystem, error) {
	cfg := natsdriver.DefaultConfig(dir)
	cfg.SyncAlways = durableFlush(exp.Engine.Flush)
	cfg.Topics = topicNames(exp)
	cfg.Queues = exp.Workload.Queues
	cfg.Loopback = exp.Engine.Transport == "loopback"
	d, err := natsdriver.Open(cfg)
	if err != nil {
		return nil, err
	}
	return &natsSystem{d: d, dir: d.StoreDir()}, nil
}

func (s *natsSystem) Driver() workloads.Driver   { return s.d }
func (s *natsSystem) Source() workloads.Source   { return s.d }
func (s *natsSystem) SegmentDir() string         { return s.dir }
func (s *natsSystem) Stats() sysStats            { return sysStats{CacheHitRate: -1} }
func (s *natsSystem) Stall(time.Duration)        {}
func (s *natsSystem) Settle(time.Duration) error { return s.d.Flush(context.Background()) }
func (s *natsSystem) Close() error               { return s.d.Close() }

// durableFlush reports whether a flush policy acknowledges after fsync.
func durableFlush(f string) bool { return f != "async" }

// peerCells are the NATS cells of an experiment: one for each brokerlab cell
// driven over loopback TCP (transport loopback or process), with the same
// workload (size, producers, loop type, rate, batch), the matching
// durability (SyncAlways for sync, group and rmqgroup; the default sync
// interval for async) and the same transport: the mirror of a process cell
// runs the NATS server in a child process too (openProcNATSSystem). NATS is
// always driven over loopback TCP, so it is never paired with an
// in-process cell.
func peerCells(cells []Cell) []Cell {
	var out []Cell
	seen := map[string]bool{}
	for _, c := range cells {
		tr := c.Exp.Engine.Transport
		if c.System != "" || (tr != "loopback" && tr != TransportProcess) {
			continue
		}
		cls := "async"
		if durableFlush(c.Exp.Engine.Flush) {
			cls = "sync"
		}
		n := Cell{Exp: c.Exp, System: result.SystemNATS}
		n.Exp.Engine.Flush = cls
		n.Exp.Engine.Path = "jetstream"
		n.Params = []Param{{"path", "jetstream"}, {"flush", cls}, {"transport", tr}}
		for _, p := range c.Params {
			switch p.Key {
			case "size", "conc", "producers", "rate", "batch":
				n.Params = append(n.Params, p)
			}
		}
		n.Name = paramsName(n.Params)
		if !seen[n.Name] {
			seen[n.Name] = true
			out = append(out, n)
		}
	}
	return out
}

func paramsName(ps []Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, "/")
}

// AllCells is every cell a run measures: brokerlab's (Cells), the NATS
// peers mirroring the loopback cells when peers lists nats, and the fio
// ceilings planned from the in-process cells when peers lists fio.
func (e *Experiment) AllCells() ([]Cell, error) {
	cells, err := e.Cells()
	if err != nil {
		return nil, err
	}
	out := slices.Clone(cells)
	if slices.Contains(e.Peers, "nats") {
		out = append(out, peerCells(cells)...)
	}
	if slices.Contains(e.Peers, "fio") {
		for _, j := range fioPlan(cells) {
			out = append(out, j.planCell())
		}
	}
	return out, nil
}

// fixedSize returns a cell's fixed message size, 0 for a distribution.
func fixedSize(spec string) int {
	n, err := strconv.Atoi(sizeKey(spec))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// fioPattern maps a flush policy onto the fio sync pattern with the same
// acknowledgement point: fdatasync per write (sync), every N writes swept
// over GroupSweep (group, rmqgroup), O_DSYNC writes (dsync), none (async:
// the page cache).
func fioPattern(flushKind string) string {
	switch flushKind {
	case "sync":
		return "sync"
	case "dsync":
		return "dsync"
	case "async":
		return "none"
	}
	return "group"
}

// fioPlan lists the ceilings for the brokerlab cells (in process or over
// loopback: the device is the same) with a fixed message size: for each (size, producers, pattern), an O_DIRECT job
// (a device ceiling; needs a 512-byte multiple) and, for the no-sync
// pattern, a buffered job (the page-cache ceiling). A size that O_DIRECT
// cannot write gets a buffered job with the sync pattern instead.
func fioPlan(cells []Cell) []FioJob {
	var out []FioJob
	seen := map[string]bool{}
	add := func(j FioJob) {
		if !seen[j.Name()] {
			seen[j.Name()] = true
			out = append(out, j)
		}
	}
	for _, c := range cells {
		if c.System != "" {
			continue
		}
		bs := fixedSize(c.Exp.Workload.Size)
		if bs == 0 {
			continue
		}
		pat := fioPattern(c.Exp.Engine.Flush)
		conc := c.Exp.Workload.Producers
		fs := c.Exp.Engine.FS
		if bs%512 == 0 {
			add(FioJob{Direct: true, Sync: pat, BS: bs, Conc: conc, FS: fs})
		} else if pat != "none" {
			add(FioJob{Sync: pat, BS: bs, Conc: conc, FS: fs})
		}
		if pat == "none" {
			add(FioJob{Sync: "none", BS: bs, Conc: conc, FS: fs})
		}
	}
	return out
}

// planCell is the job as a cell, for pairing selectors.
func (j FioJob) planCell() Cell {
	c := Cell{System: result.SystemFio, Name: j.Name()}
	c.Exp.Engine.Path = "buffered"
	if j.Direct {
		c.Exp.Engine.Path = "direct"
	}
	c.Exp.Engine.Flush = j.Sync
	c.Exp.Engine.Transport = "inproc"
	c.Exp.Engine.FS = j.FS
	c.Exp.Workload = Workload{Mode: "closed", Producers: j.Conc, Size: "fixed:" + strconv.Itoa(j.BS), Batch: 1}
	ps, _ := result.ParseName(j.Name())
	for _, p := range ps {
		c.Params = append(c.Params, Param{p.Key, p.Value})
	}
	return c
}

// GroupSweep are the writes per fdatasync a group ceiling sweeps. Its
// envelope (the best of them) is the ceiling: nothing in it comes from a
// brokerlab measurement, so a cell's batching cannot move its own ceiling.
var GroupSweep = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// runGroupEnvelope runs a group job at every batch of sweep (GroupSweep), sharing the
// job's runtime (each point measured for each), and returns the best as
// the ceiling, with each batch's rate in Extra ("every_<N>_iops") and the
// best batch as fsync_every.
func runGroupEnvelope(ctx context.Context, root string, j FioJob, sweep []int, each time.Duration, fileSize int64) (result.Cell, error) {
	var best result.Cell
	rates := map[string]float64{}
	var errs []error
	for _, n := range sweep {
		if ctx.Err() != nil {
			return best, ctx.Err()
		}
		jj := j
		jj.Every = n
		c, err := runFioIn(ctx, root, jj, each, fileSize)
		if err != nil {
			errs = append(errs, fmt.Errorf("every %d: %w", n, err))
			continue
		}
		rates[fmt.Sprintf("every_%d_iops", n)] = c.MsgPerSec
		if best.Name == "" || c.MsgPerSec > best.MsgPerSec {
			best = c
		}
	}
	if best.Name == "" {
		c := FioCell(j)
		return c, errors.Join(errs...)
	}
	best.Extra = mergeExtra(best.Extra, rates)
	best.Extra["envelope_points"] = float64(len(rates))
	return best, nil
}

// runFioPeers runs the planned ceilings of one repetition after its
// brokerlab cells (a group job sweeps its batch: runGroupEnvelope).
func runFioPeers(ctx context.Context, fss *fileSystems, storeRoot string, jobs []FioJob, rep int,
	runtime time.Duration, fileSize int64, pr *progress) []result.Cell {
	if len(jobs) == 0 {
		return nil
	}
	if _, err := FioPath(); err != nil {
		pr.printf("brokerlab: %v\n", err)
		return nil
	}
	var out []result.Cell
	for _, j := range jobs {
		if ctx.Err() != nil {
			return out
		}
		root, err := fss.root(j.FS, storeRoot)
		if err != nil {
			c := FioCell(j)
			c.Rep = rep
			c.Error = err.Error()
			out = append(out, c)
			continue
		}
		var c result.Cell
		if j.Sync == "group" {
			// The sweep shares the job's runtime, at least 500 ms a point.
			each := max(runtime/time.Duration(len(GroupSweep)), 500*time.Millisecond)
			c, err = runGroupEnvelope(ctx, root, j, GroupSweep, each, fileSize)
		} else {
			c, err = runFioIn(ctx, root, j, runtime, fileSize)
		}
		if err != nil {
			c.Error = err.Error()
		}
		c.Rep = rep
		pr.printf("fio %-58s %10.0f IOPS %9.2f MiB/s %s\n", j.Name(), c.MsgPerSec, c.MBPerSec*1e6/(1<<20), c.Error)
		out = append(out, c)
	}
	return out
}

// ratioLines formats the ratios for ratios.txt.
func ratioLines(rs []Ratio) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintln(&b, r.String())
	}
	return b.String()
}

// runFioIn runs one ceiling job in a fresh directory under root (the
// store root, or the mount of the job's file system).
func runFioIn(ctx context.Context, root string, j FioJob, runtime time.Duration, fileSize int64) (result.Cell, error) {
	dir, err := os.MkdirTemp(root, "brokerlab-fio-")
	if err != nil {
		c := FioCell(j)
		return c, err
	}
	defer os.RemoveAll(dir)
	return RunFio(ctx, filepath.Clean(dir), j, runtime, fileSize)
}
