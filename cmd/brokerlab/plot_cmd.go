package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/plots"
)

func init() { register(newPlotCmd) }

func newPlotCmd() *cobra.Command {
	var out string
	var noHgrm bool
	cmd := &cobra.Command{
		Use:   "plot --out DIR RUN_DIR...",
		Short: "Derive every figure and .hgrm table of one or more runs into DIR",
		Long: `Figures and .hgrm percentile tables are derived data: a run directory keeps
only result.json, bench.txt, manifest.json and its gzip'd .hlog interval logs.
plot draws each run's figures (PNG and SVG, byte-identical from the same
inputs) and writes its .hgrm tables (values in ms, as HdrHistogram's tools
expect) into DIR/<experiment>/<stamp>/. It never writes into a run.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("plot: --out DIR is required (figures are never written into a run)")
			}
			for _, dir := range args {
				dest := derivedDir(out, dir)
				figs, err := plots.RenderRunTo(dir, dest)
				for _, f := range figs {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
				if noHgrm {
					continue
				}
				run, err := result.LoadRun(dir)
				if err != nil {
					return err
				}
				hgrms, err := result.DeriveHgrm(run, dest)
				for _, f := range hgrms {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write into (DIR/<experiment>/<stamp>/); required")
	cmd.Flags().BoolVar(&noHgrm, "no-hgrm", false, "draw figures only")
	return cmd
}

// derivedDir is where a run's derived files go under root:
// root/<experiment>/<stamp>, the run directory being
// <results>/<experiment>/<stamp>.
func derivedDir(root, runDir string) string {
	clean := filepath.Clean(runDir)
	return filepath.Join(root, filepath.Base(filepath.Dir(clean)), filepath.Base(clean))
}
