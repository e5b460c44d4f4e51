package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments"
)

func init() { register(newCeilingCmd) }

func newCeilingCmd() *cobra.Command {
	var (
		out     string
		dir     string
		runtime time.Duration
		size    string
		sizes   []int
		conc    []int
		every   int
	)
	cmd := &cobra.Command{
		Use:   "ceiling",
		Short: "Measure the write ceilings with fio (block sizes × concurrency × sync pattern)",
		Long: `Run fio sequential-write jobs for each block size × concurrency × O_DIRECT or
buffered × sync pattern (fdatasync per write as the sync policy, every N
writes as group commit, none as async) and store them as a result run
(results/ceiling/<stamp>) in the same format as experiments. O_DIRECT jobs run
one file at iodepth = concurrency (libaio) and are device ceilings; buffered
jobs run concurrency psync jobs, and without fdatasync they measure the page
cache (labelled ceiling=page-cache), not the device. Experiments with peers:
[fio] run their own ceilings with each cell's size, producers and measured
group-commit batch. Needs fio (apt-get install fio).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs, err := experiments.ParseSize(size)
			if err != nil {
				return err
			}
			o, err := experiments.RunCeiling(cmd.Context(), experiments.CeilingOptions{
				OutRoot: out, Dir: dir, Runtime: runtime, FileSize: int64(fs), Sizes: sizes, Conc: conc, Every: every,
				Progress: os.Stderr, Command: os.Args,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "results: %s (%s)\n", o.RunDir, o.Status)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "results", "results root directory")
	f.StringVar(&dir, "dir", "", "directory fio writes in (default: the OS temp dir; put it on the store's device)")
	f.DurationVar(&runtime, "runtime", 3*time.Second, "time per fio job")
	f.StringVar(&size, "file-size", "1GiB", "fio file size (O_DIRECT: one file; buffered: split between the jobs)")
	f.IntSliceVar(&sizes, "bs", []int{1024, 4096, 65536}, "block sizes")
	f.IntSliceVar(&conc, "conc", []int{1, 16, 64}, "concurrencies: O_DIRECT iodepth, buffered numjobs")
	f.IntVar(&every, "group-every", 16, "writes per fdatasync of the group-commit pattern")
	return cmd
}
