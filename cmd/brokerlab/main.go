// Command brokerlab is the face of brokerlab: it runs experiments and plots
// them (run, plot, ceiling) and runs the broker and the name server as
// processes (broker, namesrv).
//
//	brokerlab run experiments/quick.yaml [--out DIR] [--duration D] [--quick]
//	brokerlab plot RUN_DIR
//	brokerlab ceiling [--out DIR]
//	brokerlab benchratio results/bench/STAMP/bench.txt results/bench/STAMP/fio.txt
//	brokerlab namesrv --listen 127.0.0.1:9876
//	brokerlab broker --namesrv 127.0.0.1:9876 --listen 127.0.0.1:10911 --store DIR \
//	    --write-path mmap|pwrite|pool|direct|uncached --flush sync|async|group|rmqgroup|dsync --segment-size 1GiB
//	brokerlab admin clusterList|topicStatus|consumerProgress|... -n 127.0.0.1:9876 [--json]  (mqadmin's commands)
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments"
)

// subcommands are registered by each command's file in init, so the files
// stay independent of each other.
var subcommands []func() *cobra.Command

func register(f func() *cobra.Command) { subcommands = append(subcommands, f) }

// stopProfile ends the --cpuprofile profile, if one runs (idempotent).
var stopProfile = func() {}

func newRoot() *cobra.Command {
	var cpuProfile string
	root := &cobra.Command{
		Use:           "brokerlab",
		Short:         "How should a commit-log message broker write, flush and cache its data?",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if cpuProfile == "" {
				return nil
			}
			f, err := os.Create(cpuProfile)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return err
			}
			stopProfile = sync.OnceFunc(func() { pprof.StopCPUProfile(); f.Close() })
			return nil
		},
		// main stops it too: cobra skips post-run hooks after an error.
		PersistentPostRun: func(cmd *cobra.Command, args []string) { stopProfile() },
	}
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "",
		"write this process's CPU profile to the file (servers of transport: process cells: $"+experiments.ChildProfileEnv+"=DIR)")
	for _, f := range subcommands {
		root.AddCommand(f())
	}
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRoot().ExecuteContext(ctx)
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "brokerlab:", err)
		os.Exit(1)
	}
}
