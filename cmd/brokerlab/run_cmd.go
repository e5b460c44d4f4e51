package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/plots"
)

func init() { register(newRunCmd) }

func newRunCmd() *cobra.Command {
	var (
		out      string
		store    string
		duration time.Duration
		quick    bool
		noPlots  bool
		namesrv  string
		reps     int
		ref      bool
		replay   string
		dirty    bool
		atHead   bool
		figures  string
		plan     bool
	)
	of := &ombFlags{}
	cmd := &cobra.Command{
		Use:   "run EXPERIMENT.yaml | run OMB-WORKLOAD.yaml | run --replay RUN_DIR",
		Short: "Run an experiment (or replay a recorded run) and plot it",
		Long: `Run every cell of an experiment (engine config × workload × matrix, plus its
NATS and fio peers) and write results/<experiment>/<run-stamp>/: bench.txt
(benchstat input), result.json (gzip'd above 4 MiB), gzip'd .hlog interval logs, manifest.json and
ratios.txt (the declared pairings). Figures are drawn outside the run (see
--figures and 'brokerlab plot'). Cells run in an order shuffled per
repetition from the seed, with sync(2) and a settle pause between them. A
progress line is printed every 10 s and a table at the end; Ctrl-C stops the
current cell and still writes complete results.

--quick applies the experiment's short overrides (a functional check, not
reference numbers); --reference its reference overrides with at least 60 s
warm-up, 5 repetitions and 5 min measured where the flush/writeback cycle
matters. --replay RUN_DIR reruns exactly the resolved config that run recorded,
and refuses unless this binary is the revision that made it (--at-head: run it
with this code anyway; the new manifest says so).
Writing into the repository's results/ from a modified tree is refused
unless --allow-dirty (the diff is then saved beside the run). --plan prints
the resolved cells, their measured times and the estimated wall time, and
runs nothing.

An OpenMessaging Benchmark workload file (detected by its keys) runs as
is: an open loop at producerRate against the embedded broker (or the one
--namesrv names), producerRate 0 after a maximum-rate search, and
consumerBacklogSizeGB as a backlog built then drained (see
experiments/omb). Every run writes OMB's result JSON (omb-<cell>.r0.json)
beside result.json for OMB's bin/create_charts.py.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if replay != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var exp *experiments.Experiment
			var err error
			run := runFunc(experiments.Run)
			var replayNote string
			if replay != "" {
				var recorded result.Manifest
				exp, recorded, err = experiments.LoadReplay(replay)
				if err == nil {
					replayNote, err = experiments.ReplayRevision(recorded, atHead)
				}
			} else {
				exp, run, err = loadRunnable(args[0], of, quick)
			}
			if err != nil {
				return err
			}
			opts := experiments.Options{
				OutRoot: out, StoreRoot: store, Quick: quick, Duration: duration,
				Progress: os.Stderr, Command: os.Args, Namesrv: namesrv, Repetitions: reps,
				Reference: ref, Replay: replay != "", AllowDirty: dirty, ReplayNote: replayNote,
			}
			if plan {
				pl, err := experiments.NewPlan(exp, opts)
				if err != nil {
					return err
				}
				experiments.WritePlan(cmd.OutOrStdout(), pl)
				return nil
			}
			o, err := run(cmd.Context(), exp, opts)
			if err != nil {
				return err
			}
			if !noPlots {
				drawRunFigures(os.Stderr, o.RunDir, figures)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "results: %s (%s)\n", o.RunDir, o.Status)
			experiments.WriteRatios(cmd.OutOrStdout(), o.Ratios)
			for _, l := range o.ModelChecks {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			if o.Status != result.StatusOK {
				return fmt.Errorf("run %s: %s", o.RunDir, o.Status)
			}
			return nil
		},
	}
	f := cmd.Flags()
	addOMBFlags(f, of)
	f.StringVar(&out, "out", "results", "results root directory")
	f.StringVar(&store, "store", "", "directory for the cells' stores (default: the OS temp dir; must not be tmpfs for the direct path)")
	f.DurationVar(&duration, "duration", 0, "override the measured duration of every cell")
	f.IntVar(&reps, "reps", 0, "override the number of repetitions of every cell (reference runs use >= 3)")
	f.BoolVar(&quick, "quick", false, "apply the experiment's quick overrides (short, CI-sized)")
	f.BoolVar(&noPlots, "no-plots", false, "do not draw figures")
	f.StringVar(&figures, "figures", "", "directory for the run's figures (default: <temp>/brokerlab-figures/<experiment>/<stamp>; never the run)")
	f.BoolVar(&ref, "reference", false, "reference run: the experiment's reference overrides, >= 60s warm-up, >= 5 repetitions, >= 5m measured where writeback matters")
	f.StringVar(&replay, "replay", "", "rerun exactly the resolved config recorded in this run directory's manifest")
	f.BoolVar(&atHead, "at-head", false, "with --replay: run the recorded config with this binary's code although the run was made by another revision (the new manifest says so)")
	f.BoolVar(&dirty, "allow-dirty", false, "allow writing into the repository's results/ from a modified source tree (the diff is saved beside the run)")
	f.BoolVar(&plan, "plan", false, "print the resolved cells, their measured times and the estimated wall time; run nothing")
	f.StringVar(&namesrv, "namesrv", "", "drive the broker(s) registered with this name server (host:port) instead of an in-process engine")
	return cmd
}

// drawRunFigures draws a finished run's figures from its result files into
// dir ("" = <OS temp>/brokerlab-figures/<experiment>/<stamp>, the run
// directory being <out>/<experiment>/<stamp>) and reports on progress. A
// figure that cannot be drawn is reported, not an error: the run's results
// are complete without it. Figures are derived data, never written into
// the run.
func drawRunFigures(progress io.Writer, runDir, dir string) []string {
	if dir == "" {
		dir = derivedDir(filepath.Join(os.TempDir(), "brokerlab-figures"), runDir)
	}
	figs, err := plots.RenderRunTo(runDir, dir)
	if err != nil {
		fmt.Fprintf(progress, "brokerlab: figures: %v\n", err)
	}
	if len(figs) > 0 {
		fmt.Fprintf(progress, "figures: %d files in %s (derived; not part of the run)\n", len(figs), dir)
	}
	return figs
}
