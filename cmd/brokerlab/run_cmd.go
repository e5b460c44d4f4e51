package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/result"
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
	)
	cmd := &cobra.Command{
		Use:   "run EXPERIMENT.yaml",
		Short: "Run an experiment and plot it",
		Long: `Run every cell of an experiment (engine config × workload × matrix) and write
results/<experiment>/<run-stamp>/: bench.txt (benchstat input), result.json,
.hlog/.hgrm histograms, manifest.json and figures/. A progress line is printed
every 10 s and a table at the end; Ctrl-C stops the current cell and still
writes complete results.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := experiments.Load(args[0])
			if err != nil {
				return err
			}
			o, err := experiments.Run(cmd.Context(), exp, experiments.Options{
				OutRoot: out, StoreRoot: store, Quick: quick, Duration: duration,
				Progress: os.Stderr, NoPlots: noPlots, Command: os.Args, Namesrv: namesrv, Repetitions: reps,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "results: %s (%s)\n", o.RunDir, o.Status)
			experiments.WriteRatios(cmd.OutOrStdout(), o.Ratios)
			if o.Status != result.StatusOK {
				return fmt.Errorf("run %s: %s", o.RunDir, o.Status)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "results", "results root directory")
	f.StringVar(&store, "store", "", "directory for the cells' stores (default: the OS temp dir; must not be tmpfs for the direct path)")
	f.DurationVar(&duration, "duration", 0, "override the measured duration of every cell")
	f.IntVar(&reps, "reps", 0, "override the number of repetitions of every cell (reference runs use >= 3)")
	f.BoolVar(&quick, "quick", false, "apply the experiment's quick overrides (short, CI-sized)")
	f.BoolVar(&noPlots, "no-plots", false, "do not draw figures")
	f.StringVar(&namesrv, "namesrv", "", "drive the broker(s) registered with this name server (host:port) instead of an in-process engine")
	return cmd
}
