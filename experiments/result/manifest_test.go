package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestManifestJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := sampleManifest()
	if err := WriteManifest(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	// RawMessage is re-indented by the encoder; compare it semantically.
	var wc, gc any
	if err := json.Unmarshal(want.Config, &wc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.Config, &gc); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wc, gc) {
		t.Fatalf("config differs: %s vs %s", got.Config, want.Config)
	}
	got.Config, want.Config = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	for _, field := range []string{`"sha"`, `"dirty"`, `"kernel"`, `"cpu_model"`, `"cpu_count"`, `"mem_total_bytes"`, `"fs_type"`,
		`"mount_options"`, `"device"`, `"dirty_ratio"`, `"dirty_background_ratio"`, `"dirty_expire_centisecs"`,
		`"dirty_writeback_centisecs"`, `"modules"`, `"hostname"`, `"started"`, `"finished"`, `"config"`, `"seed"`, `"command"`, `"notes"`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("manifest.json lacks %s", field)
		}
	}
}

func TestManifestFinish(t *testing.T) {
	m := Manifest{Status: StatusRunning}
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
	m.Finish(StatusInterrupted, at)
	if m.Status != StatusInterrupted || m.Finished == nil || !m.Finished.Equal(at) || m.Finished.Location() != time.UTC {
		t.Fatalf("Finish: %+v", m)
	}
}

// writeTree creates files under root from a path → content map.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCollectFromFixtureTrees(t *testing.T) {
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	store := t.TempDir()
	storeResolved, err := filepath.EvalSymlinks(store)
	if err != nil {
		t.Fatal(err)
	}
	mount := filepath.Dir(storeResolved)
	writeTree(t, proc, map[string]string{
		"sys/kernel/osrelease":             "6.18.44-test\n",
		"cpuinfo":                          "processor\t: 0\nvendor_id\t: X\nmodel name\t: Test CPU @ 3GHz\n\nprocessor\t: 1\nmodel name\t: Test CPU @ 3GHz\n",
		"meminfo":                          "MemTotal:        8000000 kB\nMemFree:  1 kB\n",
		"sys/vm/dirty_ratio":               "20\n",
		"sys/vm/dirty_background_ratio":    "10\n",
		"sys/vm/dirty_expire_centisecs":    "3000\n",
		"sys/vm/dirty_writeback_centisecs": "500\n",
		"self/mountinfo": "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" +
			"30 22 259:2 / " + mount + " rw,noatime shared:5 - xfs /dev/nvme0n1p2 rw,attr2,inode64\n",
	})
	// /sys/dev/block/259:2 → .../nvme0n1/nvme0n1p2 (a partition)
	disk := filepath.Join(sys, "devices/pci0/nvme/nvme0n1")
	writeTree(t, disk, map[string]string{
		"nvme0n1p2/partition":      "2\n",
		"device/model":             "Fast NVMe\n",
		"queue/rotational":         "0\n",
		"queue/scheduler":          "[none] mq-deadline\n",
		"queue/write_cache":        "write back\n",
		"queue/logical_block_size": "512\n",
		"queue/read_ahead_kb":      "128\n",
	})
	writeTree(t, sys, map[string]string{"kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n"})
	if err := os.MkdirAll(filepath.Join(sys, "dev/block"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(disk, "nvme0n1p2"), filepath.Join(sys, "dev/block/259:2")); err != nil {
		t.Fatal(err)
	}
	co := collector{
		procRoot: proc, sysRoot: sys,
		git: func(args ...string) (string, error) {
			if args[0] == "rev-parse" {
				return "abc123\n", nil
			}
			return " M engine/flush/group.go\n", nil
		},
		buildInfo: func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "github.com/brokerlab/brokerlab"},
				Deps: []*debug.Module{{Path: "gonum.org/v1/plot", Version: "v0.17.0", Sum: "h1:abc"}}}, true
		},
		hostname: func() (string, error) { return "lab1", nil },
		now:      func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	cfg := struct {
		Rate int `json:"rate"`
	}{5000}
	m := co.collect(filepath.Join(store, "not-yet-created"), cfg, 7)

	want := StoreInfo{
		Dir: filepath.Join(storeResolved, "not-yet-created"), MountPoint: mount, FSType: "xfs", MountOptions: "rw,noatime",
		SuperOptions: "rw,attr2,inode64", Device: "/dev/nvme0n1p2", BlockDevice: "nvme0n1", Model: "Fast NVMe",
		Rotational: "0", Scheduler: "none", WriteCache: "write back", LogicalBlock: "512", ReadAheadKB: "128",
	}
	if m.Store != want {
		t.Errorf("store:\n got %+v\nwant %+v", m.Store, want)
	}
	if m.Git != (GitInfo{SHA: "abc123", Dirty: true, Source: "git"}) {
		t.Errorf("git: %+v", m.Git)
	}
	if m.Host.Kernel != "6.18.44-test" || m.Host.CPUModel != "Test CPU @ 3GHz" || m.Host.MemTotalBytes != 8000000*1024 ||
		m.Host.Hostname != "lab1" || m.Host.THP != "madvise" || m.Host.CPUCount != runtime.NumCPU() {
		t.Errorf("host: %+v", m.Host)
	}
	if m.VM != (VMInfo{DirtyRatio: "20", DirtyBackgroundRatio: "10", DirtyBytes: Unknown, DirtyBackgroundBytes: Unknown,
		DirtyExpireCentisecs: "3000", DirtyWritebackCentisecs: "500"}) {
		t.Errorf("vm: %+v", m.VM)
	}
	if string(m.Config) != `{"rate":5000}` || m.Seed != 7 || m.Status != StatusRunning || !m.Started.Equal(co.now()) {
		t.Errorf("config/seed/status/start: %s %d %s %v", m.Config, m.Seed, m.Status, m.Started)
	}
	if m.Go.MainModule != "github.com/brokerlab/brokerlab" || len(m.Go.Modules) != 1 || m.Go.Modules[0].Version != "v0.17.0" {
		t.Errorf("go: %+v", m.Go)
	}
}

