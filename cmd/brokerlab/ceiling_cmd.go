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
	)
	cmd := &cobra.Command{
		Use:   "ceiling",
		Short: "Measure the device ceiling with fio (same block sizes and sync patterns as the experiments)",
		Long: `Run fio sequential-write jobs for each block size × buffered/O_DIRECT × sync
pattern (fdatasync per write, every 256 writes, none) and store them as a
result run (results/ceiling/<stamp>) in the same format as experiments: the
physical limit drawn in the figures. Needs fio (apt-get install fio).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs, err := experiments.ParseSize(size)
			if err != nil {
				return err
			}
			o, err := experiments.RunCeiling(cmd.Context(), experiments.CeilingOptions{
				OutRoot: out, Dir: dir, Runtime: runtime, FileSize: int64(fs), Sizes: sizes, Progress: os.Stderr, Command: os.Args,
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
	f.StringVar(&size, "file-size", "256MiB", "fio file size per job")
	f.IntSliceVar(&sizes, "bs", []int{1024, 4096, 65536}, "block sizes")
	return cmd
}
