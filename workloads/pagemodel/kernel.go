package pagemodel

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/workloads/probe"
)

// Kernel is the kernel's writeback configuration (/proc/sys/vm) and the
// memory the dirty thresholds are computed from.
type Kernel struct {
	// Ratios are percent of dirtyable memory; a non-zero *Bytes value
	// takes precedence over its ratio (as the kernel does).
	DirtyBackgroundRatio float64 `json:"dirty_background_ratio"`
	DirtyBackgroundBytes int64   `json:"dirty_background_bytes"`
	DirtyRatio           float64 `json:"dirty_ratio"`
	DirtyBytes           int64   `json:"dirty_bytes"`
	// Expire is dirty_expire_centisecs (a dirty page older than this is
	// written back by the next periodic wake-up); Period is
	// dirty_writeback_centisecs (the flusher's wake-up; 0 disables it).
	Expire time.Duration `json:"expire"`
	Period time.Duration `json:"period"`
	// Dirtyable is the memory the ratios apply to. The kernel uses free
	// plus reclaimable file pages; MemAvailable approximates it.
	Dirtyable int64 `json:"dirtyable_bytes"`
	// CgroupWriteback is true when dirty limits apply per memory cgroup
	// (cgroup v2): a budget then scales the thresholds. On cgroup v1 they
	// stay global and a budget only bounds the cache by reclaim.
	CgroupWriteback bool `json:"cgroup_writeback"`
}

// DefaultKernel is Linux's default writeback configuration (10 %, 20 %,
// 30 s, 5 s) over dirtyable bytes.
func DefaultKernel(dirtyable int64) Kernel {
	return Kernel{DirtyBackgroundRatio: 10, DirtyRatio: 20, Expire: 30 * time.Second, Period: 5 * time.Second, Dirtyable: dirtyable}
}

// ReadKernel reads the writeback settings from <procRoot>/sys/vm, the
// dirtyable memory from <procRoot>/meminfo (MemAvailable) and whether
// cgroup v2's memory controller is in use (cgroupRoot, "" =
// /sys/fs/cgroup).
func ReadKernel(procRoot, cgroupRoot string) (Kernel, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	var k Kernel
	read := func(name string) (int64, error) {
		b, err := os.ReadFile(filepath.Join(procRoot, "sys", "vm", name))
		if err != nil {
			return 0, fmt.Errorf("pagemodel: %w", err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: vm.%s = %q", ErrInput, name, strings.TrimSpace(string(b)))
		}
		return v, nil
	}
	vals := map[string]int64{}
	for _, name := range []string{"dirty_background_ratio", "dirty_background_bytes", "dirty_ratio", "dirty_bytes",
		"dirty_expire_centisecs", "dirty_writeback_centisecs"} {
		v, err := read(name)
		if err != nil {
			return k, err
		}
		vals[name] = v
	}
	k.DirtyBackgroundRatio = float64(vals["dirty_background_ratio"])
	k.DirtyBackgroundBytes = vals["dirty_background_bytes"]
	k.DirtyRatio = float64(vals["dirty_ratio"])
	k.DirtyBytes = vals["dirty_bytes"]
	k.Expire = time.Duration(vals["dirty_expire_centisecs"]) * 10 * time.Millisecond
	k.Period = time.Duration(vals["dirty_writeback_centisecs"]) * 10 * time.Millisecond
	mi, err := probe.ReadKeyValues(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return k, err
	}
	k.Dirtyable = mi["MemAvailable"] << 10
	if v, _, err := probe.DetectCgroup(cgroupRoot); err == nil && v == probe.CgroupV2 {
		k.CgroupWriteback = true
	}
	return k, nil
}

// Thresholds are the background and hard dirty limits over dirtyable
// bytes: a *Bytes setting wins over its ratio, and a background limit at
// or above the hard one is halved from it (as the kernel does).
func (k Kernel) Thresholds(dirtyable int64) (background, hard int64) {
	hard = k.DirtyBytes
	if hard <= 0 {
		hard = int64(k.DirtyRatio / 100 * float64(dirtyable))
	}
	background = k.DirtyBackgroundBytes
	if background <= 0 {
		background = int64(k.DirtyBackgroundRatio / 100 * float64(dirtyable))
	}
	if background >= hard {
		background = hard / 2
	}
	return background, hard
}
