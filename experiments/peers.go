package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/natsdriver"
)

// natsSystem is NATS JetStream embedded in-process: the peer system. Durable
// cells (flush=sync or group) use SyncAlways; async cells use JetStream's
// default sync interval.
type natsSystem struct {
	d   *natsdriver.Driver
	dir string
}

func openNATSSystem(exp Experiment, dir string) (*natsSystem, error) {
	cfg := natsdriver.DefaultConfig(dir)
	cfg.SyncAlways = exp.Engine.Flush != "async"
	cfg.Topics = topicNames(exp)
	cfg.Queues = exp.Workload.Queues
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

// peerCells are the NATS cells of an experiment: one per flush policy class
// (durable, async) present in the brokerlab cells, with the base workload.
func peerCells(e *Experiment, cells []Cell) []Cell {
	var out []Cell
	classes := map[string]bool{}
	for _, c := range cells {
		if c.Exp.Engine.Flush == "async" {
			classes["async"] = true
		} else {
			classes["sync"] = true
		}
	}
	for _, cls := range []string{"sync", "async"} {
		if !classes[cls] {
			continue
		}
		c := Cell{Exp: *e, System: result.SystemNATS}
		c.Exp.Engine.Flush = cls
		c.Params = []Param{{"path", "jetstream"}, {"flush", cls}}
		c.Name = "path=jetstream/flush=" + cls
		out = append(out, c)
	}
	return out
}

// fioSizes are the fixed message sizes of the cells (fio block sizes).
func fioSizes(cells []Cell) []int {
	set := map[int]bool{}
	for _, c := range cells {
		if v, ok := strings.CutPrefix(c.Exp.Workload.Size, "fixed:"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				set[n] = true
			}
		} else if n, err := strconv.Atoi(c.Exp.Workload.Size); err == nil && n > 0 {
			set[n] = true
		}
	}
	var out []int
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// runFioPeers measures the device ceiling for each block size, O_DIRECT
// with a 512-byte-aligned size only.
func runFioPeers(ctx context.Context, storeRoot string, sizes []int, runtime time.Duration, pr *progress) []result.Cell {
	if _, err := FioPath(); err != nil {
		pr.printf("brokerlab: %v\n", err)
		return nil
	}
	dir, err := os.MkdirTemp(storeRoot, "brokerlab-fio-")
	if err != nil {
		pr.printf("brokerlab: fio: %v\n", err)
		return nil
	}
	defer os.RemoveAll(dir)
	var out []result.Cell
	for _, bs := range sizes {
		for _, direct := range []bool{false, true} {
			if direct && bs%512 != 0 {
				continue
			}
			for _, s := range []string{"sync", "async", "none"} {
				if ctx.Err() != nil {
					return out
				}
				j := FioJob{Direct: direct, Sync: s, BS: bs}
				c, err := RunFio(ctx, filepath.Clean(dir), j, runtime, 256<<20)
				if err != nil {
					c.Error = err.Error()
				}
				pr.printf("fio %-44s %10.0f IOPS %9.2f MB/s %s\n", j.Name(), c.MsgPerSec, c.MBPerSec, c.Error)
				out = append(out, c)
			}
		}
	}
	return out
}

// Ratio is one headline comparison measured in the run.
type Ratio struct {
	Name  string
	Value float64
	Why   string // which cells it compares
}

// Ratios computes the headline ratios from a run's cells (medians over
// repetitions). A ratio whose inputs are missing is left out.
func Ratios(cells []result.Cell) []Ratio {
	sums := result.Aggregate(cells)
	type agg struct {
		sys, name string
		params    map[string]string
		tput, p99 float64
	}
	var all []agg
	for i, s := range sums {
		if len(s.Params) == 0 {
			sums[i].Params, _ = result.ParamMap(s.Name)
			s = sums[i]
		}
		all = append(all, agg{s.System, s.Name, s.Params, s.MsgPerSec.Median, s.Quantiles[s.Primary].P99.Median})
	}
	best := func(keep func(a agg) bool) (agg, bool) {
		var b agg
		ok := false
		for _, a := range all {
			if keep(a) && (!ok || a.tput > b.tput) {
				b, ok = a, true
			}
		}
		return b, ok
	}
	isBL := func(a agg) bool { return a.sys == result.SystemBrokerlab }
	var rs []Ratio
	add := func(name string, num, den float64, why string) {
		if den > 0 && num > 0 && !math.IsInf(num/den, 0) {
			rs = append(rs, Ratio{name, num / den, why})
		}
	}
	durBL, ok1 := best(func(a agg) bool {
		return isBL(a) && (a.params["flush"] == "sync" || a.params["flush"] == "group") && a.params["size"] == ""
	})
	durNATS, ok2 := best(func(a agg) bool { return a.sys == result.SystemNATS && a.params["flush"] == "sync" })
	if ok1 && ok2 {
		add("durable_throughput_vs_nats", durBL.tput, durNATS.tput, durBL.name+" / nats "+durNATS.name)
		add("durable_p99_vs_nats", durBL.p99, durNATS.p99, durBL.name+" / nats "+durNATS.name+" (p99, lower is better)")
	}
	asyncBL, ok1 := best(func(a agg) bool { return isBL(a) && a.params["flush"] == "async" && a.params["size"] == "" })
	asyncNATS, ok2 := best(func(a agg) bool { return a.sys == result.SystemNATS && a.params["flush"] == "async" })
	if ok1 && ok2 {
		add("async_throughput_vs_nats", asyncBL.tput, asyncNATS.tput, asyncBL.name+" / nats "+asyncNATS.name)
	}
	// direct path with large appends vs fio O_DIRECT sequential writes of the
	// same block size without syncs: bandwidth.
	for _, a := range all {
		if !isBL(a) || a.params["path"] != "direct" || a.params["size"] == "" {
			continue
		}
		for _, f := range sums {
			fp := f.Params
			if f.System == result.SystemFio && fp["path"] == "direct" && fp["flush"] == "none" && fp["size"] == a.params["size"] {
				var blMB float64
				for _, s := range sums {
					if s.System == a.sys && s.Name == a.name {
						blMB = s.MBPerSec.Median
					}
				}
				add("direct_bw_vs_fio", blMB, f.MBPerSec.Median, a.name+" / fio "+f.Name+" (MB/s)")
			}
		}
	}
	g, ok1 := best(func(a agg) bool { return isBL(a) && a.params["flush"] == "group" && a.params["size"] == "" })
	if ok1 {
		if s, ok := best(func(a agg) bool {
			return isBL(a) && a.params["flush"] == "sync" && a.params["path"] == g.params["path"] && a.params["size"] == ""
		}); ok {
			add("group_vs_sync_throughput", g.tput, s.tput, g.name+" / "+s.name)
		}
	}
	return rs
}

// WriteRatios prints the ratio lines: "RATIO <name> <value>".
func WriteRatios(w io.Writer, rs []Ratio) {
	for _, r := range rs {
		fmt.Fprintf(w, "RATIO %s %.3f\n", r.Name, r.Value)
	}
}
