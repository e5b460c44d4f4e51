package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/plots"
)

func init() { register(newPlotCmd) }

func newPlotCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "plot RUN_DIR...",
		Short: "Regenerate every figure of one or more runs from their result files",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, dir := range args {
				figs, err := plots.RenderRun(dir)
				for _, f := range figs {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
			}
			return nil
		},
	}
}
