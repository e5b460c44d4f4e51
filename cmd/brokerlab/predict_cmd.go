package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/workloads/pagemodel"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

func init() { register(newPredictCmd) }

// errPredictRate: a closed loop's append rate is not predicted.
var errPredictRate = errors.New("predict: closed loop: the append rate is an input, not predicted; give --mbps")

func newPredictCmd() *cobra.Command {
	var (
		quick, reference, asJSON bool
		mbps, deviceMBps         float64
		overhead                 int
		procRoot                 string
	)
	cmd := &cobra.Command{
		Use:   "predict EXPERIMENT.yaml",
		Short: "Predict each cell's page cache: resident and dirty bytes, writeback and throttle onsets",
		Long: `Evaluate the page-cache model (workloads/pagemodel) for every cell of an
experiment: from the workload's append rate (open loop: rate × (mean message
size + --record-overhead); closed loop: --mbps), the segment size, write path,
flush policy, budget, retention and page drops, and the kernel's writeback
settings read from /proc/sys/vm (dirty_background_ratio/bytes,
dirty_ratio/bytes, dirty_expire_centisecs, dirty_writeback_centisecs) and
MemAvailable, it prints when background writeback starts and when appends are
throttled, and the resident and dirty bytes at the end of the cell's warm-up
plus measured time; --json prints every prediction with its per-segment
timelines. Runs store the same prediction beside their residency.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := experiments.Load(args[0])
			if err != nil {
				return err
			}
			switch {
			case quick:
				e.ApplyQuick()
			case reference:
				e.ApplyReference()
			}
			cells, err := e.Cells()
			if err != nil {
				return err
			}
			k, err := pagemodel.ReadKernel(procRoot, "")
			if err != nil {
				return err
			}
			var preds []pagemodel.Prediction
			var names []string
			for _, c := range cells {
				if c.System != "" {
					continue // peers have no store
				}
				w, err := appendRate(c.Exp, mbps, overhead)
				if err != nil {
					return fmt.Errorf("%s: %w", c.Name, err)
				}
				in := experiments.ModelInput(c.Exp, w, k)
				in.DeviceBps = deviceMBps * 1e6
				p, err := pagemodel.Predict(in)
				if err != nil {
					return fmt.Errorf("%s: %w", c.Name, err)
				}
				preds, names = append(preds, p), append(names, c.Name)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", " ")
				return enc.Encode(map[string]any{"kernel": k, "cells": names, "predictions": preds})
			}
			fmt.Fprintf(out, "kernel: dirtyable %s, background %v%%/%d B, dirty %v%%/%d B, expire %v, flusher every %v, per-cgroup writeback %v\n",
				mibs(k.Dirtyable), k.DirtyBackgroundRatio, k.DirtyBackgroundBytes, k.DirtyRatio, k.DirtyBytes, k.Expire, k.Period, k.CgroupWriteback)
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "cell\tappend MB/s\tbackground\tthrottle level\twriteback at\tthrottled at\tresident\tdirty\t")
			for i, p := range preds {
				n := len(p.T) - 1
				fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", names[i], p.Input.AppendBps/1e6, mibs(p.Background), mibs(p.ThrottleLevel),
					onset(p.BackgroundAt), onset(p.ThrottleAt), mibs(p.Resident[n]), mibs(p.Dirty[n]))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			seen := map[string]bool{}
			for _, p := range preds {
				for _, note := range p.Notes {
					if !seen[note] {
						seen[note] = true
						fmt.Fprintf(out, "note: %s\n", note)
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&quick, "quick", false, "apply the experiment's --quick overrides")
	f.BoolVar(&reference, "reference", false, "apply the experiment's --reference overrides")
	f.BoolVar(&asJSON, "json", false, "print the predictions as JSON (per-segment timelines included)")
	f.Float64Var(&mbps, "mbps", 0, "append rate in MB/s (required for closed-loop workloads; overrides an open loop's)")
	f.Float64Var(&deviceMBps, "device-mbps", 0, "the device's writeback rate in MB/s (0: unknown, taken to keep up)")
	f.IntVar(&overhead, "record-overhead", 128, "stored bytes per message beside its payload (record header, topic, properties)")
	f.StringVar(&procRoot, "proc", "/proc", "proc file system to read the kernel settings from")
	return cmd
}

// appendRate is the bytes/s the store appends: --mbps when given, else an
// open loop's rate × (mean message size + overhead).
func appendRate(e experiments.Experiment, mbps float64, overhead int) (float64, error) {
	if mbps > 0 {
		return mbps * 1e6, nil
	}
	if e.Workload.Mode != "open" || e.Workload.Rate <= 0 {
		return 0, errPredictRate
	}
	v, err := randvar.ParseVar(e.Workload.Size)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(uint64(e.Seed), 1))
	const draws = 10000
	var sum float64
	for range draws {
		sum += float64(v.Uint64(rng))
	}
	return e.Workload.Rate * (sum/draws + float64(overhead)), nil
}

func mibs(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func onset(t float64) string {
	if t < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2fs", t)
}
