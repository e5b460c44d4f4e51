package probe

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CgroupVersion is the memory controller's cgroup hierarchy version.
type CgroupVersion int

// The versions.
const (
	CgroupNone CgroupVersion = iota
	CgroupV1
	CgroupV2
)

func (v CgroupVersion) String() string {
	switch v {
	case CgroupV1:
		return "v1"
	case CgroupV2:
		return "v2"
	}
	return "none"
}

// Errors of MemoryBudget. Each message carries the fallbacks (BudgetFallback).
var (
	ErrCgroupUnavailable  = errors.New("probe: no memory cgroup controller available")
	ErrCgroupPermission   = errors.New("probe: not permitted to create or join a memory cgroup")
	ErrCgroupNotDelegated = errors.New("probe: memory controller not delegated to the parent cgroup")
)

// BudgetFallback is the advice attached to MemoryBudget errors.
const BudgetFallback = "fallbacks: run as root on a writable cgroupfs; " +
	"on a systemd host start the run with `systemd-run --scope -p MemoryMax=<bytes> <cmd>` " +
	"(or --user with delegation); in a container use `docker run --memory=<bytes>`; " +
	"on cgroup v2 the parent must list memory in cgroup.subtree_control and hold no processes itself; " +
	"for cold runs alone, drop the store's own pages with pagecache.DropDir"

// DetectCgroup finds the memory controller under root ("" = /sys/fs/cgroup):
// v2 when root/cgroup.controllers exists (unified hierarchy) and lists
// memory, v1 when root/memory is a memory hierarchy. It returns the
// hierarchy's mount directory. Hybrid hosts with memory on the v2 side
// mounted elsewhere (root/unified) are reported as v1 or none.
func DetectCgroup(root string) (CgroupVersion, string, error) {
	if root == "" {
		root = "/sys/fs/cgroup"
	}
	if b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers")); err == nil {
		for _, c := range strings.Fields(string(b)) {
			if c == "memory" {
				return CgroupV2, root, nil
			}
		}
		return CgroupNone, "", fmt.Errorf("%w: %s/cgroup.controllers lacks memory (%s)", ErrCgroupUnavailable, root, BudgetFallback)
	}
	v1 := filepath.Join(root, "memory")
	if _, err := os.Stat(filepath.Join(v1, "memory.limit_in_bytes")); err == nil {
		return CgroupV1, v1, nil
	}
	return CgroupNone, "", fmt.Errorf("%w under %s (%s)", ErrCgroupUnavailable, root, BudgetFallback)
}

// ParseProcCgroup reads /proc/<pid>/cgroup text: the v2 path (line "0::")
// and the v1 path of each controller.
func ParseProcCgroup(text string) (v2 string, v1 map[string]string, err error) {
	v1 = map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return "", nil, fmt.Errorf("%w: cgroup line %q", ErrParse, line)
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	return v2, v1, nil
}

// BudgetConfig configures NewMemoryBudget.
type BudgetConfig struct {
	Root     string // cgroupfs mount ("/sys/fs/cgroup")
	ProcRoot string // for /proc/self/cgroup ("/proc")
	// Parent is the cgroup (path inside the hierarchy, e.g. "/bench") to
	// create the budget under; "" means this process's own cgroup, so the
	// budget nests inside whatever limit already applies.
	Parent string
	Name   string // child cgroup name ("brokerlab-<pid>")
	Limit  int64  // bytes, > 0
}

// DefaultBudgetConfig is a child of this process's cgroup named after the PID.
func DefaultBudgetConfig(limit int64) BudgetConfig {
	return BudgetConfig{Root: "/sys/fs/cgroup", ProcRoot: "/proc", Name: "brokerlab-" + strconv.Itoa(os.Getpid()), Limit: limit}
}

