package probe

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDetectCgroupLayouts(t *testing.T) {
	none := t.TempDir()
	if v, _, err := DetectCgroup(none); v != CgroupNone || !errors.Is(err, ErrCgroupUnavailable) || !strings.Contains(err.Error(), "systemd-run") {
		t.Fatalf("empty root: %v %v", v, err)
	}
	v2 := t.TempDir()
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644)
	if v, mount, err := DetectCgroup(v2); v != CgroupV2 || mount != v2 || err != nil {
		t.Fatalf("v2: %v %q %v", v, mount, err)
	}
	v2nomem := t.TempDir()
	os.WriteFile(filepath.Join(v2nomem, "cgroup.controllers"), []byte("cpu pids\n"), 0o644)
	if _, _, err := DetectCgroup(v2nomem); !errors.Is(err, ErrCgroupUnavailable) {
		t.Fatalf("v2 without memory: %v", err)
	}
	v1 := t.TempDir()
	os.MkdirAll(filepath.Join(v1, "memory"), 0o755)
	os.WriteFile(filepath.Join(v1, "memory", "memory.limit_in_bytes"), []byte("9223372036854771712\n"), 0o644)
	if v, mount, err := DetectCgroup(v1); v != CgroupV1 || mount != filepath.Join(v1, "memory") || err != nil {
		t.Fatalf("v1: %v %q %v", v, mount, err)
	}
}

func TestMemoryBudgetConfigErrors(t *testing.T) {
	for _, cfg := range []BudgetConfig{
		{Name: "x", Limit: 0},
		{Name: "", Limit: 1 << 20},
		{Name: "../escape", Limit: 1 << 20},
	} {
		if _, err := NewMemoryBudget(cfg); err == nil {
			t.Fatalf("%+v accepted", cfg)
		}
	}
	cfg := DefaultBudgetConfig(64 << 20)
	cfg.Root = t.TempDir()
	if _, err := NewMemoryBudget(cfg); !errors.Is(err, ErrCgroupUnavailable) {
		t.Fatalf("no cgroupfs: %v", err)
	}
}

// TestMemoryBudgetCreateJoinRemove creates a 64 MiB budget under this
// process's own cgroup, moves a child process (not the test itself) into it,
// and removes it. Where the sandbox does not allow it, the error must be one
// of the documented sentinels.
func TestMemoryBudgetCreateJoinRemove(t *testing.T) {
	const limit = 64 << 20
	b, err := NewMemoryBudget(DefaultBudgetConfig(limit))
	if err != nil {
		if errors.Is(err, ErrCgroupUnavailable) || errors.Is(err, ErrCgroupPermission) || errors.Is(err, ErrCgroupNotDelegated) {
			t.Skipf("memory cgroups not usable here (a clear error, as documented): %v", err)
		}
		t.Fatalf("undocumented error: %v", err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			b.Remove()
		}
	})
	if b.Limit != limit {
		t.Fatalf("limit read back %d, want %d", b.Limit, limit)
	}
	if st, err := os.Stat(b.Dir); err != nil || !st.IsDir() {
		t.Fatalf("cgroup dir %s: %v", b.Dir, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := b.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	procs, err := b.Procs()
	if err != nil || !slices.Contains(procs, cmd.Process.Pid) {
		t.Fatalf("procs %v err %v, want pid %d", procs, err, cmd.Process.Pid)
	}
	if u, err := b.Usage(); err != nil || u < 0 || u > limit {
		t.Fatalf("usage %d err %v", u, err)
	}
	if err := b.Remove(); err != nil {
		t.Fatal(err)
	}
	removed = true
	if _, err := os.Stat(b.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cgroup dir still there: %v", err)
	}
	if cmd.ProcessState != nil {
		t.Fatal("the process must survive the removal of its budget")
	}
}

// FollowAnon keeps the limit at cache + the cgroup's anonymous memory, on a
// fake cgroup directory (v1 and v2 files), and reports the largest anon.
func TestFollowAnonTracksAnonymousMemory(t *testing.T) {
	for _, v := range []struct {
		ver        CgroupVersion
		limit, key string
	}{{CgroupV1, "memory.limit_in_bytes", "rss"}, {CgroupV2, "memory.max", "anon"}} {
		dir := t.TempDir()
		// Whole files at once (rename), as the kernel shows them; the
		// limit file is rewritten in place by SetLimit, so a read may see
		// it empty for a moment.
		write := func(name, val string) {
			tmp := filepath.Join(dir, name+".tmp")
			if err := os.WriteFile(tmp, []byte(val), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		const cache = 32 << 20
		write(v.limit, strconv.Itoa(cache))
		write("memory.stat", "file 4096\n"+v.key+" 8388608\nother 1\n")
		b := &MemoryBudget{Version: v.ver, Dir: dir, Limit: cache}
		limit := func() int64 {
			n, err := b.readInt(v.limit)
			if err != nil {
				return -1
			}
			return n
		}
		stop := b.FollowAnon(cache, time.Millisecond)
		if got := limit(); got != cache+8<<20 {
			t.Fatalf("%v: limit %d after the first follow, want %d", v.ver, got, cache+8<<20)
		}
		write("memory.stat", v.key+" 16777216\n")
		deadline := time.Now().Add(10 * time.Second)
		for limit() != cache+16<<20 {
			if time.Now().After(deadline) {
				t.Fatalf("%v: limit %d never followed anon to 16 MiB", v.ver, limit())
			}
			time.Sleep(time.Millisecond)
		}
		write("memory.stat", v.key+" 4194304\n")
		for limit() != cache+4<<20 {
			if time.Now().After(deadline) {
				t.Fatalf("%v: limit %d never followed anon down to 4 MiB", v.ver, limit())
			}
			time.Sleep(time.Millisecond)
		}
		if maxAnon, err := stop(); maxAnon != 16<<20 || err != nil {
			t.Fatalf("%v: max anon %d err %v", v.ver, maxAnon, err)
		}
		if _, err := stop(); err != nil { // idempotent
			t.Fatal(err)
		}
	}
	// A memory.stat without the key is an error, reported by stop.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "memory.max"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(dir, "memory.stat"), []byte("file 1\n"), 0o644)
	b := &MemoryBudget{Version: CgroupV2, Dir: dir, Limit: 1}
	if _, err := b.FollowAnon(1, time.Millisecond)(); !errors.Is(err, ErrParse) {
		t.Fatalf("missing key: %v", err)
	}
}
