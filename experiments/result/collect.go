package result

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// CollectManifest records the machine, the store directory's file system and
// device, the writeback sysctls, Go and module versions, the git state of the
// working directory, the resolved config (cfg marshalled to JSON) and the
// seed. Started is now (UTC); Status is StatusRunning until Finish. It never
// fails: facts that cannot be read are Unknown and a config that cannot be
// marshalled is recorded as null with a note.
func CollectManifest(storeDir string, cfg any, seed int64) Manifest {
	return defaultCollector().collect(storeDir, cfg, seed)
}

// collector holds the sources CollectManifest reads, so tests can point it
// at fixture trees.
type collector struct {
	procRoot  string // "/proc"
	sysRoot   string // "/sys"
	git       func(args ...string) (string, error)
	buildInfo func() (*debug.BuildInfo, bool)
	hostname  func() (string, error)
	now       func() time.Time
}

func defaultCollector() collector {
	return collector{
		procRoot:  "/proc",
		sysRoot:   "/sys",
		git:       runGit,
		buildInfo: debug.ReadBuildInfo,
		hostname:  os.Hostname,
		now:       time.Now,
	}
}

// runGit runs git in the working directory, bounded to 5 s.
func runGit(args ...string) (string, error) { return GitOutput(5*time.Second, args...) }

// GitOutput runs git with args in the working directory, bounded by timeout,
// and returns what it wrote to its standard output.
func GitOutput(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return out.String(), nil
}

func (co collector) collect(storeDir string, cfg any, seed int64) Manifest {
	m := Manifest{
		Schema:  SchemaVersion,
		Status:  StatusRunning,
		Started: co.now().UTC(),
		Seed:    seed,
		Command: append([]string(nil), os.Args...),
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		raw = []byte("null")
		m.Notes = append(m.Notes, fmt.Sprintf("config could not be marshalled: %v", err))
	}
	m.Config = raw

	bi, haveBI := co.buildInfo()
	m.Git = co.gitInfo(bi, haveBI)
	m.Build = buildInfo(bi, haveBI)
	m.Host = co.hostInfo()
	m.Store = co.storeInfo(storeDir)
	m.VM = co.vmInfo()
	m.Go = goInfo(bi, haveBI)

	switch m.Store.FSType {
	case "tmpfs", "ramfs":
		m.Warnings = append(m.Warnings, "store is on "+m.Store.FSType+": the page cache is RAM and fsync is a no-op")
	case "overlay":
		m.Warnings = append(m.Warnings, "store is on overlayfs (container layer): results are not device numbers")
	}
	if m.Store.Rotational == "1" && strings.HasPrefix(m.Store.BlockDevice, "vd") {
		m.Warnings = append(m.Warnings, "virtio disk reports rotational=1; the host cache may make fsync non-durable")
	}
	return m
}

// gitInfo identifies the code that ran: the binary's own VCS stamp
// (vcs.revision, vcs.modified) first, since the working directory may be
// another tree or another commit; git in the working directory only for a
// binary without one (go run, go test), and then Source says so.
func (co collector) gitInfo(bi *debug.BuildInfo, haveBI bool) GitInfo {
	if haveBI {
		g := GitInfo{Source: "buildinfo"}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				g.SHA = s.Value
			case "vcs.modified":
				g.Dirty = s.Value == "true"
			}
		}
		if g.SHA != "" {
			return g
		}
	}
	if out, err := co.git("rev-parse", "HEAD"); err == nil && strings.TrimSpace(out) != "" {
		g := GitInfo{SHA: strings.TrimSpace(out), Source: "git"}
		if st, err := co.git("status", "--porcelain"); err == nil {
			g.Dirty = strings.TrimSpace(st) != ""
		}
		return g
	}
	return GitInfo{SHA: Unknown, Source: Unknown}
}

// buildInfo reads the binary's VCS settings.
func buildInfo(bi *debug.BuildInfo, haveBI bool) BuildInfo {
	b := BuildInfo{Revision: Unknown}
	if !haveBI || bi == nil {
		return b
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs":
			b.VCS = s.Value
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func (co collector) hostInfo() HostInfo {
	h := HostInfo{
		Hostname: Unknown,
		OS:       runtime.GOOS,
		Arch:     runtime.GOARCH,
		CPUCount: runtime.NumCPU(),
		Kernel:   co.readTrim(filepath.Join(co.procRoot, "sys/kernel/osrelease")),
		CPUModel: co.cpuModel(),
		THP:      bracketed(co.readTrim(filepath.Join(co.sysRoot, "kernel/mm/transparent_hugepage/enabled"))),
	}
	if name, err := co.hostname(); err == nil && name != "" {
		h.Hostname = name
	}
	h.MemTotalBytes = co.memTotal()
	return h
}

// readTrim returns the trimmed content of a small file, or Unknown.
func (co collector) readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return Unknown
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return Unknown
	}
	return s
}

// bracketed returns the [selected] word of a sysfs choice list
// ("always [madvise] never" → "madvise"), or s unchanged.
func bracketed(s string) string {
	i := strings.IndexByte(s, '[')
	j := strings.IndexByte(s, ']')
	if i >= 0 && j > i {
		return s[i+1 : j]
	}
	return s
}

func (co collector) cpuModel() string {
	f, err := os.Open(filepath.Join(co.procRoot, "cpuinfo"))
	if err != nil {
		return Unknown
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Hardware", "cpu model", "Model":
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return Unknown
}

func (co collector) memTotal() int64 {
	f, err := os.Open(filepath.Join(co.procRoot, "meminfo"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

func (co collector) vmInfo() VMInfo {
	vm := func(name string) string { return co.readTrim(filepath.Join(co.procRoot, "sys/vm", name)) }
	return VMInfo{
		DirtyRatio:              vm("dirty_ratio"),
		DirtyBackgroundRatio:    vm("dirty_background_ratio"),
		DirtyBytes:              vm("dirty_bytes"),
		DirtyBackgroundBytes:    vm("dirty_background_bytes"),
		DirtyExpireCentisecs:    vm("dirty_expire_centisecs"),
		DirtyWritebackCentisecs: vm("dirty_writeback_centisecs"),
	}
}

func goInfo(bi *debug.BuildInfo, haveBI bool) GoInfo {
	g := GoInfo{
		Version:    runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GOGC:       os.Getenv("GOGC"),
		MainModule: Unknown,
	}
	if g.GOGC == "" {
		g.GOGC = "100 (default)"
	}
	if !haveBI {
		return g
	}
	if bi.Main.Path != "" {
		g.MainModule = bi.Main.Path
	}
	for _, d := range bi.Deps {
		mod := d
		if d.Replace != nil {
			mod = d.Replace
		}
		g.Modules = append(g.Modules, Module{Path: d.Path, Version: mod.Version, Sum: mod.Sum})
	}
	return g
}
