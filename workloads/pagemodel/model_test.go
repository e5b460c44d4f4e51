package pagemodel

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

// base: 100 MiB/s into 64 MiB segments, 10 GiB dirtyable, default ratios
// (background 1 GiB, hard 2 GiB), 30 s expiry, 5 s flusher period.
func base() Input {
	return Input{AppendBps: 100 * mib, SegmentSize: 64 * mib, Path: "pwrite", Flush: "none",
		Kernel: DefaultKernel(10 << 30), Horizon: 40 * time.Second, Step: 10 * time.Millisecond}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func predict(t *testing.T, in Input) Prediction {
	t.Helper()
	p, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// at is the index of time sec in p.T.
func at(t *testing.T, p Prediction, sec float64) int {
	t.Helper()
	for i, x := range p.T {
		if near(x, sec) {
			return i
		}
	}
	t.Fatalf("no sample at %v s", sec)
	return 0
}

func TestBackgroundOnsetAtThreshold(t *testing.T) {
	p := predict(t, base())
	// 1 GiB / 100 MiB/s = 10.24 s; writeback keeps up (device rate unknown).
	if !near(p.BackgroundAt, 10.24) || p.ThrottleAt != -1 {
		t.Fatalf("background %v throttle %v", p.BackgroundAt, p.ThrottleAt)
	}
	if p.Background != 1<<30 || p.Hard != 2<<30 {
		t.Fatalf("thresholds %d %d", p.Background, p.Hard)
	}
	if d := p.Dirty[at(t, p, 5)]; d != 500*mib {
		t.Fatalf("dirty at 5 s = %d", d)
	}
	if d := p.Dirty[at(t, p, 20)]; d != 1<<30 {
		t.Fatalf("dirty after the onset = %d, want the background limit", d)
	}
	if r := p.Resident[at(t, p, 20)]; r != 2000*mib {
		t.Fatalf("resident at 20 s = %d, want everything written", r)
	}
}

func TestThrottleOnsetWhenWritebackFallsBehind(t *testing.T) {
	in := base()
	in.DeviceBps = 50 * mib
	p := predict(t, in)
	// From 1 GiB at 10.24 s dirty grows at 50 MiB/s to the freerun point
	// (1 + 2)/2 = 1.5 GiB: 512 MiB / 50 MiB/s = 10.24 s later.
	if !near(p.BackgroundAt, 10.24) || !near(p.ThrottleAt, 20.48) {
		t.Fatalf("background %v throttle %v", p.BackgroundAt, p.ThrottleAt)
	}
	if d := p.Dirty[at(t, p, 15.24)]; d != 1024*mib+250*mib {
		t.Fatalf("dirty at 15.24 s = %d", d)
	}
	// Throttled: dirty at the setpoint (1.5 + 2)/2 GiB, the head advances at D.
	i := at(t, p, 30.48)
	if p.Dirty[i] != 1792*mib {
		t.Fatalf("throttled dirty %d", p.Dirty[i])
	}
	if p.Resident[i] != 2048*mib+500*mib {
		t.Fatalf("throttled head %d", p.Resident[i])
	}
}

func TestBytesSettingsWinAndExpiry(t *testing.T) {
	in := base()
	in.AppendBps = 1 * mib
	in.Kernel.DirtyBackgroundBytes, in.Kernel.DirtyBytes = 100<<30, 200<<30
	p := predict(t, in)
	if p.Background != 100<<30 || p.Hard != 200<<30 {
		t.Fatalf("bytes settings ignored: %d %d", p.Background, p.Hard)
	}
	// Nothing crosses 100 GiB: the first pages expire at 30 s, written at
	// the flusher's wake-up at 30 s; with 32 s expiry, at 35 s.
	if !near(p.BackgroundAt, 30) {
		t.Fatalf("expiry onset %v", p.BackgroundAt)
	}
	in.Kernel.Expire = 32 * time.Second
	if p := predict(t, in); !near(p.BackgroundAt, 35) {
		t.Fatalf("expiry onset %v", p.BackgroundAt)
	}
	// A background limit at or above the hard one is halved from it.
	in.Kernel.DirtyBackgroundBytes, in.Kernel.DirtyBytes = 300<<30, 200<<30
	if bg, hard := in.Kernel.Thresholds(1); bg != 100<<30 || hard != 200<<30 {
		t.Fatalf("thresholds %d %d", bg, hard)
	}
}

func TestAsyncFlushBoundsDirty(t *testing.T) {
	in := base()
	in.Flush = "async" // 500 ms
	p := predict(t, in)
	if p.BackgroundAt != -1 || p.ThrottleAt != -1 {
		t.Fatalf("async flush: background %v throttle %v", p.BackgroundAt, p.ThrottleAt)
	}
	if d := p.Dirty[at(t, p, 0.25)]; d != 25*mib {
		t.Fatalf("dirty before the first flush %d", d)
	}
	if d := p.Dirty[at(t, p, 12)]; d != 25*mib {
		t.Fatalf("dirty = W·F/2 = 25 MiB, got %d", d)
	}
	in.Flush = "sync"
	if p := predict(t, in); p.Dirty[at(t, p, 12)] != 0 || p.Resident[at(t, p, 12)] != 1200*mib {
		t.Fatalf("sync: dirty %d resident %d", p.Dirty[at(t, p, 12)], p.Resident[at(t, p, 12)])
	}
}

func TestBudgetCliffV1AndV2(t *testing.T) {
	in := base()
	in.Budget = 512 * mib
	p := predict(t, in)
	// cgroup v1: global limits (1 GiB) above the budget: reclaim meets
	// dirty pages once they fill it, at 512 MiB / 100 MiB/s.
	if !near(p.ThrottleAt, 5.12) || p.ResidentCap != 512*mib || p.BackgroundAt != -1 {
		t.Fatalf("v1 throttle %v cap %d background %v", p.ThrottleAt, p.ResidentCap, p.BackgroundAt)
	}
	if r := p.Resident[at(t, p, 20)]; r != 512*mib {
		t.Fatalf("resident held at the budget: %d", r)
	}
	// cgroup v2: the limits scale to the budget: background at 51.2 MiB.
	in.Kernel.CgroupWriteback = true
	p = predict(t, in)
	if !near(p.BackgroundAt, 53687091.0/(100*mib)) || p.ThrottleAt != -1 || p.Background != 53687091 {
		t.Fatalf("v2 background %v throttle %v limit %d", p.BackgroundAt, p.ThrottleAt, p.Background)
	}
}

func TestPathsAndSegments(t *testing.T) {
	in := base()
	in.Path = "direct"
	p := predict(t, in)
	if p.Resident[len(p.T)-1] != 0 || p.Dirty[len(p.T)-1] != 0 || p.BackgroundAt != -1 {
		t.Fatal("direct must leave the page cache alone")
	}
	// 64 MiB/s into 64 MiB segments, keep 64 MiB: at 3 s the head is at
	// 192 MiB, segments 0 and 1 are deleted, segment 2 full; at 2.5 s
	// segment 1 is full, segment 2 half, segment 0 deleted.
	in = base()
	in.AppendBps, in.Retain, in.Flush = 64*mib, 64*mib, "sync"
	in.Horizon, in.Step = 3*time.Second, 500*time.Millisecond
	p = predict(t, in)
	if len(p.Segments) != 3 || p.Segments[2].Name != "00000000000134217728" {
		t.Fatalf("segments %+v", p.Segments)
	}
	i := at(t, p, 2.5)
	got := []int64{p.Segments[0].Resident[i], p.Segments[1].Resident[i], p.Segments[2].Resident[i]}
	if got[0] != -1 || got[1] != 64*mib || got[2] != 32*mib || p.Resident[i] != 96*mib {
		t.Fatalf("at 2.5 s: %v total %d", got, p.Resident[i])
	}
	if p.Segments[2].Resident[at(t, p, 1)] != -1 || p.Segments[0].Resident[at(t, p, 0.5)] != 32*mib {
		t.Fatal("segment existence over time")
	}
	in.Path = "uncached"
	if p := predict(t, in); p.Resident[len(p.T)-1] != 0 {
		t.Fatal("uncached keeps nothing once written back")
	}
}

func TestLastSampleAtHorizon(t *testing.T) {
	in := base()
	in.Horizon, in.Step = 2500*time.Millisecond, time.Second
	p := predict(t, in)
	if len(p.T) != 4 || p.T[3] != 2.5 || p.Resident[3] != 250*mib {
		t.Fatalf("times %v resident %v", p.T, p.Resident)
	}
}

func TestInputErrors(t *testing.T) {
	for _, mut := range []func(*Input){
		func(in *Input) { in.AppendBps = 0 },
		func(in *Input) { in.Path = "tape" },
		func(in *Input) { in.Flush = "later" },
		func(in *Input) { in.Budget, in.AnonBytes = 10, 10 },
		func(in *Input) { in.Kernel.Dirtyable = 0 },
	} {
		in := base()
		mut(&in)
		if _, err := Predict(in); !errors.Is(err, ErrInput) {
			t.Fatalf("%+v: %v", in, err)
		}
	}
}

func TestReadKernel(t *testing.T) {
	root := t.TempDir()
	vm := filepath.Join(root, "sys", "vm")
	if err := os.MkdirAll(vm, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"dirty_background_ratio": "5", "dirty_background_bytes": "0", "dirty_ratio": "15",
		"dirty_bytes": "0", "dirty_expire_centisecs": "1500", "dirty_writeback_centisecs": "250"} {
		os.WriteFile(filepath.Join(vm, name), []byte(v+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "meminfo"), []byte("MemTotal: 2048 kB\nMemAvailable: 1024 kB\n"), 0o644)
	k, err := ReadKernel(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := Kernel{DirtyBackgroundRatio: 5, DirtyRatio: 15, Expire: 15 * time.Second, Period: 2500 * time.Millisecond, Dirtyable: 1 << 20}
	if k != want {
		t.Fatalf("%+v", k)
	}
	os.WriteFile(filepath.Join(vm, "dirty_ratio"), []byte("x\n"), 0o644)
	if _, err := ReadKernel(root, ""); err == nil || !strings.Contains(err.Error(), "dirty_ratio") {
		t.Fatalf("bad value: %v", err)
	}
}