// MemoryBudget is a memory cgroup with a limit (v2 memory.max, v1
// memory.limit_in_bytes). The kernel charges page cache to it, so a process
// inside can cache at most Limit bytes (minus its anonymous memory).
type MemoryBudget struct {
	Version CgroupVersion
	Dir     string // the cgroup's directory
	Limit   int64  // as read back (v1 rounds to the page size)
	parent  string
}

// NewMemoryBudget creates (or reuses) the child cgroup and sets its limit.
// Errors wrap ErrCgroupUnavailable, ErrCgroupPermission or
// ErrCgroupNotDelegated and name the fallbacks.
func NewMemoryBudget(cfg BudgetConfig) (*MemoryBudget, error) {
	if cfg.Limit <= 0 || cfg.Name == "" || strings.ContainsAny(cfg.Name, "/\x00") || cfg.Name == "." || cfg.Name == ".." {
		return nil, fmt.Errorf("probe: memory budget needs a positive limit and a plain name (got %d, %q)", cfg.Limit, cfg.Name)
	}
	ver, mount, err := DetectCgroup(cfg.Root)
	if err != nil {
		return nil, err
	}
	parentPath := cfg.Parent
	if parentPath == "" {
		b, err := os.ReadFile(filepath.Join(procDir(cfg.ProcRoot), "self", "cgroup"))
		if err != nil {
			return nil, fmt.Errorf("%w: %v (%s)", ErrCgroupUnavailable, err, BudgetFallback)
		}
		v2, v1, err := ParseProcCgroup(string(b))
		if err != nil {
			return nil, err
		}
		parentPath = v2
		if ver == CgroupV1 {
			parentPath = v1["memory"]
		}
	}
	parent := filepath.Join(mount, filepath.Clean("/"+parentPath))
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: parent cgroup %s not visible (cgroup namespace?) (%s)", ErrCgroupUnavailable, parent, BudgetFallback)
	}
	if ver == CgroupV2 {
		if err := delegateMemory(parent); err != nil {
			return nil, err
		}
	}
	b := &MemoryBudget{Version: ver, Dir: filepath.Join(parent, cfg.Name), parent: parent}
	if err := os.Mkdir(b.Dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, classify(err, "creating "+b.Dir)
	}
	if err := writeCgroupFile(b.Dir, b.limitFile(), strconv.FormatInt(cfg.Limit, 10)); err != nil {
		os.Remove(b.Dir)
		return nil, err
	}
	if b.Limit, err = b.readInt(b.limitFile()); err != nil {
		os.Remove(b.Dir)
		return nil, err
	}
	return b, nil
}

func delegateMemory(parent string) error {
	b, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return classify(err, "reading "+parent+"/cgroup.subtree_control")
	}
	for _, c := range strings.Fields(string(b)) {
		if c == "memory" {
			return nil
		}
	}
	err = writeCgroupFile(parent, "cgroup.subtree_control", "+memory")
	if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("%w: enabling memory in %s/cgroup.subtree_control: %v (%s)", ErrCgroupNotDelegated, parent, err, BudgetFallback)
	}
	return err
}

func (b *MemoryBudget) limitFile() string {
	if b.Version == CgroupV2 {
		return "memory.max"
	}
	return "memory.limit_in_bytes"
}

func (b *MemoryBudget) usageFile() string {
	if b.Version == CgroupV2 {
		return "memory.current"
	}
	return "memory.usage_in_bytes"
}

// Add moves a process (0: this one, all its threads) into the budget.
func (b *MemoryBudget) Add(pid int) error {
	if pid <= 0 {
		pid = os.Getpid()
	}
	return writeCgroupFile(b.Dir, "cgroup.procs", strconv.Itoa(pid))
}

// Procs lists the processes in the budget.
func (b *MemoryBudget) Procs() ([]int, error) {
	data, err := os.ReadFile(filepath.Join(b.Dir, "cgroup.procs"))
	if err != nil {
		return nil, classify(err, "reading cgroup.procs")
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%w: cgroup.procs entry %q", ErrParse, f)
		}
		out = append(out, pid)
	}
	return out, nil
}

