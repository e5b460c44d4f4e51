package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments"
	"github.com/brokerlab/brokerlab/experiments/result"
)

// TestMain lets this test binary stand in for the brokerlab binary when a
// transport-process cell re-executes it: with the harness's child
// environment it runs its command line through the root command, as main
// does, so the child reaches the hidden harness-child command exactly as
// in the real binary.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(experiments.ChildEnv); ok {
		root := newRoot()
		root.SetArgs(os.Args[1:])
		if err := root.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "brokerlab:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if cli.dir != "" {
		_ = os.RemoveAll(cli.dir)
	}
	os.Exit(code)
}

// brokerlab run serves a transport-process cell from a child started as
// the hidden harness-child command: messages flow and the server's CPU is
// measured in the child.
func TestRunProcessCellThroughHiddenCommand(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc: the server's CPU is read from /proc/<pid>/stat")
	}
	dir := t.TempDir()
	exp := filepath.Join(dir, "proc.yaml")
	os.WriteFile(exp, []byte(`
name: proc
warmup: 100ms
duration: 400ms
interval: 100ms
settle: 1ms
engine: {path: mmap, flush: async, transport: process, segment_size: 8MiB}
workload: {mode: closed, producers: 2, size: fixed:512}
`), 0o644)
	var stdout bytes.Buffer
	root := newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"run", exp, "--out", filepath.Join(dir, "results"), "--store", t.TempDir(), "--no-plots"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	runDir := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.Split(stdout.String(), "\n")[0]), "results: "), " (ok)")
	res, err := result.ReadResult(filepath.Join(runDir, result.ResultFile))
	if err != nil {
		t.Fatalf("run printed %q: %v", stdout.String(), err)
	}
	if len(res.Cells) != 1 {
		t.Fatalf("%d cells", len(res.Cells))
	}
	c := res.Cells[0]
	if c.Error != "" || c.Ops == 0 || c.ServerCPUSeconds <= 0 {
		t.Fatalf("process cell: error %q, %d ops, server CPU %v s", c.Error, c.Ops, c.ServerCPUSeconds)
	}
}

// An operator command does not turn into a harness child when the
// harness's environment leaks into it: only the hidden command serves.
func TestOperatorCommandIgnoresChildEnv(t *testing.T) {
	t.Setenv(experiments.ChildEnv, `{"kind":"broker"}`)
	var stdout bytes.Buffer
	root := newRoot()
	root.SetOut(&stdout)
	root.SetArgs([]string{"namesrv", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "name server") {
		t.Fatalf("namesrv --help printed %q", stdout.String())
	}
}
