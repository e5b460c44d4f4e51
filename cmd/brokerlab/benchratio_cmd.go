package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/experiments/benchratio"
	"github.com/brokerlab/brokerlab/experiments/result"
)

func init() { register(newBenchratioCmd) }

func newBenchratioCmd() *cobra.Command {
	var jsonOut string
	cmd := &cobra.Command{
		Use:   "benchratio BENCH_FILE...",
		Short: "Print the engine's target ratios (P1–P3) from go test -bench output and fio results",
		Long: `Read Go benchmark files (go test ./engine/commitlog -bench 'Append|RawPath'
-count N, and the fio ceiling converted by "benchratio fio") and print issue 10's
target ratios, each as the median and min–max of the per-count ratios (the i-th
run of the numerator over the i-th run of the denominator):

  P1  Append ÷ RawPath throughput, flush=async, 1 KiB, 1 producer, per path   ≥ 0.85
      Append ÷ Independent (no engine code: pre-encoded records, bare pwrite,
      fdatasync every 500 ms) throughput, same cell, per path                 ≥ 0.85
  P2  1 KiB, 64 producers: group ÷ async ≥ 0.5, group ÷ sync ≥ 20,
      group ÷ limit-ops/s (producers / flush latency, same run) ≥ 0.8;
      1 producer: group ÷ sync latency ≤ 1.1 (judged on pwrite and mmap)
  P3  Append/path=direct/flush=async/size=65536/conc=4 MB/s ÷ fio O_DIRECT
      sequential write bs=64k, libaio, iodepth 4                             ≥ 0.9

Rows a ratio divides must have run the same N (scripts/bench.sh runs every
row with -benchtime=Nx from the benchmark's plan); a pair of lines with
different N refuses the ratio, except where its definition says why the work
differs (group ÷ async: an async row's N is set by its flush cycles; fio runs
for a fixed time).

scripts/bench.sh runs the benchmarks and fio and calls this.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := benchratio.ReadFiles(args...)
			if err != nil {
				return err
			}
			rs := benchratio.All(s)
			if err := benchratio.WriteText(cmd.OutOrStdout(), rs); err != nil {
				return err
			}
			if jsonOut == "" {
				return nil
			}
			f, err := os.Create(jsonOut)
			if err != nil {
				return err
			}
			if err := benchratio.WriteJSON(f, rs); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		},
	}
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the ratios (with per-count values) as JSON to this file")
	cmd.AddCommand(newBenchratioFioCmd(), newBenchratioManifestCmd())
	return cmd
}

func newBenchratioFioCmd() *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "fio FIO_JSON...",
		Short: "Print fio JSON reports (--output-format=json) as Go benchmark lines",
		Long: `Convert fio JSON reports to the Go benchmark format, one line per report
(BenchmarkFioWrite/rw=…/direct=…/bs=…/ioengine=…/iodepth=… with ns/op, MB/s,
p50-ns, p99-ns), so benchstat and "benchratio" read them beside the engine
benchmarks. --set key=value adds file configuration lines.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			config, err := parseSets(sets)
			if err != nil {
				return err
			}
			var runs []benchratio.FioRun
			for _, p := range args {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				r, err := benchratio.ParseFio(b)
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				if _, ok := config["fio-version"]; !ok && r.Version != "" {
					config["fio-version"] = r.Version
				}
				runs = append(runs, r)
			}
			return benchratio.WriteFioBench(cmd.OutOrStdout(), runs, config)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "file configuration line key=value (repeatable)")
	return cmd
}

func newBenchratioManifestCmd() *cobra.Command {
	var (
		storeDir, finish, status, command string
		sets                              []string
	)
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Print a benchmark run's manifest.json, or stamp its end",
		Long: `Without --finish: collect the machine facts every result run records (git
commit and dirty flag, kernel, CPU, memory, the file system and device of
--store-dir, writeback sysctls, Go version) and print them as manifest.json
with status "running"; --set key=value entries form its config. Run it before
creating the output directory so the dirty flag describes the source tree.
With --finish RUN_DIR: stamp RUN_DIR/manifest.json with the end time and
--status.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if finish != "" {
				m, err := result.ReadManifest(filepath.Join(finish, result.ManifestFile))
				if err != nil {
					return err
				}
				m.Finish(status, time.Now())
				return result.WriteManifest(finish, m)
			}
			config, err := parseSets(sets)
			if err != nil {
				return err
			}
			m := result.CollectManifest(storeDir, config, 0)
			m.Experiment = "bench"
			if command != "" {
				m.Command = strings.Fields(command)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(m)
		},
	}
	f := cmd.Flags()
	f.StringVar(&storeDir, "store-dir", os.TempDir(), "directory whose file system and device the benchmarks write to")
	f.StringArrayVar(&sets, "set", nil, "config entry key=value (repeatable)")
	f.StringVar(&command, "command", "", "the command line to record (default: this one)")
	f.StringVar(&finish, "finish", "", "run directory whose manifest.json to stamp finished")
	f.StringVar(&status, "status", result.StatusOK, "final status with --finish (ok, interrupted, aborted)")
	return cmd
}

// parseSets turns key=value flags into a map.
func parseSets(sets []string) (map[string]string, error) {
	m := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: want key=value", s)
		}
		m[k] = v
	}
	return m, nil
}
