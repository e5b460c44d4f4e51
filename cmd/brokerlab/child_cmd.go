package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments"
)

func init() { register(newChildCmd) }

// newChildCmd is the hidden command a transport-process cell's server runs
// as: brokerlab run re-executes its own binary with this command and the
// cell's spec in $BROKERLAB_CHILD (experiments/child.go). It is the only
// command that serves as a harness child; broker, namesrv and admin never
// look at the harness's environment.
func newChildCmd() *cobra.Command {
	return &cobra.Command{
		Use:    experiments.ChildCommand,
		Short:  "Serve as a transport-process cell's server (started by brokerlab run; not for operators)",
		Hidden: true,
		// The parent also passes -test.run=^$ for test binaries (which
		// lack this command); it means nothing here.
		DisableFlagParsing: true,
		Run: func(cmd *cobra.Command, args []string) {
			stopProfile()
			os.Exit(experiments.ServeChild())
		},
	}
}