// Usage is the memory charged to the budget now (page cache included).
func (b *MemoryBudget) Usage() (int64, error) { return b.readInt(b.usageFile()) }

// Anon is the anonymous memory charged to the budget now: memory.stat's
// "anon" (v2) or "rss" (v1, anonymous and swap cache, huge pages
// included).
func (b *MemoryBudget) Anon() (int64, error) {
	data, err := os.ReadFile(filepath.Join(b.Dir, "memory.stat"))
	if err != nil {
		return 0, classify(err, "reading memory.stat")
	}
	key := "rss"
	if b.Version == CgroupV2 {
		key = "anon"
	}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: memory.stat %s = %q", ErrParse, k, v)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: memory.stat has no %q", ErrParse, key)
}

// SetLimit sets the budget's limit (the kernel rounds it to pages; lowering
// it below the usage makes the kernel reclaim first). It does not change
// b.Limit, the limit as first read back.
func (b *MemoryBudget) SetLimit(n int64) error {
	return writeCgroupFile(b.Dir, b.limitFile(), strconv.FormatInt(n, 10))
}

// FollowAnon makes the budget a page-cache budget: every period it sets
// the limit to cache + the anonymous memory charged to the cgroup, so the
// processes' heaps (a test binary's, a transient store pool's buffers) do
// not eat into the page cache the budget is meant to bound. Anonymous
// memory that grows between two periods is met by reclaiming page cache,
// never by the OOM killer while cache is reclaimable. stop ends the
// following (the limit stays where it was) and returns the largest
// anonymous size seen and the first error met (nil if none). FollowAnon
// runs one goroutine; b must not be used concurrently otherwise except
// through Usage, Anon and Procs.
func (b *MemoryBudget) FollowAnon(cache int64, period time.Duration) (stop func() (maxAnon int64, err error)) {
	done := make(chan struct{})
	finished := make(chan struct{})
	var maxAnon int64
	var firstErr error
	follow := func(last int64) int64 {
		anon, err := b.Anon()
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			return last
		}
		maxAnon = max(maxAnon, anon)
		// Writes only when anon moved by a page or more.
		if want := cache + anon; want/4096 != last/4096 {
			if err := b.SetLimit(want); err != nil {
				firstErr = cmp.Or(firstErr, err)
				return last
			}
			return want
		}
		return last
	}
	last := follow(b.Limit)
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				last = follow(last)
			}
		}
	}()
	var once sync.Once
	return func() (int64, error) {
		once.Do(func() { close(done); <-finished })
		return maxAnon, firstErr
	}
}

// Remove moves any remaining processes back to the parent and deletes the
// cgroup. Pages it charged are re-parented by the kernel.
func (b *MemoryBudget) Remove() error {
	procs, err := b.Procs()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, pid := range procs {
		if err := writeCgroupFile(b.parent, "cgroup.procs", strconv.Itoa(pid)); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
	}
	if err := os.Remove(b.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return classify(err, "removing "+b.Dir)
	}
	return nil
}

func (b *MemoryBudget) readInt(name string) (int64, error) {
	data, err := os.ReadFile(filepath.Join(b.Dir, name))
	if err != nil {
		return 0, classify(err, "reading "+name)
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s = %q", ErrParse, name, s)
	}
	return v, nil
}

// writeCgroupFile writes an existing control file (never creates one: on a
// real cgroupfs the kernel provides them).
func writeCgroupFile(dir, name, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return classify(err, "opening "+name)
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return classify(err, fmt.Sprintf("writing %q to %s/%s", value, dir, name))
	}
	return nil
}

func classify(err error, what string) error {
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%w: %s: %w (%s)", ErrCgroupPermission, what, err, BudgetFallback)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s: %w (%s)", ErrCgroupUnavailable, what, err, BudgetFallback)
	}
	return fmt.Errorf("probe: cgroup: %s: %w", what, err)
}
