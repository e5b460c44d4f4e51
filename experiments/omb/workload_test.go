package omb

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The shipped workloads (OMB's format) and reconstructed OMB samples all
// parse, are detected as OMB files, and map onto valid experiments.
func TestParseAndMapSamples(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	more, _ := filepath.Glob("testdata/*.yaml")
	files = append(files, more...)
	if len(files) < 7 {
		t.Fatalf("found %d workload files, want the 5 shipped and 2 samples", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !Detect(b) {
			t.Errorf("%s: not detected as an OMB workload", f)
		}
		w, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		exp, err := w.Experiment(ExperimentName(f), MapOptions{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if exp.Name != ExperimentName(f) || exp.Workload.Mode != "open" || exp.Workload.Queues != w.PartitionsPerTopic ||
			exp.Workload.Topics != w.Topics || exp.Workload.Size != "fixed:"+strconv.Itoa(w.MessageSize) {
			t.Errorf("%s: mapped to %+v", f, exp.Workload)
		}
		if exp.Duration.D() != time.Duration(w.TestDurationMinutes)*time.Minute {
			t.Errorf("%s: duration %v", f, exp.Duration.D())
		}
	}
}

func TestMappingDetails(t *testing.T) {
	w, err := Load("testdata/keyed-2-subscriptions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exp, err := w.Experiment("keyed", MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wl := exp.Workload
	if wl.Rate != 20000 || wl.Producers != 80 || wl.Tailing != 2 || wl.Lagging != 0 || wl.QueueChoice != "roundrobin" || wl.Schedule != "uniform" {
		t.Errorf("workload %+v", wl)
	}
	if exp.Warmup.D() != 2*time.Minute || exp.Engine.Transport != "loopback" {
		t.Errorf("warmup %v transport %s", exp.Warmup.D(), exp.Engine.Transport)
	}
	exp.ApplyQuick()
	if exp.Warmup.D() != QuickWarmup || exp.Duration.D() != QuickDuration {
		t.Errorf("quick: %v + %v", exp.Warmup.D(), exp.Duration.D())
	}
	h := w.Header("x")
	if h.Workload != w.Name || h.Partitions != 8 || h.ProducersPerTopic != 40 || h.ConsumersPerTopic != 2 || h.Subscriptions != 2 || h.MessageSize != 512 {
		t.Errorf("header %+v", h)
	}

	b, err := Load("testdata/backlog-4p-4c-randomized.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !b.UseRandomizedPayloads || b.RandomBytesRatio != 0.5 || b.RandomizedPayloadPoolSize != 1000 || *b.BacklogDrainRatio != 0.99 || b.WarmupMinutes() != 1 {
		t.Errorf("parsed %+v", b)
	}
	bexp, err := b.Experiment("backlog", MapOptions{Backlog: 8 << 20, Transport: "inproc"})
	if err != nil {
		t.Fatal(err)
	}
	bw := bexp.Workload
	if bw.Prefill != 8<<20 || bw.LagBytes != 8<<20 || bw.Lagging != 1 || !bw.LagTail || bw.Tailing != 0 || bexp.Warmup != 0 || bexp.Engine.Transport != "inproc" {
		t.Errorf("backlog mapping %+v warmup %v", bw, bexp.Warmup.D())
	}
	full, _ := b.Experiment("backlog", MapOptions{})
	if full.Workload.Prefill != 512*GiB {
		t.Errorf("backlog %v, want 512 GiB", full.Workload.Prefill)
	}

	k, _ := Parse([]byte("topics: 1\npartitionsPerTopic: 4\nmessageSize: 10\nproducersPerTopic: 1\nproducerRate: 5\ntestDurationMinutes: 1\nkeyDistributor: RANDOM_NANO\n"))
	if kexp, err := k.Experiment("k", MapOptions{}); err != nil || kexp.Workload.QueueChoice != "uniform" {
		t.Errorf("RANDOM_NANO mapped to %v (%v)", kexp, err)
	}
}

func TestDetectAndRefuse(t *testing.T) {
	exps, _ := filepath.Glob("../*.yaml")
	if len(exps) == 0 {
		t.Fatal("no brokerlab experiment files found beside the package")
	}
	for _, f := range exps {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if Detect(b) {
			t.Errorf("%s: a brokerlab experiment detected as an OMB workload", f)
		}
	}
	if Detect([]byte("not: [valid")) || Detect([]byte("- a\n- b\n")) {
		t.Error("non-mappings detected")
	}
	base := "topics: 1\npartitionsPerTopic: 16\nmessageSize: 1024\nproducersPerTopic: 1\nsubscriptionsPerTopic: 1\nproducerRate: 100\ntestDurationMinutes: 1\n"
	for _, tc := range []struct{ extra, key string }{
		{"partitionCount: 3\n", "partitionCount"},
		{"keyDistributor: HASHED\n", "keyDistributor"},
		{"randomBytesRatio: 2\n", "randomBytesRatio"},
		{"consumerBacklogSizeGB: -1\n", "consumerBacklogSizeGB"},
	} {
		_, err := Parse([]byte(base + tc.extra))
		if !errors.Is(err, ErrWorkload) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: error %v, want ErrWorkload naming %s", tc.extra, err, tc.key)
		}
	}
	if _, err := Parse([]byte(strings.Replace(base, "producerRate: 100", "producerRate: 0", 1) + "consumerBacklogSizeGB: 1\n")); err == nil {
		t.Error("a rate search with a backlog build was accepted (OMB refuses it)")
	}
	if _, err := Parse([]byte(strings.Replace(base, "testDurationMinutes: 1", "testDurationMinutes: 0", 1))); err == nil {
		t.Error("testDurationMinutes 0 accepted")
	}
	if got := ExperimentName("/x/1-topic 16/partitions.yaml"); got != "partitions" {
		t.Errorf("ExperimentName = %q", got)
	}
	if got := ExperimentName("a b.yaml"); got != "a-b" {
		t.Errorf("ExperimentName = %q", got)
	}
}