func TestCollectToleratesAbsence(t *testing.T) {
	empty := t.TempDir()
	co := collector{
		procRoot: empty, sysRoot: empty,
		git:       func(...string) (string, error) { return "", errors.New("not a git repository") },
		buildInfo: func() (*debug.BuildInfo, bool) { return nil, false },
		hostname:  func() (string, error) { return "", errors.New("no") },
		now:       time.Now,
	}
	m := co.collect(empty, make(chan int), 1) // a channel cannot be marshalled
	if m.Git.SHA != Unknown || m.Git.Source != Unknown {
		t.Errorf("git: %+v", m.Git)
	}
	for name, v := range map[string]string{"kernel": m.Host.Kernel, "cpu": m.Host.CPUModel, "host": m.Host.Hostname,
		"fs": m.Store.FSType, "device": m.Store.Device, "dirty_ratio": m.VM.DirtyRatio, "module": m.Go.MainModule} {
		if v != Unknown {
			t.Errorf("%s = %q, want %q", name, v, Unknown)
		}
	}
	if string(m.Config) != "null" || len(m.Notes) != 1 {
		t.Errorf("unmarshallable config: %s %v", m.Config, m.Notes)
	}
	// The manifest must still be writable.
	if err := WriteManifest(t.TempDir(), m); err != nil {
		t.Fatal(err)
	}
}

func TestCollectGitFallsBackToBuildInfo(t *testing.T) {
	empty := t.TempDir()
	co := collector{
		procRoot: empty, sysRoot: empty,
		git: func(...string) (string, error) { return "", errors.New("no git") },
		buildInfo: func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "feed"}, {Key: "vcs.modified", Value: "true"}}}, true
		},
		hostname: os.Hostname, now: time.Now,
	}
	m := co.collect(empty, nil, 0)
	if g := m.Git; g != (GitInfo{SHA: "feed", Dirty: true, Source: "buildinfo"}) {
		t.Fatalf("git: %+v", g)
	}
	if b := m.Build; b != (BuildInfo{Revision: "feed", Modified: true}) {
		t.Fatalf("build: %+v", b)
	}
}

// The binary's own VCS stamp is the run's commit even when git answers for
// the working directory (another tree, or another commit); git answers only
// for a binary without a stamp.
func TestCollectRecordsBuildInfo(t *testing.T) {
	empty := t.TempDir()
	co := collector{
		procRoot: empty, sysRoot: empty,
		git: func(args ...string) (string, error) {
			if args[0] == "rev-parse" {
				return "abc\n", nil
			}
			return "", nil
		},
		buildInfo: func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123"},
				{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "false"}}}, true
		},
		hostname: os.Hostname, now: time.Now,
	}
	m := co.collect(empty, nil, 0)
	if m.Git != (GitInfo{SHA: "0123", Source: "buildinfo"}) || m.Build != (BuildInfo{Revision: "0123", Time: "2026-01-02T03:04:05Z", VCS: "git"}) {
		t.Fatalf("git %+v build %+v", m.Git, m.Build)
	}
	co.buildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	m = co.collect(empty, nil, 0)
	if b := m.Build; b.Revision != Unknown || b.Modified {
		t.Fatalf("no build info: %+v", b)
	}
	if m.Git != (GitInfo{SHA: "abc", Source: "git"}) {
		t.Fatalf("no build info: git %+v", m.Git)
	}
}

func TestCollectManifestOnThisMachine(t *testing.T) {
	m := CollectManifest(t.TempDir(), map[string]int{"a": 1}, 3)
	if m.Host.CPUCount < 1 || m.Go.Version != runtime.Version() || m.Seed != 3 || string(m.Config) != `{"a":1}` {
		t.Fatalf("manifest: %+v", m)
	}
	if m.Git.SHA == "" || m.Store.FSType == "" || m.Host.Kernel == "" {
		t.Fatalf("empty instead of unknown: %+v", m)
	}
}

func TestParseMountinfo(t *testing.T) {
	data := "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n" +
		"garbage line\n" +
		"40 22 0:40 / /mnt/with\\040space rw,nosuid master:1 shared:3 - tmpfs tmpfs rw,size=100k\n" +
		"41 22 0:41 / /mnt rw - overlay overlay rw\n" +
		"42 41 0:42 / /mnt rw - btrfs /dev/sdb rw\n"
	es := parseMountinfo(data)
	if len(es) != 4 {
		t.Fatalf("entries: %+v", es)
	}
	if es[1].mountPoint != "/mnt/with space" || es[1].fsType != "tmpfs" || es[1].superOptions != "rw,size=100k" {
		t.Errorf("escaped entry: %+v", es[1])
	}
	for path, fs := range map[string]string{"/mnt/with space/x": "tmpfs", "/mnt/x": "btrfs", "/mntx": "ext4", "/": "ext4", "/mnt": "btrfs"} {
		e, ok := mountFor(es, path)
		if !ok || e.fsType != fs {
			t.Errorf("mountFor(%q) = %+v, want %s", path, e, fs)
		}
	}
}
